// What the session-replay recorder (docs/replay.md) adds to a page's CPU.
//
// The real binary serves the SDK and the recorder; pages served on loopback
// run the same scripted visit in headless Chromium (playwright-core) with the
// SDK inited `replayEnabled: false`, then `replayEnabled: true`, alternating,
// ROUNDS rounds each after a warm-up, a fresh browser context every run. Two
// pages (PAGES):
//   store   a shop's product listing as a storefront builds it (about 1,100
//           elements rendered by its script, a rotating banner, more cards on
//           scrolling, a quick-view dialog, a cart toast): a search typed and
//           cleared, scrolling, a filter, four add-to-carts, a quick view, a
//           newsletter form;
//   ticker  a stress case: a live table changing ten times a second for the
//           whole visit, while the visitor types, scrolls and clicks.
// Each visit is fixed in amount, not in time (TICKS × 100 ms of the page's
// timers). The page's CPU is the renderer main thread's, read with CDP
// Performance.getMetrics before the navigation and after the visit and the
// recorder's last chunk timer: TaskDuration (every task: script, style,
// layout, paint, parsing) and ScriptDuration (JavaScript alone). Two readings
// of the overhead are printed, from the medians: the CPU the page uses, as a
// share of one core over the visit, with and without the recorder (how
// Sentry's replay benchmark reports it), and the recorder's time as a share of
// the page's own. The chunks' upload happens in the network process and is
// not counted; their gzip (CompressionStream) is. It also prints what the
// chunks weigh as the server stores them, per visit and per minute: what a
// session of the page costs against --replay-max-session-bytes.
//
//   STRATA_BIN=../../bin/strata node bench/replay-cpu.mjs   (npm run bench:replay; make bench runs it)
//   ROUNDS=3 TICKS=100 PAGES=store,ticker CHROMIUM=/usr/bin/chromium   (the defaults)
//   REPLAY_JS=/tmp/old/replay.min.js[,/tmp/b.js…]   other builds of the
//       recorder, measured in the same rounds as more runs (off, on, then one
//       per file, named by it): the browser gets each in place of the
//       binary's (playwright's route), and then gets the binary's the same
//       way, so that all arrive alike.
//   PROFILE=1   instead of the timings, where the recorder's time goes: the
//       visits run under CDP's sampling profiler, ROUNDS with the recorder
//       and ROUNDS without, the recorder built from src/ without minifying
//       (so that its functions have their names) and served as REPLAY_JS is;
//       each sample is put in a category by the functions on its stack
//       (profileCategory), and the means per visit are printed per page.
//
// It prints a markdown table per page. Everything listens on 127.0.0.1; the
// server is stopped by its PID.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { harness } from "../../../e2e/browser/harness.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const STRATA_BIN = process.env.STRATA_BIN || join(pkg, "..", "..", "bin", "strata");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ROUNDS = Number(process.env.ROUNDS || 3);
const TICKS = Number(process.env.TICKS || 100);
const NAMES = (process.env.PAGES || "store,ticker").split(",");
const REPLAY_JS = process.env.REPLAY_JS || "";
const PROFILE = process.env.PROFILE === "1";

// A visit takes about 18 s; the deadline leaves each twice that.
const VISITS = NAMES.length * (PROFILE ? 2 * ROUNDS + 1 : (ROUNDS + 1) * (2 + (REPLAY_JS ? REPLAY_JS.split(",").length : 0)));
const { cleanups, check, startStrata, run } = harness({ strataBin: STRATA_BIN, deadlineMs: 120_000 + 36_000 * VISITS, name: "replay-bench" });

/** head is the pages' common head: the SDK, recording when `replay`. */
function head(title, strataUrl, key, replay) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
<script>strata.init({ apiKey: ${JSON.stringify(key)}, replayEnabled: ${replay}})</script>`;
}

/**
 * storePage is a shop's product listing as a typical storefront builds it:
 * a header with navigation, search and a cart badge, a rotating banner,
 * filters, a grid of 48 product cards rendered by the page's script from its
 * data (about 1,100 elements in all), more cards on scrolling to the end, a
 * quick-view dialog, an add-to-cart toast and a newsletter form. `work(ticks)`
 * runs its timers (the banner turns every 3 s) for ticks × 100 ms.
 */
function storePage(strataUrl, key, replay) {
  return `${head("Store", strataUrl, key, replay)}
