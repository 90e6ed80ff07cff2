import { useState } from "preact/hooks";
import { bucketTime } from "../charts/time";
import { TimeChart, type Line } from "../charts/TimeChart";
import { periodName, previousPeriod } from "../compare";
import { BreakdownCard, totals, VisitOnly, type BreakdownProps } from "../components/BreakdownCard";
import { AnnotateDialog, useChartAnnotations } from "../components/ChartAnnotations";
import { Countries } from "../components/Countries";
import { Devices } from "../components/Devices";
import { useEventNamesResult } from "../components/EventInput";
import { FigureCards } from "../components/FigureCards";
import { Goals } from "../components/Goals";
import { CohortPicker, FilterChips, PersonFilterForm } from "../components/FilterChips";
import { useCohortOptions } from "../components/FilterEditor";
import { done, figures, overlay, pageviewTotal, usePeriod } from "../components/OverviewPeriod";
import { SessionPages } from "../components/SessionPages";
import { Sources } from "../components/Sources";
import { LiveVisitors } from "../components/LiveVisitors";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { eventFilters, FiltersContext, onlyShared, useFilterScope, useOverviewFilters, visitOnly, withFilter, type FilterScope, type OverviewFilter } from "../overviewFilters";
import type { DateRange } from "../range";
import { useAllows } from "../roles";
import { oneOf, useQueryState } from "../router";
import type { DataEnv, Interval, Product } from "../types";

/** The top pages, shown beside the entry and exit pages. */
const topPages: BreakdownProps = { property: "path", title: "Top pages", heading: "Page" };

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
 * exit pages, and the top sources, the visitors' countries (components/
 * Countries.tsx) and their devices (components/Devices.tsx).
 *
 * Unique visitors are the total of the trend's unique-users line of
 * $pageview: each user who viewed a page counted once over the range (a
 * sum of daily unique users would not), asked with the chart rather than
 * as retention cohorts; page views are the trend's count of $pageview in
 * the range. Both are kept as they were rather than taken from
 * the sessions query, whose visitors are the users of the visits that
 * started in the range (whatever their events) and whose page views include
 * those of visits running past the range's end. Visits, bounce rate, visit
 * duration, pages per visit and the entry and exit pages are the sessions
 * query's (docs/queries.md, "Sessions"). Beside the title, the visitors now,
 * refreshed every ten seconds. env picks live data or the events of test
 * keys. readOnly is a shared link's view: no annotating, and no
 * setup help when there is no data.
 *
 * A row of any card filters the whole page by its value (docs/dashboard.md,
 * "Filters"): the filters show as chips above the figures, live in the URL
 * (?f=is,country,DE), and reach every card through FiltersContext.
 */
export function Overview(props: { product: Product | null; range: DateRange; env: DataEnv; readOnly?: boolean }) {
  const [all, setFilters] = useOverviewFilters();
  // A shared link's viewer filters by what the page shows, never by a
  // cohort or a person's property: the link answers neither (docs/dashboard.md, "Filters").
  const filters = props.readOnly ? onlyShared(all) : all;
  if (!props.product) return <NoProduct />;
  const scope: FilterScope = { filters, add: (f) => setFilters(withFilter(filters, f)) };
  return (
    <FiltersContext.Provider value={scope}>
      <OverviewPage key={props.product.id} product={props.product} range={props.range} env={props.env} readOnly={props.readOnly} onFilters={setFilters} />
    </FiltersContext.Provider>
  );
}

function OverviewPage(props: { product: Product; range: DateRange; env: DataEnv; readOnly?: boolean; onFilters: (fs: OverviewFilter[]) => void }) {
  const pid = props.product.id;
  const { from, to } = props.range;
  const { env } = props;
  const interval = rangeInterval(props.range);
  // The source whose referrers are open, in the URL like Acquisition's.
  const [source, setSource] = useQueryState("source", "");
  // Whether the chart overlays the previous period, in the URL so a link or a reload keeps it.
  const [compare, setCompare] = useQueryState<"" | "previous">("compare", "", oneOf(["previous"] as const));
  const filters = useFilterScope()?.filters ?? [];
  const blocked = visitOnly(filters);
  const names = useEventNamesResult(pid, { from, to }, env);
  const previous = previousPeriod({ from, to });
  const period = periodName({ from, to });
  const cur = usePeriod(pid, { from, to }, interval, env, filters);
  const prev = usePeriod(pid, previous, interval, env, filters);
  const [annotations, addAnnotation] = useChartAnnotations(pid, from, to, null);
  const [picked, setPicked] = useState<number | null>(null);
  // Annotating needs the member role, and a shared link's view never annotates.
  const mayAnnotate = useAllows("member");
  const annotate = !props.readOnly && mayAnnotate;
  // The cohorts to filter by; a shared link's view lists none.
  const cohorts = useCohortOptions(pid, !props.readOnly);
  const cohortName = (id: string) => cohorts.find((c) => String(c.id) === id)?.name;

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
      <div class="page-head">
        <h1>Overview</h1>
        {props.readOnly ? null : (
          <div class="person-filters">
            <CohortPicker cohorts={cohorts} onPick={(f) => props.onFilters(withFilter(filters, f))} />
            <PersonFilterForm onPick={(f) => props.onFilters(withFilter(filters, f))} />
          </div>
        )}
        <LiveVisitors product={pid} env={env} />
      </div>
      {names && noEvents && pageviews === 0 && !props.readOnly ? <NoData product={props.product} range={props.range} env={env} names={names} /> : null}
      <FilterChips filters={filters} onChange={props.onFilters} cohortName={cohortName} />
      <FigureCards figures={figures(cur, prev, period, props.range, filters)} />
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
        {blocked ? <VisitOnly filter={blocked} /> : null}
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
              onPick={annotate ? (b) => setPicked(bucketTime(b)) : undefined}
              label={compare === "previous" ? `Visitors and page views over time, with ${period} dashed` : "Visitors and page views over time"}
            />
            <p class="hint">
              {annotate ? "Click a point on the chart to add an annotation there." : ""}
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
        <Sources product={pid} from={from} to={to} env={env} open={source || null} onOpen={(v) => setSource(v ?? "")} />
        <Countries product={pid} from={from} to={to} env={env} readOnly={props.readOnly} />
        <Devices product={pid} from={from} to={to} env={env} />
      </div>
      <Goals product={pid} from={from} to={to} env={env} filters={eventFilters(filters)} visitFilter={blocked} readOnly={props.readOnly} />
      {picked !== null ? (
        <AnnotateDialog product={pid} at={picked} savedQueries={[]} onCreated={addAnnotation} onClose={() => setPicked(null)} />
      ) : null}
    </section>
  );
}
