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
// the second user's session, in the list and in the API. A session made by
// hand, of more than the API's 4 MiB page, must come in pages and play
// whole: its timeline marks every page's clicks, events and error, and no
// inline handler of its page (onload, onclick, onmouseover, in its snapshot
// and its mutations) reaches the player's sandboxed iframe, where Chromium
// would log a blocked script for each.
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
  // Error tracking on, for the error's "Watch the session" (threePages).
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "true" });
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
    // Read through Playwright's own world, not evaluate() in the frame's:
    // a script of the test's run there makes the sandbox log a blocked
    // script once rrweb rebuilds the frame's document (a seek), which the
    // watch would take for the replay's.
    const inputs = frame.locator("input");
    const values = [];
    for (let i = 0; i < (await inputs.count()); i++) values.push(await inputs.nth(i).inputValue());
    const text = (await frame.locator("body").textContent()) + " " + values.join(" ");
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
  await longReplay(page, h, strata.url, productId, key, call);
  await threePages(page, h, strata.url, productId, key, call, shot, atPhoneWidth);
  await twoTabs(page, h, strata.url, productId, key, call);
  await h.check("the Replays pages ran without script errors or blocked content", async () => {
    noPageErrors();
  });
}

/**
 * A session made by hand, longer than a page of GET /api/v1/replays/{id}
 * (4 MiB of chunk data): its page has inline handlers (body onload, h1
 * onclick, button onmouseover; a paragraph with onclick added later), six
 * clicks, one in each chunk, five captured events and an error.
 */
const LONG = { session: "long-e2e-session", window: "long-e2e-window", user: "long-user-e2e", heading: "Inline handlers, replayed without them", pad: 900_000 };

/** longChunks returns the session's chunks: arrays of rrweb events, as JSON. */
function longChunks(t0) {
  const text = (id, textContent) => ({ type: 3, id, textContent });
  const el = (id, tagName, attributes, childNodes = []) => ({ type: 2, id, tagName, attributes, childNodes });
  const click = (ts) => ({ type: 3, timestamp: ts, data: { source: 2, type: 2, id: 8, x: 20, y: 20 } });
  const doc = {
    type: 0,
    id: 1,
    childNodes: [
      { type: 1, id: 2, name: "html", publicId: "", systemId: "" },
      el(3, "html", { lang: "en" }, [
        el(4, "head", {}, []),
        el(5, "body", { onload: "window.loaded = true" }, [
          el(6, "h1", { onclick: "alert(1)" }, [text(7, LONG.heading)]),
          el(8, "button", { id: "press", onmouseover: "window.over = true" }, [text(9, "Press")]),
        ]),
      ]),
    ],
  };
  const chunks = [
    [
      { type: 4, timestamp: t0, data: { href: "https://shop.example/inline", width: 1280, height: 720 } },
      { type: 2, timestamp: t0 + 10, data: { node: doc, initialOffset: { left: 0, top: 0 } } },
      click(t0 + 1000),
    ],
  ];
  for (let i = 1; i <= 5; i++) {
    const pad = "x".repeat(LONG.pad);
    chunks.push([{ type: 5, timestamp: t0 + i * 5000, data: { tag: `long_event_${i}`, payload: { pad } } }, click(t0 + i * 5000 + 500)]);
  }
  chunks.push([
    {
      type: 3,
      timestamp: t0 + 31_000,
      data: {
        source: 0,
        texts: [],
        removes: [],
        attributes: [{ id: 8, attributes: { onmouseover: "window.again = true", class: "pressed" } }],
        // rrweb adds each node of a mutation on its own, children after.
        adds: [
          { parentId: 5, nextId: null, node: el(20, "p", { id: "late", onclick: "alert(2)" }) },
          { parentId: 20, nextId: null, node: text(21, "Added later") },
        ],
      },
    },
    { type: 5, timestamp: t0 + 32_000, data: { tag: "$exception", payload: { message: "late failure" } } },
  ]);
  return chunks.map((events) => JSON.stringify(events));
}

/**
 * longReplay sends the hand-made session to /e a chunk a request, checks
 * that the API serves it in more than one page, then plays it: the
 * recorded page renders, the timeline marks every click, event and error
 * of every page, a mark seeks past the mutation that adds an element with
 * an inline handler, and no handler reaches the sandboxed iframe (the
 * section's last check finds no console message of a blocked script).
 */