<style>body{font:14px/1.4 sans-serif;margin:0;color:#222} header{display:flex;gap:12px;align-items:center;padding:8px 16px;background:#123;color:#fff;position:sticky;top:0;z-index:2}
header nav a{color:#cde;margin-right:10px} .badge{background:#e33;border-radius:9px;padding:0 6px} .banner{height:120px;position:relative;overflow:hidden}
.slide{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;font-size:28px;opacity:0} .slide.on{opacity:1}
.layout{display:grid;grid-template-columns:200px 1fr;gap:16px;padding:16px} aside label{display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:12px} .card{border:1px solid #ddd;border-radius:6px;padding:8px}
.card .img{height:110px;border-radius:4px;background:linear-gradient(135deg,#9cf,#fc9)} .card h3{font-size:15px;margin:6px 0;cursor:pointer}
.stars span{color:#fa0} .price{font-weight:bold} .toast{position:fixed;right:16px;bottom:16px;background:#333;color:#fff;padding:8px 12px;border-radius:4px}
dialog{max-width:420px} footer{display:grid;grid-template-columns:repeat(4,1fr);padding:16px;background:#eee} footer a{display:block}</style></head>
<body><header><strong>Shop</strong><nav id="nav"></nav><input id="q" type="search" placeholder="Search" aria-label="Search"><span>Cart <span class="badge" id="cart">0</span></span></header>
<div class="banner" id="banner"></div>
<div class="layout"><aside id="filters"></aside><main><p><span id="found">48</span> products</p><div class="grid" id="grid"></div><p id="end">Loading more…</p></main></div>
<form id="news" onsubmit="return false"><label>Newsletter <input id="email" type="email"></label> <button id="subscribe">Subscribe</button></form>
<dialog id="quick"><h2 id="quick-title"></h2><p id="quick-text"></p><button id="quick-close">Close</button></dialog>
<footer id="footer"></footer>
<script>
  const names = ["Running shoes", "Trail shoes", "Rain jacket", "Wool socks", "Backpack", "Water bottle", "Cap", "Shorts", "Fleece", "Gloves", "Headlamp", "Tent"];
  const products = Array.from({ length: 96 }, (_, i) => ({ id: i, name: names[i % names.length] + " " + (i + 1), price: 10 + ((i * 37) % 190), stars: 1 + (i % 5) }));
  const $ = (id) => document.getElementById(id);
  const card = (p) => '<article class="card" data-id="' + p.id + '"><div class="img"></div><h3>' + p.name + '</h3><div class="stars">' +
    "<span>★</span>".repeat(p.stars) + "<span>☆</span>".repeat(5 - p.stars) + '</div><p class="price">' + p.price + '.00 EUR</p><p>Free returns within 30 days.</p><button class="add">Add to cart</button></article>';
  let shown = 48, cart = 0, slide = 0;
  $("nav").innerHTML = ["New", "Men", "Women", "Kids", "Running", "Hiking", "Camping", "Sale", "Brands", "Help"].map((n) => '<a href="#' + n + '">' + n + "</a>").join("");
  $("banner").innerHTML = ["Autumn sale: 20 % off", "Free shipping from 50 EUR", "New: trail collection"].map((t, i) => '<div class="slide' + (i ? "" : " on") + '">' + t + "</div>").join("");
  $("filters").innerHTML = "<h2>Filters</h2>" + ["Men", "Women", "Kids", "Shoes", "Jackets", "Socks", "Bags", "Accessories", "In stock", "On sale", "Under 50 EUR", "Under 100 EUR", "4 stars and up", "Waterproof", "Recycled", "Vegan", "New", "Best sellers", "Gift ideas", "Outlet"]
    .map((f) => '<label><input type="checkbox"> ' + f + "</label>").join("");
  $("footer").innerHTML = ["Shop", "Help", "Company", "Legal"].map((c) => "<div><h3>" + c + "</h3>" + Array.from({ length: 6 }, (_, i) => '<a href="#' + c + i + '">' + c + " link " + (i + 1) + "</a>").join("") + "</div>").join("");
  const render = () => { $("grid").innerHTML = products.slice(0, shown).map(card).join(""); };
  render();
  let timer;
  $("q").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => {
    const q = $("q").value.toLowerCase(); let n = 0;
    for (const el of $("grid").children) { const hit = el.querySelector("h3").textContent.toLowerCase().includes(q); el.hidden = !hit; n += hit; }
    $("found").textContent = n;
  }, 150); });
  $("filters").addEventListener("change", () => { const cards = [...$("grid").children]; cards.reverse().forEach((c) => $("grid").append(c)); });
  $("grid").addEventListener("click", (e) => {
    const c = e.target.closest(".card"); if (!c) return;
    if (e.target.classList.contains("add")) {
      $("cart").textContent = ++cart; e.target.textContent = "Added ✓"; setTimeout(() => (e.target.textContent = "Add to cart"), 1000);
      const t = document.createElement("div"); t.className = "toast"; t.textContent = c.querySelector("h3").textContent + " added to the cart"; document.body.append(t); setTimeout(() => t.remove(), 2000);
    } else if (e.target.tagName === "H3") { const p = products[c.dataset.id]; $("quick-title").textContent = p.name; $("quick-text").textContent = "Only " + p.price + ".00 EUR. Ships in 2 days."; $("quick").showModal(); }
  });
  $("quick-close").onclick = () => $("quick").close();
  $("subscribe").onclick = () => { $("news").insertAdjacentHTML("beforeend", "<p>Thanks for subscribing!</p>"); };
  new IntersectionObserver((es) => { if (es[0].isIntersecting && shown < products.length) { $("grid").insertAdjacentHTML("beforeend", products.slice(shown, shown + 12).map(card).join("")); shown += 12; $("found").textContent = shown; } }).observe($("end"));
  window.work = (ticks) => new Promise((done) => {
    const turn = setInterval(() => { const s = $("banner").children; s[slide].classList.remove("on"); slide = (slide + 1) % s.length; s[slide].classList.add("on"); }, 3000);
    setTimeout(() => { clearInterval(turn); done(ticks); }, ticks * 100);
  });
</script></body></html>`;
}

/** storeUser is the store's scripted visitor: a search, scrolling, filters, the cart, a quick view, the newsletter. */
async function storeUser(p) {
  await p.click("#q");
  await p.keyboard.type("running", { delay: 90 });
  await p.waitForTimeout(400);
  for (let i = 0; i < 7; i++) await p.keyboard.press("Backspace", { delay: 60 });
  await p.waitForTimeout(400);
  for (let i = 0; i < 8; i++) {
    await p.mouse.wheel(0, 500);
    await p.waitForTimeout(200);
  }
  await p.mouse.wheel(0, -4000);
  await p.waitForTimeout(300);
  await p.click("#filters label:nth-of-type(4) input");
  for (let i = 0; i < 4; i++) {
    await p.mouse.move(300 + i * 150, 500, { steps: 10 });
    await p.click(`#grid .card:nth-child(${i + 2}) .add`);
  }
  await p.click("#grid .card:nth-child(3) h3");
  await p.waitForTimeout(500);
  await p.click("#quick-close");
  await p.click("#email");
  await p.keyboard.type("ana@example.com", { delay: 60 });
  await p.click("#subscribe");
  await p.mouse.move(600, 400, { steps: 20 });
}

/**
 * tickerPage is a stress case: a live table that changes ten times a second
 * for the whole visit (5 rows added and 5 removed, a counter's text, a class,
 * an inline width and an attribute each time), far more DOM churn per second
 * of the page's own CPU than a typical page makes. `work(ticks)` runs it.
 */
function tickerPage(strataUrl, key, replay) {
  return `${head("Ticker", strataUrl, key, replay)}
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

/** tickerUser is the ticker's scripted visitor: typing, scrolling, mouse moves and clicks, in the same order each run. */
async function tickerUser(p) {
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

/** The pages, by name. */
const PAGES = {
  store: { html: storePage, user: storeUser },
  ticker: { html: tickerPage, user: tickerUser },
};

/**
 * measure runs the workload once with a variant (`replay`: the SDK records;
 * `js`: the recorder's script to serve in place of the binary's) and returns
 * the renderer's TaskDuration and ScriptDuration in ms, and the chunks sent.
 */
async function measure(browser, site, name, { replay, js, profile }) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    if (js) await context.route("**/sdk/v1/replay.min.js", (r) => r.fulfill({ status: 200, contentType: "text/javascript; charset=utf-8", body: js }));
    const p = await context.newPage();
    let chunks = 0;
    let bytes = 0; // the chunks' data as stored: $snapshot_data, base64 decoded
    p.on("request", (r) => {
      if (r.method() !== "POST" || !(r.postData() || "").includes("$snapshot")) return;
      chunks++;
      bytes += Buffer.from(JSON.parse(r.postData()).batch[0].properties.$snapshot_data, "base64").length;
    });
    const cdp = await context.newCDPSession(p);
    await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
    const metrics = async () => Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
    if (profile) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
      await cdp.send("Profiler.start");
    }
    const before = await metrics();
    const started = Date.now();
    await p.goto(`${site}/${name}.html?replay=${replay}`);
    // The start: the SDK, and the recorder's script and full snapshot when on.
    await p.waitForTimeout(1500);
    const ready = await metrics();
    await Promise.all([p.evaluate((t) => window.work(t), TICKS), PAGES[name].user(p)]);
    // The last chunk: the recorder sends its buffer 5 s after its first event.
    await p.waitForTimeout(5500);
    const after = await metrics();
    const cpuProfile = profile ? (await cdp.send("Profiler.stop")).profile : undefined;
    const recorded = await p.evaluate(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")));
    return {
      start: (ready.TaskDuration - before.TaskDuration) * 1000,
      task: (after.TaskDuration - before.TaskDuration) * 1000,
      script: (after.ScriptDuration - before.ScriptDuration) * 1000,
      wall: Date.now() - started,
      recorded,
      chunks,
      bytes,
      cpuProfile,
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
    const page = PAGES[url.pathname.replace(/^\/|\.html$/g, "")];
    if (!page) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(page.html(strata.url, key, url.searchParams.get("replay") === "true"));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const site = `http://127.0.0.1:${server.address().port}`;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  cleanups.push(() => browser.close());
  console.log(`${cpus()[0].model}, ${cpus().length} cores, Chromium ${browser.version()}, ${TICKS} ticks, ${ROUNDS} rounds`);
  if (PROFILE) {
    const { replay } = await import("../scripts/esbuild-options.mjs");
    const { build } = await import("esbuild");
    const out = await build({ ...replay, minify: false, sourcemap: false, write: false });
    const js = out.outputFiles[0].text;
    for (const name of NAMES) await profile(browser, site, name, js);
    return;
  }
  const variants = [{ label: "off", replay: false }, { label: "on", replay: true }];
  if (REPLAY_JS) {
    variants[1].js = await (await fetch(`${strata.url}/sdk/v1/replay.min.js`)).text();
    console.log(`on: the binary's recorder (${variants[1].js.length} bytes)`);
    for (const file of REPLAY_JS.split(",")) {
      const js = readFileSync(file, "utf8");
      variants.push({ label: basename(file).replace(/\.js$/, ""), replay: true, js });
      console.log(`${variants.at(-1).label}: ${file} (${js.length} bytes)`);
    }
  }
  for (const name of NAMES) await bench(browser, site, name, variants);
}

/** bench measures one page: a warm-up, then ROUNDS rounds of the variants in turn; it prints the table. */
async function bench(browser, site, name, variants) {
  for (const v of variants.filter((v) => v.replay)) await measure(browser, site, name, v); // warm-up: caches, the server's first answers
  const runs = variants.map(() => []);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, v] of variants.entries()) {
      const m = await measure(browser, site, name, v);
      runs[i].push(m);
      console.log(`# ${name}, round ${round}, replay ${v.label}: task ${m.task.toFixed(0)} ms (start ${m.start.toFixed(0)} ms), script ${m.script.toFixed(0)} ms, ${m.chunks} chunks of ${(m.bytes / 1000).toFixed(0)} KB, ${m.wall} ms`);
    }
  }
  await check(`${name}: the recording runs loaded the recorder and sent chunks, the others neither`, async () => {
    for (const [i, v] of variants.entries()) {
      const wrong = v.replay ? runs[i].some((m) => !m.recorded || m.chunks === 0) : runs[i].some((m) => m.recorded || m.chunks !== 0);
      if (wrong) throw new Error(`${v.label}: ${JSON.stringify(runs[i])}`);
    }
  });

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ms = (x) => `${x.toFixed(0)} ms`;
  const pct = (on, off) => `${on >= off ? "+" : ""}${((100 * (on - off)) / off).toFixed(1)} %`;
  const cell = (m) => `${ms(m.task)} (${ms(m.start)}) / ${ms(m.script)}`;
  const on = variants.map((v, i) => [v, i]).filter(([v]) => v.replay);
  console.log(`\n### ${name}\n`);
  console.log(`| round | ${variants.map((v) => `replay ${v.label}: task (start) / script`).join(" | ")} | chunks (${on.map(([v]) => v.label).join(", ")}) | wall (on) |`);
  console.log(`|---|${variants.map(() => "---|").join("")}---|---|`);
  for (let r = 0; r < ROUNDS; r++) {
    console.log(`| ${r + 1} | ${runs.map((ms) => cell(ms[r])).join(" | ")} | ${on.map(([, i]) => runs[i][r].chunks).join(", ")} | ${(runs[1][r].wall / 1000).toFixed(1)} s |`);
  }
  const meds = runs.map((ms) => Object.fromEntries(["task", "start", "script", "wall"].map((k) => [k, median(ms.map((m) => m[k]))])));
  console.log(`| median | ${meds.map(cell).join(" | ")} | | |`);
  const share = (m) => (100 * m.task) / m.wall;
  const off = meds[0];
  console.log(`\n${name} (medians): the page uses ${share(off).toFixed(2)} % of one core without the recorder.`);
  // What a session of this page weighs on the server (its --replay-max-session-bytes).
  for (const [v, i] of on) {
    const kb = median(runs[i].map((m) => m.bytes)) / 1000;
    const perMinute = (kb * 60_000) / median(runs[i].map((m) => m.wall));
    console.log(`- ${v.label}: ${kb.toFixed(0)} KB of chunk data for the visit, ${perMinute.toFixed(0)} KB a minute of it (${((perMinute * 60) / 1000).toFixed(1)} MB an hour).`);
  }
  for (const [v, i] of on) {
    const m = meds[i];
    console.log(`- ${v.label}: ${share(m).toFixed(2)} % of a core, **${(share(m) - share(off)).toFixed(2)} points more**; the recorder's time is **${pct(m.task, off.task)}** of the page's own (${ms(m.task - off.task)}: the start ${ms(m.start - off.start)}, the visit ${ms(m.task - m.start - (off.task - off.start))}); JavaScript ${ms(m.script - off.script)} more (${pct(m.script, off.script)}). Each round's difference from its own run without the recorder, median: ${ms(median(runs[i].map((x, r) => x.task - runs[0][r].task)))} (${pct(median(runs[i].map((x, r) => x.task / runs[0][r].task)), 1)}), JavaScript ${ms(median(runs[i].map((x, r) => x.script - runs[0][r].script)))}.`);
  }
  console.log("");
}

