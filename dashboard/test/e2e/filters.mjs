// Click to filter on the Overview (issue 37 item 6), on a server of its
// own behind a trusted proxy (--trusted-proxies 127.0.0.1/32): visits with
// known countries (X-Forwarded-For of public addresses the embedded DB-IP
// database places in the United States and the Netherlands, as geo.mjs),
// sources, pages and devices, sent with timestamps and session ids. Rows
// of the Countries, Sources (a source's referrers, a channel), Devices and Entry
// and Exit pages cards are clicked (one by the keyboard), and the figures
// and cards must change to exactly the numbers counted here by hand from
// docs/queries.md's rules; the chips show and remove, the URL holds the
// filters (?f=is,country,NL), and a reload, back and forward restore them.
// Screenshots at 1280 and 390 px: overview-filters.png,
// overview-filters-phone.png, overview-filters-entry.png.
import { IPHONE, LINUX_CHROME, NL, sendFrom, US } from "./geo.mjs";
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

const day = 86_400_000;

/** filterPages runs the checks; `h` is the harness's (see run.mjs). */
export async function filterPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "", STRATA_TRUSTED_PROXIES: "127.0.0.1/32" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // Every visit three days ago at noon, inside the last 7 days.
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const noon = today - 3 * day + 12 * 3_600_000;
  const site = "https://shop.example.com";
  const view = (user, minutes, path, referrer = "") => ({
    event_name: "$pageview",
    distinct_id: user,
    url: site + path,
    referrer,
    timestamp: new Date(noon + minutes * 60_000).toISOString(),
    properties: { $session_id: `s-${user}` },
  });
  const google = "https://www.google.com/";
  // One visit each (pages in order; bounce: one page view):
  //   a1 US iPhone  / (google.com) → /pricing        2 views
  //   a2 US iPhone  /docs (google.de)                 1 view, bounce
  //   b1 NL Chrome  / (chatgpt.com) → /docs           2 views
  //   b2 NL Chrome  /pricing (direct)                 1 view, bounce
  //   b3 NL Chrome  / (google.com)                    1 view, bounce
  //   c1 nowhere, Chrome  / → /pricing → /signup      3 views
  // Moves within the site have the site as referrer: no source.
  const sends = [
    [US, IPHONE, [view("a1", 0, "/", google), view("a1", 2, "/pricing", site + "/"), view("a2", 5, "/docs", "https://www.google.de/")]],
    [
      NL,
      LINUX_CHROME,
      [view("b1", 0, "/", "https://chatgpt.com/"), view("b1", 1, "/docs", site + "/"), view("b2", 3, "/pricing"), view("b3", 4, "/", google)],
    ],
    ["", LINUX_CHROME, [view("c1", 0, "/"), view("c1", 1, "/pricing", site + "/"), view("c1", 2, "/signup", site + "/pricing")]],
  ];
  await h.check("the visits from each country are accepted", () => sendFrom(strata, key, sends));

  const rows = (label) =>
    page
      .getByRole("table", { name: label, exact: true })
      .locator(":scope > tbody > tr:not(.detail-row)")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll(":scope > td")].map((td) => td.textContent.trim())));
  const same = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  // The figures once every one has loaded: visitors, visits, page views, bounce rate.
  const figures = async (want) => {
    const ids = ["visitors", "visits", "pageviews", "bounce-rate"];
    let got = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      got = await Promise.all(ids.map(async (id) => (await page.getByTestId(`stat-${id}`).textContent()).trim()));
      if (JSON.stringify(got) === JSON.stringify(want)) return;
      await page.waitForTimeout(100);
    }
    throw new Error(`figures ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  // A table once it shows want (its query answers after the click).
  const table = async (label, want) => {
    let got = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      got = (await page.getByRole("table", { name: label, exact: true }).count()) ? await rows(label) : [];
      if (JSON.stringify(got) === JSON.stringify(want)) return;
      await page.waitForTimeout(100);
    }
    throw new Error(`${label}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  // The chips once they show want (after a reload, once the page has drawn).
  const chipsAre = async (want) => {
    let got = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      got = await page.locator(".filter-chips .chip span").allTextContents();
      if (JSON.stringify(got) === JSON.stringify(want)) return;
      await page.waitForTimeout(100);
    }
    throw new Error(`chips ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  const filtersInUrl = () => new URL(page.url()).searchParams.getAll("f");

  await page.goto(`${strata.url}/?product=${productId}&range=7d`);
  await h.check("unfiltered, the Overview counts every visit and no chip shows", async () => {
    // 6 visitors; 6 visits; 10 page views; bounces a2, b2, b3: 50 %.
    await figures(["6", "6", "10", "50 %"]);
    await table("Countries", [
      ["\u{1F1F3}\u{1F1F1} Netherlands", "3"],
      ["\u{1F1FA}\u{1F1F8} United States", "2"],
      ["Unknown", "1"],
    ]);
    await table("Top sources", [["Google", "3"], ["ChatGPT", "1"]]);
    if ((await page.getByTestId("filter-chips").count()) !== 0) throw new Error("a chip shows without a filter");
  });

  const countries = page.getByRole("region", { name: "Countries", exact: true });
  await countries.getByRole("button", { name: "Filter by Netherlands", exact: true }).click();
  await h.check("a country's row filters the whole Overview by it", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").join() === "is,country,NL");
    await chipsAre(["Country is Netherlands"]);
    // b1, b2, b3: 3 visitors, 3 visits, 4 page views, 2 bounces of 3.
    await figures(["3", "3", "4", "66.7 %"]);
    await table("Top pages", [["/", "2"], ["/docs", "1"], ["/pricing", "1"]]);
    await table("Top sources", [["ChatGPT", "1"], ["Google", "1"]]);
    await table("Entry pages", [["/", "2", "50 %"], ["/pricing", "1", "100 %"]]);
    await table("Exit pages", [["/", "1"], ["/docs", "1"], ["/pricing", "1"]]);
    // The card of the property filtered still shows, with the row kept.
    await table("Countries", [["\u{1F1F3}\u{1F1F1} Netherlands", "3"]]);
  });

  const sources = page.getByRole("region", { name: "Top sources", exact: true });
  await sources.getByRole("button", { name: "Filter by Google", exact: true }).click();
  await h.check("a second row adds its filter: both must hold", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").join("&") === "is,country,NL&is,source,Google");
    await chipsAre(["Country is Netherlands", "Source is Google"]);
    if (!page.url().includes("f=is,country,NL&f=is,source,Google")) throw new Error(`the URL is not readable: ${page.url()}`);
    // b3 alone: 1 page view, a bounce.
    await figures(["1", "1", "1", "100 %"]);
    await table("Top pages", [["/", "1"]]);
  });
  await shot("overview-filters");
  await atPhoneWidth("the Overview with two filters", "overview-filters-phone");

  await page.getByRole("button", { name: "Remove filter Country is Netherlands", exact: true }).click();
  const googleOnly = async () => {
    await chipsAre(["Source is Google"]);
    same("the URL's filters", filtersInUrl(), ["is,source,Google"]);
    // a1, a2, b3: 3 page views from Google, 3 visits, bounces a2 and b3.
    await figures(["3", "3", "3", "66.7 %"]);
    await table("Countries", [
      ["\u{1F1FA}\u{1F1F8} United States", "2"],
      ["\u{1F1F3}\u{1F1F1} Netherlands", "1"],
    ]);
  };
  await h.check("× removes its chip's filter and no other", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").join() === "is,source,Google");
    await googleOnly();
  });
  await page.reload();
  await h.check("a reload restores the filters from the URL", googleOnly);
  await page.goBack();
  await h.check("back restores the filters before the chip was removed", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").length === 2);
    await chipsAre(["Country is Netherlands", "Source is Google"]);
    await figures(["1", "1", "1", "100 %"]);
  });
  await page.goForward();
  await h.check("forward returns to the source alone", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").length === 1);
    await googleOnly();
  });

  await h.check("a source still opens its referrers, and a referrer filters too", async () => {
    const toggle = sources.getByRole("button", { name: "Google", exact: true });
    await toggle.click();
    if ((await toggle.getAttribute("aria-expanded")) !== "true") throw new Error("the source does not open");
    await table("Referrer of Google", [["https://www.google.com/", "2"], ["https://www.google.de/", "1"]]);
    await sources.getByRole("table", { name: "Referrer of Google", exact: true }).getByRole("button", { name: "https://www.google.com/", exact: true }).click();
    await page.waitForURL((u) => u.searchParams.getAll("f").join("&") === "is,source,Google&is,referrer,https://www.google.com/");
    await chipsAre(["Source is Google", "Referrer is https://www.google.com/"]);
    // a1 and b3: 2 page views, 2 visits, b3 bounced.
    await figures(["2", "2", "2", "50 %"]);
  });

  await page.getByRole("button", { name: "Clear all", exact: true }).click();
  await h.check("Clear all removes every filter", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").length === 0);
    if ((await page.getByTestId("filter-chips").count()) !== 0) throw new Error("chips remain");
    await figures(["6", "6", "10", "50 %"]);
  });

  await sources.getByRole("tab", { name: "Channel", exact: true }).click();
  await h.check("the Top sources card's Channel tab filters by a channel", async () => {
    await sources.getByRole("table", { name: "Channels", exact: true }).getByRole("button", { name: "AI assistants", exact: true }).click();
    await page.waitForURL((u) => u.searchParams.getAll("f").join() === "is,channel,ai");
    await chipsAre(["Channel is AI assistants"]);
    // b1's landing page view from chatgpt.com, 1 page view; its visit (2 pages) no bounce.
    await figures(["1", "1", "1", "0 %"]);
    await table("Channels", [["AI assistants", "1"]]);
  });
  await page.getByRole("button", { name: "Remove filter Channel is AI assistants", exact: true }).click();
  await page.waitForURL((u) => u.searchParams.getAll("f").length === 0);

  const devices = page.getByRole("region", { name: "Devices", exact: true });
  await devices.getByRole("tab", { name: "Device", exact: true }).click();
  await h.check("a device row is a control the keyboard reaches: Enter filters by it", async () => {
    const mobile = devices.getByRole("table", { name: "Device types", exact: true }).getByRole("button", { name: "Mobile", exact: true });
    await mobile.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.searchParams.getAll("f").join() === "is,device_type,mobile");
    await chipsAre(["Device is Mobile"]);
    // a1 and a2 on iPhones: 3 page views, 2 visits, a2 bounced.
    await figures(["2", "2", "3", "50 %"]);
    await table("Device types", [["Mobile", "3"]]);
  });
  await page.getByRole("button", { name: "Remove filter Device is Mobile", exact: true }).click();
  await page.waitForURL((u) => u.searchParams.getAll("f").length === 0);

  await page.getByRole("table", { name: "Entry pages", exact: true }).getByRole("button", { name: "/", exact: true }).click();
  await h.check("an entry page filters the visits, and the page-view cards say why they do not follow", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").join() === "is,entry_page,/");
    await chipsAre(["Entry page is /"]);
    // a1, b1, b3, c1 enter by /: 4 visitors, 4 visits, 2 + 2 + 1 + 3 = 8
    // page views of those visits, b3 bounced: 25 %.
    await figures(["4", "4", "8", "25 %"]);
    await table("Exit pages", [["/", "1"], ["/docs", "1"], ["/pricing", "1"], ["/signup", "1"]]);
    const notes = await page.getByTestId("visit-only").count();
    if (notes !== 5) throw new Error(`${notes} notes, want 5 (the chart, top pages, sources, countries, devices)`);
  });
  await page.getByRole("table", { name: "Exit pages", exact: true }).getByRole("button", { name: "/pricing", exact: true }).click();
  await h.check("an exit page combines with it", async () => {
    await page.waitForURL((u) => u.searchParams.getAll("f").join("&") === "is,entry_page,/&is,exit_page,/pricing");
    await chipsAre(["Entry page is /", "Exit page is /pricing"]);
    // a1 alone: / → /pricing.
    await figures(["1", "1", "2", "0 %"]);
  });
  await shot("overview-filters-entry");
  await atPhoneWidth("the Overview filtered by entry and exit page", "overview-filters-entry-phone");
  await h.check("no script error or blocked resource on the way", noPageErrors);
}
