// End-to-end test of the dashboard: a real headless Chromium (driven by
// playwright-core) uses the dashboard that a real `strata serve` embeds and
// serves. It sets up the owner on a fresh data directory (refused without
// the setup token the server logs, done through the address it prints),
// signs in and out, moves around the pages, creates API keys and query
// tokens and uses them (the copied script tag ingests a page view from
// another origin), shows a test key's events with the Live/Test switch,
// checks that "Today" charts stop at now, that an unknown ?product= says
// so, the funnel's headings and, at 390 px, the Menu button, the skip
// link and tables that keep their actions on screen, checks that the
// Errors entry follows NEXT_PUBLIC_FEATURE_ERROR_TRACKING, reads the API
// reference (drawn from the served openapi.yaml) at desktop and phone
// widths, and, on servers of their own, runs the Flags and Experiments
// pages (a flag, its targeting on properties and on a cohort, and its
// audit trail, an experiment fed with exposures and conversions whose
// results page must show the counts the test keeps itself, and the
// sample-ratio banner), the sources on the Overview and
// Acquisition, the Errors pages (a release's sourcemap and exceptions
// sent to the server, the groups, a group's de-minified frames, resolving),
// and the Messages pages (a campaign made in the editor with its preview,
// its stats, the auto-render setting, a survey's results and CSV), and
// the Replays pages (sessions recorded by the SDK, the list, the player,
// deleting a user's replays) and a user's page (their events and replays,
// the links to the player, the player at 390 px and its coloured marks);
// the state of the query and list pages in their URLs, the saved funnel
// over the range on screen and annotation times in UTC (urls.mjs);
// a user's page after "Load older" and the Acquisition and Overview
// drill-downs in their URLs (url-views.mjs);
// shared links: a link made in Settings opened with no session, its
// password, revoking it (share.mjs);
// the Overview's sessions figures, their change against the previous
// period and the chart's overlay of it (overview.mjs);
// the visitors now on the Overview, refreshed without a reload (live.mjs);
// the Overview's Countries and Devices cards behind a trusted proxy (geo.mjs);
// goals added and deleted in Settings and the Overview's Goals card (goals.mjs);
// the product's time zone set in Settings, "Today" and a trend's day in it (timezone.mjs);
// click to filter on the Overview: chips, the URL, back and forward (filters.mjs);
// teammates: an invite made in Settings → Members accepted in a second browser, a viewer's
// hidden controls and refused write, the password form (members.mjs, E2E_ONLY=members);
// the products' data retention set in Settings, an old event dropped, a viewer's card (retention.mjs);
// the Privacy card: cookieless mode and privacy signals saved, a member's card (cookieless.mjs);
// the People data card: export, deletion, audit log, hidden from a viewer (privacy.mjs, E2E_ONLY=privacy);
// funnel steps with filters, an exclusion and a breakdown by browser (funnels.mjs, E2E_ONLY=funnels);
// a funnel step's dropped-off and converted users, paged, and the Time to convert and Over time views (funnelusers.mjs, E2E_ONLY=funnelusers);
// the Dashboards page and a board's shared link (boards.mjs, E2E_ONLY=boards);
// E2E_ONLY=name,name runs those parts alone (PARTS names them; main is the
// main run without error tracking); E2E_LANES=n runs n parts at once (2).
//
//   STRATA_BIN=/path/to/strata [CHROMIUM=/usr/bin/chromium] node test/e2e/run.mjs
//
// STRATA_BIN defaults to the repository's bin/strata (cd .. && go build -o
// bin/strata ./cmd/strata), which must embed this dashboard build (npm run
// build && npm run embed, then go build). Screenshots are kept in
// test/artifacts/ (git-ignored). Everything listens on 127.0.0.1, and every
// process started here is stopped by its own PID.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { harness } from "../../../e2e/browser/harness.mjs";
import { errorPages } from "./errors.mjs";
import { livePages } from "./live.mjs";
import { messagePages } from "./messages.mjs";
import { realBrowserErrors } from "./real-errors.mjs";
import { replayPages } from "./replays.mjs";
import { userPages } from "./users.mjs";
import { urlPages } from "./urls.mjs";
import { urlViewPages } from "./url-views.mjs";
import { setUpOwner } from "./owner.mjs";
import { noSideScroll, watchedPage } from "./page.mjs";
import { sourcePages } from "./sources.mjs";
import { sharePages } from "./share.mjs";
import { overviewPages } from "./overview.mjs";
import { geoPages } from "./geo.mjs";
import { goalPages } from "./goals.mjs";
import { privacyPages } from "./privacy.mjs";
import { timeZonePages } from "./timezone.mjs";
import { filterPages } from "./filters.mjs";
import { memberPages } from "./members.mjs";
import { retentionPages } from "./retention.mjs";
import { cookielessPages } from "./cookieless.mjs";
import { pathsPages } from "./paths.mjs";
import { peoplePages } from "./people.mjs";
import { cohortPages } from "./cohorts.mjs";
import { boardPages } from "./boards.mjs";
import { funnelPages } from "./funnels.mjs";
import { funnelUserPages } from "./funnelusers.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..", "..");
const repo = join(pkg, "..");
const STRATA_BIN = process.env.STRATA_BIN || join(repo, "bin", "strata");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ARTIFACTS = join(pkg, "test", "artifacts");
/**
 * The whole run is abandoned after this long: a guard against a hang, not a
 * target. Alone on 2 cores the run takes about 415 s in two lanes (about
 * 600 s in one); beside another suite's Chromium run it took 710 s.
 */
const DEADLINE_MS = 900_000;
const OWNER = { email: "owner@example.com", password: "correct horse battery" };

const { cleanups, check, startStrata, run } = harness({ strataBin: STRATA_BIN, deadlineMs: DEADLINE_MS, name: "dashboard" });
/** What each section of its own file is given. */
const h = { check, startStrata, cleanups, owner: OWNER, artifacts: ARTIFACTS, repo };

/**
 * The parts, in the order they run, each on a server of its own, so any
 * of them can run alone (E2E_ONLY) and beside another. `secs` is what
 * each took in a two-lane run on the quiet 2-core machine (its printed
 * "# part" times): the lanes are filled longest first.
 */
const PARTS = [
  { name: "main", secs: 94, run: withoutErrorTracking },
  { name: "errortracking", secs: 6, run: withErrorTracking },
  { name: "experiments", secs: 23, run: flagsAndExperiments },
  { name: "sources", secs: 11, run: sourcePages },
  { name: "overview", secs: 11, run: overviewPages },
  { name: "geo", secs: 8, run: geoPages },
  { name: "goals", secs: 14, run: goalPages },
  { name: "filters", secs: 19, run: filterPages },
  { name: "errors", secs: 11, run: errorPages },
  { name: "realerrors", secs: 9, run: realBrowserErrors },
  { name: "messages", secs: 19, run: messagePages },
  { name: "replays", secs: 67, run: replayPages },
  { name: "users", secs: 24, run: userPages },
  { name: "urls", secs: 48, run: urlPages },
  { name: "urlviews", secs: 56, run: urlViewPages },
  { name: "share", secs: 41, run: sharePages },
  { name: "live", secs: 30, run: livePages },
  { name: "timezone", secs: 7, run: timeZonePages },
  { name: "privacy", secs: 21, run: privacyPages },
  { name: "members", secs: 91, run: memberPages },
  { name: "retention", secs: 29, run: retentionPages },
  { name: "cookieless", secs: 31, run: cookielessPages },
  { name: "paths", secs: 13, run: pathsPages },
  { name: "people", secs: 25, run: peoplePages },
  { name: "cohorts", secs: 14, run: cohortPages },
  { name: "funnels", secs: 7, run: funnelPages },
  { name: "funnelusers", secs: 30, run: funnelUserPages },
  { name: "boards", secs: 13, run: boardPages },
];

/**
 * lanes deals the parts out to n lanes, longest first onto the lane with
 * the least so far, each lane keeping the parts' order.
 */
function lanes(parts, n) {
  const out = Array.from({ length: n }, () => ({ secs: 0, parts: [] }));
  for (const part of [...parts].sort((a, b) => b.secs - a.secs)) {
    const lane = out.reduce((a, b) => (b.secs < a.secs ? b : a));
    lane.secs += part.secs;
    lane.parts.push(part);
  }
  return out.map((lane) => lane.parts.sort((a, b) => parts.indexOf(a) - parts.indexOf(b)));
}

/**
 * main runs the parts, or those E2E_ONLY names (E2E_ONLY=replays,users), in
 * E2E_LANES lanes at once (2 by default: most of a part's time is spent
 * waiting on the browser and the server, so two share 2 cores well), one
 * browser between them, and prints how long each part took.
 */
