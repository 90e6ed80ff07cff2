// The People page's part of the dashboard's end-to-end test (issue 41, item
// 2; docs/dashboard.md, "People"), on a server of its own. Three persons
// are seeded through POST /e: ann and bob with $identify traits (email,
// plan), cat with a $pageview carrying $set and $set_once. Once the
// profiles are written (polled through GET /api/v1/persons), the page
// lists all three, the search finds ann by email, a filter plan = pro
// keeps ann, the chosen column shows plan, and a row opens the person's
// page with its Properties card. Screenshots at 1280 and 390 px:
// people.png, people-person.png, people-phone.png. E2E_ONLY=people runs it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** peoplePages runs the checks; `h` is the harness's (see run.mjs). */
export async function peoplePages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  const t0 = Date.now() - 3_600_000;
  const at = (min) => new Date(t0 + min * 60_000).toISOString();
  const res = await fetch(strata.url + "/e", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({
      batch: [
        { event_name: "$identify", distinct_id: "ann", timestamp: at(1), properties: { email: "ann@shop.example", plan: "pro" } },
        { event_name: "$identify", distinct_id: "bob", timestamp: at(2), properties: { email: "bob@shop.example", plan: "free" } },
        { event_name: "$pageview", distinct_id: "cat", timestamp: at(3), url: "https://shop.example/", properties: { $set: { plan: "team" }, $set_once: { source: "ad" } } },
      ],
    }),
  });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);

  await h.check("the People entry of the sidebar opens the page, listing the profiles once written", async () => {
    await page.goto(`${strata.url}/?product=${productId}`);
    await page.getByRole("link", { name: "People", exact: true }).click();
    await page.getByRole("heading", { name: "People", level: 1 }).waitFor();
    if (!new URL(page.url()).pathname.endsWith("/people")) throw new Error(page.url());
    // Profiles are written about a second after the events: reload until all three show.
    for (let i = 0; ; i++) {
      await page.getByTestId("people-table").or(page.getByText("No people yet")).first().waitFor();
      if ((await page.getByTestId("people-table").locator("tbody tr").count()) === 3) break;
      if (i > 50) throw new Error("the persons did not show");
      await page.waitForTimeout(300);
      await page.reload();
    }
    const ids = await page.getByTestId("people-table").locator("tbody tr td:first-child").allTextContents();
    if (JSON.stringify([...ids].sort()) !== JSON.stringify(["ann", "bob", "cat"])) throw new Error(`ids ${JSON.stringify(ids)}`);
  });
  await h.check("a chosen column shows each person's plan, $set included", async () => {
    const columns = page.getByLabel("Columns");
    await columns.fill("plan");
    await columns.press("Enter");
    await columns.blur();
    await page.waitForURL(/columns=plan/);
    await page.getByRole("columnheader", { name: "plan" }).waitFor();
    await page.getByRole("cell", { name: "team" }).waitFor();
  });
  await shot("people");
  await h.check("the search finds ann by email", async () => {
    await page.getByRole("searchbox").fill("ann@shop");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForURL(/search=ann/);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=people-table] tbody tr").length === 1);
    await page.getByRole("link", { name: "ann", exact: true }).waitFor();
    await page.getByRole("searchbox").fill("");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=people-table] tbody tr").length === 3);
  });
  await h.check("a filter plan = pro keeps ann, and removing its chip brings the others back", async () => {
    const form = page.getByRole("form", { name: "Property filter" });
    await form.getByLabel("Property").fill("plan");
    await form.getByLabel("Value").fill("pro");
    await form.getByRole("button", { name: "Add filter" }).click();
    await page.waitForURL(/where=/);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=people-table] tbody tr").length === 1);
    await page.getByRole("link", { name: "ann", exact: true }).waitFor();
    await page.getByRole("button", { name: "Remove plan = pro" }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=people-table] tbody tr").length === 3);
  });
  await atPhoneWidth("the People page", "people-phone");
  await h.check("a row opens the person's page with its Properties card", async () => {
    await page.getByRole("link", { name: "ann", exact: true }).click();
    await page.waitForURL(/\/users\/ann/);
    const card = page.getByTestId("person-properties");
    await card.getByRole("cell", { name: "ann@shop.example" }).waitFor();
    await card.getByRole("cell", { name: "pro", exact: true }).waitFor();
  });
  await shot("people-person");
  await h.check("the page raised no errors", async () => noPageErrors());
}
