// The session replay part of the SDK's end-to-end test (docs/replay.md): a page
// that inits the SDK with replayEnabled is recorded by the real recorder
// (/sdk/v1/replay.min.js, rrweb) in Chromium while a script types a password,
// types into an input and clicks; the chunks the server stored, read both
// through the API and as the raw files in the data directory, decompressed, must
// hold the recording but never the typed password, the typed value, the text of
// the data-strata-mask element or the contents of the data-strata-block one.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

/** The secrets the page holds or is given; none may reach storage. */
export const SECRETS = {
  password: "hunter2-PASSWORD-e2e",
  typed: "Typed-Value-e2e",
  masked: "Masked-Text-ABC123",
  blocked: "Blocked-Contents-QQQ",
};

/** replayPage is the page served at /replay.html. */
export function replayPage(strataUrl, key) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Replay e2e</title>
    <script src="${strataUrl}/sdk/v1/sdk.min.js"></script>
    <script>strata.init({ apiKey: ${JSON.stringify(key)}, replayEnabled: true, errorTracking: true })</script></head>
    <body><main><h1>Record me, visible heading</h1>
    <label>Password <input id="pw" type="password"></label>
    <label>Name <input id="name" type="text"></label>
    <p id="secret" data-strata-mask>${SECRETS.masked}</p>
    <div id="blocked" data-strata-block style="width:200px;height:50px">${SECRETS.blocked}</div>
    <button id="go" onclick="strata.track('replay_clicked')">Go</button>
    </main></body></html>`;
}

/** decode returns a chunk's rrweb events as JSON text. */
function decode(encoding, bytes) {
  return (encoding == "gzip-json" ? gunzipSync(bytes) : bytes).toString("utf8");
}

/**
 * replay runs the checks and returns the recorded session's id; `dataDir` is the
 * server's data directory, `productId` the product's id.
 */
export async function replay({ browser, check, site, api, call, dataDir }) {
  const context = await browser.newContext();
  const answers = [];
  context.on("response", async (r) => {
    if (r.url().endsWith("/e") && r.request().method() === "POST" && (r.request().postData() || "").includes("$snapshot")) {
      if (r.status() !== 503) answers.push({ status: r.status(), body: await r.json().catch(() => ({})) });
    }
  });
  // The server's first answer to a chunk is a 503, as from a proxy while
  // Strata restarts: the recorder must send that chunk (the full snapshot)
  // again, or the recording checks below fail.
  let refused = 0;
  await context.route("**/e", (route) => {
    const r = route.request();
    if (r.method() === "POST" && !refused && (r.postData() || "").includes("$snapshot")) {
      refused++;
      return route.fulfill({ status: 503, body: "try again" });
    }
    return route.continue();
  });
  // Every iframe put in the page, even for a moment: rrweb makes one only
  // when the page replaced a DOM accessor it uses (scripts/esbuild-options.mjs).
  await context.addInitScript(() => {
    window.__iframes = 0;
    new MutationObserver((ms) => ms.forEach((m) => m.addedNodes.forEach((n) => n.nodeName == "IFRAME" && window.__iframes++)))
      .observe(document, { childList: true, subtree: true });
  });
  const page = await context.newPage();
  await page.goto(site.url + "/replay.html");
  await check("the SDK loads the recorder when replayEnabled and the config say so", async () => {
    await page.waitForFunction(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")), null, { timeout: 10000 });
    await page.waitForTimeout(1000);
  });
  await check("the recorder starts without putting an iframe in the page", async () => {
    const n = await page.evaluate(() => window.__iframes);
    if (n !== 0) throw new Error(`${n} iframes added`);
  });
  await page.click("#pw");
  await page.keyboard.type(SECRETS.password, { delay: 20 });
  await page.click("#name");
  await page.keyboard.type(SECRETS.typed, { delay: 20 });
  await page.click("#go");
  await page.mouse.move(100, 300, { steps: 5 });
  await page.click("h1");
  // The chunk timer is 5 s; one more for the answer.
  await page.waitForTimeout(7000);
  const sessionId = await page.evaluate(() => JSON.parse(localStorage.getItem("strata_session")).id);
  await page.goto(site.url + "/plain.html"); // the last chunk, on page hide
  await page.waitForTimeout(1500);

  await check("the server took every chunk (202, nothing rejected), the refused one sent again", async () => {
    if (refused !== 1) throw new Error(`${refused} chunks refused`);
    if (!answers.length) throw new Error("no $snapshot request answered");
    const bad = answers.filter((a) => a.status !== 202 || a.body.rejected?.length);
    if (bad.length) throw new Error(JSON.stringify(bad));
  });
  let chunks = [];
  await check("the session is listed with its page, clicks and duration", async () => {
    const list = await call("GET", "/api/v1/replays");
    const s = list.items.find((x) => x.sessionId === sessionId);
    if (!s) throw new Error(`session ${sessionId} not in ${JSON.stringify(list.items)}`);
    chunks = (await call("GET", "/api/v1/replays/" + sessionId)).chunks;
    if (s.pages < 1 || s.clicks < 3 || s.durationMs < 1000) throw new Error(JSON.stringify(s));
    if (!chunks.some((c) => c.index === 0)) throw new Error("chunk 0, refused once, is not stored");
  });
  await check("events carry the recorded session's $session_id", async () => {
    const n = await api.count("replay_clicked", [{ property: "properties.$session_id", operator: "eq", value: sessionId }]);
    if (n !== 1) throw new Error(`${n} replay_clicked events with the session id`);
  });
  const fromAPI = chunks.map((c) => decode(c.encoding, Buffer.from(c.data, "base64"))).join("\n");
  const files = [];
  for (const product of readdirSync(join(dataDir, "replay"))) {
    const dir = join(dataDir, "replay", product, sessionId);
    let names = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const raw = readFileSync(join(dir, name));
      const nl = raw.indexOf(10);
      const header = JSON.parse(raw.subarray(0, nl).toString("utf8"));
      files.push({ header, text: decode(header.encoding, raw.subarray(nl + 1)) });
    }
  }
  const onDisk = files.map((f) => f.text).join("\n");
  await check("the chunks on disk are the API's, gzipped where the browser can", async () => {
    if (files.length !== chunks.length || !files.length) throw new Error(`${files.length} files, ${chunks.length} chunks`);
    if (!files.some((f) => f.header.encoding === "gzip-json")) throw new Error("no gzip chunk");
  });
  await check("the recording holds the page (its heading, the typing, the clicks)", async () => {
    for (const [what, text] of [["API", fromAPI], ["disk", onDisk]]) {
      if (!text.includes("Record me, visible heading")) throw new Error(`${what}: the heading is not recorded`);
      if (!text.includes('"source":5')) throw new Error(`${what}: no input event recorded`);
      if (!text.includes('"tag":"replay_clicked"')) throw new Error(`${what}: the custom event is not marked`);
    }
  });
  for (const [name, secret] of Object.entries(SECRETS)) {
    await check(`the stored chunks never hold the ${name} text`, async () => {
      for (const [what, text] of [["API", fromAPI], ["disk", onDisk]]) {
        // Also a part of it: a masked value must not leak as its prefix while typed.
        if (text.includes(secret) || text.includes(secret.slice(0, 8))) throw new Error(`${what} holds ${secret}`);
      }
    });
  }
  await context.close();
  return sessionId;
}
