/**
 * The session recorder's script (dist/replay.min.js, served at /sdk/v1/replay.min.js).
 * The SDK adds it when the page set `replayEnabled` and the server's config says
 * `replay`, after setting `window.__strataReplay`, which this script calls to
 * register the recorder (docs/replay.md).
 */
import { Recorder } from "./recorder.js";

try {
  const register = window.__strataReplay;
  if (typeof register == "function") register((host) => new Recorder(host));
} catch {
  // Never throw into the page.
}
