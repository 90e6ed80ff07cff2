// Issue 40: the Funnels page builds steps with filters (the trend's filter
// editor), exclusions and a breakdown, sends them as the API takes them,
// keeps them in the URL, and shows each breakdown value's funnel.
import { describe, expect, it } from "vitest";
import { act } from "preact/test-utils";
import { funnelFromSearch, funnelRequest, funnelSearch, Funnels } from "../src/pages/Funnels";
import type { Product } from "../src/types";
import { byText, click, fakeFetch, mount, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const yesterday = { key: "yesterday" as const, from: "2026-11-22", to: "2026-11-22" };
const events = { body: { events: [{ name: "$pageview", count: 10 }], productHasEvents: true } };

describe("funnel drafts", () => {
  it("sends a step with filters as an object and a plain step as its name", () => {
    const d = {
      steps: ["$pageview", "signup"],
      windowHours: 24,
      aggregateBy: "",
      where: [[{ property: "path", operator: "eq" as const, value: "/pricing" }], []],
      breakdown: "browser",
      exclusions: [{ event: "logout", fromStep: 0, toStep: 1 }],
    };
    expect(funnelRequest(d)).toEqual({
      steps: [{ event: "$pageview", where: [{ property: "path", operator: "eq", value: "/pricing" }] }, "signup"],
      windowHours: 24,
      aggregateBy: undefined,
      breakdown: "browser",
      exclusions: [{ event: "logout", fromStep: 0, toStep: 1 }],
    });
    // The URL round trip keeps every part.
    const patch = funnelSearch(d);
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(patch)) for (const x of Array.isArray(v) ? v : v === null || v === undefined ? [] : [v]) search.append(k, String(x));
    expect(search.toString()).toBe("step=%24pageview&step=signup&where=0%3Apath%3Aeq%3A%2Fpricing&breakdown=browser&exclude=0%3A1%3Alogout");
    expect(funnelFromSearch(search)).toEqual(d);
    // A plain funnel's URL and request are as before.
    expect(funnelFromSearch(new URLSearchParams("step=a&step=b"))).toEqual({ steps: ["a", "b"], windowHours: 24, aggregateBy: "" });
    expect(funnelRequest({ steps: ["a", "b"], windowHours: 24, aggregateBy: "" }).steps).toEqual(["a", "b"]);
  });
});

describe("Funnels page", () => {
  it("runs /pricing → signup with a step filter, an exclusion and a breakdown, and shows each value", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": {
        body: {
          steps: [
            { name: "$pageview", where: [{ property: "path", operator: "eq", value: "/pricing" }], count: 10, conversionPct: null },
            { name: "signup", count: 4, conversionPct: 40 },
          ],
          breakdown: [
            { breakdownValue: "Chrome", steps: [{ name: "$pageview", count: 6, conversionPct: null }, { name: "signup", count: 3, conversionPct: 50 }] },
            { breakdownValue: null, other: true, steps: [{ name: "$pageview", count: 4, conversionPct: null }, { name: "signup", count: 1, conversionPct: 25 }] },
          ],
        },
      },
    });
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup");
    const root = await mount(<Funnels product={product} range={yesterday} env="live" />);
    await click(byText(root, "button", "Add step 1 filter"));
    await type(root.querySelector("[aria-label='Step 1 filter 1 value']"), "/pricing");
    await click(byText(root, "button", "Add exclusion"));
    await type(root.querySelector("[aria-label='Exclusion 1 event']"), "logout");
    await type(root.querySelector("input[name=breakdown]"), "browser");
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    expect(location.search).toBe("?product=3&step=%24pageview&step=signup&where=0:path:eq:/pricing&breakdown=browser&exclude=0:1:logout");
    expect(calls.filter((c) => c.path === "/api/v1/query/funnel").pop()?.body).toMatchObject({
      steps: [{ event: "$pageview", where: [{ property: "path", operator: "eq", value: "/pricing" }] }, "signup"],
      breakdown: "browser",
      exclusions: [{ event: "logout", fromStep: 0, toStep: 1 }],
    });
    expect(root.querySelector("[data-testid=funnel-step] th")?.textContent).toContain("path = /pricing");
    const rows = [...root.querySelectorAll("[data-testid=funnel-breakdown-row]")].map((r) => [...r.children].map((c) => c.querySelector("[data-testid=breakdown-count]")?.textContent ?? c.textContent));
    expect(rows).toEqual([
      ["Chrome", "6", "3", "50%"],
      ["Other values", "4", "1", "25%"],
    ]);
  });

  it("refuses a filter that needs a number without one", async () => {
    fakeFetch({ "GET /api/v1/query/events": events, "GET /api/v1/queries": { body: { items: [] } }, "POST /api/v1/query/funnel": { body: { steps: [] } } });
    history.replaceState(null, "", "/funnels?product=3&step=a&step=b");
    const root = await mount(<Funnels product={product} range={yesterday} env="live" />);
    await click(byText(root, "button", "Add step 2 filter"));
    const op = root.querySelector<HTMLSelectElement>("[aria-label='Step 2 filter 1 operator']")!;
    await act(async () => {
      op.value = "gt";
      op.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("“path” greater than needs a number.");
    expect(location.search).toBe("?product=3&step=a&step=b");
  });
});