async function main() {
  for (const [what, path] of [["STRATA_BIN", STRATA_BIN], ["CHROMIUM", CHROMIUM]]) {
    if (!existsSync(path)) throw new Error(`${what} ${path} does not exist`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  const only = (process.env.E2E_ONLY ?? "").split(",").filter(Boolean);
  const unknown = only.filter((name) => !PARTS.some((p) => p.name === name));
  if (unknown.length) throw new Error(`E2E_ONLY names no part ${unknown.join(", ")}; the parts are ${PARTS.map((p) => p.name).join(", ")}`);
  const chosen = only.length ? PARTS.filter((p) => only.includes(p.name)) : PARTS;
  const n = Math.max(1, Number(process.env.E2E_LANES ?? 2) || 1);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  cleanups.push(() => browser.close());
  const runLane = async (parts) => {
    for (const part of parts) {
      const began = Date.now();
      await part.run(browser, h);
      console.log(`# part ${part.name} took ${((Date.now() - began) / 1000).toFixed(1)} s`);
    }
  };
  // Every lane runs to its end before the run's clean-up stops the servers.
  const ended = await Promise.allSettled(lanes(chosen, n).map(runLane));
  const failed = ended.find((e) => e.status === "rejected");
  if (failed) throw failed.reason;
}

/** The main run, on a server started without the error-tracking flag. */
async function withoutErrorTracking(browser) {
  const strata = await startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  await check("the server embeds this dashboard build", async () => {
    const served = await (await fetch(strata.url + "/", { headers: { Accept: "text/html" } })).text();
    const built = readFileSync(join(repo, "internal", "dashboard", "dist", "index.html"), "utf8");
    if (served !== built) throw new Error("strata does not serve internal/dashboard/dist; rebuild it: npm run build && npm run embed && go build");
  });

  // The server's Content-Security-Policy must admit everything the app does.
  const { context, page, pageErrors, shot } = await watchedPage(browser, h, { width: 1280, height: 800 });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: strata.url });

  // 1. First run: setup asks for the owner; there is no default password,
  //    and only the address the server printed (with its setup token) can
  //    create the owner.
  await check("the server printed a setup address with a one-time token", async () => {
    if (!/^[0-9A-Za-z]{32}$/.test(strata.setupToken) || strata.setupUrl !== `${strata.url}/?setup_token=${strata.setupToken}`) {
      throw new Error(`setup token ${strata.setupToken}, URL ${strata.setupUrl}`);
    }
  });
  await page.goto(strata.url + "/");
  await check("opened without the token, setup asks for it and says where to find it", async () => {
    await page.getByRole("heading", { name: "Set up Strata" }).waitFor();
    await page.getByLabel("Setup token").waitFor();
    await page.getByText("printed an address to open").waitFor();
  });
  await check("setup without a token is refused", async () => {
    const r = await page.evaluate(async (o) => {
      const res = await fetch("/api/v1/dashboard/setup", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(o) });
      return { status: res.status, body: await res.json() };
    }, { email: "intruder@example.com", password: "another long password" });
    if (r.status !== 403 || r.body.error.code !== "invalid_setup_token") throw new Error(JSON.stringify(r));
  });
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
  await page.getByLabel("Repeat the password").fill(OWNER.password);
  await page.getByLabel("Setup token").fill("not-the-token");
  await page.getByRole("button", { name: "Create owner account" }).click();
  await check("setup with a wrong token shows the server's message and creates no owner", async () => {
    await page.getByRole("alert").filter({ hasText: "setup token is missing or wrong" }).waitFor();
    const config = await page.evaluate(async () => (await fetch("/api/v1/dashboard/config")).json());
    if (config.setupRequired !== true) throw new Error(JSON.stringify(config));
  });
  await shot("01-setup-token-refused");

  await page.goto(strata.setupUrl);
  await check("the printed address opens setup without asking for the token, and leaves the address bar", async () => {
    await page.getByRole("heading", { name: "Set up Strata" }).waitFor();
    if ((await page.getByLabel("Setup token").count()) !== 0) throw new Error("the form asks for the token");
    await page.waitForURL((u) => !u.searchParams.has("setup_token"));
  });
  await shot("01-setup");
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password", { exact: true }).fill("too short");
  await page.getByLabel("Repeat the password").fill("too short");
  await page.getByRole("button", { name: "Create owner account" }).click();
  await check("setup refuses a password under 10 characters", async () => {
    await page.getByRole("alert").filter({ hasText: "at least 10 characters" }).waitFor();
  });
  await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
  await page.getByLabel("Repeat the password").fill(OWNER.password);
  await page.getByRole("button", { name: "Create owner account" }).click();
  await check("setup signs the owner in", async () => {
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.getByText(OWNER.email).waitFor();
  });
  await check("the URL names the product", async () => {
    await page.waitForURL(/[?&]product=1\b/);
  });
  await check("the session cookie is HttpOnly and SameSite=Lax (not Secure over http)", async () => {
    const c = (await context.cookies(strata.url)).find((x) => x.name === "strata_session");
    if (!c) throw new Error("no strata_session cookie");
    if (!c.httpOnly || c.sameSite !== "Lax" || c.secure) throw new Error(JSON.stringify(c));
    if (c.expires * 1000 < Date.now() + 13 * 86_400_000) throw new Error(`the cookie expires too soon: ${new Date(c.expires * 1000)}`);
  });
  await check("a second setup is refused", async () => {
    const r = await page.evaluate(async (o) => {
      const res = await fetch("/api/v1/dashboard/setup", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(o) });
      return { status: res.status, body: await res.json() };
    }, { email: "intruder@example.com", password: "another long password" });
    if (r.status !== 409 || r.body.error.code !== "setup_complete") throw new Error(JSON.stringify(r));
  });
  await shot("02-overview");

  // 2. The layout: the sidebar without Errors, and /errors is a 404 page.
  await check("the sidebar lists the pages, without Errors", async () => {
    const got = await page.locator("nav.sidebar .nav-item").allTextContents();
    const want = ["Overview", "Trends", "Funnels", "Paths", "Retention", "Acquisition", "Dashboards", "Annotations", "Replays", "Users", "People", "Cohorts", "Messages", "Experiments", "Flags", "Settings", "API reference"];
    if (got.join() !== want.join()) throw new Error(`sidebar: ${got.join(", ")}`);
  });
  await check("/errors answers 404 and shows the not-found page", async () => {
    const res = await page.goto(strata.url + "/errors?product=1");
    if (res.status() !== 404) throw new Error(`status ${res.status()}`);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
  });
  await shot("03-errors-hidden");

  await apiReference(browser, context, page, strata, pageErrors);

  // 3. The date range lives in the URL and follows the sidebar links.
  await page.locator("nav.sidebar").getByRole("link", { name: "Trends" }).click();
  await page.getByRole("heading", { name: "Trends" }).waitFor();
  await page.getByRole("combobox", { name: "Date range", exact: true }).selectOption("7d");
  await check("a preset is kept in the URL", async () => {
    await page.waitForURL(/[?&]range=7d\b/);
  });
  await page.getByRole("combobox", { name: "Date range", exact: true }).selectOption("custom");
  await page.getByLabel("From", { exact: true }).fill("2026-10-01");
  await page.getByLabel("To", { exact: true }).fill("2026-10-15");
  await page.getByRole("button", { name: "Apply" }).click();
  await check("a custom range is kept in the URL", async () => {
    await page.waitForURL(/from=2026-10-01&to=2026-10-15/);
  });
  await check("the range follows the sidebar to another chart page", async () => {
    await page.locator("nav.sidebar").getByRole("link", { name: "Retention" }).click();
    await page.waitForURL(/\/retention\?.*from=2026-10-01&to=2026-10-15/);
    await page.getByText("2026-10-01 – 2026-10-15").waitFor();
  });
  await check("a shared link opens the same range in a new tab", async () => {
    const other = await context.newPage();
    await other.goto(page.url());
    if ((await other.getByRole("combobox", { name: "Date range", exact: true }).inputValue()) !== "custom") throw new Error("the picker is not on custom");
    if ((await other.getByLabel("From", { exact: true }).inputValue()) !== "2026-10-01") throw new Error("from differs");
    await other.close();
  });
  await shot("04-date-range");

  // 4. Settings: create and rename a product.
  await page.locator("nav.sidebar").getByRole("link", { name: "Settings" }).click();
  await page.getByRole("heading", { name: "Products" }).waitFor();
  await page.getByRole("textbox", { name: "New product" }).fill("E2E shop");
  await page.getByRole("button", { name: "Create product" }).click();
  await page.getByRole("heading", { name: "E2E shop" }).waitFor();
  const productId = Number(new URL(page.url()).pathname.split("/").pop());
  // Settings has two Name fields (the product's, a shared link's): the product's form.
  await page.getByRole("form", { name: "Rename product" }).getByRole("textbox", { name: "Name" }).fill("E2E web shop");
  await page.getByRole("button", { name: "Rename" }).click();
  await check("a product is created and renamed", async () => {
    await page.getByRole("heading", { name: "E2E web shop" }).waitFor();
    const names = await page.getByLabel("Product", { exact: true }).locator("option").allTextContents();
    if (!names.includes("E2E web shop")) throw new Error(`switcher: ${names}`);
  });

  // 5. An API key: shown once with a copy button and the script tag.
  await page.getByRole("button", { name: "Create live key" }).click();
  const key = (await page.getByTestId("secret-value").textContent()).trim();
  const snippet = (await page.getByTestId("snippet").textContent()).trim();
  await check("a new live key is shown once with the script-tag snippet", async () => {
    if (!/^st_live_[0-9A-Za-z]{32}$/.test(key)) throw new Error(`key ${key}`);
    const want = `<script src="${strata.url}/sdk/v1/sdk.min.js"></script><script>strata.init({apiKey: "${key}"})</script>`;
    if (snippet !== want) throw new Error(`snippet ${snippet}`);
  });
  await page.getByRole("button", { name: "Copy API key" }).click();
  await check("the copy button puts the key on the clipboard", async () => {
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    if (copied !== key) throw new Error(`clipboard: ${copied}`);
  });
  await shot("05-key-created");
  await page.getByRole("button", { name: "I have copied it" }).click();
  await check("the key is listed by prefix, kind, status and dates, and not shown again", async () => {
    const row = page.getByRole("table", { name: "API keys" }).locator("tbody tr").first();
    const cells = await row.locator("td").allTextContents();
    if (cells[0] !== key.slice(0, 12) + "…" || cells[1] !== "Live" || cells[2] !== "Active" || !/UTC/.test(cells[3]) || cells[4] !== "Never") {
      throw new Error(`row: ${cells.join(" | ")}`);
    }
    if ((await page.content()).includes(key)) throw new Error("the full key is still on the page");
  });

  // 6. Ingest with the key: the copied snippet on a page of another origin
  //    sends a page view, and POST /e takes an event.
  const site = await startSite(snippet);
  const visitor = await context.newPage();
  await visitor.goto(site.url + "/landing.html");
  await check("POST /e with the key is accepted", async () => {
    const r = await postEvent(strata.url, key, "e2e_signup");
    if (r.status !== 202 || r.body.accepted !== 1) throw new Error(JSON.stringify(r));
  });
  await check("the dashboard session reads the product's events (page view from the snippet, event from POST /e)", async () => {
    const count = (event) =>
      page.evaluate(
        async ([id, event]) => {
          const res = await fetch(`/api/v1/query/trend?product=${id}`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ series: [{ event, math: "total" }], interval: "day" }),
          });
          const body = await res.json();
          if (!res.ok) throw new Error(JSON.stringify(body));
          return body.series[0].data.reduce((n, p) => n + p.value, 0);
        },
        [productId, event],
      );
    const deadline = Date.now() + 20_000;
    let views = 0;
    let signups = 0;
    while (Date.now() < deadline && (views < 1 || signups < 1)) {
      [views, signups] = [await count("$pageview"), await count("e2e_signup")];
      if (views < 1 || signups < 1) await new Promise((r) => setTimeout(r, 250));
    }
    if (views !== 1 || signups !== 1) throw new Error(`$pageview ${views}, e2e_signup ${signups}`);
  });
  await visitor.close();
  await analysisPages(context, page, strata, key, productId);
  await testDataChartsAndPhone(page, strata, key, productId);
  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  await page.getByRole("heading", { name: "E2E web shop" }).waitFor();
  await check("another site's page cannot change anything with the owner's cookie (Origin check)", async () => {
    const other = await context.newPage();
    await other.goto(site.url + "/landing.html");
    await other.evaluate(async (u) => {
      await fetch(u + "/api/v1/products", { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body: '{"name":"evil"}' }).catch(() => {});
    }, strata.url);
    await other.close();
    const names = await page.evaluate(async () => (await (await fetch("/api/v1/products")).json()).items.map((p) => p.name));
    if (names.includes("evil")) throw new Error("a cross-site request created a product");
  });

  // 7. Disable, enable and revoke (with confirmation).
  const keyRow = () => page.getByRole("table", { name: "API keys" }).locator("tbody tr").first();
  await keyRow().getByRole("button", { name: "Disable" }).click();
  await check("a disabled key is refused with 403", async () => {
    await keyRow().getByText("Disabled").waitFor();
    const r = await postEvent(strata.url, key, "e2e_after_disable");
    if (r.status !== 403 || r.body.error.code !== "key_disabled") throw new Error(JSON.stringify(r));
  });
  await keyRow().getByRole("button", { name: "Enable" }).click();
  await keyRow().getByText("Active").waitFor();
  await keyRow().getByRole("button", { name: "Revoke" }).click();
  await shot("06-revoke-confirmation");
  await page.getByRole("button", { name: "Cancel" }).click();
  await check("cancelling the confirmation keeps the key", async () => {
    await keyRow().getByText("Active").waitFor();
    const r = await postEvent(strata.url, key, "e2e_after_cancel");
    if (r.status !== 202) throw new Error(JSON.stringify(r));
  });
  await keyRow().getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Revoke key" }).click();
  await check("a revoked key is refused with 401 and has no more actions", async () => {
    await keyRow().getByText("Revoked").waitFor();
    if ((await keyRow().getByRole("button").count()) !== 0) throw new Error("the revoked key still has buttons");
    const r = await postEvent(strata.url, key, "e2e_after_revoke");
    if (r.status !== 401 || r.body.error.code !== "invalid_api_key") throw new Error(JSON.stringify(r));
  });
  await page.getByRole("button", { name: "Create test key" }).click();
  await check("a test key can be created", async () => {
    const t = (await page.getByTestId("secret-value").textContent()).trim();
    if (!/^st_test_[0-9A-Za-z]{32}$/.test(t)) throw new Error(t);
  });
  await page.getByRole("button", { name: "I have copied it" }).click();

  // 8. A query token reads the product and is revoked likewise.
  await page.getByRole("button", { name: "Create query token" }).click();
  const token = (await page.getByTestId("secret-value").textContent()).trim();
  await check("a query token is shown once and reads the product", async () => {
    if (!/^st_tok_[0-9A-Za-z]{40}$/.test(token)) throw new Error(token);
    const r = await trend(strata.url, token);
    if (r.status !== 200) throw new Error(JSON.stringify(r));
  });
  await page.getByRole("button", { name: "I have copied it" }).click();
  await shot("07-keys-and-tokens");
  const tokenRow = page.getByRole("table", { name: "Query tokens" }).locator("tbody tr").first();
  await tokenRow.getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Revoke token" }).click();
  await check("a revoked query token is refused with 401", async () => {
    await tokenRow.getByText("Revoked").waitFor();
    const r = await trend(strata.url, token);
    if (r.status !== 401) throw new Error(JSON.stringify(r));
  });
  await check("the dashboard API sends no CORS headers", async () => {
    const res = await fetch(strata.url + "/api/v1/dashboard/config", { headers: { Origin: "https://elsewhere.example" } });
    if (res.headers.get("access-control-allow-origin")) throw new Error("Access-Control-Allow-Origin is set");
  });

  // 9. Sign out, sign in again (back on the same page), and the throttle.
  const settingsUrl = page.url();
  await page.getByRole("button", { name: "Sign out" }).click();
  await check("signing out shows the sign-in form and ends the session", async () => {
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    const status = await page.evaluate(async () => (await fetch("/api/v1/products")).status);
    if (status !== 401) throw new Error(`GET /api/v1/products after sign-out: ${status}`);
  });
  await shot("08-sign-in");
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await check("a wrong password is refused", async () => {
    await page.getByRole("alert").filter({ hasText: "not correct" }).waitFor();
  });
  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await check("signing in again returns to the same page", async () => {
    await page.getByRole("heading", { name: "E2E web shop" }).waitFor();
    if (page.url() !== settingsUrl) throw new Error(`${page.url()} != ${settingsUrl}`);
  });
  await check("guessing is throttled (429 after 5 tries a minute)", async () => {
    const statuses = await page.evaluate(async () => {
      const out = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch("/api/v1/session", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ email: "guess@example.com", password: "guess number " + i }),
        });
        out.push(res.status + (res.headers.get("Retry-After") ? "+retry" : ""));
      }
      return out;
    });
    if (statuses.join() !== "401,401,401,401,401,429+retry") throw new Error(statuses.join());
  });
  await check("no error or Content-Security-Policy violation on any page", async () => {
    if (pageErrors.length) throw new Error(pageErrors.join("; "));
  });
}

