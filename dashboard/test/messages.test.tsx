// The Messages pages: the campaigns with their stats, status changes and
// the auto-render setting; the editor sends what was typed, puts the
// server's refusals next to their field (however deep), adds A/B variants
// and reorders steps, targets traits and cohorts, and posts the step being
// edited to the preview frame; a campaign's page shows its experiment's headline and its
// survey's answers per question with the NPS score and the CSV link.
import { act } from "preact/test-utils";
import { describe, expect, it } from "vitest";
import { addVariant, closestField, newCampaign, stepOf, writeOf } from "../src/campaign";
import { previewPath, redrawDelayMs } from "../src/components/MessagePreview";
import { npsText } from "../src/components/SurveyResults";
import { App } from "../src/app";
import { CampaignPage } from "../src/pages/Campaign";
import { Messages } from "../src/pages/Messages";
import type { Campaign, ExperimentResults, Product, SurveyResults } from "../src/types";
import { asRole, byText, choose, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };

const modal = { kind: "modal" as const, title: "Welcome", body: "Hi **there**", bodyFormat: "markdown" as const, selector: "", placement: "" as const, cta: { label: "Start", url: "/start" }, question: null };

const campaign = (over: Partial<Campaign> = {}): Campaign => ({
  id: 12, productId: 3, name: "Welcome tour", status: "draft", trigger: { event: "$pageview" }, pathRegex: "^/app",
  audience: { identified: false, percentage: 100, conditions: [] }, cap: { kind: "once", count: 1 },
  variants: [{ key: "control", weight: 100, steps: [modal] }], experimentId: null, flagKey: "",
  createdAt: "2026-11-20T10:00:00Z", updatedAt: "2026-11-21T10:00:00Z", stats: { shown: 0, ctaClicks: 0, completed: 0, dismissed: 0 }, ...over,
});

const badRequest = (message: string) => ({ status: 400, body: { error: { code: "invalid_request", message } } });
/** The product's cohorts, as GET /api/v1/products/3/cohorts answers. */
const cohortList = {
  body: {
    items: [
      { id: 7, productId: 3, name: "Paying", kind: "static", size: 12 },
      { id: 8, productId: 3, name: "Churned", kind: "dynamic", size: 3 },
    ],
  },
};
const cells = (row: Element | null | undefined) => [...(row?.querySelectorAll("th, td") ?? [])].map((c) => c.textContent?.trim());

describe("campaign list", () => {
  it("shows each campaign's stats, changes its status, and says when active campaigns cannot show", async () => {
    let items = [
      campaign({ status: "active", stats: { shown: 200, ctaClicks: 50, completed: 30, dismissed: 100 } }),
      campaign({ id: 13, name: "Pricing survey", status: "draft", trigger: { event: "checkout" }, pathRegex: "", variants: [
        { key: "control", weight: 50, steps: [modal] }, { key: "variant_b", weight: 50, steps: [modal] },
      ], stats: { shown: 0, ctaClicks: 0, completed: 0, dismissed: 0 } }),
    ];
    let autoRender = false;
    const calls = fakeFetch({
      "GET /api/v1/campaigns": () => ({ body: { items } }),
      "GET /api/v1/messages/settings": () => ({ body: { autoRender } }),
      "PUT /api/v1/messages/settings": (c) => {
        autoRender = (c.body as { autoRender: boolean }).autoRender;
        return { body: { autoRender } };
      },
      "PUT /api/v1/campaigns/13": (c) => {
        items = items.map((x) => (x.id === 13 ? { ...x, ...(c.body as Partial<Campaign>) } : x));
        return { body: items[1] };
      },
    });
    const root = await mount(<Messages product={product} />);
    const rows = root.querySelectorAll("[data-testid=campaign-row]");
    expect(cells(rows[0]).slice(0, 7)).toEqual(["Welcome tour", "Active", "Page view on ^/app", "200", "25.0%", "15.0%", "1"]);
    expect(cells(rows[1]).slice(0, 7)).toEqual(["Pricing survey", "Draft", "checkout", "0", "—", "—", "2 (A/B)"]);
    expect(rows[0].querySelector("a")?.getAttribute("href")).toBe("/messages/12?product=3");
    expect(root.querySelector("[data-testid=auto-render-off]")?.textContent).toContain("1 campaign is active, but auto-render is off");

    await click(root.querySelector("button[aria-label='Activate Pricing survey']"));
    expect(calls.filter((c) => c.method === "PUT" && c.path === "/api/v1/campaigns/13").map((c) => c.body)).toEqual([{ status: "active" }]);
    expect(root.querySelector("[role=status].ok")?.textContent).toBe("Activate: Pricing survey is active.");
    expect(root.querySelector("[data-testid=auto-render-off]")?.textContent).toContain("2 campaigns are active");

    const toggle = root.querySelector<HTMLInputElement>("[data-testid=auto-render] input[role=switch]")!;
    expect(toggle.checked).toBe(false);
    await click(toggle);
    expect(calls.filter((c) => c.path === "/api/v1/messages/settings" && c.method === "PUT").map((c) => [c.body, c.query.get("product")])).toEqual([
      [{ autoRender: true }, "3"],
    ]);
    expect(root.querySelector<HTMLInputElement>("[data-testid=auto-render] input[role=switch]")?.checked).toBe(true);
    expect(root.querySelector("[data-testid=auto-render-off]")).toBeNull();
  });

  it("has an empty state that leads to the editor", async () => {
    fakeFetch({ "GET /api/v1/campaigns": { body: { items: [] } }, "GET /api/v1/messages/settings": { body: { autoRender: false } } });
    const root = await mount(<Messages product={product} />);
    expect(root.querySelector("[data-testid=no-campaigns] a")?.getAttribute("href")).toBe("/messages/new?product=3");
    expect(root.querySelector("[data-testid=auto-render-off]")).toBeNull();
  });
});

