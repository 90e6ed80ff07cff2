import { useEffect, useRef, useState } from "preact/hooks";
import { api, type ExperimentAction } from "../api";
import { ArmsEditor, defaultArms, readArms, type ArmDraft } from "../components/ArmsEditor";
import { EventInput, EventList, useEventNames } from "../components/EventInput";
import { FieldError, errorsFrom, fieldId, focusFirst, invalid, type FieldErrors } from "../components/Fields";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { RowActions, Table } from "../components/Table";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { presetRange } from "../range";
import { useAllows } from "../roles";
import type { Experiment, ExperimentStatus, ExperimentWrite, Flag, Product } from "../types";
import { StatusPill, armsText } from "./Flags";

/** The most secondary metrics an experiment has (docs/flags.md). */
export const maxSecondary = 10;

/** The status changes each status allows, as buttons. */
export const actionsFor: Record<ExperimentStatus, { action: ExperimentAction; label: string }[]> = {
  draft: [{ action: "start", label: "Start" }],
  running: [{ action: "pause", label: "Pause" }],
  paused: [{ action: "resume", label: "Resume" }],
  completed: [],
};

/** metricLabel names an experiment's primary metric for people: empty is the events carrying converted = 1. */
export function metricLabel(event: string): string {
  return event === "" ? "converted = 1" : event;
}

/**
 * Experiments lists the product's experiments (name, flag, status, when
 * it started) with the status changes each allows, and a form to create
 * one. An experiment's own page shows its results.
 */
export function Experiments(props: { product: Product | null }) {
  if (!props.product) return <NoProduct />;
  return <ExperimentList key={props.product.id} product={props.product} />;
}

function ExperimentList(props: { product: Product }) {
  const pid = props.product.id;
  const [creating, setCreating] = useState(false);
  const { busy, notice, setNotice, run } = useAction<number>();
  // Creating an experiment and changing its status need the member role.
  const canWrite = useAllows("member");
  const [list, reload] = useLoad(async () => {
    const [experiments, flags] = await Promise.all([api.experiments(pid), api.flags(pid)]);
    return { experiments: experiments.items, flags: flags.items };
  }, [pid]);
  const shown = list.state === "done" ? list.data : list.state === "loading" ? list.previous : undefined;

  const act = (e: Experiment, action: ExperimentAction, label: string) =>
    run(e.id, async () => {
      const out = await api.experimentAction(pid, e.id, action);
      reload();
      return `${label}: ${out.name} is ${out.status}.`;
    });

  return (
    <section class="page">
      <div class="section-head tight">
        <h1>Experiments</h1>
        {!creating && canWrite ? (
          <button type="button" class="button" onClick={() => setCreating(true)}>
            New experiment
          </button>
        ) : null}
      </div>
      <p class="muted">
        An experiment splits users between the arms of one flag and compares each arm's conversions with control's. Pages report who saw
        which arm with the <code>$exposure</code> event the SDK sends.
      </p>
      {creating ? (
        <section class="card" aria-labelledby="new-experiment">
          <h2 id="new-experiment">New experiment</h2>
          <ExperimentForm
            product={pid}
            flags={shown?.flags ?? []}
            experiments={shown?.experiments ?? []}
            onSaved={(e) => {
              setCreating(false);
              setNotice({ ok: `Created ${e.name}, a draft on the flag ${e.flagKey}. Start it when the pages are ready.` });
              reload();
            }}
            onCancel={() => setCreating(false)}
          />
        </section>
      ) : null}
      <Notice notice={notice} />

      {list.state === "loading" && !shown ? <Skeleton rows={4} label="Loading experiments…" /> : null}
      {list.state === "failed" ? <ErrorState message={list.error} onRetry={reload} /> : null}
      {shown && shown.experiments.length === 0 ? (
        <div class="empty-state" data-testid="no-experiments">
          <p>No experiments yet.</p>
          <p class="muted">Create one to test a change against control: it makes its flag, or uses one with 2 to 4 arms.</p>
        </div>
      ) : null}
      {shown && shown.experiments.length > 0 ? (
        <Table
          label="Experiments"
          actions
          head={
            <>
              <th scope="col">Name</th>
              <th scope="col">Flag</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
            </>
          }
        >
          {/* The API lists the oldest first; the newest is what people look for. */}
          {[...shown.experiments].reverse().map((e) => (
            <tr key={e.id} data-testid="experiment-row">
              <td>
                <Link href={`/experiments/${e.id}?product=${pid}`}>{e.name}</Link>
              </td>
              <td>
                <Link href={`/flags/${e.flagId}?product=${pid}`}>
                  <code>{e.flagKey}</code>
                </Link>
              </td>
              <td>
                <StatusPill experiment={e} />
                {e.status === "completed" && e.winner ? <span class="hint"> · {e.winner} won</span> : null}
              </td>
              <td>{when(e.startedAt, "Not started")}</td>
              <RowActions>
                {(canWrite ? actionsFor[e.status] : []).map((a) => (
                  <button
                    key={a.action}
                    type="button"
                    class="button secondary small"
                    aria-label={`${a.label} ${e.name}`}
                    disabled={busy === e.id}
                    onClick={() => void act(e, a.action, a.label)}
                  >
                    {a.label}
                  </button>
                ))}
                <Link class="button secondary small" href={`/experiments/${e.id}?product=${pid}`}>
                  Results<span class="visually-hidden"> of {e.name}</span>
                </Link>
              </RowActions>
            </tr>
          ))}
        </Table>
      ) : null}
    </section>
  );
}

