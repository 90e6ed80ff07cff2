// Builds dist/: the minified scripts (the SDK, its message renderer and its session recorder, with
// their sourcemaps), the ESM and CJS modules,
// and type declarations for both (.d.ts for import, .d.cts for require).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { iife, messages, modules, replay } from "./esbuild-options.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const types = root + "dist/types/";

rmSync(root + "dist", { recursive: true, force: true });
for (const options of [iife, messages, replay, ...modules]) await build(options);

execFileSync(process.execPath, [root + "node_modules/typescript/bin/tsc", "-p", root], { stdio: "inherit" });
rmSync(types + "iife.d.ts"); // The script tag's global is not part of the module's types,
rmSync(types + "messages", { recursive: true }); // nor is the renderer, a script of its own,
rmSync(types + "replay", { recursive: true }); // nor the recorder.
for (const name of readdirSync(types)) {
  if (!name.endsWith(".d.ts")) continue;
  // A .d.cts file that imports "./x.cjs" gets the types of "./x.d.cts".
  const cts = readFileSync(types + name, "utf8").replace(/(from\s+|import\()"(\.\/[\w-]+)\.js"/g, '$1"$2.cjs"');
  writeFileSync(types + name.replace(/\.d\.ts$/, ".d.cts"), cts);
}
console.log("built dist/");
