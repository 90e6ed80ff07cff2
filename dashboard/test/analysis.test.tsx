import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Acquisition } from "../src/pages/Acquisition";
import { Annotations } from "../src/pages/Annotations";
import { Funnels, FunnelBars } from "../src/pages/Funnels";
import { CohortTable } from "../src/pages/Retention";
import { checkTrend, filterRequest, Trends } from "../src/pages/Trends";
import { markerPosition } from "../src/charts/time";
import type { Annotation, Product } from "../src/types";
import { act } from "preact/test-utils";
import { asRole, byText, click, fakeFetch, mount, submit, type } from "./helpers";

/** choose picks an option of a select as a person would. */
async function choose(el: Element | null, value: string): Promise<void> {
  const s = el as HTMLSelectElement;
  await act(() => {
    s.value = value;
    s.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const range = { key: "custom" as const, from: "2026-11-01", to: "2026-11-03" };
const events = { body: { events: [{ name: "page_viewed", count: 10 }, { name: "signed_up", count: 2 }] } };
const funnel = (counts: number[], names = ["page_viewed", "button_clicked", "form_submitted"]) => ({
  body: {
    steps: counts.map((count, i) => ({
      name: names[i],
      count,
      conversionPct: i === 0 ? null : counts[i - 1] ? Math.round((count / counts[i - 1]) * 1000) / 10 : 0,
    })),
  },
});

const stepInputs = (root: HTMLElement) => [...root.querySelectorAll<HTMLInputElement>(".steps input")].map((i) => i.value);

describe("funnel builder", () => {
  it("starts from the placeholder steps, edits them and runs the funnel", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": (c) => funnel([8, 4, 1], (c.body as { steps: string[] }).steps),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    expect(stepInputs(root)).toEqual(["page_viewed", "button_clicked", "form_submitted"]);
    expect(calls.find((c) => c.path === "/api/v1/query/funnel")?.body).toEqual({
      steps: ["page_viewed", "button_clicked", "form_submitted"],
      windowHours: 24,
      dateFrom: "2026-11-01",
      dateTo: "2026-11-03",
    });
    // Suggestions come from the product's event names.
    expect([...root.querySelectorAll("#funnel-events option")].map((o) => (o as HTMLOptionElement).value)).toEqual(["page_viewed", "signed_up"]);
    const counts = [...root.querySelectorAll("[data-testid=step-count]")].map((e) => e.textContent);
    expect(counts).toEqual(["8", "4", "1"]);
    // Both numbers count users: the headings say which is which.
    expect([...root.querySelectorAll(".funnel-table thead th")].map((e) => e.textContent)).toEqual([
      "Step",
      "Share of first step",
      "Users",
      "Converted from previous step",
    ]);
    expect([...root.querySelectorAll(".funnel-table .bar-col .visually-hidden")].map((e) => e.textContent)).toEqual(["100%", "50%", "12.5%"]);
    expect([...root.querySelectorAll("[data-testid=step-conversion]")].map((e) => e.textContent)).toEqual(["—", "50%", "25%"]);

    await click(root.querySelector("[aria-label='Move step 3 up']"));
    expect(stepInputs(root)).toEqual(["page_viewed", "form_submitted", "button_clicked"]);
    await click(root.querySelector("[aria-label='Remove step 1']"));
    expect(stepInputs(root)).toEqual(["form_submitted", "button_clicked"]);
    expect((root.querySelector("[aria-label='Remove step 1']") as HTMLButtonElement).disabled).toBe(true);
    await click(byText(root, "button", "Add step"));
    await type(root.querySelector("[aria-label='Step 3 event']"), "signed_up");
    await type(root.querySelector("input[name=windowHours]"), "48");
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    const last = calls.filter((c) => c.path === "/api/v1/query/funnel").pop();
    expect(last?.body).toEqual({ steps: ["form_submitted", "button_clicked", "signed_up"], windowHours: 48, dateFrom: "2026-11-01", dateTo: "2026-11-03" });
  });

  it("counts companies when Count says so, and offers Users alone without groups", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/groups": { body: { items: [], types: ["company"] } },
      "POST /api/v1/query/funnel": (c) => funnel([3, 1], (c.body as { steps: string[] }).steps),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    await choose(root.querySelector("select[name=aggregateBy]"), "company");
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    expect(calls.filter((c) => c.path === "/api/v1/query/funnel").pop()?.body).toEqual({
      steps: ["page_viewed", "button_clicked", "form_submitted"],
      windowHours: 24,
      aggregateBy: "company",
      dateFrom: "2026-11-01",
      dateTo: "2026-11-03",
    });
    expect([...root.querySelectorAll(".funnel-table thead th")].map((e) => e.textContent)).toContain("Groups (company)");

    fakeFetch({ "GET /api/v1/query/events": events, "GET /api/v1/queries": { body: { items: [] } }, "POST /api/v1/query/funnel": funnel([1, 0]) });
    // A fresh page: the funnel run above named its count in the URL.
    history.replaceState(null, "", "/funnels");
    const bare = await mount(<Funnels product={{ ...product, id: 4 }} range={range} env="live" />);
    const options = [...(bare.querySelector("select[name=aggregateBy]") as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options).toEqual(["Users"]);
  });

  it("refuses an empty step and a bad window without calling the server", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": funnel([1, 0, 0]),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    const before = calls.length;
    await type(root.querySelector("[aria-label='Step 2 event']"), " ");
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("Every step needs an event name.");
    await type(root.querySelector("[aria-label='Step 2 event']"), "x");
    await type(root.querySelector("input[name=windowHours]"), "721");
    await submit(root.querySelector("form[aria-label='Funnel builder']"));
    expect(root.querySelector("[role=alert]")?.textContent).toMatch(/1 to 720/);
    expect(calls.length).toBe(before);
  });

  it("saves a funnel and runs a saved one from the list", async () => {
    const savedQ = { id: 7, productId: 3, kind: "funnel", name: "Signup", definition: { steps: ["a", "b"], windowHours: 12 }, createdAt: "2026-11-02T00:00:00Z", updatedAt: "2026-11-02T00:00:00Z" };
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [savedQ, { ...savedQ, id: 8, kind: "trend", name: "A trend" }] } },
      "POST /api/v1/queries": (c) => ({ status: 201, body: { ...savedQ, id: 9, name: (c.body as { name: string }).name, definition: (c.body as { definition: unknown }).definition } }),
      "POST /api/v1/query/funnel": funnel([5, 2, 1]),
      "POST /api/v1/queries/7/run": funnel([3, 1], ["a", "b"]),
      "POST /api/v1/queries/9/run": funnel([5, 2, 1]),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    expect(root.querySelectorAll(".saved-list li").length).toBe(1);
    await click(root.querySelector("[aria-label='Run Signup']"));
    expect(stepInputs(root)).toEqual(["a", "b"]);
    expect((root.querySelector("input[name=windowHours]") as HTMLInputElement).value).toBe("12");
    expect([...root.querySelectorAll("[data-testid=step-count]")].map((e) => e.textContent)).toEqual(["3", "1"]);
    expect(root.querySelector("#funnel-result-title")?.textContent).toContain("Signup");

    await type(root.querySelector("input[name=saveName]"), "Checkout");
    await submit(root.querySelector("form[aria-label='Save funnel']"));
    expect(calls.find((c) => c.method === "POST" && c.path === "/api/v1/queries")?.body).toEqual({
      kind: "funnel",
      name: "Checkout",
      definition: { steps: ["a", "b"], windowHours: 12 },
    });
    expect(root.querySelectorAll(".saved-list li").length).toBe(2);
    expect(calls.some((c) => c.path === "/api/v1/queries/9/run")).toBe(true);
  });

  it("shows the server's message when the funnel fails, and an empty funnel plainly", async () => {
    fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": { status: 400, body: { error: { code: "invalid_request", message: "steps[1]: must not be empty" } } },
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    expect(root.querySelector(".error-state")?.textContent).toContain("steps[1]: must not be empty");
    const empty = await mount(<FunnelBars result={funnel([0, 0]).body} />);
    expect(empty.querySelector("[data-testid=funnel-empty]")).toBeTruthy();
  });

  it("shows how to send the first event when the product has none", async () => {
    fakeFetch({
      "GET /api/v1/query/events": { body: { events: [] } },
      "GET /api/v1/queries": { body: { items: [] } },
      "POST /api/v1/query/funnel": funnel([0, 0, 0]),
    });
    const root = await mount(<Funnels product={product} range={range} env="live" />);
    expect(root.querySelector("[data-testid=install-snippet]")?.textContent).toContain("/sdk/v1/sdk.min.js");
  });
});

