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
import { assign, exposed, type AssignableFlag } from "./assign";
import { holds, traitText } from "./conditions";
import { bucket, murmur3 } from "./hash";

interface Vectors {
  hash: { input: string; murmur3_32: number }[];
  bucket: { salt: string; flagKey: string; distinctId: string; bucket: number }[];
  assign: { flag: string; distinctId: string; variant: string }[];
  flags: AssignableFlag[];
  targeting: { flag: string; distinctId: string; properties: Record<string, unknown>; cohorts?: Record<string, boolean>; variant: string; exposed: string }[];
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
    expect(new Set([...vectors.assign, ...vectors.targeting].map((v) => v.flag))).toEqual(new Set(flagsByKey.keys()));
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

describe("targeting", () => {
  it.each(vectors.targeting)("$flag for $distinctId with $properties and $cohorts is $variant exposing '$exposed'", (v) => {
    const a = assign(flagsByKey.get(v.flag), v.distinctId, v.properties, v.cohorts);
    expect(a?.variant ?? "control").toBe(v.variant);
    expect(a ? exposed(a) : "").toBe(v.exposed);
  });

  it("reaches every outcome", () => {
    expect(new Set(vectors.targeting.map((v) => v.exposed))).toEqual(new Set(["on", "control", "treatment", "holdout", "excluded", ""]));
    expect(vectors.targeting.filter((v) => v.cohorts).length).toBeGreaterThanOrEqual(15);
  });

  it("fails a cohort condition whose membership is unknown or not a boolean", () => {
    const flag = flagsByKey.get("in_paying")!;
    expect(assign(flag, "u", {}, { "7": true })!.variant).toBe("on");
    expect(assign(flag, "u", {}, { "7": "true" } as unknown as Record<string, boolean>)!.excluded).toBe(true);
    expect(assign(flag, "u", {}, Object.create({ "7": true }))!.excluded).toBe(true);
    expect(assign(flag, "u", {}, null)!.excluded).toBe(true);
  });

  it("keeps the bucket of the users the conditions target", () => {
    const plain = flagsByKey.get("checkout_arms")!;
    const flag = { ...plain, conditions: [{ type: "trait", trait: "plan", op: "eq", value: "pro" }] };
    for (let i = 0; i < 300; i++) {
      const id = "user_" + i;
      expect(assign(flag, id, { plan: "pro" })).toEqual(assign(plain, id));
      const out = assign(flag, id, { plan: "free" })!;
      if (!out.holdout) expect(out).toEqual({ variant: "control", holdout: false, excluded: true });
    }
  });

  it("writes numbers and JSON as Go does", () => {
    expect(traitText(1e21)).toBe("1000000000000000000000");
    expect(traitText(1.5e22)).toBe("15000000000000000000000");
    expect(traitText(-1.25e-7)).toBe("-0.000000125");
    expect(traitText(1e-7)).toBe("0.0000001");
    expect(traitText(123.456)).toBe("123.456");
    expect(traitText(-0)).toBe("-0");
    expect(traitText(false)).toBe("false");
    expect(traitText({ é: 1, z: [1e21, "a<b"], a: { y: true, x: null } })).toBe('{"a":{"x":null,"y":true},"z":[1e+21,"a\\u003cb"],"é":1}');
  });

  it("does not read a property of the object prototype as a property", () => {
    expect(holds("constructor", "exists", "", {})).toBe(false);
    expect(holds("toString", "neq", "x", {})).toBe(true);
  });
});
