// The Cohorts pages' part of the dashboard's end-to-end test (issue 41,
// items 3 and 4; docs/dashboard.md, "Cohorts"), on a server of its own.
// Users are seeded through POST /e, some with $identify traits (plan) and
// some signing up twice; a dynamic cohort made through the form ("did
// signup at least 2 times in the last 7 days" and plan = pro) holds the
// users the part itself computes from the seed, grows when more events
// come and it is recomputed, and filters a trend built on the Trends page;
// the Overview, picked from its cohort menu, in and not in it, and by a
// person property typed beside the menu; a static
// cohort comes from a CSV file and is deleted after a confirmation.
// Screenshots at 1280 and 390 px: cohorts.png, cohorts-phone.png,
// cohort.png, cohort-phone.png, overview-cohort.png,
// overview-cohort-phone.png. E2E_ONLY=cohorts runs
// it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** cohortPages runs the checks; `h` is the harness's (see run.mjs). */
export async function cohortPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // Who signs up how often, and on which plan.
  const seed = { ann: { plan: "pro", signups: 2 }, bob: { plan: "pro", signups: 1 }, cat: { plan: "free", signups: 3 }, dan: { plan: "pro", signups: 0 } };
  const t0 = Date.now() - 3_600_000;
  let minute = 0;
  const send = async (users) => {
    const batch = [];
    for (const [id, u] of Object.entries(users)) {
      batch.push({ event_name: "$identify", distinct_id: id, timestamp: new Date(t0 + minute++ * 60_000).toISOString(), properties: { plan: u.plan } });
      for (let i = 0; i < u.signups; i++) batch.push({ event_name: "signup", distinct_id: id, timestamp: new Date(t0 + minute++ * 60_000).toISOString() });
    }
    const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  };
  // The members the part expects: signed up at least twice, on pro.
  const expected = () =>
    Object.entries(seed)
      .filter(([, u]) => u.signups >= 2 && u.plan === "pro")
      .map(([id]) => id)
      .sort();
  // A computation reads the persons, written about a second after their
  // events: wait until each seeded id has its plan.
  const personsWritten = async () => {
    for (let i = 0; ; i++) {
      const plans = await page.evaluate(async (pid) => {
        const r = await fetch(`/api/v1/persons?product=${pid}&columns=plan&limit=200`);
        const body = await r.json();
        return Object.fromEntries((body.items ?? []).map((p) => [p.distinctId, p.properties?.plan]));
      }, productId);
      if (Object.entries(seed).every(([id, u]) => plans[id] === u.plan)) return;
      if (i > 60) throw new Error(`the persons were not written: ${JSON.stringify(plans)}`);
      await page.waitForTimeout(250);
    }
  };
  await send(seed);

  await h.check("the Cohorts entry of the sidebar opens the page, with no cohort yet", async () => {
    await page.goto(`${strata.url}/?product=${productId}`);
    await page.getByRole("link", { name: "Cohorts", exact: true }).click();
    await page.getByRole("heading", { name: "Cohorts", level: 1 }).waitFor();
    await page.getByText("No cohort yet.").waitFor();
    await personsWritten();
  });

  let dynamicPath = "";
  await h.check("a dynamic cohort made through the form holds the users the seed says", async () => {
    await page.getByRole("button", { name: "New cohort" }).click();
    const form = page.getByRole("form", { name: "New cohort" });
    await form.locator("input[name=name]").fill("Repeat signups on pro");
    await form.getByLabel("Group 1 condition 1 event").fill("signup");
    await form.getByLabel("Group 1 condition 1 at least").fill("2");
    await form.getByRole("button", { name: "Add condition to group 1" }).click();
    await form.getByLabel("Group 1 condition 2 type").selectOption("property");
    await form.getByLabel("Group 1 condition 2 property").fill("plan");
    await form.getByLabel("Group 1 condition 2 value").fill("pro");
    await form.getByRole("button", { name: "Create cohort" }).click();
    await page.waitForURL(/\/cohorts\/\d+/);
    dynamicPath = new URL(page.url()).pathname;
    await page.getByTestId("cohort-state").filter({ hasText: "Ready" }).waitFor();
    const want = expected();
    await page.getByTestId("cohort-size").filter({ hasText: `${want.length} ${want.length === 1 ? "person" : "people"}` }).waitFor();
    const links = page.getByRole("list", { name: "Members" }).getByRole("link");
    await links.nth(want.length - 1).waitFor();
    const members = await links.allTextContents();
    if (JSON.stringify(members) !== JSON.stringify(want)) throw new Error(`members ${JSON.stringify(members)}, want ${JSON.stringify(want)}`);
  });
  await shot("cohort");
  await atPhoneWidth("a cohort's page", "cohort-phone");

  await h.check("after more events, Recompute now shows the new members", async () => {
    seed.bob.signups += 1;
    seed.eve = { plan: "pro", signups: 2 };
    await send({ bob: { plan: "pro", signups: 1 }, eve: seed.eve });
    await personsWritten();
    // The events are stored within about a second of the 202.
    await page.waitForTimeout(1500);
    await page.getByRole("button", { name: "Recompute now" }).click();
    const want = expected();
    await page.getByTestId("cohort-size").filter({ hasText: `${want.length} people` }).waitFor({ timeout: 20_000 });
    await page.getByTestId("cohort-state").filter({ hasText: "Ready" }).waitFor();
    // The members' page is read after the size: wait until it lists them.
    const links = page.getByRole("list", { name: "Members" }).getByRole("link");
    await links.nth(want.length - 1).waitFor();
    const members = await links.allTextContents();
    if (JSON.stringify(members) !== JSON.stringify(want)) throw new Error(`members ${JSON.stringify(members)}, want ${JSON.stringify(want)}`);
  });

  await h.check("a trend of signups filtered by the cohort counts its members only", async () => {
    const id = dynamicPath.split("/").pop();
    const answer = page.waitForResponse((r) => r.url().includes("/api/v1/query/trend") && r.request().method() === "POST");
    await page.goto(`${strata.url}/trends?product=${productId}&event=signup&math=unique_users&filter=cohort:in:${id}`);
    const body = await (await answer).json();
    const total = body.series?.[0]?.total;
    if (total !== expected().length) throw new Error(`unique signups in the cohort: ${JSON.stringify(body)}`);
    // The editor shows the filter as a cohort, by name.
    await page.getByLabel("Filter 1 cohort").filter({ hasText: "Repeat signups on pro" }).waitFor();
  });

  // Page views of four users, two of them members.
  const viewers = ["ann", "bob", "cat", "eve"];
  // The visitors' total of the chart's trend of the range (not the
  // previous period's: it ends today) sent with a cohort filter.
  const visitors = (operator, property = "cohort") => {
    const chart = (body) =>
      !body.breakdown && body.dateTo === new Date().toISOString().slice(0, 10) && body.series?.[0]?.math === "unique_users" && body.filters?.some((f) => f.property === property && f.operator === operator);
    return page
      .waitForResponse((r) => r.url().includes("/api/v1/query/trend") && r.request().method() === "POST" && chart(JSON.parse(r.request().postData() ?? "{}")))
      .then(async (r) => (await r.json()).series?.[0]?.total);
  };
  await h.check("the Overview filtered by the cohort picked from its menu counts the members' visitors", async () => {
    const batch = viewers.map((id) => ({ event_name: "$pageview", distinct_id: id, timestamp: new Date(t0 + minute++ * 60_000).toISOString(), properties: { $current_url: "https://shop.example/" } }));
    const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
    await page.waitForTimeout(1500);
    const id = dynamicPath.split("/").pop();
    const members = expected();
    await page.goto(`${strata.url}/?product=${productId}&range=7d`);
    const inCohort = visitors("in");
    await page.getByLabel("Filter by cohort").selectOption({ label: "In Repeat signups on pro" });
    const got = await inCohort;
    const want = viewers.filter((v) => members.includes(v)).length;
    if (got !== want) throw new Error(`visitors in the cohort ${got}, want ${want}`);
    await page.getByRole("list", { name: "Filters" }).getByText("In cohort Repeat signups on pro").waitFor();
    if (!page.url().includes(`f=is,cohort,${id}`)) throw new Error(`the URL does not hold the filter: ${page.url()}`);
  });
  await shot("overview-cohort");
  await atPhoneWidth("the Overview filtered by a cohort", "overview-cohort-phone");
  await h.check("the Overview not in the cohort counts the other visitors", async () => {
    const notIn = visitors("not_in");
    await page.getByLabel("Filter by cohort").selectOption({ label: "Not in Repeat signups on pro" });
    const others = await notIn;
    const want = viewers.filter((v) => !expected().includes(v)).length;
    if (others !== want) throw new Error(`visitors not in the cohort ${others}, want ${want}`);
    await page.getByRole("list", { name: "Filters" }).getByText("Not in cohort Repeat signups on pro").waitFor();
  });
  await h.check("the Overview filtered by a person property typed in its head counts those persons' visitors", async () => {
    await page.getByRole("button", { name: "Remove filter Not in cohort Repeat signups on pro" }).click();
    await page.getByText("Person property…").click();
    const form = page.getByRole("form", { name: "Filter by a person property" });
    await form.getByLabel("Property").fill("plan");
    await form.getByLabel("is").fill("pro");
    const pro = visitors("eq", "person.plan");
    await form.getByRole("button", { name: "Filter" }).click();
    const got = await pro;
    const want = viewers.filter((v) => seed[v].plan === "pro").length;
    if (got !== want) throw new Error(`visitors on pro ${got}, want ${want}`);
    await page.getByRole("list", { name: "Filters" }).getByText("Person plan is pro").waitFor();
    if (!page.url().includes("f=is,person.plan,pro")) throw new Error(`the URL does not hold the filter: ${page.url()}`);
  });

  await h.check("a static cohort from a CSV file lists its ids, and is deleted after a confirmation", async () => {
    await page.goto(`${strata.url}/cohorts?product=${productId}`);
    await page.getByRole("button", { name: "New cohort" }).click();
    const form = page.getByRole("form", { name: "New cohort" });
    await form.locator("input[name=name]").fill("Beta list");
    await form.getByLabel("Static: a list of distinct ids").check();
    await form.locator("input[name=members]").setInputFiles({ name: "beta.csv", mimeType: "text/csv", buffer: Buffer.from("email,distinct_id\na@x.example,zed\nb@x.example,bob\nc@x.example,zed\n") });
    await form.getByRole("button", { name: "Create cohort" }).click();
    await page.waitForURL(/\/cohorts\/\d+/);
    await page.getByTestId("cohort-size").filter({ hasText: "2 people" }).waitFor();
    const links = page.getByRole("list", { name: "Members" }).getByRole("link");
    await links.nth(1).waitFor();
    const members = await links.allTextContents();
    if (JSON.stringify(members) !== JSON.stringify(["bob", "zed"])) throw new Error(`members ${JSON.stringify(members)}`);
    await page.getByRole("link", { name: "← Cohorts" }).click();
    await page.getByRole("table", { name: "Cohorts" }).getByRole("link", { name: "Beta list" }).waitFor();
  });
  await shot("cohorts");
  await atPhoneWidth("the Cohorts page", "cohorts-phone");
  await h.check("deleting a cohort asks first, then it is gone from the list", async () => {
    await page.getByRole("table", { name: "Cohorts" }).getByRole("link", { name: "Beta list" }).click();
    await page.getByRole("button", { name: "Delete cohort" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Delete cohort" }).click();
    await page.waitForURL(/\/cohorts\?/);
    await page.getByRole("table", { name: "Cohorts" }).getByRole("link", { name: "Repeat signups on pro" }).waitFor();
    if (await page.getByRole("table", { name: "Cohorts" }).getByRole("link", { name: "Beta list" }).count()) throw new Error("the deleted cohort is still listed");
  });
  await h.check("the pages raised no errors", async () => noPageErrors());
}
