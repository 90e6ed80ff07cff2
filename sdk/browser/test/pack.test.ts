// @vitest-environment node
// The npm tarball: `npm pack` must ship ESM, CommonJS and type declarations
// for both, the script-tag build, and nothing from the sources or tests;
// and the package's entry points must load in Node from the packed files,
// and TypeScript must resolve their types from the packed files alone
// (the declarations of ../shared/, which the package builds from, included).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

    // Every declaration's relative imports name a declaration that ships:
    // those of ../shared/ (which the package builds from) are in the tarball.
    for (const f of files.filter((f) => /\.d\.c?ts$/.test(f))) {
      for (const [, spec] of readFileSync(join(pkg, f), "utf8").matchAll(/(?:from\s+|import\()"(\.{1,2}\/[^"]+)"/g)) {
        const target = join(dirname(f), spec).replace(/\.js$/, ".d.ts").replace(/\.cjs$/, ".d.cts");
        expect(files, `${f} imports ${spec}`).toContain(target);
      }
    }

    execFileSync("tar", ["-xzf", join(dir, info.filename), "-C", dir]);
    const root = join(dir, "package");
    const cjs = createRequire(join(root, "package.json"))(join(root, "dist/index.cjs"));
    const esm = await import(join(root, "dist/index.js"));
    for (const mod of [cjs, esm]) {
      for (const name of ["init", "track", "identify", "flush", "flags", "Strata"]) {
        expect(mod[name], name).toBeDefined();
      }
    }

    // The declarations, for import and require, in a project that has only
    // the tarball: tsc reports any import of a declaration it did not ship.
    const project = join(dir, "app");
    mkdirSync(join(project, "node_modules", "@strata"), { recursive: true });
    renameSync(root, join(project, "node_modules", "@strata", "browser"));
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
    writeFileSync(join(project, "esm.mts"), `import { flags, init, type FlagConfig } from "@strata/browser";\ninit({ apiKey: "k", apiHost: "h" });\nexport const f: FlagConfig | undefined = undefined;\nexport const v: Promise<string> = flags.getVariant("x");\n`);
    writeFileSync(join(project, "cjs.cts"), `import s = require("@strata/browser");\nexport const c: s.FlagConfig["rollout"] = 1;\nexport const v: Promise<string> = s.flags.getVariant("x");\n`);
    const tsc = [join(pkg, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--lib", "es2021,dom", "esm.mts", "cjs.cts"];
    try {
      execFileSync(process.execPath, tsc, { cwd: project, encoding: "utf8" });
    } catch (e) {
      throw new Error("tsc: " + (e as { stdout: string }).stdout);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
