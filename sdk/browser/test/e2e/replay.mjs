// The session replay part of the SDK's end-to-end test (docs/replay.md): a page
// that inits the SDK with replayEnabled is recorded by the real recorder
// (/sdk/v1/replay.min.js, rrweb) in Chromium while a script types a password,
// types into an input and clicks; the chunks the server stored, read both
// through the API and as the raw files in the data directory, decompressed, must
// hold the recording but never the typed password, the typed value, the text of
// the data-strata-mask element or the contents of the data-strata-block one.
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
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

/**
 * segmentRecords reads the chunk records of a replay segment file
 * (internal/store/replayfs/segment.go): magic "SRC1" (a tombstone is
 * "SRT1"), the header's and the data's lengths (little-endian u32), the
 * header as JSON, the data as sent, a CRC-32C.
 */
function segmentRecords(raw) {
  const out = [];
  for (let off = 0; off + 12 <= raw.length; ) {
    const magic = raw.subarray(off, off + 4).toString("latin1");
    const hl = raw.readUInt32LE(off + 4);
    const dl = raw.readUInt32LE(off + 8);
    const header = raw.subarray(off + 12, off + 12 + hl);
    if (magic === "SRC1") out.push({ header: JSON.parse(header.toString("utf8")), data: raw.subarray(off + 12 + hl, off + 12 + hl + dl) });
    off += 12 + hl + dl + 4;
  }
  return out;
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
    for (const name of readdirSync(join(dataDir, "replay", product)).filter((n) => n.endsWith(".seg"))) {
      for (const r of segmentRecords(readFileSync(join(dataDir, "replay", product, name)))) {
        if (r.header.session === sessionId) files.push({ header: r.header, text: decode(r.header.encoding, r.data) });
      }
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

/**
 * replayCap runs a server of its own whose sessions may store 64 KB
 * (--replay-max-session-bytes), records a page that grows by 3 KB of text
 * every half second, and checks that once the server answers a chunk with
 * replay_session_full the recorder sends none of that session again (but
 * for chunks already on their way), that the session is stored within the
 * cap, and that a new session is recorded again.
 */
export async function replayCap({ browser, check, startStrata, createTenant }) {
  const strata = await startStrata({ STRATA_REPLAY_MAX_SESSION_BYTES: "64KB" });
  const { key, token } = createTenant(strata.dataDir);
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Replay cap e2e</title>
    <script src="${strata.url}/sdk/v1/sdk.min.js"></script>
    <script>strata.init({ apiKey: ${JSON.stringify(key)}, replayEnabled: true })</script></head>
    <body><main><h1>A page that grows</h1><div id="grow"></div></main></body></html>`;
  const server = createServer((req, res) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(page));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const siteUrl = `http://127.0.0.1:${server.address().port}`;
  const context = await browser.newContext();
  const sent = []; // every $snapshot request: its session and when it left
  const full = []; // when an answer said replay_session_full, and for which session
  context.on("request", (r) => {
    if (!r.url().startsWith(strata.url + "/e") || !(r.postData() || "").includes("$snapshot")) return;
    const session = JSON.parse(r.postData()).batch[0].properties.$session_id;
    sent.push({ session, at: Date.now() });
  });
  context.on("response", async (r) => {
    if (!r.url().startsWith(strata.url + "/e") || !(r.request().postData() || "").includes("$snapshot")) return;
    const body = await r.text().catch(() => "");
    if (body.includes("replay_session_full")) full.push({ session: JSON.parse(r.request().postData()).batch[0].properties.$session_id, at: Date.now() });
  });
  try {
    const p = await context.newPage();
    await p.goto(siteUrl + "/");
    await p.waitForFunction(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")), null, { timeout: 10000 });
    const grow = () =>
      p.evaluate(() => {
        const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        const el = document.createElement("p");
        el.textContent = Array.from({ length: 3000 }, () => letters[Math.floor(Math.random() * letters.length)]).join("");
        document.getElementById("grow").append(el);
      });
    for (let i = 0; i < 80 && !full.length; i++) {
      await grow();
      await p.mouse.move(10 + (i % 50), 20);
      await p.waitForTimeout(500);
    }
    // Still growing and moving for two more chunk periods.
    for (let i = 0; i < 24; i++) {
      await grow();
      await p.mouse.move(60 - (i % 50), 40);
      await p.waitForTimeout(500);
    }
    const sessionId = await p.evaluate(() => JSON.parse(localStorage.getItem("strata_session")).id);
    await check("the server refuses a chunk past the session's cap with replay_session_full", async () => {
      if (!full.length || full[0].session !== sessionId) throw new Error(`answers ${JSON.stringify(full)} for session ${sessionId}`);
    });
    await check("the recorder sends none of the full session's chunks after that answer", async () => {
      const late = sent.filter((s) => s.session === sessionId && s.at > full[0].at + 100);
      if (late.length) throw new Error(`${late.length} chunks sent after the answer, the last ${late[late.length - 1].at - full[0].at} ms after`);
    });
    await check("the session is stored within the cap", async () => {
      const res = await fetch(`${strata.url}/api/v1/replays/${sessionId}`, { headers: { Authorization: "Bearer " + token } });
      const s = (await res.json()).session;
      if (res.status !== 200 || s.bytes > 64 * 1024 || s.chunks < 2) throw new Error(`${res.status} ${JSON.stringify(s)}`);
    });
    await check("a new session is recorded again", async () => {
      await p.evaluate(() => localStorage.setItem("strata_session", JSON.stringify({ id: "expired", last: 0 })));
      const before = sent.length;
      for (let i = 0; i < 16; i++) {
        await p.mouse.move(100 + i, 100);
        await p.waitForTimeout(500);
        if (sent.slice(before).some((s) => s.session !== sessionId)) return;
      }
      throw new Error(`no chunk of a new session sent; ${sent.length - before} requests since`);
    });
  } finally {
    await context.close();
    server.close();
  }
}

/**
 * replayQuota runs a server of its own whose products may keep ten recorded
 * sessions (--replay-max-sessions 10, the least a cap may be), fills those
 * places with other sessions' chunks, and records a page: the server refuses
 * the page's first chunk with replay_quota_full, after which the recorder
 * sends none of that session (but for chunks already on their way); once one
 * of the other sessions is deleted, the next session is recorded and stored.
 */
export async function replayQuota({ browser, check, startStrata, createTenant }) {
  const places = 10;
  const strata = await startStrata({ STRATA_REPLAY_MAX_SESSIONS: String(places) });
  const { key, token } = createTenant(strata.dataDir);
  const auth = { headers: { Authorization: "Bearer " + token } };
  const data = Buffer.from(JSON.stringify([{ type: 4, data: { href: "https://elsewhere.example/" }, timestamp: Date.now() }])).toString("base64");
  const heldIds = Array.from({ length: places }, (_, i) => `held-${i}`);
  const held = await fetch(`${strata.url}/e`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({ batch: heldIds.map((id) => ({ event_name: "$snapshot", distinct_id: "someone", properties: {
      $session_id: id, $window_id: "w", $chunk_index: 0, $snapshot_encoding: "json", $snapshot_data: data } })) }),
  });
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Replay quota e2e</title>
    <script src="${strata.url}/sdk/v1/sdk.min.js"></script>
    <script>strata.init({ apiKey: ${JSON.stringify(key)}, replayEnabled: true })</script></head>
    <body><main><h1>A product without room</h1><p id="moving">0</p></main></body></html>`;
  const server = createServer((req, res) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(page));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const siteUrl = `http://127.0.0.1:${server.address().port}`;
  const context = await browser.newContext();
  const sent = []; // every $snapshot request: its session and when it left
  const answers = []; // every answer to one: its session, status, body and when it came
  const sessionOf = (r) => JSON.parse(r.postData()).batch[0].properties.$session_id;
  context.on("request", (r) => {
    if (!r.url().startsWith(strata.url + "/e") || !(r.postData() || "").includes("$snapshot")) return;
    sent.push({ session: sessionOf(r), at: Date.now() });
  });
  context.on("response", async (r) => {
    if (!r.url().startsWith(strata.url + "/e") || !(r.request().postData() || "").includes("$snapshot")) return;
    const body = await r.text().catch(() => "");
    answers.push({ session: sessionOf(r.request()), status: r.status(), body, at: Date.now() });
  });
  try {
    await check("other sessions take every place of the product", async () => {
      const body = await held.text();
      if (held.status !== 202 || JSON.parse(body).rejected?.length) throw new Error(`${held.status} ${body}`);
    });
    const p = await context.newPage();
    await p.goto(siteUrl + "/");
    await p.waitForFunction(() => [...document.scripts].some((s) => s.src.endsWith("/sdk/v1/replay.min.js")), null, { timeout: 10000 });
    const busy = async (n) => {
      for (let i = 0; i < n; i++) {
        await p.evaluate((i) => (document.getElementById("moving").textContent = String(i)), i);
        await p.mouse.move(10 + (i % 50), 20 + (i % 7));
        await p.waitForTimeout(500);
      }
    };
    const quota = () => answers.find((a) => a.body.includes('"replay_quota_full"'));
    for (let i = 0; i < 30 && !quota(); i++) await busy(1);
    // Still changing the page and moving for two more chunk periods.
    await busy(24);
    const sessionId = await p.evaluate(() => JSON.parse(localStorage.getItem("strata_session")).id);
    const refused = quota();
    await check("the server refuses the page's chunk with replay_quota_full", async () => {
      if (!refused || refused.session !== sessionId || refused.status !== 400) {
        throw new Error(`answers ${JSON.stringify(answers.map(({ session, status, body }) => ({ session, status, body: body.slice(0, 200) })))} for session ${sessionId}`);
      }
    });
    await check("the recorder sends none of the refused session's chunks after that answer", async () => {
      const late = sent.filter((s) => s.session === sessionId && s.at > refused.at + 100);
      if (late.length) throw new Error(`${late.length} chunks sent after the answer, the last ${late[late.length - 1].at - refused.at} ms after`);
    });
    await check("nothing of the refused session is stored", async () => {
      const res = await fetch(`${strata.url}/api/v1/replays/${sessionId}`, auth);
      if (res.status !== 404) throw new Error(`${res.status} ${await res.text()}`);
    });
    await check("once one of the other sessions is deleted, the next session is recorded and stored", async () => {
      const del = await fetch(`${strata.url}/api/v1/replays/${heldIds[0]}`, { method: "DELETE", ...auth });
      if (del.status !== 204) throw new Error(`deleting another session: ${del.status}`);
      await p.evaluate(() => localStorage.setItem("strata_session", JSON.stringify({ id: "expired", last: 0 })));
      for (let i = 0; i < 30; i++) {
        await busy(1);
        const list = await (await fetch(`${strata.url}/api/v1/replays`, auth)).json();
        if (list.items.some((s) => s.sessionId !== sessionId && !heldIds.includes(s.sessionId))) return;
      }
      throw new Error(`no new session stored; answers since: ${JSON.stringify(answers.filter((a) => a.session !== sessionId).map((a) => a.status))}`);
    });
  } finally {
    await context.close();
    server.close();
  }
}
