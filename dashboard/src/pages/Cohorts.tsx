import { useEffect, useState } from "preact/hooks";
import { api, fieldError, message } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { EventList, useEventNamesResult } from "../components/EventInput";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { plural, when } from "../format";
import { useLoad } from "../load";
import { isoDay } from "../range";
import { useAllows } from "../roles";
import { navigate } from "../router";
import type { CohortCondition, CohortDefinition, CohortMembersPage, Product, SavedCohort } from "../types";
import { needsValue, PERSON_OPERATORS, type PersonOperator } from "./People";
import { userHref } from "./Replays";

/** ConditionDraft is one row of the definition editor, every field as typed. */
export interface ConditionDraft {
  type: "property" | "behavior";
  key: string;
  operator: PersonOperator;
  value: string;
  performed: boolean;
  event: string;
  atLeast: string;
  days: string;
}

/** A new row: "did EVENT at least once in the last 7 days". */
export const newCondition = (type: ConditionDraft["type"] = "behavior"): ConditionDraft => ({
  type, key: "", operator: "eq", value: "", performed: true, event: "", atLeast: "1", days: "7",
});

/** definitionDraft reads a stored definition into the editor's rows: groups of conditions. */
export function definitionDraft(d: CohortDefinition | null | undefined): ConditionDraft[][] {
  if (!d?.groups?.length) return [[newCondition()]];
  return d.groups.map((g) =>
    g.conditions.map((c) =>
      c.type === "property"
        ? { ...newCondition("property"), key: c.key ?? "", operator: (c.operator ?? "eq") as PersonOperator, value: c.value ?? "" }
        : { ...newCondition("behavior"), event: c.event ?? "", performed: c.performed !== false, atLeast: String(c.atLeast ?? 1), days: String(c.days ?? 7) },
    ),
  );
}

/** checkDefinition returns why the rows cannot make a definition, or null. */
export function checkDefinition(groups: ConditionDraft[][]): string | null {
  if (groups.length === 0 || groups.some((g) => g.length === 0)) return "Every group needs a condition.";
  for (const g of groups)
    for (const c of g) {
      if (c.type === "property") {
        if (!c.key.trim()) return "Every property condition needs a property.";
        continue;
      }
      if (!c.event.trim()) return "Every behaviour condition needs an event.";
      if (!/^[1-9]\d*$/.test(c.atLeast)) return "“At least” is a whole number from 1.";
      if (!/^[1-9]\d*$/.test(c.days) || Number(c.days) > 365) return "The days are a whole number from 1 to 365.";
    }
  return null;
}

/** definitionRequest is the rows as the API takes them. */
export function definitionRequest(groups: ConditionDraft[][]): CohortDefinition {
  return {
    groups: groups.map((g) => ({
      conditions: g.map((c): CohortCondition =>
        c.type === "property"
          ? needsValue(c.operator)
            ? { type: "property", key: c.key.trim(), operator: c.operator, value: c.value }
            : { type: "property", key: c.key.trim(), operator: c.operator }
          : { type: "behavior", event: c.event.trim(), performed: c.performed, atLeast: Number(c.atLeast), days: Number(c.days) },
      ),
    })),
  };
}

/** The people list's operators as the editor reads them. */
const operatorLabels: Record<PersonOperator, string> = { eq: "equals", neq: "does not equal", contains: "contains", is_set: "is set", is_not_set: "is not set" };

/**
 * DefinitionEditor edits a dynamic cohort's definition: groups (any of
 * which makes a member) of conditions (all of which must hold), each a
 * person property compared as the people list does, or "did / did not do
 * EVENT at least N times in the last D days". Event names are suggested
 * from the product's (the datalist named list).
 */
