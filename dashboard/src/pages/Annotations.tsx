import { useEffect, useState } from "preact/hooks";
import { annotationsExportUrl, api } from "../api";
import { annotationColors } from "../charts/colors";
import { AnnotationForm } from "../components/AnnotationForm";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { RowActions, Table } from "../components/Table";
import { capitalise, plural, when } from "../format";
import { useAction, useLoad } from "../load";
import { positiveInt, setQuery, useQueryState } from "../router";
import type { Annotation, AnnotationPage, Product, SavedQuery } from "../types";
import { useAllows } from "../roles";

export const pageSize = 20;

/**
 * Annotations lists the workspace's chart annotations, 20 a page, with
 * checkboxes for bulk delete, a delete per row, a form to add one and the
 * CSV export. Query-scoped annotations are listed by picking their saved
 * query, as the API lists them.
 */
export function Annotations(props: { product: Product | null }) {
  if (!props.product) return <NoProduct />;
  return <AnnotationsPage key={props.product.id} product={props.product} />;
}

function AnnotationsPage(props: { product: Product }) {
  const canWrite = useAllows("member");
  // Deleting, one or in bulk, needs the admin role; without it the table has no boxes.
  const canDelete = useAllows("admin");
  const pid = props.product.id;
  // The page number and the saved query filter live in the URL (?page=,
  // ?query=), so that a link opens the same rows and back steps back.
  const [page, setPage] = useQueryState("page", 1, positiveInt);
  const [queryFilter] = useQueryState<number | null>("query", null, positiveInt);
  const queryId = queryFilter ?? undefined;
  const [saved, setSaved] = useState<SavedQuery[]>([]);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [confirm, setConfirm] = useState<{ ids: number[]; label: string } | null>(null);
  const { busy, notice, setNotice, run } = useAction<"delete">();
  useEffect(() => {
    api.savedQueries(pid).then((r) => setSaved(r.items), () => setSaved([]));
  }, [pid]);
  const [list, reload] = useLoad<AnnotationPage>(() => api.annotations(pid, { page, pageSize, queryId }), [pid, page, queryId]);
  useEffect(() => setSelected(new Set()), [page, queryId]);

  const items = list.state === "done" ? list.data.items : [];
  const total = list.state === "done" ? list.data.total : 0;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const allChecked = items.length > 0 && items.every((a) => selected.has(a.id));
  const toggle = (id: number) =>
    setSelected((s) => {
      const out = new Set(s);
      if (out.has(id)) out.delete(id);
      else out.add(id);
      return out;
    });
  const toggleAll = () => setSelected(allChecked ? new Set() : new Set(items.map((a) => a.id)));

  const remove = async () => {
    if (!confirm) return;
    await run("delete", async () => {
      let deleted = 1;
      if (confirm.ids.length === 1) await api.deleteAnnotation(pid, confirm.ids[0]);
      else deleted = (await api.bulkDeleteAnnotations(pid, confirm.ids)).deleted;
      setSelected(new Set());
      // The last row of a page gone: step back a page.
      if (items.length === confirm.ids.length && page > 1) setPage(page - 1, { replace: true });
      else reload();
      return `Deleted ${plural(deleted, "annotation")}.`;
    });
    setConfirm(null);
  };
  const created = (a: Annotation) => {
    setNotice({ ok: `Added “${a.label}”.` });
    if (page === 1) reload();
    else setPage(1);
  };
  const queryName = (id: number | null) => saved.find((q) => q.id === id)?.name ?? `query ${id}`;

  return (
    <section class="page">
      <h1>Annotations</h1>
      <p class="muted">
        Markers drawn on the time charts of every product of this workspace, or on one saved query's chart. Click a point on a Trends chart
        to add one there.
      </p>

      {/* Writing is a member's (docs/security.md, "Roles"). */}
      {canWrite ? (
        <section class="card" aria-labelledby="new-annotation">
          <h2 id="new-annotation">New annotation</h2>
          <AnnotationForm product={pid} savedQueries={saved} onCreated={created} />
        </section>
      ) : null}

      <div class="section-head">
        <label class="switcher">
          <span class="label">Show</span>
          <select
            aria-label="Show annotations of"
            value={queryId === undefined ? "" : String(queryId)}
            onChange={(e) => {
              const v = e.currentTarget.value;
              setQuery({ query: v || null, page: null });
            }}
          >
            <option value="">Workspace annotations</option>
            {saved.map((q) => (
              <option key={q.id} value={q.id}>
                Workspace + “{q.name}”
              </option>
            ))}
          </select>
        </label>
        <div class="actions">
          {canDelete ? (
            <button
              type="button"
              class="button danger"
              disabled={selected.size === 0}
              onClick={() => setConfirm({ ids: [...selected], label: plural(selected.size, "annotation") })}
            >
              Delete selected ({selected.size})
            </button>
          ) : null}
          <a class="button secondary" href={annotationsExportUrl(pid, queryId)} download="annotations.csv">
            Export CSV
          </a>
        </div>
      </div>
      <Notice notice={notice} />

      {list.state === "loading" ? <Skeleton rows={5} label="Loading annotations…" /> : null}
      {list.state === "failed" ? <ErrorState message={list.error} onRetry={reload} /> : null}
      {list.state === "done" && total === 0 ? (
        <div class="empty-state" data-testid="no-annotations">
          <p>No annotations yet.</p>
          <p class="muted">Add one above, or click a point on a Trends chart, to mark a deploy, a campaign or an incident.</p>
        </div>
      ) : null}
      {list.state === "done" && total > 0 ? (
        <>
          <Table
            label="Annotations"
            actions={canDelete}
            head={
              <>
                {canDelete ? (
                  <th scope="col" class="check">
                    <input type="checkbox" aria-label="Select all on this page" checked={allChecked} onChange={toggleAll} />
                  </th>
                ) : null}
                <th scope="col">Date (UTC)</th>
                <th scope="col">Label</th>
                <th scope="col">Shown on</th>
                <th scope="col">Created by</th>
              </>
            }
          >
            {items.map((a) => (
              <tr key={a.id} data-testid="annotation-row">
                {canDelete ? (
                  <td class="check">
                    <input type="checkbox" aria-label={`Select ${a.label}`} checked={selected.has(a.id)} onChange={() => toggle(a.id)} />
                  </td>
                ) : null}
                <td>{when(a.date)}</td>
                <td>
                  <span class="dot" style={{ background: annotationColors[a.color] }} title={capitalise(a.color)} />
                  <strong>{a.label}</strong>
                  {a.description ? <div class="hint">{a.description}</div> : null}
                </td>
                <td>{a.scope === "workspace" ? "Every chart" : queryName(a.queryId)}</td>
                <td>{a.createdBy}</td>
                {canDelete ? (
                  <RowActions>
                    <button
                      type="button"
                      class="button danger small"
                      aria-label={`Delete ${a.label}`}
                      onClick={() => setConfirm({ ids: [a.id], label: `“${a.label}”` })}
                    >
                      Delete
                    </button>
                  </RowActions>
                ) : null}
              </tr>
            ))}
          </Table>
          <nav class="pager" aria-label="Pages">
            <button type="button" class="button secondary small" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>
              Page {page} of {pages} · {plural(total, "annotation")}
            </span>
            <button type="button" class="button secondary small" disabled={page >= pages} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        </>
      ) : null}
      {confirm ? (
        <ConfirmDialog title={`Delete ${confirm.label}?`} confirmLabel="Delete" busy={busy !== null} onConfirm={remove} onCancel={() => setConfirm(null)}>
          <p>They disappear from every chart. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
