// Opting out in a real browser (README.md, "Opting out"): optOut() stops the
// SDK across a reload and optIn() resumes it; Global Privacy Control silences
// a page that asks to honour it (respectPrivacySignals) and no other, and a
// silenced page stores no id. Counts are read back through the query API.

/** How long to wait for events that must not arrive. */
const QUIET_MS = 3_000;

/** The page that honours privacy signals. */
export function optOutPage(strataUrl, key) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Opt out</title>
    <script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
    <script>strata.init({ apiKey: ${JSON.stringify(key)}, respectPrivacySignals: true })</script></head>
    <body><p>Opt-out page.</p></body></html>`;
}

export async function optOut({ browser, check, site, api, waitFor }) {
  const count = (name) => api.count(name);
  const quiet = () => new Promise((r) => setTimeout(r, QUIET_MS));

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(site.url + "/optout.html");
  await check("opt-out: events arrive before optOut()", async () => {
    await page.evaluate(() => window.strata.track("e2e_optout_before"));
    await page.evaluate(() => window.strata.flush());
    if ((await waitFor(() => count("e2e_optout_before"), 1)) !== 1) throw new Error("e2e_optout_before did not arrive");
  });
  await check("opt-out: nothing is sent after optOut(), across a reload", async () => {
    await page.evaluate(() => window.strata.optOut());
    await page.evaluate(() => window.strata.track("e2e_optout_after"));
    await page.reload();
    const remembered = await page.evaluate(() => window.strata.hasOptedOut());
    if (!remembered) throw new Error("hasOptedOut() is false after the reload");
    await page.evaluate(() => window.strata.track("e2e_optout_after"));
    await page.evaluate(() => window.strata.flush());
    await quiet();
    const n = await count("e2e_optout_after");
    if (n !== 0) throw new Error(`${n} events arrived after optOut()`);
  });
  await check("opt-out: optIn() resumes sending", async () => {
    await page.evaluate(() => window.strata.optIn());
    await page.evaluate(() => window.strata.track("e2e_optin"));
    await page.evaluate(() => window.strata.flush());
    if ((await waitFor(() => count("e2e_optin"), 1)) !== 1) throw new Error("e2e_optin did not arrive");
  });
  await context.close();

  // A browser that sends Global Privacy Control.
  const gpc = await browser.newContext();
  await gpc.addInitScript(() => Object.defineProperty(Navigator.prototype, "globalPrivacyControl", { get: () => true, configurable: true }));
  const honouring = await gpc.newPage();
  await honouring.goto(site.url + "/optout.html");
  await check("opt-out: Global Privacy Control silences a page that honours it, which stores no id", async () => {
    const silent = await honouring.evaluate(() => window.strata.hasOptedOut());
    if (!silent) throw new Error("hasOptedOut() is false under GPC with respectPrivacySignals");
    await honouring.evaluate(() => window.strata.track("e2e_gpc_honoured"));
    await honouring.evaluate(() => window.strata.flush());
    const stored = await honouring.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("strata_")).concat(document.cookie ? [document.cookie] : []));
    if (stored.length) throw new Error(`stored under GPC: ${stored.join(", ")}`);
    await quiet();
    const n = await count("e2e_gpc_honoured");
    if (n !== 0) throw new Error(`${n} events arrived under GPC`);
  });
  await check("opt-out: a page that does not ask to honour GPC still counts", async () => {
    const other = await gpc.newPage();
    await other.goto(site.url + "/basic.html");
    await other.evaluate(() => window.strata.track("e2e_gpc_ignored"));
    await other.evaluate(() => window.strata.flush());
    if ((await waitFor(() => count("e2e_gpc_ignored"), 1)) !== 1) throw new Error("e2e_gpc_ignored did not arrive");
  });
  await gpc.close();
}
