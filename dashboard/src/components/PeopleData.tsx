import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { PersonDeletion } from "../types";
import { ConfirmDialog } from "./ConfirmDialog";
import { Table } from "./Table";

/** The most ids one deletion names (the server's MaxPersonDeletionIDs). */
const maxIds = 1000;

/** parseIds reads one id a line, blank lines skipped, repeats once. */
export function parseIds(text: string): string[] {
  const seen = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const id = line.trim();
    if (id !== "") seen.add(id);
  }
  return [...seen];
}

const actionNames: Record<string, string> = {
  person_deletion_requested: "Deletion requested",
  person_deletion_done: "Deletion done",
  person_deletion_failed: "Deletion failed",
  person_export: "Export",
  privacy_setting_changed: "Privacy setting changed",
};

/**
 * PeopleData is the product settings' card for a person's GDPR requests
 * (docs/privacy.md): delete persons by their distinct ids (one a line,
 * after a confirmation, then the job's progress until the server says
 * done), download everything stored about one person, and the audit log
 * of both. Admin-only, as the server's routes are: others do not see it.
 */
export function PeopleData(props: { productId: number }) {
  const isAdmin = useAllows("admin");
  if (!isAdmin) return null;
  return <PeopleDataCard productId={props.productId} />;
}

function PeopleDataCard(props: { productId: number }) {
  const [text, setText] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [job, setJob] = useState<PersonDeletion | null>(null);
  const [exportId, setExportId] = useState("");
  const { busy, notice, run } = useAction<string>();
  const [log, reloadLog] = useLoad(() => api.auditLog(props.productId), [props.productId]);
  const ids = parseIds(text);

  // The job's progress, read every second until it ends.
  useEffect(() => {
    if (!job || job.status === "done" || job.status === "failed") return;
    const t = setTimeout(() => {
      void api.personDeletion(props.productId, job.id).then((j) => {
        setJob(j);
        if (j.status === "done" || j.status === "failed") reloadLog();
      });
    }, 1000);
    return () => clearTimeout(t);
  }, [job, props.productId]);

  const remove = () =>
    run("delete", async () => {
      const j = await api.requestPersonDeletion(props.productId, ids);
      setConfirming(false);
      setText("");
      setJob(j);
      reloadLog();
    });

  const exportHref = `/api/v1/products/${encodeURIComponent(props.productId)}/persons/export?distinctId=${encodeURIComponent(exportId.trim())}`;

  return (
    <section aria-labelledby="people-data-title" data-testid="people-data">
      <div class="section-head">
        <h2 id="people-data-title">People data</h2>
      </div>
      <p class="muted">
        Answer a person's GDPR request. A deletion removes every trace of the distinct ids in this product — events (errors and
        group memberships included), session replays, survey answers and message states — and is complete when its job says done.
        Backups taken before it still hold the data (docs/privacy.md).
      </p>
      <form
        class="stack-form"
        aria-label="Delete persons"
        onSubmit={(e) => {
          e.preventDefault();
          setConfirming(true);
        }}
      >
        <label>
          Distinct ids to delete, one a line (at most {maxIds})
          <textarea
            name="person-ids"
            rows={4}
            value={text}
            placeholder={"user-1\nanon-7f3a"}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" class="button danger" disabled={busy !== null || ids.length === 0 || ids.length > maxIds}>
          Delete {ids.length === 1 ? "1 person" : `${ids.length} persons`}
        </button>
        {ids.length > maxIds ? <p class="form-error">At most {maxIds} ids a deletion: split the list.</p> : null}
      </form>
      {job ? (
        <p class={job.status === "failed" ? "form-error" : "muted"} role="status" data-testid="people-data-job" data-status={job.status}>
          Deletion job {job.id} of {job.idCount === 1 ? "1 id" : `${job.idCount} ids`}: <strong>{job.status}</strong>
          {job.status === "done"
            ? ` — deleted ${Object.entries(job.counts)
                .map(([k, n]) => `${n} ${k}`)
                .join(", ")}`
            : job.status === "failed"
              ? ` — ${job.error ?? ""}`
              : "…"}
        </p>
      ) : null}
      {notice.error ? (
        <p class="form-error" role="alert">
          {notice.error}
        </p>
      ) : null}

      <form class="inline-form" aria-label="Export a person" onSubmit={(e) => e.preventDefault()}>
        <label>
          Export one person
          <input
            name="export-id"
            maxLength={200}
            value={exportId}
            placeholder="user-1"
            onInput={(e) => setExportId((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        {exportId.trim() === "" ? (
          <button type="button" class="button" disabled>
            Download JSON
          </button>
        ) : (
          <a class="button" href={exportHref} download={`person-${exportId.trim()}.json`} data-testid="people-data-export" onClick={() => setTimeout(reloadLog, 1000)}>
            Download JSON
          </a>
        )}
      </form>

      <h3>Audit log</h3>
      {log.state === "failed" ? (
        <p class="form-error" role="alert">
          {log.error}
        </p>
      ) : log.state !== "done" ? (
        <p class="muted">Loading…</p>
      ) : log.data.items.length === 0 ? (
        <p class="empty">No deletion or export yet.</p>
      ) : (
        <Table
          label="Audit log"
          head={
            <>
              <th>When</th>
              <th>What</th>
              <th>Who</th>
              <th>Summary</th>
            </>
          }
        >
          {log.data.items.map((e) => (
            <tr key={e.id} data-testid="audit-row">
              <td>{when(e.createdAt)}</td>
              <td>{actionNames[e.action] ?? e.action}</td>
              <td>{e.actor}</td>
              <td>{e.summary}</td>
            </tr>
          ))}
        </Table>
      )}

      {confirming ? (
        <ConfirmDialog
          title={ids.length === 1 ? "Delete this person everywhere?" : `Delete these ${ids.length} persons everywhere?`}
          confirmLabel="Delete"
          busy={busy !== null}
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>Their events, replays, survey answers and message states in this product are deleted. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
