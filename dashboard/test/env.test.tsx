// The Live/Test switch: test keys' events are shown only when asked for
// (?env=test), every query of the chart pages then asks for env=test, and
// a banner says so on every page that shows them.
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../src/app";
import { Sidebar } from "../src/components/Sidebar";
import { navItems } from "../src/components/nav";
import { envFromSearch, searchWithEnv } from "../src/dataEnv";
import { Funnels } from "../src/pages/Funnels";
import { byText, click, fakeFetch, mount, type Call } from "./helpers";

const user = { id: 1, email: "owner@example.com", createdAt: "2026-11-23T09:00:00Z" };
const product = { id: 1, workspaceId: 1, name: "Default", createdAt: "2026-11-23T09:00:00Z" };
const saved = { id: 7, productId: 1, kind: "funnel", name: "Signup", definition: { steps: ["a", "b"], windowHours: 12 }, createdAt: "2026-11-02T00:00:00Z", updatedAt: "2026-11-02T00:00:00Z" };
const funnel = { body: { steps: [{ name: "a", count: 4, conversionPct: null }, { name: "b", count: 2, conversionPct: 50 }] } };
const trend = { body: { series: [{ label: "$pageview", event: "$pageview", breakdownValue: null, data: [{ date: "2026-11-01", value: 3 }] }] } };

/** The dashboard's routes, answering every chart page's calls. */
const routes = {
  "GET /api/v1/dashboard/config": { body: { setupRequired: false, features: { errorTracking: false } } },
  "GET /api/v1/session": { body: { user, expiresAt: "2026-12-07T09:00:00Z" } },
  "GET /api/v1/products": { body: { items: [product] } },
  "GET /api/v1/query/events": { body: { events: [{ name: "a", count: 4 }] } },
  "GET /api/v1/queries": { body: { items: [saved] } },
  "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
  "POST /api/v1/query/trend": trend,
  "POST /api/v1/query/funnel": funnel,
  "POST /api/v1/query/retention": { body: { period: "week", cohorts: [{ date: "2026-10-26", size: 2, values: [2, 1] }] } },
  "GET /api/v1/query/bots": { body: { bots: [], topPages: [] } },
  "POST /api/v1/queries/7/run": funnel,
  "GET /api/v1/flags": { body: { items: [] } },
};

/** The calls that read events: the query endpoints and saved-query runs. */
const queries = (calls: Call[]) => calls.filter((c) => c.path.startsWith("/api/v1/query/") || /^\/api\/v1\/queries\/\d+\/run$/.test(c.path));
const banner = (root: HTMLElement) => root.querySelector("[data-testid=test-data-banner]");
const pressed = (root: HTMLElement) => root.querySelector("[role=group][aria-labelledby=env-switch-label] [aria-pressed=true]")?.textContent;

describe("live or test data", () => {
  afterEach(() => {
    history.replaceState(null, "", "/");
    localStorage.clear();
  });

  it("reads ?env=test from the URL, and writes live by leaving it out", () => {
    expect(envFromSearch(new URLSearchParams("env=test"))).toBe("test");
    expect(envFromSearch(new URLSearchParams("env=TEST"))).toBe("live");
    expect(envFromSearch(new URLSearchParams(""))).toBe("live");
    expect(searchWithEnv(new URLSearchParams("product=1&range=7d"), "test").toString()).toBe("product=1&range=7d&env=test");
    expect(searchWithEnv(new URLSearchParams("product=1&env=test"), "live").toString()).toBe("product=1");
  });

  it("keeps test data in every sidebar link", async () => {
    const root = await mount(
      <Sidebar items={navItems({ errorTracking: false })} path="/trends" search={new URLSearchParams("product=4&range=7d&env=test")} email="a@b.co" onLogout={() => {}} />,
    );
    expect(byText(root, "a", "Funnels")?.getAttribute("href")).toBe("/funnels?product=4&range=7d&env=test");
    expect(byText(root, "a", "Settings")?.getAttribute("href")).toBe("/settings/products?product=4&range=7d&env=test");
  });

  it.each([
    ["/", "Overview"],
    ["/trends", "Trends"],
    ["/funnels", "Funnels"],
    ["/retention", "Retention"],
    ["/acquisition", "Acquisition"],
  ])("on %s every query asks for test data, under a banner that says so", async (path, title) => {
    const calls = fakeFetch(routes);
    history.replaceState(null, "", `${path}?product=1&env=test`);
    const root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe(title);
    expect(banner(root)?.getAttribute("role")).toBe("status");
    expect(banner(root)?.textContent).toContain("Showing test data");
    expect(pressed(root)).toBe("Test");
    const asked = queries(calls);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.filter((c) => c.query.get("env") !== "test").map((c) => c.path)).toEqual([]);
  });

  it("switches between live and test data from the top bar, in the URL", async () => {
    const calls = fakeFetch(routes);
    history.replaceState(null, "", "/trends?product=1&range=7d");
    const root = await mount(<App />);
    expect(pressed(root)).toBe("Live");
    expect(banner(root)).toBeNull();
    expect(queries(calls).every((c) => !c.query.has("env"))).toBe(true);

    const before = calls.length;
    await click(byText(root, "button", "Test"));
    expect(location.search).toBe("?product=1&range=7d&env=test");
    expect(banner(root)).toBeTruthy();
    const rerun = queries(calls.slice(before));
    expect(rerun.map((c) => c.path)).toContain("/api/v1/query/trend");
    expect(rerun.every((c) => c.query.get("env") === "test")).toBe(true);

    await click(byText(banner(root)!, "button", "Show live data"));
    expect(location.search).toBe("?product=1&range=7d");
    expect(banner(root)).toBeNull();
    expect(pressed(root)).toBe("Live");
  });

  it("shows neither switch nor banner on pages without event data", async () => {
    fakeFetch(routes);
    history.replaceState(null, "", "/flags?product=1&env=test");
    const root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe("Flags");
    expect(banner(root)).toBeNull();
    expect(pressed(root)).toBeUndefined();
    // The choice is kept for the way back to a chart page.
    expect(byText(root, ".nav-item", "Trends")?.getAttribute("href")).toBe("/trends?product=1&env=test");
  });

  it("runs a saved funnel on test data, and says how to send test events when there are none", async () => {
    const calls = fakeFetch({ ...routes, "GET /api/v1/query/events": { body: { events: [] } }, "POST /api/v1/query/funnel": { body: { steps: [{ name: "a", count: 0, conversionPct: null }] } } });
    const root = await mount(<Funnels product={product} range={{ key: "custom", from: "2026-11-01", to: "2026-11-03" }} env="test" />);
    expect(root.querySelector("[data-testid=no-events] h2")?.textContent).toBe("No test events yet");
    expect(root.querySelector("[data-testid=install-snippet]")?.textContent).toContain('"st_test_YOUR_KEY"');
    await click(root.querySelector("[aria-label='Run Signup']"));
    expect(calls.find((c) => c.path === "/api/v1/queries/7/run")?.query.get("env")).toBe("test");
  });
});
