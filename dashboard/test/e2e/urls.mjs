// Dates that mean what they say, and every page's state in its URL
// (docs/dashboard.md, "State in the URL" and "Dates"), on a server of its
// own with error tracking on. Events of two users are sent 3 days ago,
// none yesterday. For trends, funnels, retention and the errors,
// annotations and replays lists: a state set on the page is in the URL,
// a reload shows it again, the same URL in a fresh browser context shows
// it, and back and forward step between the states. A saved funnel run
// with the top bar on Yesterday asks for yesterday and says so, and the
// empty range is said as such (no install box, the product has events).
// An annotation typed at 10:30 in a browser in New York is shown back at
// 10:30 UTC. Screenshots at 1280 and 390 px: url-*.png.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** urlPages runs the checks; `h` is the harness's (see run.mjs). */
export async function urlPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "true" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h);
  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const base = `${strata.url}`;
  const p = `product=${productId}`;

  // Two users sign up and one pays, 3 days ago; nothing since.
  const day = new Date(Date.now() - 3 * 86_400_000);
  day.setUTCHours(10, 0, 0, 0);
  const at = (min) => new Date(day.getTime() + min * 60_000).toISOString();
  const batch = [
    { event_name: "signup", distinct_id: "ann", timestamp: at(0) },
    { event_name: "paid", distinct_id: "ann", timestamp: at(5) },
    { event_name: "signup", distinct_id: "bob", timestamp: at(10) },
    { event_name: "$pageview", distinct_id: "bob", timestamp: at(11), properties: { $url: "https://shop.test/a" } },
  ];
  await h.check("the events are accepted", async () => {
    const res = await fetch(`${base}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
  });
  const api = (method, path, body) =>
    page.evaluate(
      async ([method, path, body]) => {
        const res = await fetch(path, { method, headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
        return { status: res.status, body: res.status === 204 ? null : await res.json() };
      },
      [method, path, body],
    );
  const saved = await api("POST", `/api/v1/queries?${p}`, { kind: "funnel", name: "Signup to paid", definition: { steps: ["signup", "paid"], windowHours: 24 } });
  await h.check("a saved funnel is created", async () => {
    if (saved.status !== 201) throw new Error(JSON.stringify(saved));
  });
  const savedId = saved.body.id;

  /** here is the current URL's path and query. */
  const here = () => {
    const u = new URL(page.url());
    return u.pathname + u.search;
  };
  /** fresh opens url in a new browser context (a link pasted elsewhere), signed in with the same cookies. */
  const fresh = async (url) => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, storageState: await page.context().storageState() });
    h.cleanups.push(() => ctx.close());
    const other = await ctx.newPage();
    await other.goto(base + url);
    return other;
  };
  const expectParam = (name, want) => {
    const got = new URL(page.url()).searchParams.getAll(name).join(",");
    if (got !== want) throw new Error(`?${name}= is "${got}", want "${want}" (${page.url()})`);
  };

  // Trends.
  await page.goto(`${base}/trends?${p}&range=7d`);
  await page.getByRole("heading", { name: "Trends" }).waitFor();
  await page.getByLabel("Series 1 event").fill("signup");
  await page.getByLabel("Breakdown").fill("path");
  await page.locator("select[name=interval]").selectOption("week");
  await page.getByRole("button", { name: "Run trend" }).click();
  await h.check("a trend run is in the URL", async () => {
    await page.waitForURL(/event=signup/);
    expectParam("event", "signup");
    expectParam("breakdown", "path");
    expectParam("interval", "week");
  });
  const trendUrl = here();
  const trendState = async (pg) => [await pg.getByLabel("Series 1 event").inputValue(), await pg.getByLabel("Breakdown").inputValue(), await pg.locator("select[name=interval]").inputValue()].join("|");
  await page.reload();
  await h.check("a reload shows the same trend", async () => {
    await page.getByRole("heading", { name: "Trends" }).waitFor();
    await page.waitForFunction(() => document.querySelector("select[name=interval]")?.value === "week");
    if ((await trendState(page)) !== "signup|path|week") throw new Error(await trendState(page));
  });
  await h.check("the trend's URL in a fresh page shows the same trend", async () => {
    const other = await fresh(trendUrl);
    await other.getByRole("heading", { name: "Trends" }).waitFor();
    await other.waitForFunction(() => document.querySelector("select[name=interval]")?.value === "week");
    if ((await trendState(other)) !== "signup|path|week") throw new Error(await trendState(other));
    await other.close();
  });
  await shot("url-trends");
  await atPhoneWidth("the trends page", "url-trends-phone");
  await page.goBack();
  await h.check("back returns to the trend before the run", async () => {
    await page.waitForFunction(() => !location.search.includes("event="));
    await page.waitForFunction(() => document.querySelector("select[name=interval]")?.value === "day");
    if ((await trendState(page)) !== "$pageview||day") throw new Error(await trendState(page));
  });
  await page.goForward();
  await h.check("forward returns to the trend run", async () => {
    await page.waitForFunction(() => document.querySelector("select[name=interval]")?.value === "week");
    if ((await trendState(page)) !== "signup|path|week") throw new Error(await trendState(page));
  });

  // Funnels.
  await page.goto(`${base}/funnels?${p}&range=7d`);
  await page.getByRole("heading", { name: "Funnels" }).waitFor();
  await page.getByLabel("Step 1 event").fill("signup");
  await page.getByLabel("Step 2 event").fill("paid");
  await page.getByLabel("Remove step 3").click();
  await page.locator("input[name=windowHours]").fill("48");
  await page.getByRole("button", { name: "Run funnel" }).click();
  const counts = async (pg) => (await pg.getByTestId("step-count").allTextContents()).join(",");
  await h.check("a funnel run is in the URL and counts 2 then 1", async () => {
    await page.waitForURL(/step=signup/);
    expectParam("step", "signup,paid");
    expectParam("window", "48");
    await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=step-count]")].map((e) => e.textContent).join(",") === "2,1");
  });
  const funnelUrl = here();
  const funnelState = async (pg) => [...(await pg.locator(".steps input").evaluateAll((l) => l.map((i) => i.value))), await pg.locator("input[name=windowHours]").inputValue()].join("|");
  await page.reload();
  await h.check("a reload shows the same funnel and result", async () => {
    await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=step-count]")].map((e) => e.textContent).join(",") === "2,1");
    if ((await funnelState(page)) !== "signup|paid|48") throw new Error(await funnelState(page));
  });
  await h.check("the funnel's URL in a fresh page shows the same funnel", async () => {
    const other = await fresh(funnelUrl);
    await other.waitForFunction(() => [...document.querySelectorAll("[data-testid=step-count]")].map((e) => e.textContent).join(",") === "2,1");
    if ((await funnelState(other)) !== "signup|paid|48") throw new Error(await funnelState(other));
    await other.close();
  });
  await shot("url-funnels");
  await atPhoneWidth("the funnels page", "url-funnels-phone");
  await page.goBack();
  await h.check("back returns to the placeholder funnel", async () => {
    await page.waitForFunction(() => document.querySelectorAll(".steps input").length === 3);
    if ((await funnelState(page)) !== "page_viewed|button_clicked|form_submitted|24") throw new Error(await funnelState(page));
  });
  await page.goForward();
  await h.check("forward returns to the funnel run", async () => {
    await page.waitForFunction(() => document.querySelectorAll(".steps input").length === 2);
    if ((await funnelState(page)) !== "signup|paid|48") throw new Error(await funnelState(page));
  });

  // A saved funnel over Yesterday: the range asked for and said; the range is empty.
  const runs = [];
  page.on("request", (r) => {
    if (r.url().includes(`/api/v1/queries/${savedId}/run`)) runs.push(new URL(r.url()));
  });
  await page.goto(`${base}/funnels?${p}&range=yesterday`);
  await page.getByRole("button", { name: "Run Signup to paid" }).click();
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await h.check("a saved funnel run with Yesterday asks for yesterday and says so", async () => {
    await page.waitForURL(new RegExp(`saved=${savedId}`));
    await page.getByTestId("funnel-range").filter({ hasText: "Saved funnel · Yesterday" }).waitFor();
    const last = runs.at(-1);
    if (!last || last.searchParams.get("dateFrom") !== yesterday || last.searchParams.get("dateTo") !== yesterday) throw new Error(`run ${last}`);
    if ((await page.textContent("main")).includes("last 30 days")) throw new Error("the page still speaks of the last 30 days");
  });
  await h.check("yesterday's empty range is said as such, not as a first install", async () => {
    await page.getByTestId("empty-range").waitFor();
    const text = await page.getByTestId("empty-range").textContent();
    if (!text.includes(`No events on ${yesterday}`) || !text.includes("none yesterday")) throw new Error(text);
    if (await page.getByTestId("install-snippet").count()) throw new Error("the install box is shown");
  });
  await shot("url-saved-funnel-yesterday");
  await atPhoneWidth("a saved funnel over an empty range", "url-saved-funnel-yesterday-phone");
  await page.goto(`${base}/?${p}&range=yesterday`);
  await h.check("the overview of yesterday says the range is empty, without 'in yesterday'", async () => {
    await page.getByTestId("empty-range").waitFor();
    const text = await page.textContent("main");
    if (/\bin (today|yesterday)\b/.test(text)) throw new Error(text);
  });
  await shot("url-overview-empty-range");
  await atPhoneWidth("the overview of an empty range", "url-overview-empty-range-phone");

  // Retention.
  await page.goto(`${base}/retention?${p}&range=7d`);
  await page.getByRole("heading", { name: "Retention" }).waitFor();
  await page.getByLabel("Start event").fill("signup");
  await page.getByLabel("Return event").fill("paid");
  await page.locator("form[aria-label='Retention query'] select").selectOption("day");
  await page.getByRole("button", { name: "Show retention" }).click();
  const retentionState = async (pg) => [await pg.getByLabel("Start event").inputValue(), await pg.getByLabel("Return event").inputValue(), await pg.locator("form[aria-label='Retention query'] select").inputValue()].join("|");
  await h.check("a retention query is in the URL", async () => {
    await page.waitForURL(/start=signup/);
    expectParam("return", "paid");
    expectParam("period", "day");
  });
  const retentionUrl = here();
  await page.reload();
  await h.check("a reload shows the same retention query", async () => {
    await page.waitForFunction(() => document.querySelector("form[aria-label='Retention query'] select")?.value === "day");
    if ((await retentionState(page)) !== "signup|paid|day") throw new Error(await retentionState(page));
  });
  await h.check("the retention URL in a fresh page shows the same query", async () => {
    const other = await fresh(retentionUrl);
    await other.waitForFunction(() => document.querySelector("form[aria-label='Retention query'] select")?.value === "day");
    if ((await retentionState(other)) !== "signup|paid|day") throw new Error(await retentionState(other));
    await other.close();
  });
  await shot("url-retention");
  await atPhoneWidth("the retention page", "url-retention-phone");
  await page.goBack();
  await h.check("back returns to the default retention query", async () => {
    await page.waitForFunction(() => document.querySelector("form[aria-label='Retention query'] select")?.value === "week");
    if ((await retentionState(page)) !== "$pageview||week") throw new Error(await retentionState(page));
  });

  // Lists: errors (status, release), replays (user), annotations (saved query).
  /**
   * shows waits until state(pg) is want, for up to 10 s (a loaded machine
   * can take seconds to draw a list), and fails with the last state.
   */
  const shows = async (state, pg, want) => {
    const end = Date.now() + 10_000;
    for (;;) {
      const got = await state(pg);
      if (got === want) return;
      if (Date.now() > end) throw new Error(got);
      await pg.waitForTimeout(100);
    }
  };
  /** listCheck sets a state with set, then checks the URL, a reload, a fresh page and back. */
  const listCheck = async (what, path, set, state, want, before, name) => {
    await page.goto(`${base}${path}?${p}&range=7d`);
    await set();
    await h.check(`the ${what} is in the URL`, async () => {
      await page.waitForFunction(([s]) => s, [true]);
      await page.waitForURL((u) => u.search !== `?${p}&range=7d`);
    });
    const url = here();
    await page.reload();
    await h.check(`a reload shows the same ${what}`, async () => {
      await page.waitForFunction(() => document.readyState === "complete");
      await shows(state, page, want);
    });
    await h.check(`the ${what}'s URL in a fresh page shows it`, async () => {
      const other = await fresh(url);
      await shows(state, other, want);
      await other.close();
    });
    await shot(name);
    await atPhoneWidth(`the ${what} page`, `${name}-phone`);
    await page.goBack();
    await h.check(`back returns to the ${what} before`, async () => {
      await shows(state, page, before);
    });
    await page.goForward();
    await h.check(`forward returns to the ${what} set`, async () => {
      await shows(state, page, want);
    });
  };
  await listCheck(
    "errors filter",
    "/errors",
    async () => {
      await page.locator("select[name=status]").selectOption("resolved");
      await page.waitForURL(/status=resolved/);
      await page.locator("input[name=release]").fill("2.0.0");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await page.waitForURL(/release=2\.0\.0/);
    },
    async (pg) => `${await pg.locator("select[name=status]").inputValue()}|${await pg.locator("input[name=release]").inputValue()}`,
    "resolved|2.0.0",
    "resolved|",
    "url-errors",
  );
  await listCheck(
    "replays user",
    "/replays",
    async () => {
      // The list may mount again as the page loads, emptying the box
      // (a CI run saw Show send no user): type and show until the URL has it.
      for (let i = 0; ; i++) {
        await page.getByRole("searchbox").fill("ann");
        await page.getByRole("button", { name: "Show" }).click();
        try {
          await page.waitForURL(/distinct_id=ann/, { timeout: 3_000 });
          return;
        } catch (e) {
          if (i === 3) throw e;
        }
      }
    },
    async (pg) => `${await pg.getByRole("searchbox").inputValue()}|${(await pg.getByTestId("no-replays").textContent().catch(() => "")).includes("of ann")}`,
    "ann|true",
    "|false",
    "url-replays",
  );
  await listCheck(
    "annotations filter",
    "/annotations",
    async () => {
      await page.getByLabel("Show annotations of").selectOption(String(savedId));
      await page.waitForURL(new RegExp(`query=${savedId}`));
    },
    async (pg) => pg.getByLabel("Show annotations of").inputValue(),
    String(savedId),
    "",
    "url-annotations",
  );

  // An annotation's time, typed in a browser whose zone is New York, is shown back as typed, in UTC.
  await h.check("an annotation typed at 10:30 in New York is shown at 10:30 UTC", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "America/New_York", storageState: await page.context().storageState() });
    h.cleanups.push(() => ctx.close());
    const ny = await ctx.newPage();
    await ny.goto(`${base}/annotations?${p}`);
    const zone = await ny.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    if (zone !== "America/New_York") throw new Error(`the browser's zone is ${zone}`);
    await ny.getByLabel("Date and time (UTC)").fill("2026-11-20T10:30");
    await ny.locator("input[name=label]").fill("Launch in UTC");
    await ny.locator("input[name=label]").press("Enter");
    const row = ny.locator("tr", { hasText: "Launch in UTC" });
    await row.waitFor();
    const text = await row.textContent();
    if (!text.includes("20 Nov 2026, 10:30 UTC")) throw new Error(text);
    if (!(await ny.locator("th", { hasText: "Date (UTC)" }).count())) throw new Error("the table does not name the zone");
    await ny.screenshot({ path: `${h.artifacts}/url-annotation-utc.png`, fullPage: true });
    await ny.setViewportSize({ width: 390, height: 800 });
    await ny.screenshot({ path: `${h.artifacts}/url-annotation-utc-phone.png`, fullPage: true });
    await ctx.close();
  });
  await h.check("no page error on the URL pages", noPageErrors);
}