async function longReplay(page, h, strataUrl, productId, key, call) {
  const chunks = longChunks(Date.now() - 120_000);
  await h.check("a session of more than 4 MiB of chunks is stored", async () => {
    for (const [i, data] of chunks.entries()) {
      const res = await fetch(`${strataUrl}/e`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": key },
        body: JSON.stringify({
          batch: [{ event_name: "$snapshot", distinct_id: LONG.user, properties: {
            $session_id: LONG.session, $window_id: LONG.window, $chunk_index: i, $snapshot_encoding: "json",
            $snapshot_data: Buffer.from(data).toString("base64") } }],
        }),
      });
      const body = await res.text();
      if (res.status !== 202 || !body.includes('"rejected":[]')) throw new Error(`chunk ${i}: ${res.status} ${body}`);
    }
  });
  await h.check("the API serves the session in pages, every chunk once", async () => {
    const seen = [];
    let pages = 0;
    for (let next = ""; next !== null; ) {
      const r = await call("GET", `/api/v1/replays/${LONG.session}?product=${productId}${next ? `&cursor=${encodeURIComponent(next)}` : ""}`);
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
      seen.push(...r.body.chunks.map((c) => c.index));
      next = r.body.next ?? null;
      if (++pages > 10) break;
    }
    if (pages < 2 || seen.join() !== "0,1,2,3,4,5,6") throw new Error(`${pages} pages of chunks ${seen.join()}`);
  });
  await page.goto(`${strataUrl}/replays/${LONG.session}?product=${productId}`);
  const frame = page.frameLocator("[data-testid=replay-stage] iframe");
  const timeline = page.getByTestId("replay-timeline");
  await h.check("the player replays a session longer than a page: the recorded page renders", async () => {
    await page.getByRole("heading", { name: LONG.user, exact: true }).waitFor();
    await frame.getByRole("heading", { name: LONG.heading }).waitFor();
    await frame.getByRole("button", { name: "Press" }).waitFor();
  });
  await h.check("the timeline marks the clicks, events and error of every page of the session", async () => {
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=replay-timeline] li.mark.click").length === 6, null, { timeout: 15_000 });
    const events = await timeline.locator("li.mark.event").allTextContents();
    const errors = await timeline.locator("li.mark.error").allTextContents();
    const wanted = [1, 2, 3, 4, 5].map((i) => `long_event_${i}`);
    if (wanted.some((w) => !events.some((e) => e.includes(w))) || events.length !== 5) throw new Error(`event marks: ${events.join(", ")}`);
    if (errors.length !== 1 || !errors[0].includes("late failure")) throw new Error(`error marks: ${errors.join(", ")}`);
  });
  await h.check("seeking to the last page's error replays the element it added, its handler dropped", async () => {
    await timeline.locator("li.mark.error").getByRole("button").click();
    await frame.locator("#late").waitFor();
    const late = [await frame.locator("#late").textContent(), await frame.locator("#late").getAttribute("onclick")];
    const press = [await frame.locator("#press").getAttribute("onmouseover"), await frame.locator("#press").getAttribute("class")];
    const body = (await frame.locator("body").getAttribute("onload")) ?? (await frame.locator("h1").getAttribute("onclick"));
    if (late[0] !== "Added later" || late[1] !== null || press[0] !== null || !press[1].split(" ").includes("pressed") || body !== null) {
      throw new Error(`the replayed page: #late ${JSON.stringify(late)}, #press ${JSON.stringify(press)}, body onload or h1 onclick ${body}`);
    }
  });
}

/**
 * A session of three page loads (windows), made by hand: each page's
 * heading names it, the pointer moves every 2 s (so that nothing is
 * skipped as inactive), the first page's chunks are padded past the API's
 * 4 MiB page (so that the second page load arrives in a later page of
 * chunks), the second adds #before-error 500 ms before an `$exception` at
 * 30 s and #after-error 3 s after it, and the third adds #the-end just
 * before its last event, at 62 s.
 */
const THREE = { session: "three-pages-e2e", user: "three-user-e2e", total: 62_000, error: 30_000, message: "replay-moment-error", pad: 900_000 };

