import { afterEach, describe, expect, it } from "vitest";
import { eventFilters, formatFilters, parseFilters, sessionFilters, withFilter } from "../src/overviewFilters";
import { Overview } from "../src/pages/Overview";
import type { SessionsResult, TrendResult } from "../src/types";
import { act } from "preact/test-utils";
import { byText, choose, click, fakeFetch, mount, settle, type Call } from "./helpers";

afterEach(() => history.replaceState(null, "", "/"));

describe("the Overview's filters in the URL", () => {
  it("read back as they were written, a value's commas included, and drop what the Overview does not know", () => {
    const fs = [
      { property: "country", value: "DE" },
      { property: "utm_campaign", value: "spring, sale" },
      { property: "entry_page", value: "" },
    ];
    expect(parseFilters(formatFilters(fs))).toEqual(fs);
    expect(parseFilters(["is,plan,pro", "is,country,NL", "eq,browser,Chrome", "is,country,DE", "nonsense"])).toEqual([{ property: "country", value: "NL" }]);
    expect(parseFilters([])).toBeNull();
  });

  it("hold a cohort's id, in or not in it, and drop a cohort that is not an id", () => {
    const fs = [
      { property: "cohort", value: "12", negated: true },
      { property: "country", value: "DE" },
    ];
    expect(formatFilters(fs)).toEqual(["is_not,cohort,12", "is,country,DE"]);
    expect(parseFilters(formatFilters(fs))).toEqual(fs);
    expect(parseFilters(["is,cohort,12"])).toEqual([{ property: "cohort", value: "12", negated: false }]);
    expect(parseFilters(["is,cohort,beta", "is,cohort,0", "is_not,country,DE"])).toBeNull();
    expect(eventFilters(fs)).toEqual([
      { property: "cohort", operator: "not_in", value: 12 },
      { property: "country", operator: "eq", value: "DE" },
    ]);
  });

  it("hold a person property by its key, and drop a key a filter cannot take", () => {
    const fs = [{ property: "person.plan", value: "pro" }];
    expect(formatFilters(fs)).toEqual(["is,person.plan,pro"]);
    expect(parseFilters(formatFilters(fs))).toEqual(fs);
    expect(parseFilters(["is,person.$email,a", "is,person.,x", "is,person./x,1"])).toBeNull();
    expect(eventFilters([...fs, { property: "person.seats", value: "" }])).toEqual([
      { property: "person.plan", operator: "eq", value: "pro" },
      { property: "person.seats", operator: "is_not_set" },
    ]);
  });

  it("replace a value of the same property and add another's", () => {
    const one = withFilter([], { property: "browser", value: "Chrome" });
    expect(withFilter(one, { property: "browser", value: "Firefox" })).toEqual([{ property: "browser", value: "Firefox" }]);
    expect(withFilter(one, { property: "os", value: "Linux" })).toEqual([
      { property: "browser", value: "Chrome" },
      { property: "os", value: "Linux" },
    ]);
  });

  it("become a trend's event filters, the empty value as not set, and the sessions query's page filters", () => {
    const fs = [
      { property: "country", value: "" },
      { property: "exit_page", value: "/done" },
      { property: "source", value: "Google" },
    ];
    expect(eventFilters(fs)).toEqual([
      { property: "country", operator: "is_not_set" },
      { property: "source", operator: "eq", value: "Google" },
    ]);
    expect(sessionFilters(fs)).toEqual([...eventFilters(fs), { property: "exit_page", operator: "eq", value: "/done" }]);
  });
});

