// Annotations on the charts without a time axis: the funnel's timeline strip
// and the retention cohort rows. Workspace annotations show on every report;
// a query-scoped one only with its saved query, never on ad-hoc reports.
import { afterEach, describe, expect, it } from "vitest";
import { act } from "preact/test-utils";
import { AnnotationStrip } from "../src/components/ChartAnnotations";
import { Funnels } from "../src/pages/Funnels";
import { CohortTable, Retention } from "../src/pages/Retention";
import { presetRange, setTimeZone } from "../src/range";
import type { Annotation, Product, RetentionResult } from "../src/types";
import { click, fakeFetch, mount, type Call } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };

const ann = (id: number, date: string, more: Partial<Annotation> = {}): Annotation => ({
  id,
  date,
  label: `Note ${id}`,
  description: "",
  scope: "workspace",
  queryId: null,
  color: "emerald",
  createdBy: "user owner@example.com",
  createdAt: "2026-11-01T00:00:00Z",
  ...more,
});

const markerLabels = (root: ParentNode) =>
  [...root.querySelectorAll("[data-testid=annotation-marker] [role=tooltip] strong")].map((e) => e.textContent);

/** annotationsRoute answers as the API does: the workspace's, plus the named query's. */
const annotationsRoute = (items: Annotation[]) => (c: Call) => {
  const q = c.query.get("queryId");
  const body = items.filter((a) => a.scope === "workspace" || (q !== null && a.queryId === Number(q)));
  return { body: { items: body, page: 1, pageSize: 100, total: body.length } };
};

const funnelBody = { body: { steps: [{ name: "a", count: 4, conversionPct: null }, { name: "b", count: 2, conversionPct: 50 }] } };

describe("funnel annotation strip", () => {
  it("marks the annotations inside the range and none outside it", async () => {
    const root = await mount(
      <AnnotationStrip
        from="2026-11-01"
        to="2026-11-03"
        annotations={[
          ann(1, "2026-11-01T00:00:00Z", { color: "violet", description: "Release 1.2" }),
          ann(2, "2026-11-03T23:59:00Z"),
          ann(3, "2026-10-31T23:59:59Z"),
          ann(4, "2026-11-04T00:00:00Z"),
        ]}
      />,
    );
    expect(markerLabels(root)).toEqual(["Note 1", "Note 2"]);
    const first = root.querySelector<HTMLButtonElement>("[data-testid=annotation-marker]")!;
    expect(first.dataset.color).toBe("violet");
    expect(first.style.left).toBe("0%");
    expect(first.style.getPropertyValue("--marker")).toBe("#7c3aed");
    // A button, so it takes keyboard focus; its tooltip has label, date and description.
    expect(first.tagName).toBe("BUTTON");
    expect(first.getAttribute("aria-label")).toBe("Annotation: Note 1, 1 Nov 2026, 00:00 UTC");
    expect(first.querySelector("[role=tooltip]")?.textContent).toBe("Note 11 Nov 2026, 00:00 UTCRelease 1.2");

    const none = await mount(<AnnotationStrip from="2026-11-01" to="2026-11-03" annotations={[ann(3, "2026-10-31T12:00:00Z")]} />);
    expect(none.querySelectorAll("[data-testid=annotation-marker]").length).toBe(0);
    expect(none.querySelector("[data-testid=annotation-strip]")?.textContent).toContain("No annotations in this range");
  });

  it("shows the workspace's annotations on the builder's funnel over its range", async () => {
    const range = { key: "custom" as const, from: "2026-11-01", to: "2026-11-03" };
    const calls = fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "a", count: 4 }] } },
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": funnelBody,
      "GET /api/v1/annotations": annotationsRoute([ann(1, "2026-11-02T10:00:00Z"), ann(2, "2026-10-20T10:00:00Z")]),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    expect(markerLabels(root.querySelector("[data-testid=annotation-strip]")!)).toEqual(["Note 1"]);
    const req = calls.find((c) => c.path === "/api/v1/annotations")!;
    expect(req.query.get("from")).toBe("2026-11-01");
    expect(req.query.get("to")).toBe("2026-11-03");
    expect(req.query.has("queryId")).toBe(false);
  });

  it("adds a saved funnel's own annotations only while that funnel is on screen", async () => {
    const range = presetRange("30d");
    const recent = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const savedQ = (id: number, name: string) => ({
      id, productId: 3, kind: "funnel", name, definition: { steps: ["a", "b"], windowHours: 24 }, createdAt: "2026-11-02T00:00:00Z", updatedAt: "2026-11-02T00:00:00Z",
    });
    const calls = fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "a", count: 4 }] } },
      "GET /api/v1/queries": { body: { items: [savedQ(7, "Signup"), savedQ(8, "Other")] } },
      "POST /api/v1/query/funnel": funnelBody,
      "POST /api/v1/queries/7/run": funnelBody,
      "POST /api/v1/queries/8/run": funnelBody,
      "GET /api/v1/annotations": annotationsRoute([
        ann(1, recent, { label: "Deploy" }),
        ann(2, recent, { label: "Signup fix", scope: "query", queryId: 7, color: "rose" }),
      ]),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    // The ad-hoc funnel: the workspace annotation only.
    expect(markerLabels(root)).toEqual(["Deploy"]);

    await click(root.querySelector("[aria-label='Run Signup']"));
    expect(markerLabels(root).sort()).toEqual(["Deploy", "Signup fix"]);
    expect(calls.filter((c) => c.path === "/api/v1/annotations").pop()?.query.get("queryId")).toBe("7");

    // Another saved funnel does not show it.
    await click(root.querySelector("[aria-label='Run Other']"));
    expect(markerLabels(root)).toEqual(["Deploy"]);
  });
});

