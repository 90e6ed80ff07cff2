// What the Overview reads for one period (the range, or the previous
// period) and the figure cards it makes of the two: kept apart from the
// page so that its layout and its data change apart.
import { api } from "../api";
import { num } from "../charts/time";
import { change, duration, type ChangeKind } from "../compare";
import { useLoad, type Load } from "../load";
import { eventFilters, sessionFilters, visitOnly, type OverviewFilter } from "../overviewFilters";
import { describe, type DateRange } from "../range";
import type { DataEnv, Interval, SessionsResult, TrendResult } from "../types";
import type { Figure } from "./FigureCards";
import { rate } from "./SessionPages";

const pageview = "$pageview";

/** What the Overview's figures and chart read for one period. */
export interface PeriodLoads {
  series: Load<TrendResult>;
  retrySeries: () => void;
  visitors: Load<number>;
  sessions: Load<SessionsResult>;
  retrySessions: () => void;
}

/**
 * usePeriod loads one period's figures: the trend of visitors and page
 * views by interval, whose visitors line also carries the distinct users
 * over the whole period (its total: a sum of each day's unique users would
 * count a user once a day), and the sessions query. The Overview calls it
 * for the range and for the previous period, with the page's filters
 * (docs/dashboard.md, "Filters"): the trend takes the event filters, and is
 * not asked under an entry or exit page filter, which only the sessions
 * query takes; with any filter the visitors are the sessions query's (the
 * users of the visits counted).
 */
export function usePeriod(pid: number, days: { from: string; to: string }, interval: Interval, env: DataEnv, filters: OverviewFilter[] = []): PeriodLoads {
  const { from, to } = days;
  const key = JSON.stringify(filters);
  const [series, retrySeries] = useLoad<TrendResult>(
    visitOnly(filters)
      ? null
      : () =>
          api.trend(
            pid,
            {
              series: [
                { event: pageview, math: "unique_users" },
                { event: pageview, math: "total" },
              ],
              interval,
              filters: eventFilters(filters),
              dateFrom: from,
              dateTo: to,
            },
            env,
          ),
    [pid, from, to, interval, env, key],
  );
  const visitors = filters.length > 0 ? ({ state: "idle" } as const) : visitorTotal(series);
  // Only the totals and the page lists are shown: one bucket a month keeps the answer small.
  const [sessions, retrySessions] = useLoad<SessionsResult>(
    () => api.sessions(pid, { dateFrom: from, dateTo: to, interval: "month", filters: sessionFilters(filters) }, env),
    [pid, from, to, env, key],
  );
  return { series, retrySeries, visitors, sessions, retrySessions };
}

/** visitorTotal is a trend's distinct visitors (its first line's total) over the whole period, as a load of its own. */
function visitorTotal(series: Load<TrendResult>): Load<number> {
  switch (series.state) {
    case "done":
      return { state: "done", data: series.data.series[0]?.total ?? 0 };
    case "loading":
      return { state: "loading", previous: series.previous ? (series.previous.series[0]?.total ?? 0) : undefined };
    default:
      return series;
  }
}

/** pageviewTotal is a trend's page views (its second line) over the whole period, or null until it loads. */
export function pageviewTotal(series: Load<TrendResult>): number | null {
  return series.state === "done" ? series.data.series[1]?.data.reduce((n, p) => n + p.value, 0) ?? 0 : null;
}

/** perVisit is a period's exact page views per visit, 0 without visits. */
function perVisit(t: SessionsResult["totals"]): number {
  return t.visits > 0 ? t.pageviews / t.visits : 0;
}

export function done<T>(l: Load<T>): T | null {
  return l.state === "done" ? l.data : null;
}

/**
 * figures are the Overview's cards: each value with its change against the
 * previous period once both have loaded. A rate or a mean over the previous
 * period's visits means nothing when it had none: the change is then "new"
 * (and no change when neither period had a visit).
 */
export function figures(cur: PeriodLoads, prev: PeriodLoads, period: string, range: DateRange, filters: OverviewFilter[] = []): Figure[] {
  const s = done(cur.sessions)?.totals ?? null;
  const p = done(prev.sessions)?.totals ?? null;
  // Visits now and none before: the rates and means of the previous period are "new", not 0.
  const noVisits = p !== null && s !== null && p.visits === 0 && s.visits > 0;
  const cmp = (c: number | null, q: number | null, kind: ChangeKind, empty = false) =>
    c !== null && q !== null ? change(c, q, kind, period, empty) : null;
  const percent: ChangeKind = { unit: "percent" };
  const failed = (l: Load<unknown>) => l.state === "failed";
  // Filtered, the visitors are the users of the visits counted, and under
  // an entry or exit page filter the page views are those visits' (the
  // trend cannot tell a page view's visit).
  const filtered = filters.length > 0;
  const byVisit = visitOnly(filters) !== null;
  const visitors = filtered ? (done(cur.sessions)?.totals.visitors ?? null) : done(cur.visitors);
  const prevVisitors = filtered ? (p?.visitors ?? null) : done(prev.visitors);
  const views = byVisit ? (s?.pageviews ?? null) : pageviewTotal(cur.series);
  const prevViews = byVisit ? (p?.pageviews ?? null) : pageviewTotal(prev.series);
  return [
    {
      id: "visitors",
      label: "Unique visitors",
      value: visitors,
      failed: failed(filtered ? cur.sessions : cur.visitors),
      format: num,
      hint: filtered ? "Users of the visits counted" : "Users who viewed a page",
      change: cmp(visitors, prevVisitors, percent),
    },
    { id: "visits", label: "Visits", value: s?.visits ?? null, failed: failed(cur.sessions), format: num, change: cmp(s?.visits ?? null, p?.visits ?? null, percent) },
    {
      id: "pageviews",
      label: "Page views",
      value: views,
      failed: failed(byVisit ? cur.sessions : cur.series),
      format: num,
      hint: byVisit ? "Of the visits counted" : describe(range),
      change: cmp(views, prevViews, percent),
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
export function overlay(prev: TrendResult, i: number, buckets: number): number[] {
  const data = prev.series[i]?.data ?? [];
  return Array.from({ length: buckets }, (_, k) => data[k]?.value ?? 0);
}