/** day is the YYYY-MM-DD of an experiment's date, or "". */
function day(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : "";
}

/**
 * ExperimentForm creates an experiment, or changes one. A new one gets a
 * new flag made from its name with the arms typed here (control and
 * treatment at 50/50 to start with), or uses an existing flag with 2 to 4
 * arms. Then: the holdout (0–25 %), the primary metric (empty: the events
 * carrying converted = 1), up to 10 secondary metrics and optional start
 * and end dates. An experiment's flag and arms never change here: arms
 * change on the flag.
 */
export function ExperimentForm(props: {
  product: number;
  experiment?: Experiment;
  /** The product's flags, for a new experiment on an existing one. */
  flags: Flag[];
  experiments?: Experiment[];
  onSaved: (e: Experiment) => void;
  onCancel?: () => void;
}) {
  const x = props.experiment;
  const prefix = x ? `experiment-${x.id}` : "experiment-new";
  const [name, setName] = useState(x?.name ?? "");
  const [flagChoice, setFlagChoice] = useState("");
  const [arms, setArms] = useState<ArmDraft[]>(defaultArms);
  const [holdout, setHoldout] = useState(String(x?.holdout ?? 0));
  const [primary, setPrimary] = useState(x?.primaryEvent ?? "");
  const [secondary, setSecondary] = useState<string[]>(x?.secondaryEvents ?? []);
  const [startDate, setStartDate] = useState(day(x?.startDate));
  const [endDate, setEndDate] = useState(day(x?.endDate));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => focusFirst(form.current, errors, prefix), [errors]);
  const names = useEventNames(props.product, presetRange("30d"));
  const listId = `${prefix}-events`;

  // Flags that can carry a new experiment: 2 to 4 arms, and no experiment
  // that is not completed.
  const busyFlags = new Set((props.experiments ?? []).filter((e) => e.status !== "completed").map((e) => e.flagId));
  const candidates = props.flags.filter((f) => f.variants.length >= 2);
  const newFlag = !x && flagChoice === "";
  const current = x ? props.flags.find((f) => f.id === x.flagId) : undefined;
  // Secondary metrics are sent without the empty rows: the API's index
  // k is the k-th row that is filled in.
  const filled = secondary.map((s, i) => ({ s: s.trim(), i })).filter((r) => r.s !== "");

  const has = (field: string) => {
    const arm = /^variants\[(\d+)\]\./.exec(field);
    if (arm) return newFlag && Number(arm[1]) < arms.length;
    if (field === "variants") return newFlag;
    if (/^secondaryEvents\[\d+\]$/.test(field)) return true;
    return ["name", "flagId", "holdout", "primaryEvent", "secondaryEvents", "startDate", "endDate"].includes(field);
  };
  // The API's secondaryEvents[k] is the row of the k-th filled-in metric.
  const rowField = (field: string) => {
    const m = /^secondaryEvents\[(\d+)\]$/.exec(field);
    return m && filled[Number(m[1])] ? `secondaryEvents[${filled[Number(m[1])].i}]` : field;
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const errs: FieldErrors = {};
    const h = holdout.trim() === "" ? Number.NaN : Number(holdout);
    if (!Number.isFinite(h)) errs.holdout = "Enter a percentage from 0 to 25.";
    const read = newFlag ? readArms(arms) : { variants: [], errors: {} };
    Object.assign(errs, read.errors);
    if (Object.keys(errs).length > 0) return setErrors(errs);
    const body: ExperimentWrite = {
      name,
      holdout: h,
      primaryEvent: primary.trim(),
      secondaryEvents: filled.map((r) => r.s),
    };
    if (x) {
      body.startDate = startDate;
      body.endDate = endDate;
    } else {
      if (startDate) body.startDate = startDate;
      if (endDate) body.endDate = endDate;
      if (newFlag) body.variants = read.variants.map(({ key, weight }) => ({ key, weight }));
      else body.flagId = Number(flagChoice);
    }
    setBusy(true);
    setErrors({});
    try {
      const out = x ? await api.updateExperiment(props.product, x.id, body) : await api.createExperiment(props.product, body);
      props.onSaved(out);
    } catch (err) {
      const placed = errorsFrom(err, has, { experiment_exists: "flagId", experiment_running: "holdout", flag_key_taken: "name" });
      setErrors(Object.fromEntries(Object.entries(placed).map(([k, v]) => [rowField(k), v])));
    } finally {
      setBusy(false);
    }
  };

  const id = (field: string) => fieldId(prefix, field);
  return (
    <form class="experiment-form stack-form" ref={form} onSubmit={submit} aria-label={x ? `Change ${x.name}` : "New experiment"} noValidate>
      <EventList id={listId} names={names} />
      <div class="form-row">
        <div class="field grow">
          <label>
            Name
            <input id={id("name")} name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} {...invalid(errors, prefix, "name")} />
          </label>
          <FieldError errors={errors} prefix={prefix} field="name" />
        </div>
        <div class="field grow">
          <label>
            Flag
            <select
              id={id("flagId")}
              name="flagId"
              value={x ? String(x.flagId) : flagChoice}
              disabled={!!x}
              onChange={(e) => setFlagChoice(e.currentTarget.value)}
              {...invalid(errors, prefix, "flagId")}
            >
              {x ? <option value={String(x.flagId)}>{x.flagKey}</option> : <option value="">A new flag, its key made from the name</option>}
              {!x
                ? candidates.map((f) => (
                    <option key={f.id} value={String(f.id)} disabled={busyFlags.has(f.id)}>
                      {f.key} ({armsText(f.variants)}){busyFlags.has(f.id) ? " · has an experiment" : ""}
                    </option>
                  ))
                : null}
            </select>
          </label>
          <FieldError errors={errors} prefix={prefix} field="flagId" />
        </div>
      </div>
      {newFlag ? (
        <ArmsEditor arms={arms} onChange={setArms} errors={errors} prefix={prefix} />
      ) : (
        <p class="hint" data-testid="experiment-arms">
          Arms: {armsText((x ? current : props.flags.find((f) => String(f.id) === flagChoice))?.variants ?? [])}. They change on the flag
          {x ? (
            <>
              {" "}
              (<Link href={`/flags/${x.flagId}?product=${props.product}`}>{x.flagKey}</Link>)
            </>
          ) : null}
          , while the experiment is not running.
        </p>
      )}
      <div class="form-row">
        <div class="field">
          <label>
            Holdout (%)
            <input
              id={id("holdout")}
              name="holdout"
              type="number"
              min={0}
              max={25}
              step={0.01}
              value={holdout}
              disabled={x?.status === "running"}
              aria-describedby={`${id("holdout")}-hint`}
              onInput={(e) => setHoldout(e.currentTarget.value)}
              {...invalid(errors, prefix, "holdout")}
            />
          </label>
          <p class="hint" id={`${id("holdout")}-hint`}>
            {x?.status === "running"
              ? "Locked while the experiment runs: pause it to change the holdout."
              : "0 to 25: users kept out see control and count for no arm."}
          </p>
          <FieldError errors={errors} prefix={prefix} field="holdout" />
        </div>
        <div class="field grow">
          <label>
            Primary metric
            <EventInput
              id={id("primaryEvent")}
              name="primaryEvent"
              label="Primary metric"
              list={listId}
              value={primary}
              placeholder="converted = 1"
              describedBy={errors.primaryEvent ? `${id("primaryEvent")}-error` : `${id("primaryEvent")}-hint`}
              invalid={!!errors.primaryEvent}
              onChange={setPrimary}
            />
          </label>
          <p class="hint" id={`${id("primaryEvent")}-hint`}>
            The conversion event. Empty: the events that carry the property <code>converted = 1</code>.
          </p>
          <FieldError errors={errors} prefix={prefix} field="primaryEvent" />
        </div>
      </div>
      <fieldset>
        <legend>Secondary metrics</legend>
        {secondary.length === 0 ? <p class="hint">None. Each one is compared between the arms like the primary metric.</p> : null}
        <ul class="rows">
          {secondary.map((s, i) => (
            <li key={i} class="row">
              <EventInput
                id={id(`secondaryEvents[${i}]`)}
                label={`Secondary metric ${i + 1}`}
                list={listId}
                value={s}
                invalid={!!errors[`secondaryEvents[${i}]`]}
                describedBy={errors[`secondaryEvents[${i}]`] ? `${id(`secondaryEvents[${i}]`)}-error` : undefined}
                onChange={(v) => setSecondary((list) => list.map((y, j) => (j === i ? v : y)))}
              />
              <button
                type="button"
                class="icon-button"
                aria-label={`Remove secondary metric ${i + 1}`}
                onClick={() => setSecondary((list) => list.filter((_, j) => j !== i))}
              >
                ✕
              </button>
              <FieldError errors={errors} prefix={prefix} field={`secondaryEvents[${i}]`} />
            </li>
          ))}
        </ul>
        <button
          type="button"
          class="button secondary small"
          disabled={secondary.length >= maxSecondary}
          onClick={() => setSecondary((list) => [...list, ""])}
        >
          Add secondary metric
        </button>
        <FieldError errors={errors} prefix={prefix} field="secondaryEvents" />
      </fieldset>
      <div class="form-row">
        <div class="field">
          <label>
            Start date (optional)
            <input id={id("startDate")} name="startDate" type="date" value={startDate} onInput={(e) => setStartDate(e.currentTarget.value)} {...invalid(errors, prefix, "startDate")} />
          </label>
          <FieldError errors={errors} prefix={prefix} field="startDate" />
        </div>
        <div class="field">
          <label>
            End date (optional)
            <input id={id("endDate")} name="endDate" type="date" value={endDate} onInput={(e) => setEndDate(e.currentTarget.value)} {...invalid(errors, prefix, "endDate")} />
          </label>
          <FieldError errors={errors} prefix={prefix} field="endDate" />
        </div>
      </div>
      <p class="hint">Results count from the start date (else the day it starts) to the end of the end date (else now), in UTC days.</p>
      {errors[""] ? (
        <p class="form-error" role="alert">
          {errors[""]}
        </p>
      ) : null}
      <div class="dialog-actions">
        {props.onCancel ? (
          <button type="button" class="button secondary" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
        <button type="submit" class="button" disabled={busy}>
          {x ? "Save changes" : "Create experiment"}
        </button>
      </div>
    </form>
  );
}
