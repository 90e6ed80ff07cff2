// @vitest-environment node
// The size budget of the script tag build: 8 KB gzipped, checked on a fresh
// build with the same esbuild options as dist/sdk.min.js (and on dist/ itself
// when it exists).
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { expect, it } from "vitest";
import { iife } from "../scripts/esbuild-options.mjs";

const BUDGET = 8 * 1024;

it("sdk.min.js is at most 8 KB gzipped", async () => {
  const out = await build({ ...iife, write: false });
  const js = out.outputFiles.find((f) => f.path.endsWith(".js"))!;
  const size = gzipSync(js.contents, { level: 9 }).length;
  console.log(`sdk.min.js: ${js.contents.length} bytes, ${size} bytes gzipped (budget ${BUDGET})`);
  expect(size).toBeLessThanOrEqual(BUDGET);
  expect(out.outputFiles.some((f) => f.path.endsWith("sdk.min.js.map"))).toBe(true);
  const dist = new URL("../dist/sdk.min.js", import.meta.url);
  if (existsSync(dist)) expect(gzipSync(readFileSync(dist), { level: 9 }).length).toBeLessThanOrEqual(BUDGET);
});
