// The pure parts of the replay player (src/pages/Replay.tsx, docs/replay.md
// "The player"): how a session's windows are merged into one recording that
// one rrweb Replayer plays, how times are written, and where a link's moment
// starts. Nothing here touches the DOM, so that vitest covers it whole.

/** An rrweb event, as much of it as the player and the timeline read. */
export interface RREvent {
  type: number;
  timestamp: number;
  data: { source?: number; type?: number; tag?: string; href?: string; payload?: { message?: string } };
}

/** rrweb's event types that the merge tells apart. */
const FULL_SNAPSHOT = 2;
const INCREMENTAL = 3;

/** An event with the window (page load, `$window_id`) it was recorded in. */
export interface WindowEvent {
  windowId: string;
  event: RREvent;
}

/** What adding events did to the playable recording. */
export interface Added {
  /**
   * rebuilt is true when the events went before ones already merged (two
   * windows overlapping in time, whose chunks the API sends window by
   * window): the whole of `playable` changed and a player must start
   * again from it. Otherwise `added` follows what the player was given.
   */
  rebuilt: boolean;
  /** The playable events added at the end (all of `playable` when rebuilt). */
  added: RREvent[];
}

/**
 * MergedSession merges the events of every window of a session, in time
 * order, into the one recording a Replayer plays, as chunks arrive page
 * by page. rrweb rebuilds its page on every full snapshot, so a session of
 * several page loads plays through them as they happened.
 *
 * Only one page is on screen at a time, so when windows overlap (two tabs
 * open at once) a rule decides whose DOM changes are played: the window
 * that took the latest full snapshot. The recorder pauses while its tab is
 * hidden and takes a full snapshot when it is shown again, so this is the
 * tab the user was looking at; two windows visible side by side play the
 * one that loaded (or was shown) last, until the other takes a snapshot.
 * The other windows' DOM changes (incremental snapshots) are left out, as
 * they name nodes of a page not on screen; every other event (page loads'
 * meta events, full snapshots, the SDK's custom events) is kept.
 */
export class MergedSession {
  /** Every event received, in time order (on a tie, in the order received). */
  private all: WindowEvent[] = [];
  /** The window whose full snapshot was played last. */
  private current: string | null = null;
  /** The events a player is given, in time order. */
  playable: RREvent[] = [];

  /** last is the time of the latest event merged (-Infinity before any). */
  get last(): number {
    return this.all.length ? this.all[this.all.length - 1].event.timestamp : -Infinity;
  }

  /**
   * add merges a batch of events (each window's in its recorded order) and
   * says what changed for a player: events after all those merged are
   * added at the end; earlier ones rebuild the whole recording.
   */
  add(batch: WindowEvent[]): Added {
    const fresh = byTime(batch);
    if (!fresh.length) return { rebuilt: false, added: [] };
    if (fresh[0].event.timestamp >= this.last) {
      for (const e of fresh) this.all.push(e);
      return { rebuilt: false, added: this.keep(fresh) };
    }
    this.all = byTime(this.all.concat(fresh));
    this.current = null;
    this.playable = [];
    return { rebuilt: true, added: this.keep(this.all) };
  }

  /** keep appends to playable the events of list that the window rule keeps, and returns them. */
  private keep(list: WindowEvent[]): RREvent[] {
    const kept: RREvent[] = [];
    for (const { windowId, event } of list) {
      if (event.type === FULL_SNAPSHOT) this.current = windowId;
      else if (event.type === INCREMENTAL && windowId !== this.current) continue;
      kept.push(event);
      this.playable.push(event);
    }
    return kept;
  }
}

/** byTime sorts events by timestamp, keeping the order of equal ones (a meta event before its full snapshot). */
function byTime(list: WindowEvent[]): WindowEvent[] {
  return list
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.event.timestamp - b.e.event.timestamp || a.i - b.i)
    .map((x) => x.e);
}

/** clock writes a time in the player as m:ss, or h:mm:ss from an hour, rounded down to the second. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const ss = String(s % 60).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)}:${ss}`;
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${ss}`;
}

/** LEAD is how long before a linked moment the player starts: enough to see what led to it. */
export const LEAD_MS = 2000;

/**
 * momentOffset is where the player starts for a link's `t` (milliseconds
 * since 1970, the event's own timestamp): LEAD_MS before it, as an offset
 * from the session's start, within the session; 0 without a usable `t`.
 */
export function momentOffset(t: number | undefined, start: number, total: number): number {
  if (t === undefined || !Number.isFinite(t)) return 0;
  return Math.min(Math.max(0, t - LEAD_MS - start), Math.max(0, total));
}

/**
 * parseMoment reads a link's `t` parameter: a whole number of milliseconds
 * since 1970; undefined when absent or anything else.
 */
export function parseMoment(t: string | null): number | undefined {
  if (!t || !/^\d{1,15}$/.test(t)) return undefined;
  return Number(t);
}

/** SPEEDS are the player's speeds, slowest first. */
export const SPEEDS = [1, 2, 4, 8] as const;
