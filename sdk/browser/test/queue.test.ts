// Delivery: batching, the wire format, retries, beacons and the offline queue.
import { describe, expect, it, vi } from "vitest";
import { FLUSH_DELAY, MAX_BACKOFF, MAX_QUEUED, retryAfter } from "../src/queue";
import { HOST, KEY, UUID_V4, accepted, net, reload, start, status, stored } from "./helpers";

/** times returns the fake clock's time of each /e fetch, relative to `t0`. */
function fetchTimes(times: number[], t0: number) {
  return times.map((t) => t - t0);
}

describe("batching", () => {
  it("sends the events of one idle period in one request", async () => {
    vi.useFakeTimers();
    const s = start();
    s.track("a", { n: 1 });
    s.track("b");
    expect(net.fetches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.fetches).toHaveLength(1);
    const { url, init, body } = net.fetches[0];
    expect(url).toBe(HOST + "/e");
    expect(init.method).toBe("POST");
    expect(init.headers).toEqual({ "Content-Type": "text/plain" });
    expect(init.keepalive).toBe(true);
    expect(body!.api_key).toBe(KEY);
    expect(body!.sent_at).toBe(new Date(body!.sent_at!).toISOString());
    expect(body!.batch.map((e) => e.event_name)).toEqual(["a", "b"]);
    const [a] = body!.batch;
    expect(a.uuid).toMatch(UUID_V4);
    expect(a.timestamp).toBe(new Date(a.timestamp).toISOString());
    expect(a.url).toBe("https://shop.example.com/pricing?plan=pro");
    expect(a.properties).toEqual({
      n: 1,
      $session_id: expect.any(String),
      $lib: "strata-js",
      $lib_version: "0.3.1",
      $viewport_width: window.innerWidth,
    });
    expect(Object.keys(body!)).toEqual(["api_key", "sent_at", "batch"]);
  });

  it("sends the viewport's width with every event, rounded, and none without a viewport", async () => {
    vi.useFakeTimers();
    const s = start();
    vi.stubGlobal("innerWidth", 390.4);
    s.track("phone");
    vi.stubGlobal("innerWidth", 1440);
    s.track("desktop", { $viewport_width: 1 }); // the SDK's measure wins
    vi.stubGlobal("innerWidth", 0); // a hidden frame
    s.track("hidden");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    const [phone, desktop, hidden] = net.events();
    expect(phone.properties.$viewport_width).toBe(390);
    expect(desktop.properties.$viewport_width).toBe(1440);
    expect("$viewport_width" in hidden.properties).toBe(false);
    vi.unstubAllGlobals();
  });

  it("sends when the browser is idle, where requestIdleCallback exists", async () => {
    vi.useFakeTimers();
    const idle: (() => void)[] = [];
    vi.stubGlobal("requestIdleCallback", (cb: () => void, o: { timeout: number }) => {
      expect(o.timeout).toBe(FLUSH_DELAY);
      idle.push(cb);
    });
    start().track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.fetches).toHaveLength(0);
    idle[0]();
    expect(net.fetches).toHaveLength(1);
  });

  it("puts at most 500 events in a request", async () => {
    vi.useFakeTimers();
    const s = start();
    for (let i = 0; i < 1200; i++) s.track("e" + i);
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.fetches.map((c) => c.body!.batch.length)).toEqual([500, 500, 200]);
    expect(net.events().map((e) => e.event_name)).toEqual(Array.from({ length: 1200 }, (_, i) => "e" + i));
    expect(stored()).toEqual([]);
  });

  it("sends a full batch of 500 at once, without waiting", async () => {
    vi.useFakeTimers();
    const s = start();
    for (let i = 0; i < 500; i++) s.track("e");
    expect(net.fetches).toHaveLength(1);
    expect(net.fetches[0].body!.batch).toHaveLength(500);
  });

  it("gives every event its own uuid and keeps properties as they were at track()", async () => {
    vi.useFakeTimers();
    const s = start({ release: "2026.11.23-1" });
    const props = { step: 1 };
    s.track("x", props);
    props.step = 2;
    s.track("x", props);
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    const [a, b] = net.events();
    expect(a.uuid).not.toBe(b.uuid);
    expect([a.properties.step, b.properties.step]).toEqual([1, 2]);
    expect(a.properties.$release).toBe("2026.11.23-1");
  });
});

