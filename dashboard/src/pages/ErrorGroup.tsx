import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "../api";
import { num } from "../charts/time";
import { Crumb, ItemHead } from "../components/ItemHead";
import { Link } from "../components/Link";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { RowActions, Table } from "../components/Table";
import { searchWithEnv } from "../dataEnv";
import { plural, when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import { during, searchWithRange, type DateRange } from "../range";
import type { DataEnv, ErrorFrame, ErrorGroup, ErrorGroupDetail, ErrorOccurrence, ErrorStatus, MergedErrorGroup, Product } from "../types";
import { ErrorStatusPill, RegressedBadge } from "./Errors";
import { replayHref, userHref } from "./Replays";

/** The status changes a group offers, as buttons: every status but its own. */
const changes: { status: ErrorStatus; label: string }[] = [
  { status: "resolved", label: "Resolve…" },
  { status: "ignored", label: "Ignore" },
  { status: "open", label: "Reopen" },
];

/** frameLocation writes where a frame is: file:line:column, each part when known. */
export function frameLocation(f: Pick<ErrorFrame, "file" | "line" | "column">): string {
  let s = f.file || "(unknown file)";
  if (f.line) s += `:${f.line}`;
  if (f.line && f.column) s += `:${f.column}`;
  return s;
}

/**
 * ErrorGroupPage is one error group over the page's date range: its type,
 * message, counts and status, with Resolve (in a release, asked for) /
 * Ignore / Reopen, then its latest occurrences, newest first, each with
 * its frames: de-minified ones with the source line, minified ones with
 * why they stayed so, and the raw stack on request. The fingerprints
 * merged into it are listed under "Merged groups", each with Unmerge.
 */
export function ErrorGroupPage(props: { product: Product | null; fingerprint: string; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <GroupView key={`${props.product.id}/${props.fingerprint}`} {...props} product={props.product} />;
}

function GroupView(props: { product: Product; fingerprint: string; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const { from, to } = props.range;
  // null: the range holds no event of the group (404 error_group_not_found).
  const [loaded, reload] = useLoad<ErrorGroupDetail | null>(
    () => api.errorGroup(pid, props.fingerprint, { from, to }, props.env).catch((e) => (isGroupMissing(e) ? null : Promise.reject(e))),
    [pid, props.fingerprint, from, to, props.env],
  );
  // The status as the last change left it, over the one loaded.
  const [changed, setChanged] = useState<Pick<ErrorGroup, "status" | "resolvedRelease"> | null>(null);
  const [resolving, setResolving] = useState(false);
  const action = useAction<ErrorStatus>();
  // Resolving, ignoring and reopening need the member role.
  const canWrite = useAllows("member");
  const busy = action.busy !== null;
  const resolveButton = useRef<HTMLButtonElement>(null);
  const list = `/errors?${searchWithEnv(searchWithRange(new URLSearchParams({ product: String(pid) }), props.range), props.env)}`;

  if (loaded.state === "loading" || loaded.state === "idle") return <Skeleton rows={6} label="Loading the error…" />;
  if (loaded.state === "failed" || !loaded.data) {
    return (
      <section class="page">
        <Crumb href={list}>Errors</Crumb>
        <h1>Error</h1>
        {loaded.state === "failed" ? (
          <ErrorState message={loaded.error} onRetry={reload} />
        ) : (
          <div class="empty-state" data-testid="no-group-events">
            <p>This error has no event {during(props.range)}.</p>
            <p class="muted">Pick a longer date range, or go back to the list of errors.</p>
          </div>
        )}
      </section>
    );
  }
  const { group, occurrences } = loaded.data;
  const status = changed ?? group;
  // A change answers for the group as it is now: whatever regression the
  // list saw has been dealt with.
  const regressed = !changed && group.regressed;
  const newest = [...occurrences].sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
  const latestRelease = newest.find((o) => o.release)?.release ?? "";

  const change = (to: ErrorStatus, release?: string) =>
    action.run(to, async () => {
      const out = await api.setErrorStatus(pid, props.fingerprint, to, release);
      setChanged({ status: out.status, resolvedRelease: out.resolvedRelease });
      setResolving(false);
      return changedText(out.status, out.resolvedRelease);
    });

  // Cancel gives focus back to the button that opened the form.
  const cancelResolve = () => {
    setResolving(false);
    setTimeout(() => resolveButton.current?.focus(), 0);
  };

  return (
    <section class="page">
      <ItemHead
        list={list}
        listLabel="Errors"
        title={
          <>
            <code>{group.type || "Error"}</code>
          </>
        }
        actions={
          <>
            {changes
              .filter((c) => canWrite && c.status !== status.status)
              .map((c) => (
                <button
                  key={c.status}
                  ref={c.status === "resolved" ? resolveButton : undefined}
                  type="button"
                  class={`button${c.status === "resolved" ? "" : " secondary"}`}
                  disabled={busy}
                  aria-expanded={c.status === "resolved" ? (resolving ? "true" : "false") : undefined}
                  onClick={() => (c.status === "resolved" ? setResolving(true) : void change(c.status))}
                >
                  {c.label}
                </button>
              ))}
          </>
        }
      />
      <p class="error-full-message" data-testid="error-message">
        {group.message || "(no message)"}
      </p>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <ErrorStatusPill group={status} />
            {regressed ? (
              <>
                {" "}
                <RegressedBadge />
              </>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd>{num(group.events)}</dd>
        </div>
        <div>
          <dt>Users</dt>
          <dd>{num(group.users)}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{when(group.firstSeen)}</dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>{when(group.lastSeen)}</dd>
        </div>
        <div>
          <dt>Fingerprint</dt>
          <dd class="fingerprint" title={props.fingerprint}>
            <code>{props.fingerprint}</code>
          </dd>
        </div>
      </dl>
      <p class="hint">Counted {during(props.range)}.</p>
      {resolving ? (
        <ResolveForm latest={latestRelease} busy={busy} onResolve={(r) => void change("resolved", r)} onCancel={cancelResolve} />
      ) : null}
      <Notice notice={action.notice} />

      {loaded.data.merged.length > 0 ? (
        <MergedGroups
          merged={loaded.data.merged}
          product={pid}
          range={props.range}
          onUnmerged={(text) => {
            action.setNotice({ ok: text });
            reload();
          }}
        />
      ) : null}

      <h2 class="sub">Latest occurrences</h2>
      <p class="hint">
        {occurrencesText(newest.length, group.events)} {during(props.range)}
        {newest.length > 1 ? ", newest first" : ""}.
      </p>
      <ol class="occurrences">
        {newest.map((o, i) => (
          <Occurrence key={`${o.time}/${i}`} occurrence={o} index={i} productId={pid} />
        ))}
      </ol>
    </section>
  );
}

/**
 * MergedGroups lists the fingerprints merged into the group, newest first:
 * by a person on the Errors page, or by ingest when a release's sourcemap
 * arrived after its first errors. Unmerge, after a confirmation, takes
 * one out through POST /api/v1/errors/unmerge: its events, all of them,
 * count in its own group again, which is back on the Errors page with the
 * status it had before, and this group's counts drop by them. The page
 * says what was unmerged (onUnmerged), as this list goes with the last
 * merged group.
 */
function MergedGroups(props: { merged: MergedErrorGroup[]; product: number; range: DateRange; onUnmerged: (text: string) => void }) {
  const [confirm, setConfirm] = useState<MergedErrorGroup | null>(null);
  const { busy, notice, run } = useAction<string>();
  // Unmerging needs the member role; without it the list only reads.
  const canWrite = useAllows("member");
  const unmerge = async () => {
    const m = confirm;
    if (!m) return;
    await run(m.fingerprint, async () => {
      await api.unmergeErrorGroups(props.product, [m.fingerprint]);
      props.onUnmerged(`Unmerged “${describeMerged(m)}”: it is its own group again, on the Errors page.`);
    });
    setConfirm(null);
  };
  return (
    <>
      <h2 class="sub">Merged groups</h2>
      <p class="hint">
        {props.merged.length === 1 ? "One fingerprint counts" : `${num(props.merged.length)} fingerprints count`} in this group. Their own events{" "}
        {during(props.range)} are counted above too.
      </p>
      <Notice notice={notice} />
      <Table
        label="Merged groups"
        class="table merged-groups"
        actions={canWrite}
        head={
          <>
            <th scope="col">Error</th>
            <th scope="col" class="num">
              Events
            </th>
            <th scope="col" class="merged-by">
              Merged
            </th>
          </>
        }
      >
        {props.merged.map((m) => (
          <tr key={m.fingerprint} data-testid="merged-group">
            <td class="error-message">
              <span class="merged-error" title={m.message || undefined}>
                {m.type ? <code>{m.type}</code> : null} {m.message || <span class="muted">(no event {during(props.range)})</span>}
              </span>
              <code class="merged-fingerprint" title={m.fingerprint}>
                {m.fingerprint}
              </code>
            </td>
            <td class="num">{num(m.events)}</td>
            <td class="merged-by">
              {m.reason === "sourcemap" ? "By ingest, for a late sourcemap" : `By ${m.mergedBy}`}
              <div class="hint">{when(m.mergedAt)}</div>
            </td>
            {canWrite ? (
              <RowActions>
                <button
                  type="button"
                  class="button secondary small"
                  disabled={busy !== null}
                  aria-label={`Unmerge ${describeMerged(m)}`}
                  onClick={() => setConfirm(m)}
                >
                  Unmerge
                </button>
              </RowActions>
            ) : null}
          </tr>
        ))}
      </Table>
      {confirm ? (
        <ConfirmDialog title="Unmerge this group?" confirmLabel="Unmerge" busy={busy !== null} onConfirm={unmerge} onCancel={() => setConfirm(null)}>
          <p>
            <code>{confirm.type || "Error"}</code> {confirm.message || "(no message)"}
          </p>
          <p>
            Its events, those received and those to come, will count in its own group again, with the status it had before
            the merge; this group loses them.
          </p>
          {confirm.reason === "sourcemap" ? (
            <p class="muted">
              Ingest merged it when the release's sourcemap arrived after its first, minified errors. Unmerged, it stays apart.
            </p>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/** describeMerged names a merged fingerprint by its message, else by its start. */
function describeMerged(m: MergedErrorGroup): string {
  return m.message || m.type || `${m.fingerprint.slice(0, 12)}…`;
}

/** occurrencesText says which occurrences are shown: all of them, or the latest (the API sends at most 50). */
function occurrencesText(shown: number, events: number): string {
  if (shown < events) return `The ${num(shown)} latest of ${plural(events, "occurrence")}`;
  return shown === 1 ? "The only occurrence" : `All ${num(shown)} occurrences`;
}

/** changedText says what a status change did. */
function changedText(status: ErrorStatus, release: string): string {
  if (status === "resolved") {
    return `Resolved${release ? ` in release ${release}` : ""}. An event of another release from now on reopens it as a regression.`;
  }
  if (status === "ignored") return "Ignored: it leaves the open list, and new events do not bring it back.";
  return "Reopened.";
}

/**
 * ResolveForm asks which release fixed the error, starting from the
 * release of its latest occurrence. Empty, the server takes the latest
 * release the group was seen in. Escape, like Cancel, closes it.
 */
function ResolveForm(props: { latest: string; busy: boolean; onResolve: (release: string) => void; onCancel: () => void }) {
  const [release, setRelease] = useState(props.latest);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    props.onResolve(release.trim());
  };
  return (
    <form
      class="card inline-form"
      aria-label="Resolve"
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key === "Escape") props.onCancel();
      }}
    >
      <label>
        Fixed in release
        <input ref={input} name="release" value={release} maxLength={200} aria-describedby="resolve-hint" onInput={(e) => setRelease(e.currentTarget.value)} />
      </label>
      <button type="button" class="button secondary" onClick={props.onCancel}>
        Cancel
      </button>
      <button type="submit" class="button" disabled={props.busy}>
        Resolve
      </button>
      <p class="hint full" id="resolve-hint">
        An event of another release after now reopens the error as a regression. Empty: the latest release it was seen in.
      </p>
    </form>
  );
}

/**
 * Occurrence is one event of the group: when, who, where and which
 * release, then its stack. The newest shows its frames open.
 */
function Occurrence(props: { occurrence: ErrorOccurrence; index: number; productId: number }) {
  const o = props.occurrence;
  return (
    <li class="card occurrence" data-testid="occurrence">
      <h3>
        <time dateTime={o.time}>{when(o.time)}</time>
      </h3>
      <dl class="facts compact">
        <div>
          <dt>User</dt>
          <dd>{o.distinctId ? <Link href={userHref(props.productId, o.distinctId)}>{o.distinctId}</Link> : "—"}</dd>
        </div>
        <div>
          <dt>Browser</dt>
          <dd>{o.browser || "—"}</dd>
        </div>
        <div>
          <dt>OS</dt>
          <dd>{o.os || "—"}</dd>
        </div>
        <div>
          <dt>Release</dt>
          <dd>{o.release ? <code>{o.release}</code> : "—"}</dd>
        </div>
        <div class="wide">
          <dt>URL</dt>
          <dd class="url">{o.url || "—"}</dd>
        </div>
        {o.sessionId && (
          <div>
            <dt>Replay</dt>
            <dd>
              <Link href={replayHref(props.productId, o.sessionId, o.time)} reload title="Opens the replay just before this error">
                Watch the session
              </Link>
            </dd>
          </div>
        )}
      </dl>
      <details open={props.index === 0}>
        <summary>
          Stack: {plural(o.frames.length, "frame")}
        </summary>
        <Frames occurrence={o} id={`occurrence-${props.index}`} />
      </details>
    </li>
  );
}

/**
 * stayedMinified says whether a frame is one a sourcemap would make
 * readable: the server marks those (`minified`), so that an inline
 * script's or a hand-written file's frame is not called minified. Events
 * stored before the mark existed have none: every unresolved frame then.
 */
export function stayedMinified(f: ErrorFrame): boolean {
  return f.minified ?? !f.resolved;
}

/**
 * Frames lists an occurrence's frames, top first. A de-minified frame
 * shows its original function, file:line:column and source line; a frame
 * that stayed minified shows where it is in the minified file, and the
 * occurrence says once why (no sourcemap for the release, …). The raw
 * stack, as sent, is one click away.
 */
function Frames(props: { occurrence: ErrorOccurrence; id: string }) {
  const o = props.occurrence;
  const [raw, setRaw] = useState(false);
  const rawId = `${props.id}-stack`;
  return (
    <div class="stack">
      {o.resolution ? (
        <p class="notice resolution" data-testid="resolution">
          Some frames stay minified: {o.resolution}.
        </p>
      ) : null}
      {o.frames.length === 0 ? <p class="empty">No frame could be read from this stack; the raw stack has what was sent.</p> : null}
      <ol class="frames">
        {o.frames.map((f, i) => (
          <li key={i} class={`frame${f.in_app ? "" : " external"}${f.resolved ? " resolved" : ""}`} data-testid="frame">
            <div class="frame-head">
              <code class="frame-function">{f.function || "(anonymous)"}</code>
              <span class="frame-location">{frameLocation(f)}</span>
              {!f.in_app ? <span class="tag">not app code</span> : stayedMinified(f) ? <span class="tag">minified</span> : null}
            </div>
            {f.resolved && f.source_line ? (
              <pre class="source-line" aria-label={`Line ${f.line ?? ""} of ${f.file}`}>
                <code>{f.source_line.trim()}</code>
              </pre>
            ) : null}
          </li>
        ))}
      </ol>
      {o.stack ? (
        <>
          <button type="button" class="button secondary small" aria-expanded={raw ? "true" : "false"} aria-controls={rawId} onClick={() => setRaw(!raw)}>
            {raw ? "Hide the raw stack" : "Show the raw stack"}
          </button>
          {raw ? (
            <pre class="raw-stack" id={rawId}>
              <code>{o.stack}</code>
            </pre>
          ) : null}
        </>
      ) : null}
    </div>
  );
}

/** isGroupMissing tells a group with no event in the range from other failures. */
export function isGroupMissing(e: unknown): boolean {
  return e instanceof ApiError && e.code === "error_group_not_found";
}
