// Every vector of the project's shared assignment vectors
// (sdk/browser/test/assignment.json, which the Go server and SDK and the
// browser SDK reproduce too), read in place so there is one copy, through
// getVariant end to end with a fake GET /api/v1/config. The hash, the bucket
// and the pure assignment are sdk/shared/'s, which the browser SDK builds from
// too; its own test, ../../shared/assignment.test.ts, runs in this package's
// suite (vitest.config.ts).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Strata } from "../src/client";
import type { FlagConfig, RemoteConfig } from "../src/types";
import { fakeServer, type FakeServer } from "./helpers";

interface Vectors {
  assign: { flag: string; distinctId: string; variant: string }[];
  flags: FlagConfig[];
  targeting: { flag: string; distinctId: string; properties: Record<string, unknown>; cohorts?: Record<string, boolean>; variant: string; exposed: string }[];
}

const here = dirname(fileURLToPath(import.meta.url));
const vectors: Vectors = JSON.parse(readFileSync(join(here, "..", "..", "browser", "test", "assignment.json"), "utf8"));

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

  it("with the properties passed to getVariant, for the targeting vectors, exposures included", async () => {
    for (const v of vectors.targeting) {
      const what = `${v.flag} / ${v.distinctId} / ${JSON.stringify(v.properties)} / ${JSON.stringify(v.cohorts)}`;
      // A client per vector: a client exposes a flag once per user.
      const client = new Strata({ apiKey: "st_live_k", host: server.url });
      const exposures: unknown[] = [];
      const capture = client.capture.bind(client);
      client.capture = (m) => {
        if (m.event == "$exposure") exposures.push(m.properties?.variant);
        capture(m);
      };
      expect(await client.getVariant(v.flag, v.distinctId, { properties: v.properties, cohorts: v.cohorts }), what).toBe(v.variant);
      expect(exposures, what).toEqual(v.exposed ? [v.exposed] : []);
      await client.shutdown();
    }
  });
});
