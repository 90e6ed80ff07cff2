import { murmur3 } from "../../shared/hash.js";
import { stringify } from "./json.js";
import { getJSON, set } from "./storage.js";
import { uuid } from "./uuid.js";

/** localStorage key of the session: `{id, last}` (its id, and the last activity in ms). */
export const SESSION_KEY = "strata_session";
/** A session ends after 30 minutes without activity (docs/replay.md). */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/**
 * sessionId returns the browser's session id, shared by its tabs, and counts `now`
 * as activity: after 30 minutes without any, a new session begins. Every event
 * carries it as `$session_id`, which links a recorded session to its events.
 */
export function sessionId(now = Date.now()): string {
  let s = getJSON<{ id: string; last: number }>("localStorage", SESSION_KEY);
  if (!s || typeof s.id != "string" || !(now - s.last < SESSION_IDLE_MS)) s = { id: uuid(), last: now };
  s.last = now;
  set("localStorage", SESSION_KEY, stringify(s));
  return s.id;
}

/** sampled reports whether a session is recorded at `rate` (0–1): the same answer on every page of it. */
export function sampled(id: string, rate: number): boolean {
  return (murmur3("replay." + id) % 10000) / 10000 < rate;
}
