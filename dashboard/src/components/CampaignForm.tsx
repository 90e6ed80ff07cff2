import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, api, fieldError, message } from "../api";
import {
  addVariant, builtInTriggers, closestField, draftOf, evenWeights, limits, move, newCampaign, newCondition, newStep, stepOf, traitOps, weightSum, writeOf,
  type CampaignDraft, type ConditionDraft, type StepDraft, type VariantDraft,
} from "../campaign";
import type { Campaign, CapKind, TraitOp } from "../types";
import { presetRange } from "../range";
import { CohortFields, ConditionKind } from "./ConditionFields";
import { useEventNames } from "./EventInput";
import { useCohortOptions } from "./FilterEditor";
import { FieldError, fieldId, focusFirst, invalid, type FieldErrors } from "./Fields";
import { MessagePreview } from "./MessagePreview";
import { StepEditor } from "./StepEditor";

/** The fields of an audience's condition row, under its path. */
const conditionFields = ["", ".type", ".trait", ".op", ".value", ".cohortId"];

/** fieldsOf lists every field path the form has for a draft, for placing the server's errors. */
function fieldsOf(d: CampaignDraft): Set<string> {
  const out = new Set([
    "name", "status", "trigger", "trigger.event", "pathRegex", "audience", "audience.identified", "audience.percentage", "audience.conditions",
    "cap", "cap.kind", "cap.count", "variants",
  ]);
  d.conditions.forEach((_, i) => conditionFields.forEach((x) => out.add(`audience.conditions[${i}]${x}`)));
  d.variants.forEach((v, i) => {
    for (const x of ["", ".key", ".weight", ".steps"]) out.add(`variants[${i}]${x}`);
    v.steps.forEach((s, j) => {
      const p = `variants[${i}].steps[${j}]`;
      for (const x of ["", ".kind", ".title", ".body", ".bodyFormat", ".selector", ".placement", ".cta", ".cta.label", ".cta.url"]) out.add(p + x);
      for (const x of ["question", "question.id", "question.type", "question.prompt", "question.scale", "question.choices"]) out.add(`${p}.${x}`);
      s.choices.forEach((_, k) => out.add(`${p}.question.choices[${k}]`));
    });
  });
  return out;
}

/**
 * CampaignForm creates a campaign, or changes one: its name, trigger event
 * and path, audience (conditions on traits or on the product's cohorts),
 * frequency cap and variants (one, or 2 to 4 for an A/B test) with their
 * ordered steps, and a live preview of the step being edited. The server's
 * refusals show next to the field they name.
 */
