// The middlewares: a real Express app on 127.0.0.1, and Fetch API requests.
// A bot's request is queued and passed on at once, even when Strata never
// answers; a person's is only classified; nothing the SDK meets can fail a
// request.
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { Strata } from "../src/client";
import { edgeMiddleware, expressMiddleware, withStrata } from "../src/middleware";
import { fakeServer, waitUntil, type FakeServer } from "./helpers";

const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function strata(answer?: Parameters<typeof fakeServer>[0]): Promise<FakeServer> {
  const s = await fakeServer(answer);
  cleanups.push(() => s.close());
  return s;
}

function client(host: string, options = {}): Strata {
  const c = new Strata({ apiKey: "st_live_k", host, flushAt: 500, flushInterval: 60_000, ...options });
  cleanups.push(() => c.shutdown(50));
  return c;
}

/** app serves an Express app with the middleware (mounted at /docs too) on 127.0.0.1. */
async function app(c: Strata): Promise<string> {
  const a = express();
  a.use(expressMiddleware(c));
  const docs = express.Router();
  docs.get("/setup", (_req, res) => void res.send("docs"));
  a.use("/docs", docs);
  a.get("/", (_req, res) => void res.send("home"));
  const server = a.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** get requests a path with a user agent and returns the status, the body and how long it took. */
function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string; ms: number }> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { headers, agent: false }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body, ms: performance.now() - t }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("expressMiddleware", () => {
  it("sends a bot's page view with the original URL and referrer, as $pageview from $server_bot", async () => {
    const s = await strata();
    const c = client(s.url);
    const base = await app(c);
    const res = await get(base, "/docs/setup?x=1", { "User-Agent": GPTBOT, Referer: "https://chatgpt.com/" });
    expect(res).toMatchObject({ status: 200, body: "docs" });
    await c.flush();
    const [e] = s.events();
    expect(e).toMatchObject({
      event_name: "$pageview",
      distinct_id: "$server_bot",
      url: base + "/docs/setup?x=1",
      referrer: "https://chatgpt.com/",
      user_agent: GPTBOT,
      properties: { $server_captured: "true", $lib: "strata-node" },
    });
  });

  it("sends nothing for people, search engines or requests without a user agent", async () => {
    const s = await strata();
    const c = client(s.url);
    const base = await app(c);
    for (const headers of [{ "User-Agent": CHROME }, { "User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1)" }, {}]) {
      expect((await get(base, "/", headers)).status).toBe(200);
    }
    await c.flush();
    expect(s.requests).toHaveLength(0);
    expect(c.stats()).toMatchObject({ queued: 0, failed: 0 });
  });

  it("never waits for a Strata that does not answer, and stays bounded", async () => {
    const s = await strata(() => "hang");
    const c = client(s.url, { flushAt: 5, maxQueue: 20 });
    const base = await app(c);
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await get(base, "/", { "User-Agent": GPTBOT });
      expect(res.status).toBe(200);
      times.push(res.ms);
    }
    await waitUntil(() => s.requests.length > 0);
    times.sort((a, b) => a - b);
    expect(times[Math.floor(times.length * 0.9)]).toBeLessThan(50);
    expect(c.stats().queued).toBeLessThanOrEqual(20 + 5);
    expect(c.dropped).toBeGreaterThan(0);
  });

  it("calls next() synchronously and never throws, whatever the request", () => {
    const c = client("http://127.0.0.1:9");
    const mw = expressMiddleware(c);
    const weird = [
      { headers: {} },
      { headers: { "user-agent": ["GPTBot/1.0", "x"] } },
      { headers: { "user-agent": "x".repeat(1 << 20) } },
      { headers: { "user-agent": GPTBOT } },
      { headers: { "user-agent": GPTBOT, host: "h" }, url: "/plain-node", socket: { encrypted: true } },
      { get headers(): never {
        throw new Error("broken request");
      } },
    ];
    for (const req of weird) {
      let called = 0;
      expect(() => mw(req as never, {}, () => called++)).not.toThrow();
      expect(called).toBe(1);
    }
    expect(c.stats().queued).toBe(2);
  });

  it("builds the URL of a plain node:http request from the socket and Host", async () => {
    const s = await strata();
    const c = client(s.url);
    const mw = expressMiddleware(c);
    mw({ headers: { "user-agent": GPTBOT, host: "shop.example.com" }, url: "/p?q=1", socket: { encrypted: true } }, {}, () => {});
    await c.flush();
    expect(s.events()[0].url).toBe("https://shop.example.com/p?q=1");
  });

  it("takes options instead of a client", async () => {
    const s = await strata();
    const mw = expressMiddleware({ apiKey: "k", host: s.url, flushAt: 1 });
    mw({ headers: { "user-agent": GPTBOT, host: "h" }, url: "/" }, {}, () => {});
    await waitUntil(() => s.events().length === 1);
  });
});

