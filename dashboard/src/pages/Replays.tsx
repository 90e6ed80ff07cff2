import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { DateRange } from "../range";
import { useQueryState } from "../router";
import type { Product, ReplaySession } from "../types";

/** duration writes a session's length as 1 h 2 min, 3 min 4 s or 5 s. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * replayHref is the player page of a session; `at`, an event's time (an
 * ISO string or milliseconds since 1970), opens it at that moment as `t`,
 * in milliseconds since 1970 (docs/replay.md, "Links to a moment"). An
 * absolute time, not an offset, so that the player can tell when the pages
 * of chunks it has read reach it.
 */
export function replayHref(productId: number, sessionId: string, at?: string | number): string {
  const base = `/replays/${encodeURIComponent(sessionId)}?product=${productId}`;
  const t = typeof at === "string" ? Date.parse(at) : at;
  return t !== undefined && Number.isFinite(t) && t >= 0 ? `${base}&t=${Math.round(t)}` : base;
}

/** userHref is a user's page (src/pages/Person.tsx): a distinct_id, escaped, since it may hold any character. */
export function userHref(productId: number, distinctId: string): string {
  return `/users/${encodeURIComponent(distinctId)}?product=${productId}`;
}

/**
 * Replays lists the product's recorded sessions over the date range, latest
 * first, by user when one is typed (docs/replay.md), each start opening the
 * player and each user their page (their events and replays); a user's
 * sessions can all be deleted at once (a privacy request).
 */
export function Replays(props: { product: Product | null; range: DateRange }) {
  if (!props.product) return <NoProduct />;
  return <ReplayList key={props.product.id} product={props.product} range={props.range} />;
}

function ReplayList(props: { product: Product; range: DateRange }) {
  const pid = props.product.id;
  // The user shown is the URL's ?distinct_id= (a user's page links here
  // with it); the box holds what is being typed until Show.
  const [user, setUser] = useQueryState("distinct_id", "");
  const [typed, setTyped] = useState(user);
  useEffect(() => setTyped(user), [user]);
  const [confirm, setConfirm] = useState(false);
  const { busy, notice, run } = useAction<"delete">();
  const canDelete = useAllows("admin");
  const [loaded, reload] = useLoad(() => api.replays(pid, { distinctId: user, from: props.range.from, to: props.range.to }), [
    pid,
    user,
    props.range.from,
    props.range.to,
  ]);
  const deleteAll = () =>
    run("delete", async () => {
      const out = await api.deleteUserReplays(pid, user);
      setConfirm(false);
      reload();
      return `Deleted ${out.deleted} ${out.deleted === 1 ? "session" : "sessions"} of ${user}.`;
    });
  return (
    <section class="page">
      <div class="section-head">
        <h1>Replays</h1>
      </div>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setUser(typed.trim());
        }}
      >
        <label>
          User <input type="search" value={typed} placeholder="distinct_id" onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <button type="submit" class="button secondary">
          Show
        </button>
        {user && canDelete && (
          <button type="button" class="button danger" onClick={() => setConfirm(true)}>
            Delete all of {user}'s replays…
          </button>
        )}
      </form>
      <Notice notice={notice} />
      {loaded.state === "failed" ? (
        <ErrorState message={loaded.error} onRetry={reload} />
      ) : loaded.state !== "done" ? (
        <Skeleton rows={5} label="Loading the replays…" />
      ) : loaded.data.items.length === 0 ? (
        <div class="empty-state" data-testid="no-replays">
          <p>No recorded session{user ? ` of ${user}` : ""} in this date range.</p>
          <p class="muted">
            Sessions are recorded on pages whose SDK has <code>replayEnabled: true</code>.
          </p>
        </div>
      ) : (
        <SessionsTable product={pid} sessions={loaded.data.items} withUser testid="replays" />
      )}
      {confirm && (
        <ConfirmDialog title={`Delete every replay of ${user}?`} confirmLabel="Delete replays" busy={busy !== null} onConfirm={deleteAll} onCancel={() => setConfirm(false)}>
          <p>Every recorded session in which this user appears is deleted for good. Their events stay.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/**
 * SessionsTable lists recorded sessions, each start opening the player;
 * withUser adds a first column with each session's user, linking their
 * page.
 */
export function SessionsTable(props: { product: number; sessions: ReplaySession[]; withUser?: boolean; testid: string }) {
  return (
    <div class="table-scroll">
      <table class="table" data-testid={props.testid}>
        <thead>
          <tr>
            {props.withUser ? <th>User</th> : null}
            <th>Start</th>
            <th class="num">Duration</th>
            <th class="num">Pages</th>
            <th class="num">Clicks</th>
            <th class="num">Errors</th>
          </tr>
        </thead>
        <tbody>
          {props.sessions.map((s) => (
            <tr key={s.sessionId}>
              {props.withUser ? (
                <td>
                  <Link href={userHref(props.product, s.distinctId)} title="The user's events and replays">
                    {s.distinctId}
                  </Link>
                </td>
              ) : null}
              <td>
                <Link href={replayHref(props.product, s.sessionId)} reload title="Play this session">
                  <time dateTime={s.start}>{when(s.start)}</time>
                </Link>
              </td>
              <td class="num">{duration(s.durationMs)}</td>
              <td class="num">{s.pages}</td>
              <td class="num">{s.clicks}</td>
              <td class="num">{s.errors}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
