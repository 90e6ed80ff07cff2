import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { AnnotationStrip, useChartAnnotations } from "../components/ChartAnnotations";
import { CountSelect, useGroupTypes } from "../components/CountSelect";
import { EventInput, EventList, useEventNamesResult } from "../components/EventInput";
import { FilterEditor, checkFilter, draftFilters, filterRequest, useCohortOptions, type FilterDraft } from "../components/FilterEditor";
import { FunnelUsers, type FunnelPick } from "../components/FunnelUsers";
import { OverTime, TimeToConvert, ViewSwitch, funnelIntervals, funnelViews, overall, rowLabel, type FunnelInterval, type FunnelView } from "../components/FunnelViews";
import { SaveQueryForm, SavedList, useSavedQueries } from "../components/SavedList";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { plural } from "../format";
import { useLoad } from "../load";
import { describe as describeRange, type DateRange } from "../range";
import { oneOf, positiveInt, setQuery, useLocation, useQueryState, type QueryPatch } from "../router";
import { funnelSteps, placeholderSteps, windowHours as windowLimits } from "../limits.gen";
import type { DataEnv, FilterRequest, FunnelRequest, FunnelResult, Product, SavedQuery } from "../types";

export const maxSteps = funnelSteps.max;

/** A saved or sent step: an event name, or an event with filters. */
type StepJSON = string | { event: string; where?: FilterRequest[] | null };

/** funnelDefinition reads a saved funnel's steps (with their filters), window, what it counts, exclusions and breakdown. */
function funnelDefinition(q: SavedQuery): FunnelDraft {
  const d = (q.definition ?? {}) as {
    steps?: StepJSON[];
    windowHours?: number;
    aggregateBy?: string | null;
    breakdown?: string | null;
    exclusions?: { event: string; fromStep: number; toStep: number; where?: FilterRequest[] | null }[] | null;
  };
  const steps = d.steps ?? [...placeholderSteps];
  const where = steps.map((s) => (typeof s === "string" ? [] : draftFilters(s.where)));
  return {
    steps: steps.map((s) => (typeof s === "string" ? s : s.event)),
    windowHours: d.windowHours ?? windowLimits.default,
    aggregateBy: d.aggregateBy ?? "",
    where: where.some((w) => w.length > 0) ? where : undefined,
    breakdown: d.breakdown || undefined,
    exclusions: d.exclusions?.length ? d.exclusions.map((x) => ({ event: x.event, fromStep: x.fromStep, toStep: x.toStep })) : undefined,
  };
}

/** An exclusion as the builder holds it: users who did event between two steps are left out. */
export interface ExclusionDraft {
  event: string;
  fromStep: number;
  toStep: number;
}

/** FunnelDraft is what the builder sets: the query a link names. */
export interface FunnelDraft {
  steps: string[];
  windowHours: number;
  aggregateBy: string;
  /** where[i] is step i's filters; absent when no step has any. */
  where?: FilterDraft[][];
  breakdown?: string;
  exclusions?: ExclusionDraft[];
}

const operatorNames: FilterDraft["operator"][] = ["eq", "neq", "contains", "not_contains", "regex", "gt", "lt", "is_set", "is_not_set", "in", "not_in"];

/**
 * funnelFromSearch reads the funnel a URL names (docs/dashboard.md, "State
 * in the URL"): ?step= once per step in order, ?window= in hours, ?count=
 * the group type, ?where=STEP:PROPERTY:OPERATOR[:VALUE] once per step
 * filter, ?breakdown= the property, ?exclude=FROM:TO:EVENT once per
 * exclusion; the placeholder funnel for what is absent or invalid.
 */
