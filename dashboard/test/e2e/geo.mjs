// The Overview's Countries and Devices cards (issue 37 items 2 and 3), on
// a server of its own behind a trusted proxy (--trusted-proxies
// 127.0.0.1/32, as STRATA_TRUSTED_PROXIES): page views are sent with an
// X-Forwarded-For of public addresses that the embedded DB-IP database
// places in the United States and the Netherlands (the addresses of the Go
// test TestGeographyBehindATrustedProxy), a user agent and a
// $viewport_width each, and the cards must show exactly the counts worked
// out here: visitors by country name, a country's regions as the message
// that the database has none, DB-IP's credit, and page views by browser,
// OS, device type and screen size. Screenshots at 1280 and 390 px:
// overview-geo.png, overview-geo-phone.png.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

export const US = "8.8.8.8";
export const NL = "193.0.14.129";
export const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
export const LINUX_CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/**
 * sendFrom sends each [address, user agent, batch] of sends to /e as a
 * browser behind the trusted proxy would: the address as X-Forwarded-For
 * (none: the proxy's own), and fails unless every event is accepted.
 */
export async function sendFrom(strata, key, sends) {
  for (const [addr, ua, batch] of sends) {
    const headers = { "Content-Type": "application/json", "X-API-Key": key, "User-Agent": ua, ...(addr ? { "X-Forwarded-For": addr } : {}) };
    const res = await fetch(`${strata.url}/e`, { method: "POST", headers, body: JSON.stringify({ batch }) });
    const body = await res.json();
    if (res.status !== 202 || body.accepted !== batch.length) throw new Error(`${addr}: ${res.status} ${JSON.stringify(body)}`);
  }
}

/** geoPages runs the checks; `h` is the harness's (see run.mjs). */
export async function geoPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "", STRATA_TRUSTED_PROXIES: "127.0.0.1/32" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // The user agent is the request's, as a browser's: an event with a
  // user_agent of its own was sent for someone else and gets no location
  // (docs/ingest.md, "Geography").
  const views = (user, n, width) =>
    Array.from({ length: n }, (_, i) => ({
      event_name: "$pageview",
      distinct_id: user,
      url: `https://shop.example.com/p${i}`,
      properties: width === undefined ? {} : { $viewport_width: width },
    }));
  // From the United States: 3 visitors on iPhones, 4 page views at 390 px.
  // From the Netherlands: 2 visitors on Chrome for Linux, 3 page views at
  // 1280 px and 1 at 1920 px. With no forwarded address (the peer, the
  // proxy itself, is placed nowhere): 1 visitor, 2 page views, no width.
  const sends = [
    [US, IPHONE, [...views("g1", 2, 390), ...views("g2", 1, 390), ...views("g3", 1, 390)]],
    [NL, LINUX_CHROME, [...views("g4", 3, 1280), ...views("g5", 1, 1920)]],
    ["", LINUX_CHROME, views("g6", 2)],
  ];
  await h.check("the page views from each country are accepted", () => sendFrom(strata, key, sends));

  const rows = (label) =>
    page
      .getByRole("table", { name: label, exact: true })
      .locator(":scope > tbody > tr:not(.detail-row)")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll(":scope > td")].map((td) => td.textContent.trim())));
  const same = (got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };

  await page.goto(`${strata.url}/?product=${productId}&range=7d`);
  const countries = page.getByRole("region", { name: "Countries", exact: true });
  await h.check("the Countries card ranks visitors by country name, with the flag, and the unplaced as Unknown", async () => {
    await countries.getByRole("table", { name: "Countries", exact: true }).waitFor();
    same(await rows("Countries"), [
      ["\u{1F1FA}\u{1F1F8} United States", "3"],
      ["\u{1F1F3}\u{1F1F1} Netherlands", "2"],
      ["Unknown", "1"],
    ]);
    // The flag is for the eye only: the button's name is the country's.
    await countries.getByRole("button", { name: "Netherlands", exact: true }).waitFor();
    // Unknown filters the Overview (filters.mjs) but opens nothing.
    if ((await countries.locator("button[aria-expanded]", { hasText: "Unknown" }).count()) !== 0) throw new Error("Unknown opens as if it were a country");
  });
  await h.check("the Countries card credits DB-IP with a link, as its licence asks", async () => {
    const link = countries.getByRole("link", { name: "IP Geolocation by DB-IP", exact: true });
    const href = await link.getAttribute("href");
    if (href !== "https://db-ip.com") throw new Error(`the link goes to ${href}`);
  });
  await h.check("a country opens to say that regions and cities need a City database", async () => {
    const nl = countries.getByRole("button", { name: "Netherlands", exact: true });
    await nl.click();
    const note = countries.locator(".detail-row");
    await note.getByText("Regions and cities need a City database (--geoip-db).", { exact: true }).waitFor();
    if ((await nl.getAttribute("aria-expanded")) !== "true") throw new Error("the button does not say it is open");
    if ((await countries.getByRole("table", { name: "Region of Netherlands" }).count()) !== 0) throw new Error("an empty regions table is shown");
  });

  const devices = page.getByRole("region", { name: "Devices", exact: true });
  const tabs = [
    ["Browser", "Browsers", [["Chrome", "6"], ["Safari", "4"]]],
    ["OS", "Operating systems", [["Linux", "6"], ["iOS", "4"]]],
    ["Device", "Device types", [["Desktop", "6"], ["Mobile", "4"]]],
    ["Screen", "Screen sizes", [["Mobile (below 576 px)", "4"], ["Laptop (992–1439 px)", "3"], ["Unknown", "2"], ["Desktop (1440 px and wider)", "1"]]],
  ];
  for (const [tab, table, want] of tabs) {
    await h.check(`the Devices card's ${tab} tab shows the page views by ${table.toLowerCase()}`, async () => {
      await devices.getByRole("tab", { name: tab, exact: true }).click();
      if ((await devices.getByRole("tab", { name: tab, exact: true }).getAttribute("aria-selected")) !== "true") throw new Error("the tab is not selected");
      await devices.getByRole("table", { name: table, exact: true }).waitFor();
      same(await rows(table), want);
    });
  }
  await devices.getByRole("tab", { name: "Screen", exact: true }).scrollIntoViewIfNeeded();
  await shot("overview-geo");
  await atPhoneWidth("the Countries card, opened, and the Devices card", "overview-geo-phone");
  await h.check("no script error or blocked resource on the way", noPageErrors);
}
