// The SDK on pages it does not control (README.md, "Content Security
// Policy"): a fetch wrapper that throws, Trusted Types, and built-ins
// changed by the page. Nothing of the
// SDK's may reach the page as an error or an unhandled rejection, and the
// events must still go out as the server reads them.
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { HOST, KEY, net, start } from "./helpers";

/** Unhandled rejections and uncaught errors seen while a test runs. */
let escaped: unknown[] = [];
const onRejection = (reason: unknown) => escaped.push(reason);
beforeEach(() => {
  escaped = [];
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onRejection);
});
afterEach(() => {
  process.off("unhandledRejection", onRejection);
  process.off("uncaughtException", onRejection);
});

/** settle lets promises, the config's and the queue's timers run. */
async function settle() {
  for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 0));
}

/** config answers the config request with messages and replay on; other requests 202. */
function answer(url: string): Response {
  return url.includes("/api/v1/config")
    ? new Response(JSON.stringify({ flags: [], messagesEnabled: true, replay: true }))
    : new Response(JSON.stringify({ accepted: 1, rejected: [] }), { status: 202 });
}

describe("a page whose fetch wrapper throws", () => {
  it.each([
    ["synchronously", () => {
      throw new TypeError("fetch is blocked by the page's wrapper");
    }],
    ["as a rejected promise", () => Promise.reject(new TypeError("fetch is blocked by the page's wrapper"))],
    ["by returning no promise", () => undefined],
  ])("gets no unhandled rejection from init, getVariant, group or the queue when it throws %s", async (_, wrapper) => {
    vi.stubGlobal("fetch", vi.fn(wrapper));
    const s = start({ messages: true, replayEnabled: true, autocapture: true });
    s.group("company", "acme");
    expect(await s.flags.getVariant("any")).toBe("control");
    s.track("kept");
    await new Promise((r) => setTimeout(r, 1100)); // the queue's first send, by fetch
    await settle();
    expect(escaped).toEqual([]);
    // The events wait, and the beacon at the next flush delivers them.
    s.flush();
    expect(net.events().map((e) => e.event_name)).toEqual(["$pageview", "kept"]);
    expect(escaped).toEqual([]);
  });

  it("gets no error from flush when the page's sendBeacon throws too", () => {
    vi.stubGlobal("fetch", () => {
      throw new TypeError("blocked");
    });
    vi.spyOn(navigator, "sendBeacon").mockImplementation(() => {
      throw new TypeError("blocked too");
    });
    const s = start();
    s.track("a");
    expect(() => s.flush()).not.toThrow();
  });
});

/**
 * enforceTrustedTypes makes the page behave as Chromium does under
 * `require-trusted-types-for 'script'; trusted-types <allowed>`: a script's
 * src takes only a TrustedScriptURL, and only the allowed policy names can be
 * created. It returns the policies made, with the rules the SDK gave them.
 */
function enforceTrustedTypes(allowed: string[]) {
  class TrustedScriptURL {
    constructor(private readonly url: string) {}
    toString() {
      return this.url;
    }
  }
  const policies: { name: string; rules: { createScriptURL(u: string): string } }[] = [];
  vi.stubGlobal("trustedTypes", {
    createPolicy(name: string, rules: { createScriptURL(u: string): string }) {
      if (!allowed.includes(name)) throw new TypeError(`Failed to execute 'createPolicy' on 'TrustedTypePolicyFactory': Policy "${name}" disallowed.`);
      policies.push({ name, rules });
      return { createScriptURL: (u: string) => new TrustedScriptURL(rules.createScriptURL(u)) };
    },
  });
  const src = Object.getOwnPropertyDescriptor(HTMLScriptElement.prototype, "src")!;
  Object.defineProperty(HTMLScriptElement.prototype, "src", {
    ...src,
    set(this: HTMLScriptElement, v: unknown) {
      if (!(v instanceof TrustedScriptURL)) {
        throw new TypeError("Failed to set the 'src' property on 'HTMLScriptElement': This document requires 'TrustedScriptURL' assignment.");
      }
      src.set!.call(this, String(v));
    },
  });
  onTestFinished(() => {
    Object.defineProperty(HTMLScriptElement.prototype, "src", src);
  });
  return policies;
}

/** fresh loads the SDK anew, as a new page would: the Trusted Types policy is made once per page. */
async function fresh() {
  vi.resetModules();
  const { Strata } = await import("../src/client");
  const s = new Strata({ apiKey: KEY, apiHost: HOST, autocapture: true, replayEnabled: true });
  onTestFinished(() => s.destroy());
  return s;
}

