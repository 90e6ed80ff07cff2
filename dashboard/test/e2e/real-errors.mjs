// Error tracking end to end, with nothing made up: a small app built by
// esbuild (minified, with its sourcemap) runs in Chromium on a page with
// the browser SDK's script tag and `errorTracking: true`; a click throws
// an uncaught error and a promise is rejected; the release's map is
// uploaded as a deploy script would; and the occurrence must show the
// original file, function and line, through the API and on the /errors
// page (screenshot error-real.png).
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setUpOwner } from "./owner.mjs";

/** The app's source: each bug throws from a named function. */
const SOURCE = `// A shop's checkout, for the error tracking test.
export function checkoutTotal(items) {
  const total = items.reduce((sum, item) => sum + item.price, 0);
  if (total > 100) {
    throw new RangeError("the cart is over the limit: " + total);
  }
  return total;
}

export async function loadCart(id) {
  await Promise.resolve();
  throw new TypeError("no cart " + id);
}

document.getElementById("buy").addEventListener("click", () => {
  checkoutTotal([{ price: 60 }, { price: 70 }]);
});
document.getElementById("load").addEventListener("click", () => {
  loadCart(7);
});
`;

/** lineOf returns the 1-based line of the source holding text. */
const lineOf = (text) => SOURCE.slice(0, SOURCE.indexOf(text)).split("\n").length;

/**
 * realBrowserErrors runs the checks on a fresh server. `h` holds the
 * harness's check, startStrata and cleanups, the owner's credentials, the
 * artifacts folder and the repository's root.
 */
export async function realBrowserErrors(browser, h) {
  const { build } = await import(pathToFileURL(join(h.repo, "sdk", "browser", "node_modules", "esbuild", "lib", "main.js")).href);
  const dir = mkdtempSync(join(tmpdir(), "strata-app-"));
  h.cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "app.js"), SOURCE);
  await build({ entryPoints: [join(dir, "app.js")], bundle: true, minify: true, sourcemap: true, sourcesContent: true, format: "iife", outfile: join(dir, "app.min.js"), logLevel: "silent" });
  const minified = readFileSync(join(dir, "app.min.js"), "utf8");
  const map = readFileSync(join(dir, "app.min.js.map"), "utf8");

  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "true" });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(10_000);
  h.cleanups.push(() => context.close());
  const page = await context.newPage();
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // The shop: the SDK from Strata, the app from the shop's own origin.
  const site = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/app.min.js") return res.writeHead(200, { "Content-Type": "text/javascript" }).end(minified);
    if (path === "/shop.html") {
      return res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(`<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>
<script src="${strata.url}/sdk/v1/sdk.min.js"></script>
<script>strata.init({ apiKey: ${JSON.stringify(key)}, errorTracking: true, release: "3.0.0" });</script></head>
<body><button id="buy">Buy</button><button id="load">Load</button><script src="/app.min.js"></script></body></html>`);
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => site.listen(0, "127.0.0.1", r));
  h.cleanups.push(() => new Promise((r) => site.close(r)));
  const siteUrl = `http://127.0.0.1:${site.address().port}`;

  // The deploy uploads the release's map for the script's URL.
  const form = new FormData();
  form.set("release", "3.0.0");
  form.set("url", siteUrl + "/app.min.js");
  form.set("file", new Blob([map], { type: "application/json" }), "app.min.js.map");
  const up = await fetch(strata.url + "/api/v1/sourcemaps", { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form });
  if (up.status !== 201) throw new Error(`upload: ${up.status} ${await up.text()}`);

  const shop = await browser.newContext();
  h.cleanups.push(() => shop.close());
  const tab = await shop.newPage();
  await tab.goto(siteUrl + "/shop.html");
  await tab.click("#buy");
  await tab.click("#load");
  await tab.waitForTimeout(300);
  await tab.evaluate(() => window.strata.flush());

  const api = (path) => page.evaluate(async (p) => (await fetch(p)).json(), path);
  let groups = [];
  for (let i = 0; i < 60 && groups.length < 2; i++) {
    groups = (await api(`/api/v1/errors?product=${productId}`)).groups ?? [];
    if (groups.length < 2) await new Promise((r) => setTimeout(r, 250));
  }
  const want = {
    RangeError: { function: "checkoutTotal", line: lineOf("throw new RangeError") },
    TypeError: { function: "loadCart", line: lineOf("throw new TypeError") },
  };
  for (const [type, w] of Object.entries(want)) {
    await h.check(`a real ${type} from Chromium is de-minified to ${w.function} at app.js:${w.line}, through the API`, async () => {
      const g = groups.find((x) => x.type === type);
      if (!g) throw new Error(`no ${type} group in ${JSON.stringify(groups)}`);
      const detail = await api(`/api/v1/errors/${g.fingerprint}?product=${productId}`);
      const occ = detail.occurrences[0];
      const top = occ.frames.find((f) => f.in_app);
      if (occ.release !== "3.0.0" || !top?.resolved || top.function !== w.function || !top.file.endsWith("app.js") || top.line !== w.line || !top.source_line?.includes("throw new")) {
        throw new Error(`occurrence ${JSON.stringify(occ)}`);
      }
    });
  }
  await h.check("the /errors page shows the real error's original function, file and line", async () => {
    await page.goto(`${strata.url}/errors?product=${productId}`);
    await page.getByRole("table", { name: "Error groups", exact: true }).waitFor();
    await page.getByRole("link", { name: /over the limit/ }).first().click();
    await page.getByRole("heading", { name: "RangeError", exact: true }).waitFor();
    const frame = page.getByTestId("occurrence").first().getByTestId("frame").first();
    const fn = await frame.locator(".frame-function").textContent();
    const loc = await frame.locator(".frame-location").textContent();
    if (fn !== "checkoutTotal" || !new RegExp(`app\\.js:${want.RangeError.line}(:\\d+)?$`).test(loc)) throw new Error(`${fn} at ${loc}`);
  });
  await page.screenshot({ path: join(h.artifacts, "error-real.png"), fullPage: true });
}
