import { assign, type Assignment } from "../../shared/assign.js";
import type { Cohorts, Properties } from "../../shared/conditions.js";
import { StrataError, type FlagConfig, type RemoteConfig } from "./types.js";

/** After a failed read, getVariant asks again at most this often until one succeeds. */
const RETRY_MS = 5_000;
/** A user's cohorts are kept this long, for at most this many users (the oldest go first). */
const COHORTS_TTL_MS = 60_000;
const MAX_COHORT_USERS = 10_000;

/** What the poller needs from the client. */
export interface PollerOptions {
  host: string;
  apiKey: string;
  fetch: typeof fetch;
  /** How often the configuration is read again, in ms. */
  interval: number;
  /** How long one read may take, in ms. */
  timeout: number;
  report: (error: StrataError) => void;
}

/**
 * FlagPoller keeps a product's flag configuration (`GET /api/v1/config`) in
 * memory: read on first use, then every `interval` ms on an unref'd timer,
 * sending the last ETag as If-None-Match so that an unchanged configuration
 * costs a 304 without a body. The last good configuration is kept when a
 * read fails.
 */
export class FlagPoller {
  private flags = new Map<string, FlagConfig>();
  /** Users' cohorts, read from the configuration for each user, oldest first; a read under way is shared. */
  private memberships = new Map<string, { at: number; cohorts: Promise<Cohorts | undefined> }>();
  private loaded = false;
  private etag = "";
  private loading: Promise<void> | undefined;
  private lastAttempt = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;

  constructor(private readonly o: PollerOptions) {}

  /**
   * ready resolves once a configuration is in memory, or once a read failed
   * (the caller then answers control). Its first call starts the polling.
   */
  ready(): Promise<void> {
    this.start();
    if (this.loaded) return Promise.resolve();
    if (!this.loading && Date.now() - this.lastAttempt < RETRY_MS) return Promise.resolve();
    return this.refresh();
  }

  /** refresh reads the configuration now; concurrent calls share one request. It never rejects. */
  refresh(): Promise<void> {
    this.start();
    return (this.loading ??= this.load().finally(() => (this.loading = undefined)));
  }

  /** assign returns the flag (undefined when unknown) and the assignment of the user with these properties and cohorts to it. */
  assign(flagKey: string, distinctId: string, properties?: Properties, cohorts?: Cohorts): { flag?: FlagConfig; assignment?: Assignment } {
    const flag = this.flags.get(flagKey);
    return { flag, assignment: assign(flag, distinctId, properties, cohorts) };
  }

  /** needsCohorts reports whether the flag has a cohort condition, which needs the user's memberships. */
  needsCohorts(flagKey: string): boolean {
    return !!this.flags.get(flagKey)?.conditions?.some((c) => c.type == "cohort");
  }

  /**
   * cohorts returns the user's memberships of the cohorts the flags name, which
   * `GET /api/v1/config?distinct_id=` gives for that user alone (docs/flags.md,
   * "Cohorts"), kept for a minute. A failed read gives undefined: the user's
   * cohort conditions then fail, and the next call asks again.
   */
  cohorts(distinctId: string): Promise<Cohorts | undefined> {
    const now = Date.now();
    const held = this.memberships.get(distinctId);
    if (held && now - held.at < COHORTS_TTL_MS) return held.cohorts;
    this.memberships.delete(distinctId);
    if (this.memberships.size >= MAX_COHORT_USERS) this.memberships.delete(this.memberships.keys().next().value!);
    const cohorts = this.readCohorts(distinctId).then((c) => {
      if (!c) this.memberships.delete(distinctId);
      return c;
    });
    this.memberships.set(distinctId, { at: now, cohorts });
    return cohorts;
  }

  private async readCohorts(distinctId: string): Promise<Cohorts | undefined> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.o.timeout);
    try {
      const url = this.o.host + "/api/v1/config?api_key=" + encodeURIComponent(this.o.apiKey) + "&distinct_id=" + encodeURIComponent(distinctId);
      const res = await this.o.fetch(url, { signal: controller.signal });
      const text = await res.text();
      if (!res.ok) throw new StrataError(`GET /api/v1/config: ${res.status} ${text.slice(0, 200)}`, res.status);
      const config = JSON.parse(text) as RemoteConfig;
      return config.cohorts ?? {};
    } catch (err) {
      this.o.report(err instanceof StrataError ? err : new StrataError("GET /api/v1/config: " + String(err)));
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** stop ends the polling. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.refresh(), this.o.interval);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private async load(): Promise<void> {
    this.lastAttempt = Date.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.o.timeout);
    try {
      const url = this.o.host + "/api/v1/config?api_key=" + encodeURIComponent(this.o.apiKey);
      const res = await this.o.fetch(url, { headers: this.etag ? { "If-None-Match": this.etag } : {}, signal: controller.signal });
      if (res.status === 304) {
        await res.body?.cancel();
        return;
      }
      const text = await res.text();
      if (!res.ok) throw new StrataError(`GET /api/v1/config: ${res.status} ${text.slice(0, 200)}`, res.status);
      const config = JSON.parse(text) as RemoteConfig;
      if (!config || !Array.isArray(config.flags)) throw new StrataError("GET /api/v1/config: the answer has no flags list", res.status);
      this.flags = new Map(config.flags.map((f) => [f.key, f]));
      this.etag = res.headers.get("ETag") ?? "";
      this.loaded = true;
    } catch (err) {
      this.o.report(err instanceof StrataError ? err : new StrataError("GET /api/v1/config: " + String(err)));
    } finally {
      clearTimeout(timer);
    }
  }
}
