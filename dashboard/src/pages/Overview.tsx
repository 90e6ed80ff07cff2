import { useState } from "preact/hooks";
import { api } from "../api";
import { bucketTime, num } from "../charts/time";
import { TimeChart, type Line } from "../charts/TimeChart";
import { change, duration, periodName, previousPeriod, type ChangeKind } from "../compare";
import { BreakdownCard, totals, type BreakdownProps } from "../components/BreakdownCard";
import { AnnotateDialog, useChartAnnotations } from "../components/ChartAnnotations";
import { useEventNamesResult } from "../components/EventInput";
import { FigureCards, type Figure } from "../components/FigureCards";
import { rate, SessionPages } from "../components/SessionPages";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { useLoad, type Load } from "../load";
import { describe, type DateRange } from "../range";
import { oneOf, useQueryState } from "../router";
import type { DataEnv, Interval, Product, SessionsResult, TrendResult } from "../types";

const pageview = "$pageview";

/** The top pages, shown beside the entry and exit pages. */
const topPages: BreakdownProps = { property: "path", title: "Top pages", heading: "Page" };

/** The other breakdown tables of the overview, from trends of $pageview. */
const breakdowns: BreakdownProps[] = [
  {
    property: "source",
    title: "Top sources",
    heading: "Source",
    // Where visits came from (docs/ingest.md): a move within the site and a
    // direct visit have no source. A source opens its full referrers.
    filters: [{ property: "source", operator: "is_set" }],
    empty: "No visit came from another site in this range.",
    detail: { property: "referrer", heading: "Referrer" },
  },
  { property: "browser", title: "Browsers", heading: "Browser" },
  { property: "os", title: "Operating systems", heading: "OS" },
];

/** rangeInterval picks the chart's bucket for a range: days up to 90 days, then weeks. */
export function rangeInterval(range: DateRange): Interval {
  const days = (bucketTime(range.to) - bucketTime(range.from)) / 86_400_000 + 1;
  return days <= 2 ? "hour" : days <= 90 ? "day" : "week";
}

export { totals };

/**
 * Overview is the home page: a row of figures (unique visitors, visits,
 * page views, bounce rate, visit duration, pages per visit) each with its
 * change against the previous period (docs/dashboard.md), visitors and page
 * views over the range (with the annotations, and the previous period as
 * dashed lines when ?compare=previous), the top pages beside the entry and
 * exit pages, and the top sources, browsers and operating systems.
 *
 * Unique visitors are the sizes of the monthly retention cohorts of
 * $pageview, which count each user who viewed a page once over the range (a
 * sum of daily unique users would not); page views are the trend's count of
 * $pageview in the range. Both are kept as they were rather than taken from
 * the sessions query, whose visitors are the users of the visits that
 * started in the range (whatever their events) and whose page views include
 * those of visits running past the range's end. Visits, bounce rate, visit
 * duration, pages per visit and the entry and exit pages are the sessions
 * query's (docs/queries.md, "Sessions"). env picks live data or the events
 * of test keys.
 */
