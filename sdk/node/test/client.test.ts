// The client against a fake Strata on 127.0.0.1: batching, the wire format,
// retries (what is retried, how long it waits, that a retry resends the same
// uuids), the bounded queue, flush and shutdown, and that its timers never
// keep a process alive.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_BATCH, Strata, retryAfter } from "../src/client";
import type { StrataError, StrataOptions } from "../src/types";
import { accepted, closedPort, fakeServer, waitUntil, type Answer, type FakeServer, type Recorded } from "./helpers";

const servers: FakeServer[] = [];
const clients: Strata[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(100)));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(answer?: (r: Recorded, i: number) => Answer, options: Partial<StrataOptions> = {}) {
  const server = await fakeServer(answer);
  servers.push(server);
  const errors: StrataError[] = [];
  const client = new Strata({ apiKey: "st_live_test", host: server.url + "/", flushAt: 500, flushInterval: 60_000, retryDelay: 10, onError: (e) => errors.push(e), ...options });
  clients.push(client);
  return { server, client, errors };
}

const capture = (client: Strata, n: number, from = 0) => {
  for (let i = from; i < from + n; i++) client.capture({ event: "signed_up", distinctId: "user_" + i, properties: { i } });
};

describe("sending", () => {
  it("posts batches of flushAt events to /e with the key, sent_at and a uuid per event", async () => {
    const { server, client } = await setup(undefined, { flushAt: 3 });
    client.capture({
      event: "$pageview",
      distinctId: "u1",
      url: "https://shop.example.com/pricing",
      referrer: "https://www.google.com/",
      userAgent: "Mozilla/5.0",
      timestamp: new Date("2026-11-23T10:00:01.250Z"),
      properties: { plan: "pro" },
    });
    capture(client, 2);
    await waitUntil(() => server.requests.length === 1);
    const r = server.requests[0];
    expect(r.method).toBe("POST");
    expect(r.url).toBe("/e");
    expect(r.headers["x-api-key"]).toBe("st_live_test");
    expect(r.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(r.body);
    expect(Object.keys(body).sort()).toEqual(["batch", "sent_at"]);
    expect(Math.abs(Date.parse(body.sent_at) - Date.now())).toBeLessThan(5000);
    expect(body.batch).toHaveLength(3);
    expect(body.batch[0]).toEqual({
      event_name: "$pageview",
      distinct_id: "u1",
      timestamp: "2026-11-23T10:00:01.250Z",
      uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      url: "https://shop.example.com/pricing",
      referrer: "https://www.google.com/",
      user_agent: "Mozilla/5.0",
      properties: { plan: "pro", $lib: "strata-node", $lib_version: "0.3.1" },
    });
    expect(new Set(body.batch.map((e: { uuid: string }) => e.uuid)).size).toBe(3);
    await client.flush();
    expect(client.stats()).toMatchObject({ queued: 0, sent: 3, failed: 0, retries: 0 });
  });

  it("sends full batches as they fill, and the rest only on the timer or flush()", async () => {
    const { server, client } = await setup(undefined, { flushAt: 10 });
    capture(client, 13);
    await waitUntil(() => server.requests.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(server.requests.map((r) => JSON.parse(r.body).batch.length)).toEqual([10]);
    await client.flush();
    expect(server.requests.map((r) => JSON.parse(r.body).batch.length)).toEqual([10, 3]);
  });

  it("sends what waits every flushInterval", async () => {
    const { server, client } = await setup(undefined, { flushInterval: 30 });
    capture(client, 2);
    await waitUntil(() => server.events().length === 2, 2000);
  });

  it("splits large queues into batches of at most 500 events", async () => {
    const { server, client } = await setup();
    capture(client, 1234);
    await client.flush();
    expect(server.requests.map((r) => JSON.parse(r.body).batch.length)).toEqual([MAX_BATCH, MAX_BATCH, 234]);
    expect(client.stats().sent).toBe(1234);
  });

  it("keeps a body under 5 MB", async () => {
    const { server, client } = await setup();
    const big = "x".repeat(60_000);
    for (let i = 0; i < 200; i++) client.capture({ event: "big", distinctId: "u", properties: { big } });
    await client.flush();
    expect(server.requests.length).toBeGreaterThan(2);
    for (const r of server.requests) expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(server.events()).toHaveLength(200);
  });

  it("counts events the server rejected one by one, and reports them", async () => {
    const { client, errors } = await setup(() => ({ status: 202, body: { accepted: 1, rejected: [{ index: 1, code: "reserved_event_name", message: "no" }] } }));
    capture(client, 2);
    await client.flush();
    expect(client.stats()).toMatchObject({ sent: 1, rejected: 1 });
    expect(errors[0].rejections[0].code).toBe("reserved_event_name");
  });

  it("refuses what it cannot send without throwing", async () => {
    const { client, errors } = await setup();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => client.capture({ event: "x", distinctId: "u", properties: circular })).not.toThrow();
    expect(() => client.capture({ event: "", distinctId: "u" })).not.toThrow();
    expect(() => client.capture(undefined as never)).not.toThrow();
    expect(() => client.capture({ event: "x", distinctId: "u", properties: { big: "x".repeat(6 << 20) } })).not.toThrow();
    expect(client.stats()).toMatchObject({ queued: 0, failed: 4 });
    expect(errors).toHaveLength(4);
  });

  it("sends nothing without a key or an http(s) host, and says so", () => {
    for (const options of [{ apiKey: "", host: "http://127.0.0.1:9" }, { apiKey: "k", host: "" }, { apiKey: "k", host: "127.0.0.1:9" }]) {
      const errors: StrataError[] = [];
      const c = new Strata({ ...options, onError: (e) => errors.push(e) });
      c.capture({ event: "e", distinctId: "u" });
      expect(c.stats()).toMatchObject({ queued: 0, failed: 1 });
      expect(errors).toHaveLength(2);
    }
  });
});

describe("retries", () => {
  it("retries 429 after the Retry-After it was given, resending the same uuids", async () => {
    const { server, client } = await setup((r, i) => (i === 0 ? { status: 429, headers: { "Retry-After": "1" }, body: { error: { code: "rate_limited" } } } : accepted(r)));
    capture(client, 3);
    await client.flush();
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(990);
    const uuids = server.requests.map((r) => JSON.parse(r.body).batch.map((e: { uuid: string }) => e.uuid).join());
    expect(uuids[1]).toBe(uuids[0]);
    expect(client.stats()).toMatchObject({ sent: 3, retries: 1, failed: 0 });
  });

  it.each([500, 502, 503, 408])("retries %i with a growing delay", async (status) => {
    const { server, client } = await setup((r, i) => (i < 3 ? { status } : accepted(r)), { retryDelay: 40 });
    capture(client, 1);
    await client.flush();
    expect(server.requests).toHaveLength(4);
    const gaps = server.requests.slice(1).map((r, i) => r.at - server.requests[i].at);
    // Equal jitter: attempt n waits between half and all of 40 ms · 2^n.
    gaps.forEach((g, n) => {
      expect(g).toBeGreaterThanOrEqual(20 * 2 ** n - 2);
      expect(g).toBeLessThan(40 * 2 ** n + 100);
    });
    expect(client.stats()).toMatchObject({ sent: 1, retries: 3 });
  });

  it("retries when the connection is refused or dropped", async () => {
    const { server, client } = await setup((r, i) => (i === 0 ? "destroy" : accepted(r)));
    capture(client, 2);
    await client.flush();
    expect(server.events()).toHaveLength(4);
    expect(client.stats()).toMatchObject({ sent: 2, retries: 1 });

    const refused = new Strata({ apiKey: "k", host: await closedPort(), retryDelay: 5, maxRetries: 3, flushAt: 500 });
    clients.push(refused);
    refused.capture({ event: "e", distinctId: "u" });
    await refused.flush();
    expect(refused.stats()).toMatchObject({ retries: 3, failed: 1, sent: 0 });
  });

  it("abandons a request that gets no answer within requestTimeout, and retries it", async () => {
    const { server, client } = await setup((r, i) => (i === 0 ? "hang" : accepted(r)), { requestTimeout: 100 });
    capture(client, 1);
    const t = Date.now();
    await client.flush();
    expect(Date.now() - t).toBeGreaterThanOrEqual(95);
    expect(server.requests).toHaveLength(2);
    expect(client.stats()).toMatchObject({ sent: 1, retries: 1 });
  });

  it.each([400, 401, 403, 404, 422])("never retries %i", async (status) => {
    const { server, client, errors } = await setup(() => ({ status, body: { error: { code: "nope", message: "refused" } } }));
    capture(client, 2);
    await client.flush();
    expect(server.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ sent: 0, failed: 2, retries: 0 });
    expect(errors[0]).toMatchObject({ status, code: "nope" });
  });

  it("counts the events of a 400 all_events_rejected as rejected", async () => {
    const rejected = [{ index: 0, code: "invalid_event_name", message: "x" }];
    const { client } = await setup(() => ({ status: 400, body: { error: { code: "all_events_rejected", message: "all" }, rejected } }));
    capture(client, 1);
    await client.flush();
    expect(client.stats()).toMatchObject({ rejected: 1, failed: 0, retries: 0 });
  });

  it("halves a batch the server finds too large (413) until it fits", async () => {
    const { server, client } = await setup((r) => (JSON.parse(r.body).batch.length > 2 ? { status: 413, body: { error: { code: "batch_too_large" } } } : accepted(r)));
    capture(client, 7);
    await client.flush();
    expect(client.stats()).toMatchObject({ sent: 7, failed: 0 });
    // 7 refused, then 4 (refused: 2 + 2) and 3 (refused: 2 + 1).
    expect(server.requests.map((r) => JSON.parse(r.body).batch.length)).toEqual([7, 4, 2, 2, 3, 2, 1]);
  });

  it("gives a batch up after maxRetries", async () => {
    const { server, client, errors } = await setup(() => ({ status: 503 }), { maxRetries: 2 });
    capture(client, 5);
    await client.flush();
    expect(server.requests).toHaveLength(3);
    expect(client.stats()).toMatchObject({ sent: 0, failed: 5, retries: 2, queued: 0 });
    expect(errors.at(-1)?.status).toBe(503);
  });

  it("reads Retry-After in seconds and as a date", () => {
    expect(retryAfter("3")).toBe(3000);
    expect(retryAfter(null)).toBeUndefined();
    expect(retryAfter("soon")).toBeUndefined();
    const d = retryAfter(new Date(Date.now() + 5000).toUTCString())!;
    expect(d).toBeGreaterThan(3000);
    expect(d).toBeLessThanOrEqual(5000);
  });
});

