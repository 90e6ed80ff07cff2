// Cookieless mode: nothing in cookies, localStorage or sessionStorage, anonymous
// events sent as $cookieless for the server to derive the visitor, identify() for
// the page load; chosen by the page's option or, left unset, the product's setting
// in the config, before which nothing is stored or sent.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ANON_KEY, COOKIELESS_ID, USER_KEY } from "../src/client";
import { FLUSH_DELAY } from "../src/queue";
import { accepted, net, reload, sent, start } from "./helpers";


/** stores lists every key in both storages and the cookies. */
function stores(): string[] {
  const keys: string[] = [];
  for (const s of [localStorage, sessionStorage]) for (let i = 0; i < s.length; i++) keys.push(s.key(i)!);
  for (const c of document.cookie.split(";")) if (c.trim()) keys.push("cookie " + c.split("=")[0].trim());
  return keys.sort();
}

/** config answers the SDK's config request with the product's privacy settings. */
function config(settings: { cookieless?: boolean; respectPrivacySignals?: boolean } | Error) {
  net.answers.push((url) => {
    if (!url.includes("/api/v1/config")) throw new Error("the first request was not the config's: " + url);
    if (settings instanceof Error) return settings;
    return new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: false, replay: false, cookieless: false, respectPrivacySignals: false, ...settings }), { status: 200 });
  });
}

afterEach(() => {
  delete (navigator as unknown as Record<string, unknown>).globalPrivacyControl;
});

describe("cookieless option", () => {
  it("stores nothing, sends $cookieless without a session, and identifies for the page load", async () => {
    vi.useFakeTimers();
    localStorage.setItem(ANON_KEY, "an-id-from-before");
    sessionStorage.setItem("strata_config", "{}");
    localStorage.setItem("the-pages-own", "kept");
    document.cookie = "strata_user_id=someone;path=/";
    const s = start({ cookieless: true });
    // What the SDK stored before is gone, the page's own data is not.
    expect(stores()).toEqual(["the-pages-own"]);
    s.track("viewed", { plan: "pro" });
    s.identify("user-1", { email: "a@example.com" });
    s.track("bought");
    await s.flags.getVariant("anything");
    const events = await sent();
    expect(events.map((e) => [e.event_name, e.distinct_id])).toEqual([
      ["viewed", COOKIELESS_ID],
      ["$identify", "user-1"],
      ["bought", "user-1"],
    ]);
    expect(events.map((e) => e.properties.$session_id)).toEqual([undefined, undefined, undefined]);
    expect(events[1].properties).toMatchObject({ $anon_distinct_id: COOKIELESS_ID, email: "a@example.com" });
    expect(stores()).toEqual(["the-pages-own"]);

    // The next page load starts anonymous again: nothing was kept.
    const next = reload({ cookieless: true });
    next.track("again");
    expect((await sent()).map((e) => [e.event_name, e.distinct_id])).toEqual([["again", COOKIELESS_ID]]);
    expect(stores()).toEqual(["the-pages-own"]);
  });

  it("keeps the opt-out for the page load only", async () => {
    vi.useFakeTimers();
    const s = start({ cookieless: true });
    s.optOut();
    s.track("not sent");
    expect(await sent()).toEqual([]);
    expect(stores()).toEqual([]);
    reload({ cookieless: true }).track("sent");
    expect((await sent()).map((e) => e.event_name)).toEqual(["sent"]);
  });
});

describe("the product's setting", () => {
  it("holds storage and sending until the config says cookieless, then sends as the mode does", async () => {
    vi.useFakeTimers();
    let answer!: () => void;
    net.answers.push(
      (url) =>
        new Promise<Response>((resolve) => {
          expect(url).toContain("/api/v1/config");
          answer = () => resolve(new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: false, replay: false, cookieless: true, respectPrivacySignals: false }), { status: 200 }));
        }),
    );
    localStorage.setItem(ANON_KEY, "an-id-from-before");
    const s = start({ cookieless: undefined });
    s.track("early");
    s.identify("user-2");
    // Before the answer: nothing sent, nothing new stored.
    expect(await sent()).toEqual([]);
    await vi.advanceTimersByTimeAsync(5 * FLUSH_DELAY);
    expect(net.posts()).toEqual([]);
    expect(stores()).toEqual([ANON_KEY]);
    answer();
    const events = await sent();
    expect(events.map((e) => [e.event_name, e.distinct_id, e.properties.$session_id])).toEqual([
      ["early", COOKIELESS_ID, undefined],
      ["$identify", "user-2", undefined],
    ]);
    expect(events[1].properties.$anon_distinct_id).toBe(COOKIELESS_ID);
    expect(stores()).toEqual([]);
    s.track("later");
    expect((await sent()).map((e) => e.distinct_id)).toEqual(["user-2"]);
    expect(stores()).toEqual([]);
  });

  it("stores as before when the product is not cookieless, and when the config cannot be had", async () => {
    for (const answer of [{ cookieless: false }, new Error("offline")]) {
      vi.useFakeTimers();
      localStorage.clear();
      sessionStorage.clear();
          config(answer);
      const s = reload({ cookieless: undefined });
      s.track("page");
      s.identify("user-3");
      const events = await sent();
      const anon = localStorage.getItem(ANON_KEY);
      expect(anon).toBeTruthy();
      expect(localStorage.getItem(USER_KEY)).toBe("user-3");
      expect(events.map((e) => e.distinct_id)).toEqual([anon, "user-3"]);
      expect(typeof events[0].properties.$session_id).toBe("string");
      expect(events[1].properties.$anon_distinct_id).toBe(anon);
    }
  });

  it("loses to the page's own option", async () => {
    vi.useFakeTimers();
    config({ cookieless: true });
    const s = start({ cookieless: false });
    s.track("consented");
    const events = await sent();
    expect(events.map((e) => e.distinct_id)).toEqual([localStorage.getItem(ANON_KEY)]);
    // The page's choice needs no config: none was asked for.
    expect(net.fetches.filter((c) => c.url.includes("/api/v1/config"))).toEqual([]);
  });

  it("honours the browser's privacy signal when the product asks and the page did not say", async () => {
    vi.useFakeTimers();
    Object.defineProperty(navigator, "globalPrivacyControl", { value: true, configurable: true });
    config({ respectPrivacySignals: true });
    const s = start({ cookieless: false });
    s.track("not sent");
    expect(await sent()).toEqual([]);
    expect(s.hasOptedOut()).toBe(true);
    expect(stores()).toEqual([]);

    config({ respectPrivacySignals: false });
    net.answers.push(accepted());
    const t = reload({ cookieless: false });
    t.track("sent");
    expect((await sent()).map((e) => e.event_name)).toEqual(["sent"]);
    expect(t.hasOptedOut()).toBe(false);
  });
});
