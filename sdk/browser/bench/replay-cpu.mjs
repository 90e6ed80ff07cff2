// What the session-replay recorder (docs/replay.md) adds to a page's CPU.
//
// The real binary serves the SDK and the recorder; a page served on
// loopback runs the same scripted workload in headless Chromium
// (playwright-core) with the SDK inited `replayEnabled: false`, then
// `replayEnabled: true`, alternating, ROUNDS rounds each, a fresh browser
// context every run. The workload is fixed in amount, not in time: the page
// makes TICKS DOM updates (rows added to and removed from a table, a
// counter's text, a class toggled, an element restyled), one every 100 ms,
// while the script types into two inputs, scrolls, moves the mouse and
// clicks, in the same order each run. The page's CPU is the renderer main
// thread's, read with CDP Performance.getMetrics before the navigation and
// after the workload and the recorder's last chunk timer: TaskDuration (every task: script,
// style, layout, paint, parsing) and ScriptDuration (JavaScript alone).
// The overhead is the median of the recording runs over the median of the
// others, minus one. The chunks' upload happens in the network process and
// is not counted; their gzip (CompressionStream) is.
//
//   STRATA_BIN=../../bin/strata node bench/replay-cpu.mjs   (npm run bench:replay; make bench runs it)
//   ROUNDS=3 TICKS=100 CHROMIUM=/usr/bin/chromium           (the defaults)
//
// It prints a markdown table. Everything listens on 127.0.0.1; the server is
// stopped by its PID.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { harness } from "../../../e2e/browser/harness.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const STRATA_BIN = process.env.STRATA_BIN || join(pkg, "..", "..", "bin", "strata");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ROUNDS = Number(process.env.ROUNDS || 3);
const TICKS = Number(process.env.TICKS || 100);

const { cleanups, check, startStrata, run } = harness({ strataBin: STRATA_BIN, deadlineMs: 600_000, name: "replay-bench" });

