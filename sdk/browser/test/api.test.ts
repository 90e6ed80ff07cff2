// The public surface: the module's singleton functions and the script tag's
// window.strata, built exactly as dist/sdk.min.js is.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Strata } from "../src/client";
import { iife } from "../scripts/esbuild-options.mjs";
import { FLUSH_DELAY } from "../src/queue";
import type { StrataApi } from "../src/types";
import { KEY, net } from "./helpers";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

describe("module API", () => {
  it("ignores calls before init and answers control", async () => {
    vi.resetModules();
    const m = await import("../src/index");
    expect(() => m.track("x")).not.toThrow();
    expect(() => m.identify("u")).not.toThrow();
    expect(() => m.flush()).not.toThrow();
    expect(await m.flags.getVariant("f")).toBe("control");
    expect(net.fetches).toHaveLength(0);
  });

  it("keeps the first instance when init is called again", async () => {
    vi.useFakeTimers();
    vi.resetModules();
    const m = await import("../src/index");
    const a = m.init({ apiKey: KEY, apiHost: "https://a.example.com/", autocapture: false });
    const b = m.init({ apiKey: KEY, apiHost: "https://b.example.com" });
    expect(b).toBe(a);
    m.track("x");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.posts().map((c) => c.url)).toEqual(["https://a.example.com/e"]);
    a!.destroy();
  });

  it("defaults apiHost to the page's origin", async () => {
    vi.useFakeTimers();
    vi.resetModules();
    const m = await import("../src/index");
    m.init({ apiKey: KEY, autocapture: false })!.track("x");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.posts()[0].url).toBe("https://shop.example.com/e");
    m.init({ apiKey: KEY })!.destroy();
  });

  it("reports version 0.3.1, the package's", async () => {
    const { VERSION } = await import("../src/index");
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(VERSION).toBe("0.3.1");
    expect(pkg.version).toBe(VERSION);
  });
});

describe("script tag", () => {
  let code = "";
  beforeAll(async () => {
    const out = await build({ ...iife, write: false, sourcemap: false });
    code = out.outputFiles[0].text;
  });

  afterEach(() => {
    // init returns the running instance, if any; stop it so tests stay apart.
    (window.strata?.init({ apiKey: KEY }) as Strata | undefined)?.destroy();
  });

  /** load runs the script as if a <script src> tag with these attributes ran it. */
  function load(attrs: Record<string, string>): StrataApi {
    delete window.strata;
    const script = document.createElement("script");
    for (const [k, v] of Object.entries(attrs)) script.setAttribute(k, v);
    vi.spyOn(document, "currentScript", "get").mockReturnValue(script);
    new Function(code)();
    return window.strata!;
  }

  it("installs window.strata with init, track, identify, group, reset, flush, the opt-out calls and flags.getVariant", () => {
    const s = load({ src: "https://cdn.example.com/sdk/v1/sdk.min.js" });
    expect(Object.keys(s).sort()).toEqual(["flags", "flush", "group", "hasOptedOut", "identify", "init", "optIn", "optOut", "reset", "track"]);
    expect(typeof s.flags.getVariant).toBe("function");
  });

  it("sends to the origin that served the script unless apiHost is given", async () => {
    vi.useFakeTimers();
    const s = load({ src: "https://analytics.example.com/sdk/v1/sdk.min.js?v=1" });
    s.init({ apiKey: KEY });
    s.track("x");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.posts()[0].url).toBe("https://analytics.example.com/e");
    // The config, which says whether to load the message renderer, from there too.
    expect(net.fetches[0].url).toMatch(/^https:\/\/analytics\.example\.com\/api\/v1\/config\?/);
    expect(net.events().map((e) => e.event_name)).toEqual(["$pageview", "x"]);
  });

  it("initialises itself from data-api-key", async () => {
    vi.useFakeTimers();
    load({ src: "https://analytics.example.com/sdk/v1/sdk.min.js", "data-api-key": KEY });
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.posts()[0].body!.api_key).toBe(KEY);
    expect(net.events()[0].event_name).toBe("$pageview");
  });

  it("does not throw on bad calls", () => {
    const s = load({ src: "https://analytics.example.com/sdk/v1/sdk.min.js" });
    expect(() => s.init(undefined as never)).not.toThrow();
    expect(() => s.identify(null as never)).not.toThrow();
    expect(() => s.track("x", 5 as never)).not.toThrow();
  });

  it("keeps the first copy when the script is included twice", () => {
    const first = load({ src: "https://a.example.com/sdk.min.js" });
    const script = document.createElement("script");
    script.src = "https://b.example.com/sdk.min.js";
    vi.spyOn(document, "currentScript", "get").mockReturnValue(script);
    new Function(code)();
    expect(window.strata).toBe(first);
  });
});
