// The Overview's Goals card and the goals in a product's settings (issue
// 37 item 7; docs/dashboard.md, "Goals"), on a server of its own behind a
// trusted proxy (--trusted-proxies 127.0.0.1/32, as STRATA_TRUSTED_PROXIES)
// so that visitors have countries. Goals are added in Settings (a custom
// event, two page paths, one with a wildcard), page views and sign-ups are
// sent over HTTP from the United States on iPhones and from the
// Netherlands on Chrome for Linux, some arriving from Google, and the card
// must show exactly the figures worked out here; a goal opens its rate by
// source, country and device; each goal's rate shows its change against
// the previous 7 days, whose visits are sent ten days back; a goal deleted
// in Settings leaves the card.
// Screenshots at 1280 and 390 px: goals-settings.png, overview-goals.png,
// overview-goals-phone.png.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

const US = "8.8.8.8";
const NL = "193.0.14.129";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
const LINUX_CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const SITE = "https://shop.example.com";
const GOOGLE = "https://www.google.com/";

/** goalPages runs the checks; `h` is the harness's (see run.mjs). */
export async function goalPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "", STRATA_TRUSTED_PROXIES: "127.0.0.1/32" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const same = (got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  const rows = (scope, label) =>
    scope
      .getByRole("table", { name: label, exact: true })
      .locator(":scope > tbody > tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll(":scope > td")].map((td) => td.textContent.trim())));

  // Settings: the empty state says what a goal is; three goals are added,
  // and the same one twice is refused with the server's message.
  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  const settings = page.getByTestId("goal-settings");
  await h.check("Settings' Goals section starts empty and says how to add one", async () => {
    await settings.getByText("No goals yet. Add a custom event or a page path above", { exact: false }).waitFor();
  });
  // Each goal is added once the one before is listed, as a person would.
  const add = async (kind, value, listed = true) => {
    await settings.getByLabel("Kind").selectOption(kind);
    await settings.getByRole("textbox", { name: kind === "event" ? "Event name" : "Page path", exact: true }).fill(value);
    await settings.getByRole("button", { name: "Add goal" }).click();
    if (listed) await settings.getByRole("cell", { name: value, exact: true }).waitFor();
  };
  await add("event", "signup");
  await add("page", "/pricing");
  await add("page", "/blog/*");
  await h.check("Settings lists the goals added, oldest first", async () => {
    await settings.getByRole("cell", { name: "/blog/*", exact: true }).waitFor();
    same(
      (await rows(settings, "Goals")).map((r) => r.slice(0, 2)),
      [["signup", "Custom event"], ["/pricing", "Page path"], ["/blog/*", "Page path"]],
    );
  });
  await add("event", "signup", false);
  await h.check("the same goal twice is refused with the server's message", async () => {
    await settings.getByRole("alert").filter({ hasText: "already has this goal" }).waitFor();
    if ((await rows(settings, "Goals")).length !== 3) throw new Error("a fourth row appeared");
  });
  await settings.scrollIntoViewIfNeeded();
  await shot("goals-settings");

  // The visitors: from the United States on iPhones, u1 (from Google:
  // /pricing, then signs up), u2 (/blog/a and /blog/b) and u3 (/); from
  // the Netherlands on Chrome, u4 (from Google: /, then signs up twice) and
  // u5 (/pricing). 5 visitors; signup: u1 and u4, 3 conversions; /pricing:
  // u1 and u5; /blog/*: u2, 2 conversions.
  const pv = (id, path, referrer = "") => ({ event_name: "$pageview", distinct_id: id, url: SITE + path, referrer });
  const signup = (id) => ({ event_name: "signup", distinct_id: id });
  const sends = [
    [US, IPHONE, [pv("u1", "/pricing", GOOGLE), signup("u1"), pv("u2", "/blog/a"), pv("u2", "/blog/b", SITE + "/blog/a"), pv("u3", "/")]],
    [NL, LINUX_CHROME, [pv("u4", "/", GOOGLE), signup("u4"), signup("u4"), pv("u5", "/pricing")]],
  ];
  await h.check("the page views and sign-ups are accepted", async () => {
    for (const [addr, ua, batch] of sends) {
      // One event after the other, so that each visitor's first page view is first in time.
      for (const e of batch) {
        const headers = { "Content-Type": "application/json", "X-API-Key": key, "User-Agent": ua, "X-Forwarded-For": addr };
        const res = await fetch(`${strata.url}/e`, { method: "POST", headers, body: JSON.stringify({ batch: [e] }) });
        if (res.status !== 202) throw new Error(`${addr}: ${res.status} ${await res.text()}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  });

  // The previous 7 days (the range is today and the 6 days before): ten
  // days back, p1 (/pricing, then signs up), p2 (/), p3 (/blog/x) and p4
  // (/). 4 visitors; signup: p1, 25 %; /pricing: p1, 25 %; /blog/*: p3, 25 %.
  const before = new Date(Date.now() - 10 * 86_400_000);
  const at = (e, s) => ({ ...e, timestamp: new Date(before.getTime() + s * 1000).toISOString() });
  await h.check("the previous period's page views and sign-up are accepted", async () => {
    const batch = [at(pv("p1", "/pricing"), 0), at(signup("p1"), 1), at(pv("p2", "/"), 2), at(pv("p3", "/blog/x"), 3), at(pv("p4", "/"), 4)];
    const res = await fetch(`${strata.url}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
  });

  await page.goto(`${strata.url}/?product=${productId}&range=7d`);
  const card = page.getByRole("region", { name: "Goals", exact: true });
  // The goal rows without their changes, which goalChanges reads.
  const goalRows = () =>
    card
      .getByRole("table", { name: "Goal conversions", exact: true })
      .locator(":scope > tbody > tr")
      .evaluateAll((trs) =>
        trs.map((tr) =>
          [...tr.querySelectorAll(":scope > td")].map((td) => {
            const c = td.cloneNode(true);
            c.querySelector("[data-testid=goal-change]")?.remove();
            return c.textContent.trim();
          }),
        ),
      );
  await h.check("the Goals card shows each goal's visitors, conversions and rate of the 5 visitors", async () => {
    await card.getByRole("table", { name: "Goal conversions", exact: true }).waitFor();
    same(await goalRows(), [
      ["signup", "2", "3", "40 %"],
      ["Visit /pricing", "2", "2", "40 %"],
      ["Visit /blog/*", "1", "2", "20 %"],
    ]);
  });
  await h.check("each goal's rate shows its change against the previous 7 days, in words for screen readers", async () => {
    const changes = () =>
      card.locator("[data-testid=goal-row]").evaluateAll((trs) =>
        trs.map((tr) => {
          const c = tr.querySelector("[data-testid=goal-change]");
          return c ? [c.querySelector("[aria-hidden]").textContent.trim(), c.dataset.direction, c.querySelector(".visually-hidden").textContent] : null;
        }),
      );
    // 40 % against 25 %, 40 % against 25 %, 20 % against 25 %.
    const want = [
      ["↑ +15 pp", "up", "up 15 percentage points from the previous 7 days"],
      ["↑ +15 pp", "up", "up 15 percentage points from the previous 7 days"],
      ["↓ \u22125 pp", "down", "down 5 percentage points from the previous 7 days"],
    ];
    let got = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      got = await changes();
      if (JSON.stringify(got) === JSON.stringify(want)) return;
      await page.waitForTimeout(100);
    }
    same(got, want);
  });
  const breakdowns = [
    ["Source", "signup by source", [["Google", "2", "2", "100 %"], ["Direct / none", "3", "0", "0 %"]]],
    ["Country", "signup by country", [["United States", "3", "1", "33.3 %"], ["Netherlands", "2", "1", "50 %"]]],
    ["Device", "signup by device", [["Mobile", "3", "1", "33.3 %"], ["Desktop", "2", "1", "50 %"]]],
  ];
  await h.check("choosing a goal opens its conversion rate by source, channel, country and device", async () => {
    await card.getByRole("button", { name: "signup", exact: true }).click();
    if ((await card.getByRole("button", { name: "signup", exact: true }).getAttribute("aria-expanded")) !== "true") throw new Error("not marked open");
    const tabs = await card.getByRole("tab").allTextContents();
    same(tabs, ["Source", "Channel", "Country", "Device"]);
  });
  for (const [tab, table, want] of breakdowns) {
    await h.check(`the goal's ${tab} tab shows its visitors, converted visitors and rate by ${tab.toLowerCase()}`, async () => {
      await card.getByRole("tab", { name: tab, exact: true }).click();
      await card.getByRole("table", { name: table, exact: true }).waitFor();
      same(await rows(card, table), want);
    });
  }
  await card.scrollIntoViewIfNeeded();
  await shot("overview-goals");
  await atPhoneWidth("the Goals card with a goal opened", "overview-goals-phone");

  // Deleting a goal in Settings takes it off the card.
  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  await h.check("a goal deleted in Settings leaves the list", async () => {
    const row = settings.getByTestId("goal-settings-row").filter({ hasText: "/pricing" });
    await row.getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    await settings.getByRole("cell", { name: "/blog/*", exact: true }).waitFor();
    same((await rows(settings, "Goals")).map((r) => r[0]), ["signup", "/blog/*"]);
  });
  await page.goto(`${strata.url}/?product=${productId}&range=7d`);
  await h.check("and the Overview's card", async () => {
    await card.getByRole("table", { name: "Goal conversions", exact: true }).waitFor();
    same((await rows(card, "Goal conversions")).map((r) => r[0]), ["signup", "Visit /blog/*"]);
  });
  await h.check("no script error or blocked resource on the way", noPageErrors);
}
