// Issue 35 items 5 and 6: dates that mean what they say (a saved query runs
// over the range on screen, an empty range is not a first install, counts
// agree with their nouns, annotation times are UTC) and every page's state
// in its URL (a link reproduces the view, back and forward restore it).
import { describe, expect, it } from "vitest";
import { act } from "preact/test-utils";
import { fromUTCInput, toUTCInput } from "../src/components/AnnotationForm";
import { NoData } from "../src/components/States";
import { SurveyQuestion } from "../src/components/SurveyResults";
import { plural } from "../src/format";
import { during } from "../src/range";
import { Annotations } from "../src/pages/Annotations";
import { Errors } from "../src/pages/Errors";
import { Funnels } from "../src/pages/Funnels";
import { Retention } from "../src/pages/Retention";
import { trendFromSearch, trendSearch, Trends } from "../src/pages/Trends";
import { setQuery } from "../src/router";
import type { Product } from "../src/types";
import { click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const yesterday = { key: "yesterday" as const, from: "2026-11-22", to: "2026-11-22" };
const events = { body: { events: [{ name: "page_viewed", count: 10 }], productHasEvents: true } };
const funnelBody = (steps: string[]) => ({ body: { steps: steps.map((name, i) => ({ name, count: 4 - i, conversionPct: i ? 75 : null })) } });
const stepInputs = (root: HTMLElement) => [...root.querySelectorAll<HTMLInputElement>(".steps input")].map((i) => i.value);

/** back goes one entry back in the history, as the browser's button does, and lets the page react. */
async function back(): Promise<void> {
  await act(async () => {
    const popped = new Promise((r) => window.addEventListener("popstate", r, { once: true }));
    history.back();
    await popped;
  });
  await settle();
}

describe("wording", () => {
  it("writes a count with its noun in the singular for one", () => {
    expect(plural(1, "detractor")).toBe("1 detractor");
    expect(plural(0, "detractor")).toBe("0 detractors");
    expect(plural(2, "reply", "replies")).toBe("2 replies");
    expect(plural(1, "reply", "replies")).toBe("1 reply");
  });

  it("says 1 detractor, 1 promoter and 1 answer on a survey", async () => {
    const root = await mount(
      <SurveyQuestion
        result={{ id: "nps", prompt: "How likely?", type: "nps", answers: 1, counts: [], recent: [], nps: { score: -100, promoters: 1, passives: 0, detractors: 1 } } as never}
      />,
    );
    const facts = root.querySelector(".survey-facts")?.textContent ?? "";
    expect(facts).toContain("1 answer");
    expect(facts).not.toContain("1 answers");
    expect(facts).toContain("1 promoter (9–10)");
    expect(facts).toContain("0 passives (7–8)");
    expect(facts).toContain("1 detractor (0–6)");
  });

  it("ends a sentence with today and yesterday, without in", () => {
    expect(during({ key: "today", from: "2026-11-23", to: "2026-11-23" })).toBe("today");
    expect(during(yesterday)).toBe("yesterday");
  });
});

describe("an empty range", () => {
  it("says the range is empty on a product that has events, and offers a wider range", async () => {
    history.replaceState(null, "", "/trends?product=3&range=yesterday");
    const root = await mount(<NoData product={product} range={yesterday} names={{ events: [], productHasEvents: true }} />);
    expect(root.querySelector("[data-testid=no-events]")).toBeNull();
    expect(root.querySelector("[data-testid=install-snippet]")).toBeNull();
    const box = root.querySelector("[data-testid=empty-range]")!;
    expect(box.querySelector("h2")?.textContent).toBe("No events on 2026-11-22");
    expect(box.textContent).toContain("Shop has events on other days, but none yesterday.");
    expect(box.querySelector("a")?.getAttribute("href")).toBe("/trends?product=3&range=365d");
  });

  it("keeps the first-install box for a product that never received an event", async () => {
    const root = await mount(<NoData product={product} range={yesterday} names={{ events: [], productHasEvents: false }} />);
    expect(root.querySelector("[data-testid=empty-range]")).toBeNull();
    expect(root.querySelector("[data-testid=no-events] h2")?.textContent).toBe("No events yet");
  });

  it("is what the funnel page shows when the range has no event", async () => {
    fakeFetch({
      "GET /api/v1/query/events": { body: { events: [], productHasEvents: true } },
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": { body: { steps: [{ name: "a", count: 0, conversionPct: null }, { name: "b", count: 0, conversionPct: 0 }] } },
    });
    const root = await mount(<Funnels product={product} range={yesterday} env="live" />);
    expect(root.querySelector("[data-testid=empty-range]")).toBeTruthy();
    expect(root.querySelector("[data-testid=no-events]")).toBeNull();
  });
});

describe("a saved query", () => {
  const saved = { id: 7, productId: 3, kind: "funnel", name: "Signup", definition: { steps: ["a", "b"], windowHours: 12 }, createdAt: "2026-11-02T00:00:00Z", updatedAt: "2026-11-02T00:00:00Z" };

  it("runs a saved funnel over the range on screen and says which", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [saved] } },
      "POST /api/v1/query/funnel": funnelBody(["page_viewed", "button_clicked", "form_submitted"]),
      "POST /api/v1/queries/7/run": funnelBody(["a", "b"]),
    });
    const root = await mount(<Funnels product={product} range={yesterday} env="live" />);
    await click(root.querySelector("[aria-label='Run Signup']"));
    const run = calls.find((c) => c.path === "/api/v1/queries/7/run")!;
    expect(run.query.get("dateFrom")).toBe("2026-11-22");
    expect(run.query.get("dateTo")).toBe("2026-11-22");
    expect(root.querySelector("[data-testid=funnel-range]")?.textContent).toBe("Saved funnel · Yesterday");
    expect(location.search).toBe("?saved=7");
  });

  it("runs a saved trend over the range on screen and says which", async () => {
    const trend = { ...saved, id: 8, kind: "trend", name: "Views", definition: { series: [{ event: "page_viewed" }], interval: "day" } };
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [trend] } },
      "GET /api/v1/annotations": { body: { items: [], total: 0, page: 1, pageSize: 100 } },
      "POST /api/v1/queries/8/run": { body: { interval: "day", series: [{ label: "page_viewed", data: [{ date: "2026-11-22T00:00:00Z", value: 3 }] }] } },
    });
    history.replaceState(null, "", "/trends?saved=8");
    const root = await mount(<Trends product={product} range={yesterday} env="live" />);
    const run = calls.find((c) => c.path === "/api/v1/queries/8/run")!;
    expect([run.query.get("dateFrom"), run.query.get("dateTo")]).toEqual(["2026-11-22", "2026-11-22"]);
    expect(root.querySelector("[data-testid=trend-range]")?.textContent).toBe("Saved trend · Yesterday");
    expect(root.textContent).not.toContain("last 30 days");
  });
});

