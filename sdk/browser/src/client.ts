import { autocapture } from "./autocapture.js";
import { errorTracking, manual } from "./errors.js";
import { FlagClient, type FlagHost } from "./flags.js";
import { stringify } from "./json.js";
import { addScript, request } from "./net.js";
import { Queue } from "./queue.js";
import { sampled, sessionId } from "./session.js";
import { forget, forgetAll, getJSON, persist, recall, set, settle, storeIn } from "./storage.js";
import type { Flags, MessageHost, MessageRenderer, Properties, RemoteConfig, ReplayHost, ReplayRecorder, StrataOptions, WireEvent } from "./types.js";
import { uuid } from "./uuid.js";

/** The SDK's version, sent with every event as `$lib_version` (README.md, "What it sends"). */
export const VERSION = "0.3.1";
/** localStorage (or cookie) keys of the anonymous id and the identified user id. */
export const ANON_KEY = "strata_anon_id";
export const USER_KEY = "strata_user_id";
/** localStorage (or cookie) key of the user's groups, `{type: key}` as JSON. */
export const GROUPS_KEY = "strata_groups";
/** localStorage key of the traits of the last identify() call, for the message audiences. */
export const TRAITS_KEY = "strata_traits";
/**
 * localStorage (or cookie) key of the visitor's choice not to be tracked, "1" once
 * optOut() was called (README.md, "Opting out").
 */
export const OPT_OUT_KEY = "strata_opt_out";
/**
 * The distinct_id of an anonymous visitor's events in cookieless mode: the server derives
 * the visitor from a daily-salted hash of the address, the user agent and the product
 * (README.md, "Cookieless mode").
 */
export const COOKIELESS_ID = "$cookieless";
/** At most this many events are kept for the message renderer while its script loads. */
const EARLY_EVENTS = 50;

/**
 * Strata is one SDK instance: identity, the delivery queue, autocapture and flags.
 * Pages normally use the `init()` singleton; the class is exported for apps that
 * want an explicit instance. No public method throws into the page.
 */
export class Strata implements FlagHost, MessageHost, ReplayHost {
  /** Feature flags and experiments. */
  readonly flags: Flags;
  private readonly flagClient: FlagClient;
  readonly host: string;
  readonly key: string;
  /** The page's CSP nonce (the `nonce` option), for what the SDK adds to the page. */
  readonly nonce?: string;
  /** Set by flags.getVariant and attached to every later tracked event. */
  experiment?: FlagHost["experiment"];
  private readonly options: StrataOptions;
  private readonly queue: Queue;
  private anonId: string;
  private userId: string | null;
  /** The groups set by group(), sent as `$groups` with every event. */
  private groups: Record<string, string>;
  /** The current page's URL without its hash, to tell SPA navigations apart. */
  private page = "";
  /** The page before it: document.referrer, then the previous SPA route. */
  private referrer = document.referrer;
  private readonly stop: (() => void)[] = [];
  /** Sends the errors held in their burst now (errorTracking on). */
  private flushErrors?: () => void;
  /** The message renderer, once its script registered (docs/messages.md). */
  private messages?: MessageRenderer;
  /**
   * The events captured while the renderer may still come, replayed to it when
   * it registers (the first page view is the most common trigger); undefined
   * when it registered or will not come.
   */
  private early?: [string, Properties, string][];
  /** The session recorder, once its script registered (docs/replay.md). */
  private replay?: ReplayRecorder;
  /**
   * The visitor opted out (optOut(), remembered across page loads), or the
   * browser sends a privacy signal the page asked to honour
   * (respectPrivacySignals): nothing is sent then.
   */
  private optedOut: boolean;
  private signalled: boolean;
  /**
   * Cookieless mode: nothing is stored in the browser, and anonymous events ask the
   * server to derive the visitor (COOKIELESS_ID). Set by the `cookieless` option, or by
   * the product's setting once the config answers.
   */
  private cookieless: boolean;

