import { exposed } from "../../shared/assign.js";
import type { Cohorts } from "../../shared/conditions.js";
import { classifyBot, type BotInfo } from "./bots.js";
import { FlagPoller } from "./flags.js";
import { Queue, utf8Length, type Queued } from "./queue.js";
import {
  StrataError,
  type CaptureMessage,
  type IngestResult,
  type Properties,
  type Rejection,
  type Stats,
  type StrataOptions,
  type VariantOptions,
  type WireEvent,
} from "./types.js";
import { VERSION } from "./version.js";

/** The server's limits on one `POST /e` (docs/ingest.md): events per batch, and bytes per body. */
export const MAX_BATCH = 500;
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** Room left in a body for the envelope around the events. */
const ENVELOPE_BYTES = 128;
/** The longest user agent, URL and referrer ingest accepts, in characters (api/openapi.yaml, Event). */
export const MAX_USER_AGENT = 2048;
export const MAX_URL = 8192;
/** The distinct id of the AI-bot page views the middleware sends: bots are counted by volume. */
export const BOT_DISTINCT_ID = "$server_bot";
/** A Retry-After longer than this is not waited for in full. */
const MAX_RETRY_AFTER_MS = 600_000;
/** The most (flag, user) pairs whose exposure is remembered before the memory is cleared. */
const MAX_EXPOSED = 50_000;

const defaults = {
  // Node's fetch costs the sending process about 0.7 ms of CPU a request on
  // the benchmark machine: 7 µs an event in batches of 100, 35 µs in batches
  // of 20 (docs/benchmarks.md, "The Node SDK's middleware"). Quiet sites
  // send every flushInterval instead.
  flushAt: 100,
  flushInterval: 5_000,
  maxQueue: 10_000,
  maxRetries: 8,
  retryDelay: 500,
  maxRetryDelay: 30_000,
  requestTimeout: 10_000,
  flagsPollInterval: 30_000,
  sendExposures: true,
};

/** What a page view of an AI bot needs: the request's user agent, URL and referrer. */
export interface BotRequest {
  userAgent: string | null | undefined;
  url: string;
  referrer?: string | null;
}

/** How one attempt at sending a batch ended. */
type Outcome =
  | { kind: "sent"; result: IngestResult }
  | { kind: "retry"; error: StrataError; afterMs?: number }
  | { kind: "split"; error: StrataError }
  | { kind: "failed"; error: StrataError; rejections?: Rejection[] };

/**
 * Strata sends events to a Strata server from a Node process (or an edge
 * runtime: it uses only fetch, timers and crypto.randomUUID) and evaluates
 * the product's feature flags locally.
 *
 * Events are batched: a batch is sent when `flushAt` events wait, every
 * `flushInterval` ms, and on `flush()`. One request is in flight at a time.
 * A batch answered 408, 429 or 5xx, or lost to a network error, is sent again
 * after an exponential backoff with jitter (at least the Retry-After the
 * server asked for), up to `maxRetries` times; each event keeps the uuid it
 * got at capture, so the server stores a resent event once. Other 4xx answers
 * are never retried. The queue holds at most `maxQueue` events: past that the
 * oldest is dropped and counted. No method throws or rejects; problems go to
 * `onError`. Timers are unref'd, so an idle client does not keep the process
 * alive; call `shutdown()` before exiting to send what waits.
 */
export class Strata {
  private readonly apiKey: string;
  private readonly host: string;
  private readonly o: typeof defaults & Pick<StrataOptions, "onError">;
  private readonly fetch: typeof fetch;
  private readonly queue: Queue;
  private nextSeq = 1;
  private inFlight: Queued[] | undefined;
  private pumping: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Resolvers of `flush()` calls, each waiting for the events up to its seq. */
  private waiters: { seq: number; resolve: () => void }[] = [];
  private readonly counts = { sent: 0, dropped: 0, rejected: 0, failed: 0, retries: 0 };
  /** Everything waiting is to be sent, not only full batches: set by the timer, cleared when the queue is empty. */
  private due = false;
  /** Set by shutdown's deadline: requests are abandoned and sleeps end. */
  private aborted = false;
  private closed = false;
  private readonly cancels = new Set<() => void>();
  private flagPoller: FlagPoller | undefined;
  private exposed = new Set<string>();
  /** No key or no http(s) host: events are counted as failed instead of being sent nowhere. */
  private readonly misconfigured: boolean;