export function Overview(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <OverviewPage key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

/** What the Overview's figures and chart read for one period. */
interface PeriodLoads {
  series: Load<TrendResult>;
  retrySeries: () => void;
  visitors: Load<number>;
  sessions: Load<SessionsResult>;
  retrySessions: () => void;
}

/**
 * usePeriod loads one period's figures: the trend of visitors and page
 * views by interval, the visitors over the whole period, and the sessions
 * query. The Overview calls it for the range and for the previous period.
 */
function usePeriod(pid: number, days: { from: string; to: string }, interval: Interval, env: DataEnv): PeriodLoads {
  const { from, to } = days;
  const [series, retrySeries] = useLoad<TrendResult>(
    () =>
      api.trend(
        pid,
        {
          series: [
            { event: pageview, math: "unique_users" },
            { event: pageview, math: "total" },
          ],
          interval,
          dateFrom: from,
          dateTo: to,
        },
        env,
      ),
    [pid, from, to, interval, env],
  );
  const [visitors] = useLoad<number>(
    () =>
      api
        .retention(pid, { startEvent: pageview, period: "month", dateFrom: from, dateTo: to }, env)
        .then((r) => r.cohorts.reduce((n, c) => n + c.size, 0)),
    [pid, from, to, env],
  );
  // Only the totals and the page lists are shown: one bucket a month keeps the answer small.
  const [sessions, retrySessions] = useLoad<SessionsResult>(
    () => api.sessions(pid, { dateFrom: from, dateTo: to, interval: "month" }, env),
    [pid, from, to, env],
  );
  return { series, retrySeries, visitors, sessions, retrySessions };
}

/** pageviewTotal is a trend's page views (its second line) over the whole period, or null until it loads. */
function pageviewTotal(series: Load<TrendResult>): number | null {
  return series.state === "done" ? series.data.series[1]?.data.reduce((n, p) => n + p.value, 0) ?? 0 : null;
}

/** perVisit is a period's exact page views per visit, 0 without visits. */
function perVisit(t: SessionsResult["totals"]): number {
  return t.visits > 0 ? t.pageviews / t.visits : 0;
}

function done<T>(l: Load<T>): T | null {
  return l.state === "done" ? l.data : null;
}

/**
 * figures are the Overview's cards: each value with its change against the
 * previous period once both have loaded. A rate or a mean over the previous
 * period's visits means nothing when it had none: the change is then "new"
 * (and no change when neither period had a visit).
 */
function figures(cur: PeriodLoads, prev: PeriodLoads, period: string, range: DateRange): Figure[] {
  const s = done(cur.sessions)?.totals ?? null;
  const p = done(prev.sessions)?.totals ?? null;
  // Visits now and none before: the rates and means of the previous period are "new", not 0.
  const noVisits = p !== null && s !== null && p.visits === 0 && s.visits > 0;
  const cmp = (c: number | null, q: number | null, kind: ChangeKind, empty = false) =>
    c !== null && q !== null ? change(c, q, kind, period, empty) : null;
  const percent: ChangeKind = { unit: "percent" };
  const failed = (l: Load<unknown>) => l.state === "failed";
  const visitors = done(cur.visitors);
  const views = pageviewTotal(cur.series);
  return [
    {
      id: "visitors",
      label: "Unique visitors",
      value: visitors,
      failed: failed(cur.visitors),
      format: num,
      hint: "Users who viewed a page",
      change: cmp(visitors, done(prev.visitors), percent),
    },
    { id: "visits", label: "Visits", value: s?.visits ?? null, failed: failed(cur.sessions), format: num, change: cmp(s?.visits ?? null, p?.visits ?? null, percent) },
    {
      id: "pageviews",
      label: "Page views",
      value: views,
      failed: failed(cur.series),
      format: num,
      hint: describe(range),
      change: cmp(views, pageviewTotal(prev.series), percent),
    },
    {
      id: "bounce-rate",
      label: "Bounce rate",
      value: s?.bounceRate ?? null,
      failed: failed(cur.sessions),
      format: rate,
      change: cmp(s?.bounceRate ?? null, p?.bounceRate ?? null, { unit: "points", lowerIsBetter: true }, noVisits),
    },
    {
      id: "visit-duration",
      label: "Visit duration",
      value: s?.visitDuration ?? null,
      failed: failed(cur.sessions),
      format: duration,
      change: cmp(s?.visitDuration ?? null, p?.visitDuration ?? null, percent, noVisits),
    },
    {
      id: "pages-per-visit",
      label: "Pages per visit",
      value: s?.pagesPerVisit ?? null,
      failed: failed(cur.sessions),
      format: (n) => n.toLocaleString(undefined, { maximumFractionDigits: 2 }),
      // From the counts rather than the two-decimal figures: 1.75 against 4/3 is +31 %, not 1.33's +32 %.
      change: cmp(s ? perVisit(s) : null, p ? perVisit(p) : null, percent, noVisits),
    },
  ];
}

/**
 * overlay is the previous period's line i of a trend, aligned bucket by
 * bucket with the range's buckets: its k-th bucket under the range's k-th
 * (0 past its end, as an empty bucket is).
 */
function overlay(prev: TrendResult, i: number, buckets: number): number[] {
  const data = prev.series[i]?.data ?? [];
  return Array.from({ length: buckets }, (_, k) => data[k]?.value ?? 0);
}

function OverviewPage(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const { from, to } = props.range;
  const { env } = props;
  const interval = rangeInterval(props.range);
  // The source whose referrers are open, in the URL like Acquisition's.
  const [source, setSource] = useQueryState("source", "");
  // Whether the chart overlays the previous period, in the URL so a link or a reload keeps it.
  const [compare, setCompare] = useQueryState<"" | "previous">("compare", "", oneOf(["previous"] as const));
  const names = useEventNamesResult(pid, { from, to }, env);
  const previous = previousPeriod({ from, to });
  const period = periodName({ from, to });
  const cur = usePeriod(pid, { from, to }, interval, env);
  const prev = usePeriod(pid, previous, interval, env);
  const [annotations, addAnnotation] = useChartAnnotations(pid, from, to, null);
  const [picked, setPicked] = useState<number | null>(null);

  const series = cur.series;
  const noEvents = names !== null && names.events.length === 0;
  const pageviews = pageviewTotal(series);
  const buckets = series.state === "done" ? (series.data.series[0]?.data.map((p) => p.date) ?? []) : [];
  const lines: Line[] =
    series.state === "done"
      ? [
          { label: "Visitors", data: series.data.series[0]?.data.map((p) => p.value) ?? [] },
          { label: "Page views", data: series.data.series[1]?.data.map((p) => p.value) ?? [] },
        ]
      : [];
  const prevSeries = done(prev.series);
  if (compare === "previous" && prevSeries) {
    lines.push(
      { label: `Visitors, ${period}`, data: overlay(prevSeries, 0, buckets.length), previousOf: 0 },
      { label: `Page views, ${period}`, data: overlay(prevSeries, 1, buckets.length), previousOf: 1 },
    );
  }
  return (
    <section class="page">
      <h1>Overview</h1>
      {names && noEvents && pageviews === 0 ? <NoData product={props.product} range={props.range} env={env} names={names} /> : null}
      <FigureCards figures={figures(cur, prev, period, props.range)} />
      <section class="card" aria-labelledby="traffic-title">
        <div class="section-head tight">
          <h2 id="traffic-title">Traffic</h2>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={compare === "previous"}
              onChange={(e) => setCompare((e.target as HTMLInputElement).checked ? "previous" : "")}
            />{" "}
            Compare with the previous period
          </label>
        </div>
        {series.state === "loading" ? <Skeleton rows={5} label="Loading traffic…" /> : null}
        {series.state === "failed" ? <ErrorState message={series.error} onRetry={cur.retrySeries} /> : null}
        {series.state === "done" ? (
          <>
            <TimeChart
              kind="line"
              interval={interval}
              buckets={buckets}
              lines={lines}
              annotations={annotations}
              onPick={(b) => setPicked(bucketTime(b))}
              label={compare === "previous" ? `Visitors and page views over time, with ${period} dashed` : "Visitors and page views over time"}
            />
            <p class="hint">
              Click a point on the chart to add an annotation there.
              {compare === "previous" ? ` Dashed lines: ${period} (${previous.from} – ${previous.to}), bucket by bucket.` : ""}
            </p>
          </>
        ) : null}
      </section>
      <div class="grid-3">
        <BreakdownCard product={pid} from={from} to={to} env={env} {...topPages} />
        <SessionPages sessions={cur.sessions} onRetry={cur.retrySessions} />
      </div>
      <div class="grid-2">
        {breakdowns.map((b) => (
          <BreakdownCard
            key={b.property}
            product={pid}
            from={from}
            to={to}
            env={env}
            {...b}
            {...(b.detail ? { open: source || null, onOpen: (v: string | null) => setSource(v ?? "") } : {})}
          />
        ))}
      </div>
      {picked !== null ? (
        <AnnotateDialog product={pid} at={picked} savedQueries={[]} onCreated={addAnnotation} onClose={() => setPicked(null)} />
      ) : null}
    </section>
  );
}
