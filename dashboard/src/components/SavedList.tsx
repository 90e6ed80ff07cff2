import { useEffect, useState } from "preact/hooks";
import { api, message } from "../api";
import { when } from "../format";
import { useAllows } from "../roles";
import type { QueryKind, SavedQuery } from "../types";
import { ConfirmDialog } from "./ConfirmDialog";

/**
 * SavedList lists a kind's saved queries with Run and Delete, and marks the
 * one on screen. Delete shows to admins only, as the server allows it.
 */
export function SavedList(props: {
  product: number;
  items: SavedQuery[] | null;
  error?: string | null;
  current: number | null;
  kindLabel: string;
  describe: (q: SavedQuery) => string;
  onRun: (q: SavedQuery) => void;
  onDeleted: (id: number) => void;
}) {
  const [confirm, setConfirm] = useState<SavedQuery | null>(null);
  const canDelete = useAllows("admin");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    if (!confirm) return;
    setBusy(true);
    try {
      await api.deleteQuery(props.product, confirm.id);
      props.onDeleted(confirm.id);
      setConfirm(null);
    } catch (err) {
      setError(message(err));
      setConfirm(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card saved" aria-labelledby="saved-title">
      <h2 id="saved-title">Saved</h2>
      {props.error ? <p class="form-error" role="alert">{props.error}</p> : null}
      {error ? <p class="form-error" role="alert">{error}</p> : null}
      {props.items === null && !props.error ? <p class="muted">Loading…</p> : null}
      {props.items && props.items.length === 0 ? <p class="empty">No saved {props.kindLabel}s yet. Save one to run it again later.</p> : null}
      {props.items && props.items.length > 0 ? (
        <ul class="saved-list" aria-label={`Saved ${props.kindLabel}s`}>
          {props.items.map((q) => (
            <li key={q.id} class={q.id === props.current ? "current" : ""} aria-current={q.id === props.current ? "true" : undefined}>
              <div class="saved-name">
                <strong>{q.name}</strong>
                <span class="hint">{props.describe(q)}</span>
                <span class="hint">Saved {when(q.updatedAt)}</span>
              </div>
              <div class="saved-actions">
                <button type="button" class="button small" onClick={() => props.onRun(q)} aria-label={`Run ${q.name}`}>
                  Run
                </button>
                {canDelete ? (
                  <button type="button" class="button danger small" onClick={() => setConfirm(q)} aria-label={`Delete ${q.name}`}>
                    Delete
                  </button>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      ) : null}
      {confirm ? (
        <ConfirmDialog title={`Delete ${confirm.name}?`} confirmLabel="Delete" busy={busy} onConfirm={remove} onCancel={() => setConfirm(null)}>
          <p>The saved {props.kindLabel} and the annotations drawn only on its chart are deleted. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/**
 * SaveQueryForm names and saves the query on screen. build returns the
 * definition to save, or null when the page's own form has an error (which
 * the page shows).
 */
export function SaveQueryForm(props: {
  product: number;
  kind: "funnel" | "trend";
  build: () => object | null;
  onSaved: (q: SavedQuery) => void;
}) {
  const [name, setName] = useState("");
  const [state, setState] = useState<{ busy: boolean; error?: string; ok?: string }>({ busy: false });
  const canSave = useAllows("member");
  const save = async (e: Event) => {
    e.preventDefault();
    const definition = props.build();
    if (!definition) return;
    if (!name.trim()) return setState({ busy: false, error: `Name the ${props.kind} to save it.` });
    setState({ busy: true });
    try {
      const q = await api.saveQuery(props.product, props.kind, name.trim(), definition);
      setName("");
      setState({ busy: false, ok: `Saved “${q.name}”.` });
      props.onSaved(q);
    } catch (err) {
      setState({ busy: false, error: message(err) });
    }
  };
  // Saving needs the member role; a viewer runs the saved ones only.
  if (!canSave) return null;
  return (
    <form class="card inline-form" onSubmit={save} aria-label={`Save ${props.kind}`}>
      <label class="grow">
        Save this {props.kind} as
        <input type="text" name="saveName" maxLength={255} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit" class="button secondary" disabled={state.busy}>
        Save {props.kind}
      </button>
      {state.error ? (
        <p class="form-error" role="alert">
          {state.error}
        </p>
      ) : null}
      {state.ok ? (
        <p class="ok" role="status">
          {state.ok}
        </p>
      ) : null}
    </form>
  );
}

/** useSavedQueries loads a product's saved queries of one kind. */
export function useSavedQueries(product: number, kind: QueryKind) {
  const [saved, setSaved] = useState<SavedQuery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.savedQueries(product).then(
      (r) => setSaved(r.items.filter((q) => q.kind === kind)),
      (err) => setError(message(err)),
    );
  }, [product]);
  return { saved, setSaved, savedError: error };
}
