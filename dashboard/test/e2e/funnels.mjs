// The funnels part of the dashboard's end-to-end test (issue 40 items 1
// and 2; docs/queries.md, "Funnels beyond event names"), on a server of
// its own. Four users browse: three see /pricing then /signup (two in
// Chrome, one in Firefox), of whom two sign up, one of them after a
// logout between /signup and signing up; one sees /signup only. The owner
// builds /pricing → /signup → signed up on the Funnels page with a path
// filter on each $pageview step (the trend's filter editor), an exclusion
// of logout between steps 2 and 3 and a breakdown by browser, runs it and
// reads the counts, the steps named by their filters and each browser's
// funnel (one user each, ties by name); the URL names the whole funnel. Screenshots at 1280 and 390 px:
// funnels-deep.png, funnels-deep-phone.png. E2E_ONLY=funnels runs it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

const agents = {
  chrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Safari/537.36",
  firefox: "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
};

/** funnelPages runs the checks; `h` is the harness's (see run.mjs). */
export async function funnelPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  const start = Date.now() - 3_600_000;
  const at = (min) => new Date(start + min * 60_000).toISOString();
  const view = (user, agent, path, min) => ({ event_name: "$pageview", distinct_id: user, timestamp: at(min), user_agent: agents[agent], url: `https://shop.example${path}` });
  const ev = (name, user, agent, min) => ({ event_name: name, distinct_id: user, timestamp: at(min), user_agent: agents[agent] });
  const batch = [
    view("u1", "chrome", "/pricing", 0), view("u1", "chrome", "/signup", 1), ev("signed_up", "u1", "chrome", 2),
    view("u2", "chrome", "/pricing", 0), view("u2", "chrome", "/signup", 1), ev("logout", "u2", "chrome", 2), ev("signed_up", "u2", "chrome", 3),
    view("u3", "firefox", "/pricing", 0), view("u3", "firefox", "/signup", 1),
    view("u4", "firefox", "/signup", 0), ev("signed_up", "u4", "firefox", 1),
  ];
  await h.check("the users' events are accepted", async () => {
    const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  });

  await page.goto(`${strata.url}/funnels?product=${productId}`);
  const form = page.getByRole("form", { name: "Funnel builder" });
  await form.waitFor();
  await h.check("a funnel of two filtered $pageview steps, an exclusion and a breakdown runs and names the whole funnel in the URL", async () => {
    await form.getByLabel("Step 1 event").fill("$pageview");
    await form.getByRole("button", { name: "Add step 1 filter" }).click();
    await form.getByLabel("Step 1 filter 1 value").fill("/pricing");
    await form.getByLabel("Step 2 event").fill("$pageview");
    await form.getByRole("button", { name: "Add step 2 filter" }).click();
    await form.getByLabel("Step 2 filter 1 value").fill("/signup");
    await form.getByLabel("Step 3 event").fill("signed_up");
    await form.getByRole("button", { name: "Add exclusion" }).click();
    await form.getByLabel("Exclusion 1 event").fill("logout");
    await form.getByLabel("Exclusion 1 from step").selectOption({ value: "1" });
    await form.getByLabel("Breakdown").fill("browser");
    await form.getByRole("button", { name: "Run funnel" }).click();
    await page.waitForURL(/breakdown=browser/);
    const search = new URL(page.url()).searchParams;
    const want = { where: ["0:path:eq:/pricing", "1:path:eq:/signup"], exclude: ["1:2:logout"], step: ["$pageview", "$pageview", "signed_up"] };
    for (const [k, v] of Object.entries(want)) {
      if (JSON.stringify(search.getAll(k)) !== JSON.stringify(v)) throw new Error(`${k}: ${JSON.stringify(search.getAll(k))}`);
    }
  });
  await h.check("the counts leave out the user who logged out, and the steps say their filters", async () => {
    const counts = page.getByTestId("step-count");
    await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=step-count]")].map((e) => e.textContent).join(",") === "2,2,1");
    const names = await page.getByTestId("funnel-step").locator("th").allTextContents();
    if (!names[0].includes("path = /pricing") || !names[1].includes("path = /signup")) throw new Error(JSON.stringify(names));
    if ((await counts.count()) !== 3) throw new Error("not three steps");
  });
  await h.check("each browser has its funnel, most users first", async () => {
    const rows = await page.getByTestId("funnel-breakdown-row").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.querySelector("[data-testid=breakdown-count]")?.textContent ?? c.textContent)));
    const want = [
      ["Chrome", "1", "1", "1", "100%"],
      ["Firefox", "1", "1", "0", "0%"],
    ];
    if (JSON.stringify(rows) !== JSON.stringify(want)) throw new Error(JSON.stringify(rows));
  });
  await shot("funnels-deep");
  await atPhoneWidth("the Funnels page with step filters, an exclusion and a breakdown", "funnels-deep-phone");
  await h.check("the pages raised no errors", async () => noPageErrors());
}
