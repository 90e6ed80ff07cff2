import { stringify } from "./json.js";
import type { Properties } from "./types.js";

/** `$exception_message` is cut to this many characters (a non-Error's JSON or String() form too). */
export const MAX_MESSAGE = 1000;
/** `$exception_stack` is cut to this many characters; the server's limit is 64 KiB of properties. */
export const MAX_STACK = 32_768;
/** The same error again within this long of its first occurrence is folded into one event. */
export const BURST_MS = 5000;
/** At most this many different errors wait in their burst at once; more in the meantime are dropped. */
export const MAX_PENDING = 100;

/** Sends one `$exception` with its properties, the time and the page of its first occurrence. */
type Send = (properties: Properties, time: Date, url: string) => void;

interface Burst {
  p: Properties;
  /** Occurrences folded in, the first included. */
  n: number;
  t: Date;
  u: string;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * errorTracking turns uncaught errors (the window's `error` event) and unhandled
 * promise rejections into `$exception` properties for `send`. It listens with
 * addEventListener, so other handlers and `window.onerror` keep working, and it
 * neither prevents the browser's default (the console message) nor stops the event.
 *
 * An error is held for BURST_MS: the same type, message and first stack frame
 * again within that time only counts up `$exception_count`. The burst is sent when
 * it ends, or earlier by the returned `flush` (the SDK calls it on flush() and
 * when the page is hidden). The returned `stop` removes the listeners and flushes.
 *
 * The handlers never throw, and an error raised while they or `send` run (the
 * SDK's own code) is ignored rather than captured, so nothing can recurse.
 */
export function errorTracking(send: Send): [flush: () => void, stop: () => void] {
  const bursts = new Map<string, Burst>();
  let busy = false;
  /** guard runs f unless the SDK is already inside a handler, and swallows what it throws. */
  const guard = (f: () => void) => {
    if (busy) return;
    busy = true;
    try {
      f();
    } catch {
      // Never throw into the page, and never capture the SDK's own errors.
    }
    busy = false;
  };
  const end = (key: string) => {
    const b = bursts.get(key)!;
    bursts.delete(key);
    clearTimeout(b.timer);
    send({ ...b.p, $exception_count: b.n }, b.t, b.u);
  };
  const record = (source: string, v: unknown, fallback?: string) =>
    guard(() => {
      const p = describe(v, source, fallback);
      const frame = /.*:\d+:\d+.*/.exec((p.$exception_stack as string) || "");
      const key = [p.$exception_type, p.$exception_message, frame && frame[0]].join("\n");
      const b = bursts.get(key);
      if (b) b.n++;
      else if (bursts.size < MAX_PENDING) {
        bursts.set(key, { p, n: 1, t: new Date(), u: location.href, timer: setTimeout(() => guard(() => end(key)), BURST_MS) });
      }
    });
  const onError = (ev: Event) => {
    const e = ev as ErrorEvent;
    record("onerror", e.error, e.message);
  };
  const onRejection = (ev: Event) => record("unhandledrejection", (ev as PromiseRejectionEvent).reason);
  const flush = () => guard(() => bursts.forEach((_, key) => end(key)));
  addEventListener("error", onError);
  addEventListener("unhandledrejection", onRejection);
  return [
    flush,
    () => {
      removeEventListener("error", onError);
      removeEventListener("unhandledrejection", onRejection);
      flush();
    },
  ];
}

/**
 * describe gives the `$exception_*` properties of a thrown value or rejection
 * reason. An Error (or anything with a string `stack`) gives its name (else its
 * constructor's name, else "Error"), message and raw stack. Anything else gives a
 * short JSON or String() form as the message, no stack, and the type
 * "UnhandledRejection" for a rejection, "Error" for a throw. An error event
 * without an error object (a cross-origin "Script error.") keeps the event's message.
 */
export function describe(v: unknown, source: string, fallback?: string): Properties {
  const e = v as { name?: unknown; message?: unknown; stack?: unknown } | null | undefined;
  const p: Properties = { $exception_source: source };
  if (v instanceof Error || typeof (e && e.stack) == "string") {
    p.$exception_type = clip(String(e!.name || (e!.constructor && e!.constructor.name) || "Error"), 255);
    p.$exception_message = clip(String(e!.message ?? ""), MAX_MESSAGE);
    if (typeof e!.stack == "string") p.$exception_stack = clip(e!.stack, MAX_STACK);
  } else {
    p.$exception_type = source == "unhandledrejection" ? "UnhandledRejection" : "Error";
    p.$exception_message = clip(v == null && fallback ? fallback : text(v), MAX_MESSAGE);
  }
  return p;
}

/** text is a string as it is, else its JSON, else String(). */
function text(v: unknown): string {
  try {
    return typeof v == "string" ? v : stringify(v) || String(v);
  } catch {
    try {
      return String(v);
    } catch {
      return typeof v;
    }
  }
}

/**
 * manual gives the properties of an `$exception` the app sends itself with
 * track(): source "manual" unless it names one, and its `$exception_*` strings
 * scrubbed as a captured error's are.
 */
export function manual(properties?: Properties): Properties {
  const p: Properties = { $exception_source: "manual", ...properties };
  for (const k of Object.keys(p)) if (k.startsWith("$exception_") && typeof p[k] == "string") p[k] = scrub(p[k] as string);
  return p;
}

/** clip cuts s to n UTF-16 units and scrubs it. */
function clip(s: string, n: number): string {
  return scrub(s.slice(0, n));
}

/**
 * scrub replaces with U+FFFD what the server would refuse: NUL, which rejects
 * the whole event (`invalid_character`, docs/ingest.md), so that
 * `new Error("a\0b")` is still reported, and unpaired surrogates (one half of
 * a pair that clip cut included). Every string of an `$exception` goes
 * through it.
 */
function scrub(s: string): string {
  return s.replace(/[\0\ud800-\udfff]/gu, "\ufffd");
}
