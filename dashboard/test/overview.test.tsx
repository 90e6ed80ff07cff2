import { afterEach, describe, expect, it } from "vitest";
import { change, duration, periodName, previousPeriod } from "../src/compare";
import { Overview } from "../src/pages/Overview";
import type { SessionsResult, TrendResult } from "../src/types";
import { click, fakeFetch, mount } from "./helpers";

afterEach(() => history.replaceState(null, "", "/"));

describe("the previous period", () => {
  it.each([
    ["2026-11-21", "2026-11-27", "2026-11-14", "2026-11-20", "the previous 7 days"],
    ["2026-11-27", "2026-11-27", "2026-11-26", "2026-11-26", "the previous day"],
    // Across a month's end and a leap day: counted in days, not in months.
    ["2028-03-01", "2028-03-30", "2028-01-31", "2028-02-29", "the previous 30 days"],
    ["2026-01-01", "2026-12-31", "2025-01-01", "2025-12-31", "the previous 365 days"],
  ])("of %s – %s is %s – %s", (from, to, pFrom, pTo, name) => {
    expect(previousPeriod({ from, to })).toEqual({ from: pFrom, to: pTo });
    expect(periodName({ from, to })).toBe(name);
  });
});

describe("a figure's change", () => {
  const period = "the previous 7 days";
  const percent = { unit: "percent" as const };
  const bounce = { unit: "points" as const, lowerIsBetter: true };

  it("is a whole percent, signed with a true minus, good when up", () => {
    expect(change(112, 100, percent, period)).toEqual({ text: "+12 %", direction: "up", tone: "good", spoken: "up 12 % from the previous 7 days" });
    expect(change(97, 100, percent, period)).toEqual({ text: "\u22123 %", direction: "down", tone: "bad", spoken: "down 3 % from the previous 7 days" });
    expect(change(3, 2, percent, period).text).toBe("+50 %");
    expect(change(2, 3, percent, period).text).toBe("\u221233 %");
    expect(change(1, 3, percent, period).text).toBe("\u221267 %");
  });

  it("is flat when it rounds to zero", () => {
    expect(change(1000, 1000, percent, period)).toEqual({ text: "0 %", direction: "flat", tone: "neutral", spoken: "no change from the previous 7 days" });
    expect(change(1004, 1000, percent, period).direction).toBe("flat");
    expect(change(996, 1000, percent, period).text).toBe("0 %");
  });

  it("from zero is new, not a division by zero", () => {
    expect(change(5, 0, percent, period)).toEqual({ text: "new", direction: "new", tone: "neutral", spoken: "nothing to compare with in the previous 7 days" });
    expect(change(0, 0, percent, period).text).toBe("0 %");
    expect(change(0, 0, bounce, period).text).toBe("0 pp");
    // A rate over no visits means nothing, whatever its value.
    expect(change(40, 0, bounce, period, true).text).toBe("new");
  });

  it("of the bounce rate is in percentage points, and a rise is bad news", () => {
    expect(change(52.5, 50, bounce, period)).toEqual({ text: "+2.5 pp", direction: "up", tone: "bad", spoken: "up 2.5 percentage points from the previous 7 days" });
    expect(change(25, 50, bounce, period)).toEqual({ text: "\u221225 pp", direction: "down", tone: "good", spoken: "down 25 percentage points from the previous 7 days" });
    expect(change(33.3, 33.3, bounce, period).direction).toBe("flat");
    // Points subtract: 66.7 − 33.3 is 33.4, not a float's 33.400000000000006.
    expect(change(66.7, 33.3, bounce, period).text).toBe("+33.4 pp");
  });
});

describe("visit duration", () => {
  it.each([
    [0, "0:00"],
    [0.4, "0:00"],
    [59.5, "1:00"],
    [75.4, "1:15"],
    [600, "10:00"],
    [3599.4, "59:59"],
    [3600, "1:00:00"],
    [3725, "1:02:05"],
    [36_061, "10:01:01"],
  ])("of %s s is written %s", (s, want) => {
    expect(duration(s)).toBe(want);
  });
});

