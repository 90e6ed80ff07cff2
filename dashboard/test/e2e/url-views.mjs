// The views item 6 left last (docs/dashboard.md, "State in the URL"), on a
// server of its own: a user's page after "Load older" and the Acquisition
// and Overview drill-downs. For each, the state set on the page is in the
// URL, a reload shows the same view, the URL in a fresh browser context
// shows it, and back and forward step between the views. A user with
// 1,150 events (more than MAX_PAGES pages of 100) checks the bound: a link
// asking for 50 pages fetches 10, and "Load older" past them starts a new
// view at the older events (?before=). The Users search box keeps what is
// typed, so that back from a user finds it. Screenshots at 1280 and 390 px:
// url-person-paged*.png, url-person-before*.png, url-acquisition*.png.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

const USER = "paged/ü";
/** How many events the user has: more than the 10 pages of 100 one view holds. */
const USER_EVENTS = 1150;

/** urlViewPages runs the checks; `h` is the harness's (see run.mjs). */
export async function urlViewPages(browser, h) {
  const strata = await h.startStrata();
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h);
  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const base = strata.url;
  const p = `product=${productId}`;
  const send = async (batch) => {
    const res = await fetch(`${base}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
  };

  // The user's events, a minute apart, in batches of at most 500; visits
  // from a search engine, an AI assistant and a blog for the acquisition.
  const start = Date.parse("2026-01-05T08:00:00Z");
  const events = Array.from({ length: USER_EVENTS }, (_, i) => ({
    event_name: `e${i}`,
    distinct_id: USER,
    timestamp: new Date(start + i * 60_000).toISOString(),
  }));
  const site = "https://shop.example.com";
  const visits = [
    ...Array.from({ length: 3 }, (_, i) => ({ id: `g${i}`, ref: i ? "https://www.google.com/" : "https://www.google.de/" })),
    ...Array.from({ length: 2 }, (_, i) => ({ id: `c${i}`, ref: "https://chatgpt.com/" })),
    { id: "b0", ref: "https://blog.example.org/post" },
  ].map((v) => ({ event_name: "$pageview", distinct_id: v.id, url: `${site}/`, referrer: v.ref }));
  await h.check("the user's events and the visits are accepted", async () => {
    for (let i = 0; i < events.length; i += 500) await send(events.slice(i, i + 500));
    await send(visits);
  });

  /** here is the current URL's path and query. */
  const here = () => {
    const u = new URL(page.url());
    return u.pathname + u.search;
  };
  /**
   * fresh opens url in a new browser context (a link pasted elsewhere),
   * signed in with the same cookies; watch is given the page first.
   */
  const fresh = async (url, watch = () => {}) => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, storageState: await page.context().storageState() });
    h.cleanups.push(() => ctx.close());
    const other = await ctx.newPage();
    watch(other);
    await other.goto(base + url);
    return { other, close: () => ctx.close() };
  };

  // A user's page: the rows shown, once as many as want are there.
  const userPath = `/users/${encodeURIComponent(USER)}`;
  /** rowsOf waits for n rows on pg and returns their event names, in order. */
  const rowsOf = async (pg, n) => {
    await pg.waitForFunction((n) => document.querySelectorAll("[data-testid=user-events] tbody tr").length === n, n);
    // No page is still on its way.
    await pg.waitForFunction(() => ![...document.querySelectorAll("button")].some((b) => b.textContent === "Loading…"));
    return pg.locator("[data-testid=user-events] tbody tr td:nth-child(2)").allTextContents();
  };
  /** newest(n) is the names of the user's n newest events, newest first. */
  const newest = (n, skip = 0) => events.slice(0, USER_EVENTS - skip).slice(-n).reverse().map((e) => e.event_name);
  const same = (got, want, what) => {
    if (got.join() !== want.join()) throw new Error(`${what}: ${got.length} rows ${got.slice(0, 2)}…${got.slice(-2)}, want ${want.length} ${want.slice(0, 2)}…${want.slice(-2)}`);
  };

  await page.goto(`${base}${userPath}?${p}`);
  await h.check("a user's page shows the 100 newest events", async () => same(await rowsOf(page, 100), newest(100), "first page"));
  await page.getByRole("button", { name: "Load older" }).click();
  await h.check("Load older shows 200 events and puts pages=2 in the URL", async () => {
    same(await rowsOf(page, 200), newest(200), "two pages");
    await page.waitForURL(/pages=2/);
  });
  await page.getByRole("button", { name: "Load older" }).click();
  await h.check("Load older again shows 300 and pages=3", async () => {
    same(await rowsOf(page, 300), newest(300), "three pages");
    await page.waitForURL(/pages=3/);
  });
  const pagedUrl = here();
  await page.reload();
  await h.check("a reload shows the same 300 events", async () => same(await rowsOf(page, 300), newest(300), "after reload"));
  await h.check("the paged URL in a fresh page shows the same 300 events", async () => {
    const { other, close } = await fresh(pagedUrl);
    same(await rowsOf(other, 300), newest(300), "fresh page");
    await close();
  });
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot("url-person-paged");
  await atPhoneWidth("a user's page with older events loaded", "url-person-paged-phone");
  await page.goBack();
  await h.check("back returns to the view before the last Load older", async () => {
    same(await rowsOf(page, 200), newest(200), "back");
    if (!here().includes("pages=2")) throw new Error(here());
  });
  await page.goForward();
  await h.check("forward returns to the 300 events", async () => same(await rowsOf(page, 300), newest(300), "forward"));

  // The bound: a link asking for 50 pages fetches 10 (1,000 events).
  await h.check("a link asking for 50 pages fetches 10 of them and shows 1,000 events", async () => {
    const asked = [];
    const { other, close } = await fresh(`${userPath}?${p}&pages=50`, (pg) =>
      pg.on("request", (r) => {
        if (r.url().includes("/events?")) asked.push(r.url());
      }),
    );
    same(await rowsOf(other, 1000), newest(1000), "50 pages asked");
    // The facts follow the rows; a loaded machine can take a while.
    let facts = "";
    for (const deadline = Date.now() + 10_000; !facts.includes("1000+") && Date.now() < deadline; await other.waitForTimeout(100)) {
      facts = await other.getByTestId("person-facts").textContent();
    }
    if (!facts.includes("1000+")) throw new Error(facts);
    if (asked.length !== 10) throw new Error(`${asked.length} requests for events, want 10`);
    await close();
  });
  // Past the bound, Load older starts a view at the older events.
  await page.goto(`${base}${userPath}?${p}&pages=10`);
  const oldest = events[USER_EVENTS - 1000].timestamp;
  await rowsOf(page, 1000);
  await page.getByRole("button", { name: "Load older" }).click();
  await h.check("Load older at 10 pages shows the next 100 alone, from before= the oldest shown", async () => {
    same(await rowsOf(page, 100), newest(100, 1000), "the view at before=");
    await page.waitForURL(/before=/);
    const before = new URL(page.url()).searchParams.get("before");
    if (Date.parse(before) !== Date.parse(oldest)) throw new Error(`before=${before}, the oldest shown was ${oldest}`);
    if (new URL(page.url()).searchParams.has("pages")) throw new Error(page.url());
    await page.getByTestId("events-from").waitFor();
  });
  const olderUrl = here();
  await shot("url-person-before");
  await atPhoneWidth("a user's page of older events", "url-person-before-phone");
  await page.getByRole("button", { name: "Load older" }).click();
  await h.check("Load older in that view reaches the user's first event", async () => {
    same(await rowsOf(page, 150), newest(150, 1000), "the older view's two pages");
    await page.getByTestId("events-end").waitFor();
  });
  await h.check("the older view's URL in a fresh page shows the same 100 events", async () => {
    const { other, close } = await fresh(olderUrl);
    same(await rowsOf(other, 100), newest(100, 1000), "fresh older view");
    await close();
  });
  await page.goBack();
  await page.goBack();
  await h.check("back from the older view returns to the 1,000 newest events", async () => same(await rowsOf(page, 1000), newest(1000), "back to the newest"));

  // The Users search box: what is typed is in the URL (replacing the entry), and back from the user finds it.
  await page.goto(`${base}/users?${p}`);
  const entries = await page.evaluate(() => history.length);
  await page.getByRole("searchbox").fill(USER);
  await h.check("what is typed in the Users search is in the URL, without a history entry per key", async () => {
    await page.waitForURL((u) => u.searchParams.get("distinct_id") === USER);
    if ((await page.evaluate(() => history.length)) !== entries) throw new Error("typing added history entries");
  });
  await page.getByRole("button", { name: "Open" }).click();
  await page.getByRole("heading", { name: USER, exact: true }).waitFor();
  await page.goBack();
  await h.check("back from the user's page finds the id in the search box", async () => {
    await page.getByRole("heading", { name: "Users" }).waitFor();
    const v = await page.getByRole("searchbox").inputValue();
    if (v !== USER) throw new Error(`the box holds "${v}"`);
  });

  // Acquisition: the channel and the source opened.
  const opened = async (pg) => {
    const names = await pg.locator("button[aria-expanded=true]").allTextContents();
    return names.join("|");
  };
  const detailRows = (pg, name) =>
    pg
      .getByRole("table", { name, exact: true })
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim()).join(" ")));
  const rowsBecome = async (pg, name, want) => {
    let got = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await pg.waitForTimeout(100)) {
      got = await detailRows(pg, name);
      if (got.join() === want) return;
    }
    throw new Error(`${name}: ${got}`);
  };
  const acquisitionShows = async (pg, want) => {
    await pg.getByRole("heading", { name: "Acquisition" }).waitFor();
    await pg.getByRole("table", { name: "Channels", exact: true }).waitFor();
    await pg.getByRole("table", { name: "Sources", exact: true }).waitFor();
    await pg.waitForFunction((want) => [...document.querySelectorAll("button[aria-expanded=true]")].map((b) => b.textContent).join("|") === want, want);
    // A drill-down table appears before its rows arrive: wait for the rows.
    if (want.includes("Search")) await rowsBecome(pg, "Source of Search", "Google 3");
    if (want.includes("ChatGPT")) await rowsBecome(pg, "Referrer of ChatGPT", "https://chatgpt.com/ 2");
    return opened(pg);
  };
  await page.goto(`${base}/acquisition?${p}&range=7d`);
  await acquisitionShows(page, "");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await h.check("opening a channel puts it in the URL", async () => {
    await page.waitForURL(/channel=search/);
    await acquisitionShows(page, "Search");
  });
  await page.getByRole("button", { name: "ChatGPT", exact: true }).click();
  await h.check("opening a source puts it in the URL too", async () => {
    await page.waitForURL(/source=ChatGPT/);
    await acquisitionShows(page, "Search|ChatGPT");
  });
  const drillUrl = here();
  await page.reload();
  await h.check("a reload shows the same channel and source opened", async () => acquisitionShows(page, "Search|ChatGPT"));
  await h.check("the drill-down URL in a fresh page shows the same", async () => {
    const { other, close } = await fresh(drillUrl);
    await acquisitionShows(other, "Search|ChatGPT");
    await close();
  });
  await shot("url-acquisition");
  await atPhoneWidth("the acquisition page drilled down", "url-acquisition-phone");
  await page.goBack();
  await h.check("back closes the source, keeping the channel", async () => acquisitionShows(page, "Search"));
  await page.goBack();
  await h.check("back again closes the channel", async () => acquisitionShows(page, ""));
  await page.goForward();
  await h.check("forward opens the channel again", async () => acquisitionShows(page, "Search"));
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await h.check("closing the channel takes it out of the URL", async () => {
    await page.waitForURL((u) => !u.searchParams.has("channel"));
    await acquisitionShows(page, "");
  });

  // The Overview's Top sources: the source opened.
  await page.goto(`${base}/?${p}&range=7d`);
  await page.getByRole("table", { name: "Top sources", exact: true }).waitFor();
  await page.getByRole("button", { name: "ChatGPT", exact: true }).click();
  await page.waitForURL(/source=ChatGPT/);
  await page.reload();
  await h.check("the Overview keeps the source opened over a reload", async () => {
    await page.getByRole("table", { name: "Referrer of ChatGPT", exact: true }).waitFor();
  });
  await h.check("no page error on the paged and drilled pages", noPageErrors);
}
