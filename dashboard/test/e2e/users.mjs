// The user's page of the dashboard's end-to-end test (docs/dashboard.md,
// "A user's page"), on a server of its own: one session of a user is
// recorded for real by the SDK the server serves (replayEnabled, a page of
// another origin, as test/e2e/replays.mjs does), and 105 older events of
// the same user are sent by a server with the live key, without a session.
// From the Replays list the user's name opens their page, which must show
// the recorded session and the API's events newest first (the SDK's with a
// Replay link, the server's without), 100 then, after "Load older", all;
// the Replay link must load the player anew (a new document, with the
// player's policy) on that session. The player must fit the recorded page
// into a 390 px viewport (its scaled iframe no wider than the viewport and
// the stage, whether the window shrinks under it or it is opened there),
// and its timeline's marks must each have a colour of their own, the
// colour of their legend swatch, none black. /users finds the user by id,
// and /users and a user's page load directly. Screenshots person.png,
// person-phone.png, users.png, replay-fit.png and replay-fit-phone.png.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";
import { record, startSite } from "./replays.mjs";

const USER = "person-e2e/ü";
/** How many server-sent events: more than the page of 100 the dashboard loads at once. */
const SERVER_EVENTS = 105;

/**
 * userPages runs the checks on a fresh server. `h` holds the harness's
 * check, startStrata and cleanups, the owner's credentials and the
 * artifacts folder.
 */