/** page is the benchmarked page; `replay` says whether the SDK records it. */
function page(strataUrl, key, replay) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Replay CPU bench</title>
<script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
<script>strata.init({ apiKey: ${JSON.stringify(key)}, replayEnabled: ${replay}})</script>
<style>body{font:14px sans-serif;margin:0} main{padding:16px} .row{padding:2px 4px;border-bottom:1px solid #ddd}
.row.hot{background:#fe9} #spacer{height:3000px} .box{width:200px;height:40px;background:#9cf;transition:none}</style></head>
<body><main><h1>Orders</h1>
<form onsubmit="return false"><label>Search <input id="q" type="search"></label>
<label>Note <textarea id="note" rows="2"></textarea></label></form>
<p>Updated <span id="count">0</span> times. <button id="add">Add</button> <button id="clear">Clear</button></p>
<div class="box" id="box"></div>
<table><tbody id="rows"></tbody></table><div id="spacer"></div></main>
<script>
  // The page's own work: TICKS updates, one every 100 ms, the same each run.
  window.work = (ticks) => new Promise((done) => {
    const rows = document.getElementById("rows"), count = document.getElementById("count"), box = document.getElementById("box");
    let n = 0;
    const tick = () => {
      n++;
      for (let i = 0; i < 5; i++) {
        const tr = document.createElement("tr");
        tr.className = "row";
        tr.innerHTML = "<td>#" + (n * 5 + i) + "</td><td>Order of customer " + ((n * 7 + i) % 97) + "</td><td>" + ((n * 13 + i) % 500) + ".00 EUR</td>";
        rows.prepend(tr);
      }
      while (rows.children.length > 150) rows.lastElementChild.remove();
      rows.children[n % rows.children.length].classList.toggle("hot");
      count.textContent = String(n);
      box.style.width = 100 + (n % 20) * 10 + "px";
      box.setAttribute("data-step", String(n));
      if (n < ticks) setTimeout(tick, 100);
      else done(n);
    };
    tick();
  });
  document.getElementById("add").onclick = () => { const p = document.createElement("p"); p.textContent = "Added"; document.querySelector("main").append(p); };
  document.getElementById("clear").onclick = () => document.querySelectorAll("main > p + p").forEach((p) => p.remove());
</script></body></html>`;
}

/** user is the scripted visitor: typing, scrolling, mouse moves and clicks, in the same order each run. */
async function user(p) {
  await p.click("#q");
  await p.keyboard.type("blue running shoes size 42", { delay: 60 });
  for (let i = 0; i < 6; i++) {
    await p.mouse.wheel(0, 300);
    await p.waitForTimeout(150);
  }
  await p.mouse.wheel(0, -1800);
  for (let i = 0; i < 4; i++) {
    await p.mouse.move(50 + i * 120, 120 + i * 40, { steps: 10 });
    await p.click("#add");
  }
  await p.click("#note");
  await p.keyboard.type("Please ship before Friday, thanks.", { delay: 60 });
  await p.click("#clear");
  await p.mouse.move(600, 400, { steps: 20 });
}

/** measure runs the workload once and returns the renderer's TaskDuration and ScriptDuration in ms, and the chunks sent. */
async function measure(browser, site, replay) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const p = await context.newPage();
    let chunks = 0;
    p.on("request", (r) => r.method() === "POST" && (r.postData() || "").includes("$snapshot") && chunks++);
    const cdp = await context.newCDPSession(p);
    await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
    const metrics = async () => Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
    const before = await metrics();
    const started = Date.now();
    await p.goto(`${site}/page.html?replay=${replay}`);
    // The start: the SDK, and the recorder's script and full snapshot when on.
    await p.waitForTimeout(1500);
    const ready = await metrics();
    await Promise.all([p.evaluate((t) => window.work(t), TICKS), user(p)]);
    // The last chunk: the recorder sends its buffer 5 s after its first event.
    await p.waitForTimeout(5500);
    const after = await metrics();
    const recorded = await p.evaluate(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")));
    return {
      start: (ready.TaskDuration - before.TaskDuration) * 1000,
      task: (after.TaskDuration - before.TaskDuration) * 1000,
      script: (after.ScriptDuration - before.ScriptDuration) * 1000,
      wall: Date.now() - started,
      recorded,
      chunks,
    };
  } finally {
    await context.close();
  }
}

async function main() {
  for (const [what, path] of [["STRATA_BIN", STRATA_BIN], ["CHROMIUM", CHROMIUM]]) {
    if (!existsSync(path)) throw new Error(`${what} ${path} does not exist`);
  }
  const strata = await startStrata({});
  const cli = (...args) => execFileSync(STRATA_BIN, [...args, "--data", strata.dataDir], { env: { ...process.env, STRATA_DATA: "" }, encoding: "utf8" }).trim();
  const product = JSON.parse(cli("products", "create", "--name", "Replay bench")).id;
  const key = cli("keys", "create", "--product", String(product));
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname !== "/page.html") return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(page(strata.url, key, url.searchParams.get("replay") === "true"));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const site = `http://127.0.0.1:${server.address().port}`;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  cleanups.push(() => browser.close());
  await measure(browser, site, true); // warm-up: caches, the server's first answers
  const runs = { false: [], true: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const replay of [false, true]) {
      const m = await measure(browser, site, replay);
      runs[replay].push(m);
      console.log(`# round ${round}, replay ${replay}: task ${m.task.toFixed(0)} ms (start ${m.start.toFixed(0)} ms), script ${m.script.toFixed(0)} ms, ${m.chunks} chunks, ${m.wall} ms`);
    }
  }
  await check("the recording runs loaded the recorder and sent chunks, the others neither", async () => {
    if (runs.true.some((m) => !m.recorded || m.chunks === 0)) throw new Error(JSON.stringify(runs.true));
    if (runs.false.some((m) => m.recorded || m.chunks !== 0)) throw new Error(JSON.stringify(runs.false));
  });

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ms = (x) => `${x.toFixed(0)} ms`;
  const pct = (on, off) => `${on >= off ? "+" : ""}${((100 * (on - off)) / off).toFixed(1)} %`;
  console.log(`\n${cpus()[0].model}, ${cpus().length} cores, Chromium ${browser.version()}, ${TICKS} ticks, ${ROUNDS} rounds\n`);
  console.log("| round | replay off: task (start) / script | replay on: task (start) / script | chunks | wall (on) |");
  console.log("|---|---|---|---|---|");
  const cell = (m) => `${ms(m.task)} (${ms(m.start)}) / ${ms(m.script)}`;
  for (let i = 0; i < ROUNDS; i++) {
    const [off, on] = [runs.false[i], runs.true[i]];
    console.log(`| ${i + 1} | ${cell(off)} | ${cell(on)} | ${on.chunks} | ${(on.wall / 1000).toFixed(1)} s |`);
  }
  const med = (r, k) => median(runs[r].map((m) => m[k]));
  const [off, on] = [false, true].map((r) => ({ task: med(r, "task"), start: med(r, "start"), script: med(r, "script"), wall: med(r, "wall") }));
  console.log(`| median | ${cell(off)} | ${cell(on)} | | |`);
  console.log(`\nOverhead (medians): task ${pct(on.task, off.task)} (${ms(on.task - off.task)}; the start ${ms(on.start - off.start)}, the workload ${ms(on.task - on.start - (off.task - off.start))}), script ${pct(on.script, off.script)};`);
  console.log(`as a share of one core over the run's ${(on.wall / 1000).toFixed(1)} s: ${((100 * (on.task - off.task)) / on.wall).toFixed(1)} %.`);
}

await run(main);
