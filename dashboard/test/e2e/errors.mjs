// The Errors part of the dashboard's end-to-end test, on a server with
// NEXT_PUBLIC_FEATURE_ERROR_TRACKING=true: a release's sourcemap uploaded
// as a deploy script does (multipart, the live API key as Bearer), then
// $exception events whose V8 stacks point into the minified build of
// internal/sourcemap/testdata, as e2e/sourcemaps_test.go sends them: a
// checkout bug of release 2.0.0 (de-minified with the map) from three
// users, and a load bug of release 1.9.0, which has no map. The list must
// show the two groups with the counts sent here, the release filter keep
// one, the checkout group's page its de-minified frame "checkout" at
// app.ts:22 with the source line, and resolving it must take it off the
// open list. A release's sourcemaps are deleted after the confirmation.
// The load bug's stack also passes through the page's own inline script,
// which lacks no map: the note on minified frames names only app.min.js.
// Two groups selected in the table are merged, after the confirmation,
// into the one picked there. The groups' table fits its box at 1280 and
// 390 px (its right edge within its container's, nothing to scroll). The
// kept group's page lists the merged one under "Merged groups"; Unmerge,
// after the confirmation, takes its events out of the group's count and
// puts it back on the list.
// Screenshots errors.png, error-group.png, errors-merge.png, errors-long.png,
// error-group-merged.png, error-group-unmerge.png and, at 390 px without sideways
// scrolling, errors-phone.png, error-group-phone.png and error-group-merged-phone.png.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/**
 * errorPages runs the checks on a fresh server. `h` holds the harness's
 * check, startStrata and cleanups, the owner's credentials, the artifacts
 * folder and the repository's root.
 */
