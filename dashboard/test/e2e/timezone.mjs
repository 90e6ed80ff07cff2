// The time-zone part of the dashboard's end-to-end test: the product's
// zone set in Settings to Pacific/Kiritimati (UTC+14, so that its date
// differs from UTC's for fourteen hours of every day) makes "Today" and
// "Yesterday" the zone's days, says so beside the date picker, and puts
// an event sent at the zone's midnight, which is still the day before in
// UTC, in the zone's today on the Trends page; at 1280 and 390 px
// (screenshots timezone-settings.png, timezone-trends.png,
// timezone-trends-phone.png).
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

const ZONE = "Pacific/Kiritimati";

/** zoneDay is the zone's date at instant t, YYYY-MM-DD. */
function zoneDay(t, zone = ZONE) {
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(t));
}

/**
 * timeZonePages runs the checks on a fresh server. `h` holds the harness's
 * check and startStrata, the owner's credentials and the artifacts folder.
 */
export async function timeZonePages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, noSidewaysScroll, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  const form = page.getByRole("form", { name: "Time zone" });
  await h.check("Settings offers the IANA zones, the browser's own first, and saves one", async () => {
    const select = form.getByLabel("Time zone");
    const first = await select.locator("option").first().textContent();
    const own = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    if (first !== own) throw new Error(`the first zone is ${first}, the browser's is ${own}`);
    if ((await select.inputValue()) !== "UTC") throw new Error(`a new product's zone is ${await select.inputValue()}`);
    await select.selectOption(ZONE);
    await form.getByRole("button", { name: "Save time zone" }).click();
    await form.getByText("Saved.").waitFor();
    const saved = await page.evaluate(async (pid) => (await (await fetch(`/api/v1/products/${pid}`)).json()).timeZone, productId);
    if (saved !== ZONE) throw new Error(`the server keeps ${saved}`);
  });
  await shot("timezone-settings");

  // An event at the zone's midnight plus a minute: the zone's today,
  // yesterday in UTC (midnight at +14 is 10:00 UTC the day before).
  let today = zoneDay(Date.now());
  const [y, m, d] = today.split("-").map(Number);
  const at = Date.UTC(y, m - 1, d, 0, 1) - 14 * 3_600_000;
  const res = await fetch(strata.url + "/e", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({ batch: [{ event_name: "tz_event", distinct_id: "tz1", timestamp: new Date(at).toISOString() }] }),
  });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);

  await page.goto(`${strata.url}/trends?product=${productId}&range=today`);
  await page.getByRole("heading", { name: "Trends" }).waitFor();
  await h.check('"Today" is the zone\'s today and the picker names the zone', async () => {
    // Right at the zone's midnight the day may turn while the page loads.
    const shown = await page.locator(".range-days").textContent();
    const now = zoneDay(Date.now());
    if (shown !== `${today} – ${today}` && shown !== `${now} – ${now}`) throw new Error(`"Today" shows ${shown}; the zone's today is ${today}`);
    today = shown.slice(0, 10);
    const zone = await page.getByTestId("range-zone").textContent();
    if (zone !== `Times in ${ZONE}`) throw new Error(zone);
  });
  await h.check('"Yesterday" is the day before the zone\'s today', async () => {
    await page.getByLabel("Date range").selectOption("yesterday");
    await page.waitForURL(/range=yesterday/);
    const [ty, tm, td] = today.split("-").map(Number);
    const want = new Date(Date.UTC(ty, tm - 1, td) - 86_400_000).toISOString().slice(0, 10);
    const shown = await page.locator(".range-days").textContent();
    if (shown !== `${want} – ${want}`) throw new Error(`"Yesterday" shows ${shown}, want ${want}`);
    await page.getByLabel("Date range").selectOption("today");
    await page.waitForURL(/range=today/);
  });
  await page.getByLabel("Series 1 event").fill("tz_event");
  await page.getByRole("button", { name: "Run trend" }).click();
  await h.check("the event sent at the zone's midnight counts in the zone's today on the Trends page", async () => {
    await page.locator(".chart-box canvas").waitFor();
    const details = page.locator(".data-table").first();
    if ((await details.getAttribute("open")) === null) await details.locator("summary").click();
    await page.waitForFunction(
      () => [...document.querySelectorAll(".data-table tbody tr td:nth-child(2)")].some((c) => c.textContent.trim() === "1"),
      null,
      { timeout: 10_000 },
    );
    const rows = await details.locator("tbody tr").allTextContents();
    if (rows.length !== 1) throw new Error(`"Today" has ${rows.length} day rows: ${rows.join(" | ")}`);
    // The API agrees, and in UTC the same event is on the day before.
    const answer = await page.evaluate(
      async ([pid, day]) => {
        const r = await fetch(`/api/v1/query/trend?product=${pid}`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ series: [{ event: "tz_event" }], dateFrom: day, dateTo: day }),
        });
        return (await r.json()).series[0].data;
      },
      [productId, today],
    );
    if (answer.length !== 1 || answer[0].date !== today || answer[0].value !== 1) throw new Error(JSON.stringify(answer));
    if (new Date(at).toISOString().slice(0, 10) === today) throw new Error("the event is on the same day in UTC: the check proves nothing");
  });
  await shot("timezone-trends");
  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the picker's zone fits and the page does not push sideways", async () => {
    const box = await page.getByTestId("range-zone").boundingBox();
    if (!box || box.x + box.width > 390) throw new Error(`the zone reaches ${box && box.x + box.width} px`);
    await noSidewaysScroll();
  });
  await shot("timezone-trends-phone");
  await h.check("the pages raised no errors", noPageErrors);
}
