/**
 * The SDK's requests and scripts, as they must go on pages the SDK does not
 * control: a page may wrap window.fetch or navigator.sendBeacon with code that
 * throws, and may enforce Trusted Types (README.md, "Content Security Policy").
 * Nothing here throws.
 */

/**
 * request is fetch(url, init) as a promise whatever the page's fetch does: a
 * wrapper that throws synchronously, or returns something that is not a
 * promise, gives a rejected or resolved promise that the caller's `.catch`
 * (or `try` around `await`) handles, instead of an error thrown into the page.
 */
export function request(url: string, init?: RequestInit): Promise<Response> {
  try {
    return Promise.resolve(fetch(url, init));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** beacon is navigator.sendBeacon(url, body), false when it is missing, refuses or throws. */
export function beacon(url: string, body: string): boolean {
  try {
    return !!navigator.sendBeacon(url, body);
  } catch {
    return false;
  }
}

/** The subset of a Trusted Types policy the SDK uses. */
interface Policy {
  createScriptURL(url: string): unknown;
}

/** The script URLs the SDK built and may add; the policy converts no other. */
const scripts: string[] = [];
/** The Trusted Types policy "strata": undefined until needed, null where the page does not allow it. */
let policy: Policy | null | undefined;
let warned = false;

/**
 * addScript adds `<script async src="{host}/sdk/v1/{name}.min.js">` to the page and
 * reports whether it could. Where the browser has Trusted Types, the URL goes
 * through the policy "strata", created once, which converts only the URLs of
 * the SDK's own scripts. When the page's `trusted-types` directive does not
 * allow "strata" (the browser then reports one violation of it), the script
 * is not added, with one console warning per page that says what to add: the
 * SDK then sends events only, without messages or replay.
 */
export function addScript(host: string, name: string, nonce?: string): boolean {
  const url = host + "/sdk/v1/" + name + ".min.js";
  try {
    scripts.push(url);
    const tt = (window as { trustedTypes?: { createPolicy(name: string, rules: Policy): Policy } }).trustedTypes;
    if (tt && policy === undefined) {
      try {
        policy = tt.createPolicy("strata", {
          createScriptURL: (u: string) => {
            if (scripts.indexOf(u) < 0) throw new TypeError(u);
            return u;
          },
        });
      } catch {
        // Only a page's trusted-types directive makes createPolicy throw (its
        // list lacks "strata", or has it without 'allow-duplicates' and
        // another copy of the SDK made it). Such a page requires Trusted
        // Types for scripts too: a plain URL would be refused, with a second
        // violation report, so none is tried.
        policy = null;
      }
    }
    if (policy === null) return off();
    const s = document.createElement("script");
    s.async = true;
    if (nonce) s.nonce = nonce;
    s.src = (policy ? policy.createScriptURL(url) : url) as string;
    (document.head || document.documentElement).appendChild(s);
    return true;
  } catch {
    return off();
  }
}

/** off warns once per page that messages and replay cannot load, and returns false. */
function off(): false {
  if (!warned) {
    warned = true;
    console.warn("strata: no messages or replay: the CSP lacks trusted-types strata");
  }
  return false;
}
