import { beforeEach, describe, expect, it } from "vitest";
import { sampled, SESSION_IDLE_MS, sessionId } from "../src/session.js";

describe("session", () => {
  beforeEach(() => localStorage.clear());

  it("keeps its id while there is activity and starts a new one after 30 idle minutes", () => {
    const t = 1_700_000_000_000;
    const a = sessionId(t);
    expect(sessionId(t + SESSION_IDLE_MS - 1)).toBe(a);
    expect(sessionId(t + 2 * SESSION_IDLE_MS - 2)).toBe(a); // each call was activity
    const b = sessionId(t + 3 * SESSION_IDLE_MS);
    expect(b).not.toBe(a);
    expect(JSON.parse(localStorage.getItem("strata_session")!)).toEqual({ id: b, last: t + 3 * SESSION_IDLE_MS });
  });

  it("samples a session the same way on every page, at the rate asked", () => {
    let n = 0;
    for (let i = 0; i < 4000; i++) if (sampled("s" + i, 0.25)) n++;
    expect(n / 4000).toBeGreaterThan(0.22);
    expect(n / 4000).toBeLessThan(0.28);
    expect(sampled("x", 0.5)).toBe(sampled("x", 0.5));
    expect(sampled("x", 0)).toBe(false);
    expect(sampled("x", 1)).toBe(true);
  });
});
