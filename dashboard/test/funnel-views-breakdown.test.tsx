// The Funnels page's views under a breakdown (docs/dashboard.md,
// "Funnels"): the view switch stays enabled and sends the view with the
// breakdown; Over time draws a line per breakdown row and tables each
// row's conversion; Time to convert tables each row's median per step and
// shows the histograms of the row picked, the first value's at first.
import { describe, expect, it } from "vitest";
import { Funnels } from "../src/pages/Funnels";
import type { FunnelResult, Product } from "../src/types";
import { byText, choose, click, fakeFetch, mount } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const week = { key: "custom" as const, from: "2026-11-16", to: "2026-11-17" };
const events = { body: { events: [{ name: "$pageview", count: 10 }], productHasEvents: true } };

type Steps = FunnelResult["steps"];
const steps = (a: number, b: number, c: number): Steps => [
  { name: "$pageview", count: a, conversionPct: null },
  { name: "signup", count: b, conversionPct: a ? Math.round((b / a) * 1000) / 10 : 0 },
  { name: "purchase", count: c, conversionPct: b ? Math.round((c / b) * 1000) / 10 : 0 },
];
const point = (date: string, entered: number, converted: number) => ({
  date,
  entered,
  converted,
  conversionPct: entered ? Math.round((converted / entered) * 1000) / 10 : 0,
});

/** times is one step's times: its median and one bucket with all its users (k, of the API's 11). */
const times = (step: number, converted: number, medianSeconds: number | null, k: number) => ({
  step,
  converted,
  medianSeconds,
  histogram: [0, 10, 30, 60, 300, 1800, 3600, 10800, 86400, 259200, 604800].map((from, i, all) => ({
    fromSeconds: from,
    toSeconds: i + 1 < all.length ? all[i + 1] : null,
    count: i === k ? converted : 0,
  })),
});

const overTime: FunnelResult = {
  steps: steps(10, 6, 3),
  overTime: [point("2026-11-16", 6, 2), point("2026-11-17", 4, 1)],
  breakdown: [
    { breakdownValue: "Chrome", steps: steps(6, 4, 2), overTime: [point("2026-11-16", 4, 2), point("2026-11-17", 2, 0)] },
    { breakdownValue: "", steps: steps(3, 1, 1), overTime: [point("2026-11-16", 2, 0), point("2026-11-17", 1, 1)] },
    { breakdownValue: null, other: true, steps: steps(1, 1, 0), overTime: [point("2026-11-16", 0, 0), point("2026-11-17", 1, 0)] },
  ],
};

const timeToConvert: FunnelResult = {
  steps: steps(10, 6, 2),
  timeToConvert: [times(1, 6, 90, 3), times(2, 2, 7200, 6)],
  breakdown: [
    { breakdownValue: "Chrome", steps: steps(6, 4, 2), timeToConvert: [times(1, 4, 45, 2), times(2, 2, 3600, 6)] },
    { breakdownValue: null, other: true, steps: steps(4, 2, 0), timeToConvert: [times(1, 2, 1123200, 10), times(2, 0, null, 0)] },
  ],
};

function funnelRoutes() {
  return fakeFetch({
    "GET /api/v1/query/events": events,
    "GET /api/v1/queries": { body: { items: [] } },
    "POST /api/v1/query/funnel": (c) => {
      const b = c.body as { view?: string };
      if (b.view === "trends") return { body: overTime };
      if (b.view === "time_to_convert") return { body: timeToConvert };
      return { body: { steps: steps(10, 6, 3), breakdown: [] } };
    },
  });
}

const cells = (root: ParentNode, row: string) => [...root.querySelectorAll(`[data-testid=${row}]`)].map((r) => [...r.children].map((c) => c.textContent));

