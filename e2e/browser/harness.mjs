// The harness the end-to-end scripts share (sdk/browser, sdk/node and
// dashboard, each `test/e2e/run.mjs`): TAP-like checks, a real
// `strata serve` on a free loopback port with a fresh data directory, and
// clean-up that stops every process started by its own PID. Node builtins
// only, so each package imports it by path.
//
// Every server is reached through its own e2e/cmd/openapi-proxy, which
// checks each response against api/openapi.yaml with the Go suite's checker
// (e2e/openapicheck): `url` is the proxy's address. At the end the run
// fails, listing them, if any response did not match. OPENAPI_PROXY names a
// built proxy (the Makefile builds bin/openapi-proxy); without it the
// harness builds one with `go build`.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * harness returns the shared pieces of one run: `cleanups` (run last
 * first at the end), `check`, `startStrata` and `run`, which runs main
 * under a deadline, prints "N passed, M failed" and exits 0 only when
 * every check passed.
 */
export function harness({ strataBin, deadlineMs, name }) {
  const cleanups = [];
  const results = [];
  // The proxies' violation files and closing lines, read once all stopped.
  const contract = { dir: "", files: [], summaries: [], proxyBin: "" };

  async function check(what, fn) {
    try {
      await fn();
      results.push(true);
      console.log(`ok - ${what}`);
    } catch (e) {
      results.push(false);
      console.log(`not ok - ${what}: ${e.message.split("\n")[0]}`);
    }
  }

  /**
   * startStrata runs `strata serve` with env added to this process's and
   * resolves, once it listens, to `{url, dataDir, setupToken, setupUrl}`:
   * the last two are the first-run setup token and the address carrying it
   * that the server logs while the dashboard has no owner (before
   * "listening"), or "" when it logged none. `stop()` ends the server
   * (SIGTERM, by its PID) and resolves once it exited, for tests of what
   * clients do while it is gone.
   */
  async function startStrata(env = {}) {
    const dataDir = mkdtempSync(join(tmpdir(), `strata-${name}-e2e-`));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const child = spawn(strataBin, ["serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--log-format", "json"], {
      // The free-space floor is lowered so that the runs do not depend on
      // how full the machine's disk is (e2e/disk_test.go tests the floor).
      env: { ...process.env, STRATA_ADDR: "", STRATA_DATA: "", STRATA_MIN_FREE_DISK: "8MB", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = new Promise((r) => child.once("exit", r));
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid, "SIGTERM");
      const t = setTimeout(() => child.exitCode === null && process.kill(child.pid, "SIGKILL"), 30_000);
      await exited;
      clearTimeout(t);
    };
    cleanups.push(stop);
    const logs = [];
    const setup = { setupToken: "", setupUrl: "" };
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("strata did not listen within 60 s:\n" + logs.join("\n"))), 60_000);
      createInterface({ input: child.stderr }).on("line", (line) => {
        logs.push(line);
        try {
          const rec = JSON.parse(line);
          if (rec.setup_token) {
            setup.setupToken = rec.setup_token;
            setup.setupUrl = rec.url;
          }
          if (rec.msg === "listening") {
            clearTimeout(timer);
            resolve("http://" + rec.addr);
          }
          if (rec.level === "ERROR") console.log("# strata:", line);
        } catch {
          // Not a JSON log line.
        }
      });
      exited.then((code) => reject(new Error(`strata exited (${code}) before listening:\n` + logs.join("\n"))));
    });
    const proxy = await startProxy(url);
    // The setup address carries the server's own address; the browser
    // opens it through the proxy.
    if (setup.setupUrl.startsWith(url)) setup.setupUrl = proxy.url + setup.setupUrl.slice(url.length);
    // Stopping the server stops its proxy too, so that clients find nothing
    // listening, as they would without it.
    const stopBoth = async () => {
      await stop();
      await proxy.stop();
    };
    return { url: proxy.url, serverUrl: url, dataDir, ...setup, stop: stopBoth };
  }

  /**
   * startProxy starts an openapi-proxy in front of the server at target
   * and resolves to `{url, stop}`; its violations go to a file of their own
   * in contract.dir.
   */
  async function startProxy(target) {
    if (!contract.dir) {
      contract.dir = mkdtempSync(join(tmpdir(), `strata-${name}-openapi-`));
      // First in, so last out: every proxy has stopped, and written all it
      // found, when the files are read.
      cleanups.unshift(() => {
        checkContract();
        rmSync(contract.dir, { recursive: true, force: true });
      });
    }
    const bin = proxyBinary();
    const file = join(contract.dir, `violations-${contract.files.length}.jsonl`);
    contract.files.push(file);
    const child = spawn(bin, ["--target", target, "--spec", join(repo, "api", "openapi.yaml"), "--violations", file], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((r) => child.once("exit", r));
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid, "SIGTERM");
      const t = setTimeout(() => child.exitCode === null && process.kill(child.pid, "SIGKILL"), 30_000);
      await exited;
      clearTimeout(t);
    };
    cleanups.push(stop);
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("openapi-proxy did not listen within 60 s")), 60_000);
      createInterface({ input: child.stdout }).on("line", (line) => {
        const m = /^listening (http:\/\/\S+)$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        } else {
          contract.summaries.push(`${target}: ${line}`);
        }
      });
      exited.then((code) => reject(new Error(`openapi-proxy exited (${code}) before listening`)));
    });
    return { url, stop };
  }

  /** proxyBinary returns OPENAPI_PROXY, or a proxy built once with `go build`. */
  function proxyBinary() {
    if (process.env.OPENAPI_PROXY) return process.env.OPENAPI_PROXY;
    if (!contract.proxyBin) {
      const bin = join(contract.dir, "openapi-proxy");
      execFileSync("go", ["build", "-o", bin, "./e2e/cmd/openapi-proxy"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
      contract.proxyBin = bin;
    }
    return contract.proxyBin;
  }

  /**
   * checkContract, once every proxy stopped, records one check: every
   * response matched api/openapi.yaml, or the list of those that did not.
   */
  function checkContract() {
    if (!contract.files.length) return;
    for (const line of contract.summaries) console.log(`# openapi-proxy ${line}`);
    const found = [];
    for (const file of contract.files) {
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (line) found.push(JSON.parse(line));
      }
    }
    for (const v of found) console.log(`# ${v.method} ${v.path} ${v.status}: ${v.error.replace(/\s*\n\s*/g, " ")}`);
    const ok = found.length === 0;
    results.push(ok);
    console.log(ok ? "ok - every response matched api/openapi.yaml" : `not ok - ${found.length} responses do not match api/openapi.yaml (listed above)`);
  }

  // One clean-up a run: when the deadline's and main's ends overlap, the
  // second waits for the first, so that the exit cuts nothing short (the
  // proxies' report above all).
  let cleaning = null;
  function cleanup() {
    cleaning ??= (async () => {
      for (const f of cleanups.splice(0).reverse()) {
        try {
          await f();
        } catch (e) {
          console.log("# cleanup:", e.message);
        }
      }
    })();
    return cleaning;
  }

  async function run(main) {
    const deadline = setTimeout(async () => {
      console.log(`not ok - the run took longer than ${deadlineMs / 1000} s`);
      results.push(false);
      await cleanup();
      process.exit(1);
    }, deadlineMs);
    try {
      await main();
    } catch (e) {
      results.push(false);
      console.log(`not ok - ${e.stack || e.message}`);
    } finally {
      clearTimeout(deadline);
      await cleanup();
    }
    const passed = results.filter(Boolean).length;
    console.log(`${passed} passed, ${results.length - passed} failed`);
    process.exit(results.length && passed === results.length ? 0 : 1);
  }

  return { cleanups, check, startStrata, run };
}
