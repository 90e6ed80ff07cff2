import type { components } from "./api.gen.js";

/** One event as `POST /e` takes it (api/openapi.yaml, `Event`). */
export type WireEvent = components["schemas"]["Event"];

/** The body of `POST /e` (`IngestRequest`). */
export type IngestRequest = components["schemas"]["IngestRequest"];

/** The 202 answer of `POST /e`: how many events were stored, and why the others were not. */
export type IngestResult = components["schemas"]["IngestResult"];

/** One event the server did not store, with its index in the batch. */
export type Rejection = components["schemas"]["Rejection"];

/** `GET /api/v1/config`: the product's flags and settings. */
export type RemoteConfig = components["schemas"]["SdkConfig"];

/** One flag of the remote config: rollout and variant weights are percentages, holdout a fraction. */
export type FlagConfig = components["schemas"]["SdkFlag"];

/** Event properties: any JSON object. */
export type Properties = Record<string, unknown>;

/** Options of the `Strata` constructor. Only `apiKey` and `host` are required. */
export interface StrataOptions {
  /** The product's API key (`st_live_…`; `st_test_…` events are stored as test data). */
  apiKey: string;
  /** Where Strata runs, e.g. `https://analytics.example.com` (a trailing `/` is dropped). */
  host: string;
  /** Send as soon as this many events wait. Default 100; at most 500, the server's batch limit. */
  flushAt?: number;
  /** Send what waits at least this often, in milliseconds. Default 5000. */
  flushInterval?: number;
  /**
   * The most events kept waiting. When it is full, each new event drops the oldest waiting
   * one and counts it in `stats().dropped`. Default 10,000.
   */
  maxQueue?: number;
  /** How many times a failed batch is sent again before it is given up. Default 8. */
  maxRetries?: number;
  /** The first retry's delay in milliseconds, doubled for each later one. Default 500. */
  retryDelay?: number;
  /** The longest delay between two attempts, in milliseconds, Retry-After included. Default 30,000. */
  maxRetryDelay?: number;
  /** How long one request may take before it is abandoned (and retried), in milliseconds. Default 10,000. */
  requestTimeout?: number;
  /** How often the flag configuration is read again, in milliseconds, once flags are used. Default 30,000. */
  flagsPollInterval?: number;
  /** Send `$exposure` the first time each user gets a variant of a flag. Default true. */
  sendExposures?: boolean;
  /** The fetch to use; default the global one. Tests and unusual runtimes may pass their own. */
  fetch?: typeof fetch;
  /**
   * Called with every problem the client meets (a batch given up, events rejected, the
   * configuration unreadable). The client never throws on its own; the default ignores them.
   */
  onError?: (error: StrataError) => void;
}

/** What `capture()` takes. */
export interface CaptureMessage {
  /** The event's name. Names starting with `$` are Strata's; see README.md. */
  event: string;
  /** Who did it: the user's id, or a constant for events of no user. */
  distinctId: string;
  /** Free-form properties, at most 64 KiB of JSON. */
  properties?: Properties;
  /** When it happened; default now. */
  timestamp?: Date | string;
  /** The page's URL, when the event is about one. */
  url?: string;
  /** The referring URL. */
  referrer?: string;
  /** The user agent of the client the event is about (AI-bot classification reads it). */
  userAgent?: string;
  /** The event's id; default a fresh random UUID. Resending it never stores it twice. */
  uuid?: string;
}

/** The options of `getVariant`. */
export interface VariantOptions {
  /**
   * The user's properties, on which the flag's targeting conditions are
   * evaluated (docs/flags.md, "Targeting"): the traits you would pass to
   * `identify`, e.g. `{ plan: "pro", seats: 12 }`.
   */
  properties?: Properties;
  /**
   * The user's cohorts, by id, as `GET /api/v1/config?distinct_id=` gives them
   * (`{ "7": true }`), when the caller has them. Left out, a flag with a cohort
   * condition makes the client read them for the user (docs/flags.md, "Cohorts").
   */
  cohorts?: Readonly<Record<string, boolean>>;
}

/** Counters of what the client did with its events since it started. */
export interface Stats {
  /** Events waiting to be sent, and in the request under way. */
  queued: number;
  /** Events the server acknowledged (stored, or a duplicate it had stored before). */
  sent: number;
  /** Events dropped, oldest first, because `maxQueue` were already waiting. */
  dropped: number;
  /** Events the server refused one by one (a 202 `rejected` entry). */
  rejected: number;
  /** Events given up: retries exhausted, a 4xx answer other than 408 and 429, or shutdown's deadline. */
  failed: number;
  /** Requests sent again after a 408, 429, 5xx or network error. */
  retries: number;
}

/** StrataError describes a problem the client met; it is passed to `onError`, never thrown. */
export class StrataError extends Error {
  constructor(
    message: string,
    /** The HTTP status, or 0 when no answer came. */
    readonly status = 0,
    /** The server's error code, such as `invalid_api_key`, or `""`. */
    readonly code = "",
    /** Rejected events of a 202 answer, when that is the problem. */
    readonly rejections: readonly Rejection[] = [],
  ) {
    super(message);
    this.name = "StrataError";
  }
}