export function funnelFromSearch(search: URLSearchParams): FunnelDraft {
  const found = search.getAll("step");
  const steps = found.length >= 2 && found.length <= maxSteps ? found : [...placeholderSteps];
  const w = Number(search.get("window"));
  const where: FilterDraft[][] = steps.map(() => []);
  for (const x of search.getAll("where")) {
    const m = /^(\d+):([^:]+):([a-z_]+)(?::(.*))?$/s.exec(x);
    if (!m || Number(m[1]) >= steps.length || !operatorNames.includes(m[3] as FilterDraft["operator"])) continue;
    where[Number(m[1])].push({ property: m[2], operator: m[3] as FilterDraft["operator"], value: m[4] ?? "" });
  }
  const exclusions: ExclusionDraft[] = [];
  for (const x of search.getAll("exclude")) {
    const m = /^(\d+):(\d+):(.+)$/s.exec(x);
    if (m && Number(m[1]) < Number(m[2]) && Number(m[2]) < steps.length) exclusions.push({ fromStep: Number(m[1]), toStep: Number(m[2]), event: m[3] });
  }
  return {
    steps,
    windowHours: Number.isInteger(w) && w >= windowLimits.min && w <= windowLimits.max ? w : windowLimits.default,
    aggregateBy: search.get("count") ?? "",
    where: where.some((f) => f.length > 0) ? where : undefined,
    breakdown: search.get("breakdown") || undefined,
    exclusions: exclusions.length ? exclusions : undefined,
  };
}

/** funnelSearch is the query-string patch naming a funnel, defaults left out. */
export function funnelSearch(d: FunnelDraft | null): QueryPatch {
  const where: string[] = [];
  d?.where?.forEach((fs, i) =>
    fs.forEach((f) => where.push(f.operator === "is_set" || f.operator === "is_not_set" ? `${i}:${f.property}:${f.operator}` : `${i}:${f.property}:${f.operator}:${f.value}`)),
  );
  return {
    step: d?.steps ?? null,
    window: d && d.windowHours !== windowLimits.default ? String(d.windowHours) : null,
    count: d?.aggregateBy || null,
    where: where.length ? where : null,
    breakdown: d?.breakdown || null,
    exclude: d?.exclusions?.length ? d.exclusions.map((x) => `${x.fromStep}:${x.toStep}:${x.event}`) : null,
  };
}

/** funnelRequest is the body that runs a drafted funnel: a step without filters is its name, as the spec has it. */
export function funnelRequest(d: FunnelDraft): Omit<FunnelRequest, "dateFrom" | "dateTo"> {
  return {
    steps: d.steps.map((event, i) => {
      const fs = d.where?.[i] ?? [];
      return fs.length ? { event, where: fs.map(filterRequest) } : event;
    }),
    windowHours: d.windowHours,
    aggregateBy: d.aggregateBy || undefined,
    breakdown: d.breakdown || undefined,
    exclusions: d.exclusions?.length ? d.exclusions.map((x) => ({ event: x.event, fromStep: x.fromStep, toStep: x.toStep })) : undefined,
  };
}

/** checkFilters returns why drafted filters cannot run, or null. */
export function checkFilters(filters: FilterDraft[]): string | null {
  for (const f of filters) {
    const err = checkFilter(f);
    if (err) return err;
  }
  return null;
}

/**
 * Funnels builds a funnel (steps with suggestions from the product's event
 * names, add/remove/reorder, window), runs it over the picked range, draws
 * the steps as horizontal bars with counts and conversion, and keeps saved
 * funnels to run again, over the picked range too. The funnel run, or the
 * saved funnel (?saved=), is in the URL, so that a link opens the same
 * result and back returns to the previous one. A timeline strip above the
 * bars marks the range's annotations (a saved funnel's own included). env
 * picks live data or the events of test keys.
 */
