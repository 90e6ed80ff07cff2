// Builds dist/: the ESM and CommonJS modules (one bundle each, no runtime
// dependency) and type declarations for both (.d.ts for import, .d.cts for
// require). It first regenerates src/bots.gen.ts from the server's
// allowlist, so a build always classifies as the server it ships beside.
// The assignment code comes from ../shared/ (its README.md), bundled in like
// src/.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { emitDeclarations } from "../../shared/declarations.mjs";
import { allowlistPath, outputPath, render } from "./gen-bots.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

const generated = render(readFileSync(allowlistPath, "utf8"));
if (readFileSync(outputPath, "utf8") !== generated) {
  writeFileSync(outputPath, generated);
  console.log("regenerated src/bots.gen.ts from ai_bots.json: commit it");
}

rmSync(root + "dist", { recursive: true, force: true });
for (const format of ["esm", "cjs"]) {
  await build({
    absWorkingDir: root,
    entryPoints: ["src/index.ts"],
    outfile: format === "esm" ? "dist/index.js" : "dist/index.cjs",
    bundle: true,
    format,
    // Node 20+ and the edge runtimes: the SDK uses fetch, timers and crypto.randomUUID only.
    platform: "neutral",
    target: "es2022",
  });
}

emitDeclarations(root);
console.log("built dist/");
