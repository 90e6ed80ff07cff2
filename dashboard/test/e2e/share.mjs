// The shared-links part of the dashboard's end-to-end test: the owner
// creates a shared link in the product's settings (the URL shown once),
// a fresh browser with no session opens it and sees the Overview's numbers
// in the read-only shared view (no navigation, no product switcher, a
// "Shared view" label); a link with a password asks for it, refuses a wrong
// one and opens with the right one; a revoked link says so. Screenshots at
// 1280 and 390 px: share-settings(-phone).png, share-view(-phone).png,
// share-password.png, share-revoked.png. The link's budget
// (--share-rate-limit) lets a viewer apply and remove six filters (twelve
// loads of the Overview) without a refusal, and still refuses a flood from
// one address. E2E_ONLY=share runs it alone.
import { join } from "node:path";
import { setUpOwner } from "./owner.mjs";
import { noSideScroll, watchedPage } from "./page.mjs";

/** sharePages runs the checks on a fresh server of its own. */
export async function sharePages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 800 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // Six page views, of six pages, by three visitors.
  const batch = ["v1", "v1", "v2", "v3", "v2", "v3"].map((id, i) => ({ event_name: "$pageview", distinct_id: id, url: `https://shop.example.com/p${i}` }));
  batch.push({ event_name: "signup", distinct_id: "v1", properties: { email: "v1@shop.example.com" } });
  const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);

  const settings = `${strata.url}/settings/products/${productId}?product=${productId}`;
  const create = async (name, password) => {
    const form = page.getByRole("form", { name: "Create a shared link" });
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Password (optional)").fill(password);
    await form.getByRole("button", { name: "Create shared link" }).click();
    const url = page.getByTestId("shared-link-url");
    await url.waitFor();
    const text = (await url.textContent()).trim();
    await page.getByRole("button", { name: "I have copied it" }).click();
    return text;
  };
  await page.goto(settings);
  await page.getByRole("heading", { name: "Shared links" }).waitFor();
  let open;
  await h.check("Settings creates a shared link and shows its URL once", async () => {
    open = await create("Board", "");
    if (!new RegExp(`^${strata.url}/share/st_share_[0-9A-Za-z]{32}$`).test(open)) throw new Error(`url ${open}`);
    const row = page.getByTestId("shared-link-row").filter({ hasText: "Board" });
    await row.waitFor();
    if (!(await row.textContent()).includes("No")) throw new Error("the row does not say the link has no password");
    if ((await page.getByTestId("shared-link-url").count()) !== 0) throw new Error("the URL is still shown");
  });
  let locked;
  await h.check("a link with a password is listed as such", async () => {
    locked = await create("Investors", "a long secret");
    await page.getByTestId("shared-link-row").filter({ hasText: "Investors" }).filter({ hasText: "Yes" }).waitFor();
  });
  await shot("share-settings");
  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the shared links do not push the page sideways", () => noSideScroll(page));
  await page.getByRole("heading", { name: "Shared links" }).scrollIntoViewIfNeeded();
  await shot("share-settings-phone");
  await page.setViewportSize({ width: 1280, height: 800 });

  // A visitor with the link: a fresh context, no session.
  const visitor = await watchedPage(browser, h, { width: 1280, height: 800 });
  const v = visitor.page;
  await v.goto(open);
  await h.check("the shared link shows the Overview's numbers without signing in", async () => {
    // The first load asks about fifteen queries at once, and the visitors-now
    // count asks again only ten seconds after an answer: on a loaded machine
    // an element may come after Playwright's default 10 s, so each wait is
    // 30 s and names what it waited for.
    const shows = async (what, locator) => {
      try {
        await locator.waitFor({ timeout: 30_000 });
      } catch (err) {
        throw new Error(`${what}: ${err.message.split("\n")[0]}`);
      }
    };
    await shows("the heading", v.getByRole("heading", { name: "Overview" }));
    await shows("6 page views", v.getByTestId("stat-pageviews").filter({ hasText: /^6$/ }));
    await shows("3 visitors", v.getByTestId("stat-visitors").filter({ hasText: /^3$/ }));
    await shows("the top pages", v.getByRole("table", { name: "Top pages", exact: true }).locator("tbody tr").first());
    // The sessions query reaches the link too: each visitor's events are one visit.
    await shows("3 visits", v.getByTestId("stat-visits").filter({ hasText: /^3$/ }));
    await shows("the entry pages", v.getByRole("table", { name: "Entry pages", exact: true }).locator("tbody tr").first());
    // So does the visitors-now count (the events were sent without a time: now).
    await shows("3 visitors now", v.getByTestId("live-count").filter({ hasText: /^3 visitors now/ }));
  });
  await h.check("the shared view has no navigation, no product switcher, no editing, and says it is shared", async () => {
    await v.getByTestId("shared-label").filter({ hasText: "Shared view" }).waitFor();
    for (const sel of ["nav.sidebar", ".env-switch", "a[href^='/settings']"]) {
      if ((await v.locator(sel).count()) !== 0) throw new Error(`the shared view has ${sel}`);
    }
    if ((await v.getByLabel("Product", { exact: true }).count()) !== 0) throw new Error("the shared view has a product switcher");
    // No link into the app; the one link is DB-IP's credit, which its
    // licence asks for wherever countries are shown (docs/dependencies.md).
    const links = await v.getByRole("link").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    if (JSON.stringify(links) !== JSON.stringify(["https://db-ip.com"])) throw new Error(`the shared view has links: ${links.join(", ")}`);
    if ((await v.getByText("Click a point on the chart").count()) !== 0) throw new Error("the shared view offers to annotate");
    if ((await visitor.context.cookies()).some((c) => c.name === "strata_session")) throw new Error("the visitor has a session");
  });
  await visitor.shot("share-view");
  await v.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the shared view does not push the page sideways", () => noSideScroll(v));
  await visitor.shot("share-view-phone");
  await v.setViewportSize({ width: 1280, height: 800 });

  // A viewer clicking through the filters: each click and each × is a load
  // of the whole Overview (about fifteen reads), all from one address
  // through one link. None may be refused (docs/security.md, "Shared links").
  const refused = [];
  let reads = 0;
  v.on("response", (r) => {
    if (r.url().includes("/api/v1/")) reads++;
    if (r.status() >= 400) refused.push(`${r.status()} ${r.url()}`);
  });
  await h.check("a viewer applies and removes six filters on the shared Overview without a refusal", async () => {
    const pages = v.getByRole("region", { name: "Top pages", exact: true });
    const step = async (what, action) => {
      try {
        await action();
      } catch (err) {
        throw new Error(`${what} (${reads} reads, refused: ${refused.slice(0, 3).join(", ") || "none"}): ${err.message.split("\n")[0]}`);
      }
    };
    for (let i = 0; i < 6; i++) {
      await step(`filter by /p${i}`, () => pages.getByRole("button", { name: `/p${i}`, exact: true }).click({ timeout: 30_000 }));
      await step(`1 page view of /p${i}`, () => v.getByTestId("stat-pageviews").filter({ hasText: /^1$/ }).waitFor({ timeout: 30_000 }));
      await step(`remove /p${i}`, () => v.getByRole("button", { name: /^Remove filter / }).click({ timeout: 30_000 }));
      await step(`6 page views after /p${i}`, () => v.getByTestId("stat-pageviews").filter({ hasText: /^6$/ }).waitFor({ timeout: 30_000 }));
      if ((await v.getByText(/Too many/).count()) !== 0) throw new Error(`a card says it was refused after filter ${i + 1}`);
    }
    if (refused.length) throw new Error(`${refused.length} of ${reads} reads refused, the first ${refused[0]}`);
  });
  await h.check("the shared view raised no page errors", visitor.noPageErrors);

  const guest = await watchedPage(browser, h, { width: 1280, height: 800 });
  const g = guest.page;
  await g.goto(locked);
  await h.check("a link with a password asks for it and refuses a wrong one", async () => {
    await g.getByRole("heading", { name: "Investors" }).waitFor();
    await g.getByLabel("Password").fill("not the secret");
    await g.getByRole("button", { name: "View" }).click();
    await g.getByRole("alert").filter({ hasText: "password is not right" }).waitFor();
    if ((await g.getByTestId("stat-pageviews").count()) !== 0) throw new Error("the Overview shows before the password");
  });
  await guest.shot("share-password");
  await h.check("the right password opens the Overview, with an HttpOnly, Strict cookie scoped to the link", async () => {
    await g.getByLabel("Password").fill("a long secret");
    await g.getByRole("button", { name: "View" }).click();
    await g.getByTestId("stat-pageviews").filter({ hasText: /^6$/ }).waitFor();
    const c = (await guest.context.cookies(locked + "/api/v1/share")).find((x) => x.name === "strata_share");
    if (!c || !c.httpOnly || c.sameSite !== "Strict" || c.path !== new URL(locked).pathname + "/") throw new Error(JSON.stringify(c));
  });

  await h.check("a revoked link stops working at once", async () => {
    const row = page.getByTestId("shared-link-row").filter({ hasText: "Board" });
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("button", { name: "Revoke link" }).click();
    await row.waitFor({ state: "detached" });
    await v.setViewportSize({ width: 1280, height: 800 });
    await v.reload();
    await v.getByTestId("shared-failed").filter({ hasText: "revoked" }).waitFor();
    if ((await v.getByTestId("stat-pageviews").count()) !== 0) throw new Error("the revoked link still shows numbers");
  });
  await visitor.shot("share-revoked");

  await h.check("a flood from one address through a shared link is refused", async () => {
    // Up to a thousand reads at once, fifty at a time: the address's budget
    // (a minute's worth at most, then ten a second) runs out well before.
    let first = null;
    for (let sent = 0; sent < 1000 && !first; sent += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(locked + "/api/v1/share")));
      for (const r of answers) {
        if (r.status === 429 && !first) first = { sent, retry: r.headers.get("Retry-After"), body: await r.json() };
        else await r.arrayBuffer();
      }
    }
    if (!first) throw new Error("a thousand reads from one address were all answered");
    if (first.body.error?.code !== "rate_limited" || !/from this address/.test(first.body.error?.message) || !first.retry) throw new Error(JSON.stringify(first));
  });
  await h.check("the owner's pages raised no page errors", noPageErrors);
}