/**
 * The API reference, drawn from the /api/v1/openapi.yaml this server
 * serves: reached from the sidebar, a known operation (the funnel query)
 * with its credential, request and answer fields and error codes, the
 * filter, a direct load of an operation's link (200), and the same at
 * phone width without sideways scrolling. Screenshots api-reference.png
 * and api-reference-phone.png.
 */
async function apiReference(browser, context, page, strata, pageErrors) {
  const funnel = (p) => p.locator('details[data-operation="POST /api/v1/query/funnel"]');
  await page.locator("nav.sidebar").getByRole("link", { name: "API reference" }).click();
  await check("the sidebar's API reference opens the page, drawn from the served openapi.yaml", async () => {
    await page.getByRole("heading", { name: "API reference", level: 1 }).waitFor();
    await page.waitForURL(/\/api-reference\?product=1$/);
    await funnel(page).waitFor();
    const served = await (await fetch(strata.url + "/api/v1/openapi.yaml")).text();
    const title = /^  title: (.+)$/m.exec(served)[1];
    const version = /^  version: (.+)$/m.exec(served)[1];
    const meta = await page.locator(".api-meta").textContent();
    if (!meta.includes(`${title} ${version}`) || !/this server runs strata \S+/.test(meta)) throw new Error(`header: ${meta}`);
    const ops = await page.locator("details.api-op").count();
    const documented = (served.match(/^    (get|post|put|patch|delete|options):\s*$/gm) ?? []).length;
    if (ops !== documented) throw new Error(`${ops} operations on the page, ${documented} in openapi.yaml`);
  });
  await funnel(page).locator("> summary").click();
  await check("POST /api/v1/query/funnel shows its credential, request fields, answer fields and error codes", async () => {
    const op = funnel(page);
    await op.getByText("Counts the users who went through").waitFor();
    const auth = await op.locator(".api-auth").textContent();
    if (!auth.includes("Bearer")) throw new Error(`credential: ${auth}`);
    for (const name of ["steps", "dateFrom", "dateTo", "windowHours", "name", "count", "conversionPct"]) {
      await op.locator(`[data-field="${name}"]`).first().waitFor();
    }
    const window = await op.locator('[data-field="windowHours"] .api-field-head').textContent();
    if (!/integer or null/.test(window) || !/1–720 · default 24/.test(window)) throw new Error(`windowHours: ${window}`);
    const codes = await op.locator(".api-response").filter({ has: page.locator(".api-status", { hasText: /^401$/ }) }).locator(".api-codes code").allTextContents();
    if (codes.join() !== "missing_credentials,invalid_credentials,test_key_not_allowed,not_signed_in") throw new Error(`401 codes: ${codes}`);
    if ((await op.locator(".markdown table").count()) === 0) throw new Error("the code tables of the descriptions are not tables");
  });
  await page.getByRole("searchbox", { name: "Filter operations" }).fill("funnel");
  await check("the filter keeps the matching operations", async () => {
    const ops = await page.locator("details.api-op").evaluateAll((ds) => ds.map((d) => `${d.id} ${d.querySelector("summary").textContent}`));
    if (!ops.some((o) => o.startsWith("queryFunnel ")) || ops.some((o) => !/funnel/i.test(o))) throw new Error(`after filtering: ${ops.join("; ")}`);
  });
  await page.screenshot({ path: join(ARTIFACTS, "api-reference.png"), fullPage: true });

  await check("a direct load of an operation's link answers 200 and opens it", async () => {
    const other = await context.newPage();
    const res = await other.goto(strata.url + "/api-reference?product=1#queryFunnel");
    if (res.status() !== 200) throw new Error(`status ${res.status()}`);
    await funnel(other).locator('[data-field="windowHours"]').waitFor();
    if (!(await funnel(other).evaluate((d) => d.open))) throw new Error("the operation is folded");
    await other.close();
  });

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  phone.setDefaultTimeout(10_000);
  cleanups.push(() => phone.close());
  await phone.addCookies(await context.cookies(strata.url));
  phone.on("weberror", (e) => pageErrors.push(e.error().message));
  phone.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
  });
  const small = await phone.newPage();
  await small.goto(strata.url + "/api-reference?product=1#queryFunnel");
  await check("at 390 px the operation and its fields fit the screen, without sideways scrolling", async () => {
    await funnel(small).locator('[data-field="conversionPct"]').first().waitFor();
    await small.getByRole("searchbox", { name: "Filter operations" }).fill("funnel");
    const { scroll, width } = await small.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
    if (scroll > width) throw new Error(`the page is ${scroll} px wide on a ${width} px screen`);
    const box = await funnel(small).boundingBox();
    if (!box || box.x < 0 || box.x + box.width > 390) throw new Error(`the operation spans ${JSON.stringify(box)}`);
  });
  await small.screenshot({ path: join(ARTIFACTS, "api-reference-phone.png"), fullPage: true });
  await small.close();
}

/**
 * The analysis pages on seeded data: a funnel (numbers equal to the API's,
 * saved and re-run from the Saved list), a trend chart, annotations (created
 * on the page and by clicking the chart, drawn as markers on the trend, the
 * funnel's timeline strip and the retention cohorts, a query annotation only
 * on its saved funnel, exported as CSV, bulk-deleted), Acquisition's AI bots
 * and the Overview.
 */
