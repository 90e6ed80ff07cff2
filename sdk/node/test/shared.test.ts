// The assignment rule (docs/flags.md) has one TypeScript implementation,
// sdk/shared/, which both SDKs build from and test against the shared vectors
// (test/assignment.test.ts here and in sdk/browser). A second copy in one
// package's src/ could drift from the one the other package's tests hold to
// the vectors, as the two copies this replaced could.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const sdk = join(__dirname, "..", "..");

it("defines the assignment code once, in sdk/shared/", () => {
  const defined: Record<string, string[]> = {};
  for (const dir of ["browser/src", "node/src", "shared"]) {
    // A missing folder defines nothing; the expectation below then fails.
    if (!existsSync(join(sdk, dir))) continue;
    for (const name of readdirSync(join(sdk, dir), { recursive: true, encoding: "utf8" })) {
      if (!name.endsWith(".ts")) continue;
      const source = readFileSync(join(sdk, dir, name), "utf8");
      for (const [, fn] of source.matchAll(/^export function (murmur3|bucket|assign|exposed|targeted|holds|traitText)\b/gm)) {
        (defined[fn] ??= []).push(dir + "/" + name);
      }
    }
  }
  expect(defined).toEqual({
    murmur3: ["shared/hash.ts"],
    bucket: ["shared/hash.ts"],
    assign: ["shared/assign.ts"],
    exposed: ["shared/assign.ts"],
    targeted: ["shared/conditions.ts"],
    holds: ["shared/conditions.ts"],
    traitText: ["shared/conditions.ts"],
  });
});
