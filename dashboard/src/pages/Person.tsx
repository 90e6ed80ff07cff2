import { useEffect, useState } from "preact/hooks";
import { api, message } from "../api";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { when } from "../format";
import { useLoad } from "../load";
import { navigate } from "../router";
import type { DataEnv, Product, UserEvent } from "../types";
import { SessionsTable, replayHref, userHref } from "./Replays";

/** EVENT_PAGE is how many of a user's events a page of the table loads. */
export const EVENT_PAGE = 100;

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
  const [typed, setTyped] = useState("");
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
          Find a user <input type="search" name="distinct_id" value={typed} placeholder="distinct_id" required onInput={(e) => setTyped(e.currentTarget.value)} />
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

function Person(props: { product: Product; distinctId: string; env: DataEnv }) {
  const pid = props.product.id;
  const id = props.distinctId;
  // Every session of the user, whatever the date range: the page is about the person.
  const [replays, reloadReplays] = useLoad(() => api.replays(pid, { distinctId: id }), [pid, id]);
  const [first, reloadEvents] = useLoad(() => api.userEvents(pid, id, { env: props.env, limit: EVENT_PAGE }), [pid, id, props.env]);
  const [events, setEvents] = useState<UserEvent[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [more, setMore] = useState<{ busy?: boolean; error?: string }>({});
  useEffect(() => {
    if (first.state !== "done") return;
    setEvents(first.data.events);
    setNext(first.data.nextBefore);
    setMore({});
  }, [first]);

  const loadOlder = async () => {
    if (!next || more.busy) return;
    setMore({ busy: true });
    try {
      const page = await api.userEvents(pid, id, { env: props.env, limit: EVENT_PAGE, before: next });
      setEvents((list) => appendPage(list, page.events));
      setNext(page.nextBefore);
      setMore({});
    } catch (err) {
      setMore({ error: message(err) });
    }
  };

  const sessions = replays.state === "done" ? replays.data.items : [];
  const recorded = new Set(sessions.map((s) => s.sessionId));
  const span = seen(events);
  const eventsLoaded = first.state === "done";
  return (
    <section class="page person">
      <p class="crumbs">
        <Link href={`/users?product=${pid}${envSuffix(props.env)}`}>Users</Link>
      </p>
      <div class="section-head tight">
        <h1 class="person-id">{id}</h1>
      </div>
      <dl class="facts compact" data-testid="person-facts">
        <div>
          <dt>Last seen</dt>
          <dd>{eventsLoaded ? span ? <time dateTime={span.last}>{when(span.last)}</time> : "—" : "…"}</dd>
        </div>
        <div>
          <dt>{next ? "First seen (of the events loaded)" : "First seen"}</dt>
          <dd>{eventsLoaded ? span ? <time dateTime={span.first}>{when(span.first)}</time> : "—" : "…"}</dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd>{eventsLoaded ? `${events.length}${next ? "+" : ""}` : "…"}</dd>
        </div>
        <div>
          <dt>Recorded sessions</dt>
          <dd>{replays.state === "done" ? sessions.length : "…"}</dd>
        </div>
      </dl>

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
      {first.state === "failed" ? (
        <ErrorState message={first.error} onRetry={reloadEvents} />
      ) : first.state !== "done" ? (
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
          {more.error && <ErrorState message={more.error} onRetry={loadOlder} />}
          {next ? (
            <p>
              <button type="button" class="button secondary" onClick={loadOlder} disabled={more.busy}>
                {more.busy ? "Loading…" : "Load older"}
              </button>
            </p>
          ) : (
            <p class="hint" data-testid="events-end">
              {events.length === 1 ? "This is the user's only event." : `These are all ${events.length} of the user's events.`}
            </p>
          )}
        </>
      )}
    </section>
  );
}