export async function userPages(browser, h) {
  const strata = await h.startStrata({});
  const { page, shot, noSidewaysScroll, noPageErrors } = await watchedPage(browser, h);
  const call = (path) =>
    page.evaluate(async (path) => {
      const res = await fetch(path);
      return { status: res.status, body: await res.json() };
    }, path);

  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const site = await startSite(h, strata.url, key);
  const sessionId = await record(browser, site, USER, async (p) => {
    await p.click("#go");
    await p.mouse.move(200, 300, { steps: 5 });
    await p.click("h1");
    await p.waitForTimeout(1500);
  });
  // Older events of the user, from a server: no session, hence no replay.
  const base = Date.parse("2026-01-05T08:00:00Z");
  const batch = Array.from({ length: SERVER_EVENTS }, (_, i) => ({
    event_name: i === 0 ? "first_server_event" : "server_event",
    distinct_id: USER,
    timestamp: new Date(base + i * 60_000).toISOString(),
    properties: { n: i },
  }));
  await h.check("a server's events of the user are accepted", async () => {
    const res = await fetch(`${strata.url}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
  });

  // The API's view, which the page must show.
  const eventsPath = `/api/v1/users/${encodeURIComponent(USER)}/events?product=${productId}&limit=1000`;
  let all = [];
  await h.check("the API lists the user's session and events, the SDK's with the session id", async () => {
    for (let i = 0; ; i++) {
      const replays = await call(`/api/v1/replays?product=${productId}&distinct_id=${encodeURIComponent(USER)}`);
      all = (await call(eventsPath)).body.events ?? [];
      const recorded = all.filter((e) => e.sessionId === sessionId);
      if (replays.body.items?.length === 1 && recorded.some((e) => e.name === "replay_clicked") && all.length > SERVER_EVENTS) break;
      if (i === 40) throw new Error(`replays ${JSON.stringify(replays.body)}, ${all.length} events`);
      await page.waitForTimeout(250);
    }
  });

  await page.locator("nav.sidebar").getByRole("link", { name: "Replays" }).click();
  await page.getByTestId("replays").getByRole("link", { name: USER, exact: true }).click();
  const events = page.getByTestId("user-events");
  await h.check("the Replays list's user opens the user's page", async () => {
    await page.getByRole("heading", { name: USER, exact: true }).waitFor();
    const url = new URL(page.url());
    if (decodeURIComponent(url.pathname) !== `/users/${USER}` || url.searchParams.get("product") !== String(productId)) throw new Error(page.url());
    await events.waitFor();
  });
  await h.check("the page lists the user's recorded session, linking to the player", async () => {
    const rows = page.getByTestId("user-replays").locator("tbody tr");
    if ((await rows.count()) !== 1) throw new Error(`${await rows.count()} sessions`);
    const href = await rows.first().getByRole("link").getAttribute("href");
    if (href !== `/replays/${sessionId}?product=${productId}`) throw new Error(href);
  });
  await h.check("the events are the API's 100 latest, newest first, with Replay links exactly on the recorded session's", async () => {
    all = (await call(eventsPath)).body.events;
    const rows = await events.locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({ time: tr.querySelector("time").getAttribute("datetime"), name: tr.cells[1].textContent, replay: tr.cells[4].querySelector("a")?.getAttribute("href") ?? "" })),
    );
    if (rows.length !== 100) throw new Error(`${rows.length} rows`);
    all.slice(0, 100).forEach((e, i) => {
      // A Replay link opens the player at the event's moment (docs/replay.md, "Links to a moment").
      const want = e.sessionId === sessionId ? `/replays/${sessionId}?product=${productId}&t=${Date.parse(e.timestamp)}` : "";
      if (rows[i].name !== e.name || rows[i].time !== e.timestamp || rows[i].replay !== want) throw new Error(`row ${i} ${JSON.stringify(rows[i])}, want ${e.name} ${e.timestamp} ${want}`);
    });
    const linked = rows.filter((r) => r.replay).length;
    if (linked < 2 || linked === rows.length) throw new Error(`${linked} of ${rows.length} rows link to the replay`);
    const facts = await page.getByTestId("person-facts").textContent();
    if (!facts.includes("First seen (of the events loaded)") || !facts.includes("100+")) throw new Error(facts);
  });
  await shot("person");
  await h.check("Load older adds the rest, down to the user's first event", async () => {
    await page.getByRole("button", { name: "Load older" }).click();
    await page.getByTestId("events-end").waitFor();
    const names = await events.locator("tbody tr td:nth-child(2)").allTextContents();
    if (names.length !== all.length || names.join() !== all.map((e) => e.name).join()) throw new Error(`${names.length} rows, want ${all.length}`);
    if (names.at(-1) !== "first_server_event") throw new Error(`the last row is ${names.at(-1)}`);
    const first = await page.getByTestId("person-facts").locator("time").nth(1).getAttribute("datetime");
    if (Date.parse(first) !== base) throw new Error(`first seen ${first}`);
  });
  await h.check("at 390 px the user's page does not push the page sideways", async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await noSidewaysScroll();
    await shot("person-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  await h.check("an event's Replay link loads the player anew, on the event's session", async () => {
    await page.evaluate(() => (window.__sameDocument = true));
    const [doc] = await Promise.all([
      page.waitForResponse((r) => r.request().resourceType() === "document" && new URL(r.url()).pathname.startsWith("/replays/")),
      events.getByRole("link", { name: "Replay" }).first().click(),
    ]);
    await page.getByRole("heading", { name: USER, exact: true }).waitFor();
    if (decodeURIComponent(new URL(page.url()).pathname) !== `/replays/${sessionId}`) throw new Error(page.url());
    if (await page.evaluate(() => window.__sameDocument === true)) throw new Error("the player opened in the same document");
    if (!/style-src 'self' 'unsafe-inline'/.test((await doc.allHeaders())["content-security-policy"] ?? "")) throw new Error("the player's document lacks its policy");
  });
  const stage = page.getByTestId("replay-stage");
  await stage.locator("iframe").waitFor();
  await page.frameLocator("[data-testid=replay-stage] iframe").getByRole("heading").first().waitFor();

  await h.check("the timeline's marks have a colour per kind, that of their legend swatch, none black", async () => {
    await page.getByTestId("replay-timeline").locator("li.mark.event").first().waitFor();
    const colours = await page.evaluate(() => {
      const bg = (el) => getComputedStyle(el).backgroundColor;
      const out = { marks: {}, legend: {} };
      for (const li of document.querySelectorAll("[data-testid=replay-timeline] li.mark")) {
        const kind = [...li.classList].find((c) => c !== "mark");
        (out.marks[kind] ??= new Set()).add(bg(li.querySelector("button")));
      }
      for (const li of document.querySelectorAll("[data-testid=replay-legend] li.mark")) {
        out.legend[[...li.classList].find((c) => c !== "mark")] = bg(li.querySelector(".swatch"));
      }
      return { marks: Object.fromEntries(Object.entries(out.marks).map(([k, v]) => [k, [...v]])), legend: out.legend };
    });
    const legend = Object.values(colours.legend);
    if (Object.keys(colours.legend).join() !== "page,click,event,error" || new Set(legend).size !== 4) throw new Error(`legend ${JSON.stringify(colours.legend)}`);
    for (const kind of ["page", "click", "event"]) {
      const c = colours.marks[kind];
      if (!c || c.length !== 1 || c[0] !== colours.legend[kind]) throw new Error(`${kind} marks ${JSON.stringify(c)}, legend ${colours.legend[kind]}`);
    }
    for (const c of [...legend, ...Object.values(colours.marks).flat()]) {
      if (/^rgba?\(0, 0, 0(, 1)?\)$/.test(c) || c === "rgba(0, 0, 0, 0)") throw new Error(`a mark is ${c}: ${JSON.stringify(colours)}`);
    }
  });
  await shot("replay-fit");

  // The recorded page is 1280 px wide; at 390 px it must be scaled to the stage.
  const fits = async () => {
    await page.waitForTimeout(400);
    const m = await page.evaluate(() => {
      const stage = document.querySelector("[data-testid=replay-stage]").getBoundingClientRect();
      const frame = document.querySelector("[data-testid=replay-stage] iframe").getBoundingClientRect();
      return { viewport: window.innerWidth, stage: stage.width, frame: frame.width, left: frame.left - stage.left, cut: frame.bottom - stage.bottom };
    });
    // As wide as the stage (within its border), never wider than it or the viewport, and not cut at the bottom.
    if (m.frame > m.viewport || m.frame > m.stage || m.frame < m.stage - 4 || m.left < 0 || m.cut > 1) throw new Error(JSON.stringify(m));
  };
  await h.check("the player scales the recorded page to the stage when the window shrinks to 390 px", async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await fits();
    await noSidewaysScroll();
    await shot("replay-fit-phone");
  });
  await h.check("and when opened at 390 px", async () => {
    await page.reload();
    await stage.locator("iframe").waitFor();
    await page.frameLocator("[data-testid=replay-stage] iframe").getByRole("heading").first().waitFor();
    await fits();
  });
  await h.check("and again when the window grows back", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await fits();
  });

  await h.check("the player's user opens the user's page", async () => {
    await page.getByRole("heading", { name: USER, exact: true }).getByRole("link").click();
    await page.getByTestId("user-events").waitFor();
    if (decodeURIComponent(new URL(page.url()).pathname) !== `/users/${USER}`) throw new Error(page.url());
  });
  await h.check("/users finds a user by id", async () => {
    await page.locator("nav.sidebar").getByRole("link", { name: "Users" }).click();
    await page.getByRole("heading", { name: "Users", exact: true }).waitFor();
    await shot("users");
    await page.getByRole("search").getByLabel("Find a user").fill(USER);
    await page.getByRole("search").getByRole("button", { name: "Open" }).click();
    await page.getByRole("heading", { name: USER, exact: true }).waitFor();
    await page.getByTestId("user-events").waitFor();
  });
  await h.check("/users and a user's page load directly", async () => {
    for (const path of [`/users?product=${productId}`, `/users/${encodeURIComponent(USER)}?product=${productId}`]) {
      const res = await page.request.get(strata.url + path, { headers: { Accept: "text/html" } });
      if (res.status() !== 200 || /unsafe-inline/.test(res.headers()["content-security-policy"])) throw new Error(`${path}: ${res.status()} ${res.headers()["content-security-policy"]}`);
    }
  });
  await h.check("the user pages ran without script errors or blocked content", async () => {
    noPageErrors();
  });
}
