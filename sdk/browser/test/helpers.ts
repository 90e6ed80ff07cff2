// Shared fakes: a recording fetch, a recording sendBeacon and clean storage, so
// each test sees exactly what the SDK would put on the wire.
import { afterEach, beforeEach, vi } from "vitest";
import { Strata } from "../src/client";
import { FLUSH_DELAY } from "../src/queue";
import type { StrataOptions, WireEvent } from "../src/types";

export const KEY = "st_live_4kQ2xY8pLm0ZrT6vBn3sWc9dFh1jKa7E";
export const HOST = "https://strata.example.com";
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** One request the SDK made. */
export interface Call {
  url: string;
  init: RequestInit;
  body?: { api_key?: string; sent_at?: string; batch: WireEvent[] };
}

type Answer = Response | Error | ((url: string, init: RequestInit) => Response | Error | Promise<Response>);

/** net records fetch and sendBeacon calls; answers are taken in order, then 202. */
export const net = {
  fetches: [] as Call[],
  beacons: [] as { url: string; body: string }[],
  answers: [] as Answer[],
  beaconOk: true,
  /** posts returns the requests to /e (not those for the config or messages). */
  posts(): Call[] {
    return this.fetches.filter((c) => c.url.endsWith("/e"));
  },
  /** events returns every event posted by fetch or beacon, in order. */
  events(): WireEvent[] {
    const beacon = this.beacons.map((b) => JSON.parse(b.body).batch as WireEvent[]);
    return [...this.fetches.filter((c) => c.url.endsWith("/e")).map((c) => c.body!.batch), ...beacon].flat();
  },
};

export function accepted(n = 1): Response {
  return new Response(JSON.stringify({ accepted: n, rejected: [] }), { status: 202 });
}

export function status(code: number, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code: "x", message: "x" } }), { status: code, headers });
}

/**
 * MemoryStorage stands in for localStorage and sessionStorage, so tests can make
 * them throw (quota, privacy modes); happy-dom's own cannot be spied on.
 */
export class MemoryStorage {
  private items = new Map<string, string>();
  get length(): number {
    return this.items.size;
  }
  key(i: number): string | null {
    return [...this.items.keys()][i] ?? null;
  }
  getItem(k: string): string | null {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    this.items.set(k, String(v));
  }
  removeItem(k: string): void {
    this.items.delete(k);
  }
  clear(): void {
    this.items.clear();
  }
}

const instances: Strata[] = [];

/** How many of net.events() sent() has returned so far in this test. */
let seen = 0;

/** sent lets the queue's delay pass and returns the events posted since the last call. */
export async function sent(): Promise<WireEvent[]> {
  await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
  const all = net.events();
  const fresh = all.slice(seen);
  seen = all.length;
  return fresh;
}

/** start makes an SDK instance that is destroyed after the test. */
export function start(options: Partial<StrataOptions> = {}): Strata {
  // The message renderer is off unless a test turns it on: its config request
  // at start would be one more fetch in every other test.
  // So is error tracking, which follows the config when left unset, and the
  // product's cookieless setting (cookieless.test.ts leaves it unset).
  const s = new Strata({ apiKey: KEY, apiHost: HOST, autocapture: false, messages: false, errorTracking: false, cookieless: false, ...options });
  instances.push(s);
  return s;
}

/**
 * reload simulates the next page load: the current instances go away (without
 * delivering anything) and a new one starts on the same storage.
 */
export function reload(options: Partial<StrataOptions> = {}): Strata {
  for (const s of instances.splice(0)) s.destroy();
  return start(options);
}

/** stored returns the offline queue as localStorage holds it. */
export function stored(): WireEvent[] {
  return JSON.parse(localStorage.getItem("strata_queue") || "[]");
}

beforeEach(() => {
  seen = 0;
  for (const area of ["localStorage", "sessionStorage"]) {
    Object.defineProperty(window, area, { value: new MemoryStorage(), configurable: true });
  }
  document.cookie.split(";").forEach((c) => {
    const name = c.split("=")[0].trim();
    if (name) document.cookie = name + "=;max-age=0;path=/";
  });
  document.body.innerHTML = "";
  history.replaceState(null, "", "/pricing?plan=pro");
  net.fetches = [];
  net.beacons = [];
  net.answers = [];
  net.beaconOk = true;
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: string | URL, init: RequestInit = {}) => {
      const url = String(input);
      const body = typeof init.body == "string" && url.endsWith("/e") ? JSON.parse(init.body) : undefined;
      net.fetches.push({ url, init, body });
      let a = net.answers.shift() ?? accepted(body?.batch.length);
      if (typeof a == "function") a = await a(url, init);
      if (a instanceof Error) throw a;
      return a;
    }),
  );
  vi.spyOn(navigator, "sendBeacon").mockImplementation((url: string | URL, data?: BodyInit | null) => {
    if (!net.beaconOk) return false;
    net.beacons.push({ url: String(url), body: String(data) });
    return true;
  });
});

afterEach(() => {
  for (const s of instances.splice(0)) s.destroy();
  vi.useRealTimers();
});
