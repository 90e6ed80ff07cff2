// The Paths page's part of the dashboard's end-to-end test (issue 40, item
// 6; docs/queries.md, "Paths"), on a server of its own. Three users view
// pages: u1 /, /pricing twice, /signup, /welcome; u2 /, /pricing, /docs;
// u3 /pricing and, 40 minutes later, /signup. The page opened on paths
// after /pricing, three steps, one branch, shows the Sankey chart and the
// nodes table (/pricing 3 users, one stopping there; /docs and Other at
// step 2; /welcome at step 3); the form's controls change the URL;
// picking /pricing's users lists u3, u1, u2, newest first, and a user's
// link opens their page. Screenshots at 1280 and 390 px: paths.png,
// paths-users.png, paths-phone.png. E2E_ONLY=paths runs it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** pathsPages runs the checks; `h` is the harness's (see run.mjs). */
export async function pathsPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  const t0 = Date.now() - 2 * 3_600_000;
  const views = [
    ["u1", "/", 0], ["u1", "/pricing", 1], ["u1", "/pricing", 2], ["u1", "/signup", 3], ["u1", "/welcome", 4],
    ["u2", "/", 0], ["u2", "/pricing", 1], ["u2", "/docs", 2],
    ["u3", "/pricing", 10], ["u3", "/signup", 50],
  ];
  const res = await fetch(strata.url + "/e", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({
      batch: views.map(([user, path, min]) => ({
        event_name: "$pageview",
        distinct_id: user,
        timestamp: new Date(t0 + min * 60_000).toISOString(),
        url: `https://shop.example.com${path}`,
      })),
    }),
  });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);

  const rows = () => page.getByTestId("paths-node").evaluateAll((els) => els.map((e) => [...e.children].slice(0, 4).map((c) => c.textContent.trim()).join(" ")));
  await h.check("the Paths entry of the sidebar opens the page", async () => {
    await page.goto(`${strata.url}/?product=${productId}`);
    await page.getByRole("link", { name: "Paths", exact: true }).click();
    await page.getByRole("heading", { name: "Paths", level: 1 }).waitFor();
    if (!new URL(page.url()).pathname.endsWith("/paths")) throw new Error(page.url());
  });
  await h.check("paths after /pricing: the chart and every node with its users and drop-off", async () => {
    await page.goto(`${strata.url}/paths?product=${productId}&start=/pricing&depth=3&branches=1`);
    // The events are acknowledged before they are queryable: reload until they show.
    for (let i = 0; ; i++) {
      await page.getByTestId("paths-nodes").or(page.getByTestId("paths-empty")).first().waitFor();
      if ((await page.getByTestId("paths-node").count()) > 0) break;
      if (i > 50) throw new Error("no path showed");
      await page.waitForTimeout(200);
      await page.reload();
    }
    const got = JSON.stringify(await rows());
    const want = JSON.stringify(["1 /pricing 3 1", "2 /docs 1 1", "2 Other 1 0", "3 /welcome 1 1"]);
    if (got !== want) throw new Error(`nodes ${got}, want ${want}`);
    const box = await page.getByTestId("paths-sankey").boundingBox();
    if (!box || box.width < 300 || box.height < 200) throw new Error(`the chart is ${JSON.stringify(box)}`);
    await page.getByTestId("paths-users").getByText("3 users with a path").waitFor();
  });
  await shot("paths");
  await h.check("the form writes the query into the URL", async () => {
    const form = page.getByRole("form", { name: "Paths builder" });
    await form.getByLabel("Paths").selectOption("end");
    await form.getByLabel("Page path").fill("/signup");
    await form.getByLabel("Steps").selectOption("2");
    await form.getByRole("button", { name: "Show paths" }).click();
    await page.waitForURL(/end=\/signup/);
    const u = new URL(page.url());
    if (u.searchParams.get("depth") !== "2" || u.searchParams.get("start") !== null) throw new Error(u.search);
    // Back to the first query: /signup is reached by u1 (after /pricing) and u3 (alone in its visit).
    await page.getByText("2 users with a path").waitFor();
    await page.goBack();
    await page.getByText("3 users with a path").waitFor();
  });
  await h.check("a node's users, newest first, each linking to their page", async () => {
    await page.getByRole("button", { name: "Users at step 1: /pricing" }).click();
    const list = page.getByTestId("paths-node-users");
    await list.getByRole("link", { name: "u2" }).waitFor();
    const ids = await list.getByRole("link").allTextContents();
    if (JSON.stringify(ids) !== JSON.stringify(["u3", "u1", "u2"])) throw new Error(`users ${JSON.stringify(ids)}`);
  });
  await shot("paths-users");
  await atPhoneWidth("the Paths page", "paths-phone");
  await h.check("a user's link opens their page", async () => {
    await page.getByTestId("paths-node-users").getByRole("link", { name: "u3" }).click();
    await page.waitForURL(/\/users\/u3/);
    await page.getByText("u3").first().waitFor();
  });
  await h.check("the page raised no errors", async () => noPageErrors());
}