describe("campaign editor", () => {
  const editorRoutes = (post: (body: unknown) => { status?: number; body?: unknown }) => ({
    "GET /api/v1/query/events": { body: { events: [{ name: "checkout", count: 3 }, { name: "$pageview", count: 9 }] } },
    "GET /api/v1/products/3/cohorts": cohortList,
    "POST /api/v1/campaigns": (c: { body: unknown }) => post(c.body),
  });

  it("sends what was typed, and shows a refusal next to the field it names", async () => {
    let answer: { status?: number; body?: unknown } = badRequest("pathRegex: (?i) flags are not supported: they differ between Go and JavaScript");
    const calls = fakeFetch(editorRoutes(() => answer));
    history.replaceState(null, "", "/messages/new?product=3");
    const root = await mount(<CampaignPage product={product} id="new" />);
    const form = root.querySelector("form[aria-label='New campaign']")!;
    expect([...root.querySelectorAll("datalist option")].map((o) => o.getAttribute("value"))).toEqual(["$pageview", "$click", "$form_submit", "checkout"]);
    await type(form.querySelector("input[name=name]"), "Welcome tour");
    await type(form.querySelector("input[name=pathRegex]"), "(?i)x");
    await type(form.querySelector("[aria-label='Step 1 title']"), "Welcome");
    await click(byText(form, "button", "Markdown"));
    await type(form.querySelector("[aria-label='Step 1 body']"), "Hi **there**");
    await type(form.querySelector("[aria-label='Step 1 button label']"), "Start");
    await type(form.querySelector("[aria-label='Step 1 button address']"), "/start");
    await submit(form);
    const post = calls.filter((c) => c.method === "POST");
    expect(post).toHaveLength(1);
    expect(post[0].query.get("product")).toBe("3");
    expect(post[0].body).toEqual({
      name: "Welcome tour", trigger: { event: "$pageview" }, pathRegex: "(?i)x",
      audience: { identified: false, percentage: 100, conditions: [] }, cap: { kind: "once", count: 1 },
      variants: [{ key: "control", weight: 100, steps: [{ ...modal }] }],
    });
    const path = form.querySelector("input[name=pathRegex]")!;
    expect(path.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector(`#${path.getAttribute("aria-describedby")}`)?.textContent).toBe(
      "pathRegex: (?i) flags are not supported: they differ between Go and JavaScript",
    );
    expect(document.activeElement).toBe(path);

    // A fault deep in a step lands on its field; one the form has no field for, on its nearest parent.
    answer = badRequest("variants[0].steps[0].title: is required");
    await submit(form);
    expect(form.querySelector("[aria-label='Step 1 title']")?.getAttribute("aria-invalid")).toBe("true");
    expect(path.getAttribute("aria-invalid")).toBeNull();
    answer = badRequest("variants[0].steps[0].cta.target: unknown");
    await submit(form);
    expect(form.querySelector("[data-field='variants[0].steps[0].cta']")?.textContent).toBe("variants[0].steps[0].cta.target: unknown");
  });

  it("asks a survey question, adds an A/B variant with the same steps, and reorders steps", async () => {
    const calls = fakeFetch(editorRoutes((b) => ({ status: 201, body: campaign({ ...(b as Partial<Campaign>), id: 14 }) })));
    history.replaceState(null, "", "/messages/new?product=3");
    const root = await mount(<CampaignPage product={product} id="new" />);
    const form = root.querySelector("form")!;
    await type(form.querySelector("input[name=name]"), "NPS");
    await type(form.querySelector("[aria-label='Step 1 title']"), "First");
    await click(byText(form, "button", "Add step"));
    const kind = form.querySelector<HTMLSelectElement>("[aria-label='Step 2 kind']")!;
    await act(() => {
      kind.value = "survey";
      kind.dispatchEvent(new Event("change", { bubbles: true }));
    });
    const qtype = form.querySelector<HTMLSelectElement>("[aria-label='Step 2 question type']")!;
    await act(() => {
      qtype.value = "single";
      qtype.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await type(form.querySelector("[aria-label='Step 2 prompt']"), "Which plan?");
    await type(form.querySelector("[aria-label='Step 2 choice 1']"), "Free");
    await type(form.querySelector("[aria-label='Step 2 choice 2']"), "Pro");
    await click(form.querySelector("[aria-label='Move Step 2 up']"));
    expect(form.querySelector<HTMLInputElement>("[aria-label='Step 1 prompt']")?.value).toBe("Which plan?");
    expect(form.querySelector<HTMLInputElement>("[aria-label='Step 2 title']")?.value).toBe("First");

    await click(byText(form, "button", "Add A/B variant"));
    expect(form.querySelectorAll("[data-testid=variant]")).toHaveLength(2);
    expect(form.querySelector<HTMLInputElement>("[aria-label='Variant 2 key']")?.value).toBe("variant_b");
    expect(form.querySelector("[data-testid=weight-sum]")?.textContent).toBe("Weights sum to 100%.");
    await type(form.querySelector("[aria-label='Variant 2 step 2 title']"), "Second");
    await submit(form);
    const body = calls.find((c) => c.method === "POST")?.body as Campaign;
    const question = { id: "q2", type: "single", prompt: "Which plan?", scale: 0, choices: ["Free", "Pro"] };
    expect(body.variants.map((v) => [v.key, v.weight, v.steps.map((s) => [s.kind, s.title, s.question])])).toEqual([
      ["control", 50, [["survey", "", question], ["modal", "First", null]]],
      ["variant_b", 50, [["survey", "", question], ["modal", "Second", null]]],
    ]);
    expect(location.pathname).toBe("/messages/14");
  });

  it("targets a cohort picked by name, sends it as a cohort condition, and shows its refusal on its row", async () => {
    const calls = fakeFetch(editorRoutes(() => badRequest("audience.conditions[0].cohortId: must be the id of a cohort of this product")));
    const root = await mount(<CampaignPage product={product} id="new" />);
    const form = root.querySelector("form[aria-label='New campaign']")!;
    await type(form.querySelector("input[name=name]"), "Win back");
    await type(form.querySelector("[aria-label='Step 1 title']"), "Come back");
    await click(byText(form, "button", "Add condition"));
    await click(byText(form, "button", "Add condition"));
    await choose(form.querySelector("[aria-label='Condition 1 kind']"), "cohort");
    expect(form.querySelector("[aria-label='Condition 1 trait']")).toBeNull();
    const picker = form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 cohort']")!;
    expect([...picker.options].map((o) => o.textContent)).toEqual(["Pick a cohort", "Paying", "Churned"]);
    await type(form.querySelector("[aria-label='Condition 2 trait']"), "plan");
    await type(form.querySelector("[aria-label='Condition 2 value']"), "pro");

    // Not picked, the cohort is asked for before anything is sent.
    await submit(form);
    expect(calls.filter((c) => c.method === "POST")).toEqual([]);
    expect(form.querySelector("[data-field='audience.conditions[0].cohortId']")?.textContent).toBe("Pick a cohort.");

    await choose(form.querySelector("[aria-label='Condition 1 operator']"), "not_in");
    await choose(picker, "7");
    await submit(form);
    const post = calls.filter((c) => c.method === "POST");
    expect(post).toHaveLength(1);
    expect((post[0].body as Campaign).audience.conditions).toEqual([
      { type: "cohort", cohortId: 7, op: "not_in", value: "" },
      { trait: "plan", op: "eq", value: "pro" },
    ]);
    expect(picker.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector(`#${picker.getAttribute("aria-describedby")}`)?.textContent).toBe(
      "audience.conditions[0].cohortId: must be the id of a cohort of this product",
    );
    const rows = form.querySelectorAll("[data-testid=condition-row]");
    expect(rows[0].querySelector("[data-field]")?.getAttribute("data-field")).toBe("audience.conditions[0].cohortId");
    expect(rows[1].querySelector("[data-field]")).toBeNull();
    expect(document.activeElement).toBe(picker);
  });

  it("loads a stored cohort condition as a cohort row with its cohort picked, and saves it back as it came", async () => {
    const conditions: Campaign["audience"]["conditions"] = [
      { trait: "plan", op: "exists", value: "" },
      { type: "cohort", cohortId: 8, op: "in", value: "" },
    ];
    const stored = campaign({ audience: { identified: true, percentage: 50, conditions } });
    const calls = fakeFetch({
      "GET /api/v1/campaigns/12": { body: stored },
      "GET /api/v1/query/events": { body: { events: [] } },
      "GET /api/v1/products/3/cohorts": cohortList,
      "PUT /api/v1/campaigns/12": (c) => ({ body: { ...stored, ...(c.body as object) } }),
    });
    const root = await mount(<CampaignPage product={product} id={12} />);
    const form = root.querySelector("form[aria-label='Change Welcome tour']")!;
    expect(form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 kind']")?.value).toBe("trait");
    expect(form.querySelector<HTMLInputElement>("[aria-label='Condition 1 trait']")?.value).toBe("plan");
    expect(form.querySelector<HTMLSelectElement>("[aria-label='Condition 2 kind']")?.value).toBe("cohort");
    expect(form.querySelector<HTMLSelectElement>("[aria-label='Condition 2 operator']")?.value).toBe("in");
    const picker = form.querySelector<HTMLSelectElement>("[aria-label='Condition 2 cohort']")!;
    expect([picker.value, picker.selectedOptions[0]?.textContent]).toEqual(["8", "Churned"]);
    await submit(form);
    expect((calls.find((c) => c.method === "PUT")?.body as Campaign).audience.conditions).toEqual(conditions);
  });

  it("posts the step being edited to the sandboxed preview frame as it is typed", async () => {
    fakeFetch(editorRoutes(() => ({ status: 500 })));
    const root = await mount(<CampaignPage product={product} id="new" />);
    const frame = root.querySelector<HTMLIFrameElement>("iframe[title='Message preview']")!;
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.getAttribute("src")).toBe(previewPath);
    // The frame's page is not loaded here: a stand-in window records what is posted to it.
    const posted: unknown[] = [];
    const target = { postMessage: (m: unknown) => void posted.push(m) } as unknown as Window;
    Object.defineProperty(frame, "contentWindow", { value: target });
    // Nothing is posted until the frame says its renderer is there.
    await type(root.querySelector("[aria-label='Step 1 title']"), "Hel");
    expect(posted).toEqual([]);
    await act(() => void window.dispatchEvent(new MessageEvent("message", { data: { type: "strata:preview-ready", renderer: true }, source: target })));
    await settle();
    await type(root.querySelector("[aria-label='Step 1 title']"), "Hell");
    await type(root.querySelector("[aria-label='Step 1 title']"), "Hello");
    await act(() => new Promise((r) => setTimeout(r, redrawDelayMs + 20)));
    await settle();
    // Drawn once typing paused, with what was typed last.
    expect(posted.filter((m) => (m as { step: { title: string } }).step.title === "Hell")).toEqual([]);
    const last = posted[posted.length - 1] as { type: string; step: { title: string }; stepIndex: number; stepCount: number };
    expect(last).toMatchObject({ type: "strata:preview", step: { kind: "modal", title: "Hello" }, stepIndex: 0, stepCount: 1 });
    expect(root.querySelector("[data-testid=message-preview]")?.getAttribute("data-state")).toBe("ready");

    // Messages from anything but the frame are ignored; a frame without the renderer says so.
    await act(() => void window.dispatchEvent(new MessageEvent("message", { data: { type: "strata:preview-ready", renderer: false }, source: window })));
    expect(root.querySelector("[data-testid=preview-unavailable]")).toBeNull();
    await act(() => void window.dispatchEvent(new MessageEvent("message", { data: { type: "strata:preview-ready", renderer: false }, source: target })));
    expect(root.querySelector("[data-testid=preview-unavailable]")?.textContent).toContain("/sdk/v1/messages.min.js");
  });
});

describe("a campaign's page", () => {
  const survey = (): Campaign =>
    campaign({
      status: "active", experimentId: 5, flagKey: "message_welcome_tour",
      variants: [
        { key: "control", weight: 50, steps: [{ ...modal, kind: "survey", title: "", cta: null, question: { id: "nps", type: "nps", prompt: "Recommend us?", scale: 0, choices: [] } }] },
        { key: "variant_b", weight: 50, steps: [{ ...modal, kind: "survey", title: "", cta: null, question: { id: "plan", type: "single", prompt: "Which plan?", scale: 0, choices: ["Free", "Pro"] } }] },
      ],
    });
  const scale = (got: Record<string, number>) => Array.from({ length: 11 }, (_, v) => ({ value: String(v), count: got[v] ?? 0 }));
  const answers: SurveyResults = {
    responses: 5,
    questions: [
      { id: "nps", type: "nps", prompt: "Recommend us?", answers: 4, counts: scale({ 10: 2, 3: 1, 8: 1 }), nps: { score: 25, promoters: 2, passives: 1, detractors: 1 }, recent: [] },
      { id: "plan", type: "single", prompt: "Which plan?", answers: 2, counts: [{ value: "Free", count: 0 }, { value: "Pro", count: 2 }], nps: null, recent: [] },
      { id: "why", type: "text", prompt: "Why?", answers: 2, counts: [], nps: null, recent: ["Fast", "<b>Cheap</b>"] },
    ],
  };
  const results = {
    experimentId: 5, flagKey: "message_welcome_tour", status: "running", pauseReason: "", from: "2026-11-22T00:00:00Z", to: "2026-11-24T00:00:00Z",
    arms: [{ variant: "control", weight: 50, exposed: 10 }, { variant: "variant_b", weight: 50, exposed: 12 }],
    holdout: 0, excluded: 0, multipleArms: 0, minExposedPerArm: 100, enoughData: false, recommendedPerArm: null, timeline: [], sampleRatio: null,
    metrics: [{
      event: "message_cta_click", label: "message_cta_click", primary: true,
      arms: [
        { variant: "control", exposed: 10, converted: 2, rate: 0.2, absoluteUplift: null, relativeUplift: null, pValue: null, chanceToBeatControl: null },
        { variant: "variant_b", exposed: 12, converted: 6, rate: 0.5, absoluteUplift: null, relativeUplift: null, pValue: 0.2, chanceToBeatControl: 0.9 },
      ],
    }],
  } as unknown as ExperimentResults;

  it("shows the experiment's headline, the survey's answers per question with the NPS score, and the CSV link", async () => {
    const calls = fakeFetch({
      "GET /api/v1/campaigns/12": { body: survey() },
      "GET /api/v1/experiments/5": { body: { id: 5, name: "Welcome tour", status: "running", pauseReason: "", flagId: 9, flagKey: "message_welcome_tour" } },
      "GET /api/v1/experiments/5/results": { body: results },
      "GET /api/v1/campaigns/12/survey": { body: answers },
      "GET /api/v1/query/events": { body: { events: [] } },
      "PUT /api/v1/campaigns/12": (c) => ({ body: { ...survey(), ...(c.body as object) } }),
    });
    const root = await mount(<CampaignPage product={product} id={12} />);
    expect(root.querySelector("h1")?.textContent).toBe("Welcome tour");
    const variants = root.querySelector("[data-testid=variant-results]")!;
    expect(byText(variants, "a", "Open the experiment")?.getAttribute("href")).toBe("/experiments/5?product=3");
    expect([...variants.querySelectorAll("[data-testid=arm-result]")].map((r) => cells(r).slice(0, 4))).toEqual([
      ["control", "10", "2", "20.0%"],
      ["variant_b", "12", "6", "50.0%"],
    ]);

    const [nps, plan, why] = root.querySelectorAll("[data-testid=survey-question]");
    expect(nps.querySelector("[data-testid=answers]")?.textContent).toBe("4 answers");
    expect(nps.querySelector("[data-testid=nps]")?.textContent).toBe("NPS +25");
    const npsRows = [...nps.querySelectorAll("[data-testid=survey-count]")].map((r) => cells(r));
    expect(npsRows).toHaveLength(11);
    expect(npsRows[10]).toEqual(["10", "", "2", "50.0%"]);
    expect(npsRows[0]).toEqual(["0", "", "0", "0.0%"]);
    expect([...plan.querySelectorAll("[data-testid=survey-count]")].map((r) => cells(r))).toEqual([
      ["Free", "", "0", "0.0%"],
      ["Pro", "", "2", "100.0%"],
    ]);
    expect(plan.querySelector("[data-testid=nps]")).toBeNull();
    expect([...why.querySelectorAll("[data-testid=survey-text]")].map((li) => li.textContent)).toEqual(["Fast", "<b>Cheap</b>"]);
    expect(why.querySelector("b")).toBeNull();
    expect(byText(root, "a", "Download CSV")?.getAttribute("href")).toBe("/api/v1/campaigns/12/survey.csv?product=3");

    await click(byText(root, "button", "Pause"));
    expect(calls.filter((c) => c.method === "PUT").map((c) => c.body)).toEqual([{ status: "paused" }]);
    expect(root.querySelector("[data-testid=campaign-status]")?.textContent).toBe("Paused");
    expect(byText(root, "button", "Activate")).toBeTruthy();
  });
});

describe("routes", () => {
  it("opens the editor at /messages/new and a campaign at /messages/{id}, and another product's list from either", async () => {
    const products = { items: [product, { ...product, id: 4, name: "Blog" }] };
    fakeFetch({
      "GET /api/v1/dashboard/config": { body: { setupRequired: false, features: { errorTracking: false } } },
      "GET /api/v1/session": { body: { user: { id: 1, email: "owner@example.com", role: "owner" } } },
      "GET /api/v1/products": { body: products },
      "GET /api/v1/query/events": { body: { events: [] } },
      "GET /api/v1/campaigns/12": { body: campaign() },
      "GET /api/v1/campaigns": { body: { items: [] } },
      "GET /api/v1/messages/settings": { body: { autoRender: false } },
    });
    history.replaceState(null, "", "/messages/new?product=3");
    let root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe("New campaign");
    expect(root.querySelector(".nav-item.active")?.textContent).toBe("Messages");
    history.replaceState(null, "", "/messages/12?product=3");
    root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe("Welcome tour");
    const switcher = root.querySelector<HTMLSelectElement>("select[aria-label=Product]")!;
    await act(() => {
      switcher.value = "4";
      switcher.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle();
    expect(location.pathname + location.search).toBe("/messages?product=4");
  });
});

describe("the editor's model", () => {
  it("places a fault on the nearest field the form has", () => {
    const has = (f: string) => ["variants[0].steps[1].question.choices", "pathRegex"].includes(f);
    expect(closestField("variants[0].steps[1].question.choices[3]", has)).toBe("variants[0].steps[1].question.choices");
    expect(closestField("pathRegex", has)).toBe("pathRegex");
    expect(closestField("nothing.here", has)).toBe("");
  });

  it("sends only the fields a step's kind uses, and checks numbers before asking", () => {
    const d = newCampaign();
    d.variants[0].steps[0] = { ...d.variants[0].steps[0], kind: "banner", selector: "#x", placement: "bottom", ctaLabel: " ", ctaUrl: "" };
    expect(stepOf(d.variants[0].steps[0])).toMatchObject({ kind: "banner", selector: "", placement: "bottom", cta: null, question: null });
    d.percentage = "";
    d.capKind = "per_day";
    d.capCount = "0";
    expect(writeOf(d).errors).toEqual({ "audience.percentage": "Enter a percentage from 0 to 100.", "cap.count": "Enter a whole number of times, 1 or more." });
  });

  it("splits the weights evenly as variants are added, up to four", () => {
    let vs = newCampaign().variants;
    for (let i = 0; i < 5; i++) vs = addVariant(vs);
    expect(vs.map((v) => [v.key, v.weight])).toEqual([["control", "25"], ["variant_b", "25"], ["variant_c", "25"], ["variant_d", "25"]]);
    expect(addVariant(vs.slice(0, 2)).map((v) => v.weight)).toEqual(["34", "33", "33"]);
  });

  it("writes NPS scores signed and rounded", () => {
    expect([npsText(33.333), npsText(-8.4), npsText(0), npsText(-0.2)]).toEqual(["+33", "\u22128", "0", "0"]);
  });
});

describe("roles", () => {
  const routes = () => ({
    "GET /api/v1/campaigns": { body: { items: [campaign()] } },
    "GET /api/v1/messages/settings": { body: { autoRender: true } },
    "GET /api/v1/campaigns/12": { body: campaign() },
    "GET /api/v1/query/events": { body: { events: [] } },
  });

  it("shows a viewer the campaigns without New campaign or status changes, and auto-render disabled with the reason", async () => {
    fakeFetch(routes());
    const viewer = await mount(asRole("viewer", <Messages product={product} />));
    expect(viewer.querySelector("[data-testid=campaign-row]")).not.toBeNull();
    expect(byText(viewer, "a", "New campaign")).toBeUndefined();
    expect(byText(viewer, "button", "Activate")).toBeUndefined();
    expect(viewer.querySelector("[data-testid=campaign-row] a.button")?.textContent).toBe("Open Welcome tour");
    const toggle = viewer.querySelector<HTMLInputElement>("[data-testid=auto-render] input[role=switch]")!;
    expect(toggle.checked).toBe(true);
    expect(toggle.disabled).toBe(true);
    expect(toggle.title).toBe("Needs the member role");
    fakeFetch(routes());
    const member = await mount(asRole("member", <Messages product={product} />));
    expect(byText(member, "a", "New campaign")).toBeDefined();
    expect(byText(member, "button", "Activate")).toBeDefined();
    expect(member.querySelector<HTMLInputElement>("[data-testid=auto-render] input[role=switch]")?.disabled).toBe(false);
  });

  it("shows a viewer a campaign read-only, a member its status changes and Save but no Delete, an admin Delete", async () => {
    fakeFetch(routes());
    const viewer = await mount(asRole("viewer", <CampaignPage product={product} id={12} />));
    const form = viewer.querySelector("form[aria-label='Change Welcome tour']")!;
    expect(form.querySelector<HTMLInputElement>("input[name=name]")?.value).toBe("Welcome tour");
    expect(form.querySelector<HTMLFieldSetElement>("fieldset.contents")?.disabled).toBe(true);
    for (const label of ["Activate", "Save changes", "Delete"]) expect(byText(viewer, "button", label), label).toBeUndefined();
    fakeFetch(routes());
    const member = await mount(asRole("member", <CampaignPage product={product} id={12} />));
    expect(member.querySelector<HTMLFieldSetElement>("fieldset.contents")?.disabled).toBe(false);
    for (const label of ["Activate", "Save changes"]) expect(byText(member, "button", label), label).toBeDefined();
    expect(byText(member, "button", "Delete")).toBeUndefined();
    fakeFetch(routes());
    const admin = await mount(asRole("admin", <CampaignPage product={product} id={12} />));
    expect(byText(admin, "button", "Delete")).toBeDefined();
  });
});
