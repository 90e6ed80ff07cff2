/**
 * The script-tag build (dist/sdk.min.js): installs `window.strata`.
 *
 *   <script src="https://analytics.example.com/sdk/v1/sdk.min.js"></script>
 *   <script>strata.init({ apiKey: "st_live_…" })</script>
 *
 * apiHost defaults to the origin that served this script, so a self-hosted
 * Strata needs no configuration. With `data-api-key` on the script tag the SDK
 * initialises itself, which also works with `async` and `defer`.
 */
import { strata } from "./index.js";
import type { StrataApi, StrataOptions } from "./types.js";

declare global {
  interface Window {
    strata?: StrataApi;
  }
}

// currentScript is only set while this file runs, so read it now.
const script = document.currentScript as HTMLScriptElement | null;
let origin = location.origin;
// A page that allows scripts by nonce gave this tag one; the scripts the SDK adds need it too.
let nonce: string | undefined;
try {
  if (script?.src) origin = new URL(script.src).origin;
  nonce = (script && script.nonce) || undefined;
} catch {
  // Keep the page's origin.
}

// A second copy of the script on the page keeps the first one's state.
if (!window.strata) {
  window.strata = {
    ...strata,
    init: (options: StrataOptions) =>
      strata.init({ ...options, apiHost: (options && options.apiHost) || origin, nonce: (options && options.nonce) || nonce }),
  };
  const key = script?.getAttribute("data-api-key");
  if (key) window.strata.init({ apiKey: key });
}