  constructor(options: StrataOptions) {
    this.options = options;
    this.host = (options.apiHost || location.origin).replace(/\/+$/, "");
    this.key = options.apiKey;
    this.nonce = options.nonce;
    // Where this page load stores (storage.ts): nowhere in the browser in cookieless
    // mode; held in memory while the product's settings decide it, that is when the page
    // left `cookieless` unset, or left `respectPrivacySignals` unset and the browser sends
    // a signal; in the browser otherwise.
    this.cookieless = options.cookieless === true;
    const pending = !this.cookieless && (options.cookieless == null || (options.respectPrivacySignals == null && privacySignal()));
    storeIn(this.cookieless ? "memory" : pending ? "pending" : "browser");
    this.optedOut = recall(OPT_OUT_KEY) == "1";
    this.signalled = !!options.respectPrivacySignals && privacySignal();
    // A visitor who is not tracked keeps no id from an earlier page load either.
    if (this.silent()) this.forgetVisitor();
    this.anonId = recall(ANON_KEY) || "";
    // A visitor who is not tracked gets no stored id either: it lives in
    // memory for this page.
    if (!this.anonId) {
      this.anonId = uuid();
      if (!this.silent()) persist(ANON_KEY, this.anonId);
    }
    this.userId = recall(USER_KEY);
    try {
      this.groups = JSON.parse(recall(GROUPS_KEY) || "{}");
    } catch {
      this.groups = {};
    }
    this.queue = new Queue(this.host, this.key);
    // What earlier page loads left unsent is not sent for a visitor who is
    // not tracked.
    if (this.silent()) this.queue.clear();
    this.flags = this.flagClient = new FlagClient(this);
    if (pending) {
      this.queue.hold(true);
      void this.flagClient.config(this.distinctId()).then((c) => this.settle(c));
    }
    // Deliver what is queued when the page is hidden: the last moment that is
    // reliable on mobile, where unload events may never fire.
    const hidden = () => document.visibilityState == "hidden" && this.flush();
    const pagehide = () => this.flush();
    document.addEventListener("visibilitychange", hidden);
    addEventListener("pagehide", pagehide);
    let stopped = false;
    const trackErrors = () => {
      if (stopped) return;
      const [flush, stop] = errorTracking((props, time, url) => this.capture("$exception", props, undefined, time, url));
      this.flushErrors = flush;
      // Before the queue's destroy: stopping hands the held errors to the queue.
      this.stop.unshift(stop);
    };
    this.stop.push(() => (stopped = true));
    if (options.errorTracking) trackErrors();
    // Left unset, the server decides: its errorTracking switch, in the config
    // (README.md, "Error tracking"). Errors before the answer are not seen.
    else if (options.errorTracking == null)
      void this.flagClient.config(this.distinctId()).then((c) => c && c.errorTracking && trackErrors());
    this.stop.push(
      () => document.removeEventListener("visibilitychange", hidden),
      () => removeEventListener("pagehide", pagehide),
      () => this.queue.destroy(),
    );
    if (options.messages !== false && !this.silent()) {
      this.early = [];
      void this.flagClient.config(this.distinctId()).then((c) => (c && c.messagesEnabled ? this.loadMessages() : (this.early = undefined)));
    }
    const rate = options.replaySampleRate;
    // A recording follows one session across page loads, which needs a stored session
    // id: none in cookieless mode (README.md, "Cookieless mode").
    if (options.replayEnabled && !this.silent() && !this.cookieless && sampled(sessionId(), rate == null ? 1 : rate)) {
      void this.flagClient
        .config(this.distinctId())
        .then((c) => c && c.replay && !this.cookieless && !this.silent() && this.load("replay", (create) => (this.replay = create(this))));
      this.stop.push(() => this.replay && this.replay.stop());
    }
    if (options.autocapture !== false) {
      this.stop.push(autocapture((name, props) => this.capture(name, props), () => this.pageview()));
      this.pageview();
    }
  }

