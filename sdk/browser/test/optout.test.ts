// optOut()/optIn()/hasOptedOut(), and the browser's privacy signals (Global
// Privacy Control, Do Not Track) when the page asks to honour them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ANON_KEY, OPT_OUT_KEY } from "../src/client";
import { net, reload, sent, start, stored } from "./helpers";


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