describe("Funnels views with a breakdown", () => {
  it("draws Over time as a line per value and tables each value's conversion", async () => {
    const calls = funnelRoutes();
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase&breakdown=browser");
    const root = await mount(<Funnels product={product} range={week} env="live" />);
    expect(root.querySelector("[data-testid=funnel-views-hint]")).toBeNull();
    expect(byText(root, "button", "Over time")?.hasAttribute("disabled")).toBe(false);

    await click(byText(root, "button", "Over time"));
    expect(location.search).toBe("?product=3&step=%24pageview&step=signup&step=purchase&breakdown=browser&view=trends");
    expect(calls.filter((c) => c.path === "/api/v1/query/funnel").pop()?.body).toMatchObject({ breakdown: "browser", view: "trends", interval: "day" });
    expect(cells(root, "funnel-over-time-breakdown-row")).toEqual([
      ["Chrome", "6", "2", "33.3%"],
      ["(not set)", "3", "1", "33.3%"],
      ["Other values", "1", "0", "0%"],
    ]);
    // The chart's lines, one per value, in its data table: each day's conversion.
    const table = root.querySelector("[data-testid=funnel-over-time] .data-table table")!;
    expect([...table.querySelectorAll("thead th")].map((th) => th.textContent)).toEqual(["Date", "Chrome", "(not set)", "Other values"]);
    expect([...table.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => td.textContent))).toEqual([
      ["50%", "0%", "0%"],
      ["0%", "100%", "0%"],
    ]);
    // The whole funnel's table is not drawn beside the values'.
    expect(root.querySelector("[data-testid=funnel-over-time-table]")).toBeNull();
  });

  it("tables Time to convert's medians per value and step, and shows the picked value's histograms", async () => {
    const calls = funnelRoutes();
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase&breakdown=browser&view=time_to_convert");
    const root = await mount(<Funnels product={product} range={week} env="live" />);
    expect(calls.filter((c) => c.path === "/api/v1/query/funnel").pop()?.body).toMatchObject({ breakdown: "browser", view: "time_to_convert" });
    expect(byText(root, "button", "Time to convert")?.getAttribute("aria-pressed")).toBe("true");
    const table = root.querySelector("[data-testid=funnel-time-breakdown]")!;
    expect([...table.querySelectorAll("thead th")].map((th) => th.textContent)).toEqual(["Value", "1 → 2. signup", "2 → 3. purchase"]);
    expect(cells(root, "funnel-time-breakdown-row")).toEqual([
      ["All users", "1.5 min of 6", "2 h of 2"],
      ["Chrome", "45 s of 4", "1 h of 2"],
      ["Other values", "13 days of 2", "— of 0"],
    ]);

    // The histograms are the first value's, then the one picked.
    const medians = () => [...root.querySelectorAll("[data-testid=funnel-time-median]")].map((m) => m.textContent);
    const filled = () =>
      [...root.querySelectorAll("[data-testid=funnel-time-step]")].map((s) =>
        [...s.querySelectorAll("[data-testid=funnel-time-bucket]")].filter((r) => r.querySelector("td.num")?.textContent !== "0").map((r) => r.querySelector("th")?.textContent),
      );
    const picker = root.querySelector<HTMLSelectElement>("select[name=time-row]")!;
    expect(picker.value).toBe("v:Chrome");
    expect(medians()).toEqual(["45 s", "1 h"]);
    expect(filled()).toEqual([["30 s – 1 min"], ["1 h – 3 h"]]);
    expect(root.querySelector("[data-testid=funnel-time-step] h3")?.textContent).toContain("Chrome");

    // The choice is kept in the URL (?histograms=), so a reload or a
    // shared link shows the same row.
    await choose(picker, "other");
    expect(medians()).toEqual(["13 days", "—"]);
    expect(filled()).toEqual([["7 days and more"], []]);
    expect(new URLSearchParams(location.search).get("histograms")).toBe("other");
    await choose(picker, "all");
    expect(medians()).toEqual(["1.5 min", "2 h"]);
    expect(root.querySelector("[data-testid=funnel-time-step] h3")?.textContent).toContain("all users");
    expect(new URLSearchParams(location.search).get("histograms")).toBe("all");
  });

  it("opens Time to convert on the row the URL names, and on the first row when it names one the answer lacks", async () => {
    funnelRoutes();
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase&breakdown=browser&view=time_to_convert&histograms=other");
    let root = await mount(<Funnels product={product} range={week} env="live" />);
    const medians = () => [...root.querySelectorAll("[data-testid=funnel-time-median]")].map((m) => m.textContent);
    expect(root.querySelector<HTMLSelectElement>("select[name=time-row]")!.value).toBe("other");
    expect(medians()).toEqual(["13 days", "—"]);
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase&breakdown=browser&view=time_to_convert&histograms=v%3ASafari");
    root = await mount(<Funnels product={product} range={week} env="live" />);
    expect(root.querySelector<HTMLSelectElement>("select[name=time-row]")!.value).toBe("v:Chrome");
    expect(medians()).toEqual(["45 s", "1 h"]);
  });
});
