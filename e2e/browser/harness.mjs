// The harness the end-to-end scripts share (sdk/browser, sdk/node and
// dashboard, each `test/e2e/run.mjs`): TAP-like checks, a real
// `strata serve` on a free loopback port with a fresh data directory, and
// clean-up that stops every process started by its own PID. Node builtins
// only, so each package imports it by path.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

/**
 * harness returns the shared pieces of one run: `cleanups` (run last
 * first at the end), `check`, `startStrata` and `run`, which runs main
 * under a deadline, prints "N passed, M failed" and exits 0 only when
 * every check passed.
 */
export function harness({ strataBin, deadlineMs, name }) {
  const cleanups = [];
  const results = [];

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
    return { url, dataDir, ...setup, stop };
  }

  async function cleanup() {
    for (const f of cleanups.splice(0).reverse()) {
      try {
        await f();
      } catch (e) {
        console.log("# cleanup:", e.message);
      }
    }
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
