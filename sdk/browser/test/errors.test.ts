// Error tracking: uncaught errors and unhandled rejections as `$exception` events,
// bursts folded into one event with a count, the handler's own safety, `release`,
// and `track("$exception", …)` for errors the app caught.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BURST_MS, MAX_MESSAGE, MAX_PENDING, MAX_STACK } from "../src/errors";
import { FLUSH_DELAY } from "../src/queue";
import type { WireEvent } from "../src/types";
import { net, reload, start, stored } from "./helpers";

/** sent lets every burst end and the queue deliver, and returns the `$exception` events. */
async function sent(): Promise<WireEvent[]> {
  await vi.advanceTimersByTimeAsync(BURST_MS + FLUSH_DELAY);
  return net.events().filter((e) => e.event_name == "$exception");
}

/**
 * throwFromClick reports `error` as the browser does for an exception a click
 * listener let escape: an ErrorEvent on window (happy-dom, as vitest sets it up,
 * lets the exception out of dispatchEvent instead).
 */
function throwFromClick(error: unknown): void {
  const message = "Uncaught " + (error instanceof Error ? error.name + ": " + error.message : typeof error == "string" ? error : "exception");
  dispatchEvent(new ErrorEvent("error", { error, message, filename: location.href, lineno: 1, colno: 1, cancelable: true }));
}

/** reject dispatches an unhandled rejection with `reason`, as the browser does. */
function reject(reason: unknown): Event {
  const ev = Object.assign(new Event("unhandledrejection", { cancelable: true }), { reason, promise: null });
  dispatchEvent(ev);
  return ev;
}

/** A throwing function with a name to find in the stack. */
function chargeCard(): never {
  throw new TypeError("Cannot read properties of undefined (reading 'id')");
}

function caught(f: () => void): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
}