  /**
   * track queues a custom event; `properties` must survive JSON.stringify. A
   * `$exception` (an error the app caught) gets `$exception_source: "manual"`
   * unless it has a source, and NUL replaced in its `$exception_*` strings.
   */
  track(eventName: string, properties?: Properties): void {
    this.capture(eventName, eventName == "$exception" ? manual(properties) : properties || {});
  }

  /**
   * identify binds this browser's anonymous id to `userId`: it sends `$identify`
   * (with `$anon_distinct_id` and the traits as properties), and every later event,
   * also after reloads, has `distinct_id` = `userId`.
   */
  identify(userId: string, traits?: Properties): void {
    try {
      if (!userId) return;
      userId = String(userId);
      if (userId == this.userId && !traits) return;
      this.userId = userId;
      this.keep(USER_KEY, userId);
      if (traits && !this.silent()) set("localStorage", TRAITS_KEY, stringify(traits));
      this.flagClient.reset();
      this.capture("$identify", { ...traits, $anon_distinct_id: this.cookieless ? COOKIELESS_ID : this.anonId }, true);
      if (this.messages) this.messages.identified();
    } catch {
      // Never throw into the page.
    }
  }

  /**
   * group puts the user in the group `key` of `type` (a company, a team): every later
   * event, also after reloads, has `$groups: {type: key, …}`, and the group's profile
   * on the server is created, or `properties` merged into it. A type is a lower-case
   * letter then up to 31 lower-case letters, digits or underscores, a key 1–200
   * characters, and a user is in at most 5 types; other input is ignored with a warning.
   */
  group(type: string, key: string, properties?: Properties): void {
    if (this.silent()) return;
    try {
      key = String(key);
      const groups = { ...this.groups, [type]: key };
      if (!/^[a-z][a-z0-9_]{0,31}$/.test(type) || !key || [...key].length > 200 || Object.keys(groups).length > 5) {
        console.warn("strata: bad group() or over 5 types", type, key);
        return;
      }
      persist(GROUPS_KEY, stringify((this.groups = groups)));
      // text/plain keeps the request simple: no CORS preflight.
      request(`${this.host}/api/v1/groups/${type}/${encodeURIComponent(key)}?api_key=${encodeURIComponent(this.key)}`, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: stringify({ properties: properties || {} }),
        keepalive: true,
      }).catch(() => {});
    } catch {
      // Never throw into the page.
    }
  }

  /**
   * reset forgets who the user is, e.g. at logout: a new anonymous id, no user id,
   * traits or groups, so that later events are not tied to the previous user; the
   * message renderer asks for the new user's messages.
   */
  reset(): void {
    try {
      this.userId = null;
      this.groups = {};
      forget(USER_KEY);
      forget(GROUPS_KEY);
      forget(TRAITS_KEY);
      this.keep(ANON_KEY, (this.anonId = uuid()));
      this.flagClient.reset();
      if (this.messages) this.messages.identified();
    } catch {
      // Never throw into the page.
    }
  }

  /**
   * optOut stops tracking this visitor: nothing more is sent (events, errors, exposures,
   * recordings, group updates), the events not yet sent are dropped, the ids the SDK
   * stored are deleted (they live in memory for the rest of the page load), and the choice
   * is remembered in localStorage (or a cookie) for later page loads, until optIn().
   * Feature flags still evaluate, so the page renders as it would.
   */
  optOut(): void {
    try {
      this.optedOut = true;
      this.queue.clear();
      this.forgetVisitor();
      if (this.replay) this.replay.stop();
      this.replay = undefined;
    } catch {
      // Never throw into the page.
    }
  }

  /**
   * optIn undoes optOut(): events are sent again from now on (a browser privacy signal
   * the page honours still silences the SDK).
   */
  optIn(): void {
    try {
      this.optedOut = false;
      forget(OPT_OUT_KEY);
      this.keep(ANON_KEY, this.anonId);
      if (this.userId) this.keep(USER_KEY, this.userId);
      if (Object.keys(this.groups).length) this.keep(GROUPS_KEY, stringify(this.groups));
    } catch {
      // Never throw into the page.
    }
  }

  /**
   * forgetVisitor deletes what the SDK stored (ids, queue, session, flag cache) for a
   * visitor who is not tracked, keeping only the opt-out choice.
   */
  private forgetVisitor(): void {
    forgetAll();
    if (this.optedOut) persist(OPT_OUT_KEY, "1");
  }

  /** keep stores a value that identifies the visitor, unless the visitor is not tracked. */
  private keep(key: string, value: string): void {
    if (!this.silent()) persist(key, value);
  }

  /**
   * hasOptedOut reports whether nothing is sent for this visitor: optOut() was called
   * (here or on an earlier page load), or the browser sends Global Privacy Control or
   * Do Not Track and the page asked to honour them.
   */
  hasOptedOut(): boolean {
    return this.silent();
  }

  private silent(): boolean {
    return this.optedOut || this.signalled;
  }

  /** flush sends the queue now with navigator.sendBeacon; call it before navigating away. */
  flush(): void {
    if (this.silent()) return;
    try {
      if (this.flushErrors) this.flushErrors();
      this.queue.flush();
    } catch {
      // Never throw into the page.
    }
  }

  /** destroy removes listeners and timers; queued events stay in localStorage. */
  destroy(): void {
    for (const f of this.stop) {
      try {
        f();
      } catch {
        // Never throw into the page; stop the rest.
      }
    }
  }

  /** distinctId is the identified user id, else the anonymous id. */
  distinctId(): string {
    return this.userId || this.anonId;
  }

  /** identified reports whether identify() was called, here or on an earlier page load. */
  identified(): boolean {
    return !!this.userId;
  }

  /** traits returns the traits of the last identify() call that passed any, or {}. */
  traits(): Properties {
    return getJSON<Properties>("localStorage", TRAITS_KEY) || {};
  }

  /** expose sends `$exposure` once per flag, user and session (MessageHost). */
  expose(flag: string, experimentId: string | number | null, variant: string): void {
    this.flagClient.expose(flag, this.distinctId(), experimentId, variant);
  }

  /**
   * capture builds the wire event and queues it. `internal` events ($identify,
   * $exposure) do not get the experiment properties. `time` and `url` default to
   * now and the current page (an error held in its burst passes its own). The
   * `release` option becomes `$release` unless the properties have one; the groups
   * of group() are `$groups`.
   */
  capture(eventName: string, properties: Properties, internal?: true, time = new Date(), url = location.href): void {
    if (this.silent()) return;
    try {
      const e: WireEvent = {
        uuid: uuid(),
        event_name: eventName,
        distinct_id: this.userId || (this.cookieless ? COOKIELESS_ID : this.anonId),
        timestamp: time.toISOString(),
        url,
        properties: {
          $release: this.options.release || undefined,
          ...properties,
          ...(!internal && this.experiment),
          $groups: Object.keys(this.groups).length ? this.groups : undefined,
          // In cookieless mode the server's inactivity rule makes the sessions
          // (docs/queries.md, "Sessions"): a session id would live for one page load.
          $session_id: this.cookieless ? undefined : sessionId(time.getTime()),
          $lib: "strata-js",
          $lib_version: VERSION,
          $viewport_width: viewportWidth(),
        },
      };
      if (this.referrer) e.referrer = this.referrer;
      // A copy through JSON keeps later mutations of `properties` out, and drops an
      // event that could never be sent (a cycle, a BigInt) here rather than later.
      this.queue.push(JSON.parse(stringify(e)));
      if (this.replay) this.replay.event(eventName, e.properties);
      if (this.messages) this.messages.event(eventName, e.properties, url);
      else if (this.early && this.early.length < EARLY_EVENTS) this.early.push([eventName, e.properties, url]);
    } catch {
      // Never throw into the page.
    }
  }

  /**
   * settle applies the product's privacy settings from its config (undefined when the
   * server could not be asked: then the page's options alone decide, and the browser's
   * storage is used). The page's own options win over the product's.
   */
  private settle(c: RemoteConfig | undefined): void {
    try {
      const o = this.options;
      if (o.respectPrivacySignals == null && c && c.respectPrivacySignals && privacySignal()) this.signalled = true;
      this.cookieless = o.cookieless == null ? !!(c && c.cookieless) : o.cookieless;
      if (this.cookieless) {
        settle("memory");
        // What was captured before the answer leaves as the mode would have sent it.
        const anon = this.anonId;
        this.queue.rewrite((e) => {
          const p = { ...e.properties };
          delete p.$session_id;
          if (p.$anon_distinct_id == anon) p.$anon_distinct_id = COOKIELESS_ID;
          return { ...e, distinct_id: e.distinct_id == anon ? COOKIELESS_ID : e.distinct_id, properties: p };
        });
      } else if (this.silent()) {
        settle("discard");
        // What an earlier page load stored goes too, and the opt-out is kept.
        this.forgetVisitor();
      } else {
        settle("browser");
      }
      if (this.silent()) this.queue.clear();
    } finally {
      this.queue.hold(false);
    }
  }

  /**
   * loadMessages adds the message renderer's script (async, from the API's
   * origin) and the hook it registers with; the events captured so far are
   * replayed to it.
   */
  private loadMessages(): void {
    const loading = this.load("messages", (create) => {
      const r = (this.messages = create(this));
      for (const e of this.early || []) r.event(...e);
      this.early = undefined;
    });
    if (!loading) this.early = undefined;
  }

  /** sessionId is the session's id, counting the call as activity (ReplayHost). */
  sessionId(): string {
    return sessionId();
  }

  /**
   * load adds the script `/sdk/v1/<name>.min.js` (async, from the API's origin) and the
   * hook `window.__strata<Name>` it registers with. It reports whether the script
   * could be added, which a page's Trusted Types may forbid (net.ts, addScript),
   * and never throws: it runs in the config's promise, where a throw would be
   * an unhandled rejection of the page's.
   */
  private load<K extends "messages" | "replay">(name: K, register: K extends "messages" ? Window["__strataMessages"] : Window["__strataReplay"]): boolean {
    try {
      (window as unknown as Record<string, unknown>)["__strata" + name[0].toUpperCase() + name.slice(1)] = register;
    } catch {
      return false;
    }
    return addScript(this.host, name, this.nonce);
  }

  /** pageview sends `$pageview` when the page (ignoring the hash) changed. */
  private pageview(): void {
    const page = location.href.split("#")[0];
    if (page == this.page) return;
    if (this.page) this.referrer = this.page;
    this.page = page;
    this.capture("$pageview", {});
  }
}

/**
 * viewportWidth is the page's viewport width in CSS pixels, sent with every event as
 * `$viewport_width`, from which the server finds the screen class (mobile, tablet,
 * laptop, desktop; docs/ingest.md, "Devices"); undefined, so not sent, when the page has
 * none (a hidden frame reports 0).
 */
export function viewportWidth(): number | undefined {
  const w = Math.round(window.innerWidth);
  return w > 0 ? w : undefined;
}

/**
 * privacySignal reports whether the browser asks not to be tracked: Global Privacy
 * Control (`navigator.globalPrivacyControl`) or Do Not Track (`navigator.doNotTrack`,
 * or the old `window.doNotTrack`, set to "1").
 */
export function privacySignal(): boolean {
  try {
    const nav = navigator as Navigator & { globalPrivacyControl?: boolean; doNotTrack?: string | null };
    const win = window as Window & { doNotTrack?: string | null };
    return nav.globalPrivacyControl === true || nav.doNotTrack == "1" || win.doNotTrack == "1";
  } catch {
    return false;
  }
}
