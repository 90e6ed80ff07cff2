import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, message } from "../api";
import { ItemHead } from "../components/ItemHead";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { when } from "../format";
import { useLoad } from "../load";
import { navigate, positiveInt, setQuery, useQueryState } from "../router";
import type { DataEnv, Person as PersonProfile, Product, UserEvent, UserEventsResult } from "../types";
import { SessionsTable, replayHref, userHref } from "./Replays";

/** EVENT_PAGE is how many of a user's events a page of the table loads. */
export const EVENT_PAGE = 100;

/**
 * MAX_PAGES is how many pages of events one view holds (?pages=, at most
 * 1,000 events). It bounds what a link can make the page fetch: a longer
 * ?pages= is read as MAX_PAGES, and "Load older" past it starts a new view
 * at the older events (?before=) instead of growing this one.
 */
export const MAX_PAGES = 10;

/** pagesParam reads ?pages=: a whole number from 1, MAX_PAGES when larger. */
export function pagesParam(values: string[]): number | null {
  const n = positiveInt(values);
  return n === null ? null : Math.min(n, MAX_PAGES);
}

/** cursorParam reads ?before=: a time the API can take as before, else null (the newest events). */
export function cursorParam(values: string[]): string | null {
  return values.length && !Number.isNaN(Date.parse(values[0])) ? values[0] : null;
}

/** seen is the first and last time among loaded events (newest first, as the API gives them), or null when none. */
export function seen(events: readonly UserEvent[]): { first: string; last: string } | null {
  if (!events.length) return null;
  let first = events[0].timestamp;
  let last = events[0].timestamp;
  for (const e of events) {
    if (Date.parse(e.timestamp) < Date.parse(first)) first = e.timestamp;
    if (Date.parse(e.timestamp) > Date.parse(last)) last = e.timestamp;
  }
  return { first, last };
}

/**
 * appendPage adds an older page to the loaded events. A page never ends
 * inside a microsecond (the API gives those events to the next page), so
 * pages do not overlap; an event already shown is still dropped by uuid,
 * so that a page loaded twice (a double click) cannot repeat rows.
 */
export function appendPage(loaded: readonly UserEvent[], page: readonly UserEvent[]): UserEvent[] {
  const have = new Set(loaded.map((e) => e.uuid));
  return [...loaded, ...page.filter((e) => !have.has(e.uuid))];
}

/** recordedSession is the event's session when it was recorded (one of the user's replays), else null. */
export function recordedSession(e: UserEvent, recorded: ReadonlySet<string>): string | null {
  return e.sessionId && recorded.has(e.sessionId) ? e.sessionId : null;
}

/** platform writes an event's browser and OS, "Firefox / Linux", or "—" when neither is known. */
export function platform(e: Pick<UserEvent, "browser" | "os">): string {
  return [e.browser, e.os].filter(Boolean).join(" / ") || "—";
}

/**
 * FindUser is /users: a search box that opens a user's page by
 * distinct_id. There is no list of users to browse; a user is found from
 * the Replays list, an error's occurrence, or by typing the id.
 */
export function FindUser(props: { product: Product | null; env: DataEnv }) {
  // What is typed stays in the URL (replacing the entry, as any typing
  // does), so that back from the user's page finds it in the box.
  const [typed, setTyped] = useQueryState("distinct_id", "");
  if (!props.product) return <NoProduct />;
  const pid = props.product.id;
  return (
    <section class="page">
      <div class="section-head tight">
        <h1>Users</h1>
      </div>
      <form
        class="inline-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const id = typed.trim();
          if (id) navigate(userHref(pid, id) + envSuffix(props.env));
        }}
      >
        <label>
          Find a user <input type="search" name="distinct_id" value={typed} placeholder="distinct_id" required onInput={(e) => setTyped(e.currentTarget.value, { replace: true })} />
        </label>
        <button type="submit" class="button">
          Open
        </button>
      </form>
      <p class="hint">
        A user is their <code>distinct_id</code>: the id <code>identify()</code> gave them, or the anonymous id the SDK made. Their page shows
        their latest events and recorded sessions. Users are also linked from the <Link href={`/replays?product=${pid}`}>Replays</Link> list.
      </p>
    </section>
  );
}

/** envSuffix is "&env=test" while test data is shown, so that a link keeps it. */
function envSuffix(env: DataEnv): string {
  return env === "test" ? "&env=test" : "";
}

/**
 * PersonPage is /users/{distinctId}: a user's recorded sessions and latest
 * events, newest first with "Load older", an event of a recorded session
 * linking to its replay (docs/dashboard.md, "A user's page").
 */