describe("state in the URL", () => {
  it("writes a funnel run into the URL, runs the funnel a URL names, and goes back to the previous one", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": (c) => funnelBody((c.body as { steps: string[] }).steps),
    });
    history.replaceState(null, "", "/funnels?product=3");
    const root = await mount(<Funnels product={product} range={yesterday} env="live" />);
    await type(root.querySelector("[aria-label='Step 1 event']"), "signed_up");
    await type(root.querySelector("input[name=windowHours]"), "48");
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    expect(location.search).toBe("?product=3&step=signed_up&step=button_clicked&step=form_submitted&window=48");

    // The same URL in a fresh page runs the same funnel.
    const link = location.pathname + location.search;
    const fresh = fakeFetch({ "GET /api/v1/query/events": events, "GET /api/v1/queries": { body: { items: [] } }, "POST /api/v1/query/funnel": (c) => funnelBody((c.body as { steps: string[] }).steps) });
    history.replaceState(null, "", link);
    const again = await mount(<Funnels product={product} range={yesterday} env="live" />);
    expect(stepInputs(again)).toEqual(["signed_up", "button_clicked", "form_submitted"]);
    expect(fresh.find((c) => c.path === "/api/v1/query/funnel")?.body).toMatchObject({ steps: ["signed_up", "button_clicked", "form_submitted"], windowHours: 48 });

    // Back: the placeholder funnel again, in the builder and the result.
    await back();
    expect(location.search).toBe("?product=3");
    expect(stepInputs(again)).toEqual(["page_viewed", "button_clicked", "form_submitted"]);
    expect(fresh.filter((c) => c.path === "/api/v1/query/funnel").pop()?.body).toMatchObject({ steps: ["page_viewed", "button_clicked", "form_submitted"], windowHours: 24 });
    expect(calls.length).toBeGreaterThan(0);
  });

  it("reads and writes a trend's series, filters, breakdown and interval", () => {
    const draft = trendFromSearch(new URLSearchParams("event=signup&event=paid&math=total&math=unique_users&filter=url:contains:https://x.test/a:b&filter=properties.plan:is_set&breakdown=browser&limit=5&interval=week&count=company"));
    expect(draft).toEqual({
      series: [{ event: "signup", math: "total" }, { event: "paid", math: "unique_users" }],
      filters: [{ property: "url", operator: "contains", value: "https://x.test/a:b" }, { property: "properties.plan", operator: "is_set", value: "" }],
      breakdown: "browser",
      breakdownLimit: "5",
      interval: "week",
      aggregateBy: "company",
    });
    const written = (patch: ReturnType<typeof trendSearch>) => {
      const s = new URLSearchParams();
      for (const [k, v] of Object.entries(patch)) for (const x of v == null ? [] : typeof v === "string" ? [v] : v) s.append(k, x);
      return s;
    };
    expect(trendFromSearch(written(trendSearch(draft)))).toEqual(draft);
    // The default trend writes its one series and nothing else.
    expect(String(written(trendSearch(trendFromSearch(new URLSearchParams()))))).toBe("event=%24pageview");
  });

  it("runs the trend a URL names", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": { body: { items: [], total: 0, page: 1, pageSize: 100 } },
      "POST /api/v1/query/trend": { body: { interval: "week", series: [{ label: "signup", data: [{ date: "2026-11-16T00:00:00Z", value: 3 }] }] } },
    });
    history.replaceState(null, "", "/trends?event=signup&breakdown=browser&interval=week&chart=bar");
    const root = await mount(<Trends product={product} range={yesterday} env="live" />);
    expect(calls.find((c) => c.path === "/api/v1/query/trend")?.body).toMatchObject({ series: [{ event: "signup", math: "total" }], breakdown: "browser", breakdownLimit: 10, interval: "week" });
    expect((root.querySelector("select[name=interval]") as HTMLSelectElement).value).toBe("week");
    expect(root.querySelector("[aria-label='Chart type'] [aria-pressed=true]")?.textContent?.trim()).toBe("Bar");
  });

  it("runs the retention a URL names and writes the one run", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/annotations": { body: { items: [], total: 0, page: 1, pageSize: 100 } },
      "POST /api/v1/query/retention": (c) => ({ body: { period: (c.body as { period: string }).period, cohorts: [] } }),
    });
    history.replaceState(null, "", "/retention?start=signup&period=day");
    const root = await mount(<Retention product={product} range={yesterday} env="live" />);
    expect(calls.find((c) => c.path === "/api/v1/query/retention")?.body).toMatchObject({ startEvent: "signup", period: "day" });
    await type(root.querySelector("input[aria-label='Return event']"), "paid");
    await submit(root.querySelector("form[aria-label='Retention query']"));
    expect(location.search).toBe("?start=signup&return=paid&period=day");
    expect(calls.filter((c) => c.path === "/api/v1/query/retention").pop()?.body).toMatchObject({ startEvent: "signup", returnEvent: "paid" });
  });

  it("keeps the errors list's status and release in the URL", async () => {
    const calls = fakeFetch({ "GET /api/v1/errors": { body: { from: "2026-11-22", to: "2026-11-22", groups: [] } }, "GET /api/v1/sourcemaps": { body: { items: [] } } });
    history.replaceState(null, "", "/errors?status=resolved&release=2.0.0");
    const root = await mount(<Errors product={product} range={yesterday} env="live" />);
    const asked = calls.filter((c) => c.path === "/api/v1/errors");
    expect([asked[0].query.get("status"), asked[0].query.get("release")]).toEqual(["resolved", "2.0.0"]);
    expect((root.querySelector("select[name=status]") as HTMLSelectElement).value).toBe("resolved");
    expect((root.querySelector("input[name=release]") as HTMLInputElement).value).toBe("2.0.0");
    await act(() => setQuery({ status: "ignored" }));
    await settle();
    expect(calls.filter((c) => c.path === "/api/v1/errors").pop()?.query.get("status")).toBe("ignored");
    await back();
    expect((root.querySelector("select[name=status]") as HTMLSelectElement).value).toBe("resolved");
  });

  it("keeps the annotations list's page in the URL", async () => {
    const calls = fakeFetch({
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": (c) => ({ body: { items: [], total: 120, page: Number(c.query.get("page")), pageSize: 50 } }),
    });
    history.replaceState(null, "", "/annotations?page=2");
    const root = await mount(<Annotations product={product} />);
    expect(calls.find((c) => c.path === "/api/v1/annotations")?.query.get("page")).toBe("2");
    await click([...root.querySelectorAll("button")].find((b) => b.textContent?.includes("Next")) ?? null);
    expect(location.search).toBe("?page=3");
    await back();
    expect(calls.filter((c) => c.path === "/api/v1/annotations").pop()?.query.get("page")).toBe("2");
  });
});

describe("annotation times", () => {
  it("reads and writes the form's time in UTC, whatever the browser's zone", () => {
    expect(toUTCInput(Date.UTC(2026, 10, 23, 9, 5))).toBe("2026-11-23T09:05");
    expect(fromUTCInput("2026-11-23T09:05")?.toISOString()).toBe("2026-11-23T09:05:00.000Z");
    expect(fromUTCInput("")).toBeNull();
    expect(fromUTCInput("yesterday")).toBeNull();
  });
});
