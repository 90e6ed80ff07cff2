// End-to-end test of the Node SDK against a real `strata serve`: a real
// Express app with expressMiddleware, and a Fetch API handler wrapped by
// withStrata and served through node:http, receive requests from GPTBot,
// ClaudeBot, PerplexityBot and Chrome; GET /api/v1/query/bots must then list
// exactly those three bots with their hit counts, and no person. Then Strata
// is stopped, and the Express app must still answer at once while the
// client retries in the background.
//
//   STRATA_BIN=/path/to/strata node test/e2e/run.mjs
//
// STRATA_BIN defaults to the repository's bin/strata (`make build`). It tests
// the built package (dist/, rebuilt first). Everything listens on 127.0.0.1,
// and every process started here is stopped by its own PID.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";
import { harness } from "../../../../e2e/browser/harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..", "..");
const STRATA_BIN = process.env.STRATA_BIN || join(pkg, "..", "..", "bin", "strata");
/** The whole run is abandoned after this long. */
const DEADLINE_MS = 120_000;
/** How long events may take to show in a query. */
const ARRIVAL_MS = 15_000;

/** Real user agents, as the bots send them (the server's testdata has the same). */
const UA = {
  GPTBot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
  ClaudeBot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
  PerplexityBot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
  Chrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
};

const { cleanups, check, startStrata, run } = harness({ strataBin: STRATA_BIN, deadlineMs: DEADLINE_MS, name: "node-sdk" });

