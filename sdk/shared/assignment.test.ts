// Every vector of the project's shared assignment vectors
// (sdk/browser/test/assignment.json, which the Go server and SDK reproduce
// too), checked against this folder's code: the hash, the bucket and the pure
// assignment. Both SDKs' vitest configs include this file, so it runs in the
// browser SDK's environment (happy-dom) and in Node's; each package's own
// test/assignment.test.ts then runs every vector through its getVariant.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { assign, type AssignableFlag } from "./assign";
import { bucket, murmur3 } from "./hash";

interface Vectors {
  hash: { input: string; murmur3_32: number }[];
  bucket: { salt: string; flagKey: string; distinctId: string; bucket: number }[];
  assign: { flag: string; distinctId: string; variant: string }[];
  flags: AssignableFlag[];
}

// path, not new URL(): under happy-dom, URL is the DOM's.
const here = dirname(fileURLToPath(import.meta.url));
const vectors: Vectors = JSON.parse(readFileSync(join(here, "..", "browser", "test", "assignment.json"), "utf8"));
const flagsByKey = new Map(vectors.flags.map((f) => [f.key, f]));

describe("murmur3_32", () => {
  it.each(vectors.hash)("hashes $input", ({ input, murmur3_32 }) => {
    expect(murmur3(input)).toBe(murmur3_32);
  });
});

describe("bucket", () => {
  it.each(vectors.bucket)("$salt:$flagKey:$distinctId is $bucket", (v) => {
    expect(bucket(v.salt, v.flagKey, v.distinctId)).toBe(v.bucket);
  });
});

describe("assign", () => {
  it.each(vectors.assign)("$flag for $distinctId is $variant", (v) => {
    expect(assign(flagsByKey.get(v.flag), v.distinctId)?.variant ?? "control").toBe(v.variant);
  });

  it("covers every flag of the vectors", () => {
    expect(new Set(vectors.assign.map((v) => v.flag))).toEqual(new Set(flagsByKey.keys()));
  });

  it("returns nothing for a missing or disabled flag", () => {
    expect(assign(undefined, "u")).toBeUndefined();
    expect(assign(flagsByKey.get("disabled_flag"), "u")).toBeUndefined();
  });

  it("marks holdout users of a running experiment", () => {
    const flag = flagsByKey.get("checkout_arms")!;
    const ids = Array.from({ length: 400 }, (_, i) => "user_" + i);
    const held = ids.filter((id) => assign(flag, id)!.holdout);
    // 25 % holdout: about 100 of 400, and every one of them gets control.
    expect(held.length).toBeGreaterThan(60);
    expect(held.length).toBeLessThan(140);
    for (const id of held) {
      expect(bucket("holdout", flag.key, id)).toBeLessThan(2500);
      expect(assign(flag, id)!.variant).toBe("control");
    }
  });

  it("does not hold out after the experiment completed (winner applied)", () => {
    const flag = flagsByKey.get("winner_applied")!;
    for (let i = 0; i < 200; i++) expect(assign(flag, "u" + i)).toEqual({ variant: "treatment", holdout: false, excluded: false });
  });

  it("uses whole basis points, so float noise cannot move a user", () => {
    // 0.07 * 10000 is 700.0000000000001 in floating point; bucket 700 is not held out.
    const id = Array.from({ length: 100000 }, (_, i) => "b" + i).find((x) => bucket("holdout", "f", x) == 700)!;
    const flag: AssignableFlag = { key: "f", enabled: true, rollout: 100, variants: [], experiment: { status: "running", holdout: 0.07 } };
    expect(assign(flag, id)).toEqual({ variant: "on", holdout: false, excluded: false });
  });
});
