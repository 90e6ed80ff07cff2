// End-to-end test of the WordPress plugin: a throwaway WordPress on its own
// MariaDB, served by PHP's built-in server, with the plugin installed from its
// zip; a real `strata serve` stores the events, and the assertions read them
// back through the query API.
//
//   STRATA_BIN=bin/strata PLUGIN_ZIP=dist/strata-analytics-0.3.1.zip \
//     [CHROMIUM=/usr/bin/chromium] [WORDPRESS=/usr/share/wordpress] node run.mjs
//
// It configures the plugin through its settings page in headless Chromium,
// fetches a post as GPTBot (the site's server must report it: exactly one
// $bot_pageview) and as a person in Chromium (the SDK must send exactly one
// $pageview), checks that a Strata that is down costs the page nothing, and
// that uninstalling removes the plugin's options.
// Everything listens on 127.0.0.1, and every process started here is stopped
// by its own PID, also when a step fails.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { harness } from "../../../../e2e/browser/harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..", "..");
const STRATA_BIN = process.env.STRATA_BIN || join(root, "bin", "strata");
const PLUGIN_ZIP = process.env.PLUGIN_ZIP || join(root, "dist", "strata-analytics-0.3.1.zip");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WORDPRESS = process.env.WORDPRESS || "/usr/share/wordpress";
const MARIADBD = ["/usr/sbin/mariadbd", "/usr/bin/mariadbd"].find(existsSync) || "mariadbd";
/** The whole run is abandoned after this long. */
const DEADLINE_MS = 180_000;
/** How long an event may take to be queryable. */
const ARRIVAL_MS = 15_000;

const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

// playwright-core is the browser SDK's dev dependency; the plugin has no npm
// packages of its own.
const { chromium } = createRequire(join(root, "sdk", "browser", "package.json"))("playwright-core");
const { cleanups, check, startStrata, run } = harness({ strataBin: STRATA_BIN, deadlineMs: DEADLINE_MS, name: "wordpress" });

