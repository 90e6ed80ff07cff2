// The Replays part of the dashboard's end-to-end test (docs/replay.md), on a
// server of its own: two sessions are recorded for real, each in a browser
// context of its own, by the SDK the server serves with replayEnabled on a
// page of another origin (loopback): the first user's with typing into an
// input, clicks, a masked and a blocked element, the second user's with one
// click. Once the API lists both, the /replays list must show the first one
// with the API's user, start, duration, pages and clicks; its player must
// replay the recording in rrweb's iframe (the page's heading shows, the
// masked and blocked texts and the typed value do not) above a timeline with
// a page view, clicks and the custom event; and deleting every replay of the
// first user, after a cancelled and then a confirmed dialog, must leave only
// the second user's session, in the list and in the API.
// Screenshots replays.png, replay.png and, at 390 px without sideways
// scrolling, replays-phone.png and replay-phone.png.
import { createServer } from "node:http";
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** What the recorded page holds or is given; only the heading may show in the player. */
const HEADING = "Checkout, recorded for the player";
const SECRETS = { masked: "Masked-Text-ABC123", blocked: "Blocked-Contents-QQQ", typed: "Typed-Value-e2e" };
const USER = "replay-user-e2e";
const OTHER = "other-user-e2e";

/**
 * replayPages runs the checks on a fresh server. `h` holds the harness's
 * check, startStrata and cleanups, the owner's credentials and the
 * artifacts folder.
 */