const product = { id: 1, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const range = { key: "custom" as const, from: "2026-11-21", to: "2026-11-27" };

function days(from: string, values: number[]): { date: string; value: number }[] {
  const t = Date.parse(from + "T00:00:00Z");
  return values.map((value, i) => ({ date: new Date(t + i * 86_400_000).toISOString().slice(0, 10), value }));
}

function sessions(visits: number, visitors: number, pageviews: number, bounceRate: number, visitDuration: number, pagesPerVisit: number): SessionsResult {
  return {
    interval: "month",
    totals: { visits, visitors, pageviews, bounceRate, visitDuration, pagesPerVisit },
    series: [],
    entryPages: [
      { path: "/", visits: 3, bounceRate: 66.7 },
      { path: "/docs", visits: 1, bounceRate: 0 },
    ],
    exitPages: [
      { path: "/pricing", visits: 2 },
      { path: "/", visits: 2 },
    ],
  };
}

describe("the Overview", () => {
  it("shows each figure with its change against the previous period, and overlays that period on the chart from the URL", async () => {
    const current = range.from;
    const calls = fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 9 }] } },
      "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
      "POST /api/v1/query/trend": (call) => {
        const body = call.body as { dateFrom: string; breakdown?: string };
        if (body.breakdown) return { body: { interval: "month", series: [] } };
        const now = body.dateFrom === current;
        const from = body.dateFrom;
        return {
          body: {
            interval: "day",
            series: [
              // The visitors' total is the distinct users over the period, not the sum of the days' (4).
              { event: "$pageview", label: "$pageview", breakdownValue: null, data: days(from, now ? [1, 2, 0, 0, 1, 0, 0] : [1, 1, 0, 0, 0, 0, 0]), total: now ? 3 : 2 },
              { event: "$pageview", label: "$pageview", breakdownValue: null, data: days(from, now ? [3, 4, 0, 0, 2, 0, 0] : [2, 3, 0, 0, 0, 0, 0]), total: now ? 9 : 5 },
            ],
          } as TrendResult,
        };
      },
      "POST /api/v1/query/sessions": (call) => {
        const now = (call.body as { dateFrom: string }).dateFrom === current;
        return { body: now ? sessions(4, 3, 9, 50, 75.4, 2.25) : sessions(4, 2, 5, 25, 75.4, 1.25) };
      },
    });
    const root = await mount(<Overview product={product} range={range} env="live" />);
    const asked = calls.filter((c) => c.path === "/api/v1/query/sessions").map((c) => c.body as { dateFrom: string; dateTo: string });
    expect(asked).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ dateFrom: "2026-11-21", dateTo: "2026-11-27" }),
        expect.objectContaining({ dateFrom: "2026-11-14", dateTo: "2026-11-20" }),
      ]),
    );
    // The unique visitors come with the trend: no retention query is asked for them.
    expect(calls.filter((c) => c.path === "/api/v1/query/retention")).toHaveLength(0);
    const figure = (id: string) => root.querySelector(`[data-testid=stat-${id}]`)?.textContent;
    const shown = (id: string) => root.querySelector(`[data-testid=change-${id}] [aria-hidden=true]`)?.textContent;
    const spoken = (id: string) => root.querySelector(`[data-testid=change-${id}] .visually-hidden`)?.textContent;
    const tone = (id: string) => root.querySelector(`[data-testid=change-${id}]`)?.className;
    expect([figure("visitors"), figure("visits"), figure("pageviews"), figure("bounce-rate"), figure("visit-duration"), figure("pages-per-visit")]).toEqual([
      "3", "4", "9", "50 %", "1:15", "2.25",
    ]);
    expect(shown("visitors")).toBe("↑ +50 %");
    expect(spoken("visitors")).toBe("up 50 % from the previous 7 days");
    expect(shown("visits")).toBe("→ 0 %");
    expect(shown("pageviews")).toBe("↑ +80 %");
    expect(shown("bounce-rate")).toBe("↑ +25 pp");
    expect(tone("bounce-rate")).toContain("change-bad");
    expect(tone("pageviews")).toContain("change-good");
    expect(shown("visit-duration")).toBe("→ 0 %");
    expect(shown("pages-per-visit")).toBe("↑ +80 %");
    const rows = (label: string) => [...root.querySelectorAll(`table[aria-label='${label}'] tbody tr`)].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows("Entry pages")).toEqual([["/", "3", "66.7 %"], ["/docs", "1", "0 %"]]);
    expect(rows("Exit pages")).toEqual([["/pricing", "2"], ["/", "2"]]);

    // The overlay: off by default, a toggle that writes ?compare=previous, and its columns in the chart's data table.
    const headers = () => [...root.querySelectorAll(".data-table thead th")].map((th) => th.textContent);
    expect(headers()).toEqual(["Date", "Visitors", "Page views"]);
    const toggle = [...root.querySelectorAll("label")].find((l) => l.textContent?.includes("Compare with the previous period"))!.querySelector("input")!;
    await click(toggle);
    expect(new URLSearchParams(location.search).get("compare")).toBe("previous");
    expect(headers()).toEqual(["Date", "Visitors", "Page views", "Visitors, the previous 7 days", "Page views, the previous 7 days"]);
  });

  it("says new rather than dividing by a previous period without visits", async () => {
    history.replaceState(null, "", "/?compare=previous");
    fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 9 }] } },
      "POST /api/v1/query/trend": (call) => {
        const from = (call.body as { dateFrom: string }).dateFrom;
        const now = from === range.from;
        return { body: { interval: "day", series: [0, 1].map(() => ({ event: "$pageview", label: "$pageview", breakdownValue: null, data: days(from, [now ? 1 : 0, 0, 0, 0, 0, 0, 0]), total: now ? 1 : 0 })) } };
      },
      "POST /api/v1/query/sessions": (call) =>
        (call.body as { dateFrom: string }).dateFrom === range.from
          ? { body: sessions(1, 1, 1, 100, 0, 1) }
          : { body: { ...sessions(0, 0, 0, 0, 0, 0), entryPages: [], exitPages: [] } },
    });
    const root = await mount(<Overview product={product} range={range} env="live" />);
    for (const id of ["visitors", "visits", "pageviews", "bounce-rate", "visit-duration", "pages-per-visit"]) {
      expect(root.querySelector(`[data-testid=change-${id}] [aria-hidden=true]`)?.textContent, id).toBe("★ new");
    }
    // The overlay is on from the URL: the previous period's columns are in the table.
    expect([...root.querySelectorAll(".data-table thead th")].map((th) => th.textContent)).toContain("Visitors, the previous 7 days");
  });
});