export function PersonPage(props: { product: Product | null; distinctId: string; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <Person key={`${props.product.id}/${props.distinctId}/${props.env}`} product={props.product} distinctId={props.distinctId} env={props.env} />;
}

/** The pages of a user's events loaded for one view, and whether the next is being fetched or failed. */
interface EventPages {
  pages: UserEventsResult[];
  error: string | null;
  retry: () => void;
}

/**
 * useEventPages loads the first `want` pages of a user's events, newest
 * first from `before` (the newest event when null), one after another,
 * each from the previous page's nextBefore. Pages are kept for the view
 * (the user, env and before), so that back to fewer pages and forward
 * again fetch nothing, and a page asked for twice is fetched once.
 */
function useEventPages(pid: number, id: string, env: DataEnv, before: string | null, want: number): EventPages {
  const key = JSON.stringify([pid, id, env, before]);
  const cache = useRef<{ key: string; pages: UserEventsResult[]; pending: Promise<UserEventsResult>[] }>({ key, pages: [], pending: [] });
  const [, rendered] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (cache.current.key !== key) cache.current = { key, pages: [], pending: [] };
    const c = cache.current;
    let live = true;
    setError(null);
    void (async () => {
      for (let i = c.pages.length; i < want; i++) {
        const prev = c.pages[i - 1];
        if (prev && !prev.nextBefore) return;
        c.pending[i] ??= api.userEvents(pid, id, { env, limit: EVENT_PAGE, before: prev ? prev.nextBefore! : (before ?? undefined) });
        try {
          c.pages[i] = await c.pending[i];
        } catch (err) {
          delete c.pending[i];
          if (live) setError(message(err));
          return;
        }
        if (!live) return;
        rendered((n) => n + 1);
      }
    })();
    return () => void (live = false);
  }, [key, want, tick]);
  const pages = cache.current.key === key ? cache.current.pages.slice(0, want) : [];
  return { pages, error, retry: () => setTick((t) => t + 1) };
}

