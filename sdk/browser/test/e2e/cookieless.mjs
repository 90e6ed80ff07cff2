// Cookieless mode in a real browser (README.md, "Cookieless mode"), on a server of its
// own: a product whose owner turned the mode on in Settings (the API the Privacy card
// calls) gets nothing stored by the SDK in cookies, localStorage or sessionStorage;
// two page loads of one browser are one visitor, another browser another; identify()
// still ties the user to the day's visitor; and the page's own `cookieless: true`
// does the same on a product that is not in the mode.
import { createServer } from "node:http";

/** pages serves two pages of one site on 127.0.0.1: the SDK left to the product's setting, and forced cookieless. */
async function startPages(strataUrl, key) {
  const page = (options) => `<!doctype html><html><head><meta charset="utf-8"><title>Cookieless</title>
    <script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
    <script>strata.init(${JSON.stringify({ apiKey: key, ...options })})</script></head>
    <body><p>Cookieless page.</p></body></html>`;
  const pages = { "/product.html": page({}), "/forced.html": page({ cookieless: true }) };
  const server = createServer((req, res) => {
    const body = pages[req.url.split("?")[0]];
    res.writeHead(body ? 200 : 404, { "Content-Type": "text/html; charset=utf-8" });
    res.end(body || "not found");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/** stored lists what the page's origin keeps: storage keys and cookies. */
async function stored(page) {
  const inPage = await page.evaluate(() => [...Object.keys(localStorage), ...Object.keys(sessionStorage).map((k) => "session " + k), ...(document.cookie ? ["cookie " + document.cookie] : [])]);
  const cookies = (await page.context().cookies()).map((c) => `cookie ${c.name} (${c.domain})`);
  return [...inPage, ...cookies];
}

export async function cookieless({ browser, check, startStrata, createTenant, queryClient, waitFor, cleanups }) {
  const strata = await startStrata();
  const tenant = createTenant(strata.dataDir);
  const api = queryClient(strata.url, tenant.token);

  // The owner turns the mode on, as the Settings page's Privacy card does.
  const setup = await fetch(strata.url + "/api/v1/dashboard/setup", {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: strata.url },
    body: JSON.stringify({ email: "owner@example.com", password: "correct horse battery", setupToken: strata.setupToken }),
  });
  if (setup.status !== 201) throw new Error(`setup: ${setup.status} ${await setup.text()}`);
  const cookie = setup.headers.get("set-cookie").split(";")[0];
  const put = await fetch(`${strata.url}/api/v1/products/${tenant.product}/privacy`, {
    method: "PUT",
    headers: { "Content-Type": "application/json", Origin: strata.url, Cookie: cookie },
    body: JSON.stringify({ cookieless: true }),
  });
  if (put.status !== 200) throw new Error(`PUT privacy: ${put.status} ${await put.text()}`);

  const site = await startPages(strata.url, tenant.key);
  cleanups.push(site.close);
  const visitors = async () => {
    const r = await api.call("POST", "/api/v1/query/trend", { series: [{ event: "$pageview", math: "unique_users" }], interval: "day" });
    return r.series[0].data.reduce((n, p) => n + p.value, 0);
  };

  const firefoxish = await browser.newContext();
  const page = await firefoxish.newPage();
  await check("cookieless: the product's setting stores nothing, across two page loads", async () => {
    await page.goto(site.url + "/product.html");
    await page.evaluate(() => window.strata.track("e2e_cl_first"));
    await page.evaluate(() => window.strata.flush());
    await page.reload();
    await page.evaluate(() => window.strata.track("e2e_cl_second"));
    await page.evaluate(() => window.strata.flush());
    if ((await waitFor(() => api.count("$pageview"), 2)) !== 2) throw new Error("the two page views did not arrive");
    const kept = await stored(page);
    if (kept.length) throw new Error(`stored: ${kept.join(", ")}`);
  });
  await check("cookieless: two page loads of one browser are one visitor", async () => {
    const n = await visitors();
    if (n !== 1) throw new Error(`${n} visitors; want 1`);
  });
  await check("cookieless: another browser is another visitor", async () => {
    const other = await browser.newContext({ userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1" });
    const p = await other.newPage();
    await p.goto(site.url + "/product.html");
    await p.evaluate(() => window.strata.flush());
    if ((await waitFor(visitors, 2)) !== 2) throw new Error("the second browser was not a second visitor");
    await other.close();
  });
  await check("cookieless: identify() ties the user to the day's visitor, and stores nothing", async () => {
    await page.evaluate(() => window.strata.identify("e2e_cl_user", { plan: "pro" }));
    await page.evaluate(() => window.strata.track("e2e_cl_identified"));
    await page.evaluate(() => window.strata.flush());
    let events = [];
    const end = Date.now() + 20_000;
    while (events.length < 2 && Date.now() < end) {
      events = (await api.call("GET", "/api/v1/users/e2e_cl_user/events")).events;
      if (events.length < 2) await new Promise((r) => setTimeout(r, 250));
    }
    const names = events.map((e) => e.name).sort();
    if (names.join() !== "$identify,e2e_cl_identified") throw new Error(`the user's events: ${names.join()}`);
    const anon = events.find((e) => e.name === "$identify").properties.$anon_distinct_id;
    if (!/^cl_[0-9a-f]{32}$/.test(anon)) throw new Error(`$anon_distinct_id ${anon}; want the derived visitor`);
    const kept = await stored(page);
    if (kept.length) throw new Error(`stored after identify: ${kept.join(", ")}`);
  });
  await firefoxish.close();

  await check("cookieless: the page's own cookieless option, on a product not in the mode", async () => {
    const plain = createTenant(strata.dataDir);
    const pages = await startPages(strata.url, plain.key);
    cleanups.push(pages.close);
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    await p.goto(pages.url + "/forced.html");
    await p.evaluate(() => window.strata.track("e2e_cl_forced"));
    await p.evaluate(() => window.strata.flush());
    const plainApi = queryClient(strata.url, plain.token);
    if ((await waitFor(() => plainApi.count("e2e_cl_forced"), 1)) !== 1) throw new Error("e2e_cl_forced did not arrive");
    const kept = await stored(p);
    if (kept.length) throw new Error(`stored: ${kept.join(", ")}`);
    await ctx.close();
  });
  await strata.stop();
}