describe("trends", () => {
  // Charts stop at now (TimeChart): a fixed clock after the range keeps its days whole.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime("2026-11-24T12:00:00Z");
  });
  afterEach(() => vi.useRealTimers());

  it("turns drafted filters into the API's and checks them", () => {
    expect(filterRequest({ property: "properties.amount", operator: "gt", value: "12.5" })).toEqual({ property: "properties.amount", operator: "gt", value: 12.5 });
    expect(filterRequest({ property: "path", operator: "is_set", value: "x" })).toEqual({ property: "path", operator: "is_set" });
    expect(filterRequest({ property: "path", operator: "contains", value: "/docs" })).toEqual({ property: "path", operator: "contains", value: "/docs" });
    expect(checkTrend([{ event: "a", math: "total" }], [{ property: "x", operator: "lt", value: "abc" }], "10")).toMatch(/needs a number/);
    expect(checkTrend([{ event: "a", math: "total" }], [], "101")).toMatch(/1 to 100/);
    expect(checkTrend([{ event: "a", math: "total" }], [], "10")).toBeNull();
  });

  it("sends series, filters, breakdown and interval, and shows the numbers", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
      "POST /api/v1/query/trend": {
        body: { series: [{ label: "$pageview · /a", event: "$pageview", breakdownValue: "/a", data: [{ date: "2026-11-01", value: 4 }, { date: "2026-11-02", value: 1234 }, { date: "2026-11-03", value: 0 }] }] },
      },
    });
    const root = await mount(<Trends product={product} range={range} env="live" />);
    await click(byText(root, "button", "Add filter"));
    await type(root.querySelector("[aria-label='Filter 1 property']"), "browser");
    await choose(root.querySelector("[aria-label='Filter 1 operator']"), "contains");
    await type(root.querySelector("[aria-label='Filter 1 value']"), "chrome");
    await type(root.querySelector("input[name=breakdown]"), "path");
    await type(root.querySelector("input[name=breakdownLimit]"), "5");
    await choose(root.querySelector("[aria-label='Series 1 math']"), "unique_users");
    await submit(root.querySelector("form[aria-label='Trend builder']"));
    const last = calls.filter((c) => c.path === "/api/v1/query/trend").pop();
    expect(last?.body).toEqual({
      series: [{ event: "$pageview", math: "unique_users" }],
      interval: "day",
      filters: [{ property: "browser", operator: "contains", value: "chrome" }],
      breakdown: "path",
      breakdownLimit: 5,
      dateFrom: "2026-11-01",
      dateTo: "2026-11-03",
    });
    const cells = [...root.querySelectorAll(".data-table tbody td")].map((t) => t.textContent);
    expect(cells).toContain(new Intl.NumberFormat().format(1234));
  });

  it("counts the groups of a type picked in Count, from the product's group types", async () => {
    const calls = fakeFetch({
      "GET /api/v1/query/events": events,
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
      "GET /api/v1/groups": { body: { items: [], types: ["company", "team"] } },
      "POST /api/v1/query/trend": { body: { series: [{ label: "$pageview", event: "$pageview", data: [{ date: "2026-11-01", value: 2 }] }] } },
    });
    const root = await mount(<Trends product={product} range={range} env="live" />);
    const count = root.querySelector("select[name=aggregateBy]") as HTMLSelectElement;
    expect([...count.options].map((o) => o.textContent)).toEqual(["Users", "company", "team"]);
    expect(calls.find((c) => c.path === "/api/v1/groups")?.query.get("product")).toBe("3");
    await choose(count, "company");
    await choose(root.querySelector("[aria-label='Series 1 math']"), "unique_users");
    await submit(root.querySelector("form[aria-label='Trend builder']"));
    expect(calls.filter((c) => c.path === "/api/v1/query/trend").pop()?.body).toMatchObject({
      series: [{ event: "$pageview", math: "unique_users" }],
      aggregateBy: "company",
    });
    await choose(count, "");
    await submit(root.querySelector("form[aria-label='Trend builder']"));
    expect(calls.filter((c) => c.path === "/api/v1/query/trend").pop()?.body).not.toHaveProperty("aggregateBy");
  });

  it("places annotation markers inside their bucket", () => {
    const b = ["2026-11-01", "2026-11-02"];
    expect(markerPosition(Date.parse("2026-11-01T12:00:00Z"), b, "day")).toBeCloseTo(0.5);
    expect(markerPosition(Date.parse("2026-11-02T06:00:00Z"), b, "day")).toBeCloseTo(1.25);
    expect(markerPosition(Date.parse("2026-11-03T00:00:00Z"), b, "day")).toBeNull();
    expect(markerPosition(Date.parse("2026-10-31T23:59:59Z"), b, "day")).toBeNull();
  });
});

