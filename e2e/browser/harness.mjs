// The harness the end-to-end scripts share (sdk/browser, sdk/node,
// dashboard and plugins/wordpress, each `test/e2e/run.mjs`): TAP-like checks, a real
// `strata serve` on a free loopback port with a fresh data directory, and
// clean-up that stops every process started by its own PID. Node builtins
// only, so each package imports it by path.
//
// Every server is reached through e2e/cmd/openapi-proxy (one process a
// run, a port of its own for each server), which checks each response
// against api/openapi.yaml with the Go suite's checker (e2e/openapicheck):
// `url` is the proxy's address. At the end the run fails, listing them, if
// any response did not match. OPENAPI_PROXY names a built proxy (the
// Makefile builds bin/openapi-proxy); without it the harness builds one
// with `go build`.
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
  // The run's openapi-proxy: its directory and violations file, the
  // commands waiting for an answer (by server address), and what it
  // reported when each front closed.
  const contract = { ready: null, closed: false, dir: "", file: "", waiting: new Map(), summaries: [], cpu: "" };

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
   * resolves, once it listens, to `{url, serverUrl, dataDir, setupToken,
   * setupUrl}`: `url` is the openapi-proxy's port in front of the server,
   * which every client should use, `serverUrl` the server's own address;
   * the last two are the first-run setup token and the address carrying it
   * (on the proxy's port) that the server logs while the dashboard has no
   * owner (before "listening"), or "" when it logged none. `stop()` ends
   * the server (SIGTERM, by its PID) and closes its proxy port, and
   * resolves once both are gone, for tests of what clients do meanwhile.
   */
  async function startStrata(env = {}) {
    // The proxy loads the document while the server starts.
    proxyProcess().catch(() => {});
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
   * proxyProcess starts the run's openapi-proxy, once, and resolves when it
   * reads commands. Its last clean-up (first in, so last out, after every
   * server stopped) ends its input, waits until it has written all it
   * found, then records the check.
   */
  function proxyProcess() {
    contract.ready ??= new Promise((resolve, reject) => {
      contract.dir = mkdtempSync(join(tmpdir(), `strata-${name}-openapi-`));
      contract.file = join(contract.dir, "violations.jsonl");
      const bin = proxyBinary();
      const child = spawn(bin, ["--spec", join(repo, "api", "openapi.yaml"), "--violations", contract.file], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      // "close", not "exit": every line it wrote has been read by then.
      const closed = new Promise((r) => child.once("close", r));
      cleanups.unshift(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.end();
          const t = setTimeout(() => child.exitCode === null && process.kill(child.pid, "SIGTERM"), 30_000);
          await closed;
          clearTimeout(t);
        }
        checkContract();
        rmSync(contract.dir, { recursive: true, force: true });
      });
      createInterface({ input: child.stdout }).on("line", (line) => {
        const [word, target, ...rest] = line.split(" ");
        const waiting = contract.waiting.get(target);
        if (word === "ready") resolve(child);
        else if (word === "cpu") contract.cpu = target;
        else if (word === "listening" || word === "stopped") {
          if (word === "stopped") contract.summaries.push(`${target}: ${rest.join(" ")}`);
          contract.waiting.delete(target);
          waiting?.resolve(rest[0]);
        } else if (word === "error") {
          contract.waiting.delete(target);
          waiting?.reject(new Error(`openapi-proxy: ${rest.join(" ")}`));
        }
      });
      closed.then((code) => {
        contract.closed = true;
        reject(new Error(`openapi-proxy exited (${code}) before it was ready`));
        for (const w of contract.waiting.values()) w.reject(new Error(`openapi-proxy exited (${code})`));
      });
    });
    return contract.ready;
  }

  /** command sends the proxy one command about target and resolves to its answer. */
  async function command(word, target) {
    const child = await proxyProcess();
    // A front asked to stop after the run's end is closed already.
    if (contract.closed) return "";
    return new Promise((resolve, reject) => {
      contract.waiting.set(target, { resolve, reject });
      child.stdin.write(`${word} ${target}\n`);
    });
  }

  /**
   * startProxy puts the run's proxy in front of the server at target and
   * resolves to `{url, stop}`; `stop()` closes that front only.
   */
  async function startProxy(target) {
    const url = await command("proxy", target);
    let stopped = null;
    const stop = () => (stopped ??= command("stop", target));
    return { url, stop };
  }

  /** proxyBinary returns OPENAPI_PROXY, or a proxy built with `go build`. */
  function proxyBinary() {
    if (process.env.OPENAPI_PROXY) return process.env.OPENAPI_PROXY;
    const bin = join(contract.dir, "openapi-proxy");
    execFileSync("go", ["build", "-o", bin, "./e2e/cmd/openapi-proxy"], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
    return bin;
  }

  /**
   * checkContract, once the proxy stopped, records one check: every
   * response matched api/openapi.yaml, or the list of those that did not.
   */
  function checkContract() {
    for (const line of contract.summaries) console.log(`# openapi-proxy ${line}`);
    if (contract.cpu) console.log(`# openapi-proxy used ${contract.cpu} of CPU`);
    const found = [];
    if (existsSync(contract.file)) {
      for (const line of readFileSync(contract.file, "utf8").split("\n")) {
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