describe("retries", () => {
  it("backs off exponentially on network errors and keeps the events stored meanwhile", async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(1); // the upper end of the jitter
    const times: number[] = [];
    net.answers = [1, 2, 3, 4].map(() => () => (times.push(Date.now()), new TypeError("Failed to fetch")));
    net.answers.push(() => (times.push(Date.now()), accepted()));
    const s = start();
    const t0 = Date.now();
    s.track("a");
    await vi.advanceTimersByTimeAsync(8000 - 1);
    expect(net.fetches).toHaveLength(3);
    expect(stored().map((e) => e.event_name)).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(8001);
    expect(fetchTimes(times, t0)).toEqual([1000, 2000, 4000, 8000, 16000]);
    // The same event, with the same uuid, each time; gone from storage once stored.
    expect(new Set(net.events().map((e) => e.uuid)).size).toBe(1);
    expect(stored()).toEqual([]);
  });

  it("jitters the backoff between half and all of the delay", async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(0);
    net.answers = [new TypeError("offline"), accepted()];
    start().track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY + 499);
    expect(net.fetches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(net.fetches).toHaveLength(2);
  });

  it("caps the backoff", async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(1);
    net.answers = Array.from({ length: 10 }, () => status(503));
    start().track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY + 1000 + 2000 + 4000 + 8000 + 16000 + 32000 + MAX_BACKOFF * 2);
    expect(net.fetches).toHaveLength(9);
  });

  it.each([408, 429, 500, 502, 503, 504])("retries %i", async (code) => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(1);
    net.answers = [status(code)];
    start().track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(stored()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(net.fetches).toHaveLength(2);
    expect(stored()).toEqual([]);
  });

  it("waits as long as Retry-After says", async () => {
    vi.useFakeTimers();
    net.answers = [status(429, { "Retry-After": "7" })];
    start().track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY + 6999);
    expect(net.fetches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(net.fetches).toHaveLength(2);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    vi.useFakeTimers({ now: Date.parse("2026-11-23T10:00:00Z") });
    expect(retryAfter("120")).toBe(120000);
    expect(retryAfter("Mon, 23 Nov 2026 10:00:30 GMT")).toBe(30000);
    expect(retryAfter("Mon, 23 Nov 2026 09:00:00 GMT")).toBe(0);
    expect(retryAfter("soon")).toBeNaN();
    expect(retryAfter(null)).toBeNaN();
  });

  it.each([400, 401, 403, 404, 413])("gives up on %i and drops the batch", async (code) => {
    vi.useFakeTimers();
    net.answers = [status(code)];
    const s = start();
    s.track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(stored()).toEqual([]);
    await vi.advanceTimersByTimeAsync(10 * MAX_BACKOFF);
    expect(net.fetches).toHaveLength(1);
    // Later events are still sent.
    s.track("b");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.fetches.map((c) => c.body!.batch[0].event_name)).toEqual(["a", "b"]);
  });

  it("sends events queued during a request right after it", async () => {
    vi.useFakeTimers();
    let release!: () => void;
    net.answers = [() => new Promise<Response>((r) => (release = () => r(accepted())))];
    const s = start();
    s.track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    s.track("b");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.fetches).toHaveLength(1); // one request at a time
    expect(stored().map((e) => e.event_name)).toEqual(["a", "b"]);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(net.fetches.map((c) => c.body!.batch.map((e) => e.event_name))).toEqual([["a"], ["b"]]);
  });
});