async function analysisPages(context, page, strata, key, productId) {
  const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  // Minutes, or shorter ones just after midnight (UTC), so that all the
  // events fall on today: the Trends table's row for today must read 10.
  const minute = Math.max(1, Math.min(60_000, Math.floor((Date.now() % 86_400_000) / 95)));
  const base = Date.now() - 90 * minute;
  const at = (min) => new Date(base + min * minute).toISOString();
  const batch = [];
  // 10 users view a page, 6 of them click, 3 of those submit: 10 → 6 → 3.
  for (let u = 0; u < 10; u++) {
    const id = `funnel_user_${u}`;
    batch.push({ event_name: "page_viewed", distinct_id: id, timestamp: at(u), url: `https://shop.example/p/${u % 3}` });
    if (u < 6) batch.push({ event_name: "button_clicked", distinct_id: id, timestamp: at(u + 20) });
    if (u < 3) batch.push({ event_name: "form_submitted", distinct_id: id, timestamp: at(u + 40) });
  }
  batch.push({
    event_name: "$pageview", distinct_id: "bot", timestamp: at(50), url: "https://shop.example/docs",
    user_agent: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot",
  });
  await check("seeded events are accepted by POST /e", async () => {
    const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    const body = await res.json();
    if (res.status !== 202 || body.accepted !== batch.length) throw new Error(JSON.stringify(body));
  });
  const api = (path, body) =>
    page.evaluate(
      async ([path, body]) => {
        const res = await fetch(path, body ? { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) } : {});
        return res.json();
      },
      [path, body],
    );
  const stepCounts = () => page.getByTestId("funnel-result").getByTestId("step-count").allTextContents();

  // Funnels.
  await page.goto(`${strata.url}/funnels?product=${productId}`);
  await page.getByRole("heading", { name: "Funnels" }).waitFor();
  await check("the funnel starts from the placeholder steps and suggests the product's event names", async () => {
    const steps = await page.locator(".steps input").evaluateAll((els) => els.map((e) => e.value));
    if (steps.join() !== "page_viewed,button_clicked,form_submitted") throw new Error(steps.join());
    await page.waitForFunction(() => document.querySelectorAll("#funnel-events option").length >= 3);
    const names = await page.locator("#funnel-events option").evaluateAll((els) => els.map((e) => e.value));
    for (const n of ["page_viewed", "button_clicked", "form_submitted"]) if (!names.includes(n)) throw new Error(`suggestions: ${names}`);
  });
  await check("the funnel shows the numbers the API returns (10 → 6 → 3)", async () => {
    await page.getByTestId("funnel-result").waitFor();
    const want = await api(`/api/v1/query/funnel?product=${productId}`, { steps: ["page_viewed", "button_clicked", "form_submitted"], windowHours: 24 });
    const shown = await stepCounts();
    const conv = await page.getByTestId("funnel-result").getByTestId("step-conversion").allTextContents();
    if (shown.join() !== want.steps.map((s) => s.count).join() || shown.join() !== "10,6,3") throw new Error(`shown ${shown}, API ${JSON.stringify(want)}`);
    if (conv.join() !== "—,60%,50%") throw new Error(`conversion ${conv}`);
  });
  await page.getByLabel("Save this funnel as").fill("E2E signup funnel");
  await page.getByRole("button", { name: "Save funnel" }).click();
  await check("a saved funnel is listed and re-runs from the Saved list with the same numbers", async () => {
    await page.getByRole("list", { name: "Saved funnels" }).getByText("E2E signup funnel").waitFor();
    // Let the saved funnel's first run finish before reloading the page.
    await page.locator("#funnel-result-title", { hasText: "E2E signup funnel" }).waitFor();
    await page.waitForFunction(() => !document.querySelector(".funnel.busy") && !document.querySelector("[data-testid=skeleton]"));
    await page.reload();
    await page.getByRole("button", { name: "Run E2E signup funnel" }).click();
    await page.locator("#funnel-result-title", { hasText: "E2E signup funnel" }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=funnel-result] [data-testid=step-count]").length === 3);
    const shown = await stepCounts();
    if (shown.join() !== "10,6,3") throw new Error(shown.join());
  });
  await shot("10-funnel");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the funnel page fits the screen", async () => {
    await noSideScroll(page);
  });
  await shot("11-funnel-phone");
  await page.setViewportSize({ width: 1280, height: 800 });

  // Annotations page: create one.
  await page.locator("nav.sidebar").getByRole("link", { name: "Annotations" }).click();
  await page.getByRole("heading", { name: "Annotations", exact: true }).waitFor();
  await page.getByLabel("Label").fill("E2E deploy");
  await check("the label shows a live character count", async () => {
    if ((await page.getByTestId("label-count").textContent()) !== "10/120") throw new Error(await page.getByTestId("label-count").textContent());
  });
  await page.getByLabel("Description (optional)").fill("Release 1.2, with a comma");
  await page.locator(".swatch", { hasText: "Violet" }).click();
  await page.getByRole("button", { name: "Add annotation" }).click();
  await check("an annotation created on the page is listed", async () => {
    await page.getByTestId("annotation-row").filter({ hasText: "E2E deploy" }).waitFor();
  });

  // Trends: a chart with the marker; a click on the chart adds another.
  await page.locator("nav.sidebar").getByRole("link", { name: "Trends" }).click();
  await page.getByRole("heading", { name: "Trends" }).waitFor();
  await page.getByLabel("Series 1 event").fill("page_viewed");
  await page.getByRole("button", { name: "Run trend" }).click();
  await check("a trend chart is drawn with the seeded events", async () => {
    await page.locator(".chart-box canvas").waitFor();
    const want = await api(`/api/v1/query/trend?product=${productId}`, { series: [{ event: "page_viewed" }] });
    const total = want.series[0].data.reduce((n, p) => n + p.value, 0);
    if (total !== 10) throw new Error(`API total ${total}`);
    await page.locator(".data-table summary").click();
    await page.locator(".data-table td", { hasText: /^10$/ }).first().waitFor();
    const drawn = await page.locator(".chart-box canvas").evaluate((c) => c.width > 0 && c.height > 0);
    if (!drawn) throw new Error("the canvas is empty");
  });
  await check("the annotation is drawn as a marker in its colour, with its label on hover", async () => {
    const marker = page.getByTestId("annotation-marker").filter({ hasText: "E2E deploy" });
    await marker.waitFor();
    if ((await marker.getAttribute("data-color")) !== "violet") throw new Error(await marker.getAttribute("data-color"));
    await marker.hover();
    await marker.getByRole("tooltip").waitFor({ state: "visible" });
  });
  await shot("12-trend-with-annotation");
  await page.locator(".chart-box canvas").click({ position: { x: 200, y: 120 } });
  await page.getByRole("dialog", { name: "Add an annotation" }).getByLabel("Label").fill("Clicked on the chart");
  await page.getByRole("dialog").getByRole("button", { name: "Add annotation" }).click();
  await check("clicking a point on the chart creates an annotation there", async () => {
    await page.getByTestId("annotation-marker").filter({ hasText: "Clicked on the chart" }).waitFor();
  });

  // Funnels and Retention have no time axis: the funnel's timeline strip and
  // the retention cohort rows mark the workspace annotation; a query-scoped
  // one shows only with its saved funnel.
  await page.locator("nav.sidebar").getByRole("link", { name: "Funnels" }).click();
  await page.getByRole("heading", { name: "Funnels" }).waitFor();
  const stripMarker = (label) => page.getByTestId("annotation-strip").getByTestId("annotation-marker").filter({ hasText: label });
  await check("the funnel's timeline strip marks the workspace annotation in its colour, with its label on hover and focus", async () => {
    await page.getByTestId("funnel-result").waitFor();
    const marker = stripMarker("E2E deploy");
    await marker.waitFor();
    if ((await marker.getAttribute("data-color")) !== "violet") throw new Error(await marker.getAttribute("data-color"));
    await showsTooltipOnHoverAndFocus(page, marker);
    if (!/Release 1\.2, with a comma/.test(await marker.getByRole("tooltip").textContent())) throw new Error("no description");
  });
  await shot("17-funnel-annotations");
  await check("a query annotation shows on its saved funnel only, never on the ad-hoc funnel", async () => {
    const saved = (await api(`/api/v1/queries?product=${productId}`)).items.find((q) => q.name === "E2E signup funnel");
    const made = await api(`/api/v1/annotations?product=${productId}`, {
      date: new Date().toISOString(), label: "E2E funnel fix", color: "rose", scope: "query", queryId: saved.id,
    });
    if (made.scope !== "query") throw new Error(JSON.stringify(made));
    await page.reload();
    await page.getByTestId("funnel-result").waitFor();
    await stripMarker("E2E deploy").waitFor();
    if ((await stripMarker("E2E funnel fix").count()) !== 0) throw new Error("the ad-hoc funnel shows the query annotation");
    await page.getByRole("button", { name: "Run E2E signup funnel" }).click();
    await page.locator("#funnel-result-title", { hasText: "E2E signup funnel" }).waitFor();
    await stripMarker("E2E funnel fix").waitFor();
    await stripMarker("E2E deploy").waitFor();
  });

  await page.locator("nav.sidebar").getByRole("link", { name: "Retention" }).click();
  await page.getByRole("heading", { name: "Retention" }).waitFor();
  await check("the retention cohort of the annotation's week is marked, with its label on hover and focus", async () => {
    const marker = page.getByRole("table", { name: "Retention by cohort" }).getByTestId("period-annotations").filter({ hasText: "E2E deploy" });
    await marker.waitFor();
    if ((await marker.getByTestId("period-annotation").filter({ hasText: "E2E deploy" }).getAttribute("data-color")) !== "violet") throw new Error("not violet");
    if ((await marker.filter({ hasText: "E2E funnel fix" }).count()) !== 0) throw new Error("retention shows the query annotation");
    await showsTooltipOnHoverAndFocus(page, marker);
    // The cohort's row is the week holding the annotation.
    const row = (await marker.locator("xpath=ancestor::tr").locator("th").textContent()) ?? "";
    if (!/Week of/.test(row)) throw new Error(`row: ${row}`);
  });
  await shot("18-retention-annotations");

  // Export and bulk delete.
  await page.locator("nav.sidebar").getByRole("link", { name: "Annotations" }).click();
  await page.getByTestId("annotation-row").first().waitFor();
  await check("Export CSV downloads the annotations", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
    const text = readFileSync(await download.path(), "utf8");
    if (!/E2E deploy/.test(text) || !/Clicked on the chart/.test(text) || !/"Release 1\.2, with a comma"/.test(text)) throw new Error(text);
  });
  await page.getByLabel("Select all on this page").check();
  await page.getByRole("button", { name: "Delete selected (2)" }).click();
  await shot("13-bulk-delete-confirmation");
  await page.getByRole("alertdialog").getByRole("button", { name: "Delete" }).click();
  await check("bulk delete removes the selected annotations", async () => {
    await page.getByTestId("no-annotations").waitFor();
    const r = await api(`/api/v1/annotations?product=${productId}`);
    if (r.total !== 0) throw new Error(JSON.stringify(r));
  });

  // Acquisition and Overview.
  await page.locator("nav.sidebar").getByRole("link", { name: "Acquisition" }).click();
  await check("Acquisition lists the AI bot with its type and the page it fetched", async () => {
    const row = page.getByRole("table", { name: "AI bot activity" }).locator("tbody tr").first();
    await row.waitFor();
    const cells = await row.locator("td").allTextContents();
    if (cells[0] !== "GPTBot" || cells[1] !== "AI crawler (training/index)" || cells[2] !== "1") throw new Error(cells.join(" | "));
    await page.getByRole("table", { name: "Top pages accessed by AI" }).getByText("https://shop.example/docs").waitFor();
  });
  await check("Acquisition names the version of the AI-bot allowlist the server classifies with", async () => {
    const { allowlist } = await api(`/api/v1/query/bots?product=${productId}`);
    const line = await page.getByTestId("allowlist").textContent();
    if (!allowlist || !line.includes(`allowlist version ${allowlist.version}, reviewed ${allowlist.reviewed} (${allowlist.bots} bots)`))
      throw new Error(`${line} / ${JSON.stringify(allowlist)}`);
  });
  await shot("14-acquisition");
  await page.locator("nav.sidebar").getByRole("link", { name: "Overview" }).click();
  await check("the Overview counts visitors and page views from the API", async () => {
    await page.getByTestId("stat-pageviews").filter({ hasText: /^\d/ }).waitFor();
    const views = await page.getByTestId("stat-pageviews").textContent();
    const want = await api(`/api/v1/query/trend?product=${productId}`, { series: [{ event: "$pageview" }] });
    const total = want.series[0].data.reduce((n, p) => n + p.value, 0);
    if (views !== String(total)) throw new Error(`shown ${views}, API ${total}`);
    await page.getByRole("region", { name: "Top pages" }).locator("tbody tr").first().waitFor();
  });
  await shot("15-overview");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the Overview fits the screen (its chart follows the resize)", async () => {
    await noSideScroll(page);
  });
  await shot("16-overview-phone");
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * Test data, charts that stop at now, an unknown product, the funnel's
 * headings and the phone layout, at 1280 and 390 px: a test key made in
 * the UI sends events from a local Origin, the Live/Test switch shows them
 * (every query asking for env=test, under the banner) and live data again;
 * "Today" charts the hours gone by only; ?product=999 says the product is
 * not found; at 390 px the navigation is behind the Menu button (Escape,
 * focus), the skip link leads to the page, and the keys, tokens and
 * annotations tables keep their actions on screen without pushing the page
 * sideways.
 */
