// End-to-end test of the browser SDK: a real Chromium (driven by playwright-core)
// loads pages that use the SDK, and a real `strata serve` stores the events; the
// assertions read them back through the query API, so every event must arrive,
// and arrive exactly once.
//
//   STRATA_BIN=/path/to/strata [CHROMIUM=/usr/bin/chromium] node test/e2e/run.mjs
//
// STRATA_BIN defaults to the repository's bin/strata (`make build`). The SDK is
// loaded from the Strata server at /sdk/v1/sdk.min.js, which must serve this
// build (make copies dist/ into the server it builds). Everything listens on 127.0.0.1,
// and every process started here is stopped by its own PID.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { harness } from "../../../../e2e/browser/harness.mjs";
import { cookieless } from "./cookieless.mjs";
import { csp } from "./csp.mjs";
import { optOut, optOutPage } from "./optout.mjs";
import { experiments, expPage } from "./experiments.mjs";
import { isPathRulePage, messages, messagesPage, pathRules } from "./messages.mjs";
import { replay, replayCap, replayPage, replayQuota } from "./replay.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..", "..");
const STRATA_BIN = process.env.STRATA_BIN || join(pkg, "..", "..", "bin", "strata");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
/** The whole run is abandoned after this long. */
const DEADLINE_MS = 420_000;
/** Screenshots of the message steps (git-ignored). */
const ARTIFACTS = join(pkg, "test", "artifacts");
/** How long a count may take to reach its expected value. */
const ARRIVAL_MS = 20_000;

const { cleanups, check, startStrata, run } = harness({ strataBin: STRATA_BIN, deadlineMs: DEADLINE_MS, name: "sdk" });

