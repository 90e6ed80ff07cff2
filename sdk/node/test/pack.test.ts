// The npm tarball, as a user gets it: `npm pack` ships the ESM and CommonJS
// builds and the type declarations of both, nothing else of the sources;
// installed into a scratch project, `require("@strata/node")` and
// `import("@strata/node")` both work and classify alike, and TypeScript
// resolves the types of both.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { VERSION } from "../src/version";

const run = promisify(execFile);
const pkg = join(__dirname, "..");

it("has the version of package.json", () => {
  expect(VERSION).toBe(JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version);
});

it("packs, installs, requires and imports", async () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-node-pack-"));
  try {
    // Build here (nothing else reads dist/), then pack without prepack's second build.
    await run(process.execPath, [join(pkg, "scripts", "build.mjs")], { cwd: pkg });
    const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: pkg });
    const [info] = JSON.parse(stdout.slice(stdout.indexOf("[")));
    const files: string[] = info.files.map((f: { path: string }) => f.path).sort();
    for (const f of ["package.json", "README.md", "dist/index.js", "dist/index.cjs", "dist/types/index.d.ts", "dist/types/index.d.cts"]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => !f.startsWith("dist/") && f !== "package.json" && f !== "README.md")).toEqual([]);

    // Every declaration's relative imports name a declaration that ships:
    // those of ../shared/ (which the package builds from) are in the tarball.
    for (const f of files.filter((f) => /\.d\.c?ts$/.test(f))) {
      for (const [, spec] of readFileSync(join(pkg, f), "utf8").matchAll(/(?:from\s+|import\()"(\.{1,2}\/[^"]+)"/g)) {
        const target = join(dirname(f), spec).replace(/\.js$/, ".d.ts").replace(/\.cjs$/, ".d.cts");
        expect(files, `${f} imports ${spec}`).toContain(target);
      }
    }

    const project = join(dir, "app");
    await run("mkdir", [project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--offline", join(dir, info.filename)], { cwd: project });
    const ua = "Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)";
    const cjs = `const s = require("@strata/node");
      const c = new s.Strata({ apiKey: "k", host: "http://127.0.0.1:9" });
      console.log(JSON.stringify([typeof s.expressMiddleware, typeof s.edgeMiddleware, typeof s.withStrata, s.classifyBot(${JSON.stringify(ua)}).name, s.isAiBot("Chrome"), typeof c.getVariant]));`;
    const esm = `const s = await import("@strata/node");
      const c = new s.Strata({ apiKey: "k", host: "http://127.0.0.1:9" });
      console.log(JSON.stringify([typeof s.expressMiddleware, typeof s.edgeMiddleware, typeof s.withStrata, s.classifyBot(${JSON.stringify(ua)}).name, s.isAiBot("Chrome"), typeof c.getVariant]));`;
    const want = JSON.stringify(["function", "function", "function", "ClaudeBot", false, "function"]);
    expect((await run(process.execPath, ["-e", cjs], { cwd: project })).stdout.trim()).toBe(want);
    expect((await run(process.execPath, ["--input-type=module", "-e", esm], { cwd: project })).stdout.trim()).toBe(want);
    // From a CommonJS script, import() gets the ESM build; both must work from .cjs and .mjs files.
    writeFileSync(join(project, "a.cjs"), `import("@strata/node").then((s) => console.log(typeof s.Strata))`);
    expect((await run(process.execPath, ["a.cjs"], { cwd: project })).stdout.trim()).toBe("function");

    // The README's uses, with Express's and Node's own types, against the built declarations.
    await run(process.execPath, [join(pkg, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--lib", "es2022,dom", "--types", "node", join(pkg, "test", "typecheck", "usage.ts")], { cwd: pkg }).catch((e) => {
      throw new Error("tsc: " + e.stdout);
    });

    // The declarations, for both resolutions.
    for (const [file, code] of [
      ["esm.mts", `import { Strata, classifyBot, type BotInfo } from "@strata/node";\nconst b: BotInfo | null = classifyBot("x");\nnew Strata({ apiKey: "k", host: "h" }).capture({ event: "e", distinctId: "u" });\nexport { b };\n`],
      ["cjs.cts", `import s = require("@strata/node");\nconst b: s.BotInfo | null = s.classifyBot("x");\nnew s.Strata({ apiKey: "k", host: "h" }).capture({ event: "e", distinctId: "u" });\nexport = b;\n`],
    ]) {
      writeFileSync(join(project, file), code);
    }
    const tsc = [join(pkg, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--lib", "es2022,dom", "esm.mts", "cjs.cts"];
    await run(process.execPath, tsc, { cwd: project }).catch((e) => {
      throw new Error("tsc: " + e.stdout);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