  constructor(options: StrataOptions) {
    const o = options || ({} as StrataOptions);
    this.apiKey = String(o.apiKey ?? "");
    this.host = String(o.host ?? "").replace(/\/+$/, "");
    const num = (v: number | undefined, d: number, min: number, max = Infinity) =>
      typeof v === "number" && Number.isFinite(v) ? Math.min(max, Math.max(min, v)) : d;
    this.o = {
      flushAt: Math.floor(num(o.flushAt, defaults.flushAt, 1, MAX_BATCH)),
      flushInterval: num(o.flushInterval, defaults.flushInterval, 1),
      maxQueue: Math.floor(num(o.maxQueue, defaults.maxQueue, 1)),
      maxRetries: Math.floor(num(o.maxRetries, defaults.maxRetries, 0)),
      retryDelay: num(o.retryDelay, defaults.retryDelay, 0),
      maxRetryDelay: num(o.maxRetryDelay, defaults.maxRetryDelay, 0),
      requestTimeout: num(o.requestTimeout, defaults.requestTimeout, 1),
      flagsPollInterval: num(o.flagsPollInterval, defaults.flagsPollInterval, 1000),
      sendExposures: o.sendExposures ?? defaults.sendExposures,
      onError: o.onError,
    };
    this.fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.queue = new Queue(this.o.maxQueue);
    this.misconfigured = !this.apiKey || !/^https?:\/\/./.test(this.host);
    if (this.misconfigured) this.report(new StrataError("Strata: apiKey and an http(s) host are required; events will not be sent"));
  }

  /**
   * capture queues one event. It returns at once and never throws: an event
   * that cannot be encoded, or a call after `shutdown()`, goes to `onError`.
   */
  capture(message: CaptureMessage): void {
    try {
      const m = message || ({} as CaptureMessage);
      if (typeof m.event !== "string" || !m.event || typeof m.distinctId !== "string" || !m.distinctId) {
        throw new StrataError("capture needs an event name and a distinctId");
      }
      const ts = m.timestamp instanceof Date ? m.timestamp.toISOString() : m.timestamp || new Date().toISOString();
      const e: WireEvent = {
        event_name: m.event,
        distinct_id: m.distinctId,
        timestamp: ts,
        uuid: m.uuid || crypto.randomUUID(),
        properties: { ...m.properties, $lib: "strata-node", $lib_version: VERSION },
      };
      if (m.url) e.url = m.url;
      if (m.referrer) e.referrer = m.referrer;
      if (m.userAgent) e.user_agent = m.userAgent;
      this.enqueue(JSON.stringify(e));
    } catch (err) {
      this.counts.failed++;
      this.report(err instanceof StrataError ? err : new StrataError("capture: " + String(err)));
    }
  }

  /**
   * captureBotPageview sends a page view when the user agent is an AI bot of
   * the allowlist, and returns the bot (or null, doing nothing else). It is
   * what the middlewares call. The event is a `$pageview` from the constant
   * distinct id `$server_bot` with the bot's user agent and
   * `$server_captured: "true"`; ingest classifies the user agent again and
   * stores it as `$bot_pageview` (clients may not send that name). A user
   * agent longer than ingest accepts (2,048 characters) is not classified.
   */
  captureBotPageview(request: BotRequest): BotInfo | null {
    const ua = request?.userAgent;
    if (typeof ua !== "string" || ua.length > MAX_USER_AGENT) return null;
    const bot = classifyBot(ua);
    if (!bot) return null;
    this.capture({
      event: "$pageview",
      distinctId: BOT_DISTINCT_ID,
      url: clip(request.url),
      referrer: clip(request.referrer),
      userAgent: ua,
      properties: { $server_captured: "true" },
    });
    return bot;
  }

