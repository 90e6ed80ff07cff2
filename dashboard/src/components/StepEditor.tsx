import { limits, questionTypes, stepKinds, type Placement, type StepDraft } from "../campaign";
import type { BodyFormat, QuestionType, StepKind } from "../types";
import { FieldError, fieldId, invalid, type FieldErrors } from "./Fields";

/**
 * StepEditor edits one step of a variant: its kind, title, body and the
 * body's format, a tooltip's selector, a banner's placement, the call to
 * action, and a survey step's question. Its fields are named by API path
 * (variants[0].steps[1].title), so the server's refusals land on them.
 */
export function StepEditor(props: {
  step: StepDraft;
  /** The step's API path: variants[v].steps[s]. */
  path: string;
  /** "Step 2" or "Variant variant_b, step 2": what the labels say. */
  name: string;
  errors: FieldErrors;
  prefix: string;
  onChange: (part: Partial<StepDraft>) => void;
}) {
  const { step: d, path, errors, prefix, name } = props;
  const f = (field: string) => `${path}.${field}`;
  const input = (field: string) => ({ id: fieldId(prefix, f(field)), ...invalid(errors, prefix, f(field)) });
  const err = (field: string) => <FieldError errors={errors} prefix={prefix} field={f(field)} />;
  const choice = d.questionType === "single" || d.questionType === "multiple";
  const setChoice = (i: number, v: string) => props.onChange({ choices: d.choices.map((c, j) => (j === i ? v : c)) });

  return (
    <div class="step-fields">
      <div class="form-row">
        <div class="field">
          <label>
            Kind
            <select aria-label={`${name} kind`} value={d.kind} onChange={(e) => props.onChange({ kind: e.currentTarget.value as StepKind })} {...input("kind")}>
              {stepKinds.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
          {err("kind")}
        </div>
        {d.kind === "tooltip" ? (
          <div class="field grow">
            <label>
              Anchor selector
              <input
                aria-label={`${name} anchor selector`}
                value={d.selector}
                spellcheck={false}
                autocomplete="off"
                placeholder="#signup-button"
                onInput={(e) => props.onChange({ selector: e.currentTarget.value })}
                {...input("selector")}
              />
            </label>
            <p class="hint">The CSS selector of the element the tooltip points at. A step whose selector matches nothing is skipped.</p>
            {err("selector")}
          </div>
        ) : null}
        {d.kind === "banner" ? (
          <div class="field">
            <label>
              Placement
              <select aria-label={`${name} placement`} value={d.placement} onChange={(e) => props.onChange({ placement: e.currentTarget.value as Placement })} {...input("placement")}>
                <option value="top">Top of the page</option>
                <option value="bottom">Bottom of the page</option>
              </select>
            </label>
            {err("placement")}
          </div>
        ) : null}
      </div>
      <div class="field">
        <label>
          Title
          <input aria-label={`${name} title`} value={d.title} maxLength={200} onInput={(e) => props.onChange({ title: e.currentTarget.value })} {...input("title")} />
        </label>
        {err("title")}
      </div>
      <div class="field">
        <div class="label-row">
          <label for={fieldId(prefix, f("body"))}>Body</label>
          <div class="segmented small" role="group" aria-label={`${name} body format`}>
            {(["text", "markdown"] as BodyFormat[]).map((fmt) => (
              <button key={fmt} type="button" aria-pressed={d.bodyFormat === fmt} onClick={() => props.onChange({ bodyFormat: fmt })}>
                {fmt === "text" ? "Text" : "Markdown"}
              </button>
            ))}
          </div>
        </div>
        <textarea
          aria-label={`${name} body`}
          rows={4}
          value={d.body}
          maxLength={5000}
          onInput={(e) => props.onChange({ body: e.currentTarget.value })}
          aria-describedby={errors[f("body")] ? `${fieldId(prefix, f("body"))}-error` : `${fieldId(prefix, f("body"))}-hint`}
          {...input("body")}
        />
        <p class="hint" id={`${fieldId(prefix, f("body"))}-hint`}>
          {d.bodyFormat === "markdown"
            ? "Markdown: **bold**, *italic*, `code`, [links](https://…), - lists and blank lines between paragraphs. HTML is removed on save."
            : "Shown as written."}
        </p>
        {err("body")}
        {err("bodyFormat")}
      </div>
      {d.kind === "survey" ? questionFields() : null}
      <div class="form-row">
        <div class="field grow">
          <label>
            Button label (optional)
            <input aria-label={`${name} button label`} value={d.ctaLabel} placeholder="Get started" onInput={(e) => props.onChange({ ctaLabel: e.currentTarget.value })} {...input("cta.label")} />
          </label>
          {err("cta.label")}
        </div>
        <div class="field grow">
          <label>
            Button address
            <input
              aria-label={`${name} button address`}
              value={d.ctaUrl}
              spellcheck={false}
              placeholder="https://… or /path"
              onInput={(e) => props.onChange({ ctaUrl: e.currentTarget.value })}
              {...input("cta.url")}
            />
          </label>
          {err("cta.url")}
        </div>
      </div>
      <p class="hint">The button ends the flow and opens its address: http:, https:, mailto: or a path starting with /.</p>
      {err("cta")}
    </div>
  );

  // A function called in place, not a component: a component made anew on
  // every render would be mounted anew, and its inputs would lose focus.
  function questionFields() {
    return (
      <fieldset class="question">
        <legend>Question</legend>
        <div class="form-row">
          <div class="field">
            <label>
              Answer
              <select
                aria-label={`${name} question type`}
                value={d.questionType}
                onChange={(e) => props.onChange({ questionType: e.currentTarget.value as QuestionType })}
                {...input("question.type")}
              >
                {questionTypes.map((q) => (
                  <option key={q.type} value={q.type}>
                    {q.label}
                  </option>
                ))}
              </select>
            </label>
            {err("question.type")}
          </div>
          {d.questionType === "rating" ? (
            <div class="field">
              <label>
                Scale
                <select aria-label={`${name} scale`} value={d.scale} onChange={(e) => props.onChange({ scale: e.currentTarget.value as "5" | "10" })} {...input("question.scale")}>
                  <option value="5">1 to 5</option>
                  <option value="10">1 to 10</option>
                </select>
              </label>
              {err("question.scale")}
            </div>
          ) : null}
          <div class="field">
            <label>
              Question id
              <input
                aria-label={`${name} question id`}
                class="short"
                value={d.questionId}
                spellcheck={false}
                autocomplete="off"
                onInput={(e) => props.onChange({ questionId: e.currentTarget.value })}
                {...input("question.id")}
              />
            </label>
            {err("question.id")}
          </div>
        </div>
        <p class="hint">The id names the question's answers in the results and the CSV; unique in the campaign.</p>
        <div class="field">
          <label>
            Prompt
            <input aria-label={`${name} prompt`} value={d.prompt} onInput={(e) => props.onChange({ prompt: e.currentTarget.value })} {...input("question.prompt")} />
          </label>
          {err("question.prompt")}
        </div>
        {choice ? (
          <div class="field">
            <span class="label">Choices</span>
            <ol class="rows">
              {d.choices.map((c, i) => (
                <li key={i} class="row">
                  <input
                    aria-label={`${name} choice ${i + 1}`}
                    value={c}
                    onInput={(e) => setChoice(i, e.currentTarget.value)}
                    {...input(`question.choices[${i}]`)}
                  />
                  <button
                    type="button"
                    class="icon-button"
                    aria-label={`Remove choice ${i + 1} of ${name}`}
                    disabled={d.choices.length <= limits.choices.min}
                    onClick={() => props.onChange({ choices: d.choices.filter((_, j) => j !== i) })}
                  >
                    ✕
                  </button>
                  <FieldError errors={errors} prefix={prefix} field={f(`question.choices[${i}]`)} />
                </li>
              ))}
            </ol>
            <div>
              <button
                type="button"
                class="button secondary small"
                disabled={d.choices.length >= limits.choices.max}
                onClick={() => props.onChange({ choices: [...d.choices, ""] })}
              >
                Add choice
              </button>
            </div>
            {err("question.choices")}
          </div>
        ) : null}
        {err("question")}
      </fieldset>
    );
  }
}