/**
 * made returns builders of rrweb events at offsets from t0: a page load (a
 * meta event and a full snapshot whose heading is `heading`), pointer moves
 * every 2 s from `from` to `to`, and a paragraph added to the body, with id
 * and text `content`.
 */
function made(t0) {
  const text = (id, textContent) => ({ type: 3, id, textContent });
  const el = (id, tagName, attributes, childNodes = []) => ({ type: 2, id, tagName, attributes, childNodes });
  return {
    load: (heading, at, href = "https://shop.example/") => [
      { type: 4, timestamp: t0 + at, data: { href, width: 1280, height: 720 } },
      {
        type: 2,
        timestamp: t0 + at + 5,
        data: {
          node: { type: 0, id: 1, childNodes: [{ type: 1, id: 2, name: "html", publicId: "", systemId: "" }, el(3, "html", { lang: "en" }, [el(4, "head", {}), el(5, "body", {}, [el(6, "h1", {}, [text(7, heading)])])])] },
          initialOffset: { left: 0, top: 0 },
        },
      },
    ],
    moves: (from, to) => {
      const out = [];
      for (let at = from; at <= to; at += 2000) out.push({ type: 3, timestamp: t0 + at, data: { source: 1, positions: [{ x: 10 + (at % 300), y: 40, id: 6, timeOffset: 0 }] } });
      return out;
    },
    add: (at, id, content) => ({
      type: 3,
      timestamp: t0 + at,
      data: { source: 0, texts: [], removes: [], attributes: [], adds: [{ parentId: 5, nextId: null, node: el(id, "p", { id: content }) }, { parentId: id, nextId: null, node: text(id + 1, content) }] },
    }),
    // Padding: an SDK event the timeline does not mark, of `bytes` characters.
    pad: (at, bytes) => ({ type: 5, timestamp: t0 + at, data: { tag: "$pageview", payload: { pad: "x".repeat(bytes) } } }),
  };
}

/** byTime sorts rrweb events by time. */
const byTime = (events) => events.sort((a, b) => a.timestamp - b.timestamp);

/** threeChunks returns the session's chunks: [windowId, JSON array of rrweb events]. */
function threeChunks(t0) {
  const { load, moves, add, pad } = made(t0);
  const w2 = byTime([...moves(22_000, 40_000), add(THREE.error - 500, 20, "before-error"), { type: 5, timestamp: t0 + THREE.error, data: { tag: "$exception", payload: { message: THREE.message } } }, add(THREE.error + 3000, 22, "after-error"), { type: 3, timestamp: t0 + 41_000, data: { source: 1, positions: [{ x: 5, y: 5, id: 6, timeOffset: 0 }] } }]);
  const w3 = byTime([...moves(43_000, 59_000), add(61_000, 24, "the-end"), { type: 3, timestamp: t0 + THREE.total, data: { source: 1, positions: [{ x: 5, y: 5, id: 6, timeOffset: 0 }] } }]);
  return [
    ["three-w1", load("Step 1 of three", 0, "https://shop.example/step-1")],
    ...[1, 2, 3, 4, 5].map((i) => ["three-w1", [pad(100 * i, THREE.pad)]]),
    ["three-w1", moves(1000, 20_000)],
    ["three-w2", load("Step 2 of three", 21_000, "https://shop.example/step-2")],
    ["three-w2", w2],
    ["three-w3", load("Step 3 of three", 42_000, "https://shop.example/step-3")],
    ["three-w3", w3],
  ].map(([w, events]) => [w, JSON.stringify(events)]);
}

/**
 * Two tabs of one session open at once: tab A loads at 0 s, tab B at 8 s
 * (A is hidden, so its recorder pauses), A is shown again at 14 s with a
 * full snapshot, the pointer moves on it until 25 s and once more at 60 s,
 * the session's end (35 s without input between). A's last chunks are padded
 * past the API's 4 MiB page, so that B, whose first chunk comes after A's,
 * arrives in the second page, after the player has started on A.
 */
const TABS = { session: "two-tabs-e2e", user: "two-tabs-user-e2e", pad: 900_000, total: 60_000 };

