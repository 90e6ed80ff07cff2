import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { bucketTime, bucketTitle, nextBucket, num } from "../charts/time";
import { annotationsBetween, PeriodMarker, useChartAnnotations } from "../components/ChartAnnotations";
import { EventInput, EventList, useEventNamesResult } from "../components/EventInput";
import { FilterEditor, checkFilter, filterRequest, filterSearch, filtersFromSearch, useCohortOptions, type FilterDraft } from "../components/FilterEditor";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { Table } from "../components/Table";
import { plural } from "../format";
import { useLoad } from "../load";
import { isoDay, timeZone, type DateRange } from "../range";
import { oneOf, setQuery, useLocation, useQueryState } from "../router";
import type { Annotation, DataEnv, Product, RetentionRequest, RetentionResult } from "../types";

type Period = "day" | "week" | "month";
const periods: readonly Period[] = ["day", "week", "month"];

/**
 * Retention shows the cohort triangle as a heat map: each cell is the share
 * of the cohort that came back. A cohort whose period holds annotations is
 * marked in their colours. Retention queries are not saved, so only the
 * workspace's annotations apply (query-scoped ones never show on ad-hoc
 * reports). env picks live data or the events of test keys.
 */
export function Retention(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <RetentionPage key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function RetentionPage(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const days = { from: props.range.from, to: props.range.to };
  const names = useEventNamesResult(pid, days, props.env);
  // The query shown is the URL's (?start=, ?return=, ?period=, ?filter=
  // as the Trends page writes it), so that a link opens the same cohorts;
  // the form holds what is being typed.
  const [shownStart] = useQueryState("start", "$pageview");
  const [shownReturn] = useQueryState("return", "");
  const [shownPeriod] = useQueryState<Period>("period", "week", oneOf(periods));
  const loc = useLocation();
  const shownFilters = filtersFromSearch(loc.search.getAll("filter"));
  const shownFiltersKey = JSON.stringify(shownFilters);
  const req: RetentionRequest = {
    startEvent: shownStart,
    returnEvent: shownReturn || undefined,
    period: shownPeriod,
    filters: shownFilters.length ? shownFilters.map(filterRequest) : undefined,
  };
  const [start, setStart] = useState(shownStart);
  const [ret, setRet] = useState(shownReturn);
  const [period, setPeriod] = useState<Period>(shownPeriod);
  const [filters, setFilters] = useState<FilterDraft[]>(shownFilters);
  const cohortOptions = useCohortOptions(pid);
  // Back, forward or a link put the URL's query back in the form.
  useEffect(() => {
    setStart(shownStart);
    setRet(shownReturn);
    setPeriod(shownPeriod);
    setFilters(shownFilters);
  }, [shownStart, shownReturn, shownPeriod, shownFiltersKey]);
  const [error, setError] = useState<string | null>(null);
  const [runs, setRuns] = useState(0);
  const [result, retry] = useLoad<RetentionResult>(
    () => api.retention(pid, { ...req, dateFrom: days.from, dateTo: days.to }, props.env),
    [pid, JSON.stringify(req), days.from, days.to, props.env, runs],
  );
  // Cohort periods can start before the picked range (a week starts on its
  // Monday), so the annotations are fetched over the cohorts' own span.
  const cohorts = result.state === "done" ? result.data.cohorts : [];
  const p = (result.state === "done" ? result.data.period : req.period) as Period;
  const annFrom = cohorts.length ? cohorts[0].date.slice(0, 10) : days.from;
  const annTo = cohorts.length
    ? new Date(nextBucket(bucketTime(cohorts[cohorts.length - 1].date), p) - 1).toISOString().slice(0, 10)
    : days.to;
  // The list's days are UTC's; a local day of another zone straddles two of
  // them, so the list reaches a day further on either side.
  const widen = (d: string, by: number) => (timeZone() === "UTC" ? d : isoDay(new Date(bucketTime(d) + by * 86_400_000)));
  const [annotations] = useChartAnnotations(pid, widen(annFrom < days.from ? annFrom : days.from, -1), widen(annTo > days.to ? annTo : days.to, 1), null);
  const run = (e: Event) => {
    e.preventDefault();
    if (!start.trim()) return setError("Enter the start event.");
    for (const f of filters) {
      const err = checkFilter(f);
      if (err) return setError(err);
    }
    setError(null);
    setRuns((n) => n + 1);
    setQuery({
      start: start.trim() === "$pageview" ? null : start.trim(),
      return: ret.trim() || null,
      period: period === "week" ? null : period,
      filter: filters.length ? filterSearch(filters) : null,
    });
  };
  const noEvents = names !== null && names.events.length === 0;
  return (
    <section class="page">
      <h1>Retention</h1>
      <form class="card inline-form" onSubmit={run} aria-label="Retention query">
        <EventList id="retention-events" names={names?.events ?? null} />
        <label>
          Start event
          <EventInput label="Start event" value={start} list="retention-events" onChange={setStart} />
        </label>
        <label>
          Return event
          <EventInput label="Return event" value={ret} list="retention-events" onChange={setRet} />
        </label>
        <label>
          Period
          <select value={period} onChange={(e) => setPeriod(e.currentTarget.value as Period)}>
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </label>
        <button type="submit" class="button">
          Show retention
        </button>
        <p class="hint full">Users join the cohort of the period of their first start event; a blank return event means the start event.</p>
        <div class="full">
          <datalist id="retention-properties">
            {["url", "path", "referrer", "browser", "os", "device_type", "source", "channel", "country", "cohort", "person."].map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
          <FilterEditor
            filters={filters}
            onChange={setFilters}
            list="retention-properties"
            cohorts={cohortOptions}
            empty="No filter: every start and return event counts. A filter applies to both; “cohort” keeps the users of a cohort."
          />
        </div>
        {error ? (
          <p class="form-error" role="alert">
            {error}
          </p>
        ) : null}
      </form>
      <section class="card">
        {result.state === "loading" ? <Skeleton rows={6} label="Computing cohorts…" /> : null}
        {result.state === "failed" ? <ErrorState message={result.error} onRetry={retry} /> : null}
        {result.state === "done" ? (
          names && noEvents ? (
            <NoData product={props.product} range={props.range} env={props.env} names={names} />
          ) : (
            <CohortTable result={result.data} annotations={annotations} />
          )
        ) : null}
      </section>
    </section>
  );
}

/**
 * CohortTable is the retention triangle; a cell's shade is its share of the
 * cohort. A cohort row whose period (its day, week or month, UTC) holds
 * annotations carries a marker with their colours and labels.
 */
export function CohortTable(props: { result: RetentionResult; annotations?: Annotation[] }) {
  const cohorts = props.result.cohorts;
  if (cohorts.every((c) => c.size === 0)) return <p class="empty">No user did the start event in this range.</p>;
  const width = Math.max(...cohorts.map((c) => c.values.length));
  const p = props.result.period as Period;
  return (
    <Table
      label="Retention by cohort"
      class="table cohorts"
      head={
        <>
          <th scope="col">Cohort</th>
          <th scope="col">Users</th>
          {Array.from({ length: width }, (_, k) => (
            <th scope="col" key={k}>
              {p === "day" ? "Day" : p === "month" ? "Month" : "Week"} {k}
            </th>
          ))}
        </>
      }
    >
      {cohorts.map((c) => (
        <tr key={c.date}>
          <th scope="row">
            <span class="cohort-title">
              {bucketTitle(c.date, p === "week" ? "week" : p)}
              {/* A cohort's period is local dates of the product's zone, written as
                  UTC midnights: an annotation's instant is placed by its wall time there. */}
              <PeriodMarker annotations={annotationsBetween(props.annotations ?? [], bucketTime(c.date), nextBucket(bucketTime(c.date), p), true)} />
            </span>
          </th>
          <td class="num">{num(c.size)}</td>
          {Array.from({ length: width }, (_, k) => {
            if (k >= c.values.length) return <td key={k} class="cell-none" />;
            const share = c.size ? c.values[k] / c.size : 0;
            return (
              <td
                key={k}
                class="heat"
                style={{ background: `rgb(2 132 199 / ${(0.08 + share * 0.85).toFixed(3)})`, color: share > 0.5 ? "#fff" : undefined }}
                title={`${num(c.values[k])} of ${plural(c.size, "user")}`}
              >
                {c.size ? `${Math.round(share * 1000) / 10}%` : "—"}
              </td>
            );
          })}
        </tr>
      ))}
    </Table>
  );
}
