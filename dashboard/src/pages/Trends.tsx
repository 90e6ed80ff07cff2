import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { bucketTime } from "../charts/time";
import { TimeChart } from "../charts/TimeChart";
import { AnnotateDialog, useChartAnnotations } from "../components/ChartAnnotations";
import { CountSelect, useGroupTypes } from "../components/CountSelect";
import { EventInput, EventList, useEventNamesResult } from "../components/EventInput";
import { FilterEditor, checkFilter, draftFilters, filterRequest, filterSearch, filtersFromSearch, operators, useCohortOptions, type FilterDraft } from "../components/FilterEditor";
import { SaveQueryForm, SavedList, useSavedQueries } from "../components/SavedList";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { useLoad } from "../load";
import { useAllows } from "../roles";
import { describe as describeRange, type DateRange } from "../range";
import { oneOf, positiveInt, setQuery, useLocation, useQueryState, type QueryPatch } from "../router";
import type { DataEnv, Interval, Product, SavedQuery, TrendMath, TrendRequest, TrendResult } from "../types";

export { filterRequest, operators, type FilterDraft };

/** The event columns filters and breakdowns may name; properties.<key> reads a property. */
export const columns = ["url", "path", "referrer", "browser", "os", "device_type", "source", "channel", "utm_source", "utm_medium", "utm_campaign"];

export interface SeriesDraft {
  event: string;
  math: TrendMath;
}

/** checkTrend returns why a drafted trend cannot run, or null. */
export function checkTrend(series: SeriesDraft[], filters: FilterDraft[], breakdownLimit: string): string | null {
  if (series.length === 0) return "Add a series.";
  if (series.some((s) => !s.event.trim())) return "Every series needs an event name.";
  for (const f of filters) {
    const err = checkFilter(f);
    if (err) return err;
  }
  const n = Number(breakdownLimit);
  if (!Number.isInteger(n) || n < 1 || n > 100) return "The breakdown limit is a whole number from 1 to 100.";
  return null;
}


function trendDefinition(q: SavedQuery): TrendRequest {
  return (q.definition ?? { series: [] }) as unknown as TrendRequest;
}

/** TrendDraft is what the builder sets: the query a link names. */
export interface TrendDraft {
  series: SeriesDraft[];
  filters: FilterDraft[];
  breakdown: string;
  breakdownLimit: string;
  interval: Interval;
  aggregateBy: string;
}

const intervals: readonly Interval[] = ["hour", "day", "week", "month"];
const maths: readonly TrendMath[] = ["total", "unique_users"];
const defaultTrend: TrendDraft = {
  series: [{ event: "$pageview", math: "total" }],
  filters: [],
  breakdown: "",
  breakdownLimit: "10",
  interval: "day",
  aggregateBy: "",
};

/**
 * trendFromSearch reads the trend a URL names (docs/dashboard.md, "State
 * in the URL"): ?event= once per series, ?math= once per series when one
 * counts unique users, ?filter=property:operator:value once per filter,
 * ?breakdown=, ?limit=, ?interval=, ?count=. What is absent or invalid
 * takes the builder's default.
 */
export function trendFromSearch(search: URLSearchParams): TrendDraft {
  const events = search.getAll("event");
  const math = search.getAll("math");
  const filters = filtersFromSearch(search.getAll("filter"));
  const iv = search.get("interval") as Interval | null;
  const limit = search.get("limit");
  return {
    series: events.length
      ? events.slice(0, 10).map((event, i) => ({ event, math: maths.includes(math[i] as TrendMath) ? (math[i] as TrendMath) : "total" }))
      : defaultTrend.series,
    filters,
    breakdown: search.get("breakdown") ?? "",
    breakdownLimit: limit && /^[1-9]\d?$|^100$/.test(limit) ? limit : defaultTrend.breakdownLimit,
    interval: iv && intervals.includes(iv) ? iv : defaultTrend.interval,
    aggregateBy: search.get("count") ?? "",
  };
}

