// The Overview's sessions and its comparison with the previous period
// (issue 37 items 1 and 5), on a server of its own: visits with known
// session ids sent with timestamps in the last 7 days and in the 7 days
// before, whose figures, changes, entry and exit pages are counted here by
// hand from docs/queries.md's rules ("Sessions") and docs/dashboard.md's
// previous period, and must show exactly; the chart's overlay of the
// previous period, toggled on, in the URL and kept over a reload, aligned
// bucket by bucket in the chart's data table. Screenshots at 1280 and
// 390 px: overview-sessions.png, overview-sessions-phone.png.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

const day = 86_400_000;

/** overviewPages runs the checks; `h` is the harness's (see run.mjs). */
export async function overviewPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // The range is the last 7 days (today and the 6 before, UTC); the
  // previous period the 7 days before them. Visits are at noon three days
  // ago and ten days ago: the fourth day of each period, so that the
  // overlay puts them on the same row of the chart.
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const now = today - 3 * day + 12 * 3_600_000;
  const before = today - 10 * day + 12 * 3_600_000;
  const site = "https://shop.example.com";
  const at = (base, minutes) => new Date(base + minutes * 60_000).toISOString();
  const view = (user, session, base, minutes, path) => ({
    event_name: "$pageview",
    distinct_id: user,
    url: site + path,
    timestamp: at(base, minutes),
    properties: { $session_id: session },
  });
  const batch = [
    // This period: 4 visits of 3 users.
    // u1: / → /pricing → /signup over 3 minutes (180 s, 3 pages, no bounce).
    view("u1", "s1", now, 0, "/"),
    view("u1", "s1", now, 1.5, "/pricing"),
    view("u1", "s1", now, 3, "/signup"),
    // u2: one page, a bounce (0 s).
    view("u2", "s2", now, 0, "/"),
    // u3: /docs → /pricing (60 s, 2 pages).
    view("u3", "s3", now, 10, "/docs"),
    view("u3", "s3", now, 11, "/pricing"),
    // u1 again three hours later, a new session: one page, a bounce.
    view("u1", "s4", now, 180, "/pricing"),
    // The previous period: 3 visits of 3 users.
    // u1: / → /pricing (120 s, 2 pages).
    view("u1", "p1", before, 0, "/"),
    view("u1", "p1", before, 2, "/pricing"),
    // u4: one page, a bounce.
    view("u4", "p2", before, 0, "/"),
    // u5: a page and a click 30 s later: not a bounce (30 s, 1 page).
    view("u5", "p3", before, 5, "/docs"),
    { event_name: "signup_click", distinct_id: "u5", url: site + "/docs", timestamp: at(before, 5.5), properties: { $session_id: "p3" } },
  ];
  await h.check("the visits of both periods are accepted", async () => {
    const res = await fetch(`${strata.url}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    const body = await res.json();
    if (res.status !== 202 || body.accepted !== batch.length) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  });

  // By hand. This period: visitors u1, u2, u3 = 3; visits 4; page views
  // 3 + 1 + 2 + 1 = 7; bounces s2 and s4, 2 of 4 = 50 %; duration
  // (180 + 0 + 60 + 0) / 4 = 60 s; pages per visit 7 / 4 = 1.75.
  // Previous: visitors u1, u4, u5 = 3; visits 3; page views 4; bounces p2,
  // 1 of 3 = 33.3 %; duration (120 + 0 + 30) / 3 = 50 s; pages per visit
  // 4 / 3. Changes: 0 %; +33 %; +75 %; +16.7 points (bad news); +20 %;
  // (1.75 − 4/3) / (4/3) = +31 %.
  const want = [
    ["visitors", "3", "→ 0 %", "no change from the previous 7 days", "neutral"],
    ["visits", "4", "↑ +33 %", "up 33 % from the previous 7 days", "good"],
    ["pageviews", "7", "↑ +75 %", "up 75 % from the previous 7 days", "good"],
    ["bounce-rate", "50 %", "↑ +16.7 pp", "up 16.7 percentage points from the previous 7 days", "bad"],
    ["visit-duration", "1:00", "↑ +20 %", "up 20 % from the previous 7 days", "good"],
    ["pages-per-visit", "1.75", "↑ +31 %", "up 31 % from the previous 7 days", "good"],
  ];
  const rows = (label) =>
    page
      .getByRole("table", { name: label, exact: true })
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim())));

  await page.goto(`${strata.url}/?product=${productId}&range=7d`);
  await h.check("each figure shows this period's value and its change against the previous 7 days", async () => {
    for (const [id] of want) await page.getByTestId(`change-${id}`).waitFor();
    const got = [];
    for (const [id] of want) {
      const change = page.getByTestId(`change-${id}`);
      got.push([
        id,
        (await page.getByTestId(`stat-${id}`).textContent()).trim(),
        (await change.locator("[aria-hidden=true]").textContent()).trim(),
        (await change.locator(".visually-hidden").textContent()).trim(),
        (await change.getAttribute("class")).match(/change-(\w+)/)[1],
      ]);
    }
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${JSON.stringify(got)}\nwant ${JSON.stringify(want)}`);
  });
  await h.check("the entry pages (with their bounce rate) and exit pages are the visits' first and last pages", async () => {
    await page.getByRole("table", { name: "Entry pages", exact: true }).waitFor();
    const entry = JSON.stringify(await rows("Entry pages"));
    const wantEntry = JSON.stringify([["/", "2", "50 %"], ["/docs", "1", "0 %"], ["/pricing", "1", "100 %"]]);
    if (entry !== wantEntry) throw new Error(`entry ${entry}, want ${wantEntry}`);
    const exit = JSON.stringify(await rows("Exit pages"));
    const wantExit = JSON.stringify([["/pricing", "2"], ["/", "1"], ["/signup", "1"]]);
    if (exit !== wantExit) throw new Error(`exit ${exit}, want ${wantExit}`);
  });
  await h.check("the entry and exit pages sit beside the top pages", async () => {
    await page.getByRole("table", { name: "Top pages", exact: true }).waitFor();
    const tops = await Promise.all(["Top pages", "Entry pages", "Exit pages"].map(async (n) => (await page.getByRole("region", { name: n, exact: true }).boundingBox()).y));
    if (new Set(tops.map(Math.round)).size !== 1) throw new Error(`the cards start at ${tops.join(", ")} px`);
  });

  // The chart's data table gives the chart's numbers: one column per line.
  const table = async () => {
    const details = page.locator(".data-table").first();
    if ((await details.getAttribute("open")) === null) await details.locator("summary").click();
    const head = await details.locator("thead th").allTextContents();
    const body = await details.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => td.textContent.trim())));
    return { head, body };
  };
  const toggle = page.getByLabel("Compare with the previous period");
  await h.check("without ?compare the chart draws this period only", async () => {
    if (await toggle.isChecked()) throw new Error("the overlay is on by default");
    const { head } = await table();
    if (JSON.stringify(head) !== JSON.stringify(["Date", "Visitors", "Page views"])) throw new Error(head.join(" | "));
  });
  const overlaid = async () => {
    const { head, body } = await table();
    const wantHead = ["Date", "Visitors", "Page views", "Visitors, the previous 7 days", "Page views, the previous 7 days"];
    if (JSON.stringify(head) !== JSON.stringify(wantHead)) throw new Error(head.join(" | "));
    // Seven days, the fourth holding both periods' visits: 3 visitors and
    // 7 page views now, 3 and 4 ten days ago; every other day empty.
    const wantBody = Array.from({ length: 7 }, (_, i) => (i === 3 ? ["3", "7", "3", "4"] : ["0", "0", "0", "0"]));
    if (JSON.stringify(body) !== JSON.stringify(wantBody)) throw new Error(JSON.stringify(body));
    if (!new URL(page.url()).searchParams.getAll("compare").includes("previous")) throw new Error(`no compare=previous in ${page.url()}`);
    if (!(await toggle.isChecked())) throw new Error("the toggle is off");
  };
  await toggle.check();
  await h.check("the toggle overlays the previous 7 days bucket by bucket and writes compare=previous into the URL", overlaid);
  await shot("overview-sessions");
  await page.reload();
  await h.check("the overlay survives a reload", async () => {
    await page.getByTestId("change-visits").waitFor();
    await overlaid();
  });
  await atPhoneWidth("the Overview with its figures, entry and exit pages and the overlay", "overview-sessions-phone");
  await toggle.uncheck();
  await h.check("turning the overlay off drops it and compare from the URL", async () => {
    await page.waitForURL((u) => !u.searchParams.has("compare"));
    const { head } = await table();
    if (head.length !== 3) throw new Error(head.join(" | "));
  });
  await h.check("no script error or blocked resource on the way", noPageErrors);
}