beforeEach(() => {
  vi.useFakeTimers();
  // happy-dom logs each error it reports; the tests look at what the SDK sent.
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("error tracking", () => {
  it("is off when the site says false, whatever the server has on", async () => {
    net.answers.push(new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: true, replay: false })));
    start({ errorTracking: false });
    await vi.advanceTimersByTimeAsync(10);
    throwFromClick(new Error("not tracked"));
    reject(new Error("not tracked either"));
    expect(await sent()).toEqual([]);
    expect(net.fetches.filter((c) => c.url.includes("/api/v1/config"))).toEqual([]);
  });

  it("follows the server's errorTracking when the site leaves it unset", async () => {
    net.answers.push(new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: true, replay: false })));
    start({ errorTracking: undefined });
    await vi.advanceTimersByTimeAsync(10);
    expect(net.fetches[0].url).toContain("/api/v1/config?api_key=");
    throwFromClick(caught(chargeCard));
    const [e, ...more] = await sent();
    expect(more).toEqual([]);
    expect(e.properties.$exception_type).toBe("TypeError");
    expect(e.properties.$exception_source).toBe("onerror");
  });

  it("stays off when the site leaves it unset and the server has it off", async () => {
    net.answers.push(new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: false, replay: false })));
    start({ errorTracking: undefined });
    await vi.advanceTimersByTimeAsync(10);
    throwFromClick(new Error("not tracked"));
    expect(await sent()).toEqual([]);
  });

  it("does not start after destroy when the config answers late", async () => {
    let answer!: (r: Response) => void;
    net.answers.push(() => new Promise<Response>((resolve) => (answer = resolve)));
    const s = start({ errorTracking: undefined });
    await vi.advanceTimersByTimeAsync(10);
    s.destroy();
    answer(new Response(JSON.stringify({ flags: [], messagesEnabled: false, errorTracking: true, replay: false })));
    await vi.advanceTimersByTimeAsync(10);
    throwFromClick(new Error("after destroy"));
    expect(await sent()).toEqual([]);
  });

  it("sends an uncaught error with its type, message, raw stack, source and release", async () => {
    start({ errorTracking: true, release: "1.0.0" });
    const t0 = new Date().toISOString();
    const error = caught(chargeCard) as Error;
    throwFromClick(error);
    const [e, ...more] = await sent();
    expect(more).toEqual([]);
    expect(e.properties).toEqual({
      $exception_type: "TypeError",
      $exception_message: "Cannot read properties of undefined (reading 'id')",
      $exception_stack: error.stack,
      $exception_source: "onerror",
      $exception_count: 1,
      $release: "1.0.0",
      $session_id: expect.any(String),
      $lib: "strata-js",
      $lib_version: "0.3.1",
      $viewport_width: window.innerWidth,
    });
    expect(e.properties.$exception_stack).toContain("chargeCard");
    // The time and page of the error, not of the end of its burst.
    expect(e.timestamp).toBe(t0);
    expect(e.url).toBe("https://shop.example.com/pricing?plan=pro");
  });

  it("leaves the page's own handlers and the default alone", async () => {
    start({ errorTracking: true });
    const seen: boolean[] = [];
    addEventListener("error", (ev) => seen.push(ev.defaultPrevented));
    throwFromClick(new Error("x"));
    expect(seen).toEqual([false]);
    const ev = reject("y");
    expect(ev.defaultPrevented).toBe(false);
    expect(await sent()).toHaveLength(2);
  });

  it("uses the error's name, else its constructor's name, else Error", async () => {
    start({ errorTracking: true });
    class PaymentDeclined extends Error {
      name = "PaymentDeclined";
    }
    class Unnamed extends Error {}
    const nameless = Object.assign(new Unnamed("b"), { name: "" });
    throwFromClick(new PaymentDeclined("a"));
    throwFromClick(nameless);
    throwFromClick(Object.assign(Object.create(null), { message: "c", stack: "at x (https://a.example/x.js:1:2)" }));
    const events = await sent();
    expect(events.map((e) => [e.properties.$exception_type, e.properties.$exception_message])).toEqual([
      ["PaymentDeclined", "a"],
      ["Unnamed", "b"],
      ["Error", "c"],
    ]);
  });

  it("sends a rejection with an Error like an uncaught error", async () => {
    start({ errorTracking: true, release: "1.0.0" });
    const error = new RangeError("Invalid array length");
    reject(error);
    const [e] = await sent();
    expect(e.properties).toMatchObject({
      $exception_type: "RangeError",
      $exception_message: "Invalid array length",
      $exception_stack: error.stack,
      $exception_source: "unhandledrejection",
      $exception_count: 1,
      $release: "1.0.0",
    });
  });

  it("sends a rejection with a string as UnhandledRejection with the string, without stack", async () => {
    start({ errorTracking: true });
    reject("session expired");
    const [e] = await sent();
    expect(e.properties).toMatchObject({
      $exception_type: "UnhandledRejection",
      $exception_message: "session expired",
      $exception_source: "unhandledrejection",
    });
    expect(e.properties).not.toHaveProperty("$exception_stack");
  });

  it("sends a rejection with an object as its JSON, bounded, or its String() form", async () => {
    start({ errorTracking: true });
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    reject({ status: 503, body: "unavailable" });
    reject({ list: "x".repeat(5000) });
    reject(cycle);
    reject(undefined);
    reject(42);
    const messages = (await sent()).map((e) => e.properties.$exception_message as string);
    expect(messages[0]).toBe('{"status":503,"body":"unavailable"}');
    expect(messages[1]).toHaveLength(MAX_MESSAGE);
    expect(messages[1].startsWith('{"list":"xxx')).toBe(true);
    expect(messages.slice(2)).toEqual(["[object Object]", "undefined", "42"]);
  });

  it("sends a thrown non-Error as type Error with the value as the message", async () => {
    start({ errorTracking: true });
    throwFromClick("plain string thrown");
    const [e] = await sent();
    expect(e.properties).toMatchObject({ $exception_type: "Error", $exception_message: "plain string thrown", $exception_source: "onerror" });
    expect(e.properties).not.toHaveProperty("$exception_stack");
  });

  it('sends a cross-origin "Script error." as it comes: type Error, no stack', async () => {
    start({ errorTracking: true });
    dispatchEvent(new ErrorEvent("error", { message: "Script error.", error: null }));
    const [e] = await sent();
    expect(e.properties).toMatchObject({ $exception_type: "Error", $exception_message: "Script error.", $exception_count: 1 });
    expect(e.properties).not.toHaveProperty("$exception_stack");
  });

  it("bounds the stack and the message, and never cuts a character in half", async () => {
    start({ errorTracking: true });
    const long = new Error("m".repeat(MAX_MESSAGE - 1) + "😀 and more");
    long.stack = "Error: long\n" + "    at f (https://app.example/a.js:1:2)\n".repeat(2000);
    throwFromClick(long);
    const [e] = await sent();
    expect(e.properties.$exception_stack).toHaveLength(MAX_STACK);
    expect(e.properties.$exception_stack).toBe(long.stack.slice(0, MAX_STACK));
    // The emoji's first half is the last unit allowed: it becomes U+FFFD, as the
    // server refuses half a surrogate pair.
    expect(e.properties.$exception_message).toBe("m".repeat(MAX_MESSAGE - 1) + "\ufffd");
  });

  it("replaces NUL, which the server refuses in any string, in every string of the exception", async () => {
    start({ errorTracking: true });
    const e1 = new Error("a\0b");
    e1.name = "Bad\0Error";
    e1.stack = "Bad\0Error: a\0b\n    at f\0 (https://app.example/a.js:1:2)";
    throwFromClick(e1);
    reject("string\0reason");
    reject({ key: "object\0reason" });
    dispatchEvent(new ErrorEvent("error", { message: "Script\0error.", error: null }));
    const got = await sent();
    expect(got.map((e) => [e.properties.$exception_type, e.properties.$exception_message, e.properties.$exception_stack])).toEqual([
      ["Bad\ufffdError", "a\ufffdb", "Bad\ufffdError: a\ufffdb\n    at f\ufffd (https://app.example/a.js:1:2)"],
      ["UnhandledRejection", "string\ufffdreason", undefined],
      ["UnhandledRejection", '{"key":"object\\u0000reason"}', undefined],
      ["Error", "Script\ufffderror.", undefined],
    ]);
    // No string of any event sent holds a NUL, which the server would refuse.
    const strings: string[] = [];
    JSON.stringify(net.events(), (_, v) => (typeof v == "string" && strings.push(v), v));
    expect(strings.length).toBeGreaterThan(10);
    expect(strings.filter((x) => x.includes("\0"))).toEqual([]);
  });
});