export function DefinitionEditor(props: { groups: ConditionDraft[][]; onChange: (g: ConditionDraft[][]) => void; list: string }) {
  const { groups } = props;
  const setC = (gi: number, ci: number, patch: Partial<ConditionDraft>) =>
    props.onChange(groups.map((g, i) => (i !== gi ? g : g.map((c, j) => (j === ci ? { ...c, ...patch } : c)))));
  return (
    <div class="cohort-groups">
      {groups.map((g, gi) => (
        <fieldset key={gi} class="cohort-group" aria-label={`Group ${gi + 1}`}>
          <legend>{gi === 0 ? "People who match all of" : "Or people who match all of"}</legend>
          <ul class="rows">
            {g.map((c, ci) => {
              const label = `Group ${gi + 1} condition ${ci + 1}`;
              return (
                <li key={ci} class="row">
                  <select aria-label={`${label} type`} value={c.type} onChange={(e) => setC(gi, ci, { type: e.currentTarget.value as ConditionDraft["type"] })}>
                    <option value="behavior">Behaviour</option>
                    <option value="property">Property</option>
                  </select>
                  {c.type === "property" ? (
                    <>
                      <input type="text" aria-label={`${label} property`} placeholder="plan" value={c.key} onInput={(e) => setC(gi, ci, { key: e.currentTarget.value })} />
                      <select aria-label={`${label} operator`} value={c.operator} onChange={(e) => setC(gi, ci, { operator: e.currentTarget.value as PersonOperator })}>
                        {PERSON_OPERATORS.map((o) => (
                          <option key={o} value={o}>
                            {operatorLabels[o]}
                          </option>
                        ))}
                      </select>
                      {needsValue(c.operator) ? (
                        <input type="text" aria-label={`${label} value`} value={c.value} onInput={(e) => setC(gi, ci, { value: e.currentTarget.value })} />
                      ) : null}
                    </>
                  ) : (
                    <>
                      <select aria-label={`${label} performed`} value={c.performed ? "did" : "did_not"} onChange={(e) => setC(gi, ci, { performed: e.currentTarget.value === "did" })}>
                        <option value="did">did</option>
                        <option value="did_not">did not do</option>
                      </select>
                      <input type="text" aria-label={`${label} event`} placeholder="signup" list={props.list} value={c.event} onInput={(e) => setC(gi, ci, { event: e.currentTarget.value })} />
                      <label class="compact">
                        at least
                        <input type="number" min={1} class="narrow" aria-label={`${label} at least`} value={c.atLeast} onInput={(e) => setC(gi, ci, { atLeast: e.currentTarget.value })} />
                        times in the last
                        <input type="number" min={1} max={365} class="narrow" aria-label={`${label} days`} value={c.days} onInput={(e) => setC(gi, ci, { days: e.currentTarget.value })} />
                        days
                      </label>
                    </>
                  )}
                  <button
                    type="button"
                    class="icon-button"
                    aria-label={`Remove ${label.toLowerCase()}`}
                    disabled={groups.length === 1 && g.length === 1}
                    onClick={() => props.onChange(groups.map((x, i) => (i === gi ? x.filter((_, j) => j !== ci) : x)).filter((x) => x.length > 0))}
                  >
                    ✕
                  </button>
                </li>
              );
            })}
          </ul>
          <button type="button" class="button secondary small" disabled={g.length >= 10} onClick={() => props.onChange(groups.map((x, i) => (i === gi ? [...x, newCondition()] : x)))}>
            Add condition to group {gi + 1}
          </button>
        </fieldset>
      ))}
      <button type="button" class="button secondary small" disabled={groups.length >= 10} onClick={() => props.onChange([...groups, [newCondition()]])}>
        Add a group (or)
      </button>
    </div>
  );
}

/** stateText is a cohort's state as the pages show it. */
export function stateText(c: SavedCohort): string {
  switch (c.state) {
    case "computing":
      return "Computing…";
    case "failed":
      return `Failed: ${c.error}`;
    case "pending":
      return c.kind === "static" ? "No members uploaded" : "Waiting to compute";
  }
  return "Ready";
}

/**
 * Cohorts is /cohorts and /cohorts/{id} (docs/dashboard.md, "Cohorts"):
 * the product's cohorts with a form for a new one, and one cohort's page.
 */
