import { useState } from "preact/hooks";
import { api, message } from "../api";
import { annotationColors, colorNames } from "../charts/colors";
import { capitalise } from "../format";
import type { Annotation, AnnotationColor, SavedQuery } from "../types";

export const maxLabel = 120;

/**
 * toUTCInput writes an instant as a datetime-local value in UTC: the zone
 * the charts count in and the annotations table shows, so that a time
 * typed is shown back the same whatever the browser's zone.
 */
export function toUTCInput(t: number): string {
  return new Date(t).toISOString().slice(0, 16);
}

/** fromUTCInput reads a datetime-local value as UTC, or null when it is not a time. */
export function fromUTCInput(v: string): Date | null {
  const t = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v) ? new Date(`${v}Z`) : null;
  return t && !Number.isNaN(t.getTime()) ? t : null;
}

/**
 * AnnotationForm creates an annotation: date and time (in UTC, as the
 * charts and the annotations table show them, and labelled so), label with a live count up to 120 characters,
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
  const [date, setDate] = useState(toUTCInput(props.initialDate ?? Date.now()));
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
    const t = fromUTCInput(date);
    if (!t) return setError("Enter a date and time (UTC).");
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
          Date and time (UTC)
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