describe("retention cohort markers", () => {
  const result: RetentionResult = {
    period: "week",
    cohorts: [
      { date: "2026-11-02", size: 4, values: [4, 2] },
      { date: "2026-11-09", size: 3, values: [3] },
    ],
  };

  it("marks each cohort whose period holds annotations, in their colours", async () => {
    const root = await mount(
      <CohortTable
        result={result}
        annotations={[
          ann(1, "2026-11-08T23:00:00Z", { label: "Deploy", color: "violet", description: "Release 1.2" }),
          ann(2, "2026-11-09T00:00:00Z", { label: "Outage", color: "rose" }),
          ann(3, "2026-11-15T12:00:00Z", { label: "Launch", color: "sky" }),
          ann(4, "2026-11-16T00:00:00Z", { label: "Next week" }),
          ann(5, "2026-11-01T23:59:59Z", { label: "Week before" }),
        ]}
      />,
    );
    const rows = [...root.querySelectorAll("tbody tr")];
    const marked = rows.map((r) => [...r.querySelectorAll("[data-testid=period-annotation] strong")].map((e) => e.textContent));
    expect(marked).toEqual([["Deploy"], ["Outage", "Launch"]]);
    expect([...rows[1].querySelectorAll(".period-dot")].map((d) => (d as HTMLElement).dataset.color)).toEqual(["rose", "sky"]);
    const marker = rows[0].querySelector<HTMLButtonElement>("[data-testid=period-annotations]")!;
    expect(marker.tagName).toBe("BUTTON");
    expect(marker.getAttribute("aria-label")).toBe("1 annotation: Deploy, 8 Nov 2026, 23:00 UTC");
    expect(marker.querySelector("[role=tooltip]")?.textContent).toContain("Release 1.2");
    // Focus places the list next to the marker.
    await act(() => {
      marker.dispatchEvent(new FocusEvent("focus"));
    });
    expect((marker.querySelector("[role=tooltip]") as HTMLElement).style.top).toMatch(/px$/);
    // The numbers are unchanged.
    expect(rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent))).toEqual([["4", "100%", "50%"], ["3", "100%", ""]]);

    const none = await mount(<CohortTable result={result} annotations={[ann(4, "2026-11-16T00:00:00Z")]} />);
    expect(none.querySelectorAll("[data-testid=period-annotations]").length).toBe(0);
  });

  describe("in a zone whose dates are not UTC's", () => {
    afterEach(() => setTimeZone("UTC"));
    // Tokyo is UTC+9: its 9 November runs from 15:00 UTC on the 8th to 15:00 UTC on the 9th.
    const days: RetentionResult = {
      period: "day",
      cohorts: [
        { date: "2026-11-08", size: 2, values: [2] },
        { date: "2026-11-09", size: 2, values: [2] },
      ],
    };

    it("places each marker in the cohort of its local date", async () => {
      setTimeZone("Asia/Tokyo");
      const root = await mount(
        <CohortTable
          result={days}
          annotations={[
            ann(1, "2026-11-07T15:00:00Z", { label: "Tokyo 8th, 00:00" }),
            ann(2, "2026-11-08T14:59:59Z", { label: "Tokyo 8th, 23:59" }),
            ann(3, "2026-11-08T15:00:00Z", { label: "Tokyo 9th, 00:00" }),
            ann(4, "2026-11-09T12:00:00Z", { label: "Tokyo 9th, 21:00" }),
            ann(5, "2026-11-09T15:00:00Z", { label: "Tokyo 10th" }),
            ann(6, "2026-11-07T14:59:59Z", { label: "Tokyo 7th" }),
          ]}
        />,
      );
      const rows = [...root.querySelectorAll("tbody tr")];
      const marked = rows.map((r) => [...r.querySelectorAll("[data-testid=period-annotation] strong")].map((e) => e.textContent));
      expect(marked).toEqual([
        ["Tokyo 8th, 00:00", "Tokyo 8th, 23:59"],
        ["Tokyo 9th, 00:00", "Tokyo 9th, 21:00"],
      ]);
    });

    it("asks for the annotations a day further on either side, so that local days are covered", async () => {
      setTimeZone("Asia/Tokyo");
      const calls = fakeFetch({
        "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 7 }] } },
        "POST /api/v1/query/retention": { body: days },
        "GET /api/v1/annotations": annotationsRoute([ann(1, "2026-11-07T16:00:00Z", { label: "Early on the 8th" })]),
      });
      const root = await mount(<Retention product={product} range={{ key: "custom", from: "2026-11-08", to: "2026-11-09" }} env="live" />);
      const req = calls.filter((c) => c.path === "/api/v1/annotations").pop()!;
      expect([req.query.get("from"), req.query.get("to")]).toEqual(["2026-11-07", "2026-11-10"]);
      const rows = [...root.querySelectorAll("tbody tr")];
      expect(rows.map((r) => [...r.querySelectorAll("[data-testid=period-annotation] strong")].map((e) => e.textContent))).toEqual([["Early on the 8th"], []]);
    });
  });

  it("asks for the workspace's annotations only, over the cohorts' periods", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": { body: { events: [{ name: "$pageview", count: 7 }] } },
      "POST /api/v1/query/retention": { body: result },
      "GET /api/v1/annotations": annotationsRoute([
        ann(1, "2026-11-03T10:00:00Z", { label: "Deploy" }),
        ann(2, "2026-11-03T11:00:00Z", { label: "Query note", scope: "query", queryId: 7 }),
      ]),
    });
    const root = await mount(<Retention product={product} range={{ key: "custom", from: "2026-11-04", to: "2026-11-12" }} env="live" />);
    const marked = [...root.querySelectorAll("[data-testid=period-annotation] strong")].map((e) => e.textContent);
    expect(marked).toEqual(["Deploy"]);
    const req = calls.filter((c) => c.path === "/api/v1/annotations").pop()!;
    expect(req.query.has("queryId")).toBe(false);
    // The first cohort's week starts before the picked range; its annotations still count.
    expect(req.query.get("from")).toBe("2026-11-02");
    expect(req.query.get("to")).toBe("2026-11-15");
  });
});