/**
 * owners maps a line of the unminified recorder to the top-level function or
 * class that holds it (a line's owner is the last one declared above it).
 */
function owners(js) {
  const decls = [];
  js.split("\n").forEach((line, i) => {
    if (!/^  [^ })\]]/.test(line)) return; // a top-level statement of the bundle's IIFE begins
    const m = /^  (?:async )?function (\w+)|^  (?:var|const|let) (\w+) = (?:class|function|\()|^  class (\w+)/.exec(line);
    decls.push([i, m ? m[1] || m[2] || m[3] : "(top)"]);
  });
  return (line) => {
    let lo = 0, hi = decls.length - 1, found = "(top)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (decls[mid][0] <= line) (found = decls[mid][1]), (lo = mid + 1);
      else hi = mid - 1;
    }
    return found;
  };
}

/**
 * profileCategory names where a sample's time goes from its stack (root
 * first: [url, owner, function] per frame). The recorder's own frames decide;
 * the first rule that matches wins, the most specific first.
 */
function profileCategory(stack, leaf) {
  if (leaf === "(garbage collector)") return "GC (all of the page's)";
  if (leaf === "(program)") return "native, no script on the stack (all of the page's)";
  const rec = stack.filter(([url]) => url.endsWith("/replay.min.js"));
  if (rec.length === 0) {
    if (stack.some(([url]) => url.endsWith("/sdk.min.js"))) return "the SDK (sdk.min.js)";
    return "the page's own script";
  }
  const has = (re) => rec.some(([, owner, fn]) => re.test(owner + "." + fn));
  if (has(/^Recorder\.(flush|send|post)$|^(base64Blob|base64)\./)) return "recorder: chunks (JSON, gzip, base64, send)";
  if (has(/^Recorder\.event$/)) return "recorder: the SDK's custom events";
  if (has(/^Recorder\.(emit|touch)$/)) return "recorder: buffering events (emit)";
  if (has(/\.takeFullSnapshot|^snapshot\.|^serializeNodeWithId\./) && !has(/^MutationBuffer\./)) return "recorder: full snapshot";
  if (has(/^MutationBuffer\.|^initMutationObserver\./)) return "recorder: mutations";
  if (has(/^initMoveObserver\./)) return "recorder: mouse/touch moves";
  if (has(/^initMouseInteractionObserver\./)) return "recorder: clicks, mouse up/down, focus";
  if (has(/^initScrollObserver\./)) return "recorder: scroll";
  if (has(/^initInputObserver\./)) return "recorder: input";
  if (has(/^initViewportResizeObserver\./)) return "recorder: viewport";
  if (has(/^record\.|^initObservers\.|^Recorder\./)) return "recorder: record() setup, observers";
  if (rec.every(([, owner]) => owner === "(top)") || rec.length === 1) return "recorder: script evaluation, other";
  return "recorder: other (" + rec[rec.length - 1][1] + "." + rec[rec.length - 1][2] + ")";
}