describe("flush", () => {
  it("posts the queue synchronously with a text/plain beacon carrying the key", () => {
    const s = start();
    s.track("a");
    s.track("b");
    s.flush();
    expect(net.beacons).toHaveLength(1);
    expect(net.beacons[0].url).toBe(HOST + "/e");
    const body = JSON.parse(net.beacons[0].body);
    expect(body.api_key).toBe(KEY);
    expect(body.batch.map((e: { event_name: string }) => e.event_name)).toEqual(["a", "b"]);
    // A string body is what makes sendBeacon use text/plain, which needs no preflight.
    expect(typeof vi.mocked(navigator.sendBeacon).mock.calls[0][1]).toBe("string");
    expect(stored()).toEqual([]);
    expect(net.fetches).toHaveLength(0);
  });

  it("does not send flushed events again", async () => {
    vi.useFakeTimers();
    const s = start();
    s.track("a");
    s.flush();
    await vi.advanceTimersByTimeAsync(10 * FLUSH_DELAY);
    expect(net.fetches).toHaveLength(0);
    expect(net.events()).toHaveLength(1);
  });

  it("falls back to fetch with keepalive when the beacon is refused", async () => {
    net.beaconOk = false;
    const s = start();
    s.track("a");
    s.flush();
    expect(net.fetches).toHaveLength(1);
    expect(net.fetches[0].init.keepalive).toBe(true);
    expect(net.fetches[0].init.headers).toEqual({ "Content-Type": "text/plain" });
    expect(net.fetches[0].body!.api_key).toBe(KEY);
    expect(stored()).toHaveLength(1); // until the answer comes
    await vi.waitFor(() => expect(stored()).toEqual([]));
  });

  it("falls back to fetch when sendBeacon throws", () => {
    vi.mocked(navigator.sendBeacon).mockImplementation(() => {
      throw new TypeError("Illegal invocation");
    });
    const s = start();
    s.track("a");
    expect(() => s.flush()).not.toThrow();
    expect(net.fetches).toHaveLength(1);
  });

  it("splits beacons under the 64 KiB browser limit", () => {
    const s = start();
    const big = "é".repeat(10000); // 20,000 bytes of UTF-8
    for (let i = 0; i < 7; i++) s.track("big", { big });
    s.flush();
    expect(net.beacons.length).toBeGreaterThan(2);
    for (const b of net.beacons) expect(new TextEncoder().encode(b.body).length).toBeLessThan(65536);
    expect(net.events()).toHaveLength(7);
  });

  it("runs when the page is hidden", () => {
    const s = start();
    s.track("a");
    vi.spyOn(document, "visibilityState", "get").mockReturnValue("hidden");
    document.dispatchEvent(new Event("visibilitychange"));
    expect(net.beacons).toHaveLength(1);
  });

  it("runs on pagehide", () => {
    start().track("a");
    dispatchEvent(new Event("pagehide"));
    expect(net.beacons).toHaveLength(1);
  });

  it("does not run when the page becomes visible", () => {
    start().track("a");
    vi.spyOn(document, "visibilityState", "get").mockReturnValue("visible");
    document.dispatchEvent(new Event("visibilitychange"));
    expect(net.beacons).toHaveLength(0);
  });
});