async function main() {
  for (const [what, path] of [["STRATA_BIN", STRATA_BIN], ["PLUGIN_ZIP", PLUGIN_ZIP], ["CHROMIUM", CHROMIUM], ["WORDPRESS", join(WORDPRESS, "wp-settings.php")]]) {
    if (!existsSync(path)) throw new Error(`${what} ${path} does not exist`);
  }
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), "strata-wp-e2e-"));
  cleanups.push(() => rmSync(tmp, { recursive: true, force: true }));

  const [strata, dbPort] = await Promise.all([startStrata(), startMariaDB(tmp)]);
  const { key, token } = createTenant(strata.dataDir);
  const api = queryClient(strata.url, token);

  const wp = await startWordPress(tmp, dbPort);
  console.log(`# strata, MariaDB and WordPress up in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  await check("activation turns Track AI bots on", async () => {
    if (wp.setup.trackBots !== "1" || !wp.setup.active) throw new Error(JSON.stringify(wp.setup));
  });

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  cleanups.push(() => browser.close());

  // 1. The settings page, as an administrator: defaults, refusals, saving.
  const admin = await browser.newContext();
  const ap = await admin.newPage();
  await ap.goto(wp.url + "/wp-login.php");
  await ap.fill("#user_login", "admin");
  await ap.fill("#user_pass", "e2e-password");
  await Promise.all([ap.waitForURL("**/wp-admin/**"), ap.click("#wp-submit")]);
  const settings = wp.url + "/wp-admin/options-general.php?page=strata-analytics";
  await ap.goto(settings);
  await check("Settings → Strata shows Track AI bots ticked by default", async () => {
    if (!(await ap.isChecked("#strata_analytics_track_bots"))) throw new Error("the box is not ticked");
    if ((await ap.inputValue("#strata_analytics_api_key")) !== "") throw new Error("a key is already set");
  });
  // options.php answers a save with a redirect back, marked settings-updated.
  const save = () => Promise.all([ap.waitForURL(/[?&]settings-updated=true/), ap.click("#submit")]);
  await ap.fill("#strata_analytics_api_key", "st_live_tooshort");
  await ap.fill("#strata_analytics_host", "ftp://files.example.com");
  await save();
  await check("a malformed key and a non-HTTP host are refused with a message each", async () => {
    for (const id of ["#setting-error-strata_analytics_bad_key", "#setting-error-strata_analytics_bad_host"]) {
      if (!(await ap.locator(id).count())) throw new Error(`no ${id}`);
    }
    if ((await ap.inputValue("#strata_analytics_api_key")) !== "" || (await ap.inputValue("#strata_analytics_host")) !== "") {
      throw new Error("a refused value was stored");
    }
  });
  await ap.goto(settings);
  await ap.fill("#strata_analytics_api_key", `  ${key}\n`);
  await ap.fill("#strata_analytics_host", strata.url + "/");
  await save();
  await check("the key and the host are saved, trimmed, with bot tracking still on", async () => {
    if (!(await ap.locator("#setting-error-settings_updated").count())) throw new Error("no 'Settings saved.'");
    const [k, h] = [await ap.inputValue("#strata_analytics_api_key"), await ap.inputValue("#strata_analytics_host")];
    if (k !== key || h !== strata.url) throw new Error(`stored ${k} and ${h}`);
    if (!(await ap.isChecked("#strata_analytics_track_bots"))) throw new Error("the box is not ticked");
  });
  await check("options.php refuses a settings post without the form's nonce", async () => {
    const res = await ap.request.post(wp.url + "/wp-admin/options.php", {
      form: { option_page: "strata_analytics", action: "update", strata_analytics_host: "https://evil.example", strata_analytics_api_key: key },
      maxRedirects: 0,
    });
    if (res.status() !== 403) throw new Error(`status ${res.status()}`);
    await ap.goto(settings);
    if ((await ap.inputValue("#strata_analytics_host")) !== strata.url) throw new Error("the host changed");
  });
  await admin.close();

  // 2. AI bots: GPTBot fetches the post; the server reports it. Googlebot (a
  //    search crawler, not an AI bot) and a bot's feed fetch are not reported.
  const post = wp.url + "/?p=1";
  await check("GPTBot gets the page, without the SDK (its fetch is reported by the server)", async () => {
    const res = await fetch(post, { headers: { "User-Agent": GPTBOT } });
    const html = await res.text();
    if (res.status !== 200 || !html.includes("Hello world!")) throw new Error(`status ${res.status}`);
    if (html.includes("sdk.min.js")) throw new Error("the page loads the SDK");
  });
  for (const [ua, path] of [[GOOGLEBOT, "/?p=1"], [GPTBOT, "/?feed=rss2"]]) {
    const res = await fetch(wp.url + path, { headers: { "User-Agent": ua } });
    await res.arrayBuffer();
  }
  await check("GET /api/v1/query/bots shows GPTBot with one hit on the post", async () => {
    const bots = await waitFor(() => api.get("/api/v1/query/bots"), (b) => b.bots.length > 0);
    const got = bots.bots.map((b) => `${b.name}:${b.hits}:${b.category}`).join();
    if (got !== "GPTBot:1:ai_crawler") throw new Error(`bots ${got}`);
    const pages = bots.topPages.map((p) => `${p.url}:${p.hits}`).join();
    if (pages !== `${post}:1`) throw new Error(`topPages ${pages}`);
  });
  await check("the bot's event is marked server-captured", async () => {
    const n = await api.count("$bot_pageview", [{ property: "properties.$server_captured", operator: "eq", value: "true" }]);
    if (n !== 1) throw new Error(`${n} events`);
  });

  // 3. A person in Chromium: the SDK from Strata, initialised with the key,
  //    sends the $pageview.
  const visitor = await browser.newContext();
  const pageErrors = [];
  visitor.on("weberror", (e) => pageErrors.push(e.error().message));
  const vp = await visitor.newPage();
  const sent = vp.waitForResponse((r) => r.url().startsWith(strata.url + "/e") && r.request().method() === "POST", { timeout: 15_000 });
  await vp.goto(post);
  await check("a visitor's page loads the SDK from Strata and initialises it with the key", async () => {
    const html = await vp.content();
    if (!html.includes(`src="${strata.url}/sdk/v1/sdk.min.js"`)) throw new Error("no SDK script tag");
    if (!html.includes(`strata.init({ apiKey: "${key}" })`)) throw new Error("no init call");
  });
  await check("the SDK sends the visit and Strata accepts it", async () => {
    const res = await sent;
    const body = await res.json();
    if (res.status() !== 202 || body.rejected?.length) throw new Error(`${res.status()} ${JSON.stringify(body)}`);
  });
  await check("exactly one human $pageview arrived, for the post", async () => {
    const n = await waitFor(() => api.count("$pageview"), (n) => n >= 1);
    if (n !== 1) throw new Error(`${n} page views`);
    const onPost = await api.count("$pageview", [{ property: "url", operator: "eq", value: post }]);
    if (onPost !== 1) throw new Error(`${onPost} page views of ${post}`);
  });
  await visitor.close();
  await check("no error on the visitor's page", async () => {
    if (pageErrors.length) throw new Error(pageErrors.join("; "));
  });

  // 4. Strata down: the page is served as fast as ever, and nothing breaks.
  const closed = await freePort();
  php(join(here, "set-option.php"), wp.dir, "strata_analytics_host", `http://127.0.0.1:${closed}`);
  await check("with Strata down, a bot's page is still served at once", async () => {
    const t0 = Date.now();
    const res = await fetch(post, { headers: { "User-Agent": GPTBOT } });
    const html = await res.text();
    const ms = Date.now() - t0;
    if (res.status !== 200 || !html.includes("Hello world!")) throw new Error(`status ${res.status}`);
    if (ms > 1500) throw new Error(`took ${ms} ms`);
  });

  // Exactly once: later, the counts still hold.
  await new Promise((r) => setTimeout(r, 1500));
  await check("still exactly one $bot_pageview (GPTBot) and one $pageview later", async () => {
    const bots = await api.get("/api/v1/query/bots");
    const got = bots.bots.map((b) => `${b.name}:${b.hits}`).join();
    if (got !== "GPTBot:1") throw new Error(`bots ${got}`);
    for (const [event, want] of [["$bot_pageview", 1], ["$pageview", 1]]) {
      const n = await api.count(event);
      if (n !== want) throw new Error(`${n} ${event}`);
    }
  });
  await check("PHP logged no warning from the plugin", async () => {
    const log = existsSync(wp.debugLog) ? readFileSync(wp.debugLog, "utf8") : "";
    const ours = log.split("\n").filter((l) => l.includes("strata-analytics"));
    if (ours.length) throw new Error(ours.slice(0, 3).join(" | "));
  });

  // 5. Deleting the plugin removes its options.
  await check("uninstalling removes the plugin's options", async () => {
    const options = JSON.parse(php(join(here, "uninstall.php"), wp.dir));
    const left = Object.entries(options).filter(([, v]) => v !== false);
    if (left.length) throw new Error(`left: ${JSON.stringify(left)}`);
    if (Object.keys(options).length !== 3) throw new Error(JSON.stringify(options));
  });
  console.log(`# ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * startMariaDB initialises a throwaway data directory, starts mariadbd on a
 * free loopback port with it, creates the site's database and resolves to
 * the port.
 */
async function startMariaDB(tmp) {
  const dir = join(tmp, "mysql");
  const asRoot = process.getuid?.() === 0 ? ["--user=root"] : [];
  execFileSync("mariadb-install-db", ["--no-defaults", `--datadir=${dir}`, "--auth-root-authentication-method=normal", "--skip-test-db", ...asRoot], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await freePort();
  const child = startProcess("mariadbd", MARIADBD, [
    "--no-defaults", `--datadir=${dir}`, `--socket=${join(tmp, "mysql.sock")}`, `--pid-file=${join(tmp, "mysql.pid")}`,
    `--port=${port}`, "--bind-address=127.0.0.1", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", ...asRoot,
  ], { log: join(tmp, "mariadb.log") });
  await waitForLog(child, /ready for connections/, 30_000, "mariadbd");
  execFileSync("mariadb", ["--no-defaults", "-h", "127.0.0.1", "-P", String(port), "-u", "root", "-e", "CREATE DATABASE wordpress"]);
  return port;
}

/**
 * startWordPress copies WordPress into tmp with a wp-config.php of its own
 * (Debian's reads /etc/wordpress), the test theme and the plugin from its
 * zip, installs it, and serves it with PHP's built-in server.
 */
async function startWordPress(tmp, dbPort) {
  const dir = join(tmp, "site");
  cpSync(WORDPRESS, dir, { recursive: true, dereference: false, filter: (src) => !/\/(wp-config\.php|\.htaccess)$/.test(src) });
  cpSync(join(here, "theme"), join(dir, "wp-content", "themes", "strata-e2e"), { recursive: true });
  execFileSync("unzip", ["-q", PLUGIN_ZIP, "-d", join(dir, "wp-content", "plugins")]);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const debugLog = join(tmp, "debug.log");
  const salt = (name) => `define('${name}', '${name.toLowerCase()}-strata-e2e');`;
  writeFileSync(
    join(dir, "wp-config.php"),
    `<?php
// The plugin's end-to-end test: a throwaway site on its own MariaDB.
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', '127.0.0.1:${dbPort}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
${["AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"].map(salt).join("\n")}
$table_prefix = 'wp_';
define('WP_HOME', '${url}');
define('WP_SITEURL', '${url}');
define('WP_DEBUG', true);
define('WP_DEBUG_DISPLAY', false);
define('WP_DEBUG_LOG', '${debugLog}');
// No cron requests to itself, no calls to wordpress.org (the machine may
// have no network); 127.0.0.1 is the site's own host, so Strata stays reachable.
define('DISABLE_WP_CRON', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
if (!defined('ABSPATH')) {
\tdefine('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
`,
  );
  const setup = JSON.parse(php(join(here, "setup.php"), dir));
  // Workers, so that the admin's styles and scripts load in parallel.
  const child = startProcess("php -S", "php", ["-S", `127.0.0.1:${port}`, "-t", dir], {
    log: join(tmp, "php.log"),
    env: { PHP_CLI_SERVER_WORKERS: "4" },
    group: true,
  });
  await waitForLog(child, /Development Server .* started/, 15_000, "php -S");
  return { url, dir, debugLog, setup };
}

/** php runs a PHP script and returns what it printed. */
function php(script, ...args) {
  return execFileSync("php", [script, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

/**
 * startProcess spawns a server, copies its output to log, and registers its
 * stop: SIGTERM to its PID (to its process group when group is set, for
 * servers that fork workers), SIGKILL after 10 s.
 */
function startProcess(name, cmd, args, { log, env = {}, group = false }) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: group });
  const out = createWriteStream(log);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  child.lines = [];
  for (const s of [child.stdout, child.stderr]) s.on("data", (d) => child.lines.push(...d.toString().split("\n")));
  const exited = new Promise((r) => child.once("exit", r));
  child.exited = exited;
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const target = group ? -child.pid : child.pid;
    process.kill(target, "SIGTERM");
    const t = setTimeout(() => {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, 10_000);
    await exited;
    clearTimeout(t);
  });
  child.name = name;
  return child;
}

/** waitForLog resolves once a line of the child's output matches re. */
async function waitForLog(child, re, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (child.lines.some((l) => re.test(l))) return;
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${child.lines.slice(-20).join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start within ${ms / 1000} s:\n${child.lines.slice(-20).join("\n")}`);
}

/** freePort returns a loopback port that was free a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** waitFor polls query until done(answer) or time runs out, and returns the last answer. */
async function waitFor(query, done) {
  const end = Date.now() + ARRIVAL_MS;
  let got = await query();
  while (!done(got) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    got = await query();
  }
  return got;
}

/** createTenant makes a product, a live key and a query token with the CLI. */
function createTenant(dataDir) {
  const cli = (...args) =>
    execFileSync(STRATA_BIN, [...args, "--data", dataDir], { env: { ...process.env, STRATA_DATA: "" }, encoding: "utf8" }).trim();
  const product = JSON.parse(cli("products", "create", "--name", "WordPress e2e")).id;
  return {
    key: cli("keys", "create", "--product", String(product)),
    token: cli("tokens", "create", "--product", String(product)),
  };
}

/** queryClient reads the query API with a bearer token. */
function queryClient(base, token) {
  const call = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    get: (path) => call("GET", path),
    /** count is the number of `event` events passing `filters` over the last 30 days. */
    async count(event, filters = []) {
      const r = await call("POST", "/api/v1/query/trend", { series: [{ event, math: "total" }], interval: "day", filters });
      return r.series[0].data.reduce((n, p) => n + p.value, 0);
    },
  };
}

run(main);