export function Funnels(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <FunnelBuilder key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function FunnelBuilder(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const days = { from: props.range.from, to: props.range.to };
  const loc = useLocation();
  const [savedId] = useQueryState<number | null>("saved", null, positiveInt);
  const { saved, setSaved, savedError } = useSavedQueries(pid, "funnel");
  const savedQuery = savedId === null ? null : saved?.find((q) => q.id === savedId) ?? null;
  // The funnel on screen: the URL's, or the saved one it names.
  const shownDraft = savedQuery ? funnelDefinition(savedQuery) : funnelFromSearch(loc.search);

  const [steps, setSteps] = useState<string[]>(shownDraft.steps);
  const [windowHours, setWindowHours] = useState(String(shownDraft.windowHours));
  const [aggregateBy, setAggregateBy] = useState(shownDraft.aggregateBy);
  const [where, setWhere] = useState<FilterDraft[][]>(shownDraft.where ?? shownDraft.steps.map(() => []));
  const [breakdown, setBreakdown] = useState(shownDraft.breakdown ?? "");
  const [exclusions, setExclusions] = useState<ExclusionDraft[]>(shownDraft.exclusions ?? []);
  // A new URL (a link, back or forward, a saved funnel loaded) puts its
  // funnel back in the builder.
  const shownKey = JSON.stringify(shownDraft);
  useEffect(() => {
    setSteps(shownDraft.steps);
    setWindowHours(String(shownDraft.windowHours));
    setAggregateBy(shownDraft.aggregateBy);
    setWhere(shownDraft.where ?? shownDraft.steps.map(() => []));
    setBreakdown(shownDraft.breakdown ?? "");
    setExclusions(shownDraft.exclusions ?? []);
  }, [shownKey]);
  const groupTypes = useGroupTypes(pid);
  const cohorts = useCohortOptions(pid);
  const [formError, setFormError] = useState<string | null>(null);
  const [runs, setRuns] = useState(0);
  const names = useEventNamesResult(pid, days, props.env);

  // The view (?view=) and the Over time interval (?interval=) apply at
  // once, with or without a breakdown (each row then gets the view).
  const [view, setView] = useQueryState<FunnelView>("view", "steps", oneOf(funnelViews));
  const [interval, setInterval] = useQueryState<FunnelInterval>("interval", "day", oneOf(funnelIntervals));
  const request: FunnelRequest = { ...funnelRequest(shownDraft), dateFrom: days.from, dateTo: days.to };
  const viewRequest: FunnelRequest = view === "steps" ? request : { ...request, view, interval: view === "trends" ? interval : undefined };
  const waiting = savedId !== null && savedQuery === null;
  const [result, retry] = useLoad<FunnelResult>(
    waiting
      ? null
      : () =>
          // A saved funnel in another view runs its definition (shownDraft) with the view.
          savedQuery && view === "steps" ? api.runSaved<FunnelResult>(pid, savedQuery.id, props.env, days) : api.funnel(pid, viewRequest, props.env),
    [pid, savedId ?? JSON.stringify(shownDraft), waiting, days.from, days.to, props.env, runs, view, view === "trends" ? interval : ""],
  );
  // The users panel: the step (and breakdown row) clicked, closed when the funnel changes.
  const [picked, setPicked] = useState<FunnelPick | null>(null);
  useEffect(() => setPicked(null), [savedId ?? JSON.stringify(shownDraft), days.from, days.to, props.env]);
  // A funnel of groups has no users to list.
  const pick = shownDraft.aggregateBy ? undefined : setPicked;

  // The annotations of the range on screen; a saved funnel adds its own
  // (query-scoped) annotations to the workspace's.
  const [annotations] = useChartAnnotations(pid, days.from, days.to, savedQuery ? savedQuery.id : null);

  // draft checks the builder's funnel and says what is wrong, or returns it.
  const draft = (): FunnelDraft | null => {
    const clean = steps.map((s) => s.trim());
    if (clean.some((s) => s === "")) {
      setFormError("Every step needs an event name.");
      return null;
    }
    const w = Number(windowHours);
    if (!Number.isInteger(w) || w < windowLimits.min || w > windowLimits.max) {
      setFormError(`The window is a whole number of hours from ${windowLimits.min} to ${windowLimits.max}.`);
      return null;
    }
    for (const fs of [...where]) {
      const err = checkFilters(fs);
      if (err) {
        setFormError(err);
        return null;
      }
    }
    if (exclusions.some((x) => !x.event.trim() || x.fromStep >= x.toStep || x.toStep >= clean.length)) {
      setFormError("Every exclusion needs an event and two steps, the first before the second.");
      return null;
    }
    setFormError(null);
    return {
      steps: clean,
      windowHours: w,
      aggregateBy,
      where: where.some((f) => f.length > 0) ? where.map((fs) => fs.map((f) => ({ ...f, property: f.property.trim() }))) : undefined,
      breakdown: breakdown.trim() || undefined,
      exclusions: exclusions.length ? exclusions.map((x) => ({ ...x, event: x.event.trim() })) : undefined,
    };
  };
  const validate = (): FunnelRequest | null => {
    const d = draft();
    return d ? funnelRequest(d) : null;
  };
  const run = (e?: Event) => {
    e?.preventDefault();
    const d = draft();
    if (!d) return;
    setRuns((n) => n + 1);
    setQuery({ saved: null, ...funnelSearch(d) });
  };
  const runSaved = (q: SavedQuery) => {
    setFormError(null);
    setRuns((n) => n + 1);
    setQuery({ saved: String(q.id), ...funnelSearch(null) });
  };

  // Steps and their filters move together.
  const setStep = (i: number, v: string) => setSteps((s) => s.map((x, j) => (j === i ? v : x)));
  const swap = <T,>(l: T[], i: number, d: number) => {
    const out = [...l];
    [out[i], out[i + d]] = [out[i + d], out[i]];
    return out;
  };
  const move = (i: number, d: -1 | 1) => {
    setSteps((s) => swap(s, i, d));
    setWhere((w) => swap(w, i, d));
  };
  const remove = (i: number) => {
    setSteps((x) => x.filter((_, j) => j !== i));
    setWhere((w) => w.filter((_, j) => j !== i));
    setExclusions((l) => l.filter((x) => x.fromStep !== i && x.toStep !== i).map((x) => ({ ...x, fromStep: x.fromStep > i ? x.fromStep - 1 : x.fromStep, toStep: x.toStep > i ? x.toStep - 1 : x.toStep })));
  };
  const setX = (k: number, patch: Partial<ExclusionDraft>) => setExclusions((l) => l.map((x, j) => (j === k ? { ...x, ...patch } : x)));

  const shown = result.state === "done" ? result.data : result.state === "loading" ? result.previous : undefined;
  const noEvents = names !== null && names.events.length === 0;
  return (
    <section class="page">
      <h1>Funnels</h1>
      <div class="two-col">
        <div class="col-main">
          <form class="card builder" onSubmit={run} aria-label="Funnel builder">
            <EventList id="funnel-events" names={names?.events ?? null} />
            <h2>Steps</h2>
            <ol class="steps">
              {steps.map((s, i) => (
                <li key={i} class="step-row">
                  <span class="step-num" aria-hidden="true">
                    {i + 1}
                  </span>
                  <EventInput label={`Step ${i + 1} event`} value={s} list="funnel-events" onChange={(v) => setStep(i, v)} />
                  <div class="step-actions">
                    <button type="button" class="icon-button" aria-label={`Move step ${i + 1} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                      ↑
                    </button>
                    <button
                      type="button"
                      class="icon-button"
                      aria-label={`Move step ${i + 1} down`}
                      disabled={i === steps.length - 1}
                      onClick={() => move(i, 1)}
                    >
                      ↓
                    </button>
                    <button
                      type="button"
                      class="icon-button"
                      aria-label={`Remove step ${i + 1}`}
                      disabled={steps.length <= 2}
                      onClick={() => remove(i)}
                    >
                      ✕
                    </button>
                  </div>
                  <div class="step-filters">
                    <FilterEditor
                      name={`Step ${i + 1}`}
                      list="funnel-properties"
                      cohorts={cohorts}
                      filters={where[i] ?? []}
                      onChange={(fs) => setWhere((w) => steps.map((_, j) => (j === i ? fs : w[j] ?? [])))}
                    />
                  </div>
                </li>
              ))}
            </ol>
            <div class="inline-form">
              <button
                type="button"
                class="button secondary"
                disabled={steps.length >= maxSteps}
                onClick={() => {
                  setSteps((s) => [...s, ""]);
                  setWhere((w) => [...steps.map((_, j) => w[j] ?? []), []]);
                }}
              >
                Add step
              </button>
              <label>
                Window (hours)
                <input
                  type="number"
                  name="windowHours"
                  min={windowLimits.min}
                  max={windowLimits.max}
                  step={1}
                  value={windowHours}
                  onInput={(e) => setWindowHours(e.currentTarget.value)}
                />
              </label>
              <CountSelect types={groupTypes} value={aggregateBy} onChange={setAggregateBy} />
              <button type="submit" class="button">
                Run funnel
              </button>
            </div>
            <p class="hint">Each step must happen within the window after the one before it. Steps count users (or the groups picked in Count), not events.</p>
            <datalist id="funnel-properties">
              {["url", "path", "referrer", "browser", "os", "device_type", "source", "channel", "utm_source", "utm_medium", "utm_campaign", "country", "cohort", "person."].map((c) => (
                <option key={c} value={c} />
              ))}
            </datalist>
            <h2 class="sub">Exclusions</h2>
            {exclusions.length === 0 ? <p class="hint">No exclusion: every user who entered counts.</p> : null}
            <ul class="rows">
              {exclusions.map((x, k) => (
                <li key={k} class="row" data-testid="funnel-exclusion">
                  <EventInput label={`Exclusion ${k + 1} event`} value={x.event} list="funnel-events" onChange={(v) => setX(k, { event: v })} />
                  <label>
                    after step
                    <select aria-label={`Exclusion ${k + 1} from step`} value={String(x.fromStep)} onChange={(e) => setX(k, { fromStep: Number(e.currentTarget.value) })}>
                      {steps.slice(0, -1).map((_, j) => (
                        <option key={j} value={String(j)}>
                          {j + 1}
                        </option>
                      ))}
                    </select>
                  </label>
                  <label>
                    before step
                    <select aria-label={`Exclusion ${k + 1} to step`} value={String(x.toStep)} onChange={(e) => setX(k, { toStep: Number(e.currentTarget.value) })}>
                      {steps.map((_, j) =>
                        j > 0 ? (
                          <option key={j} value={String(j)}>
                            {j + 1}
                          </option>
                        ) : null,
                      )}
                    </select>
                  </label>
                  <button type="button" class="icon-button" aria-label={`Remove exclusion ${k + 1}`} onClick={() => setExclusions((l) => l.filter((_, j) => j !== k))}>
                    ✕
                  </button>
                </li>
              ))}
            </ul>
            <div class="inline-form">
              <button
                type="button"
                class="button secondary small"
                disabled={exclusions.length >= 10}
                onClick={() => setExclusions((l) => [...l, { event: "", fromStep: 0, toStep: steps.length - 1 }])}
              >
                Add exclusion
              </button>
              <label>
                Breakdown
                <input
                  type="text"
                  name="breakdown"
                  list="funnel-properties"
                  placeholder="browser or properties.plan"
                  value={breakdown}
                  onInput={(e) => setBreakdown(e.currentTarget.value)}
                />
              </label>
            </div>
            <p class="hint">Users who did an excluded event between the two steps are left out of the whole funnel. A breakdown splits users by the property on their first step's event.</p>
            {formError ? (
              <p class="form-error" role="alert">
                {formError}
              </p>
            ) : null}
          </form>

          <section class="card" aria-labelledby="funnel-result-title">
            <h2 id="funnel-result-title">
              {savedQuery ? savedQuery.name : "Result"}
              <span class="hint heading-hint" data-testid="funnel-range">
                {savedQuery ? `Saved funnel · ${describeRange(props.range)}` : describeRange(props.range)}
              </span>
            </h2>
            {savedId !== null && saved !== null && savedQuery === null ? (
              <ErrorState message={`There is no saved funnel ${savedId} in this product: it was deleted, or the link is for another product.`} />
            ) : null}
            {result.state === "failed" ? <ErrorState message={result.error} onRetry={retry} /> : null}
            {result.state === "loading" && !shown ? <Skeleton rows={3} label="Running the funnel…" /> : null}
            {shown ? (
              names && noEvents && shown.steps.every((s) => s.count === 0) ? (
                <NoData product={props.product} range={props.range} env={props.env} names={names} />
              ) : (
                <>
                  <AnnotationStrip from={days.from} to={days.to} annotations={annotations} />
                  <ViewSwitch view={view} onChange={(v) => setView(v)} />
                  {view === "trends" ? (
                    <label class="inline-form">
                      Interval
                      <select name="interval" value={interval} onChange={(e) => setInterval(e.currentTarget.value as FunnelInterval)}>
                        <option value="day">Day</option>
                        <option value="week">Week</option>
                      </select>
                    </label>
                  ) : null}
                  {view === "time_to_convert" && shown.timeToConvert ? <TimeToConvert result={shown} /> : null}
                  {view === "trends" && shown.overTime ? <OverTime result={shown} interval={interval} /> : null}
                  {view === "steps" ? (
                    <>
                      <FunnelBars result={shown} busy={result.state === "loading"} counts={shownDraft.aggregateBy || undefined} onPick={pick} />
                      {shown.breakdown ? <FunnelBreakdownTable result={shown} onPick={pick} /> : null}
                    </>
                  ) : null}
                </>
              )
            ) : null}
          </section>

          {picked && shown && shown.steps[picked.step] ? (
            <FunnelUsers
              product={pid}
              env={props.env}
              request={request}
              stepName={shown.steps[picked.step].name}
              pick={picked}
              onClose={() => setPicked(null)}
            />
          ) : null}

          <SaveQueryForm
            product={pid}
            kind="funnel"
            // Saved without dates: a saved funnel runs over the range on screen.
            build={validate}
            onSaved={(q) => {
              setSaved((list) => [q, ...(list ?? [])]);
              runSaved(q);
            }}
          />
        </div>
        <aside class="col-side">
          <SavedList
            product={pid}
            items={saved}
            error={savedError}
            current={savedQuery ? savedQuery.id : null}
            kindLabel="funnel"
            describe={(q) => funnelDefinition(q).steps.join(" → ")}
            onRun={runSaved}
            onDeleted={(id) => setSaved((l) => (l ?? []).filter((q) => q.id !== id))}
          />
        </aside>
      </div>
    </section>
  );
}

/**
 * FunnelBars is the funnel as horizontal bars: each step's users as a share
 * of the first step, with the number of users and the share of the step
 * before's users who went on to this one. The headings say which is which:
 * both numbers count users, or with counts set the groups of that type the
 * funnel counted (aggregateBy), which the count column's heading then names.
 * With onPick, each step has "Converted n" and (but the last) "Dropped off
 * m" links, and its bar opens the converted: they list those users.
 */
export function FunnelBars(props: { result: FunnelResult; busy?: boolean; counts?: string; onPick?: (p: FunnelPick) => void }) {
  const first = props.result.steps[0]?.count ?? 0;
  if (first === 0) {
    return (
      <p class="empty" data-testid="funnel-empty">
        No user did “{props.result.steps[0]?.name}” in this range, so the funnel is empty.
      </p>
    );
  }
  const last = props.result.steps[props.result.steps.length - 1];
  return (
    <div class={`funnel${props.busy ? " busy" : ""}`} aria-busy={props.busy ? "true" : "false"}>
      <div class="table-scroll">
        <table class="funnel-table" data-testid="funnel-result">
          <caption class="visually-hidden">Users at each step of the funnel</caption>
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col" class="bar-col">
                Share of first step
              </th>
              <th scope="col">{props.counts ? `Groups (${props.counts})` : "Users"}</th>
              <th scope="col">Converted from previous step</th>
            </tr>
          </thead>
          <tbody>
            {props.result.steps.map((s, i) => {
              const pct = (s.count / first) * 100;
              return (
                <tr key={i} data-testid="funnel-step">
                  <th scope="row" class="step-name">
                    <span class="step-num">{i + 1}</span> {s.name}
                    {s.where?.length ? <span class="hint step-where"> · {s.where.map(describeFilter).join(", ")}</span> : null}
                    {props.onPick ? <StepLinks steps={props.result.steps} step={i} onPick={props.onPick} /> : null}
                  </th>
                  <td class="bar-col">
                    <div
                      class={`hbar${props.onPick ? " clickable" : ""}`}
                      aria-hidden="true"
                      onClick={props.onPick ? () => props.onPick!({ step: i, status: "converted", count: s.count }) : undefined}
                    >
                      <div class="hbar-fill" style={{ width: `${Math.max(pct, s.count > 0 ? 0.5 : 0)}%` }} />
                    </div>
                    <span class="visually-hidden">{Math.round(pct * 10) / 10}%</span>
                  </td>
                  <td class="num" data-testid="step-count">
                    {num(s.count)}
                  </td>
                  <td class="num" data-testid="step-conversion">
                    {s.conversionPct === null ? "—" : `${s.conversionPct}%`}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p class="hint">
        Overall conversion: <strong>{first ? Math.round((last.count / first) * 1000) / 10 : 0}%</strong> of{" "}
        {props.counts ? plural(first, "group") : plural(first, "user")}.
      </p>
    </div>
  );
}

/**
 * StepLinks are a step's "Converted n" and, but for the last step,
 * "Dropped off m" buttons, of every user or of one breakdown row (row);
 * compact (a breakdown cell) writes the converted count alone.
 */
function StepLinks(props: { steps: FunnelResult["steps"]; step: number; onPick: (p: FunnelPick) => void; row?: Pick<FunnelPick, "breakdownValue" | "other">; label?: string; compact?: boolean }) {
  const i = props.step;
  const n = props.steps[i].count;
  const dropped = i + 1 < props.steps.length ? n - props.steps[i + 1].count : null;
  const of = `step ${i + 1}${props.label ? `, ${props.label}` : ""}`;
  return (
    <span class="step-links">
      <button type="button" class="link-button" aria-label={`Converted at ${of}: ${n}`} onClick={() => props.onPick({ step: i, status: "converted", count: n, ...props.row })}>
        {props.compact ? <span data-testid="breakdown-count">{num(n)}</span> : `Converted ${num(n)}`}
      </button>
      {dropped !== null ? (
        <button
          type="button"
          class="link-button"
          aria-label={`Dropped off after ${of}: ${dropped}`}
          onClick={() => props.onPick({ step: i, status: "dropped", count: dropped, ...props.row })}
        >
          Dropped off {num(dropped)}
        </button>
      ) : null}
    </span>
  );
}

/** describeFilter writes a filter as people read it: path = /pricing. */
export function describeFilter(f: FilterRequest): string {
  const op: Record<string, string> = { eq: "=", neq: "≠", contains: "contains", not_contains: "does not contain", regex: "matches", gt: ">", lt: "<", is_set: "is set", is_not_set: "is not set" };
  return f.value === undefined || f.value === null ? `${f.property} ${op[f.operator]}` : `${f.property} ${op[f.operator]} ${String(f.value)}`;
}

/**
 * FunnelBreakdownTable is the funnel of each breakdown value: a row per
 * value (the top ones, then the others together), its users at each step
 * and its overall conversion. With onPick, each count has the row's
 * "Converted" and "Dropped off" links.
 */
export function FunnelBreakdownTable(props: { result: FunnelResult; onPick?: (p: FunnelPick) => void }) {
  const rows = props.result.breakdown ?? [];
  if (rows.length === 0) return null;
  return (
    <div class="table-scroll">
      <table class="funnel-table" data-testid="funnel-breakdown">
        <caption class="visually-hidden">Users at each step, by breakdown value</caption>
        <thead>
          <tr>
            <th scope="col">Value</th>
            {props.result.steps.map((s, i) => (
              <th scope="col" key={i} class="num">
                {i + 1}. {s.name}
              </th>
            ))}
            <th scope="col" class="num">
              Overall
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, k) => {
            const first = r.steps[0]?.count ?? 0;
            const last = r.steps[r.steps.length - 1]?.count ?? 0;
            const label = rowLabel(r);
            const row = r.other ? { other: true } : { breakdownValue: r.breakdownValue ?? "" };
            return (
              <tr key={k} data-testid="funnel-breakdown-row">
                <th scope="row">{label}</th>
                {r.steps.map((s, i) => (
                  <td class="num" key={i}>
                    {props.onPick ? <StepLinks steps={r.steps} step={i} onPick={props.onPick} row={row} label={label} compact /> : num(s.count)}
                  </td>
                ))}
                <td class="num">{overall(first, last)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