describe("offline queue", () => {
  it("waits while offline and sends when the browser is online again", async () => {
    vi.useFakeTimers();
    const online = vi.spyOn(navigator, "onLine", "get").mockReturnValue(false);
    const s = start();
    s.track("a");
    s.flush(); // a beacon would be lost offline
    await vi.advanceTimersByTimeAsync(10 * FLUSH_DELAY);
    expect(net.fetches).toHaveLength(0);
    expect(net.beacons).toHaveLength(0);
    expect(stored().map((e) => e.event_name)).toEqual(["a"]);
    online.mockReturnValue(true);
    dispatchEvent(new Event("online"));
    await vi.advanceTimersByTimeAsync(0);
    expect(net.events().map((e) => e.event_name)).toEqual(["a"]);
    expect(stored()).toEqual([]);
  });

  it("retries at once when the browser comes online during a backoff", async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(1);
    net.answers = [new TypeError("Failed to fetch"), new TypeError("Failed to fetch")];
    start().track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY + 1000 + 100);
    expect(net.fetches).toHaveLength(2); // now waiting 2 s
    dispatchEvent(new Event("online"));
    await vi.advanceTimersByTimeAsync(0);
    expect(net.fetches).toHaveLength(3);
    expect(stored()).toEqual([]);
  });

  it("survives a reload and delivers exactly once", async () => {
    vi.useFakeTimers();
    const online = vi.spyOn(navigator, "onLine", "get").mockReturnValue(false);
    const first = start();
    first.track("a");
    first.track("b");
    online.mockReturnValue(true);
    reload(); // the page went away without delivering
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.events().map((e) => e.event_name)).toEqual(["a", "b"]);
    expect(stored()).toEqual([]);
    reload(); // and the next page load finds nothing to resend
    await vi.advanceTimersByTimeAsync(10 * FLUSH_DELAY);
    expect(net.events()).toHaveLength(2);
  });

  it(`keeps at most ${MAX_QUEUED} events, dropping the oldest`, async () => {
    vi.useFakeTimers();
    const online = vi.spyOn(navigator, "onLine", "get").mockReturnValue(false);
    const s = start();
    for (let i = 0; i < MAX_QUEUED + 50; i++) s.track("e" + i);
    await Promise.resolve(); // the storage write happens at the end of the task
    const names = stored().map((e) => e.event_name);
    expect(names).toHaveLength(MAX_QUEUED);
    expect(names[0]).toBe("e50");
    online.mockReturnValue(true);
    dispatchEvent(new Event("online"));
    await vi.advanceTimersByTimeAsync(0);
    expect(net.events().map((e) => e.event_name)).toEqual(names);
  });

  it("drops the oldest half when the storage quota is full", async () => {
    vi.spyOn(navigator, "onLine", "get").mockReturnValue(false);
    const setItem = localStorage.setItem.bind(localStorage);
    vi.spyOn(localStorage, "setItem").mockImplementation((k: string, v: string) => {
      if (v.length > 20000) throw new DOMException("full", "QuotaExceededError");
      setItem(k, v);
    });
    const s = start();
    for (let i = 0; i < 200; i++) s.track("e" + i, { pad: "x".repeat(100) });
    await Promise.resolve();
    const names = stored().map((e) => e.event_name);
    expect(names.length).toBeGreaterThan(20);
    expect(names.length).toBeLessThan(200);
    expect(names.at(-1)).toBe("e199");
  });

  it("leaves the entries other tabs wrote", async () => {
    vi.useFakeTimers();
    const s = start();
    const other = { uuid: "0192d0c4-5f1e-4a3b-9c4d-1e2f3a4b5c6d", event_name: "other_tab", distinct_id: "x", timestamp: new Date().toISOString(), properties: {} };
    localStorage.setItem("strata_queue", JSON.stringify([other]));
    s.track("mine");
    await Promise.resolve();
    expect(stored().map((e) => e.event_name)).toEqual(["other_tab", "mine"]);
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.events().map((e) => e.event_name)).toEqual(["mine"]);
    expect(stored().map((e) => e.event_name)).toEqual(["other_tab"]);
  });

  it("keeps working when localStorage throws", async () => {
    vi.useFakeTimers();
    vi.spyOn(localStorage, "setItem").mockImplementation(() => {
      throw new DOMException("denied", "SecurityError");
    });
    vi.spyOn(localStorage, "getItem").mockImplementation(() => {
      throw new DOMException("denied", "SecurityError");
    });
    const s = start();
    s.track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.events().map((e) => e.event_name)).toEqual(["a"]);
  });
});

describe("never throws into the page", () => {
  it("drops an event whose properties cannot be serialized", async () => {
    vi.useFakeTimers();
    const s = start();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => s.track("bad", cyclic)).not.toThrow();
    expect(() => s.track("big", { n: BigInt(1) })).not.toThrow();
    s.track("good");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.events().map((e) => e.event_name)).toEqual(["good"]);
  });

  it("swallows a fetch that throws synchronously", async () => {
    vi.useFakeTimers();
    vi.stubGlobal("fetch", () => {
      throw new TypeError("blocked");
    });
    const s = start();
    s.track("a");
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(stored()).toHaveLength(1);
  });
});
