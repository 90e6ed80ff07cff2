import { stringify } from "./json.js";
import { beacon, request } from "./net.js";
import { get, getJSON, set } from "./storage.js";
import type { WireEvent } from "./types.js";

/** localStorage key of the offline queue, shared by the tabs of one origin. */
export const QUEUE_KEY = "strata_queue";
/**
 * At most this many unsent events are kept, in memory and in localStorage; past it
 * the oldest are dropped. When the browser's storage quota is hit first, the
 * oldest half is dropped until the rest fits.
 */
export const MAX_QUEUED = 1000;
/** The server's per-request limit (POST /e answers 413 batch_too_large above it). */
export const MAX_BATCH = 500;
/** Byte budget of one fetch body; the server's limit is 5 MB. */
const FETCH_BYTES = 1_000_000;
/** Byte budget of one beacon or keepalive body; browsers refuse more than 64 KiB in flight. */
const BEACON_BYTES = 60_000;
/** Events are collected this long after the first one before a batch is sent. */
export const FLUSH_DELAY = 1000;
/** Retry delays grow 1 s, 2 s, 4 s … up to this cap (with jitter), unless Retry-After says otherwise. */
export const MAX_BACKOFF = 60_000;

/**
 * Queue delivers events to `POST {host}/e` in batches, at least once: an event
 * leaves the queue (and localStorage) only when the server answered 2xx, gave a
 * final 4xx, or a beacon carrying it was accepted by the browser. A resend after
 * a lost answer is harmless because the server stores each event `uuid` once.
 *
 * Every body is `text/plain` JSON with the key in `api_key`, the form a beacon
 * must use; fetch then needs no CORS preflight and can use `keepalive`.
 */
export class Queue {
  private events: WireEvent[];
  /** Events posted by fetch whose answer has not come back; kept in storage until it does. */
  private inflight = new Set<WireEvent>();
  /** uuids this tab owns in storage; entries written by other tabs are left alone. */
  private mine = new Set<string>();
  private busy = false;
  /**
   * Nothing is sent while the SDK waits for the product's privacy settings (hold), so
   * that no event leaves with an id the settings would not allow.
   */
  private held = false;
  /** A write of the storage mirror is scheduled for the end of the current task. */
  private dirty = false;
  private attempt = 0;
  private idleTimer?: ReturnType<typeof setTimeout>;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private readonly url: string;
  private readonly online = () => {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.attempt = 0;
    this.send();
  };

  constructor(host: string, private readonly key: string) {
    this.url = host + "/e";
    // Adopt what earlier page loads (or other tabs) left unsent.
    const stored = getJSON<WireEvent[]>("localStorage", QUEUE_KEY);
    this.events = Array.isArray(stored) ? stored.slice(-MAX_QUEUED) : [];
    for (const e of this.events) this.mine.add(e.uuid);
    addEventListener("online", this.online);
    if (this.events.length) this.schedule();
  }

  /** push queues one event and schedules a send. */
  push(e: WireEvent): void {
    this.events.push(e);
    this.mine.add(e.uuid);
    if (this.events.length > MAX_QUEUED) this.events.shift();
    this.save();
    if (this.events.length >= MAX_BATCH) this.send();
    else this.schedule();
  }

  /**
   * flush hands every queued event to navigator.sendBeacon now, in batches under
   * the beacon size limit, so they survive the page being closed. A batch the
   * browser refuses goes by fetch with keepalive instead. Offline, nothing is sent
   * and the events wait in localStorage for the next page load or `online`.
   */
  flush(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (navigator.onLine === false || this.held) return;
    while (this.events.length) {
      const batch = this.take(BEACON_BYTES);
      // No beacon support, a bad URL or a page's wrapper that throws: fetch instead.
      if (!beacon(this.url, this.body(batch))) void this.post(batch, true);
    }
    this.write(); // now: the page may be going away
  }

  /**
   * clear drops this tab's unsent events, from memory and storage (a visitor who opted
   * out). Events already posted are not recalled.
   */
  clear(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.events = [];
    // Nothing stored, nothing to clear: a visitor who is not tracked gets no
    // storage written either.
    if (get("localStorage", QUEUE_KEY) !== null) this.write();
  }

  /**
   * hold stops sending (true) until it is called with false, which sends what waited.
   * A page closed meanwhile loses what was queued (it was neither sent nor stored).
   */
  hold(on: boolean): void {
    this.held = on;
    if (!on && this.events.length) this.schedule();
  }

  /** rewrite replaces every queued event with what `f` makes of it (cookieless mode's ids). */
  rewrite(f: (e: WireEvent) => WireEvent): void {
    this.events = this.events.map(f);
    this.save();
  }