function Person(props: { product: Product; distinctId: string; env: DataEnv }) {
  const pid = props.product.id;
  const id = props.distinctId;
  // Every session of the user, whatever the date range: the page is about the person.
  const [replays, reloadReplays] = useLoad(() => api.replays(pid, { distinctId: id }), [pid, id]);
  // The view is in the URL: ?pages=N pages from the newest event, or from
  // ?before= once a view has grown to MAX_PAGES (docs/dashboard.md).
  const [before] = useQueryState<string | null>("before", null, cursorParam, (v) => (v ? [v] : []));
  const [want] = useQueryState("pages", 1, pagesParam);
  const loaded = useEventPages(pid, id, props.env, before, want);
  const events = loaded.pages.reduce<UserEvent[]>((list, page) => appendPage(list, page.events), []);
  const last = loaded.pages.at(-1);
  const next = last ? last.nextBefore : null;
  // The pages the URL asks for that are still on their way.
  const busy = !loaded.error && loaded.pages.length < want && (!last || !!last.nextBefore);
  const first = loaded.pages.length ? ("done" as const) : loaded.error ? ("failed" as const) : ("loading" as const);

  const loadOlder = () => {
    if (!next || busy) return;
    // A new history entry, so that back returns to the view before it.
    if (want < MAX_PAGES) setQuery({ pages: String(want + 1) });
    else setQuery({ before: next, pages: null });
  };

  const sessions = replays.state === "done" ? replays.data.items : [];
  const recorded = new Set(sessions.map((s) => s.sessionId));
  const span = seen(events);
  const eventsLoaded = first === "done";
  return (
    <section class="page person">
      <ItemHead list={`/users?product=${pid}${envSuffix(props.env)}`} listLabel="Users" title={id} titleClass="person-id" />
      <dl class="facts compact" data-testid="person-facts">
        <div>
          <dt>{before ? "Last seen (of the events shown)" : "Last seen"}</dt>
          <dd>{eventsLoaded ? span ? <time dateTime={span.last}>{when(span.last)}</time> : "—" : "…"}</dd>
        </div>
        <div>
          <dt>{next ? "First seen (of the events loaded)" : "First seen"}</dt>
          <dd>{eventsLoaded ? span ? <time dateTime={span.first}>{when(span.first)}</time> : "—" : "…"}</dd>
        </div>
        <div>
          <dt>{before ? "Events shown" : "Events"}</dt>
          <dd>{eventsLoaded ? `${events.length}${next ? "+" : ""}` : "…"}</dd>
        </div>
        <div>
          <dt>Recorded sessions</dt>
          <dd>{replays.state === "done" ? sessions.length : "…"}</dd>
        </div>
      </dl>

      <PersonProperties productId={pid} distinctId={id} />

      <h2>Recorded sessions</h2>
      {replays.state === "failed" ? (
        <ErrorState message={replays.error} onRetry={reloadReplays} />
      ) : replays.state !== "done" ? (
        <Skeleton rows={2} label="Loading the user's replays…" />
      ) : sessions.length === 0 ? (
        <p class="muted" data-testid="no-user-replays">
          No recorded session of this user. Sessions are recorded on pages whose SDK has <code>replayEnabled: true</code>.
        </p>
      ) : (
        <SessionsTable product={pid} sessions={sessions} testid="user-replays" />
      )}

      <h2>Events</h2>
      {before ? (
        <p class="hint" data-testid="events-from">
          Events before <time dateTime={before}>{when(before)}</time>.{" "}
          <button type="button" class="link-button" onClick={() => setQuery({ before: null, pages: null })}>
            Show the newest events
          </button>
        </p>
      ) : null}
      {first === "failed" ? (
        <ErrorState message={loaded.error!} onRetry={loaded.retry} />
      ) : first !== "done" ? (
        <Skeleton rows={5} label="Loading the user's events…" />
      ) : events.length === 0 ? (
        <div class="empty-state" data-testid="no-user-events">
          <p>
            No {props.env === "test" ? "test " : ""}events of <strong>{id}</strong> in {props.product.name}.
          </p>
          <p class="muted">The id is matched exactly, as the SDK or your server sent it.</p>
        </div>
      ) : (
        <>
          <div class="table-scroll">
            <table class="table" data-testid="user-events">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Event</th>
                  <th>Path</th>
                  <th>Browser / OS</th>
                  <th>Replay</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => {
                  const session = recordedSession(e, recorded);
                  return (
                    <tr key={e.uuid}>
                      <td>
                        <time dateTime={e.timestamp}>{when(e.timestamp)}</time>
                      </td>
                      <td>
                        <code>{e.name}</code>
                      </td>
                      <td class="url" title={e.url || undefined}>
                        {e.path || "—"}
                      </td>
                      <td>{platform(e)}</td>
                      <td>
                        {session ? (
                          <Link href={replayHref(pid, session, e.timestamp)} reload title={`Play session ${session} from this event`}>
                            Replay
                          </Link>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {loaded.error && <ErrorState message={loaded.error} onRetry={loaded.retry} />}
          {loaded.error ? null : next ? (
            <p>
              <button type="button" class="button secondary" onClick={loadOlder} disabled={busy}>
                {busy ? "Loading…" : "Load older"}
              </button>
            </p>
          ) : (
            <p class="hint" data-testid="events-end">
              {before
                ? "There is no older event."
                : events.length === 1
                  ? "This is the user's only event."
                  : `These are all ${events.length} of the user's events.`}
            </p>
          )}
        </>
      )}
    </section>
  );
}

/**
 * loadProfile is the person's profile, or null when the product has none
 * yet (404 person_not_found: no event of the id has been stored, or its
 * profile is still being written, about a second after its events).
 */
export async function loadProfile(productId: number, distinctId: string): Promise<PersonProfile | null> {
  try {
    return await api.person(productId, distinctId);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && e.code === "person_not_found") return null;
    throw e;
  }
}

/** PersonProperties is the person page's Properties card: the profile's traits and its first and last seen. */
export function PersonProperties(props: { productId: number; distinctId: string }) {
  const [profile, retry] = useLoad(() => loadProfile(props.productId, props.distinctId), [props.productId, props.distinctId]);
  return (
    <section class="card" aria-labelledby="person-properties-title" data-testid="person-properties">
      <h2 id="person-properties-title">Properties</h2>
      {profile.state === "loading" ? <Skeleton rows={2} label="Loading properties…" /> : null}
      {profile.state === "failed" ? <ErrorState message={profile.error} onRetry={retry} /> : null}
      {profile.state === "done" && profile.data === null ? <p class="empty">No profile yet.</p> : null}
      {profile.state === "done" && profile.data ? (
        <>
          <dl class="facts compact">
            <div>
              <dt>First seen</dt>
              <dd>
                <time dateTime={profile.data.firstSeen}>{when(profile.data.firstSeen)}</time>
              </dd>
            </div>
            <div>
              <dt>Last seen</dt>
              <dd>
                <time dateTime={profile.data.lastSeen}>{when(profile.data.lastSeen)}</time>
              </dd>
            </div>
          </dl>
          {Object.keys(profile.data.properties).length ? (
            <table class="table">
              <thead>
                <tr>
                  <th>Property</th>
                  <th>Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(profile.data.properties)
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([k, v]) => (
                    <tr key={k}>
                      <td>{k}</td>
                      <td>{typeof v === "string" ? v : JSON.stringify(v)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          ) : (
            <p class="empty">No properties.</p>
          )}
        </>
      ) : null}
    </section>
  );
}
