// @vitest-environment node
// The size budgets of the script tag builds, checked on a fresh build with the
// same esbuild options as dist/ (and on dist/ itself when it exists): 8 KB
// gzipped for the SDK every page loads, and 8 KB for the message renderer it
// adds only when a product has active messages. The session recorder, rrweb's
// record, which the SDK adds only on pages that turn replay on, has a budget of
// its own.
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { expect, it } from "vitest";
import { iife, messages, replay } from "../scripts/esbuild-options.mjs";

const BUDGET = 8 * 1024;

it.each([
  ["sdk.min.js", iife],
  ["messages.min.js", messages],
])("%s is at most 8 KB gzipped", async (name, options) => {
  const out = await build({ ...options, write: false });
  const js = out.outputFiles.find((f) => f.path.endsWith(".js"))!;
  const size = gzipSync(js.contents, { level: 9 }).length;
  console.log(`${name}: ${js.contents.length} bytes, ${size} bytes gzipped (budget ${BUDGET})`);
  expect(size).toBeLessThanOrEqual(BUDGET);
  expect(out.outputFiles.some((f) => f.path.endsWith(name + ".map"))).toBe(true);
  const dist = new URL("../dist/" + name, import.meta.url);
  if (existsSync(dist)) expect(gzipSync(readFileSync(dist), { level: 9 }).length).toBeLessThanOrEqual(BUDGET);
});

const REPLAY_BUDGET = 27 * 1024;

it("replay.min.js is rrweb's recorder alone, at most 27 KB gzipped", async () => {
  const out = await build({ ...replay, write: false });
  const js = out.outputFiles.find((f) => f.path.endsWith(".js"))!;
  const size = gzipSync(js.contents, { level: 9 }).length;
  console.log(`replay.min.js: ${js.contents.length} bytes, ${size} bytes gzipped (budget ${REPLAY_BUDGET})`);
  expect(size).toBeLessThanOrEqual(REPLAY_BUDGET);
  // Not the PostCSS that rrweb's player uses (scripts/esbuild-options.mjs, rrwebRecordOnly).
  expect(js.text).not.toContain("postcss");
  const dist = new URL("../dist/replay.min.js", import.meta.url);
  if (existsSync(dist)) expect(gzipSync(readFileSync(dist), { level: 9 }).length).toBeLessThanOrEqual(REPLAY_BUDGET);
});
