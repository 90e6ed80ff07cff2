// The SDK on pages as real sites build them (README.md, "Content Security
// Policy"): pages served with real CSP headers (Trusted Types, a strict
// style-src), a page whose fetch wrapper throws, and pages that changed the
// built-ins as old Prototype.js does or replaced JSON.stringify. In every
// one, nothing of the SDK's may reach the page (no uncaught error, no
// unhandled rejection, no CSP violation beyond the one a refused policy
// name makes), and the events must arrive, read back through the query API.
// Screenshots of the message under the strict CSP, at 1280 and 390 px, go
// to test/artifacts/.
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";

/** How long a message may take to appear, and events to arrive. */
const SHOWN_MS = 10_000;
const ARRIVAL_MS = 20_000;
/** The nonce of the strict page's inline script. */
const NONCE = "e2e-csp-nonce-4f1c";

/**
 * watch is the init script of every page here: it records, before any other
 * script runs, what must not happen (uncaught errors, unhandled rejections)
 * and every CSP violation, in window.__csp.
 */
function watch() {
  const w = (window.__csp = { errors: [], rejections: [], violations: [] });
  addEventListener("error", (e) => w.errors.push(String(e.message)));
  addEventListener("unhandledrejection", (e) => w.rejections.push(String((e.reason && e.reason.message) || e.reason)));
  document.addEventListener("securitypolicyviolation", (e) => w.violations.push([e.violatedDirective, e.blockedURI, e.sample, e.sourceFile + ":" + e.lineNumber].join(" ")));
}

/** Prototype.js 1.6's serialisers, which return the value already serialised, and a key on Object.prototype. */
const PROTOTYPE_JS = `
  Array.prototype.toJSON = function () { var r = []; for (var i = 0; i < this.length; i++) r.push(JSON.stringify(this[i])); return "[" + r.join(", ") + "]"; };
  String.prototype.toJSON = function () { return JSON.stringify(String(this)); };
  Date.prototype.toJSON = function () { return '"' + this.toISOString() + '"'; };
  Object.prototype.pageHelper = "inherited";`;

/**
 * csp runs the checks. `strataUrl` and `key` are the server and the product's
 * live key, `call` sends an authenticated API request, `api.count` counts events.
 */