export async function replayPages(browser, h) {
  const strata = await h.startStrata({});
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h);
  // The dashboard's own API, with the session cookie.
  const call = (method, path) =>
    page.evaluate(
      async ([method, path]) => {
        const res = await fetch(path, { method });
        return { status: res.status, body: res.status === 204 ? null : await res.json() };
      },
      [method, path],
    );

  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const site = await startSite(h, strata.url, key);

  // Both sessions at once: each takes a chunk timer's 5 s or more.
  const [sessionId, otherId] = await Promise.all([
    record(browser, site, USER, async (p) => {
      await p.click("#name");
      await p.keyboard.type(SECRETS.typed, { delay: 20 });
      await p.click("#go");
      await p.mouse.move(100, 300, { steps: 5 });
      await p.click("h1");
      await p.mouse.wheel(0, 200);
      await p.waitForTimeout(1500);
    }),
    record(browser, site, OTHER, async (p) => {
      await p.click("#go");
      await p.waitForTimeout(1000);
    }),
  ]);

  let listed = [];
  await h.check("the API lists both recorded sessions once their chunks are stored", async () => {
    for (let i = 0; ; i++) {
      const r = await call("GET", `/api/v1/replays?product=${productId}`);
      listed = r.body.items ?? [];
      const ids = listed.map((s) => s.sessionId);
      const mine = listed.find((s) => s.sessionId === sessionId);
      if (ids.includes(otherId) && mine?.clicks >= 3) break;
      if (i === 40) throw new Error(`sessions ${JSON.stringify(listed)}, want ${sessionId} and ${otherId}`);
      await page.waitForTimeout(250);
    }
  });
  const session = listed.find((s) => s.sessionId === sessionId);
  await h.check("the first session has the user, one page, its clicks and a duration", async () => {
    if (session.distinctId !== USER || session.pages !== 1 || session.clicks < 3 || session.durationMs < 1000) throw new Error(JSON.stringify(session));
  });

  await page.locator("nav.sidebar").getByRole("link", { name: "Replays" }).click();
  await page.getByRole("heading", { name: "Replays", exact: true }).waitFor();
  const row = page.getByTestId("replays").locator("tbody tr").filter({ has: page.getByRole("link", { name: USER, exact: true }) });
  await h.check("the list shows the session with the API's user, start, duration, pages and clicks", async () => {
    await page.getByTestId("replays").waitFor();
    const rows = await page.getByTestId("replays").locator("tbody tr").count();
    if (rows !== 2) throw new Error(`${rows} rows, want 2`);
    const cells = (await row.locator("td").allTextContents()).map((c) => c.trim());
    const start = await row.locator("time").getAttribute("datetime");
    const want = [USER, null, duration(session.durationMs), String(session.pages), String(session.clicks), String(session.errors)];
    const differs = want.some((w, i) => w !== null && cells[i] !== w);
    if (differs || !/UTC$/.test(cells[1]) || Date.parse(start) !== Date.parse(session.start)) {
      throw new Error(`row ${cells.join(" | ")} (${start}), want ${want.join(" | ")} (${session.start})`);
    }
  });
  await shot("replays");
  await atPhoneWidth("the Replays list", "replays-phone");
  await h.check("the list's user links to the user's page, its start to the player", async () => {
    const user = await row.getByRole("link", { name: USER, exact: true }).getAttribute("href");
    const start = await row.locator("td").nth(1).getByRole("link").getAttribute("href");
    if (user !== `/users/${USER}?product=${productId}` || start !== `/replays/${sessionId}?product=${productId}`) throw new Error(`user ${user}, start ${start}`);
  });
  // The start opens the player (the user opens their page: test/e2e/users.mjs).
  await row.locator("td").nth(1).getByRole("link").click();
  const stage = page.getByTestId("replay-stage");
  const frame = page.frameLocator("[data-testid=replay-stage] iframe");
  await h.check("the player opens at the session's address with its facts", async () => {
    await page.getByRole("heading", { name: USER, exact: true }).waitFor();
    if (decodeURIComponent(new URL(page.url()).pathname) !== `/replays/${sessionId}`) throw new Error(page.url());
    const facts = await page.locator(".facts > div").evaluateAll((ds) => ds.map((d) => `${d.querySelector("dt").textContent}=${d.querySelector("dd").textContent}`));
    for (const f of [`Pages=${session.pages}`, `Clicks=${session.clicks}`, `Duration=${duration(session.durationMs)}`]) {
      if (!facts.includes(f)) throw new Error(facts.join(", "));
    }
  });
  await h.check("the list and the player load directly from their addresses", async () => {
    for (const path of [`/replays?product=${productId}`, new URL(page.url()).pathname + new URL(page.url()).search]) {
      const res = await page.request.get(strata.url + path, { headers: { Accept: "text/html" } });
      if (res.status() !== 200) throw new Error(`${path}: ${res.status()}`);
    }
    await page.reload();
    await page.getByRole("heading", { name: USER, exact: true }).waitFor();
  });
  await h.check("rrweb's player replays the recorded page: its heading shows in the player's iframe", async () => {
    await stage.locator("iframe").waitFor();
    await frame.getByRole("heading", { name: HEADING }).waitFor();
    const box = await stage.boundingBox();
    if (!box || box.width < 100 || box.height < 100) throw new Error(`the stage is ${JSON.stringify(box)}`);
  });
  await h.check("the player's iframe shows neither the masked text, nor the blocked one, nor the typed value", async () => {
    // Let the replay reach the typing (inactivity is skipped).
    await page.waitForTimeout(3000);
    const text = await frame.locator("body").evaluate((b) => b.textContent + " " + [...b.querySelectorAll("input")].map((i) => i.value).join(" "));
    if (!text.includes("Go")) throw new Error(`the replayed body lacks the button: ${text}`);
    for (const [name, secret] of Object.entries(SECRETS)) {
      if (text.includes(secret) || text.includes(secret.slice(0, 8))) throw new Error(`the ${name} text shows: ${text}`);
    }
    const masked = await frame.locator("#secret").textContent();
    if (!/^\*+$/.test(masked.trim())) throw new Error(`the masked element reads ${JSON.stringify(masked)}`);
  });
  await h.check("the timeline marks the page view, the clicks and the captured event", async () => {
    const timeline = page.getByTestId("replay-timeline");
    await timeline.locator("li.mark.click").first().waitFor();
    const pages = await timeline.locator("li.mark.page").allTextContents();
    if (pages.length !== 1 || !pages[0].includes(`${site.url}/replay.html`)) throw new Error(`page marks: ${pages.join(", ")}`);
    const clicks = await timeline.locator("li.mark.click").count();
    if (clicks < 3) throw new Error(`${clicks} click marks`);
    const events = await timeline.locator("li.mark.event").allTextContents();
    if (!events.some((e) => e.includes("replay_clicked"))) throw new Error(`event marks: ${events.join(", ")}`);
    // A mark seeks there; the heading is still on the replayed page.
    await timeline.locator("li.mark.click").last().getByRole("button").click();
    await frame.getByRole("heading", { name: HEADING }).waitFor();
  });
  await shot("replay");
  await atPhoneWidth("the player", "replay-phone");

  await page.locator(".crumbs").getByRole("link", { name: "Replays" }).click();
  await page.getByRole("search").getByLabel("User").fill(USER);
  await page.getByRole("search").getByRole("button", { name: "Show" }).click();
  await h.check("the user filter keeps the user's session", async () => {
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=replays] tbody tr").length === 1);
    await row.waitFor();
  });
  await h.check("deleting every replay of the user asks first, then removes them, and the API agrees", async () => {
    const button = page.getByRole("button", { name: `Delete all of ${USER}'s replays…` });
    const dialog = page.getByRole("alertdialog", { name: `Delete every replay of ${USER}?` });
    await button.click();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    if ((await call("GET", `/api/v1/replays/${sessionId}?product=${productId}`)).status !== 200) throw new Error("cancelling deleted the session");
    await button.click();
    await dialog.getByRole("button", { name: "Delete replays" }).click();
    await page.getByText(`Deleted 1 session of ${USER}.`).waitFor();
    await page.getByTestId("no-replays").waitFor();
    const gone = await call("GET", `/api/v1/replays/${sessionId}?product=${productId}`);
    if (gone.status !== 404) throw new Error(`the session answers ${gone.status}`);
    const left = (await call("GET", `/api/v1/replays?product=${productId}`)).body.items.map((s) => s.sessionId);
    if (left.join() !== otherId) throw new Error(`left ${left.join()}, want only ${otherId}`);
  });
  await h.check("the other user's session is still listed", async () => {
    await page.getByRole("search").getByLabel("User").fill("");
    await page.getByRole("search").getByRole("button", { name: "Show" }).click();
    await page.getByTestId("replays").getByRole("link", { name: OTHER, exact: true }).waitFor();
  });
  await h.check("the Replays pages ran without script errors or blocked content", async () => {
    noPageErrors();
  });
}

