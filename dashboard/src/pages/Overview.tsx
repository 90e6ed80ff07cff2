import { useState } from "preact/hooks";
import { api } from "../api";
import { bucketTime, num } from "../charts/time";
import { TimeChart } from "../charts/TimeChart";
import { BreakdownCard, totals, type BreakdownProps } from "../components/BreakdownCard";
import { AnnotateDialog, useChartAnnotations } from "../components/ChartAnnotations";
import { useEventNamesResult } from "../components/EventInput";
import { LiveVisitors } from "../components/LiveVisitors";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { useLoad } from "../load";
import { describe, type DateRange } from "../range";
import { useQueryState } from "../router";
import type { DataEnv, Interval, Product, TrendResult } from "../types";

const pageview = "$pageview";

/** The breakdown tables of the overview, from trends of $pageview. */
const breakdowns: BreakdownProps[] = [
  { property: "path", title: "Top pages", heading: "Page" },
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
 * Overview is the home page: visitors and page views over the range (with
 * the annotations), and the top pages, sources, browsers and operating
 * systems, all from trend queries of $pageview. Visitors over the whole
 * range are the sizes of the monthly retention cohorts of $pageview, which
 * count each user once (a sum of daily unique users would not). Beside the
 * title, the visitors now, refreshed every ten seconds. env picks live data
 * or the events of test keys.
 */
export function Overview(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <OverviewPage key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function OverviewPage(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const { from, to } = props.range;
  const { env } = props;
  const interval = rangeInterval(props.range);
  // The source whose referrers are open, in the URL like Acquisition's.
  const [source, setSource] = useQueryState("source", "");
  const names = useEventNamesResult(pid, { from, to }, env);
  const [series, retry] = useLoad<TrendResult>(
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
  const [annotations, addAnnotation] = useChartAnnotations(pid, from, to, null);
  const [picked, setPicked] = useState<number | null>(null);

  const noEvents = names !== null && names.events.length === 0;
  const pageviews = series.state === "done" ? series.data.series[1]?.data.reduce((n, p) => n + p.value, 0) ?? 0 : null;
  return (
    <section class="page">
      <div class="page-head">
        <h1>Overview</h1>
        <LiveVisitors product={pid} env={env} />
      </div>
      {names && noEvents && pageviews === 0 ? <NoData product={props.product} range={props.range} env={env} names={names} /> : null}
      <div class="stats">
        <div class="stat card">
          <span class="stat-label">Visitors</span>
          <span class="stat-value" data-testid="stat-visitors">
            {visitors.state === "done" ? num(visitors.data) : visitors.state === "failed" ? "—" : <span class="skeleton-text" />}
          </span>
          <span class="hint">Unique users who viewed a page</span>
        </div>
        <div class="stat card">
          <span class="stat-label">Page views</span>
          <span class="stat-value" data-testid="stat-pageviews">
            {pageviews !== null ? num(pageviews) : series.state === "failed" ? "—" : <span class="skeleton-text" />}
          </span>
          <span class="hint">{describe(props.range)}</span>
        </div>
      </div>
      <section class="card" aria-labelledby="traffic-title">
        <h2 id="traffic-title">Traffic</h2>
        {series.state === "loading" ? <Skeleton rows={5} label="Loading traffic…" /> : null}
        {series.state === "failed" ? <ErrorState message={series.error} onRetry={retry} /> : null}
        {series.state === "done" ? (
          <>
            <TimeChart
              kind="line"
              interval={interval}
              buckets={series.data.series[0]?.data.map((p) => p.date) ?? []}
              lines={[
                { label: "Visitors", data: series.data.series[0]?.data.map((p) => p.value) ?? [] },
                { label: "Page views", data: series.data.series[1]?.data.map((p) => p.value) ?? [] },
              ]}
              annotations={annotations}
              onPick={(b) => setPicked(bucketTime(b))}
              label="Visitors and page views over time"
            />
            <p class="hint">Click a point on the chart to add an annotation there.</p>
          </>
        ) : null}
      </section>
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