async function main() {
  for (const [what, path] of [["STRATA_BIN", STRATA_BIN], ["CHROMIUM", CHROMIUM]]) {
    if (!existsSync(path)) throw new Error(`${what} ${path} does not exist`);
  }
  // Always test the current source.
  execFileSync(process.execPath, [join(pkg, "scripts", "build.mjs")], { stdio: "inherit" });

  const strata = await startStrata();
  const { key, token } = createTenant(strata.dataDir);
  const api = queryClient(strata.url, token);

  // The pages load the script the server embeds; it must be this build
  // (make copies dist/ into the server before building it).
  for (const name of ["sdk.min.js", "messages.min.js", "replay.min.js"]) {
    const served = await fetch(strata.url + "/sdk/v1/" + name);
    const built = readFileSync(join(pkg, "dist", name), "utf8");
    if (!served.ok || (await served.text()) !== built) {
      throw new Error(`strata does not serve this build at /sdk/v1/${name}; run \`make build\` after \`npm run build\``);
    }
  }
  const sdkFromStrata = true;
  const site = await startSite({ strataUrl: strata.url, key, sdkFromStrata });

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  cleanups.push(() => browser.close());
  const context = await browser.newContext();
  /** Every request to Strata's /e, for checking how events travelled. */
  const ingest = [];
  context.on("request", (r) => {
    if (r.url().startsWith(strata.url + "/e")) {
      ingest.push({ type: r.resourceType(), contentType: r.headers()["content-type"] || "", body: r.postData() || "" });
    }
  });
  /** The answers to those requests that the browser read (beacons' are not). */
  const answers = [];
  context.on("response", async (r) => {
    if (!r.url().startsWith(strata.url + "/e") || r.request().method() !== "POST") return;
    answers.push({ status: r.status(), body: await r.json().catch(() => ({})) });
  });
  const pageErrors = [];
  context.on("weberror", (e) => pageErrors.push(e.error().message));
  const page = await context.newPage();

  // E2E_ONLY=errors, E2E_ONLY=paths and E2E_ONLY=csp run error tracking, the
  // message path rules that freeze RegExp, or the strict pages, alone.
  if (process.env.E2E_ONLY === "errors") return errorTracking({ browser, site, api, strataUrl: strata.url });
  if (process.env.E2E_ONLY === "paths") return pathRules({ browser, check, site, call: api.call });
  // Pages with strict CSPs, Trusted Types, a throwing fetch, changed built-ins.
  const cspArgs = { browser, check, api, call: api.call, strataUrl: strata.url, key, artifacts: ARTIFACTS, cleanups };
  if (process.env.E2E_ONLY === "csp") return csp(cspArgs);
  // optOut(), optIn() and Global Privacy Control; E2E_ONLY=optout runs this part alone.
  const optOutArgs = { browser, check, site, api, waitFor };
  if (process.env.E2E_ONLY === "optout") return optOut(optOutArgs);
  // Cookieless mode, on a server of its own; E2E_ONLY=cookieless runs this part alone.
  await cookieless({ browser, check, startStrata, createTenant, queryClient, waitFor, cleanups });
  if (process.env.E2E_ONLY === "cookieless") return;

  // Session replay (docs/replay.md); E2E_ONLY=replay runs this part alone.
  await replay({ browser, check, site, api, call: api.call, dataDir: strata.dataDir });
  await replayCap({ browser, check, startStrata, createTenant });
  await replayQuota({ browser, check, startStrata, createTenant });
  if (process.env.E2E_ONLY === "replay") return;

  /** Counts that must hold at the end too, after the SDK had time to send duplicates. */
  const finals = [];
  const expectCount = async (name, query, want, { final = true } = {}) => {
    if (final) finals.push({ name, query, want });
    await check(name, async () => {
      const got = await waitFor(query, want);
      if (got !== want) throw new Error(`expected ${want}, got ${got}`);
    });
  };
  const path = (p) => [{ property: "path", operator: "eq", value: p }];

  // 1. Page views, clicks, a form, a custom event and identify, across a reload.
  await page.goto(site.url + "/basic.html");
  await page.click("#docs");
  await page.click("#buy");
  await page.click("#signup button");
  await page.evaluate(() => window.strata.track("e2e_custom", { n: 1 }));
  const anonId = await page.evaluate(() => localStorage.getItem("strata_anon_id"));
  await page.waitForTimeout(20); // distinct timestamps keep funnel order unambiguous
  await page.evaluate(() => window.strata.identify("e2e_user_1", { plan: "pro" }));
  await page.waitForTimeout(20);
  await page.evaluate(() => window.strata.track("e2e_after_identify"));
  await page.waitForTimeout(1500);
  await page.reload();
  await page.evaluate(() => window.strata.track("e2e_after_reload"));

  await expectCount("page views on load and reload", () => api.count("$pageview", path("/basic.html")), 2);
  await expectCount("clicks on a link and two buttons", () => api.count("$click", path("/basic.html")), 3);
  await expectCount(
    "click text and selector",
    () => api.count("$click", [{ property: "properties.$text", operator: "eq", value: "Buy now" }, { property: "properties.$selector", operator: "eq", value: "button#buy" }]),
    1,
  );
  await expectCount("form submit with its id", () => api.count("$form_submit", [{ property: "properties.$form_id", operator: "eq", value: "signup" }]), 1);
  await expectCount("no field value in the form submit", () => api.count("$form_submit", [{ property: "properties.email", operator: "is_set" }]), 0);
  await expectCount("custom event", () => api.count("e2e_custom"), 1);
  await expectCount("$identify with the anonymous id", () => api.count("$identify", [{ property: "properties.$anon_distinct_id", operator: "eq", value: anonId }]), 1);
  await expectCount("event after identify", () => api.count("e2e_after_identify"), 1);
  await expectCount("event after reload", () => api.count("e2e_after_reload"), 1);
  await check("identify binds later events to the user, across the reload", async () => {
    const f = await api.funnel(["$identify", "e2e_after_identify", "e2e_after_reload"]);
    if (f.join() !== "1,1,1") throw new Error(`funnel $identify → after → after reload: ${f}`);
    const before = await api.funnel(["e2e_custom", "e2e_after_identify"]);
    if (before.join() !== "1,0") throw new Error(`the anonymous event shares its distinct_id with the user: ${before}`);
  });

  // 2. flush() in a click handler that navigates to a page without the SDK: only the
  //    beacon can deliver.
  await page.goto(site.url + "/nav.html");
  await page.click("#go");
  await page.waitForURL("**/plain.html");
  await expectCount("event flushed before navigation", () => api.count("e2e_nav_click"), 1);
  await expectCount("click on the navigating link", () => api.count("$click", path("/nav.html")), 1);
  await expectCount("page view of the page left", () => api.count("$pageview", path("/nav.html")), 1);
  await check("flush used a text/plain beacon with the key in the body", async () => {
    const r = ingest.find((x) => x.body.includes("e2e_nav_click"));
    if (!r) throw new Error("no request carried e2e_nav_click");
    if (!r.contentType.startsWith("text/plain")) throw new Error(`content type ${r.contentType}`);
    if (JSON.parse(r.body).api_key !== key) throw new Error("api_key missing from the body");
    if (r.type !== "ping") throw new Error(`sent as ${r.type}, not as a beacon (ping)`);
  });

  // 3. Leaving a page right after track(), without flush(): the page-hide beacon.
  await page.goto(site.url + "/hide.html");
  await page.evaluate(() => window.strata.track("e2e_hidden"));
  await page.goto(site.url + "/plain.html");
  await expectCount("event sent when the page was hidden", () => api.count("e2e_hidden"), 1);

  // 4. SPA navigation: pushState, replaceState and back (popstate).
  await page.goto(site.url + "/spa.html");
  await page.evaluate(() => history.pushState({}, "", "/spa/a"));
  await page.evaluate(() => history.replaceState({}, "", "/spa/b"));
  await page.evaluate(() => history.back());
  await page.waitForURL("**/spa.html");
  await expectCount("SPA: initial and popstate page views", () => api.count("$pageview", path("/spa.html")), 2);
  await expectCount("SPA: pushState page view", () => api.count("$pageview", path("/spa/a")), 1);
  await expectCount(
    "SPA: replaceState page view, referred by the previous route",
    () => api.count("$pageview", [...path("/spa/b"), { property: "referrer", operator: "eq", value: site.url + "/spa/a" }]),
    1,
  );

  // 5. Offline, then online again: the queue waits and then delivers.
  await page.goto(site.url + "/offline.html");
  // (Not re-checked at the end: step 6 adds a second view of this page.)
  await expectCount("page view before going offline", () => api.count("$pageview", path("/offline.html")), 1, { final: false });
  await context.setOffline(true);
  await page.evaluate(() => [1, 2, 3].forEach((i) => window.strata.track("e2e_offline", { i })));
  await page.waitForTimeout(2500);
  await check("nothing arrives while offline; the events wait in localStorage", async () => {
    const n = await api.count("e2e_offline");
    if (n !== 0) throw new Error(`${n} arrived`);
    const queued = await page.evaluate(() => JSON.parse(localStorage.getItem("strata_queue") || "[]").length);
    if (queued !== 3) throw new Error(`${queued} events in the offline queue`);
  });
  await context.setOffline(false);
  await expectCount("offline events after going online", () => api.count("e2e_offline"), 3);

  // 6. Offline, then the page is closed: the next page load delivers.
  await context.setOffline(true);
  await page.evaluate(() => window.strata.track("e2e_offline_reload"));
  await page.close();
  await context.setOffline(false);
  const next = await context.newPage();
  await next.goto(site.url + "/offline.html");
  await expectCount("offline event delivered by the next page load", () => api.count("e2e_offline_reload"), 1);
  await expectCount("its page views", () => api.count("$pageview", path("/offline.html")), 2);

  // Exactly once: give retries and resends time, then every count again.
  await next.waitForTimeout(4000);
  for (const f of finals) {
    await check(`still exactly ${f.want} later: ${f.name}`, async () => {
      const got = await f.query();
      if (got !== f.want) throw new Error(`expected ${f.want}, got ${got}`);
    });
  }
  await check("the server accepted every event it was sent", async () => {
    const bad = answers.filter((a) => a.status !== 202 || a.body.rejected?.length);
    if (bad.length) throw new Error(JSON.stringify(bad));
    if (!answers.length) throw new Error("no answers seen");
  });
  await check("no error on any page", async () => {
    if (pageErrors.length) throw new Error(pageErrors.join("; "));
  });

  // 5. Flags and experiments: variants, exposures, conversions, results, a pause.
  await experiments({ browser, check, site, api, call: api.call });

  // 6. The README's snippets, as written: the script tag of every page, then
  // track and identify where they belong.
  const readme = await browser.newContext();
  const rp = await readme.newPage();
  await rp.goto(site.url + "/readme.html");
  await check("the README's script tag sends a page view and nothing else", async () => {
    const got = await waitFor(() => api.count("$pageview", path("/readme.html")), 1);
    if (got !== 1) throw new Error(`${got} page views`);
    await rp.waitForTimeout(1500);
    for (const name of ["signup", "$identify"]) {
      const n = await api.count(name, path("/readme.html"));
      if (n !== 0) throw new Error(`${n} ${name} events from a page load`);
    }
  });
  await rp.evaluate(readmeCalls);
  await rp.evaluate(() => window.strata.flush());
  await check("the README's track and identify calls arrive as a sign-up and the user's identify", async () => {
    const signups = await waitFor(() => api.count("signup", [{ property: "properties.plan", operator: "eq", value: "pro" }]), 1);
    const identifies = await waitFor(() => api.count("$identify", [{ property: "properties.email", operator: "eq", value: "a@example.com" }]), 1);
    if (signups !== 1 || identifies !== 1) throw new Error(`${signups} sign-ups, ${identifies} identifies`);
  });
  await readme.close();

  // 7. Error tracking: an uncaught error, rejected promises and a burst, on a page
  //    that inits with errorTracking and a release (its own context: these errors
  //    are meant to happen).
  await errorTracking({ browser, site, api, strataUrl: strata.url });

  // 8. In-app messages: the renderer the SDK loads once the product has an
  //    active campaign (last: from then on every page loads it).
  await messages({ browser, check, site, api, call: api.call, strataUrl: strata.url, key, artifacts: ARTIFACTS });
  // Path rules that backtrack catastrophically in RegExp (docs/messages.md).
  await pathRules({ browser, check, site, call: api.call });
  // 9. The SDK on pages as real sites build them (README.md, "Content Security Policy").
  await csp(cspArgs);
  // 10. Opting out (README.md, "Opting out").
  await optOut(optOutArgs);
}