/** profile runs ROUNDS profiled visits of a page with and without the recorder and prints the time per category, mean per visit. */
async function profile(browser, site, name, js) {
  const owner = owners(js);
  const variants = [{ label: "off", replay: false, profile: true }, { label: "on", replay: true, js, profile: true }];
  await measure(browser, site, name, variants[1]);
  const totals = variants.map(() => new Map());
  const fns = new Map();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, v] of variants.entries()) {
      const m = await measure(browser, site, name, v);
      console.log(`# ${name}, profiled round ${round}, replay ${v.label}: task ${m.task.toFixed(0)} ms, script ${m.script.toFixed(0)} ms, ${m.chunks} chunks`);
      const { nodes, samples, timeDeltas } = m.cpuProfile;
      const byId = new Map(nodes.map((n) => [n.id, n]));
      const parent = new Map();
      for (const n of nodes) for (const c of n.children || []) parent.set(c, n.id);
      const cache = new Map();
      for (let k = 0; k < samples.length; k++) {
        const id = samples[k];
        const dt = (timeDeltas[k + 1] ?? 0) / 1000; // a sample's time is the gap to the next
        const leaf = byId.get(id).callFrame.functionName;
        if (leaf === "(idle)" || leaf === "(root)") continue;
        let cat = cache.get(id);
        if (!cat) {
          const stack = [];
          for (let n = id; n !== undefined; n = parent.get(n)) {
            const f = byId.get(n).callFrame;
            stack.unshift([f.url, f.url.endsWith("/replay.min.js") ? owner(f.lineNumber) : "", f.functionName || "(anonymous)"]);
          }
          cat = profileCategory(stack, leaf);
          cache.set(id, cat);
          const f = byId.get(id).callFrame;
          if (f.url.endsWith("/replay.min.js")) cache.set("fn" + id, `${owner(f.lineNumber)}.${f.functionName || "(anonymous)"}`);
        }
        totals[i].set(cat, (totals[i].get(cat) || 0) + dt);
        const fn = cache.get("fn" + id);
        if (i === 1 && fn) fns.set(fn, (fns.get(fn) || 0) + dt);
      }
    }
  }
  const cats = [...new Set([...totals[0].keys(), ...totals[1].keys()])].sort((a, b) => (totals[1].get(b) || 0) - (totals[1].get(a) || 0));
  const ms = (x) => `${(x / ROUNDS).toFixed(1)} ms`;
  console.log(`\n### ${name}: where the time goes (CPU profile, mean of ${ROUNDS} visits, main thread)\n`);
  console.log("| category | replay off | replay on |");
  console.log("|---|---|---|");
  for (const c of cats) console.log(`| ${c} | ${ms(totals[0].get(c) || 0)} | ${ms(totals[1].get(c) || 0)} |`);
  const sum = (t) => [...t.values()].reduce((a, b) => a + b, 0);
  console.log(`| all samples | ${ms(sum(totals[0]))} | ${ms(sum(totals[1]))} |`);
  console.log(`\nThe recorder's functions by self time (replay on):\n`);
  for (const [fn, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`- ${fn}: ${ms(t)}`);
  console.log("");
}

await run(main);
