import { afterEach, describe, expect, it } from "vitest";
import { checkFilter, filterRequest } from "../src/components/FilterEditor";
import { funnelFromSearch, funnelSearch } from "../src/pages/Funnels";
import { Retention } from "../src/pages/Retention";
import { trendFromSearch, trendSearch, Trends } from "../src/pages/Trends";
import type { QueryPatch } from "../src/router";
import type { Product } from "../src/types";
import { byText, choose, click, fakeFetch, mount, submit, type } from "./helpers";

afterEach(() => history.replaceState(null, "", "/"));

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const range = { key: "custom" as const, from: "2026-11-01", to: "2026-11-03" };

/** cohort is a cohort of the list as the API answers it. */
function cohort(id: number, name: string) {
  return {
    id, productId: 3, name, description: "", kind: "static", generation: 1, size: 2, computedAt: "2026-11-02T00:00:00Z",
    state: "ready", error: "", createdBy: "ann@example.com", createdAt: "2026-11-01T00:00:00Z", updatedAt: "2026-11-01T00:00:00Z",
  };
}

describe("cohort filters", () => {
  it("are sent as the cohort's id and checked for a picked cohort and a cohort's operator", () => {
    expect(filterRequest({ property: "cohort", operator: "not_in", value: "12" })).toEqual({ property: "cohort", operator: "not_in", value: 12 });
    expect(filterRequest({ property: " cohort ", operator: "in", value: "4" })).toEqual({ property: "cohort", operator: "in", value: 4 });
    expect(checkFilter({ property: "cohort", operator: "in", value: "" })).toMatch(/Pick the cohort/);
    expect(checkFilter({ property: "cohort", operator: "eq", value: "4" })).toMatch(/is in cohort/);
    expect(checkFilter({ property: "browser", operator: "in", value: "4" })).toMatch(/not a cohort's/);
    expect(checkFilter({ property: "cohort", operator: "in", value: "4" })).toBeNull();
  });

  it("round-trip through a trend's and a funnel's URL", () => {
    const written = (patch: QueryPatch) => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(patch)) for (const x of v == null ? [] : typeof v === "string" ? [v] : v) q.append(k, x);
      return q;
    };
    const trend = trendFromSearch(new URLSearchParams("event=signup&filter=cohort:not_in:7&filter=browser:eq:Chrome"));
    expect(trend.filters).toEqual([
      { property: "cohort", operator: "not_in", value: "7" },
      { property: "browser", operator: "eq", value: "Chrome" },
    ]);
    expect(trendFromSearch(written(trendSearch(trend)))).toEqual(trend);
    const funnel = funnelFromSearch(new URLSearchParams("step=a&step=b&where=1:cohort:in:3"));
    expect(funnel.where).toEqual([[], [{ property: "cohort", operator: "in", value: "3" }]]);
    expect(funnelFromSearch(written(funnelSearch(funnel)))).toEqual(funnel);
  });

  it("are picked by name from the product's cohorts in the trend builder, and the operator list follows the property", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 10 }] } },
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
      "GET /api/v1/products/3/cohorts": { body: { items: [cohort(5, "Beta testers"), cohort(9, "Paying")] } },
      "POST /api/v1/query/trend": { body: { interval: "day", series: [{ event: "$pageview", label: "$pageview", data: [{ date: "2026-11-01", value: 3 }], total: 3 }] } },
    });
    const root = await mount(<Trends product={product} range={range} env="live" />);
    await click(byText(root, "button", "Add filter"));
    const operators = () => [...root.querySelectorAll("[aria-label='Filter 1 operator'] option")].map((o) => o.getAttribute("value"));
    expect(operators()).toContain("regex");
    await type(root.querySelector("[aria-label='Filter 1 property']"), "cohort");
    expect(operators()).toEqual(["in", "not_in"]);
    expect(root.querySelector("[aria-label='Filter 1 value']")).toBeNull();
    const picker = root.querySelector("[aria-label='Filter 1 cohort']") as HTMLSelectElement;
    expect([...picker.options].map((o) => o.textContent)).toEqual(["Pick a cohort", "Beta testers", "Paying"]);
    // Without a cohort picked the trend does not run.
    await submit(root.querySelector("form[aria-label='Trend builder']"));
    expect(root.textContent).toContain("Pick the cohort of the cohort filter.");
    await choose(picker, "9");
    await choose(root.querySelector("[aria-label='Filter 1 operator']"), "not_in");
    await submit(root.querySelector("form[aria-label='Trend builder']"));
    const last = calls.filter((c) => c.path === "/api/v1/query/trend").pop();
    expect((last?.body as { filters?: unknown } | undefined)?.filters).toEqual([{ property: "cohort", operator: "not_in", value: 9 }]);
    // Back to a property: a property's operators again.
    await type(root.querySelector("[aria-label='Filter 1 property']"), "browser");
    expect(operators()).toContain("regex");
    expect((root.querySelector("[aria-label='Filter 1 operator']") as HTMLSelectElement).value).toBe("eq");
  });

  it("filter retention, and a retention link carries its filters", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 10 }] } },
      "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
      "GET /api/v1/products/3/cohorts": { body: { items: [cohort(5, "Beta testers")] } },
      "POST /api/v1/query/retention": { body: { period: "week", cohorts: [{ date: "2026-11-01", size: 2, values: [2, 1] }] } },
    });
    const root = await mount(<Retention product={product} range={range} env="live" />);
    await click(byText(root, "button", "Add filter"));
    await type(root.querySelector("[aria-label='Filter 1 property']"), "cohort");
    await choose(root.querySelector("[aria-label='Filter 1 cohort']"), "5");
    await click(byText(root, "button", "Add filter"));
    await type(root.querySelector("[aria-label='Filter 2 property']"), "os");
    await type(root.querySelector("[aria-label='Filter 2 value']"), "iOS");
    await submit(root.querySelector("form[aria-label='Retention query']"));
    const last = calls.filter((c) => c.path === "/api/v1/query/retention").pop();
    expect((last?.body as { filters?: unknown } | undefined)?.filters).toEqual([
      { property: "cohort", operator: "in", value: 5 },
      { property: "os", operator: "eq", value: "iOS" },
    ]);
    expect(new URLSearchParams(location.search).getAll("filter")).toEqual(["cohort:in:5", "os:eq:iOS"]);
  });
});