  /** destroy stops timers and listeners; the queue stays in storage. */
  destroy(): void {
    if (this.dirty) this.write();
    clearTimeout(this.idleTimer);
    clearTimeout(this.retryTimer);
    removeEventListener("online", this.online);
  }

  /**
   * schedule sends a batch FLUSH_DELAY after the first queued event, once the
   * browser is idle (requestIdleCallback, waiting at most another FLUSH_DELAY).
   */
  private schedule(): void {
    this.idleTimer ??= setTimeout(() => {
      this.idleTimer = undefined;
      try {
        requestIdleCallback(() => this.send(), { timeout: FLUSH_DELAY });
      } catch {
        // Missing, or a page's wrapper that throws.
        this.send();
      }
    }, FLUSH_DELAY);
  }

  /** send posts the next batch unless one is already on its way or a retry is pending. */
  private send(): void {
    if (this.busy || this.held || this.retryTimer || !this.events.length || navigator.onLine === false) return;
    this.busy = true;
    void this.post(this.take(FETCH_BYTES), false).then((retry) => {
      this.busy = false;
      if (!retry) this.send();
    });
  }

  /**
   * post sends one batch and settles it: 2xx and final 4xx drop it, network errors,
   * 408, 429 and 5xx put it back and schedule a retry. It resolves to whether a retry
   * is due, and never rejects.
   */
  private async post(batch: WireEvent[], keepalive: boolean): Promise<boolean> {
    for (const e of batch) this.inflight.add(e);
    this.save();
    const body = this.body(batch);
    let status = 0;
    let wait = NaN;
    try {
      const res = await request(this.url, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body,
        // keepalive lets the request outlive the page, but only for small bodies.
        keepalive: keepalive || utf8Length(body) < BEACON_BYTES,
      });
      status = res.status;
      wait = retryAfter(res.headers.get("Retry-After"));
    } catch {
      // Network error or offline: status 0, retried below.
    }
    for (const e of batch) this.inflight.delete(e);
    // 2xx: stored. 408 (the upload was too slow) and 429 say "later". Other 4xx (bad
    // key, bad batch): resending cannot help, so give up.
    const retry = !((status >= 200 && status < 300) || (status >= 400 && status < 500 && status != 408 && status != 429));
    if (retry) {
      this.events.unshift(...batch);
      this.events.splice(0, this.events.length - MAX_QUEUED);
      this.retry(wait);
    } else {
      this.attempt = 0;
    }
    this.save();
    return retry;
  }

  private retry(wait: number): void {
    if (this.retryTimer) return;
    const backoff = Math.min(MAX_BACKOFF, 1000 * 2 ** this.attempt++);
    const delay = wait >= 0 ? wait : backoff / 2 + (Math.random() * backoff) / 2;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.send();
    }, delay);
  }

  /** take removes the oldest events that fit in one request of at most `bytes`. */
  private take(bytes: number): WireEvent[] {
    let size = 0;
    let n = 0;
    while (n < this.events.length && n < MAX_BATCH) {
      size += utf8Length(stringify(this.events[n])) + 1;
      if (n && size > bytes - 200) break;
      n++;
    }
    return this.events.splice(0, n);
  }

  private body(batch: WireEvent[]): string {
    return stringify({ api_key: this.key, sent_at: new Date().toISOString(), batch });
  }

  /**
   * save schedules a write of the storage mirror for the end of the current task,
   * so a burst of track() calls costs one write and no unload can come between.
   */
  private save(): void {
    if (this.dirty) return;
    this.dirty = true;
    queueMicrotask(() => this.dirty && this.write());
  }

  /**
   * write stores this tab's unsent events in localStorage, keeping the entries of
   * other tabs, under the MAX_QUEUED cap and the storage quota.
   */
  private write(): void {
    this.dirty = false;
    const own = [...this.inflight, ...this.events];
    const stored = getJSON<WireEvent[]>("localStorage", QUEUE_KEY);
    const others = Array.isArray(stored) ? stored.filter((e) => !this.mine.has(e.uuid)) : [];
    let all = others.concat(own).slice(-MAX_QUEUED);
    while (!set("localStorage", QUEUE_KEY, stringify(all)) && all.length) {
      all = all.slice(all.length >> 1 || 1);
    }
    this.mine = new Set(own.map((e) => e.uuid));
  }
}

/** retryAfter turns a Retry-After header (seconds or an HTTP date) into milliseconds, or NaN. */
export function retryAfter(h: string | null): number {
  if (!h) return NaN;
  const ms = /^\s*\d+\s*$/.test(h) ? +h * 1000 : Date.parse(h) - Date.now();
  return isNaN(ms) ? NaN : Math.max(0, ms);
}

function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}
