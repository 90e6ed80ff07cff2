import { useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { AnnotationStrip, useChartAnnotations } from "../components/ChartAnnotations";
import { CountSelect, useGroupTypes } from "../components/CountSelect";
import { EventInput, EventList, useEventNames } from "../components/EventInput";
import { SaveQueryForm, SavedList, useQuerySource, useSavedQueries } from "../components/SavedList";
import { ErrorState, NoEvents, NoProduct, Skeleton } from "../components/States";
import { useLoad } from "../load";
import { describe as describeRange, presetRange, type DateRange } from "../range";
import { funnelSteps, placeholderSteps, windowHours as windowLimits } from "../limits.gen";
import type { DataEnv, FunnelRequest, FunnelResult, Product, SavedQuery } from "../types";

export const maxSteps = funnelSteps.max;

/** What the result on screen came from: the builder over the picked range, or a saved funnel. */

/** funnelDefinition reads a saved funnel's steps, window and what it counts. */
function funnelDefinition(q: SavedQuery): { steps: string[]; windowHours: number; aggregateBy: string } {
  const d = (q.definition ?? {}) as { steps?: string[]; windowHours?: number; aggregateBy?: string | null };
  return { steps: d.steps ?? [...placeholderSteps], windowHours: d.windowHours ?? windowLimits.default, aggregateBy: d.aggregateBy ?? "" };
}

/**
 * Funnels builds a funnel (steps with suggestions from the product's event
 * names, add/remove/reorder, window), runs it over the picked range, draws
 * the steps as horizontal bars with counts and conversion, and keeps saved
 * funnels to run again. A timeline strip above the bars marks the range's
 * annotations (a saved funnel's own included). env picks live data or the
 * events of test keys.
 */
export function Funnels(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <FunnelBuilder key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function FunnelBuilder(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const days = { from: props.range.from, to: props.range.to };
  const [steps, setSteps] = useState<string[]>([...placeholderSteps]);
  const [windowHours, setWindowHours] = useState(String(windowLimits.default));
  const [aggregateBy, setAggregateBy] = useState("");
  const groupTypes = useGroupTypes(pid);
  const [formError, setFormError] = useState<string | null>(null);
  const { source, runBuilder, showSaved } = useQuerySource<FunnelRequest>({ steps: [...placeholderSteps], windowHours: windowLimits.default }, days);
  const names = useEventNames(pid, days, props.env);

  const { saved, setSaved, savedError } = useSavedQueries(pid, "funnel");

  const [result, retry] = useLoad<FunnelResult>(
    () => (source.kind === "builder" ? api.funnel(pid, source.request, props.env) : api.runSaved<FunnelResult>(pid, source.query.id, props.env)),
    [pid, source.seq, source.kind, props.env],
  );

  // The annotations of the range the result on screen covers: the builder's
  // dates, or the last 30 days a saved funnel runs over; a saved funnel adds
  // its own (query-scoped) annotations to the workspace's.
  const span =
    source.kind === "builder" ? { from: source.request.dateFrom ?? days.from, to: source.request.dateTo ?? days.to } : presetRange("30d");
  const [annotations] = useChartAnnotations(pid, span.from, span.to, source.kind === "saved" ? source.query.id : null);

  const validate = (): FunnelRequest | null => {
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
    if (req) runBuilder(req);
  };
  const runSaved = (q: SavedQuery) => {
    const d = funnelDefinition(q);
    setSteps(d.steps);
    setWindowHours(String(d.windowHours));
    setAggregateBy(d.aggregateBy);
    setFormError(null);
    showSaved(q);
  };

  const setStep = (i: number, v: string) => setSteps((s) => s.map((x, j) => (j === i ? v : x)));
  const move = (i: number, d: -1 | 1) =>
    setSteps((s) => {
      const out = [...s];
      [out[i], out[i + d]] = [out[i + d], out[i]];
      return out;
    });

  const shown = result.state === "done" ? result.data : result.state === "loading" ? result.previous : undefined;
  const noEvents = names !== null && names.length === 0;
  return (
    <section class="page">
      <h1>Funnels</h1>
      <div class="two-col">
        <div class="col-main">
          <form class="card builder" onSubmit={run} aria-label="Funnel builder">
            <EventList id="funnel-events" names={names} />
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
              {source.kind === "saved" ? source.query.name : "Result"}
              <span class="hint heading-hint">
                {source.kind === "saved" ? "Saved funnel · last 30 days" : describeRange(props.range)}
              </span>
            </h2>
            {result.state === "failed" ? <ErrorState message={result.error} onRetry={retry} /> : null}
            {result.state === "loading" && !shown ? <Skeleton rows={3} label="Running the funnel…" /> : null}
            {shown ? (
              noEvents && shown.steps.every((s) => s.count === 0) ? (
                <NoEvents product={props.product} env={props.env} />
              ) : (
                <>
                  <AnnotationStrip from={span.from} to={span.to} annotations={annotations} />
                  <FunnelBars
                    result={shown}
                    busy={result.state === "loading"}
                    counts={(source.kind === "builder" ? source.request.aggregateBy : funnelDefinition(source.query).aggregateBy) || undefined}
                  />
                </>
              )
            ) : null}
          </section>

          <SaveQueryForm
            product={pid}
            kind="funnel"
            // Saved without dates: a saved funnel runs over the last 30 days as of each run.
            build={validate}
            onSaved={(q) => {
              setSaved((list) => [q, ...(list ?? [])]);
              showSaved(q);
            }}
          />
        </div>
        <aside class="col-side">
          <SavedList
            product={pid}
            items={saved}
            error={savedError}
            current={source.kind === "saved" ? source.query.id : null}
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
        Overall conversion: <strong>{first ? Math.round((last.count / first) * 1000) / 10 : 0}%</strong> of {num(first)} users.
      </p>
    </div>
  );
}
