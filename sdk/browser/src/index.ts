/**
 * @strata/browser: the Strata browser SDK.
 *
 * ```ts
 * import { init, track, identify, group, flush, optOut, flags } from "@strata/browser";
 * init({ apiKey: "st_live_…", apiHost: "https://analytics.example.com" });
 * track("signup_started", { plan: "pro" });
 * const variant = await flags.getVariant("pricing_copy_test");
 * ```
 *
 * The functions act on one page-wide instance made by `init()`. Calls before
 * `init()` are ignored (getVariant resolves to "control").
 */
import { Strata } from "./client.js";
import type { Flags, Properties, StrataApi, StrataOptions } from "./types.js";

export { Strata, VERSION } from "./client.js";
export type { FlagConfig, Flags, Properties, RemoteConfig, StrataApi, StrataOptions, WireEvent } from "./types.js";

let instance: Strata | undefined;

/**
 * init starts the SDK once per page: it records a `$pageview` (with autocapture
 * on) and begins delivering events. Later calls return the first instance.
 */
export function init(options: StrataOptions): Strata | undefined {
  try {
    return (instance ??= new Strata(options));
  } catch {
    return undefined;
  }
}

/** track queues a custom event. */
export function track(eventName: string, properties?: Properties): void {
  instance?.track(eventName, properties);
}

/** identify binds the anonymous browser id to `userId` for this and later page loads. */
export function identify(userId: string, traits?: Properties): void {
  instance?.identify(userId, traits);
}

/** group puts the user in a group (a company, a team), tagging later events with `$groups`. */
export function group(type: string, key: string, properties?: Properties): void {
  instance?.group(type, key, properties);
}

/** reset forgets the user and their groups, e.g. at logout. */
export function reset(): void {
  instance?.reset();
}

/** flush sends queued events now with a beacon; call it before navigating away. */
export function flush(): void {
  instance?.flush();
}

/** optOut stops tracking this visitor, remembered across page loads, until optIn(). */
export function optOut(): void {
  instance?.optOut();
}

/** optIn resumes tracking after optOut(). */
export function optIn(): void {
  instance?.optIn();
}

/** hasOptedOut reports whether nothing is sent for this visitor (optOut(), or an honoured privacy signal). */
export function hasOptedOut(): boolean {
  return instance ? instance.hasOptedOut() : false;
}

/** flags evaluates feature flags and experiments for the current user. */
export const flags: Flags = {
  getVariant: (flagKey: string) => (instance ? instance.flags.getVariant(flagKey) : Promise.resolve("control")),
};

/** The module's API as one object; the script tag installs the same as `window.strata`. */
export const strata: StrataApi = { init, track, identify, group, reset, flush, optOut, optIn, hasOptedOut, flags };
