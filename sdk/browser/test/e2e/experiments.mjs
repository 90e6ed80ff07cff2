// The experiments part of the SDK's end-to-end test: many users (each a
// fresh browser context, so a fresh anonymous id) open a page that asks
// `flags.getVariant` of a running experiment's flag, twice and again after
// a reload, and some of them convert. The test counts what the pages were
// given itself and compares it with the server's results endpoint: one
// exposure per user and session, each user in the arm the page got, the
// conversions in their arms. Then the experiment is paused, and a page that
// still holds the cached configuration keeps its variant on a reload, and
// turns to `control` once the SDK's 5-minute config cache expires (the
// page's clock is moved on; the browser's HTTP cache is turned off, since
// its 60-second max-age runs on the real clock).

/** USERS is how many users open the page. */
const USERS = 30;

/**
 * experiments runs the checks. `check` is the harness's; `api` reads
 * counts; `call` sends an authenticated API request.
 */
export async function experiments({ browser, check, site, call, api }) {
  const created = await call("POST", "/api/v1/experiments", { name: "Hero copy" });
  const base = `/api/v1/experiments/${created.id}`;
  await call("POST", base + "/start");
  const page = (extra = "") =>
    `/exp.html?flag=${encodeURIComponent(created.flagKey)}${extra}`;

  /** Each user's variant as the page reported it, and who converted. */
  const given = [];
  for (let i = 0; i < USERS; i++) {
    const context = await browser.newContext();
    const p = await context.newPage();
    await p.goto(site.url + page(i % 3 == 0 ? "&convert=1" : ""));
    const first = await p.evaluate(async () => { await window.variantsReady; return window.variants; });
    await p.reload();
    const again = await p.evaluate(async () => { await window.variantsReady; return window.variants; });
    await p.evaluate(() => window.strata.flush());
    given.push({ variant: first[0], converted: i % 3 == 0, same: first.concat(again).every((v) => v == first[0]) });
    await p.waitForTimeout(300);
    await context.close();
  }
  const want = {};
  for (const g of given) {
    want[g.variant] ??= { exposed: 0, converted: 0 };
    want[g.variant].exposed++;
    if (g.converted) want[g.variant].converted++;
  }

  await check("a user keeps their variant across calls and a reload", async () => {
    const moved = given.filter((g) => !g.same);
    if (moved.length) throw new Error(JSON.stringify(moved));
    if (!want.control || !want.treatment) throw new Error(`${USERS} users all got one arm: ${JSON.stringify(want)}`);
  });
  await check("one $exposure per user and session, though each asked four times", async () => {
    const got = await waitForValue(() => api.count("$exposure"), USERS);
    if (got !== USERS) throw new Error(`expected ${USERS}, got ${got}`);
  });
  await check("the results endpoint counts the users and conversions the pages saw", async () => {
    let r;
    const end = Date.now() + 20_000;
    do {
      r = await call("GET", base + "/results");
      if (r.arms.reduce((n, a) => n + a.exposed, 0) + r.holdout >= USERS && r.metrics[0].arms.reduce((n, a) => n + a.converted, 0) >= given.filter((g) => g.converted).length) break;
      await new Promise((res) => setTimeout(res, 250));
    } while (Date.now() < end);
    const got = {};
    for (const a of r.metrics[0].arms) got[a.variant] = { exposed: a.exposed, converted: a.converted };
    for (const v of ["control", "treatment"]) {
      const w = want[v] || { exposed: 0, converted: 0 };
      if (got[v]?.exposed !== w.exposed || got[v]?.converted !== w.converted) {
        throw new Error(`arm ${v}: results ${JSON.stringify(got[v])}, the pages ${JSON.stringify(w)} (${JSON.stringify(r)})`);
      }
    }
    if (r.holdout !== 0 || r.multipleArms !== 0) throw new Error(`holdout ${r.holdout}, several arms ${r.multipleArms}`);
  });

  // A user who got treatment, in a session that has the configuration cached.
  await check("a paused experiment gives control once the config cache expires", async () => {
    for (let i = 0; i < 20; i++) {
      const context = await browser.newContext();
      try {
        const p = await context.newPage();
        const cdp = await context.newCDPSession(p);
        await cdp.send("Network.enable");
        await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
        await p.clock.install();
        await p.goto(site.url + page());
        const [v] = await p.evaluate(async () => { await window.variantsReady; return window.variants; });
        if (v !== "treatment") continue;
        await call("POST", base + "/pause");
        await p.reload();
        const cached = await p.evaluate(async () => { await window.variantsReady; return window.variants; });
        if (cached[0] !== "treatment") throw new Error(`right after the pause the cached config gave ${cached[0]}`);
        // Five minutes and a second later on the page's clock, the same
        // page asks again: both the variant (60 s) and the config (5 min)
        // have expired.
        await p.clock.fastForward("05:01");
        const after = await p.evaluate((flag) => window.strata.flags.getVariant(flag), created.flagKey);
        if (after !== "control") {
          const dbg = await p.evaluate(() => ({ now: Date.now(), cache: sessionStorage.getItem("strata_config") }));
          throw new Error(`after the cache expired: ${after} ${JSON.stringify(dbg).slice(0, 600)}`);
        }
        return;
      } finally {
        await context.close();
      }
    }
    throw new Error("no user of 20 got treatment");
  });
}

/** expPage is the test page: it asks for the flag named in ?flag= twice. */
export function expPage(head) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Experiment</title>${head}</head><body>
    <p>Experiment.</p>
    <script>
      const q = new URLSearchParams(location.search);
      window.variantsReady = (async () => {
        const a = await strata.flags.getVariant(q.get("flag"));
        const b = await strata.flags.getVariant(q.get("flag"));
        if (q.get("convert")) strata.track("purchase", { converted: 1 });
        window.variants = [a, b];
      })();
    </script></body></html>`;
}

/** waitForValue polls a count until it reaches want or 20 s pass. */
async function waitForValue(query, want) {
  const end = Date.now() + 20_000;
  let got = await query();
  while (got < want && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    got = await query();
  }
  return got;
}
