// What expressMiddleware adds to a request, measured two ways:
//
// 1. Over HTTP: wrk drives the same Express app (one route, "hello") in its
//    own Node process, built three ways: without middleware, with an empty
//    middleware (`(req, res, next) => next()`: what any app.use layer costs
//    in Express's router) and with expressMiddleware; with a person's user
//    agent and with GPTBot's, the builds alternating over ROUNDS rounds.
//    With the middleware, bot requests are sent for real to a fake Strata in
//    this process (202 for every batch), with the client's default batching.
//    The cost is read as the app process's CPU time per request (from
//    process.cpuUsage, before and after each run): on 2 cores, wrk, the app
//    and the fake Strata compete, so rates and latencies also show the
//    machine's scheduling, while the app's CPU per request does not.
// 2. In process: the middleware function called directly N times with a
//    person's request and with a bot's (the client's fetch answering 202 at
//    once, so queueing, encoding and batching count, the network does not).
//
//   node bench/middleware.mjs            (npm run bench; make bench runs it)
//   DURATION=5 ROUNDS=2 CONNECTIONS=32   (the defaults)
//
// It builds dist/ first and prints a markdown table. Needs wrk
// (scripts/install-bench-tools.sh). Everything listens on 127.0.0.1; the app
// processes are stopped by their PIDs.
import { execFile, execFileSync, spawn } from "node:child_process";
import { createServer } from "node:http";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const DURATION = Number(process.env.DURATION || 5);
const ROUNDS = Number(process.env.ROUNDS || 2);
const CONNECTIONS = Number(process.env.CONNECTIONS || 32);
const UA = {
  human: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  bot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
};

if (process.argv[2] === "serve") await serve(process.argv[3], process.argv[4]);
else await main();

/** serve runs the Express app (mode "plain" or "middleware") and prints its port. */
async function serve(mode, ingest) {
  const { default: express } = await import("express");
  const { Strata, expressMiddleware } = await import(join(pkg, "dist", "index.js"));
  const app = express();
  const client = new Strata({ apiKey: "st_live_bench", host: ingest });
  if (mode === "middleware") app.use(expressMiddleware(client));
  if (mode === "noop") app.use((_req, _res, next) => next());
  app.get("/", (_req, res) => res.send("hello"));
  app.get("/__stats", (_req, res) => res.json({ ...client.stats(), cpu: process.cpuUsage() }));
  const server = app.listen(0, "127.0.0.1", () => console.log(server.address().port));
}

async function main() {
  execFileSync(process.execPath, [join(pkg, "scripts", "build.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
  const wrk = await promisify(execFile)("wrk", ["--version"]).catch((e) => e);
  if (!String(wrk.stdout || "").startsWith("wrk")) throw new Error("wrk is missing: run scripts/install-bench-tools.sh");

  // The fake Strata: every batch is accepted.
  let batches = 0;
  let events = 0;
  const ingest = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      batches++;
      const n = JSON.parse(body).batch.length;
      events += n;
      res.writeHead(202, { "Content-Type": "application/json" }).end(JSON.stringify({ accepted: n, rejected: [] }));
    });
  });
  await new Promise((r) => ingest.listen(0, "127.0.0.1", r));
  const ingestUrl = `http://127.0.0.1:${ingest.address().port}`;

  /** results[mode][ua] collects each round's {rps, p50, p99}. */
  const results = { plain: { human: [], bot: [] }, noop: { human: [], bot: [] }, middleware: { human: [], bot: [] } };
  const sent = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order too, so that neither build always runs first.
    const modes = round % 2 ? ["middleware", "noop", "plain"] : ["plain", "noop", "middleware"];
    for (const mode of modes) {
      const app = await startApp(mode, ingestUrl);
      try {
        await runWrk(app.url, UA.human, 1); // warm-up: JIT, connections
        await runWrk(app.url, UA.bot, 1);
        for (const who of ["human", "bot"]) {
          const before = await stats(app.url);
          const r = await runWrk(app.url, UA[who], DURATION);
          const after = await stats(app.url);
          // The app's own CPU time per request: what the middleware adds, whatever the
          // other processes on the machine (wrk, the fake Strata) take.
          r.cpu = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / r.requests;
          results[mode][who].push(r);
        }
        if (mode === "middleware") sent.push(await stats(app.url));
      } finally {
        await app.stop();
      }
    }
  }
  ingest.close();

  const inProcess = await timeInProcess();

  const cpu = cpus()[0]?.model ?? "unknown CPU";
  console.log(`\n### Node SDK middleware: ${cpus().length} × ${cpu}, Node ${process.version}, wrk -t1 -c${CONNECTIONS} -d${DURATION}s, ${ROUNDS} rounds\n`);
  console.log("| request, round | no middleware: req/s, p50 / p99, app CPU per request | empty middleware: the same | expressMiddleware: the same | added by expressMiddleware (vs empty / vs none) |");
  console.log("|---|---|---|---|---|");
  const fmt = (r) => `${Math.round(r.rps).toLocaleString("en")}, ${r.p50} / ${r.p99}, ${r.cpu.toFixed(1)} µs`;
  for (const who of ["human", "bot"]) {
    for (let i = 0; i < ROUNDS; i++) {
      const [a, n, b] = [results.plain[who][i], results.noop[who][i], results.middleware[who][i]];
      console.log(
        `| ${who === "human" ? "person (Chrome)" : "AI bot (GPTBot)"}, ${i + 1} | ${fmt(a)} | ${fmt(n)} | ${fmt(b)} | ${(b.cpu - n.cpu).toFixed(1)} / ${(b.cpu - a.cpu).toFixed(1)} µs |`,
      );
    }
  }
  console.log("");
  console.log("| in process, the middleware function alone | per call |");
  console.log("|---|---|");
  console.log(`| person (Chrome): classification, next() | ${inProcess.human.toFixed(2)} µs |`);
  console.log(`| AI bot (GPTBot): classification, URL, capture, batching | ${inProcess.bot.toFixed(2)} µs |`);
  console.log("");
  const s = sent.reduce((a, x) => ({ sent: a.sent + x.sent, dropped: a.dropped + x.dropped, failed: a.failed + x.failed }), { sent: 0, dropped: 0, failed: 0 });
  console.log(`Bot page views the middleware sent to the fake Strata: ${events.toLocaleString("en")} in ${batches.toLocaleString("en")} batches (client stats: ${s.sent} sent, ${s.dropped} dropped, ${s.failed} failed).`);
}

