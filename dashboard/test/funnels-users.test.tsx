// Issue 40, items 5 and the Funnels page's views: a step's "Converted" and
// "Dropped off" links list those users (POST /query/funnel/users, with the
// funnel on screen and the breakdown row clicked), paged with "More users";
// the view switch shows Time to convert and Over time, kept in the URL
// (with a breakdown: test/funnel-views-breakdown.test.tsx).
import { describe, expect, it } from "vitest";
import { act } from "preact/test-utils";
import { Funnels } from "../src/pages/Funnels";
import type { Product } from "../src/types";
import { byText, click, fakeFetch, mount, type Call } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const week = { key: "custom" as const, from: "2026-11-16", to: "2026-11-22" };
const events = { body: { events: [{ name: "$pageview", count: 10 }], productHasEvents: true } };
const steps = {
  steps: [
    { name: "$pageview", count: 10, conversionPct: null },
    { name: "signup", count: 4, conversionPct: 40 },
    { name: "purchase", count: 1, conversionPct: 25 },
  ],
};
const user = (id: string, at: string) => ({
  distinctId: id,
  reachedAt: at,
  nextReachedAt: null,
  link: `/users/${id}?product=3`,
  replaysLink: `/replays?product=3&distinct_id=${id}`,
});

function usersCalls(calls: Call[]) {
  return calls.filter((c) => c.path === "/api/v1/query/funnel/users");
}

describe("Funnels users panel", () => {
  it("lists a step's dropped-off users with the funnel on screen, pages with More, and closes", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": { body: steps },
      "POST /api/v1/query/funnel/users": (c) =>
        (c.body as { cursor?: string }).cursor === "p2"
          ? { body: { users: [user("carol", "2026-11-18T09:00:00Z")], nextCursor: null } }
          : { body: { users: [user("alice", "2026-11-20T10:00:00Z"), user("bob", "2026-11-19T10:00:00Z")], nextCursor: "p2" } },
    });
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase&window=48&where=1:plan:eq:pro&exclude=0:1:logout");
    const root = await mount(<Funnels product={product} range={week} env="test" />);
    // The last step has no "Dropped off".
    expect(root.querySelector("[aria-label^='Dropped off after step 3']")).toBeNull();
    expect(root.querySelector("[aria-label='Dropped off after step 2: 3']")?.textContent).toBe("Dropped off 3");
    expect(root.querySelector("[aria-label='Converted at step 3: 1']")?.textContent).toBe("Converted 1");
    await click(root.querySelector("[aria-label='Dropped off after step 2: 3']"));

    const sent = usersCalls(calls);
    expect(sent).toHaveLength(1);
    expect(sent[0].query.get("env")).toBe("test");
    expect(sent[0].body).toEqual({
      steps: ["$pageview", { event: "signup", where: [{ property: "plan", operator: "eq", value: "pro" }] }, "purchase"],
      windowHours: 48,
      exclusions: [{ event: "logout", fromStep: 0, toStep: 1 }],
      dateFrom: "2026-11-16",
      dateTo: "2026-11-22",
      step: 1,
      status: "dropped",
    });
    const panel = root.querySelector("[data-testid=funnel-users]")!;
    expect(panel.querySelector("h2")?.textContent).toContain("Dropped off after step 2: signup");
    expect(panel.querySelector("h2")?.textContent).toContain("3 users, newest first");
    expect([...panel.querySelectorAll("[data-testid=funnel-user] a:first-child")].map((a) => a.textContent)).toEqual(["alice", "bob"]);
    expect(panel.querySelector("[data-testid=funnel-user] a")?.getAttribute("href")).toBe("/users/alice?product=3");
    expect(byText(panel, "a", "Replays")?.getAttribute("href")).toBe("/replays?product=3&distinct_id=alice");

    await click(byText(panel, "button", "More users"));
    expect((usersCalls(calls)[1].body as { cursor: string }).cursor).toBe("p2");
    expect([...panel.querySelectorAll("[data-testid=funnel-user] a:first-child")].map((a) => a.textContent)).toEqual(["alice", "bob", "carol"]);
    expect(byText(panel, "button", "More users")).toBeUndefined();

    // A user's link opens their page.
    await click(byText(panel, "a", "carol"));
    expect(location.pathname + location.search).toBe("/users/carol?product=3");
  });

  it("sends the breakdown row clicked, its value or other, and closes", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": {
        body: {
          steps: steps.steps.slice(0, 2),
          breakdown: [
            { breakdownValue: "Chrome", steps: [{ name: "$pageview", count: 6, conversionPct: null }, { name: "signup", count: 3, conversionPct: 50 }] },
            { breakdownValue: null, other: true, steps: [{ name: "$pageview", count: 4, conversionPct: null }, { name: "signup", count: 1, conversionPct: 25 }] },
          ],
        },
      },
      "POST /api/v1/query/funnel/users": { body: { users: [user("dan", "2026-11-20T10:00:00Z")], nextCursor: null } },
    });
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&breakdown=browser");
    const root = await mount(<Funnels product={product} range={week} env="live" />);
    await click(root.querySelector("[aria-label='Dropped off after step 1, Other values: 3']"));
    expect(usersCalls(calls).pop()?.body).toMatchObject({ breakdown: "browser", step: 0, status: "dropped", other: true });
    expect((usersCalls(calls).pop()?.body as object)).not.toHaveProperty("breakdownValue");
    expect(root.querySelector("#funnel-users-title")?.textContent).toContain("Dropped off after step 1: $pageview · Other values");

    await click(root.querySelector("[aria-label='Converted at step 2, Chrome: 3']"));
    expect(usersCalls(calls).pop()?.body).toMatchObject({ breakdown: "browser", step: 1, status: "converted", breakdownValue: "Chrome" });
    expect((usersCalls(calls).pop()?.body as object)).not.toHaveProperty("other");
    expect(root.querySelector("#funnel-users-title")?.textContent).toContain("Converted at step 2: signup · Chrome");

    await click(byText(root.querySelector("[data-testid=funnel-users]")!, "button", "Close"));
    expect(root.querySelector("[data-testid=funnel-users]")).toBeNull();
  });

  it("offers no users of a funnel of groups", async () => {
    fakeFetch({ "GET /api/v1/query/events": events, "GET /api/v1/queries": { body: { items: [] } }, "GET /api/v1/products/3/group-types": { body: { items: [] } }, "POST /api/v1/query/funnel": { body: steps } });
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase&count=company");
    const root = await mount(<Funnels product={product} range={week} env="live" />);
    expect(root.querySelectorAll("[data-testid=funnel-step]")).toHaveLength(3);
    expect(root.querySelector("[aria-label^='Converted at step']")).toBeNull();
  });
});

