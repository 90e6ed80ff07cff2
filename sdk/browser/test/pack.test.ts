// @vitest-environment node
// The npm tarball: `npm pack` must ship ESM, CommonJS and type declarations
// for both, the script-tag build, and nothing from the sources or tests;
// and the package's entry points must load in Node from the packed files.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";

const pkg = new URL("..", import.meta.url).pathname;

it("npm pack ships ESM, CJS, .d.ts and sdk.min.js, and they load", async () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-pack-"));
  try {
    // Packs dist/ as `npm run build` left it (make builds before testing);
    // --ignore-scripts keeps prepack from rewriting dist/ under the other
    // test files running at the same time.
    const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: pkg, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const [info] = JSON.parse(out.slice(out.indexOf("[")));
    const files: string[] = info.files.map((f: { path: string }) => f.path);
    for (const f of ["package.json", "README.md", "dist/index.js", "dist/index.cjs", "dist/types/index.d.ts", "dist/types/index.d.cts", "dist/sdk.min.js", "dist/messages.min.js"]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);

    execFileSync("tar", ["-xzf", join(dir, info.filename), "-C", dir]);
    const root = join(dir, "package");
    const cjs = createRequire(join(root, "package.json"))(join(root, "dist/index.cjs"));
    const esm = await import(join(root, "dist/index.js"));
    for (const mod of [cjs, esm]) {
      for (const name of ["init", "track", "identify", "flush", "flags", "Strata"]) {
        expect(mod[name], name).toBeDefined();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
