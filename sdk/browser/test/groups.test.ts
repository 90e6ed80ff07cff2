// group(): $groups on later events, persistence, the profile request, bad input
// ignored, and reset().
import { describe, expect, it, vi } from "vitest";
import { ANON_KEY, GROUPS_KEY, USER_KEY } from "../src/client";
import { FLUSH_DELAY } from "../src/queue";
import { HOST, KEY, net, reload, start } from "./helpers";

async function sent() {
  await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
  return net.events();
}

/** groupCalls returns the requests group() made. */
function groupCalls() {
  return net.fetches.filter((c) => c.url.includes("/api/v1/groups/"));
}

describe("group", () => {
  it("tags every later event with $groups, also after a reload", async () => {
    vi.useFakeTimers();
    const s = start();
    s.track("before");
    s.group("company", "acme");
    s.group("team", "data");
    s.track("after", { plan: "pro" });
    reload().track("next_page");
    const [before, after, next] = await sent();
    expect(before.properties.$groups).toBeUndefined();
    expect(after.properties).toMatchObject({ plan: "pro", $groups: { company: "acme", team: "data" } });
    expect(next.properties.$groups).toEqual({ company: "acme", team: "data" });
    expect(JSON.parse(localStorage.getItem(GROUPS_KEY)!)).toEqual({ company: "acme", team: "data" });
  });

  it("replaces the key of a type it was given before", async () => {
    vi.useFakeTimers();
    const s = start();
    s.group("company", "acme");
    s.group("company", "globex");
    s.track("a");
    const [a] = await sent();
    expect(a.properties.$groups).toEqual({ company: "globex" });
  });

  it("posts the group's properties with the API key, keepalive and without a preflight", () => {
    const s = start();
    s.group("company", "acme/eu ü", { name: "Acme", seats: 5 });
    s.group("team", "data");
    const [c, t] = groupCalls();
    expect(c.url).toBe(`${HOST}/api/v1/groups/company/acme%2Feu%20%C3%BC?api_key=${KEY}`);
    expect(c.init).toMatchObject({ method: "POST", keepalive: true, headers: { "Content-Type": "text/plain" } });
    expect(JSON.parse(String(c.init.body))).toEqual({ properties: { name: "Acme", seats: 5 } });
    expect(JSON.parse(String(t.init.body))).toEqual({ properties: {} });
  });

  it("ignores bad input with a warning and never throws", async () => {
    vi.useFakeTimers();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const s = start();
    for (const [type, key] of [
      ["Company", "acme"],
      ["1st", "acme"],
      ["a".repeat(33), "acme"],
      ["company", ""],
      ["company", "k".repeat(201)],
    ]) {
      s.group(type, key);
    }
    for (const t of ["a", "b", "c", "d", "e"]) s.group(t, "x");
    s.group("f", "sixth"); // a sixth type
    s.group(undefined as unknown as string, null as unknown as string);
    s.track("a");
    const [a] = await sent();
    expect(a.properties.$groups).toEqual({ a: "x", b: "x", c: "x", d: "x", e: "x" });
    expect(groupCalls()).toHaveLength(5);
    expect(warn).toHaveBeenCalledTimes(7);
  });

  it("survives a failing request", async () => {
    net.answers.push(new TypeError("offline"));
    const s = start();
    expect(() => s.group("company", "acme")).not.toThrow();
    await Promise.resolve();
  });
});

describe("reset", () => {
  it("forgets the user id and the groups and starts a new anonymous id", async () => {
    vi.useFakeTimers();
    const s = start();
    s.identify("user_1842");
    s.group("company", "acme");
    s.track("before");
    s.reset();
    s.track("after");
    reload().track("next_page");
    const events = await sent();
    const [before, after, next] = events.filter((e) => e.event_name != "$identify");
    expect(before.distinct_id).toBe("user_1842");
    expect(after.distinct_id).not.toBe("user_1842");
    expect(after.distinct_id).not.toBe(events[0].distinct_id);
    expect(after.properties.$groups).toBeUndefined();
    expect(next.distinct_id).toBe(after.distinct_id);
    expect(next.properties.$groups).toBeUndefined();
    expect(localStorage.getItem(USER_KEY)).toBeNull();
    expect(localStorage.getItem(GROUPS_KEY)).toBeNull();
    expect(localStorage.getItem(ANON_KEY)).toBe(after.distinct_id);
  });
});
