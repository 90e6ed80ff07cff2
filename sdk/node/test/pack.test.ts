// The npm tarball, as a user gets it: `npm pack` ships the ESM and CommonJS
// builds and the type declarations of both, nothing else of the sources;
// installed into a scratch project, `require("@strata/node")` and
// `import("@strata/node")` both work and classify alike, a client from
// either sends an event to a local server, and TypeScript resolves the
// types of both (node16 and bundler resolution), rejecting wrong uses.
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
    // No source maps: they would name ../src/ and ../../shared/, which do not ship.
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    for (const f of files.filter((f) => /\.c?js$/.test(f))) {
      expect(readFileSync(join(pkg, f), "utf8"), f).not.toContain("sourceMappingURL");
    }
    // No runtime dependency: the tarball installs offline, from itself alone.
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});

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

    // The public API from an ESM file and from a CommonJS file: a client
    // sends an event to a server on 127.0.0.1 that the script starts, and
    // the server receives it with the key.
    const send = (load: string) => `${load}
      const { createServer } = require("node:http");
      const got = [];
      const server = createServer((req, res) => {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => {
          got.push({ path: req.url, key: req.headers["x-api-key"], body: JSON.parse(body) });
          res.setHeader("Content-Type", "application/json");
          res.end('{"accepted":1,"rejected":[]}');
        });
      });
      server.listen(0, "127.0.0.1", async () => {
        const client = new s.Strata({ apiKey: "st_live_pack", host: "http://127.0.0.1:" + server.address().port });
        client.capture({ event: "packed", distinctId: "u1", properties: { via: "${load.includes("import") ? "esm" : "cjs"}" } });
        await client.shutdown();
        server.close();
        const e = got[0].body.batch[0];
        console.log(JSON.stringify([got.length, got[0].path, got[0].key, e.event_name, e.distinct_id, e.properties.via, e.properties.$lib_version]));
      });`;
    writeFileSync(join(project, "send.mjs"), send(`import * as s from "@strata/node";\nimport { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);`));
    writeFileSync(join(project, "send.cjs"), send(`const s = require("@strata/node");`));
    for (const [file, via] of [["send.mjs", "esm"], ["send.cjs", "cjs"]]) {
      expect((await run(process.execPath, [file], { cwd: project })).stdout.trim(), file).toBe(
        JSON.stringify([1, "/e", "st_live_pack", "packed", "u1", via, VERSION]),
      );
    }

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
    const tscPath = join(pkg, "node_modules", "typescript", "bin", "tsc");
    const tsc = [tscPath, "--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--lib", "es2022,dom", "esm.mts", "cjs.cts"];
    await run(process.execPath, tsc, { cwd: project }).catch((e) => {
      throw new Error("tsc: " + e.stdout);
    });
    // A bundler's resolution (Vite, esbuild, webpack) reads the same exports.
    writeFileSync(join(project, "bundler.ts"), `import { Strata, type CaptureMessage } from "@strata/node";\nconst m: CaptureMessage = { event: "e", distinctId: "u" };\nnew Strata({ apiKey: "k", host: "h" }).capture(m);\n`);
    await run(process.execPath, [tscPath, "--noEmit", "--strict", "--module", "esnext", "--moduleResolution", "bundler", "--lib", "es2022,dom", "bundler.ts"], { cwd: project }).catch((e) => {
      throw new Error("tsc: " + e.stdout);
    });
    // Uses the types forbid must fail to compile, under both resolutions:
    // the declarations resolved and are not any.
    writeFileSync(join(project, "wrong.mts"), `import { Strata, classifyBot } from "@strata/node";\nnew Strata({ apiKey: 1, host: "h" });\nconst n: number = classifyBot("x");\nexport { n };\n`);
    for (const resolution of [["node16", "node16"], ["esnext", "bundler"]]) {
      const failed = await run(process.execPath, [tscPath, "--noEmit", "--strict", "--module", resolution[0], "--moduleResolution", resolution[1], "--lib", "es2022,dom", "wrong.mts"], { cwd: project }).then(
        () => "",
        (e) => String(e.stdout),
      );
      expect(failed, resolution[1]).toMatch(/wrong\.mts\(2,\d+\): error TS2322/);
      expect(failed, resolution[1]).toMatch(/wrong\.mts\(3,\d+\): error TS2322/);
      expect(failed, resolution[1]).not.toContain("TS2307");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