/** tabsChunks returns the two tabs' chunks: [windowId, JSON array of rrweb events]. */
function tabsChunks(t0) {
  const { load, moves, add, pad } = made(t0);
  return [
    ["tab-a", byTime([...load("Tab A", 0), ...moves(1000, 7000), add(10_000, 30, "a-while-hidden"), ...load("Tab A, shown again", 14_000), ...moves(15_000, 25_000), ...moves(TABS.total, TABS.total)])],
    ...[1, 2, 3, 4, 5].map((i) => ["tab-a", [pad(25_000 + 100 * i, TABS.pad)]]),
    ["tab-b", byTime([...load("Tab B", 8000), ...moves(9000, 13_000)])],
  ].map(([w, events]) => [w, JSON.stringify(events)]);
}

/**
 * twoTabs sends the two tabs' session and plays it: at 8× until tab A is
 * shown again, then at 2×: the tabs show in the order the user saw them
 * (A, B, A again) though B's events arrive after all of A's, the 35 s
 * without input are skipped and the player says so, and it ends on A with
 * the session's length.
 */
async function twoTabs(page, h, strataUrl, productId, key, call) {
  const t0 = Date.now() - 5 * 60_000;
  await h.check("a session of two tabs open at once is stored, the second tab in the API's second page", async () => {
    const index = {};
    for (const [w, data] of tabsChunks(t0)) {
      index[w] = (index[w] ?? -1) + 1;
      const res = await fetch(`${strataUrl}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch: [{ event_name: "$snapshot", distinct_id: TABS.user, properties: {
        $session_id: TABS.session, $window_id: w, $chunk_index: index[w], $snapshot_encoding: "json", $snapshot_data: Buffer.from(data).toString("base64") } }] }) });
      if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
    }
    const r = await call("GET", `/api/v1/replays/${TABS.session}?product=${productId}`);
    if (r.status !== 200 || r.body.next === null || r.body.chunks.some((c) => c.windowId !== "tab-a")) throw new Error(`the first page: ${r.status}, windows ${r.body.chunks?.map((c) => c.windowId)}`);
  });
  const frame = page.frameLocator("[data-testid=replay-stage] iframe");
  const toggle = page.getByTestId("replay-toggle");
  const speed = (v) => page.getByRole("group", { name: "Speed" }).getByRole("button", { name: v }).click();
  await page.goto(`${strataUrl}/replays/${TABS.session}?product=${productId}`);
  await h.check("two tabs open at once play in the order they were shown, A, B, then A again, inactivity skipped, to the end", async () => {
    await page.getByRole("heading", { name: TABS.user, exact: true }).waitFor();
    await speed("8×");
    const seen = [];
    let skipped = false;
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      const text = await frame.locator("h1").textContent({ timeout: 2000 }).catch(() => "");
      if (text && seen.at(-1) !== text) {
        seen.push(text);
        // Slower once A is back, so that the stretch without input is skipped (at 8× it is under rrweb's 10 s × 8).
        if (text === "Tab A, shown again") await speed("2×");
      }
      if ((await page.getByTestId("replay-status").textContent()) === "Skipping inactivity…") skipped = true;
      if ((await toggle.textContent()) === "Play again") break;
      await page.waitForTimeout(100);
    }
    if (seen.join() !== "Tab A,Tab B,Tab A, shown again") throw new Error(`headings seen: ${seen.join(" → ")}`);
    if (!skipped) throw new Error("the player never said it skipped inactivity");
    if ((await toggle.textContent()) !== "Play again") throw new Error(`the player did not end: ${await toggle.textContent()}`);
    const [elapsed, total] = [await page.getByTestId("replay-elapsed").textContent(), await page.getByTestId("replay-total").textContent()];
    if (elapsed !== "1:00" || total !== "1:00") throw new Error(`elapsed ${elapsed} / ${total}, want 1:00 / 1:00`);
  });
  await h.check("at 12 s tab B is on screen without what tab A changed while hidden", async () => {
    // The seek bar moved as a user drags it: its value set, then an input event.
    await page.getByTestId("replay-seek").evaluate((el) => {
      el.value = "12000";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await page.waitForFunction(() => document.querySelector("[data-testid=replay-elapsed]")?.textContent === "0:12");
    const text = await frame.locator("h1").textContent();
    if (text !== "Tab B") throw new Error(`at 12 s the page is ${text}`);
    if ((await frame.locator("#a-while-hidden").count()) !== 0) throw new Error("tab A's change while hidden shows on tab B's page");
  });
}

/**
 * threePages sends the three-page session and an error of it, then plays
 * it: through the three page loads to the end without a click, at the
 * speeds chosen, with the session's elapsed and total time; space pauses
 * and plays; and the error's "Watch the session" opens the player at the
 * error's moment. Screenshots replay-session.png and, at 390 px,
 * replay-session-phone.png, of the player paused on the second page.
 */
async function threePages(page, h, strataUrl, productId, key, call, shot, atPhoneWidth) {
  const t0 = Date.now() - 10 * 60_000;
  const send = async (batch) => {
    const res = await fetch(`${strataUrl}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    const body = await res.text();
    if (res.status !== 202 || !body.includes('"rejected":[]')) throw new Error(`${res.status} ${body}`);
  };
  await h.check("a session of three page loads, and an error in its second, are stored", async () => {
    const index = {};
    for (const [w, data] of threeChunks(t0)) {
      index[w] = (index[w] ?? -1) + 1;
      await send([{ event_name: "$snapshot", distinct_id: THREE.user, properties: {
        $session_id: THREE.session, $window_id: w, $chunk_index: index[w], $snapshot_encoding: "json", $snapshot_data: Buffer.from(data).toString("base64") } }]);
    }
    await send([{ event_name: "$exception", distinct_id: THREE.user, url: "https://shop.example/step-2", timestamp: new Date(t0 + THREE.error).toISOString(), properties: {
      $session_id: THREE.session, $exception_type: "Error", $exception_message: THREE.message, $exception_source: "onerror",
      $exception_stack: `Error: ${THREE.message}\n    at pay (https://shop.example/app.js:1:10)` } }]);
    const r = await call("GET", `/api/v1/replays/${THREE.session}?product=${productId}`);
    if (r.status !== 200 || r.body.next === null || r.body.chunks.some((c) => c.windowId !== "three-w1")) throw new Error(`the first page: ${r.status}, next ${r.body.next}, windows ${r.body.chunks?.map((c) => c.windowId)}`);
    if (r.body.session.durationMs !== THREE.total) throw new Error(`duration ${r.body.session.durationMs}`);
  });

  const frame = page.frameLocator("[data-testid=replay-stage] iframe");
  const toggle = page.getByTestId("replay-toggle");
  const position = async () => Number(await page.getByTestId("replay-seek").inputValue());
  const heading = () => frame.locator("h1").textContent({ timeout: 2000 }).catch(() => "");
  await page.goto(`${strataUrl}/replays/${THREE.session}?product=${productId}`);
  await h.check("the player plays at once, with the session's whole length as its total", async () => {
    await page.getByRole("heading", { name: THREE.user, exact: true }).waitFor();
    await page.waitForFunction(() => document.querySelector("[data-testid=replay-toggle]")?.textContent === "Pause");
    const total = await page.getByTestId("replay-total").textContent();
    if (total !== "1:02") throw new Error(`total ${total}, want 1:02`);
    if ((await page.getByTestId("replay-seek").getAttribute("max")) !== String(THREE.total)) throw new Error("the seek bar does not span the session");
    if ((await page.getByRole("group", { name: "Speed" }).getByRole("button", { name: "1×" }).getAttribute("aria-pressed")) !== "true") throw new Error("1× is not the speed");
  });
  await h.check("at 1× the elapsed time follows the clock, at 8× eight times as fast", async () => {
    const a = await position();
    await page.waitForTimeout(2000);
    const b = await position();
    if (b - a < 1000 || b - a > 3500) throw new Error(`at 1× 2 s of the clock played ${b - a} ms`);
    await page.getByRole("group", { name: "Speed" }).getByRole("button", { name: "8×" }).click();
    const c = await position();
    await page.waitForTimeout(1000);
    const d = await position();
    if (d - c < 5000) throw new Error(`at 8× 1 s of the clock played ${d - c} ms`);
  });
  await h.check("it plays through the three page loads in order, to the end of the third, without a click", async () => {
    const seen = [];
    for (const until = Date.now() + 20_000; Date.now() < until; ) {
      const text = await heading();
      if (text && seen.at(-1) !== text) seen.push(text);
      if ((await toggle.textContent()) === "Play again") break;
      await page.waitForTimeout(100);
    }
    if (seen.join() !== "Step 1 of three,Step 2 of three,Step 3 of three") throw new Error(`headings seen: ${seen.join(" → ")}`);
    if ((await toggle.textContent()) !== "Play again") throw new Error(`the player did not end: ${await toggle.textContent()}`);
    await frame.locator("#the-end").waitFor();
    const [elapsed, total] = [await page.getByTestId("replay-elapsed").textContent(), await page.getByTestId("replay-total").textContent()];
    if (elapsed !== "1:02" || total !== "1:02") throw new Error(`elapsed ${elapsed} / ${total}, want 1:02 / 1:02`);
    const pages = await page.getByTestId("replay-timeline").locator("li.mark.page").count();
    if (pages !== 3) throw new Error(`${pages} page marks, want 3`);
  });
  await h.check("a page mark seeks to that page load, paused; space plays and pauses while the player has the focus", async () => {
    await page.getByTestId("replay-timeline").locator("li.mark.page").nth(1).getByRole("button").click();
    await page.waitForFunction(() => document.querySelector("[data-testid=replay-toggle]")?.textContent === "Play");
    if ((await heading()) !== "Step 2 of three") throw new Error(`the page mark shows ${await heading()}`);
    const at = await position();
    if (Math.abs(at - 21_000) > 100) throw new Error(`the page mark seeked to ${at} ms, want 21000`);
    await page.getByRole("group", { name: "Speed" }).getByRole("button", { name: "1×" }).click();
    await page.getByTestId("replay-player").focus();
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.querySelector("[data-testid=replay-toggle]")?.textContent === "Pause");
    await page.waitForTimeout(1200);
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.querySelector("[data-testid=replay-toggle]")?.textContent === "Play");
    const played = (await position()) - at;
    if (played < 700 || played > 4000) throw new Error(`played ${played} ms between two presses of space`);
    if ((await page.getByTestId("replay-elapsed").textContent()) !== "0:22") throw new Error(`elapsed ${await page.getByTestId("replay-elapsed").textContent()}`);
  });
  await shot("replay-session");
  await atPhoneWidth("the player paused mid-session", "replay-session-phone");

  await h.check("the error's Watch the session opens the player at the error's moment, on the state of that moment", async () => {
    let fingerprint = "";
    for (let i = 0; !fingerprint; i++) {
      const groups = (await call("GET", `/api/v1/errors?product=${productId}`)).body.groups ?? [];
      fingerprint = groups.find((g) => g.message === THREE.message)?.fingerprint ?? "";
      if (i === 50) throw new Error(`no group of the error: ${JSON.stringify(groups)}`);
      if (!fingerprint) await page.waitForTimeout(200);
    }
    await page.goto(`${strataUrl}/errors/${fingerprint}?product=${productId}`);
    const watch = page.getByTestId("occurrence").first().getByRole("link", { name: "Watch the session" });
    const href = await watch.getAttribute("href");
    if (href !== `/replays/${THREE.session}?product=${productId}&t=${t0 + THREE.error}`) throw new Error(`the link is ${href}`);
    await watch.click();
    await page.getByTestId("replay-moment").waitFor();
    await page.waitForFunction(() => document.querySelector("[data-testid=replay-toggle]")?.textContent === "Pause");
    // It starts 2 s before the error, plays to it: the element added 500 ms before the error shows, on the second page.
    const start = await position();
    if (start < THREE.error - 2500 || start > THREE.error) throw new Error(`started at ${start} ms, want about ${THREE.error - 2000}`);
    await frame.locator("#before-error").waitFor();
    const at = await position();
    if (Math.abs(at - THREE.error) > 2500) throw new Error(`the element shows at ${at} ms, want about ${THREE.error}`);
    if ((await heading()) !== "Step 2 of three") throw new Error(`the page is ${await heading()}`);
    if ((await frame.locator("#after-error").count()) !== 0 && at < THREE.error + 3000) throw new Error("the state after the error shows already");
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
