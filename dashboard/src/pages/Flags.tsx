import { useEffect, useRef, useState } from "preact/hooks";
import { api, message } from "../api";
import { conditionDraft, conditionErrors, conditionOf, newCondition, traitOps, type ConditionDraft } from "../campaign";
import { ArmsEditor, armDrafts, readArms, type ArmDraft } from "../components/ArmsEditor";
import { CohortFields, ConditionKind } from "../components/ConditionFields";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { useCohortOptions, type CohortOption } from "../components/FilterEditor";
import { FieldError, errorsFrom, fieldId, focusFirst, invalid, type FieldErrors } from "../components/Fields";
import { Crumb } from "../components/ItemHead";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { RowActions, Table } from "../components/Table";
import { capitalise, when } from "../format";
import { useAction, useLoad } from "../load";
import { navigate } from "../router";
import type { Experiment, Flag, FlagChange, FlagCondition, FlagVariant, FlagWrite, Product, TraitOp } from "../types";
import { useAllows } from "../roles";

/** The fields of the flag form, by API path; arms are variants[i].key, conditions conditions[i].trait, conditions[i].cohortId and so on. */
const flagFields = ["name", "key", "description", "enabled", "rollout", "variants", "conditions"];

/** The most targeting conditions a flag may have (analytics.MaxFlagConditions). */
export const maxConditions = 20;

/**
 * conditionText writes one condition as "plan equals pro", "beta is set",
 * or `in cohort "Paying"` with the cohort's name from cohorts (`not in
 * cohort #7` when they do not have it).
 */
export function conditionText(c: FlagCondition, cohorts: readonly CohortOption[] = []): string {
  if (c.type === "cohort") {
    const name = cohorts.find((x) => x.id === c.cohortId)?.name;
    return `${c.op === "not_in" ? "not in" : "in"} cohort ${name === undefined ? `#${c.cohortId}` : `"${name}"`}`;
  }
  const label = traitOps.find((o) => o.op === c.op)?.label ?? c.op;
  return c.op === "exists" ? `${c.trait} ${label}` : `${c.trait} ${label} ${c.value}`;
}

/** conditionsText writes a flag's targeting as "plan equals pro · seats greater than 10", or "Everyone"; cohorts name its cohorts. */
export function conditionsText(conditions: readonly FlagCondition[] | undefined, cohorts: readonly CohortOption[] = []): string {
  return !conditions || conditions.length === 0 ? "Everyone" : conditions.map((c) => conditionText(c, cohorts)).join(" · ");
}

/** slug is the key the server makes from a name when none is given (analytics.Slug). */
export function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 64)
    .replace(/_+$/, "");
}

/** armsText writes a flag's arms as "control 50% · treatment 50%", or "On/off". */
export function armsText(variants: FlagVariant[]): string {
  return variants.length === 0 ? "On/off" : variants.map((v) => `${v.key} ${v.weight}%`).join(" · ");
}

/**
 * openExperiment is the experiment a flag's configuration names: its open
 * one (not completed), else its latest completed one (docs/flags.md).
 */
export function openExperiment(list: Experiment[], flagId: number): Experiment | undefined {
  const mine = list.filter((e) => e.flagId === flagId);
  return mine.find((e) => e.status !== "completed") ?? mine[mine.length - 1];
}

/** StatusPill is an experiment's status, with why it was paused. */
export function StatusPill(props: { experiment: Pick<Experiment, "status" | "pauseReason"> }) {
  const { status, pauseReason } = props.experiment;
  const why = status === "paused" && pauseReason === "sample_ratio_mismatch" ? " (sample ratio)" : "";
  return (
    <span class={`status status-${status}`} data-testid="experiment-status">
      {capitalise(status)}
      {why}
    </span>
  );
}

/**
 * Flags lists the product's feature flags (key, name, an on/off switch,
 * rollout, arms and the flag's experiment), with a form to create one and
 * a delete that asks first. A flag's own page edits it and shows its audit
 * trail.
 */
export function Flags(props: { product: Product | null }) {
  if (!props.product) return <NoProduct />;
  return <FlagList key={props.product.id} product={props.product} />;
}

