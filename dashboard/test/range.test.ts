import { afterEach, describe, expect, it } from "vitest";
import {
  checkCustom,
  describe as describeRange,
  during,
  isoDay,
  parseDay,
  presetRange,
  rangeFromSearch,
  searchWithRange,
  setTimeZone,
  timeZone,
  wallTime,
  zoneToday,
} from "../src/range";

const today = new Date("2026-11-23T15:30:00Z");

describe("date ranges", () => {
  it.each([
    ["today", "2026-11-23", "2026-11-23"],
    ["yesterday", "2026-11-22", "2026-11-22"],
    ["7d", "2026-11-17", "2026-11-23"],
    ["30d", "2026-10-25", "2026-11-23"],
    ["90d", "2026-08-26", "2026-11-23"],
    ["365d", "2025-11-24", "2026-11-23"],
  ] as const)("preset %s covers %s to %s, both included", (key, from, to) => {
    expect(presetRange(key, today)).toEqual({ key, from, to });
  });

  it("reads a preset, a custom range, or falls back to the last 30 days", () => {
    expect(rangeFromSearch(new URLSearchParams("range=7d"), today)).toEqual({ key: "7d", from: "2026-11-17", to: "2026-11-23" });
    expect(rangeFromSearch(new URLSearchParams("from=2026-10-01&to=2026-10-15"), today)).toEqual({ key: "custom", from: "2026-10-01", to: "2026-10-15" });
    for (const bad of ["", "range=forever", "from=2026-10-15&to=2026-10-01", "from=2026-02-30&to=2026-03-01", "from=2026-10-01"]) {
      expect(rangeFromSearch(new URLSearchParams(bad), today).key).toBe("30d");
    }
  });

  it("writes the range into the URL and keeps other parameters", () => {
    const s = searchWithRange(new URLSearchParams("product=3&range=7d"), { key: "custom", from: "2026-01-01", to: "2026-01-31" });
    expect(s.toString()).toBe("product=3&from=2026-01-01&to=2026-01-31");
    expect(searchWithRange(s, presetRange("90d", today)).toString()).toBe("product=3&range=90d");
  });

  it("checks custom ranges", () => {
    expect(checkCustom("2026-01-01", "2026-01-01")).toBeNull();
    expect(checkCustom("2026-01-02", "2026-01-01")).toMatch(/before/);
    expect(checkCustom("", "2026-01-01")).toMatch(/YYYY-MM-DD/);
    expect(checkCustom("2000-01-01", "2026-01-01")).toMatch(/at most 3660/);
    expect(parseDay("2026-02-29")).toBeNull();
    expect(parseDay("2028-02-29")?.toISOString()).toBe("2028-02-29T00:00:00.000Z");
  });

  it("describes ranges for people", () => {
    expect(describeRange(presetRange("7d", today))).toBe("Last 7 days");
    expect(describeRange({ key: "custom", from: "2026-01-01", to: "2026-01-31" })).toBe("2026-01-01 – 2026-01-31");
    expect(during(presetRange("today", today))).toBe("today");
    expect(during(presetRange("30d", today))).toBe("in the last 30 days");
    expect(during({ key: "custom", from: "2026-01-01", to: "2026-01-01" })).toBe("on 2026-01-01");
    expect(during({ key: "custom", from: "2026-01-01", to: "2026-01-31" })).toBe("from 2026-01-01 to 2026-01-31");
  });
});

describe("the product's time zone", () => {
  afterEach(() => setTimeZone("UTC"));

  it("puts today in the zone, not in UTC or the browser's", () => {
    const at = Date.UTC(2026, 10, 23, 15, 4); // 05:04 on the 24th at +14, 04:04 on the 23rd at -11
    expect(isoDay(zoneToday(at, "Pacific/Kiritimati"))).toBe("2026-11-24");
    expect(isoDay(zoneToday(at, "Pacific/Pago_Pago"))).toBe("2026-11-23");
    expect(isoDay(zoneToday(Date.UTC(2026, 10, 23, 9), "Pacific/Pago_Pago"))).toBe("2026-11-22");
    expect(isoDay(zoneToday(at, "UTC"))).toBe("2026-11-23");
    setTimeZone("Pacific/Kiritimati");
    expect(presetRange("yesterday", zoneToday(at))).toEqual({ key: "yesterday", from: "2026-11-23", to: "2026-11-23" });
    expect(presetRange("7d", zoneToday(at))).toEqual({ key: "7d", from: "2026-11-18", to: "2026-11-24" });
  });

  it("reads an instant as the zone's wall time across a change of offset", () => {
    expect(new Date(wallTime(Date.UTC(2026, 2, 29, 0, 59), "Europe/Berlin")).toISOString()).toBe("2026-03-29T01:59:00.000Z");
    expect(new Date(wallTime(Date.UTC(2026, 2, 29, 1, 0), "Europe/Berlin")).toISOString()).toBe("2026-03-29T03:00:00.000Z");
    expect(new Date(wallTime(Date.UTC(2026, 9, 25, 1, 30), "Europe/Berlin")).toISOString()).toBe("2026-10-25T02:30:00.000Z");
    expect(new Date(wallTime(Date.UTC(2026, 0, 1), "Asia/Kathmandu")).toISOString()).toBe("2026-01-01T05:45:00.000Z");
  });

  it("falls back to UTC for a zone the browser does not know", () => {
    setTimeZone("Mars/Olympus");
    expect(timeZone()).toBe("UTC");
    setTimeZone("Europe/Berlin");
    expect(timeZone()).toBe("Europe/Berlin");
  });
});