describe("captureBotPageview", () => {
  it("cuts URLs to what ingest accepts and ignores values that are not strings", async () => {
    const s = await strata();
    const c = client(s.url);
    c.captureBotPageview({ userAgent: GPTBOT, url: "https://x.test/" + "a".repeat(10_000), referrer: 42 as never });
    c.captureBotPageview({ userAgent: GPTBOT, url: undefined as never, referrer: null });
    expect(c.captureBotPageview(null as never)).toBeNull();
    await c.flush();
    const [long, none] = s.events();
    expect((long.url as string).length).toBe(8192);
    expect(long.referrer).toBeUndefined();
    expect(none.url).toBeUndefined();
  });
});

describe("edgeMiddleware and withStrata", () => {
  it("records a bot's Request, hands waitUntil the delivery, and leaves the request alone", async () => {
    const s = await strata();
    const c = client(s.url);
    const track = edgeMiddleware(c);
    const req = new Request("https://shop.example.com/pricing?plan=pro", {
      method: "POST",
      headers: { "User-Agent": GPTBOT, Referer: "https://chatgpt.com/" },
      body: "payload",
    });
    const waited: Promise<unknown>[] = [];
    expect(track(req, { waitUntil: (p) => waited.push(p) })?.name).toBe("GPTBot");
    expect(waited).toHaveLength(1);
    await waited[0];
    expect(s.events()[0]).toMatchObject({ event_name: "$pageview", url: "https://shop.example.com/pricing?plan=pro", referrer: "https://chatgpt.com/", user_agent: GPTBOT });
    // The body was not read.
    expect(req.bodyUsed).toBe(false);
    expect(await req.text()).toBe("payload");
  });

  it("does nothing for a person's request, and never throws", () => {
    const c = client("http://127.0.0.1:9");
    const track = edgeMiddleware(c);
    const waited: Promise<unknown>[] = [];
    expect(track(new Request("https://x.test/", { headers: { "User-Agent": CHROME } }), { waitUntil: (p) => waited.push(p) })).toBeNull();
    expect(track(new Request("https://x.test/"))).toBeNull();
    expect(track({} as Request)).toBeNull();
    expect(waited).toHaveLength(0);
    expect(c.stats().queued).toBe(0);
  });

  it("withStrata passes the request and the other arguments through, and finds ctx.waitUntil", async () => {
    const s = await strata();
    const c = client(s.url);
    const waited: Promise<unknown>[] = [];
    const env = { SECRET: "x" };
    const ctx = { waitUntil: (p: Promise<unknown>) => waited.push(p), passThroughOnException() {} };
    const handler = withStrata(c, (request: Request, e: typeof env, x: typeof ctx) => {
      expect(e).toBe(env);
      expect(x).toBe(ctx);
      return new Response("hello " + new URL(request.url).pathname);
    });
    const req = new Request("https://shop.example.com/a", { headers: { "User-Agent": GPTBOT } });
    const res = handler(req, env, ctx);
    expect(await res.text()).toBe("hello /a");
    expect(waited).toHaveLength(1);
    await Promise.all(waited);
    expect(s.events()).toHaveLength(1);
  });
});