function FlagList(props: { product: Product }) {
  const canWrite = useAllows("member");
  const canDelete = useAllows("admin");
  const pid = props.product.id;
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Flag | null>(null);
  const { busy, notice, setNotice, run } = useAction<number>();
  const [list, reload] = useLoad(async () => {
    const [flags, experiments] = await Promise.all([api.flags(pid), api.experiments(pid)]);
    return { flags: flags.items, experiments: experiments.items };
  }, [pid]);
  const shown = list.state === "done" ? list.data : list.state === "loading" ? list.previous : undefined;
  // The product's cohorts, for the names of cohort conditions and the form's picker.
  const cohorts = useCohortOptions(pid);

  const toggle = (f: Flag) =>
    run(f.id, async () => {
      const out = await api.updateFlag(pid, f.id, { enabled: !f.enabled });
      reload();
      return `${out.key} is ${out.enabled ? "on" : "off"}.`;
    });
  const remove = async () => {
    if (!deleting) return;
    await run(deleting.id, async () => {
      await api.deleteFlag(pid, deleting.id);
      reload();
      return `Deleted ${deleting.key}. Its audit trail is kept.`;
    });
    setDeleting(null);
  };

  return (
    <section class="page">
      <div class="section-head tight">
        <h1>Flags</h1>
        {!creating && canWrite ? (
          <button type="button" class="button" onClick={() => setCreating(true)}>
            New flag
          </button>
        ) : null}
      </div>
      <p class="muted">
        Feature flags turn code on for a share of users, or split them between arms. The SDK reads them from <code>/api/v1/config</code> and
        asks with <code>getVariant("key")</code>; changes reach every page within a minute.
      </p>
      {creating ? (
        <section class="card" aria-labelledby="new-flag">
          <h2 id="new-flag">New flag</h2>
          <FlagForm
            product={pid}
            cohorts={cohorts}
            onSaved={(f) => {
              setCreating(false);
              setNotice({ ok: `Created ${f.key}.` });
              reload();
            }}
            onCancel={() => setCreating(false)}
          />
        </section>
      ) : null}
      <Notice notice={notice} />

      {list.state === "loading" && !shown ? <Skeleton rows={4} label="Loading flags…" /> : null}
      {list.state === "failed" ? <ErrorState message={list.error} onRetry={reload} /> : null}
      {shown && shown.flags.length === 0 ? (
        <div class="empty-state" data-testid="no-flags">
          <p>No flags yet.</p>
          <p class="muted">Create one to roll a feature out step by step, or to split users between arms for an experiment.</p>
        </div>
      ) : null}
      {shown && shown.flags.length > 0 ? (
        <Table
          label="Flags"
          actions
          head={
            <>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Enabled</th>
              <th scope="col" class="num">
                Rollout
              </th>
              <th scope="col">Arms</th>
              <th scope="col">Targeting</th>
              <th scope="col">Experiment</th>
            </>
          }
        >
          {shown.flags.map((f) => {
            const exp = openExperiment(shown.experiments, f.id);
            return (
              <tr key={f.id} data-testid="flag-row">
                <td>
                  <Link href={`/flags/${f.id}?product=${pid}`}>
                    <code>{f.key}</code>
                  </Link>
                </td>
                <td>{f.name}</td>
                <td>
                  <label class="toggle">
                    <input
                      type="checkbox"
                      role="switch"
                      aria-label={`Enabled: ${f.key}`}
                      checked={f.enabled}
                      disabled={busy === f.id || !canWrite}
                      title={canWrite ? undefined : "Needs the member role"}
                      onChange={() => void toggle(f)}
                    />
                    <span aria-hidden="true">{f.enabled ? "On" : "Off"}</span>
                  </label>
                </td>
                <td class="num">{f.rollout}%</td>
                <td class="arms-cell">{armsText(f.variants)}</td>
                <td class="arms-cell" data-testid="flag-targeting">
                  {conditionsText(f.conditions, cohorts)}
                </td>
                <td>
                  {exp ? (
                    <Link href={`/experiments/${exp.id}?product=${pid}`}>
                      <StatusPill experiment={exp} />
                    </Link>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
                <RowActions>
                  <Link class="button secondary small" href={`/flags/${f.id}?product=${pid}`}>
                    Edit<span class="visually-hidden"> {f.key}</span>
                  </Link>
                  {canDelete ? (
                    <button
                      type="button"
                      class="button danger small"
                      aria-label={`Delete ${f.key}`}
                      disabled={busy === f.id}
                      onClick={() => setDeleting(f)}
                    >
                      Delete
                    </button>
                  ) : null}
                </RowActions>
              </tr>
            );
          })}
        </Table>
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete ${deleting.key}?`}
          confirmLabel="Delete flag"
          busy={busy !== null}
          onConfirm={remove}
          onCancel={() => setDeleting(null)}
        >
          <p>
            Every SDK then answers <code>control</code> for <code>{deleting.key}</code>. The audit trail is kept. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/**
 * FlagPage is one flag: the form to change it, its experiment, a delete
 * that asks first, and its audit trail (who, when, each field before and
 * after), newest first.
 */
export function FlagPage(props: { product: Product | null; id: number }) {
  if (!props.product) return <NoProduct />;
  return <FlagView key={`${props.product.id}/${props.id}`} product={props.product} id={props.id} />;
}

function FlagView(props: { product: Product; id: number }) {
  const pid = props.product.id;
  const [flag, reloadFlag] = useLoad(async () => {
    const [f, experiments] = await Promise.all([api.flag(pid, props.id), api.experiments(pid)]);
    return { flag: f, experiment: openExperiment(experiments.items, f.id) };
  }, [pid, props.id]);
  const [trail, reloadTrail] = useLoad(() => api.flagChanges(pid, props.id), [pid, props.id]);
  const cohorts = useCohortOptions(pid);
  const [saved, setSaved] = useState<Flag | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Changing the flag needs the member role, deleting it the admin role.
  const canWrite = useAllows("member");
  const canDelete = useAllows("admin");
  const list = `/flags?product=${pid}`;

  const remove = async () => {
    setBusy(true);
    try {
      await api.deleteFlag(pid, props.id);
      navigate(list);
    } catch (err) {
      setError(message(err));
      setDeleting(false);
    } finally {
      setBusy(false);
    }
  };

  if (flag.state === "loading") return <Skeleton rows={6} label="Loading the flag…" />;
  if (flag.state === "failed") {
    return (
      <section class="page">
        <Crumb href={list}>Flags</Crumb>
        <ErrorState message={flag.error} onRetry={reloadFlag} />
      </section>
    );
  }
  if (flag.state !== "done") return null;
  const f = saved ?? flag.data.flag;
  const exp = flag.data.experiment;
  return (
    <section class="page">
      <Crumb href={list}>Flags</Crumb>
      <div class="section-head tight">
        <h1>{f.name}</h1>
        {canDelete ? (
          <button type="button" class="button danger" onClick={() => setDeleting(true)}>
            Delete flag
          </button>
        ) : null}
      </div>
      <p class="muted">
        Key <code>{f.key}</code> · created {when(f.createdAt)} · changed {when(f.updatedAt)}
      </p>
      {exp ? (
        <p class={exp.status === "running" ? "notice" : "muted"} data-testid="flag-experiment">
          Experiment <Link href={`/experiments/${exp.id}?product=${pid}`}>{exp.name}</Link> is <StatusPill experiment={exp} />
          {exp.status === "running" ? ": its arms and weights cannot change until it is paused." : "."}
        </p>
      ) : null}
      {error ? <ErrorState message={error} /> : null}

      <section class="card" aria-labelledby="edit-flag">
        <h2 id="edit-flag">Settings</h2>
        <FlagForm
          product={pid}
          flag={f}
          cohorts={cohorts}
          readOnly={!canWrite}
          onSaved={(out) => {
            setSaved(out);
            reloadTrail();
          }}
        />
      </section>

      <section class="card" aria-labelledby="audit-trail">
        <h2 id="audit-trail">Audit trail</h2>
        {trail.state === "loading" ? <Skeleton rows={3} label="Loading the audit trail…" /> : null}
        {trail.state === "failed" ? <ErrorState message={trail.error} onRetry={reloadTrail} /> : null}
        {trail.state === "done" ? <AuditTrail changes={trail.data.items} cohorts={cohorts} /> : null}
      </section>

      {deleting ? (
        <ConfirmDialog title={`Delete ${f.key}?`} confirmLabel="Delete flag" busy={busy} onConfirm={remove} onCancel={() => setDeleting(false)}>
          <p>
            Every SDK then answers <code>control</code> for <code>{f.key}</code>. The audit trail is kept. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/**
 * FlagForm creates a flag, or changes one: name (the key is made from it
 * when left empty, and never changes afterwards), description, enabled,
 * rollout, arms with optional JSON payloads, checked as JSON before
 * anything is sent, and targeting conditions on properties or on cohorts
 * (picked from cohorts, the product's). The server's refusals show next to
 * their field.
 */
export function FlagForm(props: {
  product: number;
  flag?: Flag;
  cohorts: CohortOption[];
  readOnly?: boolean;
  onSaved: (f: Flag) => void;
  onCancel?: () => void;
}) {
  const f = props.flag;
  const prefix = f ? `flag-${f.id}` : "flag-new";
  const [name, setName] = useState(f?.name ?? "");
  const [key, setKey] = useState(f?.key ?? "");
  const [description, setDescription] = useState(f?.description ?? "");
  const [enabled, setEnabled] = useState(f?.enabled ?? false);
  const [rollout, setRollout] = useState(String(f?.rollout ?? 100));
  const [arms, setArms] = useState<ArmDraft[]>(armDrafts(f?.variants ?? []));
  const [conditions, setConditions] = useState<ConditionDraft[]>((f?.conditions ?? []).map(conditionDraft));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => focusFirst(form.current, errors, prefix), [errors]);

  const has = (field: string) => {
    const m = /^variants\[(\d+)\]\./.exec(field);
    if (m) return Number(m[1]) < arms.length;
    const c = /^conditions\[(\d+)\]\.(type|trait|op|value|cohortId)$/.exec(field);
    if (c) return Number(c[1]) < conditions.length;
    return flagFields.includes(field);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const read = readArms(arms);
    const errs: FieldErrors = { ...read.errors, ...conditionErrors(conditions, "conditions") };
    const r = rollout.trim() === "" ? Number.NaN : Number(rollout);
    if (!Number.isFinite(r)) errs.rollout = "Enter a percentage from 0 to 100.";
    if (Object.keys(errs).length > 0) return setErrors(errs);
    const body: FlagWrite = {
      name,
      description,
      enabled,
      rollout: r,
      variants: read.variants,
      conditions: conditions.map((c) => (c.kind === "cohort" ? conditionOf(c) : { type: "trait", ...conditionOf(c) })),
    };
    if (!f && key.trim() !== "") body.key = key.trim();
    setBusy(true);
    setErrors({});
    try {
      const out = f ? await api.updateFlag(props.product, f.id, body) : await api.createFlag(props.product, body);
      setSaved(true);
      props.onSaved(out);
    } catch (err) {
      setErrors(errorsFrom(err, has, { flag_key_taken: "key", experiment_running: "variants" }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="flag-form stack-form" ref={form} onSubmit={submit} aria-label={f ? `Change ${f.key}` : "New flag"} noValidate>
      {/* Read-only (a viewer), a disabled fieldset disables every field and button inside at once. */}
      <fieldset class="contents" disabled={props.readOnly}>
        <div class="form-row">
          <div class="field grow">
            <label>
              Name
              <input id={fieldId(prefix, "name")} name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} {...invalid(errors, prefix, "name")} />
            </label>
            <FieldError errors={errors} prefix={prefix} field="name" />
          </div>
          <div class="field grow">
            <label>
              Key
              <input
                id={fieldId(prefix, "key")}
                name="key"
                value={key}
                readOnly={!!f}
                autocomplete="off"
                spellcheck={false}
                placeholder={slug(name) || "made from the name"}
                aria-describedby={`${fieldId(prefix, "key")}-hint`}
                onInput={(e) => setKey(e.currentTarget.value)}
                {...invalid(errors, prefix, "key")}
              />
            </label>
            <p class="hint" id={`${fieldId(prefix, "key")}-hint`}>
              {f ? "Code asks for the flag by its key, so it never changes." : "What code asks for. Left empty, it is made from the name."}
            </p>
            <FieldError errors={errors} prefix={prefix} field="key" />
          </div>
        </div>
        <div class="field">
          <label>
            Description (optional)
            <textarea
              id={fieldId(prefix, "description")}
              name="description"
              rows={2}
              value={description}
              onInput={(e) => setDescription(e.currentTarget.value)}
              {...invalid(errors, prefix, "description")}
            />
          </label>
          <FieldError errors={errors} prefix={prefix} field="description" />
        </div>
        <div class="form-row">
          <div class="field">
            <label class="checkbox">
              <input id={fieldId(prefix, "enabled")} type="checkbox" name="enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
              Enabled
            </label>
            <p class="hint">Off, every user gets <code>control</code>.</p>
            <FieldError errors={errors} prefix={prefix} field="enabled" />
          </div>
          <div class="field">
            <label>
              Rollout (%)
              <input
                id={fieldId(prefix, "rollout")}
                name="rollout"
                type="number"
                min={0}
                max={100}
                step={0.01}
                value={rollout}
                onInput={(e) => setRollout(e.currentTarget.value)}
                {...invalid(errors, prefix, "rollout")}
              />
            </label>
            <p class="hint">0 to 100, two decimals at most.</p>
            <FieldError errors={errors} prefix={prefix} field="rollout" />
          </div>
        </div>
        <ArmsEditor arms={arms} onChange={setArms} errors={errors} prefix={prefix} payloads allowNone />
        <ConditionsEditor conditions={conditions} onChange={setConditions} errors={errors} prefix={prefix} product={props.product} cohorts={props.cohorts} />
        {errors[""] ? (
          <p class="form-error" role="alert">
            {errors[""]}
          </p>
        ) : null}
        <div class="dialog-actions">
          {saved && f ? (
            <span class="ok" role="status">
              Saved.
            </span>
          ) : null}
          {props.onCancel ? (
            <button type="button" class="button secondary" onClick={props.onCancel}>
              Cancel
            </button>
          ) : null}
          {props.readOnly ? null : (
            <button type="submit" class="button" disabled={busy}>
              {f ? "Save changes" : "Create flag"}
            </button>
          )}
        </div>
      </fieldset>
    </form>
  );
}

/**
 * ConditionsEditor edits a flag's targeting conditions (docs/flags.md,
 * "Targeting"), as a message audience's: rows added and removed, each of
 * property, operator and value ("is set" takes no value), or "In cohort" /
 * "Not in cohort" and one of the product's cohorts.
 */
function ConditionsEditor(props: {
  conditions: ConditionDraft[];
  onChange: (c: ConditionDraft[]) => void;
  errors: FieldErrors;
  prefix: string;
  product: number;
  cohorts: CohortOption[];
}) {
  const { conditions, onChange, errors, prefix } = props;
  const set = (i: number, part: Partial<ConditionDraft>) => onChange(conditions.map((x, j) => (j === i ? { ...x, ...part } : x)));
  return (
    <fieldset class="flag-conditions" data-testid="flag-conditions">
      <legend>Targeting (all must hold)</legend>
      <p class="hint">
        Conditions on user properties: the traits passed to <code>identify</code> in the browser, the properties passed to <code>getVariant</code> on a
        server; or on membership of one of the product's cohorts. A user who fails one gets <code>control</code> and is left out of the experiment.
      </p>
      {conditions.length === 0 ? <p class="hint">No conditions: every user.</p> : null}
      <ol class="rows">
        {conditions.map((x, i) => {
          const row = { i, path: `conditions[${i}]`, condition: x, errors, prefix, onChange: (part: Partial<ConditionDraft>) => set(i, part) };
          return (
            <li key={i} class="row condition-row" data-testid="flag-condition-row">
              <ConditionKind {...row} />
              {x.kind === "cohort" ? (
                <CohortFields {...row} product={props.product} cohorts={props.cohorts} />
              ) : (
                <>
                  <input
                    id={fieldId(prefix, `conditions[${i}].trait`)}
                    aria-label={`Condition ${i + 1} property`}
                    placeholder="plan"
                    autocomplete="off"
                    spellcheck={false}
                    value={x.trait}
                    onInput={(e) => set(i, { trait: e.currentTarget.value })}
                    {...invalid(errors, prefix, `conditions[${i}].trait`)}
                  />
                  <select
                    id={fieldId(prefix, `conditions[${i}].op`)}
                    aria-label={`Condition ${i + 1} operator`}
                    value={x.op}
                    onChange={(e) => set(i, { op: e.currentTarget.value as TraitOp })}
                    {...invalid(errors, prefix, `conditions[${i}].op`)}
                  >
                    {traitOps.map((o) => (
                      <option key={o.op} value={o.op}>
                        {o.label}
                      </option>
                    ))}
                  </select>
                  {x.op !== "exists" ? (
                    <input
                      id={fieldId(prefix, `conditions[${i}].value`)}
                      aria-label={`Condition ${i + 1} value`}
                      placeholder={x.op === "gt" || x.op === "lt" ? "10" : "pro"}
                      value={x.value}
                      onInput={(e) => set(i, { value: e.currentTarget.value })}
                      {...invalid(errors, prefix, `conditions[${i}].value`)}
                    />
                  ) : null}
                </>
              )}
              <button type="button" class="icon-button" aria-label={`Remove condition ${i + 1}`} onClick={() => onChange(conditions.filter((_, j) => j !== i))}>
                ✕
              </button>
              {[".type", ".trait", ".op", ".value", ".cohortId"].map((k) => (
                <FieldError key={k} errors={errors} prefix={prefix} field={`conditions[${i}]${k}`} />
              ))}
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        class="button secondary small"
        disabled={conditions.length >= maxConditions}
        onClick={() => onChange([...conditions, newCondition()])}
      >
        Add condition
      </button>
      <FieldError errors={errors} prefix={prefix} field="conditions" />
    </fieldset>
  );
}

/** fieldValue writes a field's value in the audit trail; cohorts name a condition's cohort. */
function fieldValue(field: string, v: unknown, cohorts: CohortOption[]): string {
  if (v === null || v === undefined) return "—";
  if (field === "enabled" && typeof v === "boolean") return v ? "On" : "Off";
  if (field === "rollout" && typeof v === "number") return `${v}%`;
  if (field === "variants" && Array.isArray(v)) {
    const arms = v as FlagVariant[];
    if (arms.length === 0) return "On/off (no arms)";
    return arms.map((a) => `${a.key} ${a.weight}%${a.payload === undefined || a.payload === null ? "" : ` ${JSON.stringify(a.payload)}`}`).join(" · ");
  }
  if (field === "conditions" && Array.isArray(v)) return conditionsText(v as FlagCondition[], cohorts);
  if (v === "") return "(empty)";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** AuditTrail lists a flag's changes, newest first: who, when, the action, each field before → after. */
export function AuditTrail(props: { changes: FlagChange[]; cohorts: CohortOption[] }) {
  if (props.changes.length === 0) return <p class="empty">No changes recorded.</p>;
  return (
    <ol class="audit">
      {props.changes.map((c) => (
        <li key={c.id} data-testid="audit-entry">
          <p class="audit-head">
            <span class={`action action-${c.action}`}>{capitalise(c.action)}</span> by <strong>{c.actor}</strong>
            <span class="muted"> · {when(c.at)}</span>
          </p>
          {c.changes.length > 0 ? (
            <Table
              label={`${capitalise(c.action)} ${when(c.at)}`}
              class="table compact"
              head={
                <>
                  <th scope="col">Field</th>
                  <th scope="col">Before</th>
                  <th scope="col">After</th>
                </>
              }
            >
              {c.changes.map((d) => (
                <tr key={d.field}>
                  <th scope="row">{d.field}</th>
                  <td class="before">{fieldValue(d.field, d.from, props.cohorts)}</td>
                  <td class="after">{fieldValue(d.field, d.to, props.cohorts)}</td>
                </tr>
              ))}
            </Table>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
