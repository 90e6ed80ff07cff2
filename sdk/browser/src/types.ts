import type { components } from "./api.gen.js";

/** Options of `init()` and of the `Strata` constructor. */
export interface StrataOptions {
  /** The product's API key (`st_live_…`, or `st_test_…` on local origins). */
  apiKey: string;
  /**
   * Where Strata runs, e.g. `https://analytics.example.com`. Defaults to the origin
   * that served the script tag, or for the npm package to the page's own origin.
   */
  apiHost?: string;
  /** Capture page views, clicks on links and buttons, and form submits. Default true. */
  autocapture?: boolean;
  /** Session replay. Accepted for forward compatibility; not implemented yet. Default false. */
  replayEnabled?: boolean;
  /**
   * Send uncaught errors and unhandled promise rejections as `$exception` events
   * (README.md, "Error tracking"). Default false.
   */
  errorTracking?: boolean;
  /**
   * The app's release, sent as the `$release` property of every event (also of
   * `$exception` events) unless the event's properties have their own.
   */
  release?: string;
}

/** Free-form event properties; they must survive `JSON.stringify`. */
export type Properties = Record<string, unknown>;

/** Feature flags and experiments. */
export interface Flags {
  /**
   * Resolves to the user's variant key of `flagKey`: `"on"` for a flag without
   * variants, the arm key for an experiment, and `"control"` when the flag is
   * missing, disabled, rolled out to someone else, or the server is unreachable.
   * It never rejects.
   */
  getVariant(flagKey: string): Promise<string>;
}

/** The object the script tag installs as `window.strata`, and the module's API. */
export interface StrataApi {
  init(options: StrataOptions): void;
  track(eventName: string, properties?: Properties): void;
  identify(userId: string, traits?: Properties): void;
  group(type: string, key: string, properties?: Properties): void;
  reset(): void;
  flush(): void;
  flags: Flags;
}

/** One event as `POST /e` takes it (api/openapi.yaml, `Event`). */
export interface WireEvent {
  uuid: string;
  event_name: string;
  distinct_id: string;
  timestamp: string;
  url?: string;
  referrer?: string;
  properties: Properties;
}

/**
 * The body of `GET /api/v1/config` (docs/flags.md), generated from the API's
 * contract (`SdkConfig` in api/openapi.yaml) into api.gen.ts.
 */
export type RemoteConfig = components["schemas"]["SdkConfig"];

/** One flag of the remote config: rollout and variant weights are percentages, holdout a fraction. */
export type FlagConfig = components["schemas"]["SdkFlag"];
