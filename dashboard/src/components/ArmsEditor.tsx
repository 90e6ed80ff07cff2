import { FieldError, fieldId, invalid, type FieldErrors } from "./Fields";
import type { FlagVariant } from "../types";

/** The most arms a flag has (docs/flags.md). */
export const maxArms = 4;

/** An arm as typed: numbers and JSON stay text until the form is sent. */
export interface ArmDraft {
  key: string;
  weight: string;
  payload: string;
}

/** The arms a new experiment starts from, as the API's default. */
export const defaultArms = (): ArmDraft[] => [
  { key: "control", weight: "50", payload: "" },
  { key: "treatment", weight: "50", payload: "" },
];

/** armDrafts turns a flag's arms into editable rows. */
export function armDrafts(variants: FlagVariant[]): ArmDraft[] {
  return variants.map((v) => ({
    key: v.key,
    weight: String(v.weight),
    payload: v.payload === undefined || v.payload === null ? "" : JSON.stringify(v.payload, null, 2),
  }));
}

/** weightSum adds the weights in hundredths of a percent, as the server does. */
export function weightSum(arms: ArmDraft[]): number {
  return arms.reduce((n, a) => n + Math.round((Number(a.weight) || 0) * 100), 0) / 100;
}

/**
 * readArms turns the rows into the API's arms, checking each payload is
 * JSON before anything is sent; the faults are keyed by field path.
 */
export function readArms(arms: ArmDraft[]): { variants: FlagVariant[]; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const variants = arms.map((a, i) => {
    const v: FlagVariant = { key: a.key.trim(), weight: a.weight.trim() === "" ? Number.NaN : Number(a.weight) };
    if (!Number.isFinite(v.weight)) errors[`variants[${i}].weight`] = `Arm ${i + 1}: enter a weight from 0 to 100.`;
    if (a.payload.trim() !== "") {
      try {
        v.payload = JSON.parse(a.payload);
      } catch (e) {
        errors[`variants[${i}].payload`] = `Arm ${i + 1}: the payload is not valid JSON (${(e as Error).message}).`;
      }
    }
    return v;
  });
  return { variants, errors };
}

/**
 * ArmsEditor edits a flag's arms: key, weight and (for flags) an optional
 * JSON payload each, 2 to 4 of them, or none for an on/off flag when
 * allowNone. The weights' sum is shown as it is typed.
 */
export function ArmsEditor(props: {
  arms: ArmDraft[];
  onChange: (arms: ArmDraft[]) => void;
  errors: FieldErrors;
  prefix: string;
  payloads?: boolean;
  allowNone?: boolean;
}) {
  const { arms, errors, prefix } = props;
  const set = (i: number, part: Partial<ArmDraft>) => props.onChange(arms.map((a, j) => (j === i ? { ...a, ...part } : a)));
  const sum = weightSum(arms);
  return (
    <fieldset class="arms" aria-describedby={errors.variants ? `${fieldId(prefix, "variants")}-error` : undefined}>
      <legend>Arms</legend>
      {arms.length === 0 ? (
        <p class="hint">
          No arms: an on/off flag. Users in the rollout get <code>on</code>, everyone else <code>control</code>.
        </p>
      ) : (
        <ol class="rows arm-rows">
          {arms.map((a, i) => (
            <li key={i} class="arm-row" data-testid="arm-row">
              <span class="step-num" aria-hidden="true">
                {i + 1}
              </span>
              <div class="arm-fields">
                <div class="field">
                  <label>
                    Key
                    <input
                      id={fieldId(prefix, `variants[${i}].key`)}
                      aria-label={`Arm ${i + 1} key`}
                      value={a.key}
                      autocomplete="off"
                      spellcheck={false}
                      placeholder={i === 0 ? "control" : "treatment"}
                      onInput={(e) => set(i, { key: e.currentTarget.value })}
                      {...invalid(errors, prefix, `variants[${i}].key`)}
                    />
                  </label>
                  <FieldError errors={errors} prefix={prefix} field={`variants[${i}].key`} />
                </div>
                <div class="field weight">
                  <label>
                    Weight (%)
                    <input
                      id={fieldId(prefix, `variants[${i}].weight`)}
                      aria-label={`Arm ${i + 1} weight (%)`}
                      type="number"
                      min={0}
                      max={100}
                      step={0.01}
                      value={a.weight}
                      onInput={(e) => set(i, { weight: e.currentTarget.value })}
                      {...invalid(errors, prefix, `variants[${i}].weight`)}
                    />
                  </label>
                  <FieldError errors={errors} prefix={prefix} field={`variants[${i}].weight`} />
                </div>
                {props.payloads ? (
                  <div class="field grow">
                    <label>
                      Payload (JSON, optional)
                      <textarea
                        id={fieldId(prefix, `variants[${i}].payload`)}
                        aria-label={`Arm ${i + 1} payload (JSON, optional)`}
                        rows={a.payload.includes("\n") ? 3 : 1}
                        spellcheck={false}
                        class="code"
                        placeholder='{"headline": "Start free"}'
                        value={a.payload}
                        onInput={(e) => set(i, { payload: e.currentTarget.value })}
                        {...invalid(errors, prefix, `variants[${i}].payload`)}
                      />
                    </label>
                    <FieldError errors={errors} prefix={prefix} field={`variants[${i}].payload`} />
                  </div>
                ) : null}
              </div>
              <button
                type="button"
                class="icon-button"
                aria-label={`Remove arm ${i + 1}`}
                disabled={arms.length <= 2}
                onClick={() => props.onChange(arms.filter((_, j) => j !== i))}
              >
                ✕
              </button>
            </li>
          ))}
        </ol>
      )}
      {arms.length > 0 ? (
        <p class={`hint${sum === 100 ? "" : " over"}`} aria-live="polite" data-testid="weight-sum">
          Weights sum to {sum}%{sum === 100 ? "." : "; they must sum to 100%."}
        </p>
      ) : null}
      <FieldError errors={errors} prefix={prefix} field="variants" />
      <div class="inline-form tight">
        {arms.length === 0 ? (
          <button type="button" class="button secondary small" onClick={() => props.onChange(defaultArms())}>
            Split into arms
          </button>
        ) : (
          <button
            type="button"
            class="button secondary small"
            disabled={arms.length >= maxArms}
            onClick={() => props.onChange([...arms, { key: "", weight: "0", payload: "" }])}
          >
            Add arm
          </button>
        )}
        {props.allowNone && arms.length > 0 ? (
          <button type="button" class="button secondary small" onClick={() => props.onChange([])}>
            Make it on/off
          </button>
        ) : null}
      </div>
    </fieldset>
  );
}