describe("bursts", () => {
  /** repeat throws a new error from the same place, as a loop or a timer would. */
  const fail = (message: string) => {
    throwFromClick(caught(() => chargeCardWith(message)));
  };
  function chargeCardWith(message: string): never {
    throw new Error(message);
  }

  it("sends the same error within 5 seconds once, with the count, when the burst ends", async () => {
    start({ errorTracking: true });
    const t0 = new Date().toISOString();
    for (let i = 0; i < 3; i++) fail("card declined");
    await vi.advanceTimersByTimeAsync(BURST_MS - 1000);
    for (let i = 0; i < 2; i++) fail("card declined");
    fail("another error");
    await vi.advanceTimersByTimeAsync(999 + FLUSH_DELAY);
    expect(net.events()).toEqual([]); // held until the burst ends
    const events = await sent();
    expect(events.map((e) => [e.properties.$exception_message, e.properties.$exception_count])).toEqual([
      ["card declined", 5],
      ["another error", 1],
    ]);
    expect(events[0].timestamp).toBe(t0);
    // After the burst, the same error starts a new one.
    fail("card declined");
    expect((await sent()).slice(2).map((e) => e.properties.$exception_count)).toEqual([1]);
  });

  it("keeps the same message from different places apart", async () => {
    start({ errorTracking: true });
    const e1 = new Error("x");
    e1.stack = "Error: x\n    at a (https://app.example/a.js:1:10)";
    const e2 = new Error("x");
    e2.stack = "Error: x\n    at b (https://app.example/a.js:7:20)";
    const e3 = new Error("x");
    e3.stack = "Error: x\n    at a (https://app.example/a.js:1:10)\n    at c (https://app.example/a.js:9:1)";
    for (const e of [e1, e2, e3]) throwFromClick(e);
    const events = await sent();
    expect(events.map((e) => e.properties.$exception_count)).toEqual([2, 1]);
  });

  it("sends a burst early, with the count so far, on flush() and when the page is hidden", async () => {
    const s = start({ errorTracking: true });
    fail("a");
    fail("a");
    s.flush();
    expect(net.beacons).toHaveLength(1);
    expect(net.events().map((e) => e.properties.$exception_count)).toEqual([2]);
    fail("b");
    dispatchEvent(new Event("pagehide"));
    expect(net.events().map((e) => e.properties.$exception_message)).toEqual(["a", "b"]);
    expect(await sent()).toHaveLength(2); // nothing twice
  });

  it(`holds at most ${MAX_PENDING} different errors at once`, async () => {
    start({ errorTracking: true });
    for (let i = 0; i < MAX_PENDING + 20; i++) reject("error " + i);
    expect(await sent()).toHaveLength(MAX_PENDING);
  });

  it("hands held errors to the offline queue when the SDK is destroyed, and stops listening", async () => {
    start({ errorTracking: true });
    fail("a");
    reload(); // destroys the first instance
    expect(stored().map((e) => e.event_name)).toEqual(["$exception"]);
    fail("b");
    const events = await sent();
    expect(events.map((e) => e.properties.$exception_message)).toEqual(["a"]);
  });
});

