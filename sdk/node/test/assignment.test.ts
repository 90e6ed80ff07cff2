// Every vector of the project's shared assignment vectors
// (sdk/browser/test/assignment.json, which the Go server and the browser SDK
// reproduce too), read in place so there is one copy: the hash, the bucket,
// the pure assignment (sdk/shared/, which both TypeScript SDKs build from),
// and getVariant end to end through a fake GET /api/v1/config.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assign } from "../../shared/assign";
import { Strata } from "../src/client";
import { bucket, murmur3 } from "../../shared/hash";
import type { FlagConfig, RemoteConfig } from "../src/types";
import { fakeServer, type FakeServer } from "./helpers";

interface Vectors {
  hash: { input: string; murmur3_32: number }[];
  bucket: { salt: string; flagKey: string; distinctId: string; bucket: number }[];
  assign: { flag: string; distinctId: string; variant: string }[];
  flags: FlagConfig[];
}

const here = dirname(fileURLToPath(import.meta.url));
const vectors: Vectors = JSON.parse(readFileSync(join(here, "..", "..", "browser", "test", "assignment.json"), "utf8"));
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

  it("uses whole basis points, so float noise cannot move a user", () => {
    // 0.07 * 10000 is 700.0000000000001 in floating point; bucket 700 is not held out.
    const id = Array.from({ length: 100000 }, (_, i) => "b" + i).find((x) => bucket("holdout", "f", x) == 700)!;
    const flag: FlagConfig = { key: "f", enabled: true, rollout: 100, variants: [], experiment: { id: 1, status: "running", holdout: 0.07 } };
    expect(assign(flag, id)).toEqual({ variant: "on", holdout: false, excluded: false });
  });
});

describe("getVariant reproduces every vector", () => {
  let server: FakeServer;
  beforeAll(async () => {
    const config: RemoteConfig = { flags: vectors.flags, messagesEnabled: false, errorTracking: false, replay: false };
    server = await fakeServer((r) => (r.url.startsWith("/api/v1/config") ? { status: 200, body: config } : { status: 202, body: { accepted: 1, rejected: [] } }));
  });
  afterAll(() => server.close());

  it("through the config endpoint, read once", async () => {
    const client = new Strata({ apiKey: "st_live_k", host: server.url, sendExposures: false });
    for (const v of vectors.assign) {
      expect(await client.getVariant(v.flag, v.distinctId), `${v.flag} / ${v.distinctId}`).toBe(v.variant);
    }
    expect(server.requests.filter((r) => r.url.startsWith("/api/v1/config")).length).toBe(1);
    await client.shutdown();
  });
});