/** trendSearch is the query-string patch naming a trend, defaults left out. */
export function trendSearch(d: TrendDraft | null): QueryPatch {
  if (!d) return { event: null, math: null, filter: null, breakdown: null, limit: null, interval: null, count: null };
  const unique = d.series.some((s) => s.math !== "total");
  return {
    event: d.series.map((s) => s.event),
    math: unique ? d.series.map((s) => s.math) : null,
    filter: filterSearch(d.filters),
    breakdown: d.breakdown || null,
    limit: d.breakdown && d.breakdownLimit !== defaultTrend.breakdownLimit ? d.breakdownLimit : null,
    interval: d.interval !== defaultTrend.interval ? d.interval : null,
    count: d.aggregateBy || null,
  };
}

/** trendDraft reads a trend request (a saved definition) into the builder's fields. */
function trendDraft(d: TrendRequest): TrendDraft {
  return {
    series: d.series.map((s) => ({ event: s.event, math: s.math ?? "total" })),
    filters: draftFilters(d.filters),
    breakdown: d.breakdown ?? "",
    breakdownLimit: String(d.breakdownLimit ?? 10),
    interval: d.interval ?? "day",
    aggregateBy: d.aggregateBy ?? "",
  };
}

/** trendRequest is a drafted trend as the API takes it. */
function trendRequest(d: TrendDraft): TrendRequest {
  return {
    series: d.series.map((s) => ({ event: s.event.trim(), math: s.math })),
    interval: d.interval,
    filters: d.filters.length ? d.filters.map(filterRequest) : undefined,
    breakdown: d.breakdown.trim() || undefined,
    breakdownLimit: d.breakdown.trim() ? Number(d.breakdownLimit) : undefined,
    aggregateBy: d.aggregateBy || undefined,
  };
}

/**
 * Trends charts events over time: series (total or unique users), property
 * filters, one breakdown with a limit, the interval, as lines or bars, with
 * the annotations as markers; clicking the chart adds an annotation there.
 * The trend run, or the saved trend (?saved=), and the chart type are in
 * the URL, so that a link opens the same chart and back returns to the
 * previous one; a saved trend runs over the picked range. env picks live
 * data or the events of test keys.
 */