export async function csp({ browser, check, api, call, strataUrl, key, artifacts, cleanups }) {
  mkdirSync(artifacts, { recursive: true });
  const init = (extra = "") => `strata.init({ apiKey: ${JSON.stringify(key)}${extra} })`;
  const sdk = (extra = "", nonce = "") =>
    `<script src="${strataUrl}/sdk/v1/sdk.min.js"></script><script${nonce ? ` nonce="${nonce}"` : ""}>${init(extra)}</script>`;
  const page = (title, head, body = "") =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><main><h1>${title}</h1>
     <p>Content of the customer's page, which the SDK does not control.</p><button id="go">Go</button>${body}</main></body></html>`;
  const fetchWrapper = (mode) =>
    `<script>window.fetch = function () { ${mode == "sync" ? "throw new TypeError('fetch is blocked by the page');" : "return Promise.reject(new TypeError('fetch is blocked by the page'));"} };</script>`;
  /** Each page: its CSP header (or none) and its HTML. */
  const pages = {
    // (a) Trusted Types required, the policy "strata" allowed.
    "/csp/tt.html": {
      csp: "require-trusted-types-for 'script'; trusted-types strata",
      html: page("Trusted Types", sdk(", replayEnabled: true"), `<input id="name"><script>document.getElementById("go").onclick = () => strata.track("csp_tt_click")</script>`),
    },
    // (b) Trusted Types required, "strata" not among the allowed names.
    "/csp/tt-denied.html": {
      csp: "require-trusted-types-for 'script'; trusted-types the-pages-own",
      html: page("Trusted Types without strata", sdk(", replayEnabled: true")),
    },
    // (c) A strict CSP as the README gives it: the SDK's host for scripts (the
    // page's inline script by nonce) and requests, no inline styles.
    "/csp/style.html": {
      csp: `default-src 'self'; script-src ${strataUrl} 'nonce-${NONCE}'; connect-src ${strataUrl}; style-src 'self'; img-src 'self'`,
      html: page("Strict CSP", sdk("", NONCE)),
    },
    // (d) fetch wrappers that throw, or reject.
    "/csp/fetch-sync.html": { html: page("Fetch throws", fetchWrapper("sync") + sdk()) },
    "/csp/fetch-reject.html": { html: page("Fetch rejects", fetchWrapper("reject") + sdk()) },
    // (e) Prototype.js 1.6's toJSON, and a replaced JSON.stringify.
    "/csp/prototype.html": { html: page("Prototype.js", `<script>${PROTOTYPE_JS}</script>` + sdk()) },
    "/csp/replaced.html": { html: page("Replaced JSON.stringify", `<script>JSON.stringify = function () { return "{}"; };</script>` + sdk()) },
    "/csp/plain.html": { html: "<!doctype html><title>Plain</title><p>No SDK here.</p>" },
  };
  const server = createServer((req, res) => {
    const p = pages[new URL(req.url, "http://x").pathname];
    if (!p) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", ...(p.csp ? { "Content-Security-Policy": p.csp } : {}) }).end(p.html);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const site = `http://127.0.0.1:${server.address().port}`;

  await call("PUT", "/api/v1/messages/settings", { autoRender: true });
  const campaign = (name, pathRegex, step) =>
    call("POST", "/api/v1/campaigns", {
      name,
      status: "active",
      trigger: { event: "$pageview" },
      pathRegex,
      variants: [{ key: "control", weight: 100, steps: [{ bodyFormat: "markdown", ...step }] }],
    });
  await campaign("CSP banner", "^/csp/tt(-denied)?\\.html$", { kind: "banner", placement: "bottom", title: "Trusted Types", body: "A banner under **Trusted Types**." });
  await campaign("CSP modal", "^/csp/style\\.html$", { kind: "modal", title: "Strict CSP", body: "A modal under `style-src 'self'`, with its **styles**." });

  /** open loads a path in a fresh context (a new user), with the watcher and the console recorded. */
  const open = async (path, viewport = { width: 1280, height: 800 }) => {
    const context = await browser.newContext({ viewport, reducedMotion: "reduce" });
    await context.addInitScript(watch);
    const pageErrors = [];
    const consoleLines = [];
    const answers = [];
    context.on("weberror", (e) => pageErrors.push(e.error().message));
    context.on("console", (m) => (m.type() == "error" || m.type() == "warning") && consoleLines.push(m.type() + ": " + m.text()));
    context.on("response", async (r) => {
      // The answer is recorded at once and its body when read, so that a
      // check made as soon as the server has the events still sees it.
      if (r.url().startsWith(strataUrl + "/e") && r.request().method() === "POST") answers.push({ status: r.status(), body: r.text().catch(() => "") });
    });
    const p = await context.newPage();
    await p.goto(site + path);
    /** seen returns what the watcher recorded, with the page errors Playwright saw. */
    const seen = async () => ({ ...(await p.evaluate(() => window.__csp)), pageErrors: [...pageErrors] });
    return { context, page: p, seen, consoleLines, answers };
  };
  /** clean throws unless nothing escaped into the page and no CSP directive was violated but `allowed`. */
  const clean = (s, allowed = []) => {
    const bad = [...s.errors, ...s.rejections, ...s.pageErrors].filter((x, i, a) => a.indexOf(x) == i);
    if (bad.length) throw new Error("escaped into the page: " + bad.join("; "));
    const v = s.violations.filter((x) => !allowed.some((a) => x.startsWith(a)));
    if (v.length) throw new Error("CSP violations: " + v.join("; "));
  };
  const count = async (event, path, want) => {
    const filters = [{ property: "path", operator: "eq", value: path }];
    const end = Date.now() + ARRIVAL_MS;
    let got = await api.count(event, filters);
    while (got < want && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      got = await api.count(event, filters);
    }
    if (got !== want) throw new Error(`${event} on ${path}: expected ${want}, got ${got}`);
  };
  const box = (p) => p.locator("strata-messages .box");

  // (a) require-trusted-types-for 'script'; trusted-types strata.
  {
    const { context, page: p, seen } = await open("/csp/tt.html");
    await check("Trusted Types with the policy strata: the message renders", () => box(p).waitFor({ state: "visible", timeout: SHOWN_MS }));
    await check("Trusted Types with the policy strata: the recorder loads", () =>
      p.waitForFunction(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")), null, { timeout: SHOWN_MS }),
    );
    await p.waitForTimeout(1000);
    await p.click("#name");
    await p.keyboard.type("typed under Trusted Types", { delay: 10 });
    await p.click("#go");
    const sessionId = await p.evaluate(() => JSON.parse(localStorage.getItem("strata_session")).id);
    const s = await seen();
    await p.goto(site + "/csp/plain.html"); // the last chunk, on page hide
    await check("Trusted Types with the policy strata: replay records the session", async () => {
      const end = Date.now() + ARRIVAL_MS;
      let chunks = [];
      while (!chunks.length && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 500));
        chunks = await call("GET", "/api/v1/replays/" + sessionId).then((r) => r.chunks || [], () => []);
      }
      if (!chunks.some((c) => c.index === 0)) throw new Error(`chunks of ${sessionId}: ${JSON.stringify(chunks.map((c) => c.index))}`);
    });
    await check("Trusted Types with the policy strata: the events arrive", () => count("csp_tt_click", "/csp/tt.html", 1));
    await check("Trusted Types with the policy strata: no error, rejection or CSP violation in the page", () => clean(s));
    await context.close();
  }

  // (b) require-trusted-types-for 'script'; trusted-types the-pages-own.
  {
    const { context, page: p, seen, consoleLines } = await open("/csp/tt-denied.html");
    await p.waitForTimeout(3000); // the config, and what would load after it
    await p.evaluate(() => strata.track("csp_denied_event"));
    const s = await seen();
    const scripts = await p.evaluate(() => [...document.scripts].map((x) => x.src).filter((x) => /messages|replay/.test(x)));
    const shown = await box(p).count();
    await p.goto(site + "/csp/plain.html");
    await check("Trusted Types without strata: events still arrive", async () => {
      await count("$pageview", "/csp/tt-denied.html", 1);
      await count("csp_denied_event", "/csp/tt-denied.html", 1);
    });
    await check("Trusted Types without strata: no error or unhandled rejection, only the refused policy name's violation", () => {
      clean(s, ["trusted-types "]);
      if (s.violations.length > 1) throw new Error("more than the policy's violation: " + s.violations.join("; "));
    });
    await check("Trusted Types without strata: no message or recorder, and one warning that says what to add", async () => {
      if (scripts.length || shown) throw new Error(`scripts ${scripts.join()}, ${shown} messages shown`);
      const warnings = consoleLines.filter((l) => l.startsWith("warning: strata"));
      if (warnings.length != 1 || !warnings[0].includes("trusted-types strata")) throw new Error(JSON.stringify(consoleLines));
    });
    await context.close();
  }

  // (c) style-src 'self' (no 'unsafe-inline'), in a strict CSP, at 1280 and 390 px.
  for (const width of [1280, 390]) {
    const { context, page: p, seen } = await open("/csp/style.html", { width, height: width > 800 ? 800 : 844 });
    await check(`strict CSP at ${width} px: the message renders with its styles`, async () => {
      await box(p).waitFor({ state: "visible", timeout: SHOWN_MS });
      const style = await box(p).evaluate((b) => {
        const cs = getComputedStyle(b);
        const h = getComputedStyle(b.querySelector("h2"));
        return { background: cs.backgroundColor, color: cs.color, radius: cs.borderTopLeftRadius, title: h.fontWeight };
      });
      const want = { background: "rgb(255, 255, 255)", color: "rgb(17, 24, 39)", radius: "10px", title: "600" };
      if (JSON.stringify(style) != JSON.stringify(want)) throw new Error(`computed ${JSON.stringify(style)}, want ${JSON.stringify(want)}`);
    });
    await p.screenshot({ path: join(artifacts, `csp-style-${width}.png`) });
    await check(`strict CSP at ${width} px: no error, rejection or CSP violation in the page`, async () => clean(await seen()));
    await context.close();
  }

  // (d) A fetch wrapper that throws, or rejects: the page-hide beacon delivers.
  for (const mode of ["sync", "reject"]) {
    const path = `/csp/fetch-${mode}.html`;
    const { context, page: p, seen } = await open(path);
    await p.evaluate(() => strata.track("csp_fetch_event"));
    await p.waitForTimeout(2500); // the config request and the queue's first send, both failing
    const s = await seen();
    await p.goto(site + "/csp/plain.html");
    await check(`a fetch wrapper that ${mode == "sync" ? "throws" : "rejects"}: the events arrive by beacon`, async () => {
      await count("$pageview", path, 1);
      await count("csp_fetch_event", path, 1);
    });
    await check(`a fetch wrapper that ${mode == "sync" ? "throws" : "rejects"}: no error or unhandled rejection in the page`, () => clean(s));
    await context.close();
  }

  // (e) Prototype.js 1.6's toJSON on the built-ins, and a replaced JSON.stringify: batches sent by fetch.
  for (const [path, what] of [["/csp/prototype.html", "Prototype.js's toJSON"], ["/csp/replaced.html", "a replaced JSON.stringify"]]) {
    const { context, page: p, seen, answers } = await open(path);
    await p.evaluate(() => strata.track("csp_order", { items: ["a", "b"], at: new Date(Date.UTC(2026, 0, 2)), plan: "pro" }));
    await check(`${what}: the server stores the events`, async () => {
      await count("$pageview", path, 1);
      await count("csp_order", path, 1);
      const filters = [
        { property: "path", operator: "eq", value: path },
        { property: "properties.plan", operator: "eq", value: "pro" },
        { property: "properties.at", operator: "eq", value: "2026-01-02T00:00:00.000Z" },
      ];
      const n = await api.count("csp_order", filters);
      if (n !== 1) throw new Error(`${n} csp_order events with their properties intact`);
    });
    await check(`${what}: every batch was accepted, none refused as invalid_envelope`, async () => {
      // The server may hold the events before the page has seen its answer.
      for (let waited = 0; !answers.length && waited < 10_000; waited += 100) await p.waitForTimeout(100);
      const seenAnswers = await Promise.all(answers.map(async (a) => ({ status: a.status, body: await a.body })));
      const bad = seenAnswers.filter((a) => a.status != 202 || a.body.includes('"rejected":[{'));
      if (!answers.length || bad.length) throw new Error(JSON.stringify(bad.length ? bad : "no answer"));
    });
    await check(`${what}: no error or unhandled rejection in the page`, async () => clean(await seen()));
    await context.close();
  }
}