describe("Funnels views", () => {
  const timeToConvert = [
    {
      step: 1,
      converted: 4,
      medianSeconds: 90,
      histogram: [
        { fromSeconds: 0, toSeconds: 10, count: 0 },
        { fromSeconds: 60, toSeconds: 300, count: 3 },
        { fromSeconds: 10800, toSeconds: 86400, count: 0 },
        { fromSeconds: 604800, toSeconds: null, count: 1 },
      ],
    },
    { step: 2, converted: 1, medianSeconds: 7200, histogram: [{ fromSeconds: 3600, toSeconds: 10800, count: 1 }] },
  ];
  const overTime = (interval: string) =>
    interval === "week"
      ? [{ date: "2026-11-16", entered: 10, converted: 1, conversionPct: 10 }]
      : [
          { date: "2026-11-16", entered: 4, converted: 1, conversionPct: 25 },
          { date: "2026-11-17", entered: 6, converted: 0, conversionPct: 0 },
        ];

  it("switches to Time to convert and Over time, keeps the view and interval in the URL", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": (c) => {
        const b = c.body as { view?: string; interval?: string };
        if (b.view === "time_to_convert") return { body: { ...steps, timeToConvert } };
        if (b.view === "trends") return { body: { ...steps, overTime: overTime(b.interval ?? "day") } };
        return { body: steps };
      },
    });
    history.replaceState(null, "", "/funnels?product=3&step=%24pageview&step=signup&step=purchase");
    const root = await mount(<Funnels product={product} range={week} env="live" />);
    const funnelCalls = () => calls.filter((c) => c.path === "/api/v1/query/funnel");
    expect(funnelCalls().pop()?.body).not.toHaveProperty("view");

    await click(byText(root, "button", "Time to convert"));
    expect(location.search).toBe("?product=3&step=%24pageview&step=signup&step=purchase&view=time_to_convert");
    expect(funnelCalls().pop()?.body).toMatchObject({ view: "time_to_convert" });
    expect([...root.querySelectorAll("[data-testid=funnel-time-median]")].map((m) => m.textContent)).toEqual(["1.5 min", "2 h"]);
    const buckets = [...root.querySelectorAll("[data-testid=funnel-time-step]")[0].querySelectorAll("[data-testid=funnel-time-bucket]")];
    expect(buckets.map((r) => [r.querySelector("th")?.textContent, r.querySelector("td.num")?.textContent])).toEqual([
      ["under 10 s", "0"],
      ["1 min – 5 min", "3"],
      ["3 h – 1 day", "0"],
      ["7 days and more", "1"],
    ]);
    expect(root.querySelector("[data-testid=funnel-result]")).toBeNull();

    await click(byText(root, "button", "Over time"));
    expect(location.search).toBe("?product=3&step=%24pageview&step=signup&step=purchase&view=trends");
    expect(funnelCalls().pop()?.body).toMatchObject({ view: "trends", interval: "day" });
    const rows = () => [...root.querySelectorAll("[data-testid=funnel-over-time-row]")].map((r) => [...r.children].map((c) => c.textContent));
    expect(rows()).toEqual([
      ["2026-11-16", "4", "1", "25%"],
      ["2026-11-17", "6", "0", "0%"],
    ]);
    const iv = root.querySelector<HTMLSelectElement>("select[name=interval]")!;
    await act(async () => {
      iv.value = "week";
      iv.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await act(async () => {
      await new Promise((r) => setTimeout(r, 0));
    });
    expect(location.search).toBe("?product=3&step=%24pageview&step=signup&step=purchase&view=trends&interval=week");
    expect(funnelCalls().pop()?.body).toMatchObject({ view: "trends", interval: "week" });
    expect(rows()).toEqual([["2026-11-16", "10", "1", "10%"]]);

    await click(byText(root, "button", "Steps"));
    expect(funnelCalls().pop()?.body).not.toHaveProperty("view");
    expect(root.querySelectorAll("[data-testid=funnel-step]")).toHaveLength(3);
  });
});