async function testDataChartsAndPhone(page, strata, liveKey, productId) {
  const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const phone = () => page.setViewportSize({ width: 390, height: 844 });
  const desktop = () => page.setViewportSize({ width: 1280, height: 800 });
  const api = (path, body) =>
    page.evaluate(
      async ([path, body]) => {
        const res = await fetch(path, body ? { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) } : {});
        return res.json();
      },
      [path, body],
    );
  const pageviews = async (env) => {
    const r = await api(`/api/v1/query/trend?product=${productId}${env === "test" ? "&env=test" : ""}`, { series: [{ event: "$pageview" }] });
    return r.series[0].data.reduce((n, p) => n + p.value, 0);
  };
  /** The sum of a data table's last column (the chart's first line when it has one). */
  const tableTotal = async () => {
    const details = page.locator(".data-table").first();
    if ((await details.getAttribute("open")) === null) await details.locator("summary").click();
    const cells = await details.locator("tbody tr td:nth-child(2)").allTextContents();
    return cells.reduce((n, c) => n + Number(c.replace(/\D/g, "")), 0);
  };
  // The query requests the page sends (the query endpoints and saved-query runs).
  const asked = [];
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/api/v1/query/") || /^\/api\/v1\/queries\/\d+\/run$/.test(u.pathname)) asked.push(u);
  });
  const envSwitch = page.getByRole("group", { name: "Data" });
  const banner = page.getByTestId("test-data-banner");

  // 1. A test key, made in the UI, sends events from a local page only.
  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  await page.getByRole("button", { name: "Create test key" }).click();
  const testKey = (await page.getByTestId("secret-value").textContent()).trim();
  await page.getByRole("button", { name: "I have copied it" }).click();
  const sendTest = (origin, batch) =>
    fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": testKey, Origin: origin }, body: JSON.stringify({ batch }) }).then(
      async (res) => ({ status: res.status, body: await res.json() }),
    );
  await check("a test key sends events from a local Origin, and is refused from another site", async () => {
    if (!/^st_test_[0-9A-Za-z]{32}$/.test(testKey)) throw new Error(testKey);
    const refused = await sendTest("https://shop.example", [{ event_name: "$pageview", distinct_id: "t" }]);
    if (refused.status !== 401 || refused.body.error.code !== "test_key_not_allowed") throw new Error(JSON.stringify(refused));
    const batch = [
      { event_name: "$pageview", distinct_id: "tester_1", url: "http://localhost:5173/try" },
      { event_name: "$pageview", distinct_id: "tester_2", url: "http://localhost:5173/try" },
      { event_name: "$pageview", distinct_id: "tester_2", url: "http://localhost:5173/cart" },
    ];
    const r = await sendTest("http://localhost:5173", batch);
    if (r.status !== 202 || r.body.accepted !== 3) throw new Error(JSON.stringify(r));
    const deadline = Date.now() + 20_000;
    while ((await pageviews("test")) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    if ((await pageviews("test")) !== 3) throw new Error(`test page views ${await pageviews("test")}`);
  });
  const live = await pageviews("live");

  // 2. The Live/Test switch, at 1280 px.
  await page.goto(`${strata.url}/trends?product=${productId}`);
  await page.getByRole("heading", { name: "Trends" }).waitFor();
  await check("the chart pages open on live data, without the test-data banner", async () => {
    if ((await envSwitch.getByRole("button", { name: "Live" }).getAttribute("aria-pressed")) !== "true") throw new Error("Live is not pressed");
    if ((await banner.count()) !== 0) throw new Error("a banner on live data");
    await page.locator(".chart-box canvas").waitFor();
    if ((await tableTotal()) !== live) throw new Error(`the chart shows ${await tableTotal()} page views, live has ${live}`);
  });
  asked.length = 0;
  await envSwitch.getByRole("button", { name: "Test" }).click();
  await check("Test shows the test key's events under a banner, keeps ?env=test in the URL and asks every query for env=test", async () => {
    await page.waitForURL(/[?&]env=test\b/);
    await banner.waitFor();
    if ((await banner.getAttribute("role")) !== "status" || !/Showing test data/.test(await banner.textContent())) throw new Error(await banner.textContent());
    await page.waitForFunction(() => !document.querySelector("[data-testid=skeleton]") && !document.querySelector(".time-chart.busy"));
    await page.waitForFunction(
      () => [...document.querySelectorAll(".data-table tbody tr td:nth-child(2)")].reduce((n, c) => n + Number(c.textContent.replace(/\D/g, "")), 0) === 3,
      null,
      { timeout: 5000 },
    ).catch(() => {});
    if ((await tableTotal()) !== 3) throw new Error(`the chart shows ${await tableTotal()} page views, the test key sent 3`);
    if (asked.length === 0 || asked.some((u) => u.searchParams.get("env") !== "test")) throw new Error(asked.map((u) => u.pathname + u.search).join(", "));
  });
  await shot("test-data");
  await page.locator("nav.sidebar").getByRole("link", { name: "Overview" }).click();
  await check("the choice follows the sidebar: the Overview counts the test page views, still under the banner", async () => {
    await page.waitForURL(/\/\?.*env=test/);
    await banner.waitFor();
    await page.getByTestId("stat-pageviews").filter({ hasText: /^3$/ }).waitFor();
    await page.getByTestId("stat-visitors").filter({ hasText: /^2$/ }).waitFor();
    await page.getByRole("region", { name: "Top pages" }).getByText("/cart").waitFor();
    if (asked.some((u) => u.searchParams.get("env") !== "test")) throw new Error(asked.map((u) => u.pathname + u.search).join(", "));
  });
  await phone();
  await check("at 390 px the banner and the switch fit the screen", async () => {
    await noSideScroll(page);
    await inView(page, banner, "test-data banner");
    await inView(page, envSwitch, "Live/Test switch");
  });
  await shot("test-data-phone");
  await desktop();
  await banner.getByRole("button", { name: "Show live data" }).click();
  await check("Show live data goes back to live numbers and drops ?env from the URL", async () => {
    await page.waitForURL((u) => !u.searchParams.has("env"));
    await page.getByTestId("stat-pageviews").filter({ hasText: new RegExp(`^${live}$`) }).waitFor();
    if ((await banner.count()) !== 0) throw new Error("the banner stayed");
  });

  // 3. "Today" stops at now: the hours to come are not drawn.
  await page.goto(`${strata.url}/?product=${productId}&range=today`);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await check("on Today the traffic chart and its table stop at the current hour; the API counts all 24", async () => {
    await page.locator(".chart-box canvas").waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const r = await api(`/api/v1/query/trend?product=${productId}`, { series: [{ event: "$pageview" }], interval: "hour", dateFrom: today, dateTo: today });
    if (r.series[0].data.length !== 24) throw new Error(`the API has ${r.series[0].data.length} hours`);
    const details = page.locator(".data-table").first();
    await details.locator("summary").click();
    const rows = await details.locator("tbody tr").count();
    const hour = new Date().getUTCHours();
    // The hour may turn during the check, the day too (23:59 drawn, 00:00 read).
    if (rows !== hour + 1 && rows !== ((hour + 23) % 24) + 1) throw new Error(`${rows} rows at ${hour}:xx UTC`);
    if (rows < 24) await page.getByTestId("future-hint").filter({ hasText: "stops at the current hour" }).waitFor();
  });
  await shot("chart-today");
  await phone();
  await check("at 390 px the Today chart fits the screen", async () => {
    await noSideScroll(page);
  });
  await shot("chart-today-phone");
  await desktop();

  // 4. A product the user cannot see.
  const notFound = async () => {
    asked.length = 0;
    await page.goto(`${strata.url}/trends?product=999&range=7d`);
    await page.getByRole("heading", { name: "Product not found" }).waitFor();
    await page.getByTestId("product-not-found").getByText("There is no product 999 that you can see").waitFor();
    if (!/[?&]product=999\b/.test(page.url())) throw new Error(`the URL changed to ${page.url()}`);
    if ((await page.getByLabel("Product", { exact: true }).inputValue()) !== "") throw new Error("the switcher shows a product");
    if (asked.length) throw new Error(`queries were sent: ${asked.map((u) => u.pathname + u.search).join(", ")}`);
  };
  await check("?product=999 says the product is not found instead of showing another product", notFound);
  await shot("product-not-found");
  await phone();
  await check("at 390 px too, and the products list is one tap away", async () => {
    await notFound();
    await noSideScroll(page);
    await page.getByRole("link", { name: "Go to the products list" }).click();
    await page.getByRole("heading", { name: "Products" }).waitFor();
    if (new URL(page.url()).searchParams.get("product") === "999") throw new Error(page.url());
  });
  await page.goto(`${strata.url}/trends?product=999&range=7d`);
  await page.getByRole("heading", { name: "Product not found" }).waitFor();
  await shot("product-not-found-phone");
  await desktop();
  await check("Open Default opens the same page of the first product", async () => {
    await page.getByRole("link", { name: "Open Default" }).click();
    await page.getByRole("heading", { name: "Trends" }).waitFor();
    await page.waitForURL(/\/trends\?product=1&range=7d$/);
  });

  // 5. The funnel's headings say what each number counts.
  await page.goto(`${strata.url}/funnels?product=${productId}`);
  const funnelHeadings = async () => {
    await page.getByTestId("funnel-result").waitFor();
    const heads = (await page.getByTestId("funnel-result").locator("thead th").allTextContents()).map((t) => t.trim());
    if (heads.join(" | ") !== "Step | Share of first step | Users | Converted from previous step") throw new Error(heads.join(" | "));
    const counts = await page.getByTestId("funnel-result").getByTestId("step-count").allTextContents();
    if (counts.join() !== "10,6,3") throw new Error(counts.join());
  };
  await check("the funnel's columns are Share of first step, Users and Converted from previous step", funnelHeadings);
  await page.getByTestId("funnel-result").screenshot({ path: join(ARTIFACTS, "funnel-headings.png") });
  await phone();
  await check("at 390 px the funnel keeps its headings and fits the screen, conversions included", async () => {
    await funnelHeadings();
    await noSideScroll(page);
    await inView(page, page.getByTestId("funnel-result").locator("thead th"), "funnel headings");
    await inView(page, page.getByTestId("funnel-result").getByTestId("step-conversion"), "conversion cells");
  });
  await shot("funnel-headings-phone");

  // 6. The phone layout (still 390 px).
  const menu = page.getByRole("button", { name: "Menu" });
  await page.goto(`${strata.url}/trends?product=${productId}`);
  await page.getByRole("heading", { name: "Trends" }).waitFor();
  await check("at 390 px the navigation is closed behind the Menu button, so the page starts near the top", async () => {
    if ((await menu.getAttribute("aria-expanded")) !== "false" || (await menu.getAttribute("aria-controls")) !== "nav-menu") throw new Error("not a closed menu button");
    if (await page.locator("#nav-menu").isVisible()) throw new Error("the entries show");
    const height = (await page.locator("nav.sidebar").boundingBox()).height;
    if (height > 64) throw new Error(`the navigation is ${height} px tall`);
    await noSideScroll(page);
  });
  await shot("phone-nav-closed");
  await check("the first Tab reaches the skip link, which moves focus to the page", async () => {
    await page.locator("body").focus();
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    if (!(await skip.evaluate((e) => e === document.activeElement))) throw new Error(`focus on ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 80))}`);
    await inView(page, skip, "skip link");
    await page.keyboard.press("Enter");
    if (!(await page.evaluate(() => document.activeElement?.id === "content" && document.activeElement.tagName === "MAIN"))) throw new Error("focus is not on the page");
    if (new URL(page.url()).hash) throw new Error(page.url());
  });
  await menu.click();
  await check("the Menu button opens the entries", async () => {
    if ((await menu.getAttribute("aria-expanded")) !== "true") throw new Error("aria-expanded is not true");
    await page.locator("nav.sidebar").getByRole("link", { name: "Annotations" }).waitFor();
    await inView(page, page.locator("nav.sidebar .nav-item"), "navigation entries");
  });
  await shot("phone-nav-open");
  await check("Escape closes the menu and gives focus back to the button", async () => {
    await page.locator("nav.sidebar").getByRole("link", { name: "Funnels" }).focus();
    await page.keyboard.press("Escape");
    if ((await menu.getAttribute("aria-expanded")) !== "false") throw new Error("still open");
    if (!(await menu.evaluate((e) => e === document.activeElement))) throw new Error("focus is not on the Menu button");
  });
  for (let i = 0; i < 3; i++) {
    await api(`/api/v1/annotations?product=${productId}`, {
      date: new Date(Date.now() - i * 3_600_000).toISOString(),
      label: `E2E release ${i + 1} with a label long enough to wrap`,
      description: "Deployed by the e2e run, with its description",
      color: "amber",
      scope: "workspace",
    });
  }
  await menu.click();
  await page.locator("nav.sidebar").getByRole("link", { name: "Annotations" }).click();
  await check("picking a page closes the menu and moves focus to the page", async () => {
    await page.getByRole("heading", { name: "Annotations", exact: true }).waitFor();
    if ((await menu.getAttribute("aria-expanded")) !== "false") throw new Error("still open");
    if (!(await page.evaluate(() => document.activeElement?.id === "content"))) throw new Error("focus is not on the page");
  });
  await check("at 390 px the annotations table scrolls in its box and every Delete stays on screen", async () => {
    await page.getByTestId("annotation-row").nth(2).waitFor();
    await noSideScroll(page);
    await inView(page, page.getByRole("table", { name: "Annotations" }).getByRole("button", { name: /^Delete / }), "Delete buttons");
  });
  await shot("phone-annotations");
  await page.getByRole("table", { name: "Annotations" }).getByRole("button", { name: /^Delete / }).first().click();
  await check("a Delete on the phone asks first, above the table", async () => {
    await page.getByRole("alertdialog").getByRole("button", { name: "Cancel" }).click();
  });
  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  await check("at 390 px the keys and tokens tables scroll in their box and Disable and Revoke stay on screen", async () => {
    await page.getByRole("table", { name: "API keys" }).waitFor();
    await page.getByRole("table", { name: "Query tokens" }).waitFor().catch(() => {});
    await noSideScroll(page);
    const keys = page.getByRole("table", { name: "API keys" });
    await inView(page, keys.getByRole("button", { name: "Disable" }), "Disable buttons");
    await inView(page, keys.getByRole("button", { name: "Revoke" }), "Revoke buttons");
    const scrolls = await keys.evaluate((t) => t.parentElement.classList.contains("table-scroll") && t.parentElement.scrollWidth > t.parentElement.clientWidth);
    if (!scrolls) throw new Error("the keys table is not wider than its box: nothing to scroll?");
  });
  await shot("phone-keys");
  await check("at 390 px no page of the main navigation pushes the page sideways", async () => {
    for (const path of ["/", "/trends", "/funnels", "/retention", "/acquisition", "/annotations", "/flags", "/experiments", "/settings/products"]) {
      await page.goto(`${strata.url}${path}?product=${productId}`);
      await page.locator("main h1").first().waitFor();
      await page.waitForFunction(() => !document.querySelector("[data-testid=skeleton]"), null, { timeout: 5000 }).catch(() => {});
      await noSideScroll(page).catch((e) => {
        throw new Error(`${path}: ${e.message}`);
      });
    }
  });
  await desktop();
  await check("at 1280 px the sidebar lists its entries and the Menu button is hidden", async () => {
    await page.locator("nav.sidebar").getByRole("link", { name: "Trends" }).waitFor();
    if (await menu.isVisible()) throw new Error("the Menu button shows on a wide screen");
  });
}