describe("the bounded queue", () => {
  it("drops the oldest events past maxQueue and counts them", async () => {
    const { server, client } = await setup(undefined, { maxQueue: 10 });
    capture(client, 25);
    expect(client.stats()).toMatchObject({ queued: 10, dropped: 15 });
    expect(client.dropped).toBe(15);
    await client.flush();
    expect(server.events().map((e) => (e.properties as { i: number }).i)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  });

  it("stays bounded while the server does not answer", async () => {
    const { client } = await setup(() => "hang", { maxQueue: 100, flushAt: 10 });
    for (let round = 0; round < 20; round++) {
      capture(client, 50);
      await new Promise((r) => setTimeout(r, 1));
    }
    const s = client.stats();
    // At most maxQueue waiting, plus the one batch in flight.
    expect(s.queued).toBeLessThanOrEqual(100 + 10);
    expect(s.dropped).toBeGreaterThanOrEqual(1000 - 110);
  });
});

describe("flush and shutdown", () => {
  it("flush resolves at once when nothing waits", async () => {
    const { server, client } = await setup();
    await client.flush();
    expect(server.requests).toHaveLength(0);
  });

  it("shutdown sends what waits, then refuses new events", async () => {
    const { server, client, errors } = await setup();
    capture(client, 3);
    await client.shutdown();
    expect(server.events()).toHaveLength(3);
    client.capture({ event: "late", distinctId: "u" });
    await client.flush();
    expect(server.events()).toHaveLength(3);
    expect(errors.at(-1)?.message).toMatch(/after shutdown/);
  });

  it("shutdown gives up at its deadline when the server does not answer", async () => {
    const { client, errors } = await setup(() => "hang");
    capture(client, 3);
    const t = Date.now();
    await client.shutdown(200);
    expect(Date.now() - t).toBeLessThan(1000);
    expect(client.stats()).toMatchObject({ queued: 0, failed: 3 });
    expect(errors.length).toBeGreaterThan(0);
  });

  it("shutdown ends a retry's wait at its deadline", async () => {
    const { client } = await setup(() => ({ status: 429, headers: { "Retry-After": "60" } }));
    capture(client, 1);
    await new Promise((r) => setTimeout(r, 50));
    const t = Date.now();
    await client.shutdown(100);
    expect(Date.now() - t).toBeLessThan(1000);
    expect(client.stats()).toMatchObject({ failed: 1 });
  });
});

describe("timers", () => {
  it("do not keep the process alive, and shutdown delivers before exit", async () => {
    const server = await fakeServer();
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "strata-node-timers-"));
    // Asynchronously: the fake server answers from this process.
    const run = (code: string) => promisify(execFile)(process.execPath, ["--input-type=module", "-e", code], { timeout: 10_000 });
    try {
      const bundle = join(dir, "sdk.mjs");
      buildSync({ entryPoints: [join(__dirname, "..", "src", "index.ts")], bundle: true, format: "esm", outfile: bundle, platform: "node", logLevel: "silent" });
      // A client with a pending interval, flag poller and retry wait: the process must still exit.
      const idle = `import { Strata } from ${JSON.stringify(bundle)};
        const c = new Strata({ apiKey: "k", host: ${JSON.stringify(await closedPort())}, flushInterval: 60000, retryDelay: 60000 });
        c.capture({ event: "e", distinctId: "u" });
        c.flush();
        c.getVariant("f", "u");`;
      const t = Date.now();
      await run(idle);
      expect(Date.now() - t).toBeLessThan(5000);
      // shutdown holds the process until the events are sent.
      const graceful = `import { Strata } from ${JSON.stringify(bundle)};
        const c = new Strata({ apiKey: "k", host: ${JSON.stringify(server.url)} });
        c.capture({ event: "before_exit", distinctId: "u" });
        c.shutdown();`;
      await run(graceful);
      expect(server.events().map((e) => e.event_name)).toEqual(["before_exit"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
