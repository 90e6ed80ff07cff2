// The Dashboards page's part of the dashboard's end-to-end test (issue 40,
// item 7; docs/dashboard.md, "Dashboards"), on a server of its own. Two
// users view pages and one signs up; the owner saves a trend of page views
// and a funnel, opens Dashboards from the sidebar, creates a board, adds
// the trend, the funnel and the Top pages card, and sees every tile drawn;
// moving a tile and making it large is kept after a reload; dragging a tile
// by its handle before another shows where it lands, moves it there (and
// dropping it on itself sends nothing), kept after a reload; a board filter
// shows as a chip and narrows the trend; Keep this range stores the date
// picker's preset as relative days; the board's shared link opens the
// board read-only for a visitor. Screenshots at 1280 and 390 px:
// boards.png, boards-phone.png, boards-shared.png, boards-shared-phone.png,
// and of the drag: boards-dragging.png (mid-drag), boards-drag.png,
// boards-drag-phone.png.
// E2E_ONLY=boards runs it alone.
import { setUpOwner } from "./owner.mjs";
import { noSideScroll, watchedPage } from "./page.mjs";

/** boardPages runs the checks; `h` is the harness's (see run.mjs). */
export async function boardPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const events = [
    ["u1", "$pageview", "/"],
    ["u1", "$pageview", "/pricing"],
    ["u1", "signup", "/signup"],
    ["u2", "$pageview", "/"],
  ];
  const res = await fetch(strata.url + "/e", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({ batch: events.map(([user, name, path]) => ({ event_name: name, distinct_id: user, url: `https://shop.example.com${path}` })) }),
  });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  // Two saved insights, saved as the Trends and Funnels pages save them.
  await page.goto(`${strata.url}/?product=${productId}`);
  await page.evaluate(async (pid) => {
    const save = (body) => fetch(`/api/v1/queries?product=${pid}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    await save({ kind: "trend", name: "Page views", definition: { series: [{ event: "$pageview", math: "total" }], interval: "day" } });
    await save({ kind: "funnel", name: "Signup funnel", definition: { steps: [{ event: "$pageview" }, { event: "signup" }] } });
  }, productId);

  const titles = () => page.getByTestId("board-tile").locator("h2").first().evaluateAll((hs) => hs.map((e) => e.textContent.trim()));
  const tileTitles = () => page.getByTestId("board-tile").evaluateAll((ts) => ts.map((t) => t.querySelector("h2").textContent.trim()));
  await h.check("the Dashboards entry of the sidebar opens the page, which creates a board", async () => {
    await page.locator("nav.sidebar").getByRole("link", { name: "Dashboards" }).click();
    await page.getByRole("heading", { name: "Dashboards", level: 1 }).waitFor();
    const form = page.getByRole("form", { name: "New dashboard" });
    await form.getByLabel("Name").fill("Growth");
    await form.getByRole("button", { name: "Create dashboard" }).click();
    await page.getByRole("link", { name: "Growth" }).click();
    await page.getByRole("heading", { name: "Growth", level: 1 }).waitFor();
    if (!/\/boards\/\d+$/.test(new URL(page.url()).pathname)) throw new Error(page.url());
  });
  await h.check("a member adds a saved trend, a saved funnel and an Overview card, each drawn", async () => {
    const add = page.getByRole("form", { name: "Add a tile" });
    for (const label of ["Page views (trend)", "Signup funnel (funnel)", "Top pages"]) {
      await add.getByLabel("Add a tile").selectOption({ label });
      await add.getByRole("button", { name: "Add tile" }).click();
      await page.getByRole("heading", { name: label.replace(/ \(.*\)$/, ""), level: 2 }).first().waitFor();
    }
    const got = JSON.stringify(await tileTitles());
    if (got !== JSON.stringify(["Page views", "Signup funnel", "Top pages"])) throw new Error(`tiles ${got}`);
    // Events are acknowledged before they are queryable: reload until the
    // top pages show. Each page is given its time to draw the card (its
    // rows, or its empty state) before it is judged: counting the rows
    // right after a reload raced the card's request, and on a slower run
    // lost every time.
    const card = page.getByRole("region", { name: "Top pages" }).first();
    for (let i = 0; ; i++) {
      await card.locator("table tbody tr, p.empty, [role=alert]").first().waitFor({ timeout: 15_000 });
      if ((await page.getByRole("table", { name: "Top pages", exact: true }).locator("tbody tr").count()) > 0) break;
      if (i > 30) throw new Error(`no top page showed; the card says: ${await card.textContent()}`);
      await page.waitForTimeout(500);
      await page.reload();
    }
    await page.getByRole("region", { name: "Page views" }).locator("canvas, svg").first().waitFor();
  });
  await h.check("moving a tile and making it large is saved whole and kept after a reload", async () => {
    await page.getByRole("group", { name: "Arrange Page views" }).getByRole("button", { name: "Move later" }).click();
    await page.waitForFunction(() => document.querySelector("[data-testid=board-tile] h2")?.textContent === "Signup funnel");
    await page.getByRole("group", { name: "Arrange Top pages" }).getByRole("button", { name: "Large" }).click();
    await page.getByRole("group", { name: "Arrange Top pages" }).getByRole("button", { name: "Small" }).waitFor();
    await page.reload();
    await page.getByRole("heading", { name: "Growth", level: 1 }).waitFor();
    await page.getByTestId("board-tile").first().waitFor();
    const got = JSON.stringify(await tileTitles());
    if (got !== JSON.stringify(["Signup funnel", "Page views", "Top pages"])) throw new Error(`after a reload: ${got}`);
    const large = await page.getByRole("region", { name: "Top pages" }).first().evaluate((e) => e.classList.contains("h2"));
    if (!large) throw new Error("Top pages is not large after a reload");
  });
  await h.check("dragging a tile by its handle before another shows where it lands, saves the order whole and keeps it after a reload", async () => {
    const order = (want) => JSON.stringify(want);
    const before = order(await tileTitles());
    if (before !== order(["Signup funnel", "Page views", "Top pages"])) throw new Error(`before the drag: ${before}`);
    const puts = [];
    const onRequest = (r) => {
      if (r.method() === "PUT" && /^\/api\/v1\/boards\/\d+$/.test(new URL(r.url()).pathname)) puts.push(r);
    };
    page.on("request", onRequest);
    try {
      const handle = page.getByRole("img", { name: "Drag Top pages" });
      await handle.waitFor();
      // Dropped on itself: nothing moves and nothing is sent.
      await handle.dragTo(page.getByRole("region", { name: "Top pages" }).first(), { targetPosition: { x: 30, y: 120 } });
      await page.waitForTimeout(500);
      if (puts.length !== 0) throw new Error(`a drop on itself sent ${puts.length} PUT`);
      if (order(await tileTitles()) !== before) throw new Error(`a drop on itself moved the tiles: ${order(await tileTitles())}`);
      // Onto the left half of Signup funnel (two columns of four, so a row): before it.
      const target = page.getByRole("region", { name: "Signup funnel" }).first();
      const box = await target.boundingBox();
      await handle.hover();
      await page.mouse.down();
      await page.mouse.move(box.x + 40, box.y + box.height / 2, { steps: 8 });
      await page.waitForFunction(() => document.querySelector("[data-testid=board-tile].drop-before.drop-x")?.getAttribute("aria-label") === "Signup funnel");
      const faded = await page.getByRole("region", { name: "Top pages" }).first().evaluate((e) => e.classList.contains("dragging"));
      if (!faded) throw new Error("the dragged tile is not marked as dragged");
      await shot("boards-dragging");
      const saved = page.waitForResponse((r) => r.request().method() === "PUT" && /^\/api\/v1\/boards\/\d+$/.test(new URL(r.url()).pathname));
      await page.mouse.up();
      if ((await saved).status() !== 200) throw new Error(`the PUT answered ${(await saved).status()}`);
      await page.waitForFunction(() => document.querySelector("[data-testid=board-tile] h2")?.textContent === "Top pages");
      if (puts.length !== 1) throw new Error(`the drop sent ${puts.length} PUT`);
      const sent = puts[0].postDataJSON().tiles;
      if (sent.length !== 3 || sent[0].height !== 2) throw new Error(`the PUT's layout ${JSON.stringify(sent)}`);
      const after = order(await tileTitles());
      if (after !== order(["Top pages", "Signup funnel", "Page views"])) throw new Error(`after the drop: ${after}`);
      if (await page.locator(".drop-before, .drop-after, .dragging").count()) throw new Error("the drop indicator stayed after the drop");
    } finally {
      page.off("request", onRequest);
    }
    await page.reload();
    await page.getByRole("heading", { name: "Growth", level: 1 }).waitFor();
    await page.getByTestId("board-tile").first().waitFor();
    const got = order(await tileTitles());
    if (got !== order(["Top pages", "Signup funnel", "Page views"])) throw new Error(`after a reload: ${got}`);
    const large = await page.getByRole("region", { name: "Top pages" }).first().evaluate((e) => e.classList.contains("h2"));
    if (!large) throw new Error("Top pages is not large after the drag and a reload");
    await page.getByRole("region", { name: "Page views" }).locator("canvas, svg").first().waitFor();
  });
  await shot("boards-drag");
  await atPhoneWidth("a dashboard with drag handles", "boards-drag-phone");
  await h.check("a board filter shows as a chip", async () => {
    const form = page.getByRole("form", { name: "Add a dashboard filter" });
    await form.getByLabel("Property").fill("path");
    await form.getByLabel("Is").fill("/pricing");
    await form.getByRole("button", { name: "Add filter" }).click();
    await page.getByTestId("board-filter").filter({ hasText: "path is /pricing" }).waitFor();
  });
  await h.check("Keep this range keeps the date picker's preset as relative days, shown by its name", async () => {
    const bar = page.getByTestId("board-range");
    if (!/^Range on screen: Last 30 days \(/.test(await bar.textContent())) throw new Error(`before: ${await bar.textContent()}`);
    await page.getByRole("button", { name: "Keep this range for the dashboard" }).click();
    await page.getByRole("button", { name: "Use the range on screen" }).waitFor();
    const boardId = new URL(page.url()).pathname.split("/").pop();
    const stored = await page.evaluate(async ([pid, id]) => (await fetch(`/api/v1/boards/${id}?product=${pid}`)).json(), [productId, boardId]);
    if (stored.dateFrom !== "-29d" || stored.dateTo !== "-0d") throw new Error(`stored ${stored.dateFrom} to ${stored.dateTo}`);
    if (!/^Dashboard range: Last 30 days \(\d{4}-\d\d-\d\d – \d{4}-\d\d-\d\d\)$/.test(await bar.textContent())) throw new Error(`after: ${await bar.textContent()}`);
    await page.getByRole("region", { name: "Page views" }).locator("canvas, svg").first().waitFor();
  });
  await shot("boards");
  await atPhoneWidth("a dashboard", "boards-phone");

  let link = "";
  await h.check("Share creates the board's link, shown once", async () => {
    await page.getByRole("button", { name: "Share this dashboard" }).click();
    link = (await page.getByTestId("board-link").locator("code").textContent()).trim();
    if (!new RegExp(`^${strata.url}/share/st_share_[0-9A-Za-z]{32}$`).test(link)) throw new Error(`link ${link}`);
  });
  const visitor = await watchedPage(browser, h, { width: 1280, height: 800 });
  const v = visitor.page;
  await h.check("the board's link shows the board read-only, its tiles drawn", async () => {
    await v.goto(link);
    await v.getByRole("heading", { name: "Growth", level: 1 }).waitFor({ timeout: 30_000 });
    await v.getByTestId("board-tile").nth(2).waitFor({ timeout: 30_000 });
    await v.getByRole("region", { name: "Page views" }).locator("canvas, svg").first().waitFor({ timeout: 30_000 });
    for (const what of ["Move later", "Add tile", "Share this dashboard", "Rename"]) {
      if ((await v.getByRole("button", { name: what }).count()) !== 0) throw new Error(`the shared board offers ${what}`);
    }
    if ((await v.locator("nav.sidebar").count()) !== 0) throw new Error("the shared board has the sidebar");
  });
  await visitor.shot("boards-shared");
  await v.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the shared board does not push the page sideways", () => noSideScroll(v));
  await visitor.shot("boards-shared-phone");
  await h.check("the pages raised no errors", async () => {
    noPageErrors();
    visitor.noPageErrors();
  });
  void titles;
}
