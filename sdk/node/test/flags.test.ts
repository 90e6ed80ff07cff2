// getVariant on the server: the configuration is read once and polled with
// its ETag, exposures are sent once per user and flag, and an unreadable
// configuration answers control.
import { afterEach, describe, expect, it } from "vitest";
import { bucket } from "../../shared/hash";
import { Strata } from "../src/client";
import type { RemoteConfig } from "../src/types";
import { closedPort, fakeServer, waitUntil, type FakeServer } from "./helpers";

const config: RemoteConfig = {
  flags: [
    { key: "on_off", enabled: true, rollout: 100, variants: [], experiment: null },
    { key: "off", enabled: false, rollout: 100, variants: [], experiment: null },
    {
      key: "exp",
      enabled: true,
      rollout: 100,
      variants: [
        { key: "control", weight: 50 },
        { key: "treatment", weight: 50 },
      ],
      experiment: { id: 7, status: "running", holdout: 0.25 },
    },
  ],
  messagesEnabled: false,
  errorTracking: false,
  replay: false,
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function setup(options = {}) {
  const etag = '"v1"';
  const server: FakeServer = await fakeServer((r) => {
    if (!r.url.startsWith("/api/v1/config")) return { status: 202, body: { accepted: JSON.parse(r.body).batch.length, rejected: [] } };
    if (r.headers["if-none-match"] === etag) return { status: 304 };
    return { status: 200, headers: { ETag: etag }, body: config };
  });
  const client = new Strata({ apiKey: "st_live_k&x", host: server.url, flushAt: 500, ...options });
  cleanups.push(() => server.close(), () => client.shutdown(100));
  return { server, client };
}

describe("getVariant", () => {
  it("answers from one read of the configuration, with the key in the query", async () => {
    const { server, client } = await setup({ sendExposures: false });
    const answers = await Promise.all([client.getVariant("on_off", "u1"), client.getVariant("off", "u1"), client.getVariant("missing", "u1")]);
    expect(answers).toEqual(["on", "control", "control"]);
    expect(server.requests.map((r) => r.url)).toEqual(["/api/v1/config?api_key=st_live_k%26x"]);
  });

  it("polls with If-None-Match and keeps the configuration on 304", async () => {
    const { server, client } = await setup({ sendExposures: false, flagsPollInterval: 1000 });
    await client.loadFlags();
    await waitUntil(() => server.requests.length >= 2, 3000);
    expect(server.requests[1].headers["if-none-match"]).toBe('"v1"');
    expect(await client.getVariant("on_off", "u1")).toBe("on");
  });

  it("sends $exposure once per user and flag, with holdout users marked", async () => {
    const { server, client } = await setup();
    const ids = Array.from({ length: 40 }, (_, i) => "user_" + i);
    const variants = new Map<string, string>();
    for (const id of ids) variants.set(id, await client.getVariant("exp", id));
    for (const id of ids) await client.getVariant("exp", id);
    await client.getVariant("off", "user_0");
    await client.flush();
    const exposures = server.events().filter((e) => e.event_name === "$exposure");
    expect(exposures).toHaveLength(40);
    for (const e of exposures) {
      const p = e.properties as { flag: string; experiment_id: number; variant: string };
      expect(p.flag).toBe("exp");
      expect(p.experiment_id).toBe(7);
      if (p.variant === "holdout") expect(variants.get(e.distinct_id as string)).toBe("control");
      else expect(p.variant).toBe(variants.get(e.distinct_id as string));
    }
    expect(exposures.some((e) => (e.properties as { variant: string }).variant === "holdout")).toBe(true);
  });

  it("exposes users outside the rollout as excluded, never as control", async () => {
    const half = config.flags.find((f) => f.key === "exp")!;
    const saved = half.rollout;
    half.rollout = 50;
    try {
      const { server, client } = await setup();
      const ids = Array.from({ length: 400 }, (_, i) => "r" + i);
      const answers = new Map<string, string>();
      for (const id of ids) answers.set(id, await client.getVariant("exp", id));
      await client.flush();
      const exposures = server.events().filter((e) => e.event_name === "$exposure");
      expect(exposures).toHaveLength(400);
      const count: Record<string, number> = {};
      for (const e of exposures) {
        const id = e.distinct_id as string;
        const v = (e.properties as { variant: string }).variant;
        count[v] = (count[v] ?? 0) + 1;
        const held = bucket("holdout", "exp", id) < 2500;
        const outside = bucket("rollout", "exp", id) >= 5000;
        expect(v, id).toBe(held ? "holdout" : outside ? "excluded" : answers.get(id));
        if (v === "holdout" || v === "excluded") expect(answers.get(id)).toBe("control");
      }
      expect(count.excluded).toBeGreaterThan(110);
      expect(Math.abs(count.control - count.treatment)).toBeLessThan(50);
    } finally {
      half.rollout = saved;
    }
  });

  it("answers control when the configuration cannot be read", async () => {
    const errors: unknown[] = [];
    const client = new Strata({ apiKey: "k", host: await closedPort(), onError: (e) => errors.push(e) });
    cleanups.push(() => client.shutdown(50));
    expect(await client.getVariant("on_off", "u1")).toBe("control");
    expect(errors.length).toBeGreaterThan(0);
  });
});

describe("getVariant with a cohort condition", () => {
  const targeted: RemoteConfig = {
    ...config,
    flags: [
      ...config.flags,
      { key: "paying", enabled: true, rollout: 100, variants: [], experiment: null, conditions: [{ type: "cohort", cohortId: 7, op: "in", value: "" }] },
    ],
  };
  async function setupCohorts(fail = false) {
    const server: FakeServer = await fakeServer((r) => {
      if (!r.url.startsWith("/api/v1/config")) return { status: 202, body: { accepted: JSON.parse(r.body).batch.length, rejected: [] } };
      const user = new URL(r.url, "http://x").searchParams.get("distinct_id");
      if (user == null) return { status: 200, body: targeted };
      if (fail) return { status: 503, body: { error: "unavailable" } };
      return { status: 200, body: { ...targeted, cohorts: { "7": user == "ann" } } };
    });
    const client = new Strata({ apiKey: "st_live_k", host: server.url, sendExposures: false, onError: () => {} });
    cleanups.push(() => server.close(), () => client.shutdown(100));
    return { server, client };
  }
  const userReads = (s: FakeServer) => s.requests.filter((r) => r.url.includes("distinct_id=")).map((r) => r.url);

  it("reads each user's cohorts from the configuration for that user, once a minute", async () => {
    const { server, client } = await setupCohorts();
    expect(await client.getVariant("paying", "ann")).toBe("on");
    expect(await client.getVariant("paying", "bob")).toBe("control");
    expect(await client.getVariant("paying", "ann")).toBe("on");
    expect(userReads(server)).toEqual(["/api/v1/config?api_key=st_live_k&distinct_id=ann", "/api/v1/config?api_key=st_live_k&distinct_id=bob"]);
    // A flag without a cohort condition reads nobody's.
    expect(await client.getVariant("on_off", "carl")).toBe("on");
    expect(userReads(server)).toHaveLength(2);
  });

  it("takes the caller's cohorts without a read", async () => {
    const { server, client } = await setupCohorts();
    expect(await client.getVariant("paying", "bob", { cohorts: { "7": true } })).toBe("on");
    expect(await client.getVariant("paying", "ann", { cohorts: { "9": true } })).toBe("control");
    expect(userReads(server)).toHaveLength(0);
  });

  it("fails the condition when the cohorts cannot be read, and asks again next time", async () => {
    const { server, client } = await setupCohorts(true);
    expect(await client.getVariant("paying", "ann")).toBe("control");
    expect(await client.getVariant("paying", "ann")).toBe("control");
    expect(userReads(server)).toHaveLength(2);
  });
});
