// The esbuild settings of every output, shared by scripts/build.mjs and the size
// test (test/size.test.ts), so the budget is checked on exactly what ships.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// path, not new URL(): the tests load this file where URL is the DOM's.
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Browsers from 2019 on: everything the SDK uses (fetch keepalive, sendBeacon) is there. */
export const target = "es2019";

/** dist/sdk.min.js: the script tag build, served at /sdk/v1/sdk.min.js. */
export const iife = {
  absWorkingDir: root,
  entryPoints: ["src/iife.ts"],
  outfile: "dist/sdk.min.js",
  bundle: true,
  format: "iife",
  minify: true,
  sourcemap: true,
  legalComments: "none",
  target,
};

/**
 * dist/messages.min.js: the message renderer, served at /sdk/v1/messages.min.js
 * and loaded by the SDK only when the product has active messages.
 */
export const messages = { ...iife, entryPoints: ["src/messages/iife.ts"], outfile: "dist/messages.min.js" };

/**
 * dist/replay.min.js: the session recorder (rrweb), served at /sdk/v1/replay.min.js
 * and loaded by the SDK only when the page turns replay on (docs/replay.md).
 */
export const replay = { ...iife, entryPoints: ["src/replay/iife.ts"], outfile: "dist/replay.min.js" };

/** dist/index.js and dist/index.cjs: the npm package's module builds. */
export const modules = ["esm", "cjs"].map((format) => ({
  absWorkingDir: root,
  entryPoints: ["src/index.ts"],
  outfile: format == "esm" ? "dist/index.js" : "dist/index.cjs",
  bundle: true,
  format,
  target,
}));