export function CampaignForm(props: { product: number; campaign?: Campaign; readOnly?: boolean; onSaved: (c: Campaign, created: boolean) => void }) {
  const c = props.campaign;
  const prefix = c ? `campaign-${c.id}` : "campaign-new";
  const [draft, setDraft] = useState<CampaignDraft>(() => (c ? draftOf(c) : newCampaign()));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  // The step the preview shows: the one last focused or picked.
  const [selected, setSelected] = useState({ v: 0, s: 0 });
  const form = useRef<HTMLFormElement>(null);
  const range = useMemo(() => presetRange("30d"), []);
  const names = useEventNames(props.product, range);
  const cohorts = useCohortOptions(props.product);
  useEffect(() => focusFirst(form.current, errors, prefix), [errors]);

  const set = (part: Partial<CampaignDraft>) => {
    setSaved(false);
    setDraft((d) => ({ ...d, ...part }));
  };
  const setVariants = (fn: (vs: VariantDraft[]) => VariantDraft[]) => {
    setSaved(false);
    setDraft((d) => ({ ...d, variants: fn(d.variants) }));
  };
  const setVariant = (i: number, part: Partial<VariantDraft>) => setVariants((vs) => vs.map((v, j) => (j === i ? { ...v, ...part } : v)));
  const setSteps = (i: number, fn: (ss: StepDraft[]) => StepDraft[]) => setVariants((vs) => vs.map((v, j) => (j === i ? { ...v, steps: fn(v.steps) } : v)));
  const setStep = (i: number, k: number, part: Partial<StepDraft>) => setSteps(i, (ss) => ss.map((s, j) => (j === k ? { ...s, ...part } : s)));
  const setCondition = (i: number, part: Partial<ConditionDraft>) =>
    set({ conditions: draft.conditions.map((x, j) => (j === i ? { ...x, ...part } : x)) });

  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const { body, errors: errs } = writeOf(draft);
    if (Object.keys(errs).length > 0) return setErrors(errs);
    setBusy(true);
    setErrors({});
    try {
      const out = c ? await api.updateCampaign(props.product, c.id, body) : await api.createCampaign(props.product, body);
      setSaved(true);
      // The server stores the body as it cleaned it (Markdown's HTML
      // removed): the form shows what was stored.
      setDraft(draftOf(out));
      props.onSaved(out, !c);
    } catch (err) {
      const known = fieldsOf(draft);
      const fe = fieldError(err);
      // A running experiment refuses changes to the variants (409).
      const field = fe ? closestField(fe.field, (x) => known.has(x)) : err instanceof ApiError && err.code === "experiment_running" ? "variants" : "";
      setErrors(field ? { [field]: fe?.message ?? message(err) } : { "": message(err) });
      const m = /^variants\[(\d+)\]\.steps\[(\d+)\]/.exec(field);
      if (m) setSelected({ v: Number(m[1]), s: Number(m[2]) });
    } finally {
      setBusy(false);
    }
  };

  const ab = draft.variants.length > 1;
  const sum = weightSum(draft.variants);
  const sel = draft.variants[selected.v]?.steps[selected.s] ? selected : { v: 0, s: 0 };
  const selVariant = draft.variants[sel.v];
  const selStep = selVariant?.steps[sel.s];
  const suggestions = [...builtInTriggers, ...(names ?? []).map((n) => n.name).filter((n) => !(builtInTriggers as readonly string[]).includes(n))];
  const err = (field: string) => <FieldError errors={errors} prefix={prefix} field={field} />;
  const input = (field: string) => ({ id: fieldId(prefix, field), ...invalid(errors, prefix, field) });

  return (
    <div class="campaign-editor">
      <form class="stack-form campaign-form" ref={form} onSubmit={submit} aria-label={c ? `Change ${c.name}` : "New campaign"} noValidate>
        {/* Read-only (a viewer), a disabled fieldset disables every field and button inside at once. */}
        <fieldset class="contents" disabled={props.readOnly}>
        <section class="card" aria-labelledby={`${prefix}-basics`}>
          <h2 id={`${prefix}-basics`}>When it shows</h2>
          <div class="field">
            <label>
              Name
              <input name="name" required maxLength={120} value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} {...input("name")} />
            </label>
            {err("name")}
          </div>
          <div class="form-row">
            <div class="field grow">
              <label>
                Trigger event
                <input
                  name="trigger"
                  list={`${prefix}-events`}
                  value={draft.event}
                  autocomplete="off"
                  spellcheck={false}
                  onInput={(e) => set({ event: e.currentTarget.value })}
                  {...input("trigger.event")}
                />
              </label>
              <datalist id={`${prefix}-events`}>
                {suggestions.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
              <p class="hint">Shown when this event happens in the page: $pageview, $click, $form_submit or one of your own.</p>
              {err("trigger.event")}
              {err("trigger")}
            </div>
            <div class="field grow">
              <label>
                Path (regular expression)
                <input
                  name="pathRegex"
                  class="code"
                  value={draft.pathRegex}
                  autocomplete="off"
                  spellcheck={false}
                  placeholder="^/app"
                  onInput={(e) => set({ pathRegex: e.currentTarget.value })}
                  {...input("pathRegex")}
                />
              </label>
              <p class="hint">Matched against the page's path; empty for every page. No flags such as (?i), no lookaround.</p>
              {err("pathRegex")}
            </div>
          </div>
        </section>

        <section class="card" aria-labelledby={`${prefix}-audience`}>
          <h2 id={`${prefix}-audience`}>Who sees it</h2>
          <div class="form-row">
            <div class="field">
              <label class="checkbox">
                <input type="checkbox" name="identified" checked={draft.identified} onChange={(e) => set({ identified: e.currentTarget.checked })} {...input("audience.identified")} />
                Identified users only
              </label>
              {err("audience.identified")}
            </div>
            <div class="field">
              <label>
                Share of users (%)
                <input
                  name="percentage"
                  type="number"
                  min={0}
                  max={100}
                  step={0.01}
                  value={draft.percentage}
                  onInput={(e) => set({ percentage: e.currentTarget.value })}
                  {...input("audience.percentage")}
                />
              </label>
              {err("audience.percentage")}
            </div>
          </div>
          <fieldset>
            <legend>Conditions (all must hold)</legend>
            <p class="hint">On the traits passed to <code>identify</code>, or on membership of one of the product's cohorts.</p>
            {draft.conditions.length === 0 ? <p class="hint">No conditions: any user.</p> : null}
            <ol class="rows">
              {draft.conditions.map((x, i) => {
                const path = `audience.conditions[${i}]`;
                const row = { i, path, condition: x, errors, prefix, onChange: (part: Partial<ConditionDraft>) => setCondition(i, part) };
                return (
                  <li key={i} class="row condition-row" data-testid="condition-row">
                    <ConditionKind {...row} />
                    {x.kind === "cohort" ? (
                      <CohortFields {...row} product={props.product} cohorts={cohorts} />
                    ) : (
                      <>
                        <input aria-label={`Condition ${i + 1} trait`} placeholder="plan" value={x.trait} onInput={(e) => setCondition(i, { trait: e.currentTarget.value })} {...input(`${path}.trait`)} />
                        <select aria-label={`Condition ${i + 1} operator`} value={x.op} onChange={(e) => setCondition(i, { op: e.currentTarget.value as TraitOp })} {...input(`${path}.op`)}>
                          {traitOps.map((o) => (
                            <option key={o.op} value={o.op}>
                              {o.label}
                            </option>
                          ))}
                        </select>
                        {x.op !== "exists" ? (
                          <input aria-label={`Condition ${i + 1} value`} placeholder="pro" value={x.value} onInput={(e) => setCondition(i, { value: e.currentTarget.value })} {...input(`${path}.value`)} />
                        ) : null}
                      </>
                    )}
                    <button type="button" class="icon-button" aria-label={`Remove condition ${i + 1}`} onClick={() => set({ conditions: draft.conditions.filter((_, j) => j !== i) })}>
                      ✕
                    </button>
                    {conditionFields.map((k) => (
                      <FieldError key={k} errors={errors} prefix={prefix} field={`${path}${k}`} />
                    ))}
                  </li>
                );
              })}
            </ol>
            <button
              type="button"
              class="button secondary small"
              disabled={draft.conditions.length >= limits.conditions}
              onClick={() => set({ conditions: [...draft.conditions, newCondition()] })}
            >
              Add condition
            </button>
            {err("audience.conditions")}
          </fieldset>
          <fieldset>
            <legend>How often</legend>
            <div class="form-row">
              <select aria-label="Frequency cap" value={draft.capKind} onChange={(e) => set({ capKind: e.currentTarget.value as CapKind })} {...input("cap.kind")}>
                <option value="once">Once</option>
                <option value="times">A number of times</option>
                <option value="per_day">A number of times a day (UTC)</option>
              </select>
              {draft.capKind !== "once" ? (
                <input
                  aria-label="Times"
                  type="number"
                  min={1}
                  step={1}
                  class="short"
                  value={draft.capCount}
                  onInput={(e) => set({ capCount: e.currentTarget.value })}
                  {...input("cap.count")}
                />
              ) : null}
            </div>
            {err("cap.kind")}
            {err("cap.count")}
          </fieldset>
        </section>

        <section class="card" aria-labelledby={`${prefix}-variants`}>
          <div class="section-head tight">
            <h2 id={`${prefix}-variants`}>{ab ? "Variants (A/B test)" : "Steps"}</h2>
            <button type="button" class="button secondary small" disabled={draft.variants.length >= limits.variants} onClick={() => setVariants(addVariant)}>
              Add A/B variant
            </button>
          </div>
          {ab ? (
            <p class="hint">
              Each user sees one variant, by the weights; saving creates the campaign's experiment, whose primary metric is the button's clicks.
            </p>
          ) : null}
          {err("variants")}
          {draft.variants.map((v, i) => (
            <fieldset key={i} class="variant" data-testid="variant" aria-label={ab ? `Variant ${v.key || i + 1}` : "Steps"}>
              {ab ? (
                <div class="form-row variant-head">
                  <div class="field">
                    <label>
                      Variant key
                      <input aria-label={`Variant ${i + 1} key`} value={v.key} spellcheck={false} onInput={(e) => setVariant(i, { key: e.currentTarget.value })} {...input(`variants[${i}].key`)} />
                    </label>
                    {err(`variants[${i}].key`)}
                  </div>
                  <div class="field">
                    <label>
                      Weight (%)
                      <input
                        aria-label={`Variant ${i + 1} weight (%)`}
                        type="number"
                        min={0}
                        max={100}
                        step={0.01}
                        value={v.weight}
                        onInput={(e) => setVariant(i, { weight: e.currentTarget.value })}
                        {...input(`variants[${i}].weight`)}
                      />
                    </label>
                    {err(`variants[${i}].weight`)}
                  </div>
                  <button
                    type="button"
                    class="button danger small"
                    onClick={() => {
                      setVariants((vs) => evenWeights(vs.filter((_, j) => j !== i)));
                      setSelected({ v: 0, s: 0 });
                    }}
                  >
                    Remove variant<span class="visually-hidden"> {v.key}</span>
                  </button>
                </div>
              ) : null}
              {err(`variants[${i}]`)}
              {err(`variants[${i}].steps`)}
              <ol class="step-list">
                {v.steps.map((s, k) => {
                  const name = ab ? `Variant ${i + 1} step ${k + 1}` : `Step ${k + 1}`;
                  const current = sel.v === i && sel.s === k;
                  return (
                    <li key={k} class={`step-card${current ? " current" : ""}`} data-testid="step" onFocusIn={() => setSelected({ v: i, s: k })}>
                      <div class="step-head">
                        <span class="step-num" aria-hidden="true">
                          {k + 1}
                        </span>
                        <strong>{name}</strong>
                        <div class="step-actions">
                          <button type="button" class="button secondary small" aria-pressed={current} onClick={() => setSelected({ v: i, s: k })}>
                            Preview<span class="visually-hidden"> {name}</span>
                          </button>
                          <button type="button" class="icon-button" aria-label={`Move ${name} up`} disabled={k === 0} onClick={() => setSteps(i, (ss) => move(ss, k, -1))}>
                            ↑
                          </button>
                          <button
                            type="button"
                            class="icon-button"
                            aria-label={`Move ${name} down`}
                            disabled={k === v.steps.length - 1}
                            onClick={() => setSteps(i, (ss) => move(ss, k, 1))}
                          >
                            ↓
                          </button>
                          <button
                            type="button"
                            class="icon-button"
                            aria-label={`Remove ${name}`}
                            disabled={v.steps.length <= 1}
                            onClick={() => setSteps(i, (ss) => ss.filter((_, j) => j !== k))}
                          >
                            ✕
                          </button>
                        </div>
                      </div>
                      <StepEditor step={s} path={`variants[${i}].steps[${k}]`} name={name} errors={errors} prefix={prefix} onChange={(part) => setStep(i, k, part)} />
                    </li>
                  );
                })}
              </ol>
              <button
                type="button"
                class="button secondary small"
                disabled={v.steps.length >= limits.steps}
                onClick={() => {
                  const n = draft.variants.reduce((m, x) => m + x.steps.length, 0) + 1;
                  setSteps(i, (ss) => [...ss, newStep("modal", n)]);
                  setSelected({ v: i, s: v.steps.length });
                }}
              >
                Add step{ab ? <span class="visually-hidden"> to variant {i + 1}</span> : null}
              </button>
            </fieldset>
          ))}
          {ab ? (
            <p class={`hint${sum === 100 ? "" : " over"}`} aria-live="polite" data-testid="weight-sum">
              Weights sum to {sum}%{sum === 100 ? "." : "; they must sum to 100%."}
            </p>
          ) : null}
        </section>

        {errors[""] ? (
          <p class="form-error" role="alert">
            {errors[""]}
          </p>
        ) : null}
        <div class="dialog-actions">
          {saved ? (
            <span class="ok" role="status">
              Saved.
            </span>
          ) : null}
          {props.readOnly ? null : (
            <button type="submit" class="button" disabled={busy}>
              {c ? "Save changes" : "Create campaign"}
            </button>
          )}
        </div>
        </fieldset>
      </form>
      <aside class="card preview-panel" aria-label="Preview">
        <h2>Preview</h2>
        {selStep ? (
          <MessagePreview
            step={stepOf(selStep)}
            stepIndex={sel.s}
            stepCount={selVariant.steps.length}
            label={`${ab ? `Variant ${selVariant.key || sel.v + 1}, s` : "S"}tep ${sel.s + 1} of ${selVariant.steps.length}`}
          />
        ) : null}
      </aside>
    </div>
  );
}
