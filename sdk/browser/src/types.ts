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
  /**
   * Record sessions (docs/replay.md): when `GET /api/v1/config` says `replay`, the SDK
   * loads its recorder, a third script (`/sdk/v1/replay.min.js`, rrweb), which masks
   * every input value and the text of `[data-strata-mask]` elements, never records
   * password fields, and replaces `[data-strata-block]` elements with a placeholder.
   * Default false.
   */
  replayEnabled?: boolean;
  /** The share of sessions recorded, 0–1, decided once per session. Default 1. */
  replaySampleRate?: number;
  /**
   * Send uncaught errors and unhandled promise rejections as `$exception` events
   * (README.md, "Error tracking"). Left unset, the server decides: on when
   * `GET /api/v1/config` answers `errorTracking: true` (the server's
   * NEXT_PUBLIC_FEATURE_ERROR_TRACKING), from its answer on; false keeps it off.
   */
  errorTracking?: boolean;
  /**
   * The app's release, sent as the `$release` property of every event (also of
   * `$exception` events) unless the event's properties have their own.
   */
  release?: string;
  /**
   * Show the product's in-app messages (docs/messages.md): when `GET /api/v1/config`
   * says `messagesEnabled`, the SDK loads its message renderer, a second script
   * (`/sdk/v1/messages.min.js`). Default true.
   */
  messages?: boolean;
  /**
   * The nonce of the page's Content-Security-Policy, for pages that allow
   * scripts (and styles) by nonce: it is set on the scripts the SDK adds (the
   * message renderer, the recorder), and on the renderer's `<style>` in
   * browsers without constructable stylesheets. The script tag build defaults
   * to the nonce of its own tag (README.md, "Content Security Policy").
   */
  nonce?: string;
  /**
   * Honour the browser's privacy signals: when it sends Global Privacy Control or Do
   * Not Track, the SDK sends nothing and stores no id, as after `optOut()` (README.md,
   * "Opting out"). Left unset, the product's setting in Settings decides (off by
   * default); true or false here wins over it.
   */
  respectPrivacySignals?: boolean;
  /**
   * Cookieless mode (README.md, "Cookieless mode"): the SDK keeps nothing in cookies,
   * localStorage or sessionStorage, and the server derives each anonymous visitor from a
   * salted hash of the address, the user agent and the product that changes every day.
   * `identify()` still works, for the page load. Left unset, the product's setting in
   * Settings decides, and until the SDK has it nothing is stored or sent; true or false
   * here wins over it (false: e.g. once the visitor consented to cookies).
   */
  cookieless?: boolean;
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
  optOut(): void;
  optIn(): void;
  hasOptedOut(): boolean;
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

/**
 * MessageHost is what the SDK gives the message renderer (src/messages/), which
 * is loaded as a second script and registers itself through `window.__strataMessages`
 * (MessageRegister). Every method may be called at any time and never throws.
 */
export interface MessageHost {
  /** The API's base URL, without a trailing slash, and the product's API key. */
  readonly host: string;
  readonly key: string;
  /** The page's CSP nonce (the `nonce` option), for the renderer's style element where it needs one. */
  readonly nonce?: string;
  /** distinctId is the identified user id, else the anonymous id. */
  distinctId(): string;
  /** identified reports whether identify() was called (in this or an earlier page load). */
  identified(): boolean;
  /** traits are those of the last identify() call that had any, or {}. */
  traits(): Properties;
  /** capture queues an event for `POST /e`, as track() does. */
  capture(eventName: string, properties: Properties): void;
  /** expose sends `$exposure` {flag, experiment_id, variant} unless it was sent for this flag and user this session. */
  expose(flag: string, experimentId: string | number | null, variant: string): void;
  /** flush sends the queued events now (before navigating away). */
  flush(): void;
}

/** MessageRenderer is what the message renderer gives the SDK. Its methods must not throw. */
export interface MessageRenderer {
  /**
   * event is called with every event the SDK captures, its own included, after it
   * was queued; `url` is the page it happened on. Events captured before the
   * renderer registered are replayed to it in order (at most 50).
   */
  event(eventName: string, properties: Properties, url: string): void;
  /** identified is called after identify() changed the user or the traits. */
  identified(): void;
}

/**
 * MessageRegister is `window.__strataMessages`, set by the SDK before it adds the
 * renderer's script, which calls it once with a function that makes the renderer.
 */
export type MessageRegister = (create: (host: MessageHost) => MessageRenderer) => void;

/**
 * ReplayHost is what the SDK gives the session recorder (src/replay/), loaded as a
 * third script that registers through `window.__strataReplay`.
 */
export interface ReplayHost {
  readonly host: string;
  readonly key: string;
  distinctId(): string;
  /** sessionId is the current session's id, counting the call as activity (src/session.ts). */
  sessionId(): string;
}

/** ReplayRecorder is what the recorder gives the SDK. Its methods must not throw. */
export interface ReplayRecorder {
  /** event marks an event the SDK captured in the recording, for the player's timeline. */
  event(eventName: string, properties: Properties): void;
  /** stop ends the recording and sends what is buffered. */
  stop(): void;
}

/** ReplayRegister is `window.__strataReplay`: called once with a function that makes the recorder. */
export type ReplayRegister = (create: (host: ReplayHost) => ReplayRecorder) => void;

declare global {
  interface Window {
    __strataMessages?: MessageRegister;
    __strataReplay?: ReplayRegister;
  }
}
