import { useState } from "preact/hooks";
import { api, message } from "../api";
import { annotationColors, colorNames } from "../charts/colors";
import { capitalise } from "../format";
import type { Annotation, AnnotationColor, SavedQuery } from "../types";

export const maxLabel = 120;

/** toLocalInput writes an instant as a datetime-local value in the browser's time zone. */
export function toLocalInput(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * AnnotationForm creates an annotation: date and time (in the browser's
 * time zone, sent as UTC), label with a live count up to 120 characters,
 * description, one of six colours, and the scope: every chart of the
 * workspace, or one saved query's chart.
 */
export function AnnotationForm(props: {
  product: number;
  initialDate?: number;
  savedQueries: SavedQuery[];
  /** A query the form is opened from: offered as the query scope. */
  queryId?: number;
  onCreated: (a: Annotation) => void;
  onCancel?: () => void;
  idPrefix?: string;
}) {
  const id = props.idPrefix ?? "ann";
  const [date, setDate] = useState(toLocalInput(props.initialDate ?? Date.now()));
  const [label, setLabel] = useState("");
  const [description, setDescription] = useState("");
  const [color, setColor] = useState<AnnotationColor>("emerald");
  const [scope, setScope] = useState<"workspace" | "query">("workspace");
  const [queryId, setQueryId] = useState<number | undefined>(props.queryId ?? props.savedQueries[0]?.id);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const count = [...label].length;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const t = new Date(date);
    if (!date || Number.isNaN(t.getTime())) return setError("Enter a date and time.");
    if (!label.trim()) return setError("Enter a label.");
    if (count > maxLabel) return setError(`The label is ${count} characters; at most ${maxLabel} are allowed.`);
    if (scope === "query" && !queryId) return setError("Pick the saved query this annotation belongs to.");
    setBusy(true);
    try {
      const a = await api.createAnnotation(props.product, {
        date: t.toISOString(),
        label,
        description: description || undefined,
        color,
        scope,
        queryId: scope === "query" ? queryId : undefined,
      });
      setLabel("");
      setDescription("");
      props.onCreated(a);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="annotation-form" onSubmit={submit} aria-label="New annotation">
      <div class="form-row">
        <label>
          Date and time
          <input type="datetime-local" name="date" required value={date} onInput={(e) => setDate(e.currentTarget.value)} />
        </label>
        <label class="grow">
          Label
          <input
            type="text"
            name="label"
            required
            value={label}
            aria-describedby={`${id}-count`}
            onInput={(e) => setLabel(e.currentTarget.value)}
          />
          <span id={`${id}-count`} class={`hint${count > maxLabel ? " over" : ""}`} aria-live="polite" data-testid="label-count">
            {count}/{maxLabel}
          </span>
        </label>
      </div>
      <label>
        Description (optional)
        <textarea name="description" rows={2} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <fieldset class="swatches">
        <legend>Colour</legend>
        {colorNames.map((c) => (
          <label key={c} class="swatch" title={capitalise(c)}>
            <input type="radio" name={`${id}-color`} value={c} checked={color === c} onChange={() => setColor(c)} />
            <span class="swatch-dot" style={{ background: annotationColors[c] }} />
            <span class="visually-hidden">{capitalise(c)}</span>
          </label>
        ))}
      </fieldset>
      <fieldset class="scope">
        <legend>Shown on</legend>
        <label class="radio">
          <input type="radio" name={`${id}-scope`} checked={scope === "workspace"} onChange={() => setScope("workspace")} />
          Every chart of the workspace
        </label>
        <label class="radio">
          <input
            type="radio"
            name={`${id}-scope`}
            checked={scope === "query"}
            disabled={props.savedQueries.length === 0}
            onChange={() => setScope("query")}
          />
          One saved query's chart
        </label>
        {scope === "query" ? (
          <label>
            Saved query
            <select value={String(queryId ?? "")} onChange={(e) => setQueryId(Number(e.currentTarget.value))}>
              {props.savedQueries.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.name} ({q.kind})
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {props.savedQueries.length === 0 ? <p class="hint">Save a funnel or trend to give it annotations of its own.</p> : null}
      </fieldset>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="dialog-actions">
        {props.onCancel ? (
          <button type="button" class="button secondary" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
        <button type="submit" class="button" disabled={busy}>
          Add annotation
        </button>
      </div>
    </form>
  );
}