/**
 * record loads the recorded page as `user` in a browser context of its
 * own, waits for the recorder, runs `act`, then leaves for a page without
 * the SDK (the last chunk goes on page hide) and returns the session's id.
 */
export async function record(browser, site, user, act) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  try {
    const p = await context.newPage();
    await p.goto(`${site.url}/replay.html?user=${user}`);
    await p.waitForFunction(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")), null, { timeout: 10_000 });
    await p.waitForTimeout(1000);
    await act(p);
    const id = await p.evaluate(() => JSON.parse(localStorage.getItem("strata_session")).id);
    await p.goto(`${site.url}/plain.html`);
    await p.waitForTimeout(1000);
    return id;
  } finally {
    await context.close();
  }
}

/** startSite serves the recorded page and a page without the SDK on a loopback port of their own. */
export async function startSite(h, strataUrl, key) {
  const recorded = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Replay e2e</title>
    <script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
    <script>
      strata.init({ apiKey: ${JSON.stringify(key)}, replayEnabled: true });
      strata.identify(new URLSearchParams(location.search).get("user"));
    </script></head>
    <body><main><h1>${HEADING}</h1>
    <label>Name <input id="name" type="text"></label>
    <p id="secret" data-strata-mask>${SECRETS.masked}</p>
    <div id="blocked" data-strata-block style="width:200px;height:50px">${SECRETS.blocked}</div>
    <button id="go" onclick="strata.track('replay_clicked')">Go</button>
    <div style="height:1500px"></div>
    </main></body></html>`;
  const pages = {
    "/replay.html": recorded,
    "/plain.html": `<!doctype html><html><head><meta charset="utf-8"><title>Plain</title></head><body><p>No SDK here.</p></body></html>`,
  };
  const server = createServer((req, res) => {
    const body = pages[new URL(req.url, "http://x").pathname];
    if (body) res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  h.cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${server.address().port}` };
}

/** duration is the dashboard's (src/pages/Replays.tsx): 1 h 2 min, 3 min 4 s or 5 s. */
function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
