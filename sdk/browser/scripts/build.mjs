// Builds dist/: the minified scripts (the SDK, its message renderer and its session recorder, with
// their sourcemaps), the ESM and CJS modules,
// and type declarations for both (.d.ts for import, .d.cts for require). The
// assignment code comes from ../shared/ (its README.md), bundled in like src/.
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { emitDeclarations } from "../../shared/declarations.mjs";
import { iife, messages, modules, replay } from "./esbuild-options.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

rmSync(root + "dist", { recursive: true, force: true });
for (const options of [iife, messages, replay, ...modules]) await build(options);

// The script tag's global is not part of the module's types, nor is the
// renderer (a script of its own), nor the recorder.
emitDeclarations(root, ["iife.d.ts", "messages", "replay"]);
console.log("built dist/");