export async function errorPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "true" });
  const { page, shot, noSidewaysScroll, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 800 });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // The deploy of release 2.0.0 uploads its map; 1.0.0 gets one to delete.
  const testdata = join(h.repo, "internal", "sourcemap", "testdata");
  const minified = readFileSync(join(testdata, "app.min.js"), "utf8");
  const map = readFileSync(join(testdata, "app.min.js.map"), "utf8");
  const app = "https://shop.example.com/assets/app.min.js";
  const upload = async (release, file) => {
    const form = new FormData();
    form.set("release", release);
    form.set("url", app);
    form.set("file", new Blob([file], { type: "application/json" }), "app.min.js.map");
    const res = await fetch(strata.url + "/api/v1/sourcemaps", { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form });
    if (res.status !== 201) throw new Error(`upload ${release}: ${res.status} ${await res.text()}`);
  };
  await upload("1.0.0", JSON.stringify({ version: 3, sources: ["old.ts"], names: [], mappings: "AAAA" }));
  await upload("2.0.0", map);

  // V8 stacks thrown at the markers of the build (1-based columns), called
  // from the position of another marker, as a browser would write them.
  const col = (marker) => minified.indexOf(`"${marker}"`) + 1;
  // The page's own inline script, in the page's URL: not minified.
  const inline = "https://shop.example.com/checkout";
  const v8 = (type, message, at, caller, page) =>
    `${type}: ${message}\n    at u (${app}:1:${col(at)})\n    at ${app}:1:${col(caller)}` + (page ? `\n    at onclick (${inline}:12:9)` : "");
  const agents = {
    chrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Safari/537.36",
    edge: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Safari/537.36 Edg/148.0.0.0",
    android: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Mobile Safari/537.36",
  };
  // The events are up to 40 minutes old and must all fall on today (UTC),
  // which the sparkline checks: just after midnight a "minute" shrinks (to
  // a second at least, so that the events keep their order), and the check
  // waits out the last 30 s and the first 45 s of a day, so that the page
  // it loads has the same today as the events.
  const sinceMidnight = Date.now() % 86_400_000;
  if (sinceMidnight > 86_370_000 || sinceMidnight < 45_000) {
    await new Promise((resolve) => setTimeout(resolve, (86_445_000 - sinceMidnight) % 86_400_000));
  }
  const now = Date.now();
  const minute = Math.min(60_000, Math.floor((now % 86_400_000) / 45));
  const exception = (id, agent, minutesAgo, release, type, message, caller, page = false) => ({
    event_name: "$exception",
    distinct_id: id,
    url: "https://shop.example.com/checkout",
    user_agent: agents[agent],
    timestamp: new Date(now - minutesAgo * minute).toISOString(),
    properties: {
      $exception_type: type, $exception_message: message, $exception_source: "onerror", $release: release,
      $exception_stack: v8(type, message, message, caller, page),
    },
  });
  const checkout = (id, agent, minutesAgo) => exception(id, agent, minutesAgo, "2.0.0", "RangeError", "marker-checkout", "marker-add");
  const load = (id, agent, minutesAgo) => exception(id, agent, minutesAgo, "1.9.0", "TypeError", "marker-load", "marker-reduce", true);
  // The checkout bug: 4 events of 3 users; the load bug: 2 events of 2 users.
  const batch = [checkout("u1", "chrome", 40), checkout("u2", "edge", 30), checkout("u1", "chrome", 20), checkout("u3", "android", 10), load("u4", "chrome", 25), load("u1", "chrome", 15)];
  const res = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  // Events are written in batches: wait until the API counts all six.
  for (let i = 0; ; i++) {
    const groups = await page.evaluate(async (pid) => (await (await fetch(`/api/v1/errors?product=${pid}`)).json()).groups, productId);
    if (groups?.reduce((n, g) => n + g.events, 0) === batch.length) break;
    if (i === 50) throw new Error(`the API counts ${JSON.stringify(groups)}`);
    await sleep(200);
  }

  const rows = () =>
    page
      .getByRole("table", { name: "Error groups", exact: true })
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1, 5).map((td) => td.textContent.trim())));
  // The groups' table within its box: its right edge not past the box's,
  // and nothing to scroll sideways in it.
  const tableFits = async () => {
    const m = await page.getByRole("table", { name: "Error groups", exact: true }).evaluate((t) => {
      const box = t.parentElement;
      return { table: t.getBoundingClientRect().right, box: box.getBoundingClientRect().right, scroll: box.scrollWidth, client: box.clientWidth };
    });
    if (m.table > m.box + 0.5 || m.scroll > m.client) throw new Error(`the table overflows its box: ${JSON.stringify(m)}`);
  };
  await page.locator("nav.sidebar").getByRole("link", { name: "Errors" }).click();
  await page.getByRole("heading", { name: "Errors", exact: true }).waitFor();
  await h.check("the Errors table shows the two groups with the events and users sent, most events first", async () => {
    await page.getByRole("table", { name: "Error groups", exact: true }).waitFor();
    const got = JSON.stringify(await rows());
    const want = JSON.stringify([["RangeError", "marker-checkout", "4", "3"], ["TypeError", "marker-load", "2", "2"]]);
    if (got !== want) throw new Error(`${got}, want ${want}`);
    const spark = await page.getByRole("img", { name: /^Events per day/ }).first().getAttribute("aria-label");
    if (!/; [^;]+, 4$/.test(spark)) throw new Error(`the checkout sparkline's today is not 4: ${spark}`);
  });
  await h.check("the Releases section lists each release's uploads", async () => {
    const releases = await page.getByTestId("release").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
    if (releases.join() !== "Release 2.0.0,Release 1.0.0") throw new Error(releases.join());
    await page.getByRole("table", { name: "Sourcemaps of release 2.0.0" }).getByText(app).waitFor();
  });
  await h.check("at 1280 px the groups' table fits its box, the last 7 days included", tableFits);
  await shot("errors");

  await h.check("the release filter keeps the groups of one release", async () => {
    await page.getByLabel("Release", { exact: true }).fill("2.0.0");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=error-row]").length === 1);
    const got = JSON.stringify(await rows());
    if (got !== JSON.stringify([["RangeError", "marker-checkout", "4", "3"]])) throw new Error(got);
    await page.getByLabel("Release", { exact: true }).fill("");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=error-row]").length === 2);
  });

  await h.check("a release's sourcemaps are deleted only after the confirmation", async () => {
    await page.getByRole("button", { name: "Delete release 1.0.0" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Delete release 1.0.0?" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.getByTestId("release").nth(1).waitFor();
    await page.getByRole("button", { name: "Delete release 1.0.0" }).click();
    await dialog.getByRole("button", { name: "Delete 1 sourcemap" }).click();
    await page.getByText("Deleted release 1.0.0: 1 sourcemap.").waitFor();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=release]").length === 1);
    const left = await page.evaluate(async (pid) => (await (await fetch(`/api/v1/sourcemaps?product=${pid}`)).json()).items.map((m) => m.release), productId);
    if (left.join() !== "2.0.0") throw new Error(left.join());
  });

  await page.getByRole("link", { name: "marker-checkout" }).click();
  await h.check("the checkout group's page shows its counts and occurrences, newest first", async () => {
    await page.getByRole("heading", { name: "RangeError", exact: true }).waitFor();
    if (!/^\/errors\/[0-9a-f]{64}$/.test(new URL(page.url()).pathname)) throw new Error(page.url());
    const facts = await page.locator(".page > .facts > div").evaluateAll((ds) => ds.map((d) => `${d.querySelector("dt").textContent}=${d.querySelector("dd").textContent}`));
    for (const f of ["Status=Open", "Events=4", "Users=3"]) if (!facts.includes(f)) throw new Error(facts.join(", "));
    const users = await page.getByTestId("occurrence").evaluateAll((os) => os.map((o) => o.querySelector(".facts dd").textContent));
    if (users.join() !== "u3,u1,u2,u1") throw new Error(`users newest first: ${users.join()}`);
  });
  await h.check('the newest occurrence shows the de-minified frame "checkout" at app.ts:22 with its source line', async () => {
    const frame = page.getByTestId("occurrence").first().getByTestId("frame").first();
    const fn = await frame.locator(".frame-function").textContent();
    const loc = await frame.locator(".frame-location").textContent();
    const line = await frame.locator("pre.source-line").textContent();
    if (fn !== "checkout" || !/^app\.ts:22(:\d+)?$/.test(loc) || line.trim() !== 'throw new RangeError("marker-checkout");') {
      throw new Error(`${fn} at ${loc}: ${line}`);
    }
    const caller = page.getByTestId("occurrence").first().getByTestId("frame").nth(1);
    if ((await caller.locator(".frame-function").textContent()) !== "add") throw new Error("the caller is not add");
    if ((await page.getByTestId("occurrence").first().getByTestId("resolution").count()) !== 0) throw new Error("a resolved stack says frames stayed minified");
  });
  await h.check("the raw stack is one click away", async () => {
    const first = page.getByTestId("occurrence").first();
    await first.getByRole("button", { name: "Show the raw stack" }).click();
    const raw = await first.locator(".raw-stack").textContent();
    if (!raw.startsWith("RangeError: marker-checkout\n    at u (https://shop.example.com/assets/app.min.js:1:")) throw new Error(raw);
  });
  await shot("error-group");
  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the group's page does not push the page sideways", noSidewaysScroll);
  await shot("error-group-phone");
  await page.setViewportSize({ width: 1280, height: 800 });

  await h.check("Resolve asks for the release, the latest occurrence's to start with, and records it", async () => {
    await page.getByRole("button", { name: "Resolve…" }).click();
    const form = page.getByRole("form", { name: "Resolve" });
    const release = await form.getByLabel("Fixed in release").inputValue();
    if (release !== "2.0.0") throw new Error(`the release starts as ${JSON.stringify(release)}`);
    await form.getByRole("button", { name: "Resolve", exact: true }).click();
    await page.getByTestId("error-status").filter({ hasText: "Resolved in 2.0.0" }).waitFor();
  });
  await h.check("the resolved group leaves the open list, and the Resolved filter shows it", async () => {
    await page.locator(".crumbs").getByRole("link", { name: "Errors" }).click();
    await page.getByRole("table", { name: "Error groups", exact: true }).waitFor();
    const open = JSON.stringify(await rows());
    if (open !== JSON.stringify([["TypeError", "marker-load", "2", "2"]])) throw new Error(`open: ${open}`);
    await page.getByRole("form", { name: "Error filters" }).locator("select[name=status]").selectOption("resolved");
    await page.waitForFunction(() => document.querySelector("[data-testid=error-row]")?.textContent.includes("marker-checkout"));
  });

  await page.getByRole("form", { name: "Error filters" }).locator("select[name=status]").selectOption("open");
  await page.waitForFunction(() => document.querySelector("[data-testid=error-row]")?.textContent.includes("marker-load"));
  await page.getByRole("link", { name: "marker-load" }).click();
  await h.check("a release without a sourcemap keeps its frames minified and says why, once", async () => {
    await page.getByRole("heading", { name: "TypeError", exact: true }).waitFor();
    const first = page.getByTestId("occurrence").first();
    const text = await first.getByTestId("resolution").textContent();
    if (!text.includes(`no sourcemap for release 1.9.0 and ${app}`)) throw new Error(text);
    // The page's inline script lacks no map: the note does not name it.
    if (text.includes(inline)) throw new Error(`the note blames the page's inline script: ${text}`);
    const frames = await first.getByTestId("frame").count();
    if (frames !== 3) throw new Error(`${frames} frames, want the inline script's too`);
    const loc = await first.getByTestId("frame").first().locator(".frame-location").textContent();
    if (loc !== `${app}:1:${col("marker-load")}`) throw new Error(loc);
    // Nor is its frame tagged minified: only the bundle's two are.
    const tags = await first.getByTestId("frame").evaluateAll((fs) => fs.map((f) => f.querySelector(".tag")?.textContent ?? null));
    if (JSON.stringify(tags) !== JSON.stringify(["minified", "minified", null])) throw new Error(`frame tags ${JSON.stringify(tags)}`);
  });

  // A third bug, thrown at marker-add in release 2.0.0, to merge into the load bug.
  // Its message is long, as real ones are: the table must still fit.
  const add = exception("u5", "chrome", 5, "2.0.0", "TypeError", "marker-add", "marker-reduce");
  const long = "marker-add: Cannot read properties of undefined (reading 'total') while the cart of a returning customer was being totalled for the checkout page";
  add.properties.$exception_message = long;
  const sent = await fetch(strata.url + "/e", { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch: [add] }) });
  if (sent.status !== 202) throw new Error(`ingest: ${sent.status} ${await sent.text()}`);
  for (let i = 0; ; i++) {
    const groups = await page.evaluate(async (pid) => (await (await fetch(`/api/v1/errors?product=${pid}`)).json()).groups, productId);
    if (groups?.length === 3) break;
    if (i === 50) throw new Error(`the API lists ${JSON.stringify(groups)}`);
    await sleep(200);
  }
  await page.locator(".crumbs").getByRole("link", { name: "Errors" }).click();
  await page.getByRole("table", { name: "Error groups", exact: true }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=error-row]").length === 2);
  await h.check("two selected groups merge into the one picked, after the confirmation", async () => {
    const merge = () => page.getByRole("button", { name: /^Merge… \(\d\)$/ });
    const loadHref = await page.getByRole("link", { name: "marker-load" }).getAttribute("href");
    if (!(await merge().isDisabled())) throw new Error("Merge… is enabled with nothing selected");
    await page.getByRole("checkbox", { name: `Select ${long}` }).check();
    await page.getByRole("checkbox", { name: "Select marker-load" }).check();
    await merge().click();
    const dialog = page.getByRole("alertdialog", { name: "Merge 2 error groups?" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    if ((await page.getByRole("alertdialog").count()) !== 0) throw new Error("the dialog stayed open");
    await merge().click();
    await dialog.getByRole("radio", { name: /marker-load/ }).check();
    await shot("errors-merge");
    await dialog.getByRole("button", { name: "Merge groups" }).click();
    await page.getByText("Merged 1 group into “marker-load”.").waitFor();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=error-row]").length === 1);
    await page.getByRole("link", { name: long }).waitFor();
    // One group, the load bug's (its link), with the three events of
    // both and their three users; its message is its latest event's.
    const got = JSON.stringify(await rows());
    if (got !== JSON.stringify([["TypeError", long, "3", "3"]])) throw new Error(`after the merge: ${got}`);
    const href = await page.getByTestId("error-row").locator(".error-message a").getAttribute("href");
    if (href !== loadHref) throw new Error(`the merged group links to ${href}, not the load group's ${loadHref}`);
  });
  await h.check("at 1280 px the table fits its box with a long message, which is cut", tableFits);
  await shot("errors-long");

  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the Errors page does not push the page sideways", noSidewaysScroll);
  await h.check("at 390 px the groups' table fits its box", tableFits);
  await shot("errors-phone");

  await page.setViewportSize({ width: 1280, height: 800 });
  const events = () => page.locator(".facts > div").filter({ has: page.locator("dt", { hasText: /^Events$/ }) }).locator("dd").textContent();
  await h.check("the kept group's page lists the merged group, who merged it and its own events", async () => {
    await page.getByRole("link", { name: long }).click();
    await page.getByRole("table", { name: "Merged groups" }).waitFor();
    if ((await events()) !== "3") throw new Error(`the merged group counts ${await events()} events`);
    const merged = await page.getByTestId("merged-group").evaluateAll((trs) => trs.map((tr) => [...tr.cells].slice(0, 3).map((td) => td.innerText.trim())));
    if (merged.length !== 1 || !merged[0][0].includes(long) || merged[0][1] !== "1" || !merged[0][2].startsWith("By owner@example.com")) {
      throw new Error(`merged groups ${JSON.stringify(merged)}`);
    }
  });
  await shot("error-group-merged");
  await page.setViewportSize({ width: 390, height: 800 });
  await h.check("at 390 px the merged groups do not push the page sideways, and Unmerge is on screen", async () => {
    await noSidewaysScroll();
    const box = await page.getByRole("button", { name: `Unmerge ${long}` }).boundingBox();
    if (!box || box.x < 0 || box.x + box.width > 390) throw new Error(`Unmerge at ${JSON.stringify(box)}`);
  });
  await shot("error-group-merged-phone");
  await page.setViewportSize({ width: 1280, height: 800 });
  await h.check("Unmerge asks first, then the group loses the merged events and the list has both groups again", async () => {
    const unmerge = page.getByRole("button", { name: `Unmerge ${long}` });
    await unmerge.click();
    const dialog = page.getByRole("alertdialog", { name: "Unmerge this group?" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    if ((await page.getByRole("alertdialog").count()) !== 0) throw new Error("the dialog stayed open");
    await unmerge.click();
    await shot("error-group-unmerge");
    await dialog.getByRole("button", { name: "Unmerge", exact: true }).click();
    await page.getByText(`Unmerged “${long}”: it is its own group again, on the Errors page.`).waitFor();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=merged-group]").length === 0);
    if ((await events()) !== "2") throw new Error(`after the unmerge the group counts ${await events()} events`);
    await page.locator(".crumbs").getByRole("link", { name: "Errors" }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=error-row]").length === 2);
    const got = JSON.stringify(await rows());
    if (got !== JSON.stringify([["TypeError", "marker-load", "2", "2"], ["TypeError", long, "1", "1"]])) throw new Error(`after the unmerge: ${got}`);
  });

  await h.check("the Errors pages ran without script errors or blocked content", async () => {
    noPageErrors();
  });
}
