// The live-visitors part of the dashboard's end-to-end test: page views
// sent as the SDK sends them (with sent_at, so the server corrects the
// client's clock), three of them a minute old and one ten minutes old,
// must show as "3 visitors now" on the Overview; two more visitors must
// show within the refresh (ten seconds, plus the server's three-second
// cache) without the page reloading; at 1280 and 390 px (screenshots
// live.png, live-phone.png), the phone's page not pushed sideways.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/**
 * livePages runs the checks on a fresh server. `h` holds the harness's
 * check and startStrata, the owner's credentials and the artifacts folder.
 */
export async function livePages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, noSidewaysScroll, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 800 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  const send = async (events) => {
    const now = Date.now();
    const batch = events.map((e) => ({
      event_name: "$pageview",
      distinct_id: e.id,
      url: "https://shop.example.com/",
      timestamp: new Date(now - e.ago).toISOString(),
    }));
    const body = JSON.stringify({ batch, sent_at: new Date(now).toISOString() });
    const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  };
  // The ten-minute-old view arrives now, as a late batch would: it is
  // not a visitor now.
  await send([
    { id: "v1", ago: 60_000 },
    { id: "v2", ago: 90_000 },
    { id: "v3", ago: 30_000 },
    { id: "v1", ago: 10_000 },
    { id: "old", ago: 10 * 60_000 },
  ]);
  await page.goto(strata.url + `/?product=${productId}`);
  const live = page.getByTestId("live-count");
  await h.check("the Overview shows the visitors of the last five minutes, older views left out", async () => {
    // The setup page's Overview asked before the views were sent, and the
    // server may answer from that count for its three-second cache: the
    // views may show only at the next refresh.
    await page.waitForFunction(() => document.querySelector("[data-testid=live-count]")?.textContent === "3 visitors now", null, { timeout: 15_000 });
    const polite = await live.getAttribute("aria-live");
    if (polite !== "polite") throw new Error(`aria-live ${polite}`);
  });
  await shot("live");

  await h.check("two new visitors show within the refresh, without a reload", async () => {
    await page.evaluate(() => {
      window.__sameDocument = true;
    });
    const started = Date.now();
    await send([
      { id: "v4", ago: 0 },
      { id: "v5", ago: 1_000 },
    ]);
    await page.waitForFunction(() => document.querySelector("[data-testid=live-count]")?.textContent === "5 visitors now", null, { timeout: 15_000 });
    const same = await page.evaluate(() => window.__sameDocument === true);
    if (!same) throw new Error("the page reloaded");
    console.log(`  the new count showed after ${Date.now() - started} ms`);
  });

  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the visitors now fit beside the title and the page does not push sideways", async () => {
    await live.waitFor();
    const box = await live.boundingBox();
    if (!box || box.x + box.width > 390) throw new Error(`the count reaches ${box && box.x + box.width} px`);
    await noSidewaysScroll();
  });
  await shot("live-phone");
  await h.check("the page raised no errors while it refreshed", noPageErrors);
}
