/**
 * The message renderer's script (dist/messages.min.js, served at
 * /sdk/v1/messages.min.js). The SDK adds it when the product has active
 * messages, after setting `window.__strataMessages`, which this script calls
 * to register the renderer. On its own (the dashboard's preview frame) it only
 * installs `window.StrataMessages.preview`.
 */
import { preview } from "./preview.js";
import { Renderer } from "./renderer.js";

declare global {
  interface Window {
    StrataMessages?: { preview: typeof preview };
  }
}

window.StrataMessages = { preview };
try {
  const register = window.__strataMessages;
  if (typeof register == "function") register((host) => new Renderer(host));
} catch {
  // Never throw into the page.
}
