import { describe, expect, it } from "vitest";
import { fitScale, legend, marks } from "../src/pages/Replay";
import { duration } from "../src/pages/Replays";

describe("replay timeline", () => {
  it("marks page views, clicks, captured events and errors at their offsets", () => {
    const t = 1_700_000_000_000;
    const got = marks([
      { type: 4, timestamp: t, data: { href: "https://shop.example/" } },
      { type: 2, timestamp: t + 5, data: {} },
      { type: 3, timestamp: t + 1000, data: { source: 2, type: 2 } },
      { type: 3, timestamp: t + 1100, data: { source: 2, type: 1 } },
      { type: 3, timestamp: t + 1200, data: { source: 1 } },
      { type: 5, timestamp: t + 2000, data: { tag: "signup" } },
      { type: 5, timestamp: t + 2100, data: { tag: "$pageview" } },
      { type: 5, timestamp: t + 3000, data: { tag: "$exception", payload: { message: "boom" } } },
    ]);
    expect(got).toEqual([
      { kind: "page", offset: 0, label: "https://shop.example/" },
      { kind: "click", offset: 1000, label: "Click" },
      { kind: "event", offset: 2000, label: "signup" },
      { kind: "error", offset: 3000, label: "boom" },
    ]);
    expect(marks([])).toEqual([]);
  });

  it("names every kind of mark in the legend", () => {
    expect(legend.map(([k]) => k)).toEqual(["page", "click", "event", "error"]);
  });

  it("scales a recorded page down to the stage's width, never up", () => {
    expect(fitScale(350, 1280)).toBeCloseTo(350 / 1280);
    expect(fitScale(1000, 800)).toBe(1);
    expect(fitScale(0, 1280)).toBe(1);
    expect(fitScale(350, 0)).toBe(1);
  });

  it("writes durations", () => {
    expect([duration(4400), duration(65_000), duration(3_725_000)]).toEqual(["4 s", "1 min 5 s", "1 h 2 min"]);
  });
});