/** stats reads the app's client counters and CPU time. */
async function stats(url) {
  return (await fetch(url + "/__stats")).json();
}

/** startApp starts the Express app in a child process and resolves to its URL and a stop function. */
async function startApp(mode, ingestUrl) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "serve", mode, ingestUrl], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((r) => child.once("exit", r));
  const port = await new Promise((resolve, reject) => {
    child.stdout.once("data", (d) => resolve(String(d).trim()));
    exited.then(() => reject(new Error(`the ${mode} app exited`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) process.kill(child.pid, "SIGTERM");
      await exited;
    },
  };
}

/** runWrk runs wrk for seconds against url with a user agent and reads its rate and latencies. */
async function runWrk(url, ua, seconds) {
  const { stdout } = await promisify(execFile)("wrk", ["-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-H", `User-Agent: ${ua}`, url + "/"]);
  const rps = Number(stdout.match(/Requests\/sec:\s+([\d.]+)/)[1]);
  const requests = Number(stdout.match(/(\d+) requests in/)[1]);
  const p = (q) => stdout.match(new RegExp(`\\s${q}%\\s+([\\d.]+\\w+)`))[1];
  if (/Non-2xx|Socket errors/.test(stdout)) throw new Error("wrk saw errors:\n" + stdout);
  return { rps, requests, p50: p(50), p99: p(99) };
}

/** timeInProcess times the middleware function itself, per call, for a person and a bot. */
async function timeInProcess() {
  const { Strata, expressMiddleware } = await import(join(pkg, "dist", "index.js"));
  const ok = async () => new Response('{"accepted":1,"rejected":[]}', { status: 202 });
  const client = new Strata({ apiKey: "st_live_bench", host: "http://127.0.0.1:9", fetch: ok });
  const mw = expressMiddleware(client);
  const req = (ua) => ({
    headers: { "user-agent": ua, host: "shop.example.com", referer: "https://chatgpt.com/", accept: "text/html" },
    url: "/docs/setup?x=1",
    originalUrl: "/docs/setup?x=1",
    protocol: "https",
  });
  const next = () => {};
  const time = async (ua, n) => {
    const r = req(ua);
    // Chunks of 100 calls, yielding between them so the client's batches go out as in a server.
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i += 100) {
      for (let j = 0; j < 100; j++) mw(r, null, next);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return Number(process.hrtime.bigint() - t) / 1000 / n;
  };
  await time(UA.human, 200_000); // warm-up
  await time(UA.bot, 50_000);
  const human = await time(UA.human, 2_000_000);
  const bot = await time(UA.bot, 200_000);
  await client.shutdown();
  if (client.stats().dropped || client.stats().failed) throw new Error("the in-process client dropped events: " + JSON.stringify(client.stats()));
  return { human, bot };
}
