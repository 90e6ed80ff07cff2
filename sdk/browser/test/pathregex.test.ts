// Path rules: the shared cases of testdata/messages/regex.json, which the Go
// tests run too. Every accepted pattern must match exactly its listed paths in
// JavaScript as in Go; a refused one (the server never sends it) must not throw.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pathMatches } from "../src/messages/pathregex";

interface Cases {
  accepted: { pattern: string; match: string[]; noMatch: string[] }[];
  refused: { pattern: string; why: string }[];
}

// A path, not new URL(): in the tests URL is the DOM's.
const file = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "testdata", "messages", "regex.json");
const cases: Cases = JSON.parse(readFileSync(file, "utf8"));

describe("accepted patterns", () => {
  it.each(cases.accepted.map((c) => [c.pattern, c] as const))("%j", (_, c) => {
    for (const p of c.match) expect(pathMatches(c.pattern, p), p).toBe(true);
    for (const p of c.noMatch) expect(pathMatches(c.pattern, p), p).toBe(false);
  });
});

describe("refused patterns", () => {
  it.each(cases.refused.map((c) => [c.pattern, c.why] as const))("%j (%s) does not throw", (pattern) => {
    expect(() => pathMatches(pattern, "/pricing")).not.toThrow();
  });

  it("an invalid pattern matches nothing", () => {
    expect(pathMatches("^/(a", "/(a")).toBe(false);
    expect(pathMatches("*a", "/a")).toBe(false);
  });
});