/**
 * errorTracking checks that errors become `$exception` events exactly once, with
 * the raw stack (naming the page's throwing function), source, type, message and
 * release: the first ones when their 5-second burst ends, the burst of three when
 * the page is left (the pagehide beacon), with its count.
 */
async function errorTracking({ browser, site, api, strataUrl }) {
  const context = await browser.newContext();
  const answers = [];
  context.on("response", async (r) => {
    if (!r.url().startsWith(strataUrl + "/e") || r.request().method() !== "POST") return;
    answers.push({ status: r.status(), body: await r.json().catch(() => ({})) });
  });
  const pageErrors = [];
  context.on("weberror", (e) => pageErrors.push(e.error().message));
  const page = await context.newPage();
  await page.goto(site.url + "/errors.html");
  await page.click("#throw");
  await page.click("#reject");
  await page.click("#reject-string");

  const prop = (name, operator, value) => ({ property: "properties." + name, operator, value });
  const onPage = { property: "path", operator: "eq", value: "/errors.html" };
  const uncaught = [
    onPage,
    prop("$exception_source", "eq", "onerror"),
    prop("$exception_type", "eq", "TypeError"),
    prop("$exception_message", "eq", "e2e uncaught error"),
    prop("$exception_stack", "contains", "e2eThrowingFunction"),
    prop("$exception_count", "eq", 1),
    prop("$release", "eq", "1.0.0"),
  ];
  const rejected = [
    onPage,
    prop("$exception_source", "eq", "unhandledrejection"),
    prop("$exception_type", "eq", "Error"),
    prop("$exception_message", "eq", "e2e rejected promise"),
    prop("$exception_stack", "contains", "e2eRejectingFunction"),
    prop("$exception_count", "eq", 1),
    prop("$release", "eq", "1.0.0"),
  ];
  const rejectedString = [
    onPage,
    prop("$exception_source", "eq", "unhandledrejection"),
    prop("$exception_type", "eq", "UnhandledRejection"),
    prop("$exception_message", "eq", "e2e string reason"),
    prop("$exception_stack", "is_not_set", null),
    prop("$release", "eq", "1.0.0"),
  ];
  const exactly = async (name, filters, want) => {
    await check(name, async () => {
      const got = await waitFor(() => api.count("$exception", filters), want);
      if (got !== want) throw new Error(`expected ${want}, got ${got}`);
    });
  };
  await check("the page's errors happened, and its own window.onerror still ran", async () => {
    for (let i = 0; i < 20 && pageErrors.length < 3; i++) await page.waitForTimeout(100);
    if (pageErrors.length !== 3) throw new Error(`${pageErrors.length} page errors: ${pageErrors.join("; ")}`);
    const calls = await page.evaluate(() => window.onerrorCalls);
    if (calls !== 1) throw new Error(`window.onerror ran ${calls} times`);
  });
  await exactly("an uncaught error arrives with its raw stack, type, message, source and release", uncaught, 1);
  await exactly("a rejected promise arrives with its raw stack, type, message, source and release", rejected, 1);
  await exactly("a promise rejected with a string arrives as UnhandledRejection, without stack", rejectedString, 1);

  // The same error three times within the burst, then the page is left.
  for (let i = 0; i < 3; i++) await page.click("#burst");
  await page.goto(site.url + "/plain.html");
  const burst = [onPage, prop("$exception_message", "eq", "e2e burst"), prop("$exception_stack", "contains", "e2eBurstFunction")];
  await exactly("a burst of one error arrives once, with its count, when the page is left", [...burst, prop("$exception_count", "eq", 3)], 1);

  await page.waitForTimeout(3000);
  await exactly("still once each later, and nothing else", [onPage], 4);
  await exactly("still one event for the burst", burst, 1);
  await exactly("the filters select: no stack names a function the page lacks", [onPage, prop("$exception_stack", "contains", "e2eNoSuchFunction")], 0);
  // An error whose message holds NUL, which ingest refuses in any string:
  // the SDK sends it with U+FFFD in its place (docs/errors.md, "At ingest").
  await page.goto(site.url + "/errors.html");
  await page.click("#nul");
  await page.goto(site.url + "/plain.html");
  await exactly(
    "an error thrown with NUL in its message is stored, NUL replaced by U+FFFD in its message and stack",
    [onPage, prop("$exception_message", "eq", "e2e a\ufffdb"), prop("$exception_stack", "contains", "Error: e2e a\ufffdb"),
      prop("$exception_stack", "contains", "e2eNulFunction")],
    1,
  );
  await check("the server accepted every error event", async () => {
    const bad = answers.filter((a) => a.status !== 202 || a.body.rejected?.length);
    if (bad.length) throw new Error(JSON.stringify(bad));
  });
  await context.close();
}