async function main() {
  if (!existsSync(STRATA_BIN)) throw new Error(`STRATA_BIN ${STRATA_BIN} does not exist`);
  execFileSync(process.execPath, [join(pkg, "scripts", "build.mjs")], { stdio: "inherit" });
  const { Strata, expressMiddleware, withStrata } = await import(join(pkg, "dist", "index.js"));

  const strata = await startStrata();
  const expressTenant = createTenant(strata.dataDir, "Node SDK e2e: Express");
  const edgeTenant = createTenant(strata.dataDir, "Node SDK e2e: edge");

  // 1. Express.
  const errors = [];
  const client = new Strata({ apiKey: expressTenant.key, host: strata.url, flushAt: 5, flushInterval: 200, retryDelay: 100, onError: (e) => errors.push(e) });
  const site = await startExpress(expressMiddleware(client));
  const plan = [
    ["GPTBot", "/"],
    ["Chrome", "/"],
    ["GPTBot", "/docs/setup"],
    ["ClaudeBot", "/docs/setup?ref=1"],
    ["Chrome", "/pricing"],
    ["PerplexityBot", "/pricing"],
    ["GPTBot", "/pricing"],
    ["Chrome", "/docs/setup"],
    ["ClaudeBot", "/"],
    ["Chrome", "/"],
  ];
  await check("the Express app answers every request, bots and people", async () => {
    for (const [who, path] of plan) {
      const res = await get(site, path, { "User-Agent": UA[who], Referer: "https://chatgpt.com/" });
      if (res.status !== 200 || res.body !== "page " + path.split("?")[0]) throw new Error(`${who} ${path}: ${res.status} ${res.body}`);
    }
  });
  await client.flush();
  const want = [
    { name: "GPTBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 3 },
    { name: "ClaudeBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 2 },
    { name: "PerplexityBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 1 },
  ];
  await expectBots("Express: /api/v1/query/bots lists exactly GPTBot 3, ClaudeBot 2, PerplexityBot 1", strata.url, expressTenant.token, want);
  await check("Express: the top pages are the app's URLs, with the query string kept", async () => {
    const r = await query(strata.url, expressTenant.token, "/api/v1/query/bots");
    const urls = Object.fromEntries(r.topPages.map((p) => [p.url, p.hits]));
    const expected = { [site + "/pricing"]: 2, [site + "/"]: 2, [site + "/docs/setup"]: 1, [site + "/docs/setup?ref=1"]: 1 };
    if (JSON.stringify(Object.entries(urls).sort()) !== JSON.stringify(Object.entries(expected).sort())) throw new Error(JSON.stringify(r.topPages));
  });
  await check("Express: the six are stored as $bot_pageview, marked $server_captured and classified by ingest", async () => {
    const filters = [
      { property: "properties.$server_captured", operator: "eq", value: "true" },
      { property: "properties.$bot_name", operator: "is_set", value: null },
    ];
    const n = await count(strata.url, expressTenant.token, "$bot_pageview", filters);
    if (n !== 6) throw new Error(`${n} such events`);
  });
  await check("Express: no person's page view and no $pageview left unrenamed", async () => {
    const n = await count(strata.url, expressTenant.token, "$pageview");
    if (n !== 0) throw new Error(`${n} $pageview events`);
  });
  await check("Express: the server accepted every event the client sent", async () => {
    const s = client.stats();
    if (s.sent !== 6 || s.rejected || s.failed || s.dropped || errors.length) throw new Error(JSON.stringify({ stats: s, errors: errors.map((e) => e.message) }));
  });

  // 2. A Fetch API handler (as on Workers, Deno or Next.js), served by node:http.
  const edgeClient = new Strata({ apiKey: edgeTenant.key, host: strata.url, flushAt: 100, flushInterval: 60_000 });
  cleanups.push(() => edgeClient.shutdown(1000));
  const waited = [];
  const handler = withStrata(edgeClient, async (request, ctx) => {
    if (typeof ctx?.waitUntil !== "function") throw new Error("the handler lost its ctx");
    const body = request.method === "POST" ? await request.text() : "";
    return new Response(`${request.method} ${new URL(request.url).pathname} ${body}`, { headers: { "X-Seen-UA": request.headers.get("user-agent") || "" } });
  });
  const edge = await startFetchServer((request) => handler(request, { waitUntil: (p) => waited.push(p) }));
  const edgePlan = [
    ["PerplexityBot", "/a"],
    ["PerplexityBot", "/b"],
    ["Chrome", "/a"],
    ["GPTBot", "/a"],
    ["PerplexityBot", "/a"],
    ["ClaudeBot", "/c"],
    ["Chrome", "/b"],
    ["GPTBot", "/b"],
  ];
  await check("edge: the handler gets each request unchanged (method, path, body, headers)", async () => {
    for (const [who, path] of edgePlan) {
      const res = await get(edge, path, { "User-Agent": UA[who] });
      if (res.status !== 200 || res.body !== `GET ${path} ` || res.headers["x-seen-ua"] !== UA[who]) throw new Error(`${who} ${path}: ${res.status} ${res.body}`);
    }
    const res = await get(edge, "/form", { "User-Agent": UA.GPTBot }, "POST", "name=x");
    if (res.body !== "POST /form name=x") throw new Error(`POST: ${res.body}`);
  });
  await check("edge: waitUntil got one delivery per bot request, and each settled", async () => {
    if (waited.length !== 7) throw new Error(`${waited.length} promises for 7 bot requests`);
    await Promise.all(waited);
  });
  // Delivered before waitUntil's promises settled: the query finds them without waiting.
  await expectBots(
    "edge: /api/v1/query/bots lists exactly PerplexityBot 3, GPTBot 3, ClaudeBot 1",
    strata.url,
    edgeTenant.token,
    [
      { name: "GPTBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 3 },
      { name: "PerplexityBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 3 },
      { name: "ClaudeBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 1 },
    ],
    0,
  );

  // Exactly once: after a while, with the clients' timers having run, the same counts.
  await new Promise((r) => setTimeout(r, 1500));
  await expectBots("Express: still exactly the same later", strata.url, expressTenant.token, want, 0);

  // 3. Strata stopped: the app's answers stay fast while the client retries.
  await strata.stop();
  await check("Strata stopped: every Express response succeeds within 50 ms while the client retries", async () => {
    const retriesBefore = client.stats().retries;
    const times = [];
    for (let i = 0; i < 40; i++) {
      const who = ["GPTBot", "ClaudeBot", "PerplexityBot", "Chrome"][i % 4];
      const res = await get(site, "/", { "User-Agent": UA[who] });
      if (res.status !== 200) throw new Error(`${who}: ${res.status}`);
      times.push(res.ms);
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 150)); // let the retries run meanwhile
    }
    const slowest = Math.max(...times);
    console.log(`# response times with Strata down: median ${median(times).toFixed(2)} ms, slowest ${slowest.toFixed(2)} ms`);
    if (slowest >= 50) throw new Error(`slowest response ${slowest.toFixed(1)} ms`);
    const s = client.stats();
    if (s.retries <= retriesBefore) throw new Error(`no retries: ${JSON.stringify(s)}`);
    if (s.queued !== 30) throw new Error(`${s.queued} events waiting, want the 30 bot hits: ${JSON.stringify(s)}`);
  });
  await check("Strata stopped: shutdown gives up at its deadline", async () => {
    const t = Date.now();
    await client.shutdown(300);
    const s = client.stats();
    if (Date.now() - t > 2000) throw new Error(`shutdown took ${Date.now() - t} ms`);
    if (s.queued !== 0 || s.failed !== 30) throw new Error(JSON.stringify(s));
  });
}

/** expectBots polls GET /api/v1/query/bots until its bots are `want` (or time runs out). */
async function expectBots(name, base, token, want, waitMs = ARRIVAL_MS) {
  await check(name, async () => {
    const end = Date.now() + waitMs;
    let got;
    for (;;) {
      const r = await query(base, token, "/api/v1/query/bots");
      got = r.bots.map(({ name, category, categoryLabel, hits }) => ({ name, category, categoryLabel, hits }));
      if (JSON.stringify(got) === JSON.stringify(want) || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`got ${JSON.stringify(got)}`);
  });
}

/** query GETs a query endpoint with the product's query token. */
async function query(base, token, path) {
  const res = await fetch(base + path, { headers: { Authorization: "Bearer " + token } });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** count is the number of `event` events passing `filters` over the last 30 days. */
async function count(base, token, event, filters = []) {
  const res = await fetch(base + "/api/v1/query/trend", {
    method: "POST",
    headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
    body: JSON.stringify({ series: [{ event, math: "total" }], interval: "day", filters }),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`trend: ${res.status} ${JSON.stringify(json)}`);
  return json.series[0].data.reduce((n, p) => n + p.value, 0);
}

/** createTenant makes a product, a live key and a query token with the CLI. */
function createTenant(dataDir, name) {
  const cli = (...args) =>
    execFileSync(STRATA_BIN, [...args, "--data", dataDir], { env: { ...process.env, STRATA_DATA: "" }, encoding: "utf8" }).trim();
  const product = JSON.parse(cli("products", "create", "--name", name)).id;
  return {
    key: cli("keys", "create", "--product", String(product)),
    token: cli("tokens", "create", "--product", String(product)),
  };
}

/** startExpress serves an Express app with the middleware first and three pages on 127.0.0.1. */
async function startExpress(middleware) {
  const app = express();
  app.use(middleware);
  for (const path of ["/", "/docs/setup", "/pricing"]) app.get(path, (_req, res) => res.send("page " + path));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${server.address().port}`;
}

/** startFetchServer serves a Fetch API handler through node:http, as Node adapters do. */
async function startFetchServer(handle) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body });
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${server.address().port}`;
}

/** get sends one request on a fresh connection and returns status, body, headers and time taken. */
function get(base, path, headers, method = "GET", body) {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, body: text, headers: res.headers, ms: performance.now() - t }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

await run(main);