/** A second server with NEXT_PUBLIC_FEATURE_ERROR_TRACKING=true: Errors is listed and served. */
async function withErrorTracking(browser) {
  const strata = await startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "true" });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  cleanups.push(() => context.close());
  const page = await context.newPage();
  await page.goto(strata.setupUrl);
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
  await page.getByLabel("Repeat the password").fill(OWNER.password);
  await page.getByRole("button", { name: "Create owner account" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await check("with the flag on, the sidebar lists Errors after Annotations", async () => {
    const got = await page.locator("nav.sidebar .nav-item").allTextContents();
    if (got.indexOf("Errors") !== got.indexOf("Annotations") + 1) throw new Error(`sidebar: ${got.join(", ")}`);
  });
  await page.locator("nav.sidebar").getByRole("link", { name: "Errors" }).click();
  await check("with the flag on, /errors is a page (no error yet: how to turn error tracking on) and answers 200", async () => {
    await page.getByRole("heading", { name: "Errors", exact: true }).waitFor();
    await page.getByTestId("no-errors").getByText("errorTracking: true").waitFor();
    const res = await page.goto(strata.url + "/errors");
    if (res.status() !== 200) throw new Error(`status ${res.status()}`);
    await page.getByRole("heading", { name: "Errors", exact: true }).waitFor();
  });
  await page.screenshot({ path: join(ARTIFACTS, "09-errors-shown.png"), fullPage: true });
}

/**
 * Flags and experiments, on a server whose sample-ratio check runs every
 * second (STRATA_SRM_INTERVAL=1s): a flag created through the form (a 400
 * shown next to its field first), switched off from the list, with its
 * audit trail, then targeted by two conditions on its page (a refused one
 * shown next to its row first), saved, in the trail and served in
 * /api/v1/config, at 1280 and 390 px; an experiment created and started through the UI, fed
 * exposures and conversions with counts this test keeps, whose results
 * page must show exactly those counts; the running experiment's flag
 * refusing new weights; applying the winner; and a second experiment fed
 * a skewed split (300 control, 150 treatment on 50/50) that the check
 * pauses, which the page shows as the sample-ratio banner.
 */
async function flagsAndExperiments(browser) {
  const strata = await startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "", STRATA_SRM_INTERVAL: "1s" });
  const { page, shot, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 800 });
  const api = (method, path, body) =>
    page.evaluate(
      async ([method, path, body]) => {
        const res = await fetch(path, body === undefined ? { method } : { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
        return { status: res.status, body: res.status === 204 ? null : await res.json() };
      },
      [method, path, body],
    );
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // Set up the owner, which signs in, as the main run does.
  const { productId, key } = await setUpOwner(page, strata, OWNER);
  const ingest = async (batch, per = 400) => {
    for (let i = 0; i < batch.length; i += per) {
      const part = batch.slice(i, i + per);
      const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch: part }) });
      const body = await res.json();
      if (res.status !== 202 || body.accepted !== part.length) throw new Error(`POST /e: ${res.status} ${JSON.stringify(body)}`);
    }
  };

  // 1. A flag through the form.
  await page.locator("nav.sidebar").getByRole("link", { name: "Flags" }).click();
  await page.getByRole("heading", { name: "Flags", exact: true }).waitFor();
  await page.getByRole("button", { name: "New flag" }).click();
  const flagForm = page.getByRole("form", { name: "New flag" });
  await flagForm.getByLabel("Name").fill("E2E checkout banner");
  await flagForm.getByLabel("Description (optional)").fill("The green banner on /checkout");
  await flagForm.getByLabel("Enabled").check();
  await flagForm.getByLabel("Rollout (%)").fill("50");
  await flagForm.getByRole("button", { name: "Split into arms" }).click();
  await flagForm.getByLabel("Arm 2 weight (%)").fill("49");
  await flagForm.getByLabel("Arm 2 payload (JSON, optional)").fill('{"color": "green"}');
  await flagForm.getByRole("button", { name: "Create flag" }).click();
  await check("a flag the server refuses shows its message next to the arms", async () => {
    await flagForm.locator("fieldset.arms").getByRole("alert").filter({ hasText: "variants: the weights must sum to 100, not 99" }).waitFor();
  });
  await shot("flag-form");
  await flagForm.getByLabel("Arm 2 weight (%)").fill("50");
  await flagForm.getByRole("button", { name: "Create flag" }).click();
  const flagRow = page.getByTestId("flag-row").filter({ hasText: "e2e_checkout_banner" });
  await check("the new flag is listed with its key made from the name, rollout and arms", async () => {
    await flagRow.waitFor();
    const cells = (await flagRow.locator("td").allTextContents()).map((c) => c.trim());
    if (cells.slice(0, 5).join(" | ") !== "e2e_checkout_banner | E2E checkout banner | On | 50% | control 50% · treatment 50%") throw new Error(cells.join(" | "));
    const stored = (await api("GET", `/api/v1/flags?product=${productId}`)).body.items[0];
    if (JSON.stringify(stored.variants) !== JSON.stringify([{ key: "control", weight: 50 }, { key: "treatment", weight: 50, payload: { color: "green" } }])) {
      throw new Error(JSON.stringify(stored));
    }
  });
  await flagRow.getByRole("switch", { name: "Enabled: e2e_checkout_banner" }).click();
  await check("the switch in the list turns the flag off", async () => {
    await flagRow.getByText("Off", { exact: true }).waitFor();
    const stored = (await api("GET", `/api/v1/flags?product=${productId}`)).body.items[0];
    if (stored.enabled !== false) throw new Error(JSON.stringify(stored));
  });
  await flagRow.getByRole("link", { name: "e2e_checkout_banner", exact: true }).click();
  await page.getByRole("heading", { name: "E2E checkout banner" }).waitFor();
  await check("the flag's page shows its audit trail: who, when, each field before and after", async () => {
    const entries = page.getByTestId("audit-entry");
    await entries.nth(1).waitFor();
    const heads = await entries.locator(".audit-head").allTextContents();
    if (!/^Updated by owner@example\.com · .*UTC$/.test(heads[0]) || !/^Created by owner@example\.com/.test(heads[1])) throw new Error(heads.join(" / "));
    const rows = (n) => entries.nth(n).locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim()).join(" | ")));
    const updated = await rows(0);
    if (updated.join(" / ") !== "enabled | On | Off") throw new Error(updated.join(" / "));
    const created = await rows(1);
    for (const row of ["key | — | e2e_checkout_banner", "enabled | — | On", "rollout | — | 50%", 'variants | — | control 50% · treatment 50% {"color":"green"}']) {
      if (!created.includes(row)) throw new Error(`no "${row}" in ${created.join(" / ")}`);
    }
  });
  await shot("flag-audit");

  // 1b. Targeting: a condition added on the flag's page, saved, in the trail and served to the SDKs.
  const settings = page.getByRole("form", { name: "Change e2e_checkout_banner" });
  await settings.getByRole("button", { name: "Add condition" }).click();
  await settings.getByLabel("Condition 1 property").fill("plan");
  await settings.getByLabel("Condition 1 value").fill("pro");
  await settings.getByRole("button", { name: "Add condition" }).click();
  await settings.getByLabel("Condition 2 property").fill("seats");
  await settings.getByLabel("Condition 2 operator").selectOption("gt");
  await settings.getByLabel("Condition 2 value").fill("ten");
  await settings.getByRole("button", { name: "Save changes" }).click();
  await check("a condition the server refuses shows its message next to its row", async () => {
    await settings.getByTestId("flag-condition-row").nth(1).getByRole("alert").filter({ hasText: "conditions[1].value: must be a number for gt" }).waitFor();
  });
  await settings.getByLabel("Condition 2 value").fill("10");
  await settings.getByRole("button", { name: "Save changes" }).click();
  await check("the flag's conditions are saved, listed in the audit trail and served in /api/v1/config", async () => {
    await settings.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const want = [{ type: "trait", trait: "plan", op: "eq", value: "pro" }, { type: "trait", trait: "seats", op: "gt", value: "10" }];
    const stored = (await api("GET", `/api/v1/flags?product=${productId}`)).body.items[0];
    if (JSON.stringify(stored.conditions) !== JSON.stringify(want)) throw new Error(JSON.stringify(stored));
    const top = page.getByTestId("audit-entry").first().locator("tbody tr");
    await top.filter({ hasText: "plan equals pro · seats greater than 10" }).waitFor();
    const row = (await top.first().locator("th, td").allTextContents()).map((c) => c.trim()).join(" | ");
    if (row !== "conditions | Everyone | plan equals pro · seats greater than 10") throw new Error(row);
    const cfg = await (await fetch(`${strata.url}/api/v1/config?api_key=${key}&distinct_id=u1`)).json();
    const served = cfg.flags.find((f) => f.key === "e2e_checkout_banner");
    if (JSON.stringify(served?.conditions) !== JSON.stringify(want)) throw new Error(JSON.stringify(cfg));
  });

  // 1c. A cohort condition: a static cohort made through the API from a CSV
  // of ids, picked by name in the flag's form, stored by its id.
  const cohortName = "E2E beta testers";
  let cohortId = 0;
  await check("a static cohort is made through the API from a CSV of ids", async () => {
    const made = await api("POST", `/api/v1/products/${productId}/cohorts`, { name: cohortName, kind: "static" });
    if (made.status !== 201) throw new Error(`POST cohorts: ${JSON.stringify(made)}`);
    cohortId = made.body.id;
    const up = await page.evaluate(async (path) => {
      const res = await fetch(path, { method: "PUT", headers: { "Content-Type": "text/csv" }, body: "distinct_id\nu1\nu2\n" });
      return { status: res.status, body: await res.json() };
    }, `/api/v1/products/${productId}/cohorts/${cohortId}/members`);
    if (up.status !== 200 || up.body.size !== 2) throw new Error(`PUT members: ${JSON.stringify(up)}`);
  });
  // The flag's page reads the product's cohorts as it opens.
  await page.reload();
  await settings.getByRole("button", { name: "Add condition" }).click();
  await settings.getByLabel("Condition 3 kind").selectOption("cohort");
  await settings.getByLabel("Condition 3 operator").selectOption({ label: "In cohort" });
  await settings.getByLabel("Condition 3 cohort").selectOption({ label: cohortName });
  await settings.getByRole("button", { name: "Save changes" }).click();
  await check("a cohort condition picked by name is stored by the cohort's id, and the trail names the cohort", async () => {
    await settings.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const stored = (await api("GET", `/api/v1/flags?product=${productId}`)).body.items.find((f) => f.key === "e2e_checkout_banner");
    const c = stored?.conditions?.[2];
    if (stored?.conditions.length !== 3 || c.type !== "cohort" || c.cohortId !== cohortId || c.op !== "in" || c.value !== "") throw new Error(JSON.stringify(stored));
    const top = page.getByTestId("audit-entry").first().locator("tbody tr");
    await top.filter({ hasText: `in cohort "${cohortName}"` }).waitFor();
    const row = (await top.first().locator("th, td").allTextContents()).map((c) => c.trim()).join(" | ");
    const before = "plan equals pro · seats greater than 10";
    if (row !== `conditions | ${before} | ${before} · in cohort "${cohortName}"`) throw new Error(row);
  });
  await shot("flag-targeting");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the flag's conditions fit the page", async () => {
    await settings.getByTestId("flag-condition-row").first().scrollIntoViewIfNeeded();
    await noSideScroll(page);
    await inView(page, settings.getByTestId("flag-condition-row").locator("input, select, button"), "condition fields");
  });
  await shot("flag-targeting-phone");
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.locator("nav.sidebar").getByRole("link", { name: "Flags" }).click();
  await check("the list shows the flag's targeting, its cohort by name, and does not push the page sideways", async () => {
    const cell = page.getByTestId("flag-row").filter({ hasText: "e2e_checkout_banner" }).getByTestId("flag-targeting");
    await cell.filter({ hasText: cohortName }).waitFor();
    const text = (await cell.textContent()).trim();
    if (text !== `plan equals pro · seats greater than 10 · in cohort "${cohortName}"`) throw new Error(text);
    await noSideScroll(page);
  });
  await shot("flags");

  // 2. An experiment through the form, started from the list.
  await page.locator("nav.sidebar").getByRole("link", { name: "Experiments" }).click();
  await page.getByRole("heading", { name: "Experiments", exact: true }).waitFor();
  await page.getByRole("button", { name: "New experiment" }).click();
  const expForm = page.getByRole("form", { name: "New experiment" });
  await expForm.getByLabel("Name", { exact: true }).fill("E2E pricing test");
  await check("a new experiment starts from control and treatment at 50/50", async () => {
    const values = await expForm.getByTestId("arm-row").locator("input").evaluateAll((els) => els.map((e) => e.value));
    if (values.join() !== "control,50,treatment,50") throw new Error(values.join());
  });
  await expForm.getByRole("combobox", { name: "Primary metric" }).fill("purchase");
  await expForm.getByRole("button", { name: "Add secondary metric" }).click();
  await expForm.getByRole("combobox", { name: "Secondary metric 1" }).fill("add_to_cart");
  await shot("experiment-form");
  await expForm.getByRole("button", { name: "Create experiment" }).click();
  const expRow = page.getByTestId("experiment-row").filter({ hasText: "E2E pricing test" });
  await expRow.waitFor();
  await expRow.getByRole("button", { name: "Start E2E pricing test" }).click();
  await check("the experiment is listed with its flag, and Start makes it running", async () => {
    await expRow.getByText("Running").waitFor();
    const cells = (await expRow.locator("td").allTextContents()).map((c) => c.trim());
    if (cells[1] !== "e2e_pricing_test" || !/UTC$/.test(cells[3])) throw new Error(cells.join(" | "));
    await expRow.getByRole("button", { name: "Pause E2E pricing test" }).waitFor();
  });
  const experimentId = Number((await expRow.getByRole("link", { name: "E2E pricing test", exact: true }).getAttribute("href")).match(/\/experiments\/(\d+)/)[1]);

  // Exposures and conversions, counted here. Events without a timestamp
  // take the time they are received, in batch order, so every conversion
  // below comes after its user's exposure; early_* convert only before.
  const flagKey = "e2e_pricing_test";
  const exposure = (id, variant, experiment = experimentId, flag = flagKey) => ({
    event_name: "$exposure", distinct_id: id, properties: { flag, experiment_id: experiment, variant },
  });
  const want = { exposed: { control: 0, treatment: 0 }, purchase: { control: 0, treatment: 0 }, cart: { control: 0, treatment: 0 }, holdout: 0, excluded: 0, mixed: 0 };
  const before = [], exposures = [], after = [];
  for (let i = 0; i < 5; i++) {
    before.push({ event_name: "purchase", distinct_id: `early_${i}` });
    exposures.push(exposure(`early_${i}`, "control"));
    want.exposed.control++;
  }
  for (const [variant, n, buys, carts] of [["control", 120, (i) => i % 4 === 0, (i) => i % 2 === 0], ["treatment", 110, (i) => i % 5 < 2, (i) => i % 3 === 0]]) {
    for (let i = 0; i < n; i++) {
      const id = `${variant}_${i}`;
      exposures.push(exposure(id, variant));
      want.exposed[variant]++;
      if (buys(i)) {
        after.push({ event_name: "purchase", distinct_id: id });
        want.purchase[variant]++;
      }
      if (carts(i)) {
        after.push({ event_name: "add_to_cart", distinct_id: id });
        want.cart[variant]++;
      }
    }
  }
  for (let i = 0; i < 10; i++) {
    exposures.push(exposure(`held_${i}`, "holdout"));
    after.push({ event_name: "purchase", distinct_id: `held_${i}` });
    want.holdout++;
  }
  // Users outside the flag's rollout: the SDK exposes them as excluded.
  for (let i = 0; i < 7; i++) {
    exposures.push(exposure(`outside_${i}`, "excluded"));
    after.push({ event_name: "purchase", distinct_id: `outside_${i}` });
    want.excluded++;
  }
  for (let i = 0; i < 2; i++) {
    exposures.push(exposure(`both_${i}`, "control"), exposure(`both_${i}`, "treatment"));
    after.push({ event_name: "purchase", distinct_id: `both_${i}` });
    want.mixed++;
  }
  let served = null;
  await check("exposures and conversions are accepted, and the results endpoint counts them", async () => {
    await ingest(before);
    await ingest(exposures);
    await ingest(after);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      served = await api("GET", `/api/v1/experiments/${experimentId}/results?product=${productId}`);
      if (served.status !== 200) throw new Error(`results: ${served.status} ${JSON.stringify(served.body)}`);
      const arms = served.body.arms.map((a) => a.exposed).join();
      if (arms === `${want.exposed.control},${want.exposed.treatment}` && served.body.holdout === want.holdout && served.body.excluded === want.excluded) break;
      await sleep(250);
    }
    const r = served.body;
    const got = { exposed: r.arms.map((a) => a.exposed), purchase: r.metrics[0].arms.map((a) => a.converted), cart: r.metrics[1].arms.map((a) => a.converted), holdout: r.holdout, excluded: r.excluded, mixed: r.multipleArms };
    const wanted = { exposed: [want.exposed.control, want.exposed.treatment], purchase: [want.purchase.control, want.purchase.treatment], cart: [want.cart.control, want.cart.treatment], holdout: want.holdout, excluded: want.excluded, mixed: want.mixed };
    if (JSON.stringify(got) !== JSON.stringify(wanted)) throw new Error(`API ${JSON.stringify(got)}, want ${JSON.stringify(wanted)}`);
  });

  await expRow.getByRole("link", { name: "E2E pricing test", exact: true }).click();
  await page.getByRole("heading", { name: "E2E pricing test" }).waitFor();
  await check("an experiment's page loads directly from its address", async () => {
    const res = await page.request.get(page.url(), { headers: { Accept: "text/html" } });
    if (res.status() !== 200) throw new Error(`${page.url()}: ${res.status()}`);
    await page.reload();
    await page.getByRole("heading", { name: "E2E pricing test" }).waitFor();
  });
  const resultRow = (metric, variant) => page.getByRole("table", { name: `Results: ${metric}` }).locator(`tr[data-variant="${variant}"]`);
  await check("the results page shows the exposed and converted users the test sent, per metric and arm", async () => {
    await page.getByRole("table", { name: /^Results: / }).nth(1).waitFor();
    const metrics = await page.getByRole("table", { name: /^Results: / }).evaluateAll((ts) => ts.map((t) => t.getAttribute("aria-label").slice("Results: ".length)));
    if (metrics.length !== 2) throw new Error(`tables: ${metrics.join(", ")}`);
    for (const [m, counts] of [[metrics[0], want.purchase], [metrics[1], want.cart]]) {
      for (const variant of ["control", "treatment"]) {
        const cells = await resultRow(m, variant).locator("td").allTextContents();
        if (cells[0] !== String(want.exposed[variant]) || cells[1] !== String(counts[variant])) {
          throw new Error(`${m} ${variant}: ${cells.join(" | ")}; want ${want.exposed[variant]} exposed, ${counts[variant]} converted`);
        }
      }
    }
    if (!/purchase/.test(metrics[0]) || !/add_to_cart/.test(metrics[1])) throw new Error(metrics.join(", "));
    const control = await resultRow(metrics[0], "control").locator("td").allTextContents();
    if (control.slice(3).join() !== "—,—,—,—") throw new Error(`control compares with itself: ${control.join(" | ")}`);
    const treatment = await resultRow(metrics[0], "treatment").locator("td").allTextContents();
    const rate = `${((want.purchase.treatment / want.exposed.treatment) * 100).toFixed(1)}%`;
    if (treatment[2] !== rate || !/^[+\u2212]\d+\.\d pp \(/.test(treatment[3]) || !/^(\d\.\d{3}|< 0\.001)$/.test(treatment[5])) throw new Error(treatment.join(" | "));
    const left = await page.getByTestId("left-out").textContent();
    if (!left.includes(`${want.holdout} holdout users, ${want.excluded} users outside the flag's rollout and ${want.mixed} users exposed to more than one arm`)) throw new Error(left);
    if ((await page.getByTestId("too-early").count()) !== 0) throw new Error("too early with over 100 users an arm");
    const drawn = await page.locator(".chart-box canvas").evaluate((c) => c.width > 0 && c.height > 0);
    if (!drawn) throw new Error("the rate chart is empty");
  });
  await shot("experiment-results");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the results tables scroll inside their card, not the page", async () => {
    await noSideScroll(page);
    const scrolls = await page.locator(".results .table-scroll").evaluateAll((els) => els.some((e) => e.scrollWidth > e.clientWidth));
    if (!scrolls) throw new Error("no results table is wider than its card: nothing to scroll?");
  });
  await shot("experiment-results-phone");
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole("link", { name: "e2e_pricing_test", exact: true }).first().click();
  await page.getByRole("heading", { name: "E2E pricing test" }).waitFor();
  const armsForm = page.getByRole("form", { name: "Change e2e_pricing_test" });
  await armsForm.getByLabel("Arm 1 weight (%)").fill("60");
  await armsForm.getByLabel("Arm 2 weight (%)").fill("40");
  await armsForm.getByRole("button", { name: "Save changes" }).click();
  await check("a running experiment's flag refuses new weights, with the server's message", async () => {
    await armsForm.locator("fieldset.arms").getByRole("alert").filter({ hasText: "experiment is running: pause it" }).waitFor();
  });
  await page.goBack();
  await page.getByRole("heading", { name: "E2E pricing test" }).waitFor();
  await check("the winning arm preselected is the one that leads, treatment; the header shows the weights it runs with", async () => {
    // Treatment converts 40 % against control's 24 %; the choice follows the results once read.
    await page.getByRole("table", { name: /^Results: / }).first().waitFor();
    await page.getByTestId("arms").filter({ hasText: "control 50% · treatment 50%" }).waitFor();
    const chosen = await page.getByLabel("Winning arm").inputValue();
    if (chosen !== "treatment") throw new Error(`preselected ${chosen}`);
  });
  await page.getByRole("button", { name: "Apply winner" }).click();
  await check("the dialog warns that the arms are below the recommended sample, and says nothing of significance (p < 0.01)", async () => {
    const warning = page.getByRole("alertdialog").getByTestId("apply-warning");
    await warning.waitFor();
    const text = await warning.textContent();
    const recommended = served.body.recommendedPerArm;
    if (!text.includes(`Small sample: control has ${want.exposed.control} and treatment has ${want.exposed.treatment} exposed users, below the recommended ${recommended.toLocaleString("en-US")} per arm.`)) throw new Error(text);
    if (text.includes("Not significant")) throw new Error(text);
  });
  await shot("experiment-apply-warning");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the warning and both buttons of the dialog are on screen", async () => {
    await noSideScroll(page);
    for (const name of ["Cancel", "Apply treatment"]) {
      const box = await page.getByRole("alertdialog").getByRole("button", { name }).boundingBox();
      if (!box || box.x < 0 || box.x + box.width > 390) throw new Error(`${name}: ${JSON.stringify(box)}`);
    }
  });
  await shot("experiment-apply-warning-phone");
  await page.setViewportSize({ width: 1280, height: 800 });
  await check("applying the winner anyway completes the experiment, and the header shows the final arms", async () => {
    await page.getByRole("alertdialog").getByRole("heading", { name: "Apply treatment to every user?" }).waitFor();
    await page.getByRole("alertdialog").getByRole("button", { name: "Apply treatment" }).click();
    await page.getByTestId("experiment-status").filter({ hasText: "Completed" }).waitFor();
    await page.getByTestId("winner").filter({ hasText: "treatment applied to every user" }).waitFor();
    const flag = (await api("GET", `/api/v1/flags?product=${productId}`)).body.items.find((f) => f.key === flagKey);
    if (flag.rollout !== 100 || !flag.enabled || flag.variants.map((v) => v.weight).join() !== "0,100") throw new Error(JSON.stringify(flag));
    await page.getByTestId("arms").filter({ hasText: "control 0% · treatment 100%" }).waitFor();
    // And so it stays when the page is opened again.
    await page.reload();
    await page.getByTestId("arms").filter({ hasText: "control 0% · treatment 100%" }).waitFor();
    const label = await page.getByTestId("arms").evaluate((d) => d.previousElementSibling.textContent);
    if (label !== "Final arms") throw new Error(label);
  });
  await shot("experiment-completed");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the completed experiment's header fits", async () => {
    await noSideScroll(page);
    await page.getByTestId("arms").filter({ hasText: "control 0% · treatment 100%" }).waitFor();
  });
  await shot("experiment-completed-phone");
  await page.setViewportSize({ width: 1280, height: 800 });

  // 3. A skewed split: the check pauses the experiment, the page says so.
  await page.locator("nav.sidebar").getByRole("link", { name: "Experiments" }).click();
  await page.getByRole("button", { name: "New experiment" }).click();
  await page.getByRole("form", { name: "New experiment" }).getByLabel("Name", { exact: true }).fill("E2E skewed test");
  await page.getByRole("form", { name: "New experiment" }).getByRole("button", { name: "Create experiment" }).click();
  const skewRow = page.getByTestId("experiment-row").filter({ hasText: "E2E skewed test" });
  await skewRow.getByRole("button", { name: "Start E2E skewed test" }).click();
  await skewRow.getByText("Running").waitFor();
  const skewId = Number((await skewRow.getByRole("link", { name: "E2E skewed test", exact: true }).getAttribute("href")).match(/\/experiments\/(\d+)/)[1]);
  const skewed = [];
  for (const [variant, n] of [["control", 300], ["treatment", 150]]) {
    for (let i = 0; i < n; i++) skewed.push(exposure(`skew_${variant}_${i}`, variant, skewId, "e2e_skewed_test"));
  }
  for (let i = 0; i < 30; i++) skewed.push({ event_name: "order", distinct_id: `skew_control_${i}`, properties: { converted: 1 } });
  // One request (at most 500 events): the check runs every second, and one
  // between two requests would pause the experiment on the first's shares.
  if (skewed.length > 500) throw new Error(`${skewed.length} skewed events do not fit one request`);
  await ingest(skewed, 500);
  await skewRow.getByRole("link", { name: "E2E skewed test", exact: true }).click();
  await page.getByRole("heading", { name: "E2E skewed test" }).waitFor();
  await check("300 control against 150 treatment on 50/50: the check pauses it and the page shows the sample-ratio banner", async () => {
    const banner = page.getByTestId("srm-banner");
    const deadline = Date.now() + 20_000;
    while (!(await banner.isVisible()) && Date.now() < deadline) {
      await sleep(1000);
      await page.reload();
      await page.getByRole("heading", { name: "E2E skewed test" }).waitFor();
    }
    if ((await banner.getAttribute("role")) !== "alert") throw new Error("the banner is not an alert");
    const rows = await banner.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim()).join(" ")));
    if (rows.join(" / ") !== "control 300 66.7% 50.0% / treatment 150 33.3% 50.0%") throw new Error(rows.join(" / "));
    await page.getByTestId("experiment-status").filter({ hasText: "Paused (sample ratio)" }).waitFor();
    await page.getByRole("button", { name: "Resume" }).waitFor();
  });
  await shot("experiment-srm");

  await page.locator("nav.sidebar").getByRole("link", { name: "Experiments" }).click();
  await check("the list shows each experiment's status", async () => {
    await page.getByTestId("experiment-row").filter({ hasText: "E2E skewed test" }).getByText("Paused (sample ratio)").waitFor();
    await page.getByTestId("experiment-row").filter({ hasText: "E2E pricing test" }).getByText("Completed").waitFor();
  });
  await shot("experiments");
  await page.setViewportSize({ width: 390, height: 844 });
  await check("at 390 px the experiments and flags lists do not push the page sideways", async () => {
    await noSideScroll(page);
    // The sidebar's entries are behind the Menu button at this width.
    await page.getByRole("button", { name: "Menu" }).click();
    await page.locator("nav.sidebar").getByRole("link", { name: "Flags" }).click();
    await page.getByTestId("flag-row").first().waitFor();
    await noSideScroll(page);
  });
  await shot("flags-phone");
  await page.setViewportSize({ width: 1280, height: 800 });
  await check("no error or Content-Security-Policy violation on the flags and experiments pages", noPageErrors);
}

