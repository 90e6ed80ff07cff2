// The funnel users part of the dashboard's end-to-end test (issue 40 item
// 5 and the Funnels page's views; docs/dashboard.md, "Funnels"), on a
// server of its own. Sixty users do `visited`, ten seconds apart; the
// first five of them do `signed_up` 90 seconds after. On the Funnels page
// (visited → signed_up), "Dropped off" after step 1 lists the other 55,
// newest first, 50 and then 5 more with "More users"; a user's link opens
// their page. Time to convert shows the median (1.5 min) and the five users
// in the 1–5 min bucket; Over time shows 60 entered and 5 converted.
// Every third user visits on the plan pro, the others on free (users 0
// and 3 of the five who sign up are pro): broken down by plan, Over time
// has a line and a row for free (40 entered, 3 converted) and pro (20, 2),
// and Time to convert a row of medians for all users, free and pro, with
// free's histogram first and pro's when picked.
// Screenshots at 1280 and 390 px: funnel-users.png, funnel-users-phone.png,
// funnel-time.png, funnel-time-phone.png, funnel-over-time.png,
// funnel-over-time-phone.png, funnel-over-time-breakdown.png,
// funnel-over-time-breakdown-phone.png, funnel-time-breakdown.png,
// funnel-time-breakdown-phone.png. E2E_ONLY=funnelusers runs it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** funnelUserPages runs the checks; `h` is the harness's (see run.mjs). */
export async function funnelUserPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  const start = Date.now() - 3_600_000;
  const at = (sec) => new Date(start + sec * 1000).toISOString();
  const id = (i) => `fu${String(i).padStart(2, "0")}`;
  const batch = [];
  for (let i = 0; i < 60; i++) {
    batch.push({ event_name: "visited", distinct_id: id(i), timestamp: at(i * 10), properties: { plan: i % 3 === 0 ? "pro" : "free" } });
    if (i < 5) batch.push({ event_name: "signed_up", distinct_id: id(i), timestamp: at(i * 10 + 90) });
  }
  await h.check("the users' events are accepted", async () => {
    const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  });

  const funnelURL = `${strata.url}/funnels?product=${productId}&step=visited&step=signed_up`;
  await page.goto(funnelURL);
  await h.check("the funnel counts 60 → 5", async () => {
    await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=funnel-result] [data-testid=step-count]")].map((e) => e.textContent).join(",") === "60,5", null, { timeout: 30_000 });
  });
  const panel = page.getByTestId("funnel-users");
  const listed = () => panel.getByTestId("funnel-user").locator("a:first-child").allTextContents();
  await h.check("Dropped off after step 1 lists the 50 newest of the 55 who dropped off, newest first", async () => {
    await page.getByRole("button", { name: "Dropped off after step 1: 55" }).click();
    await panel.getByTestId("funnel-user").nth(49).waitFor();
    const title = await panel.locator("h2").textContent();
    if (!title.includes("Dropped off after step 1: visited") || !title.includes("55 users")) throw new Error(title);
    const want = [];
    for (let i = 59; i >= 10; i--) want.push(id(i));
    const got = await listed();
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(JSON.stringify(got));
  });
  await shot("funnel-users");
  await atPhoneWidth("the Funnels page's users panel", "funnel-users-phone");
  await h.check("More users lists the other 5, and the list is exactly the users seeded to drop off", async () => {
    await panel.getByRole("button", { name: "More users" }).click();
    await panel.getByTestId("funnel-user").nth(54).waitFor();
    const got = await listed();
    const want = [];
    for (let i = 59; i >= 5; i--) want.push(id(i));
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(JSON.stringify(got));
    if (await panel.getByRole("button", { name: "More users" }).count()) throw new Error("More users after the last page");
  });
  await h.check("Converted at step 2 lists the five who signed up", async () => {
    await page.getByRole("button", { name: "Converted at step 2: 5" }).click();
    await page.waitForFunction(() => document.querySelector("#funnel-users-title")?.textContent?.includes("Converted at step 2"));
    // The title changes at the click; the list only when its page arrives
    // (until then the 55 of the last check are still listed).
    const want = JSON.stringify([id(4), id(3), id(2), id(1), id(0)]);
    let got = "";
    for (const until = Date.now() + 15_000; Date.now() < until; await page.waitForTimeout(100)) {
      if ((got = JSON.stringify(await listed())) === want) break;
    }
    if (got !== want) throw new Error(got);
  });
  await h.check("a listed user's link opens their page", async () => {
    await panel.getByRole("link", { name: id(4), exact: true }).click();
    await page.waitForURL((u) => u.pathname === `/users/${id(4)}`);
    await page.getByTestId("user-events").waitFor();
    const text = await page.getByTestId("user-events").textContent();
    if (!text.includes("signed_up") || !text.includes("visited")) throw new Error(text);
  });

  await page.goto(funnelURL);
  await h.check("Time to convert shows the median and the histogram of the five users", async () => {
    await page.getByRole("button", { name: "Time to convert" }).click();
    await page.waitForURL(/view=time_to_convert/);
    await page.getByTestId("funnel-time-median").waitFor();
    const median = await page.getByTestId("funnel-time-median").textContent();
    if (median !== "1.5 min") throw new Error(`median ${median}`);
    const rows = await page.getByTestId("funnel-time-bucket").evaluateAll((trs) => trs.map((tr) => [tr.querySelector("th").textContent, tr.querySelector("td.num").textContent]));
    const nonEmpty = rows.filter((r) => r[1] !== "0");
    if (JSON.stringify(nonEmpty) !== JSON.stringify([["1 min – 5 min", "5"]])) throw new Error(JSON.stringify(rows));
  });
  await shot("funnel-time");
  await atPhoneWidth("the Funnels page's Time to convert view", "funnel-time-phone");
  await h.check("Over time shows the 60 who entered and the 5 who converted", async () => {
    await page.getByRole("button", { name: "Over time" }).click();
    await page.waitForURL(/view=trends/);
    await page.getByTestId("funnel-over-time-row").first().waitFor();
    const rows = await page.getByTestId("funnel-over-time-row").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    const entered = rows.reduce((n, r) => n + Number(r[1]), 0);
    const converted = rows.reduce((n, r) => n + Number(r[2]), 0);
    if (entered !== 60 || converted !== 5) throw new Error(JSON.stringify(rows));
    for (const r of rows) {
      const pct = Number(r[1]) ? Math.round((Number(r[2]) / Number(r[1])) * 1000) / 10 : 0;
      if (r[3] !== `${pct}%`) throw new Error(JSON.stringify(r));
    }
  });
  await shot("funnel-over-time");
  await atPhoneWidth("the Funnels page's Over time view", "funnel-over-time-phone");
  await h.check("the week interval is kept in the URL and still counts 60 and 5", async () => {
    await page.locator("select[name=interval]").selectOption("week");
    await page.waitForURL(/interval=week/);
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll("[data-testid=funnel-over-time-row]")];
      const sum = (k) => rows.reduce((n, r) => n + Number(r.children[k].textContent), 0);
      // Weeks start on Monday: every row's date is one (the day rows before them are not).
      const mondays = rows.every((r) => new Date(`${r.children[0].textContent}T00:00:00Z`).getUTCDay() === 1);
      return rows.length >= 1 && mondays && sum(1) === 60 && sum(2) === 5;
    }, null, { timeout: 20_000 });
  });

  // The views broken down by plan: each value's line, medians and histograms.
  await page.goto(`${funnelURL}&breakdown=properties.plan`);
  await page.getByTestId("funnel-breakdown-row").nth(1).waitFor();
  await h.check("Over time by plan has a line and a row for free and for pro", async () => {
    await page.getByRole("button", { name: "Over time" }).click();
    await page.waitForURL(/breakdown=properties.plan.*view=trends/);
    await page.getByTestId("funnel-over-time-breakdown-row").nth(1).waitFor();
    const rows = await page.getByTestId("funnel-over-time-breakdown-row").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    if (JSON.stringify(rows) !== JSON.stringify([["free", "40", "3", "7.5%"], ["pro", "20", "2", "10%"]])) throw new Error(JSON.stringify(rows));
    // The chart's lines, in its data table: one column per value.
    const heads = await page.locator("[data-testid=funnel-over-time] .data-table thead th").allTextContents();
    if (JSON.stringify(heads) !== JSON.stringify(["Date", "free", "pro"])) throw new Error(JSON.stringify(heads));
  });
  await shot("funnel-over-time-breakdown");
  await atPhoneWidth("the Funnels page's Over time view by plan", "funnel-over-time-breakdown-phone");
  await h.check("Time to convert by plan tables each value's median and shows free's histogram, then pro's", async () => {
    await page.getByRole("button", { name: "Time to convert" }).click();
    await page.waitForURL(/breakdown=properties.plan.*view=time_to_convert/);
    await page.getByTestId("funnel-time-breakdown-row").nth(2).waitFor();
    const rows = await page.getByTestId("funnel-time-breakdown-row").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    const want = [["All users", "1.5 min of 5"], ["free", "1.5 min of 3"], ["pro", "1.5 min of 2"]];
    if (JSON.stringify(rows) !== JSON.stringify(want)) throw new Error(JSON.stringify(rows));
    const filled = async () =>
      (await page.getByTestId("funnel-time-bucket").evaluateAll((trs) => trs.map((tr) => [tr.querySelector("th").textContent, tr.querySelector("td.num").textContent]))).filter((r) => r[1] !== "0");
    let got = await filled();
    if (JSON.stringify(got) !== JSON.stringify([["1 min – 5 min", "3"]])) throw new Error(`free: ${JSON.stringify(got)}`);
    await page.locator("select[name=time-row]").selectOption({ label: "pro" });
    await page.waitForFunction(() => document.querySelector("[data-testid=funnel-time-step] h3")?.textContent?.includes("pro"));
    got = await filled();
    if (JSON.stringify(got) !== JSON.stringify([["1 min – 5 min", "2"]])) throw new Error(`pro: ${JSON.stringify(got)}`);
  });
  await h.check("the row whose histograms show is kept in the URL: a reload shows pro's again, then all users'", async () => {
    await page.waitForURL((u) => u.searchParams.get("histograms") === "v:pro");
    await page.reload();
    await page.waitForFunction(() => document.querySelector("[data-testid=funnel-time-step] h3")?.textContent?.includes("pro"));
    const picked = await page.locator("select[name=time-row]").evaluate((s) => s.selectedOptions[0].textContent);
    if (picked !== "pro") throw new Error(`the choice after a reload: ${picked}`);
    await page.locator("select[name=time-row]").selectOption({ label: "All users" });
    await page.waitForURL((u) => u.searchParams.get("histograms") === "all");
    await page.waitForFunction(() => document.querySelector("[data-testid=funnel-time-step] h3")?.textContent?.includes("all users"));
    const all = await page.getByTestId("funnel-time-bucket").evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector("th").textContent, tr.querySelector("td.num").textContent]).filter((r) => r[1] !== "0"));
    if (JSON.stringify(all) !== JSON.stringify([["1 min – 5 min", "5"]])) throw new Error(`all users: ${JSON.stringify(all)}`);
    await page.locator("select[name=time-row]").selectOption({ label: "pro" });
    await page.waitForURL((u) => u.searchParams.get("histograms") === "v:pro");
  });
  await shot("funnel-time-breakdown");
  await atPhoneWidth("the Funnels page's Time to convert view by plan", "funnel-time-breakdown-phone");
  await h.check("the pages raised no errors", async () => noPageErrors());
}