describe("safety", () => {
  it("does not throw, recurse or capture its own error when sending fails", async () => {
    const s = start({ errorTracking: true });
    const capture = vi.spyOn(s, "capture").mockImplementation(() => {
      // The SDK's own code failing while it captures: an error on window, then a throw.
      dispatchEvent(new ErrorEvent("error", { message: "inner", error: new Error("inner") }));
      throw new Error("capture failed");
    });
    throwFromClick(new Error("outer"));
    await vi.advanceTimersByTimeAsync(BURST_MS);
    expect(capture).toHaveBeenCalledTimes(1);
    expect(() => s.flush()).not.toThrow();
    await vi.advanceTimersByTimeAsync(BURST_MS * 3);
    expect(capture).toHaveBeenCalledTimes(1);
    expect(capture.mock.calls[0][1]).toMatchObject({ $exception_message: "outer" });
  });

  it("does not throw, nor capture anything, when reading the error throws", async () => {
    start({ errorTracking: true });
    const hostile = new Error("x");
    Object.defineProperty(hostile, "message", {
      get() {
        throw new Error("getter");
      },
    });
    // happy-dom lets an exception from a window error listener escape dispatchEvent.
    expect(() => dispatchEvent(new ErrorEvent("error", { message: "x", error: hostile }))).not.toThrow();
    reject(hostile);
    reject({
      toJSON() {
        throw new Error("toJSON");
      },
      toString() {
        throw new Error("toString");
      },
    });
    const events = await sent();
    expect(events.map((e) => e.properties.$exception_message)).toEqual(["object"]);
  });
});

describe("release and track($exception)", () => {
  it("sends an error the app caught at once, as source manual, with the release", async () => {
    const s = start({ errorTracking: true, release: "2026.11.23-1" });
    const err = caught(chargeCard) as Error;
    s.track("$exception", { $exception_type: err.name, $exception_message: err.message, $exception_stack: err.stack });
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    const [e] = net.events();
    expect(e.properties).toEqual({
      $exception_type: "TypeError",
      $exception_message: err.message,
      $exception_stack: err.stack,
      $exception_source: "manual",
      $release: "2026.11.23-1",
      $session_id: expect.any(String),
      $lib: "strata-js",
      $lib_version: "0.3.1",
      $viewport_width: window.innerWidth,
    });
  });

  it("replaces NUL in the $exception_* strings the app sends, and nothing else", async () => {
    const s = start();
    s.track("$exception", { $exception_type: "Error", $exception_message: "a\0b", $exception_stack: "Error: a\0b", $exception_count: 2, other: "keep" });
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    const [e] = net.events();
    expect(e.properties).toMatchObject({ $exception_message: "a\ufffdb", $exception_stack: "Error: a\ufffdb", $exception_count: 2, other: "keep" });
  });

  it("works without errorTracking, and keeps a source and release the app gives", async () => {
    const s = start({ release: "1.0.0" });
    s.track("$exception", { $exception_type: "Error", $exception_message: "x", $exception_source: "worker", $release: "0.9.9" });
    s.track("$exception", { $exception_type: "Error", $exception_message: "y" });
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
    expect(net.events().map((e) => [e.properties.$exception_source, e.properties.$release])).toEqual([
      ["worker", "0.9.9"],
      ["manual", "1.0.0"],
    ]);
  });

  it("sends no $release without the option", async () => {
    start({ errorTracking: true });
    reject(new Error("x"));
    const [e] = await sent();
    expect(e.properties).not.toHaveProperty("$release");
  });
});