/** readmeSnippet returns the README's block of the given language that contains marker. */
function readmeSnippet(lang, marker) {
  const text = readFileSync(join(pkg, "..", "..", "README.md"), "utf8");
  for (const m of text.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))) {
    if (m[1].includes(marker)) return m[1];
  }
  throw new Error(`README.md has no ${lang} block with ${marker}`);
}

/** readmeCalls runs the README's track and identify example in the page. */
const readmeCalls = new Function(readmeSnippet("js", "strata.identify("));

/** waitFor polls a count until it reaches `want` (or passes it) or time runs out. */
async function waitFor(query, want) {
  const end = Date.now() + ARRIVAL_MS;
  let got = await query();
  while (got < want && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    got = await query();
  }
  return got;
}

/** createTenant makes a product, a live key and a query token with the CLI. */
function createTenant(dataDir) {
  const cli = (...args) =>
    execFileSync(STRATA_BIN, [...args, "--data", dataDir], { env: { ...process.env, STRATA_DATA: "" }, encoding: "utf8" }).trim();
  const product = JSON.parse(cli("products", "create", "--name", "SDK e2e")).id;
  return {
    product,
    key: cli("keys", "create", "--product", String(product)),
    token: cli("tokens", "create", "--product", String(product)),
  };
}

/** queryClient reads counts through the query API with a bearer token. */
function queryClient(base, token) {
  const post = async (path, body) => {
    const res = await fetch(base + path, {
      method: "POST",
      headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    /** count is the number of `event` events passing `filters` over the last 30 days. */
    async count(event, filters = []) {
      const r = await post("/api/v1/query/trend", { series: [{ event, math: "total" }], interval: "day", filters });
      return r.series[0].data.reduce((n, p) => n + p.value, 0);
    },
    /** call sends any API request and returns the JSON answer. */
    async call(method, path, body) {
      const res = await fetch(base + path, {
        method,
        headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
    /** funnel returns the user count of each step. */
    async funnel(steps) {
      const r = await post("/api/v1/query/funnel", { steps, windowHours: 24 });
      return r.steps.map((s) => s.count);
    },
  };
}

/** startSite serves the test pages (and, as a fallback, the SDK) on 127.0.0.1. */
async function startSite({ strataUrl, key, sdkFromStrata }) {
  const sdk = readFileSync(join(pkg, "dist", "sdk.min.js"));
  const head = sdkFromStrata
    ? `<script src="${strataUrl}/sdk/v1/sdk.min.js"></script><script>strata.init({ apiKey: ${JSON.stringify(key)} })</script>`
    : `<script src="/sdk.min.js"></script><script>strata.init({ apiKey: ${JSON.stringify(key)}, apiHost: ${JSON.stringify(strataUrl)} })</script>`;
  const page = (body, withSdk = true) =>
    `<!doctype html><html><head><meta charset="utf-8"><title>SDK e2e</title>${withSdk ? head : ""}</head><body>${body}</body></html>`;
  const pages = {
    "/basic.html": page(`
      <a id="docs" href="#docs">Read the docs</a>
      <button id="buy" class="cta">Buy now</button>
      <form id="signup" action="/signup"><input name="email" value="person@example.com"><button type="submit">Sign up</button></form>
      <script>document.getElementById("signup").addEventListener("submit", (e) => e.preventDefault())</script>`),
    "/nav.html": page(`
      <a id="go" href="/plain.html">Go</a>
      <script>document.getElementById("go").addEventListener("click", () => { strata.track("e2e_nav_click"); strata.flush(); })</script>`),
    "/hide.html": page("<p>Leaving soon.</p>"),
    "/spa.html": page("<p>Single-page app.</p>"),
    "/offline.html": page("<p>Offline.</p>"),
    "/plain.html": page("<p>No SDK here.</p>", false),
    "/replay.html": replayPage(strataUrl, key),
    "/exp.html": expPage(head),
    "/optout.html": optOutPage(strataUrl, key),
    // Error tracking on, with a release; the page's own window.onerror counts too.
    "/errors.html": `<!doctype html><html><head><meta charset="utf-8"><title>Errors</title>
      <script>window.onerrorCalls = 0; window.onerror = () => { window.onerrorCalls++; };</script>
      <script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
      <script>strata.init({ apiKey: ${JSON.stringify(key)}, errorTracking: true, release: "1.0.0" })</script></head><body>
      <button id="throw">Throw</button> <button id="reject">Reject</button>
      <button id="reject-string">Reject with a string</button> <button id="burst">Burst</button>
      <button id="nul">Throw with NUL</button>
      <script>
        function e2eThrowingFunction() { throw new TypeError("e2e uncaught error"); }
        async function e2eRejectingFunction() { await null; throw new Error("e2e rejected promise"); }
        function e2eBurstFunction() { throw new RangeError("e2e burst"); }
        document.getElementById("throw").addEventListener("click", () => e2eThrowingFunction());
        document.getElementById("reject").addEventListener("click", () => { e2eRejectingFunction(); });
        document.getElementById("reject-string").addEventListener("click", () => { Promise.reject("e2e string reason"); });
        function e2eNulFunction() { throw new Error("e2e a\\0b"); }
        document.getElementById("burst").addEventListener("click", () => e2eBurstFunction());
        document.getElementById("nul").addEventListener("click", () => e2eNulFunction());
      </script></body></html>`,
    // The README's tag for every page, with this server and key put in.
    "/readme.html": `<!doctype html><html><head><meta charset="utf-8"><title>README</title>${readmeSnippet("html", "sdk.min.js")
      .replaceAll("https://analytics.example.com", strataUrl)
      .replaceAll("st_live_…", key)}</head><body><p>README page.</p></body></html>`,
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/sdk.min.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(sdk);
    } else if (path.startsWith("/m/") || isPathRulePage(path)) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(messagesPage(head));
    } else if (pages[path] || path.startsWith("/spa/")) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(pages[path] || pages["/spa.html"]);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${server.address().port}` };
}

await run(main);
