// The sources part of the dashboard's end-to-end test: page views sent
// with referrers and UTM tags as browsers send them (from another site,
// from the site itself, with and without tags) must show on the Overview's
// Top sources (same-site moves left out, a source's full referrers one
// click away) and on Acquisition's channels, sources and UTM tables, with
// the AI bot panel kept, at 1280 and 390 px (screenshots sources.png,
// sources-phone.png, acquisition-sources.png, acquisition-sources-phone.png).
import { join } from "node:path";
import { setUpOwner } from "./owner.mjs";

/**
 * sourcePages runs the checks on a fresh server. `h` holds the harness's
 * check and startStrata, the owner's credentials and the artifacts folder.
 */
export async function sourcePages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  h.cleanups.push(() => context.close());
  const page = await context.newPage();
  const shot = (name) => page.screenshot({ path: join(h.artifacts, `${name}.png`), fullPage: true });

  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // Each visitor: a landing page view with where it came from, then a move
  // within the site (its referrer the landing page), which is no source.
  const site = "https://shop.example.com";
  const visits = [
    ...Array.from({ length: 5 }, (_, i) => ({ id: `g${i}`, ref: i % 2 ? "https://www.google.com/" : "https://www.google.de/", url: "/" })),
    ...Array.from({ length: 3 }, (_, i) => ({ id: `c${i}`, ref: "https://chatgpt.com/", url: "/pricing" })),
    ...Array.from({ length: 2 }, (_, i) => ({ id: `n${i}`, ref: "", url: "/?utm_source=newsletter&utm_medium=email&utm_campaign=spring" })),
    ...Array.from({ length: 2 }, (_, i) => ({ id: `b${i}`, ref: "https://blog.example.org/post", url: "/docs" })),
    { id: "d0", ref: "", url: "/" },
  ];
  const batch = visits.flatMap((v) => [
    { event_name: "$pageview", distinct_id: v.id, url: site + v.url, referrer: v.ref },
    { event_name: "$pageview", distinct_id: v.id, url: site + "/checkout", referrer: site + v.url },
  ]);
  const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);

  const rows = (label) =>
    page.getByRole("table", { name: label, exact: true }).locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim())));
  await page.reload();
  await h.check("Overview's Top sources groups referrers by source and leaves same-site moves out", async () => {
    await page.getByRole("table", { name: "Top sources", exact: true }).waitFor();
    const got = JSON.stringify(await rows("Top sources"));
    const want = JSON.stringify([["Google", "5"], ["ChatGPT", "3"], ["blog.example.org", "2"], ["newsletter", "2"]]);
    if (got !== want) throw new Error(`${got}, want ${want}`);
  });
  await h.check("a source opens its full referrers", async () => {
    await page.getByRole("button", { name: "Google", exact: true }).click();
    const table = page.getByRole("table", { name: "Referrer of Google", exact: true });
    await table.waitFor();
    const got = JSON.stringify(await rows("Referrer of Google"));
    const want = JSON.stringify([["https://www.google.de/", "3"], ["https://www.google.com/", "2"]]);
    if (got !== want) throw new Error(`${got}, want ${want}`);
  });
  await shot("sources");

  await page.getByRole("link", { name: "Acquisition", exact: true }).first().click();
  await page.getByRole("heading", { name: "Acquisition" }).waitFor();
  await h.check("Acquisition shows visitors by channel, source and UTM tag, and keeps the AI bot panel", async () => {
    await page.getByRole("table", { name: "Channels", exact: true }).waitFor();
    const channels = JSON.stringify(await rows("Channels"));
    const want = JSON.stringify([["Search", "5"], ["AI assistants", "3"], ["Email", "2"], ["Referral", "2"], ["Direct", "1"]]);
    if (channels !== want) throw new Error(`channels ${channels}, want ${want}`);
    for (const [table, expected] of [["UTM sources", [["newsletter", "2"]]], ["UTM mediums", [["email", "2"]]], ["UTM campaigns", [["spring", "2"]]]]) {
      // Each card loads on its own: wait for its rows, not only for the first card's.
      await page.getByRole("table", { name: table, exact: true }).locator("tbody tr").first().waitFor();
      const got = JSON.stringify(await rows(table));
      if (got !== JSON.stringify(expected)) throw new Error(`${table} ${got}`);
    }
    await page.getByRole("heading", { name: "AI bot activity" }).waitFor();
    await page.getByRole("heading", { name: "Top pages accessed by AI" }).waitFor();
  });
  await shot("acquisition-sources");
  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the acquisition tables do not push the page sideways", async () => {
    await page.waitForTimeout(300);
    const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (scroll > width) throw new Error(`the page is ${scroll} px wide in a ${width} px viewport`);
  });
  await shot("acquisition-sources-phone");
  await page.goto(strata.url + `/?product=${productId}`);
  await h.check("at 390 px the Overview's Top sources fit, a source's referrers one tap away", async () => {
    await page.getByRole("table", { name: "Top sources", exact: true }).waitFor();
    await page.getByRole("button", { name: "ChatGPT", exact: true }).click();
    await page.getByRole("table", { name: "Referrer of ChatGPT", exact: true }).waitFor();
    await page.waitForTimeout(300);
    const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (scroll > width) throw new Error(`the page is ${scroll} px wide in a ${width} px viewport`);
  });
  await shot("sources-phone");
}
