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
 * rrwebRecordOnly keeps the recorder's bundle to rrweb's recording code.
 * rrweb 2.2.2 publishes one ES module (no `rrweb/record` entry; the separate
 * @rrweb/record package stops at 2.1.6) and esbuild already drops its player,
 * but not the two copies of PostCSS that rrweb-snapshot inlines for the
 * player's CSS rewriting (adaptCssForReplay): the bundler that built rrweb left
 * top-level statements reading them (`import_postcss.default.parse;`) and the
 * wrappers' calls unmarked, which esbuild must assume have side effects. This
 * removes those reads and marks the wrappers pure, so that esbuild drops
 * PostCSS (about 37 KB gzipped) when nothing reached from `record` uses it.
 * It also corrects one list of rrweb's (below). The code is otherwise
 * rrweb's, unchanged. It fails the build when rrweb's
 * file no longer has these shapes (another version), rather than letting the
 * bundle grow back; test/size.test.ts checks the result.
 */
const rrwebRecordOnly = {
  name: "rrweb-record-only",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]rrweb[\\/]dist[\\/]rrweb\.js$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      let js = await readFile(args.path, "utf8");
      const patch = (pattern, replacement, count) => {
        const found = js.match(pattern)?.length ?? 0;
        if (found != count) throw new Error(`rrweb-record-only: ${pattern} found ${found} times in ${args.path}, expected ${count}`);
        js = js.replace(pattern, replacement);
      };
      patch(/^import_postcss(?:\$1)?\.default(?:\.\w+)?;\n/gm, "", 49);
      patch(/__toESM(\$1)?\(\(\/\* @__PURE__ \*\/ __commonJSMin/g, "__toESM$1(/* @__PURE__ */ (/* @__PURE__ */ __commonJSMin", 2);
      patch(/^var postcss_default = import_postcss\$1\.default;$/gm, "var postcss_default = /* @__PURE__ */ (() => import_postcss$$1.default)();", 1);
      // rrweb checks that the page has not replaced the DOM's accessors it
      // uses, and otherwise takes clean ones from a new iframe. It lists the
      // methods querySelector and querySelectorAll among Element's accessors,
      // so the check always fails and every recording starts by creating and
      // removing two iframes (one per copy of the check), about 10 ms each
      // here. They are checked as the methods they are (as rrweb's open pull
      // request #1802 does), so an iframe is made only when the page patched one.
      patch(/^\tElement: \[\n\t\t"shadowRoot",\n\t\t"querySelector",\n\t\t"querySelectorAll"\n\t\],$/gm, '\tElement: ["shadowRoot"],', 3);
      patch(/^(var testableMethods(?:\$\d)? = \{\n(?:\t.*\n){2})\tElement: \[\],$/gm, '$1\tElement: ["querySelector", "querySelectorAll"],', 3);
      return { contents: js, loader: "js" };
    });
  },
};

/**
 * dist/replay.min.js: the session recorder (rrweb's `record`), served at
 * /sdk/v1/replay.min.js and loaded by the SDK only when the page turns replay
 * on (docs/replay.md).
 */
export const replay = { ...iife, entryPoints: ["src/replay/iife.ts"], outfile: "dist/replay.min.js", plugins: [rrwebRecordOnly] };

/** dist/index.js and dist/index.cjs: the npm package's module builds. */
export const modules = ["esm", "cjs"].map((format) => ({
  absWorkingDir: root,
  entryPoints: ["src/index.ts"],
  outfile: format == "esm" ? "dist/index.js" : "dist/index.cjs",
  bundle: true,
  format,
  target,
}));
