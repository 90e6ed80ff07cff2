import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { SankeyChart } from "../charts/Sankey";
import { num } from "../charts/time";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { plural } from "../format";
import { useLoad } from "../load";
import { nodeLabel, pathBranches, pathsFromSearch, pathsSearch, type PathsDraft } from "../paths";
import { describe as describeRange, type DateRange } from "../range";
import { navigate, setQuery, useLocation } from "../router";
import type { DataEnv, PathsRequest, PathsResult, PathUsersResult, Product } from "../types";

/**
 * Paths shows the most common paths of pages or events (docs/queries.md,
 * "Paths"): after a start, before an end, or from the first node of each
 * user's first visit, a few steps deep, each step's top names kept and the
 * rest grouped as Other. The answer is drawn as a Sankey chart and listed
 * as a table of nodes by step; picking a node (a band of the chart, or its
 * row's button) lists the users who reached it, each linking to their
 * page. The query is in the URL, so a link opens the same paths.
 */
export function Paths(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <PathsPage key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function PathsPage(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const days = { from: props.range.from, to: props.range.to };
  const loc = useLocation();
  const shown = pathsFromSearch(loc.search);
  const [draft, setDraft] = useState<PathsDraft>(shown);
  const shownKey = JSON.stringify(shown);
  useEffect(() => setDraft(shown), [shownKey]);
  const [formError, setFormError] = useState<string | null>(null);
  const [picked, setPicked] = useState<number | null>(null);

  const request: PathsRequest = {
    kind: shown.kind,
    start: shown.anchor === "start" ? shown.name : undefined,
    end: shown.anchor === "end" ? shown.name : undefined,
    depth: shown.depth,
    branches: shown.branches,
    dateFrom: days.from,
    dateTo: days.to,
  };
  const [result, retry] = useLoad<PathsResult>(() => api.paths(pid, request, props.env), [pid, shownKey, days.from, days.to, props.env]);
  useEffect(() => setPicked(null), [shownKey, days.from, days.to, props.env]);

  const run = (e: Event) => {
    e.preventDefault();
    const name = draft.name.trim();
    if (draft.anchor !== "none" && name === "") {
      setFormError(`Name the ${draft.anchor === "start" ? "page or event paths start at" : "page or event paths lead to"}.`);
      return;
    }
    if (!Number.isInteger(draft.branches) || draft.branches < pathBranches.min || draft.branches > pathBranches.max) {
      setFormError(`Branches is a whole number from ${pathBranches.min} to ${pathBranches.max}.`);
      return;
    }
    setFormError(null);
    setQuery(pathsSearch({ ...draft, name }));
  };
  const data = result.state === "done" ? result.data : result.state === "loading" ? result.previous : undefined;
  const what = shown.kind === "event" ? "event" : "page";
  return (
    <section class="page">
      <h1>Paths</h1>
      <form class="card builder" onSubmit={run} aria-label="Paths builder">
        <div class="inline-form">
          <label>
            Nodes
            <select name="kind" value={draft.kind} onChange={(e) => setDraft({ ...draft, kind: e.currentTarget.value as PathsDraft["kind"] })}>
              <option value="pageview">Pages</option>
              <option value="event">Events</option>
            </select>
          </label>
          <label>
            Paths
            <select name="anchor" value={draft.anchor} onChange={(e) => setDraft({ ...draft, anchor: e.currentTarget.value as PathsDraft["anchor"] })}>
              <option value="none">From each visit's start</option>
              <option value="start">Starting at</option>
              <option value="end">Ending at</option>
            </select>
          </label>
          {draft.anchor !== "none" ? (
            <label>
              {draft.kind === "event" ? "Event" : "Page path"}
              <input
                name="node"
                value={draft.name}
                placeholder={draft.kind === "event" ? "signup" : "/pricing"}
                onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
              />
            </label>
          ) : null}
          <label>
            Steps
            <select name="depth" value={String(draft.depth)} onChange={(e) => setDraft({ ...draft, depth: Number(e.currentTarget.value) })}>
              {[2, 3, 4, 5].map((d) => (
                <option key={d} value={String(d)}>
                  {d}
                </option>
              ))}
            </select>
          </label>
          <label>
            Branches
            <input
              type="number"
              name="branches"
              min={pathBranches.min}
              max={pathBranches.max}
              step={1}
              value={String(draft.branches)}
              onInput={(e) => setDraft({ ...draft, branches: Number(e.currentTarget.value) })}
            />
          </label>
          <button type="submit" class="button">
            Show paths
          </button>
        </div>
        <p class="hint">
          One path per user: from their first {shown.anchor === "none" ? what : `“${shown.name}”`} in the range, through that visit (30 minutes without
          activity ends it), a repeated {what} counted once. Each step keeps its {shown.branches} most common {what}s; the rest are “Other”.
        </p>
        {formError ? (
          <p class="form-error" role="alert">
            {formError}
          </p>
        ) : null}
      </form>

      <section class="card" aria-labelledby="paths-result-title">
        <h2 id="paths-result-title">
          Result <span class="hint heading-hint">{describeRange(props.range)}</span>
        </h2>
        {result.state === "failed" ? <ErrorState message={result.error} onRetry={retry} /> : null}
        {result.state === "loading" && !data ? <Skeleton rows={4} label="Finding paths…" /> : null}
        {data ? (
          data.users === 0 ? (
            <p class="empty" data-testid="paths-empty">
              {shown.anchor === "none"
                ? `No ${what} in this range.`
                : `No user reached “${shown.name}” in this range${shown.kind === "pageview" ? " (a page is named by its path, such as /pricing)" : ""}.`}
            </p>
          ) : (
            <div class={result.state === "loading" ? "busy" : ""}>
              <p class="hint" data-testid="paths-users">
                {plural(data.users, "user")} with a path{data.backward ? `, read back from “${shown.name}” (time runs left to right)` : ""}.
              </p>
              <SankeyChart result={data} onPick={setPicked} />
              <NodeTable result={data} picked={picked} onPick={setPicked} />
            </div>
          )
        ) : null}
      </section>
      {data && picked !== null && data.nodes[picked] ? (
        <NodeUsers product={props.product} env={props.env} request={request} result={data} node={picked} onClose={() => setPicked(null)} />
      ) : null}
    </section>
  );
}

/** NodeTable lists every node by step, with its users and drop-off, and a button listing its users. */
function NodeTable(props: { result: PathsResult; picked: number | null; onPick: (i: number) => void }) {
  const r = props.result;
  return (
    <div class="table-scroll">
      <table class="paths-table" data-testid="paths-nodes">
        <caption class="visually-hidden">Nodes of the paths by step</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">{r.kind === "event" ? "Event" : "Page"}</th>
            <th scope="col">Users</th>
            <th scope="col">Stopped here</th>
            <th scope="col">
              <span class="visually-hidden">Users of the node</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {r.nodes.map((n, i) => (
            <tr key={i} data-testid="paths-node" class={props.picked === i ? "selected" : ""}>
              <td class="num">{n.step}</td>
              <th scope="row" class={n.other ? "muted" : ""}>
                {nodeLabel(n)}
              </th>
              <td class="num">{num(n.users)}</td>
              <td class="num">{num(n.dropOff)}</td>
              <td>
                <button type="button" class="button secondary small" onClick={() => props.onPick(i)} aria-label={`Users at step ${n.step}: ${nodeLabel(n)}`}>
                  Users
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** NodeUsers lists the users who reached a node, newest first, a page at a time. */
function NodeUsers(props: { product: Product; env: DataEnv; request: PathsRequest; result: PathsResult; node: number; onClose: () => void }) {
  const n = props.result.nodes[props.node];
  const [pages, setPages] = useState<PathUsersResult[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const key = JSON.stringify([props.request, n.step, n.name, n.other, props.env]);
  useEffect(() => {
    setPages([]);
    setCursor(null);
  }, [key]);
  const [page, retry] = useLoad<PathUsersResult>(
    () => api.pathUsers(props.product.id, { ...props.request, step: n.step, name: n.other ? undefined : n.name, other: n.other || undefined, cursor: cursor ?? undefined }, props.env),
    [key, cursor],
  );
  useEffect(() => {
    if (page.state === "done") setPages((p) => [...p, page.data]);
  }, [page.state === "done" ? page.data : null]);
  const users = pages.flatMap((p) => p.users);
  const next = pages.length ? pages[pages.length - 1].nextCursor : null;
  return (
    <section class="card" aria-labelledby="paths-node-users-title" data-testid="paths-node-users">
      <h2 id="paths-node-users-title">
        Users at step {n.step}: {nodeLabel(n)} <span class="hint heading-hint">{plural(n.users, "user")}, newest first</span>
      </h2>
      {page.state === "failed" ? <ErrorState message={page.error} onRetry={retry} /> : null}
      {page.state === "loading" && users.length === 0 ? <Skeleton rows={3} label="Listing users…" /> : null}
      <ul class="paths-users">
        {users.map((u) => (
          <li key={u.distinctId}>
            <a
              href={u.link}
              onClick={(e) => {
                e.preventDefault();
                navigate(u.link);
              }}
            >
              {u.distinctId}
            </a>{" "}
            <span class="hint">{new Date(u.reachedAt).toLocaleString()}</span>
          </li>
        ))}
      </ul>
      <div class="inline-form">
        {next ? (
          <button type="button" class="button secondary" disabled={page.state === "loading"} onClick={() => setCursor(next)}>
            More users
          </button>
        ) : null}
        <button type="button" class="button secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
    </section>
  );
}