const product = { id: 1, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const range = { key: "custom" as const, from: "2026-11-21", to: "2026-11-27" };

/** line is one breakdown value's line over the range. */
function line(value: string, n: number) {
  return { event: "$pageview", label: "$pageview", breakdownValue: value, data: [{ date: "2026-11-01", value: n }] };
}

/** fakeServer answers the Overview's calls, each breakdown with the values its filters keep; extra adds routes. */
function fakeServer(extra: Parameters<typeof fakeFetch>[0] = {}): Call[] {
  const pageviews: { country: string; browser: string; region: string }[] = [
    { country: "DE", browser: "Chrome", region: "Bavaria" },
    { country: "DE", browser: "Firefox", region: "Berlin" },
    { country: "NL", browser: "Chrome", region: "North Holland" },
    { country: "", browser: "Chrome", region: "" },
  ];
  type Filter = { property: string; operator: string; value?: string };
  const keeps = (p: Record<string, string>, fs: Filter[]) =>
    fs.every((f) => (f.operator === "is_not_set" ? !p[f.property] : f.operator === "eq" ? p[f.property] === f.value : true));
  return fakeFetch({
    ...extra,
    "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 4 }] } },
    "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
    "GET /api/v1/config": { body: { geoAttribution: false } },
    "POST /api/v1/query/trend": (call) => {
      const body = call.body as { breakdown?: string; filters?: Filter[]; dateFrom: string };
      const kept = pageviews.filter((p) => keeps(p, (body.filters ?? []).filter((f) => f.property in p)));
      if (!body.breakdown) {
        const data = [{ date: body.dateFrom, value: kept.length }];
        // One page view a user here: the visitors' total is the page views kept.
        return { body: { interval: "day", series: [0, 1].map(() => ({ event: "$pageview", label: "$pageview", breakdownValue: null, data, total: kept.length })) } as TrendResult };
      }
      const by = new Map<string, number>();
      for (const p of kept) {
        const v = (p as Record<string, string>)[body.breakdown] ?? "";
        by.set(v, (by.get(v) ?? 0) + 1);
      }
      return { body: { interval: "month", series: [...by].map(([v, n]) => line(v, n)) } as TrendResult };
    },
    "POST /api/v1/query/sessions": (call) => {
      const fs = (call.body as { filters?: Filter[] }).filters ?? [];
      const n = fs.length ? 2 : 4;
      const s: SessionsResult = {
        interval: "month",
        totals: { visits: n, visitors: n - 1, pageviews: n + 1, bounceRate: 50, visitDuration: 10, pagesPerVisit: 1.5 },
        series: [],
        entryPages: [{ path: "/", visits: n, bounceRate: 50 }],
        exitPages: [{ path: "/done", visits: n }],
      };
      return { body: s };
    },
  });
}

describe("the Overview filtered by a click", () => {
  it("filters every query by a country, shows the chip, keeps it in the URL and removes it", async () => {
    const calls = fakeServer();
    const root = await mount(<Overview product={product} range={range} env="live" />);
    calls.length = 0;
    const rows = (label: string) => [...root.querySelectorAll(`table[aria-label='${label}'] tbody tr`)].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows("Countries").map((r) => r[0])).toEqual(["🇩🇪 Germany", "🇳🇱 Netherlands", "Unknown"]);

    // The country's name opens its regions; the button beside it filters.
    await click(root.querySelector("[aria-label='Countries'] button[aria-label='Filter by Germany']"));
    expect(location.search).toBe("?f=is,country,DE");
    expect(byText(root, ".chip span", "Country is Germany")).toBeTruthy();
    const trends = calls.filter((c) => c.path === "/api/v1/query/trend").map((c) => (c.body as { filters?: unknown[] }).filters);
    const sessions = calls.filter((c) => c.path === "/api/v1/query/sessions").map((c) => (c.body as { filters?: unknown[] }).filters);
    const de = { property: "country", operator: "eq", value: "DE" };
    // Both periods' chart and sessions, and every card: none unfiltered.
    expect(trends.length).toBeGreaterThanOrEqual(5);
    expect(sessions).toHaveLength(2);
    for (const fs of [...trends, ...sessions]) expect(fs).toContainEqual(de);
    expect(calls.filter((c) => c.path === "/api/v1/query/retention")).toHaveLength(0);
    expect(rows("Countries")).toEqual([["🇩🇪 Germany", "2"]]);
    expect(rows("Top pages")).toEqual([["(none)", "2"]]);
    // Filtered, the visitors are the sessions query's.
    expect(root.querySelector("[data-testid=stat-visitors]")?.textContent).toBe("1");
    expect(root.querySelector("[data-testid=stat-pageviews]")?.textContent).toBe("2");

    // A browser adds a second filter; the browsers card shows the one kept.
    await click(byText(root, "table[aria-label='Browsers'] button", "Chrome"));
    expect(location.search).toBe("?f=is,country,DE&f=is,browser,Chrome");
    expect(rows("Browsers")).toEqual([["Chrome", "1"]]);
    expect(root.querySelector("[data-testid=stat-pageviews]")?.textContent).toBe("1");

    // × removes one, Clear all the rest.
    await click(root.querySelector("button[aria-label='Remove filter Country is Germany']"));
    expect(location.search).toBe("?f=is,browser,Chrome");
    expect(root.querySelector("button[aria-label='Remove filter Country is Germany']")).toBeNull();
    await click(byText(root, "table[aria-label='Countries'] button", "Unknown"));
    expect(location.search).toBe("?f=is,browser,Chrome&f=is,country,");
    expect(byText(root, ".chip span", "Country is Unknown")).toBeTruthy();
    await click(byText(root, ".filter-chips button", "Clear all"));
    expect(location.search).toBe("");
    expect(root.querySelector("[data-testid=filter-chips]")).toBeNull();
    expect(root.querySelector("[data-testid=stat-visitors]")?.textContent).toBe("4");
  });

  it("filters every query by a cohort picked from its menu and a person property typed beside it, and a shared link by neither", async () => {
    const calls = fakeServer({ "GET /api/v1/products/1/cohorts": { body: { items: [{ id: 7, name: "Beta testers" }], page: 1, pageSize: 100, total: 1 } } });
    const root = await mount(<Overview product={product} range={range} env="live" />);
    calls.length = 0;
    await choose(root.querySelector("label.cohort-picker select"), "not_in:7");
    expect(location.search).toBe("?f=is_not,cohort,7");
    expect(byText(root, ".chip span", "Not in cohort Beta testers")).toBeTruthy();
    const cohort = { property: "cohort", operator: "not_in", value: 7 };
    const trends = calls.filter((c) => c.path === "/api/v1/query/trend").map((c) => (c.body as { filters?: unknown[] }).filters);
    const sessions = calls.filter((c) => c.path === "/api/v1/query/sessions").map((c) => (c.body as { filters?: unknown[] }).filters);
    expect(trends.length).toBeGreaterThanOrEqual(5);
    expect(sessions).toHaveLength(2);
    for (const fs of [...trends, ...sessions]) expect(fs).toContainEqual(cohort);
    // Picking "in" replaces it.
    await choose(root.querySelector("label.cohort-picker select"), "in:7");
    expect(location.search).toBe("?f=is,cohort,7");
    expect(byText(root, ".chip span", "In cohort Beta testers")).toBeTruthy();

    // A person property typed in the head adds its own chip; a bad key is refused.
    await click(root.querySelector(".person-filter summary"));
    const form = root.querySelector("form[aria-label='Filter by a person property']") as HTMLFormElement;
    const type = async (name: string, text: string) =>
      act(() => {
        const input = form.querySelector(`input[name=${name}]`) as HTMLInputElement;
        input.value = text;
        input.dispatchEvent(new Event("input", { bubbles: true }));
      });
    await type("personKey", "$email");
    await act(() => {
      form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
    expect(form.querySelector("[role=alert]")?.textContent).toContain("does not start with $");
    await type("personKey", "plan");
    await type("personValue", "pro");
    calls.length = 0;
    await act(() => {
      form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
    await settle();
    expect(location.search).toBe("?f=is,cohort,7&f=is,person.plan,pro");
    expect(byText(root, ".chip span", "Person plan is pro")).toBeTruthy();
    const person = { property: "person.plan", operator: "eq", value: "pro" };
    const sent = calls.filter((c) => c.path === "/api/v1/query/trend" || c.path === "/api/v1/query/sessions").map((c) => (c.body as { filters?: unknown[] }).filters);
    expect(sent.length).toBeGreaterThanOrEqual(7);
    for (const fs of sent) expect(fs).toContainEqual(person);

    // A shared link's view neither lists the cohorts nor sends the filter.
    calls.length = 0;
    const shared = await mount(<Overview product={product} range={range} env="live" readOnly />);
    expect(shared.querySelector("label.cohort-picker")).toBeNull();
    expect(shared.querySelector("[data-testid=filter-chips]")).toBeNull();
    expect(calls.some((c) => c.path.endsWith("/cohorts"))).toBe(false);
    expect(shared.querySelector(".person-filter")).toBeNull();
    for (const c of calls.filter((c) => c.path.startsWith("/api/v1/query/"))) {
      expect(JSON.stringify(c.body ?? {})).not.toContain("cohort");
      expect(JSON.stringify(c.body ?? {})).not.toContain("person.");
    }
  });

  it("filters by a drill-down's row: a country's region, whose name still opens its cities", async () => {
    const calls = fakeServer();
    const root = await mount(<Overview product={product} range={range} env="live" />);
    await click(byText(root, "table[aria-label='Countries'] button", "Germany"));
    const regions = () => [...root.querySelectorAll("table[aria-label='Region of Germany'] tbody tr")].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(regions()).toEqual([["Bavaria", "1"], ["Berlin", "1"]]);
    expect(byText(root, "table[aria-label='Region of Germany'] button[aria-expanded]", "Bavaria")).toBeTruthy();
    calls.length = 0;
    await click(root.querySelector("table[aria-label='Region of Germany'] button[aria-label='Filter by Bavaria']"));
    expect(location.search).toBe("?f=is,region,Bavaria");
    expect(byText(root, ".chip span", "Region is Bavaria")).toBeTruthy();
    const sessions = calls.filter((c) => c.path === "/api/v1/query/sessions").map((c) => (c.body as { filters?: unknown[] }).filters);
    expect(sessions).toEqual([[{ property: "region", operator: "eq", value: "Bavaria" }], [{ property: "region", operator: "eq", value: "Bavaria" }]]);
    expect(root.querySelector("[data-testid=stat-pageviews]")?.textContent).toBe("1");
  });

  it("filters the visits by an entry page, and says why the page-view cards do not follow", async () => {
    history.replaceState(null, "", "/?f=is,entry_page,/");
    const calls = fakeServer();
    const root = await mount(<Overview product={product} range={range} env="live" />);
    expect(byText(root, ".chip span", "Entry page is /")).toBeTruthy();
    const sessions = calls.filter((c) => c.path === "/api/v1/query/sessions").map((c) => (c.body as { filters?: unknown[] }).filters);
    expect(sessions).toEqual([
      [{ property: "entry_page", operator: "eq", value: "/" }],
      [{ property: "entry_page", operator: "eq", value: "/" }],
    ]);
    // No trend can take a visit's entry page: none is asked.
    expect(calls.filter((c) => c.path === "/api/v1/query/trend")).toHaveLength(0);
    // The chart, top pages, sources, countries and devices say so.
    expect(root.querySelectorAll("[data-testid=visit-only]")).toHaveLength(5);
    expect(root.querySelector("[data-testid=visit-only]")?.textContent).toContain("Not filtered by entry page");
    // The figures are the visits': visitors and page views included.
    expect(["visitors", "visits", "pageviews"].map((id) => root.querySelector(`[data-testid=stat-${id}]`)?.textContent)).toEqual(["1", "2", "3"]);

    // An exit page adds to it; back takes it away again.
    await click(byText(root, "table[aria-label='Exit pages'] button", "/done"));
    expect(location.search).toBe("?f=is,entry_page,/&f=is,exit_page,/done");
    expect(byText(root, ".chip span", "Exit page is /done")).toBeTruthy();
    await act(async () => {
      const popped = new Promise((r) => window.addEventListener("popstate", r, { once: true }));
      history.back();
      await popped;
    });
    await settle();
    expect(location.search).toBe("?f=is,entry_page,/");
    expect(byText(root, ".chip span", "Exit page is /done")).toBeUndefined();
  });
});
