// The anonymous id, identify() and their persistence across page loads.
import { describe, expect, it, vi } from "vitest";
import { ANON_KEY, USER_KEY } from "../src/client";
import { FLUSH_DELAY } from "../src/queue";
import { UUID_V4, net, reload, start } from "./helpers";

async function sent() {
  await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
  return net.events();
}

describe("anonymous id", () => {
  it("is created once and kept in localStorage across page loads", async () => {
    vi.useFakeTimers();
    start().track("a");
    reload().track("b");
    const [a, b] = await sent();
    expect(a.distinct_id).toMatch(UUID_V4);
    expect(b.distinct_id).toBe(a.distinct_id);
    expect(localStorage.getItem(ANON_KEY)).toBe(a.distinct_id);
    expect(document.cookie).not.toContain(ANON_KEY); // no cookie when localStorage works
  });

  it("falls back to a first-party cookie when localStorage is unusable", async () => {
    vi.useFakeTimers();
    for (const m of ["getItem", "setItem"] as const) {
      vi.spyOn(localStorage, m).mockImplementation(() => {
        throw new DOMException("denied", "SecurityError");
      });
    }
    start().track("a");
    start().track("b"); // a second page: without storage nothing is adopted
    const [a, b] = await sent();
    expect(a.distinct_id).toMatch(UUID_V4);
    expect(b.distinct_id).toBe(a.distinct_id);
    expect(document.cookie).toContain(ANON_KEY + "=" + a.distinct_id);
  });
});

describe("identify", () => {
  it("sends $identify with the anonymous id and traits, then uses the user id", async () => {
    vi.useFakeTimers();
    const s = start();
    s.track("before");
    s.identify("user_1842", { plan: "pro", email: "a@example.com" });
    s.track("after");
    const [before, identify, after] = await sent();
    const anon = before.distinct_id;
    expect(identify.event_name).toBe("$identify");
    expect(identify.distinct_id).toBe("user_1842");
    expect(identify.properties).toEqual({
      $anon_distinct_id: anon,
      plan: "pro",
      email: "a@example.com",
      $session_id: expect.any(String),
      $lib: "strata-js",
      $lib_version: "0.3.1",
      $viewport_width: window.innerWidth,
    });
    expect(after.distinct_id).toBe("user_1842");
  });

  it("persists the user id across page loads", async () => {
    vi.useFakeTimers();
    start().identify("user_7");
    reload().track("next_page");
    const events = await sent();
    expect(events.map((e) => [e.event_name, e.distinct_id])).toEqual([
      ["$identify", "user_7"],
      ["next_page", "user_7"],
    ]);
    expect(localStorage.getItem(USER_KEY)).toBe("user_7");
  });

  it("sends $identify once when called again with the same id and no traits", async () => {
    vi.useFakeTimers();
    start().identify("user_7");
    reload().identify("user_7"); // e.g. on every page load
    reload().identify("user_7", { plan: "team" }); // new traits are sent
    const events = await sent();
    expect(events.map((e) => e.properties.plan)).toEqual([undefined, "team"]);
  });

  it("binds a new user id when another user signs in", async () => {
    vi.useFakeTimers();
    const s = start();
    s.identify("alice");
    s.identify("bob");
    s.track("x");
    const events = await sent();
    expect(events.map((e) => e.distinct_id)).toEqual(["alice", "bob", "bob"]);
    expect(events[0].properties.$anon_distinct_id).toBe(events[1].properties.$anon_distinct_id);
  });

  it("ignores an empty user id", async () => {
    vi.useFakeTimers();
    const s = start();
    s.identify("");
    s.track("x");
    const events = await sent();
    expect(events.map((e) => e.event_name)).toEqual(["x"]);
    expect(events[0].distinct_id).toMatch(UUID_V4);
  });
});