describe("a page that enforces Trusted Types", () => {
  beforeEach(() => {
    net.answers = Array.from({ length: 20 }, () => answer);
  });

  it("loads the renderer and the recorder through the policy \"strata\", which converts no other URL", async () => {
    const policies = enforceTrustedTypes(["strata"]);
    const added: HTMLScriptElement[] = [];
    vi.spyOn(document.head, "appendChild").mockImplementation((n) => (added.push(n as HTMLScriptElement), n));
    await fresh();
    await settle();
    expect(escaped).toEqual([]);
    expect(added.map((s) => s.src).sort()).toEqual([HOST + "/sdk/v1/messages.min.js", HOST + "/sdk/v1/replay.min.js"]);
    expect(policies.map((p) => p.name)).toEqual(["strata"]);
    expect(() => policies[0].rules.createScriptURL("https://evil.example.com/x.js")).toThrow();
    expect(() => policies[0].rules.createScriptURL(HOST + "/sdk/v1/other.min.js")).toThrow();
    delete window.__strataMessages;
    delete window.__strataReplay;
  });

  it("sends events only, with one warning and no error, when the page does not allow the policy", async () => {
    enforceTrustedTypes(["the-pages-own"]);
    const added = vi.spyOn(document.head, "appendChild");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const s = await fresh();
    await settle();
    s.track("still_sent");
    s.flush();
    expect(escaped).toEqual([]);
    expect(added).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toContain("trusted-types strata");
    expect(net.events().map((e) => e.event_name)).toEqual(["$pageview", "still_sent"]);
  });
});

/** The pollution of old Prototype.js (1.6) and of other pages, undone after each test. */
function pollute() {
  const native = JSON.stringify;
  const protos = [Object.prototype, Array.prototype, String.prototype, Number.prototype, Date.prototype] as unknown as Record<string, unknown>[];
  const dateToJSON = Date.prototype.toJSON;
  (Array.prototype as unknown as Record<string, unknown>).toJSON = function (this: unknown[]) {
    return "[" + this.map((x) => native(x)).join(", ") + "]";
  };
  (String.prototype as unknown as Record<string, unknown>).toJSON = function (this: string) {
    return '"' + this + '"';
  };
  Date.prototype.toJSON = function (this: Date) {
    return '"' + this.toISOString() + '"';
  };
  (Object.prototype as Record<string, unknown>).pageHelper = "inherited";
  return () => {
    JSON.stringify = native;
    Date.prototype.toJSON = dateToJSON;
    for (const p of protos) {
      if (p != Date.prototype) delete p.toJSON;
      delete p.pageHelper;
    }
  };
}

describe("a page that changed the built-ins", () => {
  it.each([
    ["Prototype.js's toJSON on Array, String and Date", () => {}],
    ["a replaced JSON.stringify", () => (JSON.stringify = () => "replaced by the page")],
  ])("still sends every event as the server reads it: %s", (_, extra) => {
    const undo = pollute();
    let bodies: string[];
    try {
      extra();
      const s = start();
      s.identify("user-1", { plan: "pro" });
      s.group("company", "acme");
      s.track("order", { items: ["a", "b"], at: new Date(Date.UTC(2026, 0, 2)), nested: { list: [1, [2]] } });
      s.flush();
      bodies = net.beacons.map((b) => b.body);
    } finally {
      undo();
    }
    const batch = bodies.flatMap((b) => {
      const body = JSON.parse(b);
      expect(Array.isArray(body.batch)).toBe(true);
      return body.batch;
    });
    expect(batch.map((e: { event_name: string }) => e.event_name)).toEqual(["$identify", "order"]);
    const order = batch[1];
    expect(order.properties).toMatchObject({ items: ["a", "b"], at: "2026-01-02T00:00:00.000Z", nested: { list: [1, [2]] }, $groups: { company: "acme" } });
    expect(order.distinct_id).toBe("user-1");
    expect(bodies.join()).not.toContain("pageHelper");
    // What the SDK stored for the next page load reads back as it was.
    expect(JSON.parse(localStorage.getItem("strata_groups")!)).toEqual({ company: "acme" });
    expect(JSON.parse(localStorage.getItem("strata_traits")!)).toEqual({ plan: "pro" });
  });
});