describe("annotations page", () => {
  const ann = (id: number, over: Partial<Annotation> = {}): Annotation => ({
    id, date: "2026-11-02T10:00:00Z", label: `Deploy ${id}`, description: "", scope: "workspace", queryId: null, color: "sky", createdBy: "owner@example.com", createdAt: "2026-11-02T10:00:00Z", ...over,
  });
  afterEach(() => undefined);

  it("lists a page, counts the label, creates, bulk-deletes with confirmation and pages", async () => {
    let page = 1;
    const calls = fakeFetch({
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": () => ({ body: { items: page === 1 ? Array.from({ length: 20 }, (_, i) => ann(i + 1)) : [ann(21)], page, pageSize: 20, total: 21 } }),
      "POST /api/v1/annotations": (c) => ({ status: 201, body: ann(99, c.body as Partial<Annotation>) }),
      "POST /api/v1/annotations/bulk-delete": (c) => ({ body: { deleted: (c.body as { ids: number[] }).ids.length } }),
      "DELETE /api/v1/annotations/5": { status: 204 },
    });
    const root = await mount(<Annotations product={product} />);
    expect(root.querySelectorAll("[data-testid=annotation-row]").length).toBe(20);
    expect(root.querySelector(".pager")?.textContent).toContain("Page 1 of 2");
    expect(root.querySelector("a[download]")?.getAttribute("href")).toBe("/api/v1/annotations/export.csv?product=3");

    await type(root.querySelector("input[name=label]"), "Launch 🚀");
    expect(root.querySelector("[data-testid=label-count]")?.textContent).toBe("8/120");
    await type(root.querySelector("input[name=label]"), "x".repeat(121));
    expect(root.querySelector("[data-testid=label-count]")?.textContent).toBe("121/120");
    await submit(root.querySelector("form[aria-label='New annotation']"));
    expect(root.querySelector("[role=alert]")?.textContent).toMatch(/at most 120/);
    await type(root.querySelector("input[name=label]"), "Launch");
    await click(root.querySelector("input[value=rose]"));
    await submit(root.querySelector("form[aria-label='New annotation']"));
    const created = calls.find((c) => c.method === "POST" && c.path === "/api/v1/annotations")?.body as Record<string, unknown>;
    expect(created).toMatchObject({ label: "Launch", color: "rose", scope: "workspace" });
    expect(String(created.date)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);

    await click(root.querySelector("[aria-label='Select Deploy 1']"));
    await click(root.querySelector("[aria-label='Select Deploy 2']"));
    await click(byText(root, "button", "Delete selected (2)"));
    expect(root.querySelector("[role=alertdialog]")?.textContent).toContain("Delete 2 annotations?");
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Delete"));
    expect(calls.find((c) => c.path === "/api/v1/annotations/bulk-delete")?.body).toEqual({ ids: [1, 2] });
    expect(root.querySelector("[role=status]")?.textContent).toBe("Deleted 2 annotations.");

    await click(root.querySelector("[aria-label='Delete Deploy 5']"));
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Delete"));
    expect(calls.some((c) => c.method === "DELETE" && c.path === "/api/v1/annotations/5")).toBe(true);

    page = 2;
    await click(byText(root, "button", "Next"));
    expect(root.querySelectorAll("[data-testid=annotation-row]").length).toBe(1);
    expect(root.querySelector(".pager")?.textContent).toContain("Page 2 of 2");
  });

  it("says so when there is none, and shows the server's message on failure", async () => {
    fakeFetch({ "GET /api/v1/queries": { body: { items: [] } }, "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 20, total: 0 } } });
    let root = await mount(<Annotations product={product} />);
    expect(root.querySelector("[data-testid=no-annotations]")).toBeTruthy();
    fakeFetch({ "GET /api/v1/queries": { body: { items: [] } }, "GET /api/v1/annotations": { status: 500, body: { error: { code: "internal", message: "The database is unavailable." } } } });
    root = await mount(<Annotations product={product} />);
    expect(root.querySelector(".error-state")?.textContent).toContain("The database is unavailable.");
  });
});

describe("retention and acquisition", () => {
  it("draws the cohort triangle as shares of each cohort", async () => {
    const root = await mount(
      <CohortTable result={{ period: "week", cohorts: [{ date: "2026-11-02", size: 4, values: [4, 2] }, { date: "2026-11-09", size: 0, values: [0] }] }} />,
    );
    const rows = [...root.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent));
    expect(rows).toEqual([["4", "100%", "50%"], ["0", "—", ""]]);
  });

  it("lists AI bots with their type and the top pages", async () => {
    fakeFetch({
      "GET /api/v1/query/bots": {
        body: {
          bots: [
            { name: "GPTBot", category: "ai_crawler", categoryLabel: "AI crawler (training/index)", hits: 3, lastSeen: "2026-11-02T10:00:00Z" },
            { name: "ChatGPT-User", category: "ai_assistant", categoryLabel: "AI assistant (live fetch)", hits: 1, lastSeen: "2026-11-02T11:00:00Z" },
          ],
          topPages: [{ url: "https://x/docs", hits: 4, bots: 2 }],
          allowlist: { version: 7, reviewed: "2026-11-25", bots: 55 },
        },
      },
    });
    const root = await mount(<Acquisition product={product} range={range} env="live" />);
    expect(root.querySelector("[data-testid='allowlist']")?.textContent).toBe(
      "Known AI bots: allowlist version 7, reviewed 2026-11-25 (55 bots).",
    );
    const types = [...root.querySelectorAll("table[aria-label='AI bot activity'] tbody tr td:nth-child(2)")].map((t) => t.textContent);
    expect(types).toEqual(["AI crawler (training/index)", "AI assistant (live fetch)"]);
    expect(root.querySelector("table[aria-label='Top pages accessed by AI'] tbody td")?.textContent).toBe("https://x/docs");
  });
});

describe("roles on the analysis pages", () => {
  const savedQ = { id: 7, productId: 3, kind: "funnel", name: "Signup", definition: { steps: ["a", "b"], windowHours: 12 }, createdAt: "2026-11-02T00:00:00Z", updatedAt: "2026-11-02T00:00:00Z" };
  const funnelRoutes = () => ({
    "GET /api/v1/query/events": events,
    "GET /api/v1/queries": { body: { items: [savedQ] } },
    "POST /api/v1/query/funnel": funnel([5, 2, 1]),
  });

  it("shows a viewer the saved funnels to run, without saving or Delete; a member saves but does not delete; an admin deletes", async () => {
    fakeFetch(funnelRoutes());
    const viewer = await mount(asRole("viewer", <Funnels product={product} range={range} env="live" />));
    expect(viewer.querySelector("[aria-label='Run Signup']")).not.toBeNull();
    expect(viewer.querySelector("[aria-label='Delete Signup']")).toBeNull();
    expect(viewer.querySelector("form[aria-label='Save funnel']")).toBeNull();
    fakeFetch(funnelRoutes());
    const member = await mount(asRole("member", <Funnels product={product} range={range} env="live" />));
    expect(member.querySelector("form[aria-label='Save funnel']")).not.toBeNull();
    expect(member.querySelector("[aria-label='Delete Signup']")).toBeNull();
    fakeFetch(funnelRoutes());
    const admin = await mount(asRole("admin", <Funnels product={product} range={range} env="live" />));
    expect(admin.querySelector("[aria-label='Delete Signup']")).not.toBeNull();
  });

  it("shows a member the annotations without boxes, Delete selected or a row's Delete, and an admin all of them", async () => {
    const ann = { id: 1, date: "2026-11-02T10:00:00Z", label: "Deploy", description: "", scope: "workspace", queryId: null, color: "sky", createdBy: "owner@example.com", createdAt: "2026-11-02T10:00:00Z" };
    const annRoutes = () => ({
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": { body: { items: [ann], page: 1, pageSize: 20, total: 1 } },
    });
    fakeFetch(annRoutes());
    const member = await mount(asRole("member", <Annotations product={product} />));
    expect(member.querySelectorAll("[data-testid=annotation-row]")).toHaveLength(1);
    expect(member.querySelector("form[aria-label='New annotation']")).not.toBeNull();
    expect(member.querySelector("table input[type=checkbox]")).toBeNull();
    expect(byText(member, "button", "Delete selected (0)")).toBeUndefined();
    expect(member.querySelector("[aria-label='Delete Deploy']")).toBeNull();
    fakeFetch(annRoutes());
    const admin = await mount(asRole("admin", <Annotations product={product} />));
    expect(admin.querySelectorAll("table input[type=checkbox]")).toHaveLength(2);
    expect(byText(admin, "button", "Delete selected (0)")).toBeDefined();
    expect(admin.querySelector("[aria-label='Delete Deploy']")).not.toBeNull();
  });
});
