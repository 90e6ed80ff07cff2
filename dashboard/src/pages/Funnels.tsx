import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { AnnotationStrip, useChartAnnotations } from "../components/ChartAnnotations";
import { CountSelect, useGroupTypes } from "../components/CountSelect";
import { EventInput, EventList, useEventNamesResult } from "../components/EventInput";
import { SaveQueryForm, SavedList, useSavedQueries } from "../components/SavedList";
import { ErrorState, NoData, NoProduct, Skeleton } from "../components/States";
import { plural } from "../format";
import { useLoad } from "../load";
import { describe as describeRange, type DateRange } from "../range";
import { positiveInt, setQuery, useLocation, useQueryState, type QueryPatch } from "../router";
import { funnelSteps, placeholderSteps, windowHours as windowLimits } from "../limits.gen";
import type { DataEnv, FunnelRequest, FunnelResult, Product, SavedQuery } from "../types";

export const maxSteps = funnelSteps.max;

/** funnelDefinition reads a saved funnel's steps, window and what it counts. */
function funnelDefinition(q: SavedQuery): FunnelDraft {
  const d = (q.definition ?? {}) as { steps?: string[]; windowHours?: number; aggregateBy?: string | null };
  return { steps: d.steps ?? [...placeholderSteps], windowHours: d.windowHours ?? windowLimits.default, aggregateBy: d.aggregateBy ?? "" };
}

/** FunnelDraft is what the builder sets: the query a link names. */
export interface FunnelDraft {
  steps: string[];
  windowHours: number;
  aggregateBy: string;
}

/**
 * funnelFromSearch reads the funnel a URL names (docs/dashboard.md, "State
 * in the URL"): ?step= once per step in order, ?window= in hours, ?count=
 * the group type; the placeholder funnel for what is absent or invalid.
 */
export function funnelFromSearch(search: URLSearchParams): FunnelDraft {
  const steps = search.getAll("step");
  const w = Number(search.get("window"));
  return {
    steps: steps.length >= 2 && steps.length <= maxSteps ? steps : [...placeholderSteps],
    windowHours: Number.isInteger(w) && w >= windowLimits.min && w <= windowLimits.max ? w : windowLimits.default,
    aggregateBy: search.get("count") ?? "",
  };
}

/** funnelSearch is the query-string patch naming a funnel, defaults left out. */
export function funnelSearch(d: FunnelDraft | null): QueryPatch {
  return {
    step: d?.steps ?? null,
    window: d && d.windowHours !== windowLimits.default ? String(d.windowHours) : null,
    count: d?.aggregateBy || null,
  };
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
  // A new URL (a link, back or forward, a saved funnel loaded) puts its
  // funnel back in the builder.
  const shownKey = JSON.stringify(shownDraft);
  useEffect(() => {
    setSteps(shownDraft.steps);
    setWindowHours(String(shownDraft.windowHours));
    setAggregateBy(shownDraft.aggregateBy);
  }, [shownKey]);
  const groupTypes = useGroupTypes(pid);
  const [formError, setFormError] = useState<string | null>(null);
  const [runs, setRuns] = useState(0);
  const names = useEventNamesResult(pid, days, props.env);

  const request: FunnelRequest = {
    steps: shownDraft.steps,
    windowHours: shownDraft.windowHours,
    aggregateBy: shownDraft.aggregateBy || undefined,
    dateFrom: days.from,
    dateTo: days.to,
  };
  const waiting = savedId !== null && savedQuery === null;
  const [result, retry] = useLoad<FunnelResult>(
    waiting ? null : () => (savedQuery ? api.runSaved<FunnelResult>(pid, savedQuery.id, props.env, days) : api.funnel(pid, request, props.env)),
    [pid, savedId ?? JSON.stringify(shownDraft), waiting, days.from, days.to, props.env, runs],
  );

  // The annotations of the range on screen; a saved funnel adds its own
  // (query-scoped) annotations to the workspace's.
  const [annotations] = useChartAnnotations(pid, days.from, days.to, savedQuery ? savedQuery.id : null);

  const validate = (): (FunnelRequest & { steps: string[] }) | null => {
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
    setFormError(null);
    return { steps: clean, windowHours: w, aggregateBy: aggregateBy || undefined };
  };
  const run = (e?: Event) => {
    e?.preventDefault();
    const req = validate();
    if (!req) return;
    setRuns((n) => n + 1);
    setQuery({ saved: null, ...funnelSearch({ steps: req.steps, windowHours: req.windowHours ?? windowLimits.default, aggregateBy: req.aggregateBy ?? "" }) });
  };
  const runSaved = (q: SavedQuery) => {
    setFormError(null);
    setRuns((n) => n + 1);
    setQuery({ saved: String(q.id), ...funnelSearch(null) });
  };

  const setStep = (i: number, v: string) => setSteps((s) => s.map((x, j) => (j === i ? v : x)));
  const move = (i: number, d: -1 | 1) =>
    setSteps((s) => {
      const out = [...s];
      [out[i], out[i + d]] = [out[i + d], out[i]];
      return out;
    });

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
                      onClick={() => setSteps((x) => x.filter((_, j) => j !== i))}
                    >
                      ✕
                    </button>
                  </div>
                </li>
              ))}
            </ol>
            <div class="inline-form">
              <button type="button" class="button secondary" disabled={steps.length >= maxSteps} onClick={() => setSteps((s) => [...s, ""])}>
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
                  <FunnelBars result={shown} busy={result.state === "loading"} counts={shownDraft.aggregateBy || undefined} />
                </>
              )
            ) : null}
          </section>

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
 */
export function FunnelBars(props: { result: FunnelResult; busy?: boolean; counts?: string }) {
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
                  </th>
                  <td class="bar-col">
                    <div class="hbar" aria-hidden="true">
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