export function Cohorts(props: { product: Product | null; path: string }) {
  if (!props.product) return <NoProduct />;
  const m = /^\/cohorts\/(\d+)$/.exec(props.path);
  if (m) return <CohortPage key={m[1]} product={props.product} id={Number(m[1])} />;
  return <CohortList key={props.product.id} product={props.product} />;
}

function CohortList(props: { product: Product }) {
  const pid = props.product.id;
  const canWrite = useAllows("member");
  const [list, retry] = useLoad(() => api.cohorts(pid), [pid]);
  const [creating, setCreating] = useState(false);
  return (
    <section class="page">
      <h1>Cohorts</h1>
      <p class="hint">Saved groups of people: dynamic ones follow a rule and are recomputed every hour, static ones are a list you upload. Filter any chart by a cohort with the filter property “cohort”.</p>
      {canWrite && !creating ? (
        <button type="button" class="button" onClick={() => setCreating(true)}>
          New cohort
        </button>
      ) : null}
      {creating ? <NewCohort product={props.product} onCancel={() => setCreating(false)} /> : null}
      <section class="card">
        {list.state === "loading" ? <Skeleton rows={4} label="Loading cohorts…" /> : null}
        {list.state === "failed" ? <ErrorState message={list.error} onRetry={retry} /> : null}
        {list.state === "done" && list.data.items.length === 0 ? <p class="empty">No cohort yet.</p> : null}
        {list.state === "done" && list.data.items.length > 0 ? (
          <div class="table-scroll">
            <table class="data-table" aria-label="Cohorts">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Kind</th>
                  <th class="num">People</th>
                  <th>State</th>
                  <th>Computed</th>
                  <th>Created by</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <Link href={`/cohorts/${c.id}?product=${pid}`}>{c.name}</Link>
                    </td>
                    <td>{c.kind === "static" ? "Static" : "Dynamic"}</td>
                    <td class="num">{c.size.toLocaleString()}</td>
                    <td>{stateText(c)}</td>
                    <td>{when(c.computedAt)}</td>
                    <td>{c.createdBy}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </section>
  );
}

/** useEventNameList is the product's event names of the last 30 days, for the editor's suggestions. */
function useEventNameList(pid: number) {
  const today = new Date();
  const days = { from: isoDay(new Date(today.getTime() - 30 * 86_400_000)), to: isoDay(today) };
  return useEventNamesResult(pid, days, "live");
}

function NewCohort(props: { product: Product; onCancel: () => void }) {
  const pid = props.product.id;
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [kind, setKind] = useState<"dynamic" | "static">("dynamic");
  const [groups, setGroups] = useState<ConditionDraft[][]>([[newCondition()]]);
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<{ field: string | null; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const names = useEventNameList(pid);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return setError({ field: "name", text: "Give the cohort a name." });
    const bad = kind === "dynamic" ? checkDefinition(groups) : null;
    if (bad) return setError({ field: "definition", text: bad });
    setBusy(true);
    setError(null);
    try {
      const c = await api.createCohort(pid, { name: name.trim(), description, kind, definition: kind === "dynamic" ? definitionRequest(groups) : undefined });
      if (kind === "static" && file) await api.uploadCohort(pid, c.id, file);
      navigate(`/cohorts/${c.id}?product=${pid}`);
    } catch (err) {
      const f = fieldError(err);
      setError(f ? { field: f.field.split(".")[0], text: f.message } : { field: null, text: message(err) });
      setBusy(false);
    }
  };
  const fieldMessage = (field: string) =>
    error?.field === field ? (
      <p class="form-error" role="alert">
        {error.text}
      </p>
    ) : null;
  return (
    <form class="card builder" aria-label="New cohort" onSubmit={submit}>
      <h2>New cohort</h2>
      <label>
        Name
        <input type="text" name="name" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {fieldMessage("name")}
      <label>
        Description
        <input type="text" name="description" maxLength={2000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <fieldset class="inline-form">
        <legend>Kind</legend>
        <label>
          <input type="radio" name="kind" value="dynamic" checked={kind === "dynamic"} onChange={() => setKind("dynamic")} /> Dynamic: people who match a rule
        </label>
        <label>
          <input type="radio" name="kind" value="static" checked={kind === "static"} onChange={() => setKind("static")} /> Static: a list of distinct ids
        </label>
      </fieldset>
      {kind === "dynamic" ? (
        <>
          <EventList id="cohort-events" names={names?.events ?? null} />
          <DefinitionEditor groups={groups} onChange={setGroups} list="cohort-events" />
          {fieldMessage("definition")}
        </>
      ) : (
        <label>
          Members (a CSV of distinct ids: one a line, or a column named distinct_id)
          <input type="file" name="members" accept=".csv,text/csv,text/plain" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
      )}
      {error && error.field !== "name" && error.field !== "definition" ? (
        <p class="form-error" role="alert">
          {error.text}
        </p>
      ) : null}
      <div class="inline-form">
        <button type="submit" class="button" disabled={busy}>
          Create cohort
        </button>
        <button type="button" class="button secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function CohortPage(props: { product: Product; id: number }) {
  const pid = props.product.id;
  const canWrite = useAllows("member");
  const [reloads, setReloads] = useState(0);
  const [shown, retry] = useLoad(() => api.cohort(pid, props.id), [pid, props.id, reloads]);
  const [editing, setEditing] = useState<ConditionDraft[][] | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const names = useEventNameList(pid);
  const c = shown.state === "done" ? shown.data : null;
  // While a computation runs, the cohort is read again every second.
  useEffect(() => {
    if (c?.state !== "computing") return;
    const t = setTimeout(() => setReloads((n) => n + 1), 1000);
    return () => clearTimeout(t);
  }, [c?.state, c?.updatedAt, reloads]);
  if (shown.state === "loading" && !c) return <Skeleton rows={6} label="Loading the cohort…" />;
  if (shown.state === "failed") return <ErrorState message={shown.error} onRetry={retry} />;
  if (!c) return null;
  const act = async (what: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setNotice(null);
    try {
      await what();
      setNotice(done);
      setReloads((n) => n + 1);
    } catch (err) {
      setNotice(message(err));
    }
    setBusy(false);
  };
  return (
    <section class="page">
      <p>
        <Link href={`/cohorts?product=${pid}`}>← Cohorts</Link>
      </p>
      <h1>{c.name}</h1>
      {c.description ? <p>{c.description}</p> : null}
      <section class="card">
        <dl class="facts">
          <div>
            <dt>Kind</dt>
            <dd>{c.kind === "static" ? "Static" : "Dynamic"}</dd>
          </div>
          <div>
            <dt>People</dt>
            <dd data-testid="cohort-size">{plural(c.size, "person", "people")}</dd>
          </div>
          <div>
            <dt>State</dt>
            <dd data-testid="cohort-state">{stateText(c)}</dd>
          </div>
          <div>
            <dt>Computed</dt>
            <dd>{when(c.computedAt)}</dd>
          </div>
          <div>
            <dt>Created by</dt>
            <dd>{c.createdBy}</dd>
          </div>
        </dl>
        {notice ? (
          <p class="notice" role="status">
            {notice}
          </p>
        ) : null}
        {canWrite ? (
          <div class="inline-form">
            {c.kind === "dynamic" ? (
              <button type="button" class="button" disabled={busy || c.state === "computing"} onClick={() => act(() => api.computeCohort(pid, c.id), "Recomputing.")}>
                Recompute now
              </button>
            ) : (
              <label class="button secondary">
                Upload a new CSV
                <input
                  type="file"
                  class="visually-hidden"
                  aria-label="Upload a new CSV"
                  accept=".csv,text/csv,text/plain"
                  onChange={(e) => {
                    const f = e.currentTarget.files?.[0];
                    if (f) act(() => api.uploadCohort(pid, c.id, f), "Members uploaded.");
                  }}
                />
              </label>
            )}
            <button type="button" class="button danger" onClick={() => setConfirming(true)}>
              Delete cohort
            </button>
          </div>
        ) : null}
      </section>
      {c.kind === "dynamic" ? (
        <section class="card">
          <h2>Definition</h2>
          <EventList id="cohort-events" names={names?.events ?? null} />
          {editing ? (
            <form
              aria-label="Edit definition"
              onSubmit={(e) => {
                e.preventDefault();
                const bad = checkDefinition(editing);
                if (bad) return setNotice(bad);
                act(() => api.updateCohort(pid, c.id, { name: c.name, description: c.description, definition: definitionRequest(editing) }), "Saved; recomputing.").then(() => setEditing(null));
              }}
            >
              <DefinitionEditor groups={editing} onChange={setEditing} list="cohort-events" />
              <div class="inline-form">
                <button type="submit" class="button" disabled={busy}>
                  Save definition
                </button>
                <button type="button" class="button secondary" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </div>
            </form>
          ) : (
            <>
              <ul class="cohort-rule" aria-label="Definition">
                {definitionDraft(c.definition).map((g, gi) => (
                  <li key={gi}>
                    {gi > 0 ? "or " : ""}
                    {g.map((x) => describeCondition(x)).join(" and ")}
                  </li>
                ))}
              </ul>
              {canWrite ? (
                <button type="button" class="button secondary small" onClick={() => setEditing(definitionDraft(c.definition))}>
                  Edit definition
                </button>
              ) : null}
            </>
          )}
        </section>
      ) : null}
      <Members product={pid} cohort={c} />
      {confirming ? (
        <ConfirmDialog
          title={`Delete “${c.name}”?`}
          confirmLabel="Delete cohort"
          busy={busy}
          onCancel={() => setConfirming(false)}
          onConfirm={async () => {
            setBusy(true);
            try {
              await api.deleteCohort(pid, c.id);
              navigate(`/cohorts?product=${pid}`);
            } catch (err) {
              setNotice(message(err));
              setBusy(false);
              setConfirming(false);
            }
          }}
        >
          <p>Charts filtered by it will stop working. Its people are not deleted.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/** describeCondition writes a condition as a sentence's part. */
export function describeCondition(c: ConditionDraft): string {
  if (c.type === "property") return needsValue(c.operator) ? `${c.key} ${operatorLabels[c.operator]} “${c.value}”` : `${c.key} ${operatorLabels[c.operator]}`;
  const times = c.atLeast === "1" ? "" : ` at least ${c.atLeast} times`;
  return `${c.performed ? "did" : "did not do"} ${c.event}${times} in the last ${plural(Number(c.days), "day")}`;
}

/** Members lists a cohort's current members by pages of 50, each linking to the person's page. */
function Members(props: { product: number; cohort: SavedCohort }) {
  const { product, cohort } = props;
  const [pages, setPages] = useState<CohortMembersPage[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = (cursor?: string) =>
    api.cohortMembers(product, cohort.id, cursor).then(
      (p) => setPages((ps) => (cursor ? [...ps, p] : [p])),
      (e) => setError(message(e)),
    );
  useEffect(() => {
    setPages([]);
    setError(null);
    load();
  }, [product, cohort.id, cohort.generation]);
  const ids = pages.flatMap((p) => p.items);
  const next = pages.length ? pages[pages.length - 1].nextCursor : null;
  return (
    <section class="card">
      <h2>People in the cohort</h2>
      {error ? <p class="form-error">{error}</p> : null}
      {pages.length && ids.length === 0 ? <p class="empty">Nobody yet.</p> : null}
      <ul class="member-list" aria-label="Members">
        {ids.map((id) => (
          <li key={id}>
            <Link href={userHref(product, id)}>{id}</Link>
          </li>
        ))}
      </ul>
      {next ? (
        <button type="button" class="button secondary small" onClick={() => load(next)}>
          More
        </button>
      ) : null}
    </section>
  );
}