/** inView fails unless every element the locator finds lies inside the viewport's width. */
async function inView(page, locator, what) {
  const width = page.viewportSize().width;
  const boxes = await locator.evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => [Math.round(r.left), Math.round(r.right)]));
  if (boxes.length === 0) throw new Error(`no ${what}`);
  const out = boxes.filter(([l, r]) => l < 0 || r > width);
  if (out.length) throw new Error(`${out.length} of ${boxes.length} ${what} reach past the ${width} px viewport: ${JSON.stringify(out)}`);
}

/** postEvent sends one event to /e with the key. */
// showsTooltipOnHoverAndFocus waits for marker's tooltip to show on hover,
// hide when the pointer leaves, and show again on keyboard focus.
async function showsTooltipOnHoverAndFocus(page, marker) {
  const tooltip = marker.getByRole("tooltip");
  await marker.hover();
  await tooltip.waitFor({ state: "visible" });
  await page.mouse.move(0, 0);
  await tooltip.waitFor({ state: "hidden" });
  await marker.focus();
  await tooltip.waitFor({ state: "visible" });
}

async function postEvent(base, key, event) {
  const res = await fetch(base + "/e", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({ batch: [{ event_name: event, distinct_id: "e2e_user" }] }),
  });
  return { status: res.status, body: await res.json() };
}

/** trend runs a trend query with a bearer credential. */
async function trend(base, credential) {
  const res = await fetch(base + "/api/v1/query/trend", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + credential },
    body: JSON.stringify({ series: [{ event: "$pageview", math: "total" }], interval: "day" }),
  });
  return { status: res.status, body: await res.json() };
}

/** startSite serves a customer's page with the snippet copied from the dashboard, on another port. */
async function startSite(snippet) {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Landing</title>${snippet}</head><body><p>Welcome.</p></body></html>`;
  const server = createServer((req, res) => {
    if (new URL(req.url, "http://x").pathname === "/landing.html") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(html);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${server.address().port}` };
}

await run(main);
