// @vitest-environment node
// The npm tarball: `npm pack` must ship ESM, CommonJS and type declarations
// for both, the script-tag build, and nothing from the sources or tests;
// installed offline from the tarball into a scratch project, the package must
// load by name in Node from ESM and CommonJS without touching window, and
// TypeScript must resolve its types from the packed files alone (node16 and
// bundler resolution; the declarations of ../shared/, which the package
// builds from, included), rejecting wrong uses.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

    // The source maps ship beside the script-tag builds; each carries the
    // text of every source it names (some are in ../shared/ or
    // node_modules/, which do not ship), and each script names a map that ships.
    for (const f of files.filter((f) => f.endsWith(".map"))) {
      const map = JSON.parse(readFileSync(join(pkg, f), "utf8"));
      expect(map.sourcesContent?.length, f).toBe(map.sources.length);
      expect(map.sourcesContent.every((c: unknown) => typeof c === "string"), f).toBe(true);
    }
    // (The file's own comment, on its last line: replay.min.js also holds
    // rrweb's inlined worker as a string, whose comment names a map rrweb
    // never shipped; a browser resolves it against the worker's blob URL.)
    for (const f of files.filter((f) => /\.c?js$/.test(f))) {
      const url = /\n\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(pkg, f), "utf8"))?.[1];
      if (url) expect(files, `${f} names ${url}`).toContain(join(dirname(f), url));
    }
    // No runtime dependency: the tarball installs offline, from itself alone.
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});

    // Installed as a user installs it, into a scratch project, offline.
    const project = join(dir, "app");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline", join(dir, info.filename)], { cwd: project, stdio: "ignore" });

    // Imported and required by name in plain Node: loading touches neither
    // window nor document (server-side rendering imports it too).
    const names = ["init", "track", "identify", "flush", "flags", "Strata"];
    const check = `for (const n of ${JSON.stringify(names)}) if (s[n] === undefined) throw new Error(n + " is missing");
      console.log(typeof window, s.VERSION);`;
    writeFileSync(join(project, "load.mjs"), `import * as s from "@strata/browser";\n${check}\n`);
    writeFileSync(join(project, "load.cjs"), `const s = require("@strata/browser");\n${check}\n`);
    const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
    for (const f of ["load.mjs", "load.cjs"]) {
      expect(execFileSync(process.execPath, [f], { cwd: project, encoding: "utf8" }).trim(), f).toBe(`undefined ${version}`);
    }
    const cjs = createRequire(join(project, "package.json"))("@strata/browser");
    const esm = await import(join(project, "node_modules", "@strata", "browser", "dist", "index.js"));
    for (const mod of [cjs, esm]) {
      for (const name of names) {
        expect(mod[name], name).toBeDefined();
      }
    }

    // The declarations, for import and require, in a project that has only
    // the tarball: tsc reports any import of a declaration it did not ship.
    writeFileSync(join(project, "esm.mts"), `import { flags, init, type FlagConfig } from "@strata/browser";\ninit({ apiKey: "k", apiHost: "h" });\nexport const f: FlagConfig | undefined = undefined;\nexport const v: Promise<string> = flags.getVariant("x");\n`);
    writeFileSync(join(project, "cjs.cts"), `import s = require("@strata/browser");\nexport const c: s.FlagConfig["rollout"] = 1;\nexport const v: Promise<string> = s.flags.getVariant("x");\n`);
    const tsc = [join(pkg, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--lib", "es2021,dom", "esm.mts", "cjs.cts"];
    const typecheck = (args: string[]) => {
      try {
        execFileSync(process.execPath, args, { cwd: project, encoding: "utf8" });
        return "";
      } catch (e) {
        return String((e as { stdout: string }).stdout) || "tsc failed";
      }
    };
    expect(typecheck(tsc)).toBe("");
    // A bundler's resolution (Vite, esbuild, webpack) reads the same exports.
    writeFileSync(join(project, "bundler.ts"), `import { init, track } from "@strata/browser";\ninit({ apiKey: "k", apiHost: "h" });\ntrack("signup", { plan: "pro" });\n`);
    const bundler = [tsc[0], "--noEmit", "--strict", "--module", "esnext", "--moduleResolution", "bundler", "--lib", "es2021,dom"];
    expect(typecheck([...bundler, "bundler.ts"])).toBe("");
    // Uses the types forbid must fail to compile, under both resolutions:
    // the declarations resolved and are not any.
    writeFileSync(join(project, "wrong.mts"), `import { init, flags } from "@strata/browser";\ninit({ apiKey: 1 });\nexport const v: number = await flags.getVariant("x");\n`);
    for (const args of [[...tsc.slice(0, -2), "--target", "es2022", "wrong.mts"], [...bundler, "--target", "es2022", "wrong.mts"]]) {
      const out = typecheck(args);
      expect(out, args.join(" ")).toMatch(/wrong\.mts\(2,\d+\): error TS2322/);
      expect(out, args.join(" ")).toMatch(/wrong\.mts\(3,\d+\): error TS2322/);
      expect(out, args.join(" ")).not.toContain("TS2307");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