export function Trends(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <TrendBuilder key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function TrendBuilder(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const days = { from: props.range.from, to: props.range.to };
  const loc = useLocation();
  const [savedId] = useQueryState<number | null>("saved", null, positiveInt);
  const [chartKind, setChartKind] = useQueryState<"line" | "bar">("chart", "line", oneOf(["line", "bar"] as const));
  const { saved, setSaved, savedError } = useSavedQueries(pid, "trend");
  const savedQuery = savedId === null ? null : saved?.find((q) => q.id === savedId) ?? null;
  // The trend on screen: the URL's, or the saved one it names.
  const shownDraft = savedQuery ? trendDraft(trendDefinition(savedQuery)) : trendFromSearch(loc.search);
  const shownKey = JSON.stringify(shownDraft);

  const [series, setSeries] = useState<SeriesDraft[]>(shownDraft.series);
  const [filters, setFilters] = useState<FilterDraft[]>(shownDraft.filters);
  const [breakdown, setBreakdown] = useState(shownDraft.breakdown);
  const [breakdownLimit, setBreakdownLimit] = useState(shownDraft.breakdownLimit);
  const [interval, setInterval] = useState<Interval>(shownDraft.interval);
  const [aggregateBy, setAggregateBy] = useState(shownDraft.aggregateBy);
  // A new URL (a link, back or forward, a saved trend loaded) puts its
  // trend back in the builder.
  useEffect(() => {
    setSeries(shownDraft.series);
    setFilters(shownDraft.filters);
    setBreakdown(shownDraft.breakdown);
    setBreakdownLimit(shownDraft.breakdownLimit);
    setInterval(shownDraft.interval);
    setAggregateBy(shownDraft.aggregateBy);
  }, [shownKey]);
  const groupTypes = useGroupTypes(pid);
  const cohorts = useCohortOptions(pid);
  const [formError, setFormError] = useState<string | null>(null);
  const [runs, setRuns] = useState(0);
  const draft = (): TrendDraft => ({ series, filters, breakdown: breakdown.trim(), breakdownLimit, interval, aggregateBy });
  const build = (): TrendRequest => trendRequest(draft());
  const names = useEventNamesResult(pid, days, props.env);

  const waiting = savedId !== null && savedQuery === null;
  const [result, retry] = useLoad<TrendResult>(
    waiting
      ? null
      : () =>
          savedQuery
            ? api.runSaved<TrendResult>(pid, savedQuery.id, props.env, days)
            : api.trend(pid, { ...trendRequest(shownDraft), dateFrom: days.from, dateTo: days.to }, props.env),
    [pid, savedId ?? shownKey, waiting, days.from, days.to, props.env, runs],
  );
  const shownInterval: Interval = shownDraft.interval;
  const shown = result.state === "done" ? result.data : result.state === "loading" ? result.previous : undefined;
  const buckets = shown?.series[0]?.data.map((p) => p.date) ?? [];
  const [annotations, addAnnotation] = useChartAnnotations(pid, days.from, days.to, savedQuery ? savedQuery.id : null);
  const [picked, setPicked] = useState<number | null>(null);
  // Annotating needs the member role.
  const canAnnotate = useAllows("member");

  const run = (e?: Event) => {
    e?.preventDefault();
    const err = checkTrend(series, filters, breakdownLimit);
    setFormError(err);
    if (err) return;
    setRuns((n) => n + 1);
    setQuery({ saved: null, ...trendSearch(draft()) });
  };
  const runSaved = (q: SavedQuery) => {
    setFormError(null);
    setRuns((n) => n + 1);
    setQuery({ saved: String(q.id), ...trendSearch(null) });
  };
  const setS = (i: number, patch: Partial<SeriesDraft>) => setSeries((l) => l.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const noEvents = names !== null && names.events.length === 0;
  const empty = shown ? shown.series.every((l) => l.data.every((p) => p.value === 0)) : false;

  return (
    <section class="page">
      <h1>Trends</h1>
      <div class="two-col">
        <div class="col-main">
          <form class="card builder" onSubmit={run} aria-label="Trend builder">
            <EventList id="trend-events" names={names?.events ?? null} />
            <datalist id="trend-properties">
              {columns.map((c) => (
                <option key={c} value={c} />
              ))}
              <option value="properties." />
              <option value="cohort" />
              <option value="person." />
            </datalist>
            <h2>Series</h2>
            <ul class="rows">
              {series.map((s, i) => (
                <li key={i} class="row">
                  <EventInput label={`Series ${i + 1} event`} value={s.event} list="trend-events" onChange={(v) => setS(i, { event: v })} />
                  <select aria-label={`Series ${i + 1} math`} value={s.math} onChange={(e) => setS(i, { math: e.currentTarget.value as TrendMath })}>
                    <option value="total">Total events</option>
                    <option value="unique_users">Unique users</option>
                  </select>
                  <button
                    type="button"
                    class="icon-button"
                    aria-label={`Remove series ${i + 1}`}
                    disabled={series.length <= 1}
                    onClick={() => setSeries((l) => l.filter((_, j) => j !== i))}
                  >
                    ✕
                  </button>
                </li>
              ))}
            </ul>
            <button type="button" class="button secondary small" disabled={series.length >= 10} onClick={() => setSeries((l) => [...l, { event: "", math: "total" }])}>
              Add series
            </button>

            <h2 class="sub">Filters</h2>
            <FilterEditor filters={filters} onChange={setFilters} list="trend-properties" cohorts={cohorts} empty="No filter: every event of the series counts." />

            <div class="inline-form">
              <label>
                Breakdown
                <input
                  type="text"
                  name="breakdown"
                  placeholder="none"
                  list="trend-properties"
                  value={breakdown}
                  onInput={(e) => setBreakdown(e.currentTarget.value)}
                />
              </label>
              <label>
                Limit
                <input
                  type="number"
                  name="breakdownLimit"
                  min={1}
                  max={100}
                  disabled={!breakdown.trim()}
                  value={breakdownLimit}
                  onInput={(e) => setBreakdownLimit(e.currentTarget.value)}
                />
              </label>
              <CountSelect types={groupTypes} value={aggregateBy} onChange={setAggregateBy} />
              <label>
                Interval
                <select name="interval" value={interval} onChange={(e) => setInterval(e.currentTarget.value as Interval)}>
                  <option value="hour">Hour</option>
                  <option value="day">Day</option>
                  <option value="week">Week</option>
                  <option value="month">Month</option>
                </select>
              </label>
              <button type="submit" class="button">
                Run trend
              </button>
            </div>
            {formError ? (
              <p class="form-error" role="alert">
                {formError}
              </p>
            ) : null}
          </form>

          <section class="card" aria-labelledby="trend-result-title">
            <div class="section-head tight">
              <h2 id="trend-result-title">
                {savedQuery ? savedQuery.name : "Chart"}
                <span class="hint heading-hint" data-testid="trend-range">
                  {savedQuery ? `Saved trend · ${describeRange(props.range)}` : describeRange(props.range)}
                </span>
              </h2>
              <div class="segmented" role="group" aria-label="Chart type">
                <button type="button" aria-pressed={chartKind === "line"} onClick={() => setChartKind("line")}>
                  Line
                </button>
                <button type="button" aria-pressed={chartKind === "bar"} onClick={() => setChartKind("bar")}>
                  Bar
                </button>
              </div>
            </div>
            {savedId !== null && saved !== null && savedQuery === null ? (
              <ErrorState message={`There is no saved trend ${savedId} in this product: it was deleted, or the link is for another product.`} />
            ) : null}
            {result.state === "failed" ? <ErrorState message={result.error} onRetry={retry} /> : null}
            {result.state === "loading" && !shown ? <Skeleton rows={5} label="Running the trend…" /> : null}
            {shown && names && empty && noEvents ? <NoData product={props.product} range={props.range} env={props.env} names={names} /> : null}
            {shown && !(empty && noEvents) ? (
              <>
                {shown.series.length === 0 ? <p class="empty">No event matched these series in this range.</p> : null}
                <TimeChart
                  kind={chartKind}
                  interval={shownInterval}
                  buckets={buckets}
                  lines={shown.series.map((l) => ({ label: l.label, data: l.data.map((p) => p.value) }))}
                  annotations={annotations}
                  onPick={canAnnotate ? (b) => setPicked(bucketTime(b)) : undefined}
                  label={`Trend chart of ${shown.series.map((l) => l.label).join(", ")}`}
                />
                {canAnnotate ? (
                  <div class="chart-foot">
                    <p class="hint">Click a point on the chart to add an annotation there.</p>
                    <button type="button" class="button secondary small" onClick={() => setPicked(Date.now())}>
                      Add annotation
                    </button>
                  </div>
                ) : null}
              </>
            ) : null}
          </section>

          <SaveQueryForm
            product={pid}
            kind="trend"
            build={() => {
              const err = checkTrend(series, filters, breakdownLimit);
              setFormError(err);
              return err ? null : build();
            }}
            onSaved={(q) => {
              setSaved((l) => [q, ...(l ?? [])]);
              runSaved(q);
            }}
          />
        </div>
        <aside class="col-side">
          <SavedList
            product={pid}
            items={saved}
            error={savedError}
            current={savedId}
            kindLabel="trend"
            describe={(q) => trendDefinition(q).series.map((s) => s.event).join(", ")}
            onRun={runSaved}
            onDeleted={(id) => setSaved((l) => (l ?? []).filter((q) => q.id !== id))}
          />
        </aside>
      </div>
      {picked !== null ? (
        <AnnotateDialog
          product={pid}
          at={picked}
          savedQueries={saved ?? []}
          queryId={savedId ?? undefined}
          onCreated={addAnnotation}
          onClose={() => setPicked(null)}
        />
      ) : null}
    </section>
  );
}
