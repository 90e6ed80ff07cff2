import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { DataRetentionSettings, DataRetentionUpdate } from "../types";
import { ConfirmDialog } from "./ConfirmDialog";

/** The periods' fields, in the order the card shows them. */
const FIELDS = [
  { key: "eventsDays", label: "Events", fallback: () => "Forever" },
  { key: "errorsDays", label: "Error occurrences", fallback: () => "As the events" },
  { key: "replaysDays", label: "Session replays", fallback: (r: DataRetentionSettings) => `${r.replayDefaultDays} (server)` },
] as const;

type Key = (typeof FIELDS)[number]["key"];
type Draft = Record<Key, string>;

/** MAX_DAYS is the longest period the server takes (docs/privacy.md, "Retention"). */
const MAX_DAYS = 3650;

/** draftOf is the form's text for the stored periods: empty for the default. */
function draftOf(r: DataRetentionSettings): Draft {
  const text = (n: number) => (n > 0 ? String(n) : "");
  return { eventsDays: text(r.eventsDays), errorsDays: text(r.errorsDays), replaysDays: text(r.replaysDays) };
}

/** daysOf reads a field: 0 for an empty one, NaN for anything not a whole number of days. */
function daysOf(text: string): number {
  const t = text.trim();
  if (t === "") return 0;
  return /^\d+$/.test(t) ? Number(t) : NaN;
}

/** days names a number of days. */
function days(n: number): string {
  return n === 1 ? "1 day" : `${n} days`;
}

/** listed joins phrases as a sentence does: "a", "a and b", "a, b and c". */
function listed(phrases: string[]): string {
  return phrases.length < 2 ? (phrases[0] ?? "") : `${phrases.slice(0, -1).join(", ")} and ${phrases[phrases.length - 1]}`;
}

/** shortens reports whether a new period keeps less than the old one (0 keeps the most). */
function shortens(before: number, after: number): boolean {
  return after > 0 && (before === 0 || after < before);
}

/**
 * DataRetention is the product settings' "Data retention" card
 * (docs/privacy.md, "Retention"): how many days the product keeps its
 * events, its error occurrences and its session replays, an empty field
 * keeping the default. Only an admin reads and sets them, as the server
 * allows; a change that keeps less asks first, since the retention job
 * deletes what is older within the hour and nothing brings it back.
 */
export function DataRetention(props: { productId: number }) {
  const admin = useAllows("admin");
  const [load, reload] = useLoad(admin ? () => api.dataRetention(props.productId) : null, [props.productId, admin]);
  const stored = load.state === "done" ? load.data : null;
  const [draft, setDraft] = useState<Draft>({ eventsDays: "", errorsDays: "", replaysDays: "" });
  const [confirming, setConfirming] = useState(false);
  const { busy, notice, setNotice, run } = useAction<"save">();
  useEffect(() => {
    if (stored) setDraft(draftOf(stored));
  }, [stored]);

  if (!admin) {
    return (
      <section aria-labelledby="retention-title" data-testid="data-retention">
        <h2 id="retention-title">Data retention</h2>
        <p class="muted" data-testid="retention-admin-only">
          Only an admin of this workspace sets how long this product keeps its data.
        </p>
      </section>
    );
  }

  const update: DataRetentionUpdate = {
    eventsDays: daysOf(draft.eventsDays),
    errorsDays: daysOf(draft.errorsDays),
    replaysDays: daysOf(draft.replaysDays),
  };
  const invalid = FIELDS.find((f) => {
    const n = update[f.key] ?? 0;
    return Number.isNaN(n) || n > MAX_DAYS;
  });
  const changed = stored !== null && FIELDS.some((f) => update[f.key] !== stored[f.key]);
  const loses = stored !== null && FIELDS.some((f) => shortens(stored[f.key], update[f.key] ?? 0));

  const save = () =>
    run("save", async () => {
      setConfirming(false);
      await api.setDataRetention(props.productId, update);
      reload();
      return "Saved. The retention job applies it within the hour.";
    });
  const submit = (e: Event) => {
    e.preventDefault();
    if (invalid) {
      setNotice({ error: `${invalid.label}: enter a whole number of days from 1 to ${MAX_DAYS}, or leave it empty for the default.` });
      return;
    }
    setNotice({});
    if (loses) setConfirming(true);
    else void save();
  };

  return (
    <section aria-labelledby="retention-title" data-testid="data-retention">
      <div class="section-head">
        <h2 id="retention-title">Data retention</h2>
      </div>
      <p class="muted">
        How many days this product keeps its data. Events older than the last N days in the product's time zone (today included) are
        deleted, and error occurrences by their own period; a session replay goes N days after it ended. Leave a field empty to keep the
        default.
      </p>
      {load.state === "failed" ? (
        <p class="form-error" role="alert">
          {load.error}
        </p>
      ) : null}
      {stored === null ? (
        load.state === "failed" ? null : <p class="muted">Loading…</p>
      ) : (
        <form class="inline-form" onSubmit={submit} aria-label="Data retention" noValidate>
          {FIELDS.map((f) => (
            <label key={f.key}>
              {f.label} (days)
              <input
                name={f.key}
                inputMode="numeric"
                size={12}
                placeholder={f.fallback(stored)}
                value={draft[f.key]}
                onInput={(e) => setDraft({ ...draft, [f.key]: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
          ))}
          <button type="submit" class="button secondary" disabled={busy !== null || !changed}>
            Save retention
          </button>
        </form>
      )}
      {notice.ok ? <p class="ok">{notice.ok}</p> : null}
      {notice.error ? (
        <p class="form-error" role="alert">
          {notice.error}
        </p>
      ) : null}
      {stored ? (
        <p class="hint">
          Replays are kept at most {stored.replayDefaultDays} days, the server's limit. Deleted data cannot be brought back, except from a
          backup.
        </p>
      ) : null}
      {confirming ? (
        <ConfirmDialog
          title="Delete older data?"
          confirmLabel="Delete and save"
          busy={busy !== null}
          onConfirm={() => void save()}
          onCancel={() => setConfirming(false)}
        >
          <p>
            {listed(
              FIELDS.filter((f) => stored && shortens(stored[f.key], update[f.key] ?? 0)).map(
                (f, i) => `${i === 0 ? f.label : f.label.toLowerCase()} older than ${days(update[f.key] ?? 0)}`,
              ),
            )}{" "}
            will be deleted within the hour. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