  /**
   * flush sends every event captured before the call and resolves once each
   * has been acknowledged or given up (it never rejects).
   */
  flush(): Promise<void> {
    const seq = this.nextSeq - 1;
    if (seq < this.outstanding()) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push({ seq, resolve }));
    void this.pump();
    return done;
  }

  /**
   * shutdown stops the timers, sends what waits and resolves when it is sent,
   * or after `timeoutMs` (default 10 s), abandoning the rest: the request
   * under way is aborted and the waiting events count as failed. Events
   * captured afterwards are not sent. The deadline's timer holds the process
   * open until then, so `await client.shutdown()` before exiting delivers
   * what it can.
   */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flagPoller?.stop();
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<boolean>((r) => (deadline = setTimeout(() => r(true), Math.max(0, timeoutMs))));
    const finished = await Promise.race([this.flush().then(() => false), expired]);
    clearTimeout(deadline);
    if (finished) {
      this.aborted = true;
      for (const cancel of this.cancels) cancel();
      await this.pumping;
      const n = this.queue.clear();
      if (n) {
        this.counts.failed += n;
        this.report(new StrataError(`shutdown: ${n} events were not sent within ${timeoutMs} ms`));
      }
      this.settle();
    }
  }

  /** stats returns the client's counters. */
  stats(): Stats {
    return { queued: this.queue.length + (this.inFlight?.length ?? 0), ...this.counts };
  }

  /** dropped is the number of events dropped because the queue was full (as in `stats()`). */
  get dropped(): number {
    return this.counts.dropped;
  }

  /**
   * getVariant returns the user's variant of a flag (`control`, `on`, or an
   * arm's key) by the rule every Strata SDK follows (docs/flags.md). The
   * first call reads the product's configuration from `GET /api/v1/config`
   * and starts re-reading it every `flagsPollInterval` ms; later calls answer
   * from memory. A missing or disabled flag, or a configuration that could not
   * be read, gives `control`. The first time a user gets a flag, a `$exposure`
   * event is captured (unless `sendExposures` is false).
   *
   * A flag with targeting conditions is evaluated on `options.properties`, the
   * user's properties as the caller knows them (the traits it would pass to
   * `identify`): a user they do not target gets `control` and is exposed as
   * `excluded` (docs/flags.md, "Targeting"). Without properties, every
   * condition but `neq` fails. A flag with a cohort condition is evaluated on
   * `options.cohorts`, or else on the user's memberships read from
   * `GET /api/v1/config?distinct_id=` (kept a minute per user).
   */
  async getVariant(flagKey: string, distinctId: string, options?: VariantOptions): Promise<string> {
    try {
      const poller = this.flags();
      await poller.ready();
      const cohorts = options?.cohorts ?? (poller.needsCohorts(flagKey) ? await poller.cohorts(String(distinctId)) : undefined);
      return this.variantNow(flagKey, distinctId, options?.properties, cohorts);
    } catch {
      return "control";
    }
  }

  /**
   * loadFlags reads the flag configuration now (and starts polling it), so
   * that the first `getVariant` does not wait for it. It never rejects.
   */
  async loadFlags(): Promise<void> {
    await this.flags().refresh();
  }

  private flags(): FlagPoller {
    return (this.flagPoller ??= new FlagPoller({
      host: this.host,
      apiKey: this.apiKey,
      fetch: this.fetch,
      interval: this.o.flagsPollInterval,
      timeout: this.o.requestTimeout,
      report: (e) => this.report(e),
    }));
  }

  private variantNow(flagKey: string, distinctId: string, properties?: Properties, cohorts?: Cohorts): string {
    const { flag, assignment } = this.flags().assign(flagKey, String(distinctId), properties, cohorts);
    if (!flag || !assignment) return "control";
    if (this.o.sendExposures) {
      const mark = flagKey + "\n" + distinctId;
      if (!this.exposed.has(mark)) {
        if (this.exposed.size >= MAX_EXPOSED) this.exposed.clear();
        this.exposed.add(mark);
        const exp = flag.experiment;
        const experimentId = exp && exp.status == "running" && exp.id != null ? exp.id : null;
        this.capture({
          event: "$exposure",
          distinctId: String(distinctId),
          properties: { flag: flagKey, experiment_id: experimentId, variant: exposed(assignment) },
        });
      }
    }
    return assignment.variant;
  }

  private enqueue(json: string): void {
    if (this.closed) throw new StrataError("capture after shutdown: the event is not sent");
    if (this.misconfigured) throw new StrataError("the client has no apiKey or no http(s) host: the event is not sent");
    const bytes = utf8Length(json);
    if (bytes > MAX_BODY_BYTES - ENVELOPE_BYTES) throw new StrataError(`the event is ${bytes} bytes, more than a request may carry`, 0, "payload_too_large");
    const dropped = this.queue.push({ seq: this.nextSeq++, json, bytes });
    if (dropped) {
      this.counts.dropped++;
      this.settle();
    }
    // The timer starts with the first event, not in the constructor: edge
    // runtimes refuse timers outside a request, and an idle client needs none.
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => {
        if (!this.queue.length) return;
        this.due = true;
        void this.pump();
      }, this.o.flushInterval);
      unref(this.timer);
    }
    if (this.queue.length >= this.o.flushAt) void this.pump();
  }

  /** outstanding is the seq of the oldest event not yet acknowledged or given up. */
  private outstanding(): number {
    return this.inFlight?.[0]?.seq ?? this.queue.first()?.seq ?? this.nextSeq;
  }

  /** settle resolves the flush() calls whose events are all done. */
  private settle(): void {
    const low = this.outstanding();
    if (!this.waiters.some((w) => w.seq < low)) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      if (w.seq < low) w.resolve();
      else this.waiters.push(w);
    }
  }

  /**
   * pump sends batches, one request at a time, while a full batch (flushAt)
   * waits, or until the queue is empty when the timer, flush() or shutdown
   * asked for everything. Under steady traffic that keeps batches at least
   * flushAt long instead of sending the few events that arrived during the
   * previous request: a request costs the sending process far more than an
   * event in it.
   */
  private pump(): Promise<void> {
    return (this.pumping ??= this.drain().finally(() => {
      this.pumping = undefined;
      // Events that arrived as the last batch finished.
      if (!this.aborted && this.sendable()) void this.pump();
    }));
  }

  private sendable(): boolean {
    const n = this.queue.length;
    if (n === 0) this.due = false;
    return n > 0 && (n >= this.o.flushAt || this.due || this.closed || this.waiters.length > 0);
  }

  private async drain(): Promise<void> {
    while (!this.aborted && this.sendable()) {
      const batch = this.queue.take(MAX_BATCH, MAX_BODY_BYTES - ENVELOPE_BYTES);
      this.inFlight = batch;
      try {
        await this.deliver(batch);
      } finally {
        this.inFlight = undefined;
        this.settle();
      }
    }
  }

  /** deliver sends one batch, with retries, and counts how it ended. */
  private async deliver(batch: Queued[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.post(batch);
      switch (outcome.kind) {
        case "sent": {
          const rejected = outcome.result.rejected?.length ?? 0;
          this.counts.sent += batch.length - rejected;
          this.counts.rejected += rejected;
          if (rejected) {
            this.report(new StrataError(`${rejected} of ${batch.length} events were rejected`, 202, outcome.result.rejected[0].code, outcome.result.rejected));
          }
          return;
        }
        case "split":
          // The server's limits are lower than ours: send each half on its own.
          if (batch.length > 1) {
            const half = Math.ceil(batch.length / 2);
            await this.deliver(batch.slice(0, half));
            await this.deliver(batch.slice(half));
            return;
          }
          break;
        case "retry":
          if (attempt < this.o.maxRetries && !this.aborted) {
            this.counts.retries++;
            await this.sleep(this.backoff(attempt, outcome.afterMs));
            if (!this.aborted) continue;
          }
          break;
        case "failed":
          if (outcome.rejections) {
            this.counts.rejected += batch.length;
            this.report(outcome.error);
            return;
          }
          break;
      }
      this.counts.failed += batch.length;
      this.report(outcome.error);
      return;
    }
  }

  /**
   * backoff is the wait before retry number attempt+1: the exponential
   * delay, capped at maxRetryDelay, with "equal jitter" (between half and
   * all of it) so that many clients do not come back in step; never less
   * than the server's Retry-After.
   */
  private backoff(attempt: number, afterMs?: number): number {
    const exp = Math.min(this.o.maxRetryDelay, this.o.retryDelay * 2 ** attempt);
    const jittered = exp / 2 + (Math.random() * exp) / 2;
    return Math.max(jittered, Math.min(afterMs ?? 0, MAX_RETRY_AFTER_MS));
  }

  /** post makes one attempt at sending a batch. */
  private async post(batch: Queued[]): Promise<Outcome> {
    const body = '{"batch":[' + batch.map((e) => e.json).join(",") + '],"sent_at":"' + new Date().toISOString() + '"}';
    const controller = new AbortController();
    const cancel = () => controller.abort();
    const timer = setTimeout(cancel, this.o.requestTimeout);
    this.cancels.add(cancel);
    try {
      const res = await this.fetch(this.host + "/e", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": this.apiKey },
        body,
        signal: controller.signal,
      });
      const text = await res.text();
      let json: { accepted?: number; rejected?: Rejection[]; error?: { code?: string; message?: string } } = {};
      try {
        json = JSON.parse(text);
      } catch {
        // Not JSON (a proxy's error page): the status alone decides.
      }
      const status = res.status;
      if (status >= 200 && status < 300) {
        return { kind: "sent", result: { accepted: json.accepted ?? batch.length, rejected: Array.isArray(json.rejected) ? json.rejected : [] } };
      }
      const code = json.error?.code ?? "";
      const error = new StrataError(`POST /e: ${status} ${code}: ${json.error?.message ?? text.slice(0, 200)}`, status, code);
      if (status === 408 || status === 429 || status >= 500) {
        return { kind: "retry", error, afterMs: retryAfter(res.headers.get("Retry-After")) };
      }
      if (status === 413) return { kind: "split", error };
      if (code === "all_events_rejected" && Array.isArray(json.rejected)) {
        return { kind: "failed", error: new StrataError(error.message, status, code, json.rejected), rejections: json.rejected };
      }
      return { kind: "failed", error };
    } catch (err) {
      const why = controller.signal.aborted ? (this.aborted ? "aborted by shutdown" : `no answer within ${this.o.requestTimeout} ms`) : String(err);
      return { kind: "retry", error: new StrataError(`POST /e: ${why}`) };
    } finally {
      clearTimeout(timer);
      this.cancels.delete(cancel);
    }
  }

  /** sleep waits ms (on an unref'd timer), or until shutdown's deadline. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.cancels.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      unref(t);
      this.cancels.add(done);
    });
  }

  private report(error: StrataError): void {
    try {
      this.o?.onError?.(error);
    } catch {
      // The callback's own failure is not the caller's problem.
    }
  }
}

/**
 * retryAfter reads a Retry-After header, in seconds or an HTTP date, as
 * milliseconds; undefined when absent or unreadable.
 */
export function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** unref lets the process exit while the timer is pending (Node; other runtimes have no such thing). */
function unref(t: unknown): void {
  (t as { unref?: () => void } | undefined)?.unref?.();
}

/** clip cuts a URL to the length ingest accepts, never between the halves of a surrogate pair. */
function clip(s: string | null | undefined): string | undefined {
  if (typeof s !== "string" || !s) return undefined;
  if (s.length <= MAX_URL) return s;
  let cut = s.slice(0, MAX_URL);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}
