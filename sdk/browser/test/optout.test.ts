// optOut()/optIn()/hasOptedOut(), and the browser's privacy signals (Global
// Privacy Control, Do Not Track) when the page asks to honour them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ANON_KEY, GROUPS_KEY, OPT_OUT_KEY, TRAITS_KEY, USER_KEY } from "../src/client";
import { accepted, net, reload, sent, start, stored } from "./helpers";


/** keys lists what a storage holds, sorted. */
function keys(s: Storage): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i++) out.push(s.key(i)!);
  return out.sort();
}

/** signal makes the browser send a privacy signal for the test. */
function signal(name: "globalPrivacyControl" | "doNotTrack", value: unknown) {
  Object.defineProperty(navigator, name, { value, configurable: true });
}

afterEach(() => {
  for (const name of ["globalPrivacyControl", "doNotTrack"]) delete (navigator as unknown as Record<string, unknown>)[name];
});

describe("optOut", () => {
  it("stops sending, drops what is queued, and is remembered across page loads until optIn", async () => {
    vi.useFakeTimers();
    const s = start();
    s.track("before");
    await Promise.resolve(); // the queue writes its mirror at the end of the task
    expect(stored().map((e) => e.event_name)).toEqual(["before"]);
    s.optOut();
    expect(s.hasOptedOut()).toBe(true);
    expect(stored()).toEqual([]);
    s.track("after");
    s.group("company", "acme");
    s.identify("user-1");
    expect(await sent()).toEqual([]);
    expect(net.fetches.filter((c) => c.url.includes("/api/v1/groups/"))).toEqual([]);
    expect(localStorage.getItem(OPT_OUT_KEY)).toBe("1");

    const next = reload();
    expect(next.hasOptedOut()).toBe(true);
    next.track("next page");
    expect(await sent()).toEqual([]);

    next.optIn();
    expect(next.hasOptedOut()).toBe(false);
    expect(localStorage.getItem(OPT_OUT_KEY)).toBeNull();
    next.track("back");
    const events = await sent();
    expect(events.map((e) => e.event_name)).toEqual(["back"]);
  });

  it("deletes the ids it stored, keeps them in memory for the page, and stores them again at optIn", async () => {
    vi.useFakeTimers();
    net.answers.push(accepted());
    const s = start();
    s.identify("user-1", { email: "a@example.com" });
    s.group("company", "acme");
    s.track("before");
    await sent();
    const anon = localStorage.getItem(ANON_KEY);
    expect(anon).toBeTruthy();
    expect(localStorage.getItem(USER_KEY)).toBe("user-1");
    expect(localStorage.getItem("strata_session")).toBeTruthy();
    localStorage.setItem("the-pages-own", "kept");

    s.optOut();
    // Only the choice is left, and what the page stored itself.
    expect(keys(localStorage)).toEqual([OPT_OUT_KEY, "the-pages-own"]);
    expect(keys(sessionStorage)).toEqual([]);
    s.identify("user-2", { email: "b@example.com" });
    s.reset();
    expect(keys(localStorage)).toEqual([OPT_OUT_KEY, "the-pages-own"]);

    s.optIn();
    expect(localStorage.getItem(ANON_KEY)).toBeTruthy();
    expect(localStorage.getItem(OPT_OUT_KEY)).toBeNull();
    s.identify("user-3");
    s.group("company", "beta");
    expect(localStorage.getItem(USER_KEY)).toBe("user-3");
    expect(JSON.parse(localStorage.getItem(GROUPS_KEY)!)).toEqual({ company: "beta" });
  });

  it("deletes what an earlier page load stored when the visitor opted out in between", async () => {
    vi.useFakeTimers();
    localStorage.setItem(ANON_KEY, "an-id-from-before");
    localStorage.setItem(USER_KEY, "someone");
    localStorage.setItem(TRAITS_KEY, "{}");
    localStorage.setItem(OPT_OUT_KEY, "1");
    const s = start();
    expect(keys(localStorage)).toEqual([OPT_OUT_KEY]);
    expect(s.hasOptedOut()).toBe(true);
    s.track("a");
    expect(await sent()).toEqual([]);
  });

  it("remembers an opt-out made while the product's settings are still being asked for", async () => {
    vi.useFakeTimers();
    let answer!: (r: Response) => void;
    net.answers.push(() => new Promise<Response>((resolve) => (answer = resolve)));
    localStorage.setItem(ANON_KEY, "an-id-from-before");
    const s = start({ cookieless: undefined });
    s.optOut();
    answer(new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: false, replay: false, cookieless: false, respectPrivacySignals: false }), { status: 200 }));
    await vi.runAllTimersAsync();
    expect(keys(localStorage)).toEqual([OPT_OUT_KEY]);
    expect(reload().hasOptedOut()).toBe(true);
  });

  it("stores no id for a visitor who opted out before", async () => {
    vi.useFakeTimers();
    localStorage.setItem(OPT_OUT_KEY, "1");
    const s = start();
    s.track("a");
    expect(localStorage.getItem(ANON_KEY)).toBeNull();
    expect(await sent()).toEqual([]);
  });
});

describe("privacy signals", () => {
  for (const [name, value] of [["globalPrivacyControl", true], ["doNotTrack", "1"]] as const) {
    it(`${name} silences the SDK when the page honours it, and only then`, async () => {
      vi.useFakeTimers();
      signal(name, value);
      const ignoring = start();
      ignoring.track("counted");
      expect(ignoring.hasOptedOut()).toBe(false);
      expect((await sent()).map((e) => e.event_name)).toEqual(["counted"]);

      localStorage.clear();
      const honouring = reload({ respectPrivacySignals: true });
      expect(honouring.hasOptedOut()).toBe(true);
      honouring.track("not counted");
      expect(await sent()).toEqual([]);
      expect(localStorage.getItem(ANON_KEY)).toBeNull();
      // optIn() does not override the browser's signal.
      honouring.optIn();
      expect(honouring.hasOptedOut()).toBe(true);
    });
  }

  it("does not count a signal that says tracking is fine", async () => {
    vi.useFakeTimers();
    signal("globalPrivacyControl", false);
    signal("doNotTrack", "0");
    const s = start({ respectPrivacySignals: true });
    s.track("counted");
    expect(s.hasOptedOut()).toBe(false);
    expect((await sent()).map((e) => e.event_name)).toEqual(["counted"]);
  });
});
