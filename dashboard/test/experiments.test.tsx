// The Flags and Experiments pages: the flag form sends what was typed and
// puts the server's refusals next to their field, the audit trail, the
// experiment form's defaults, and an experiment's results (numbers from a
// fixture, the too-early guidance, the sample-ratio banner, applying the
// winner only after confirmation).
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "../src/app";
import { activeItem, navItems } from "../src/components/nav";
import { ExperimentPage, ResultsView } from "../src/pages/Experiment";
import { Experiments } from "../src/pages/Experiments";
import { FlagPage, Flags } from "../src/pages/Flags";
import type { Experiment, ExperimentResults, Flag, FlagChange, Product } from "../src/types";
import { asRole, byText, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };

const flag = (over: Partial<Flag> = {}): Flag => ({
  id: 5, productId: 3, key: "pricing_copy_test", name: "Pricing copy test", description: "", enabled: true, rollout: 100,
  variants: [{ key: "control", weight: 50 }, { key: "treatment", weight: 50, payload: { headline: "Start free" } }],
  conditions: [], createdAt: "2026-11-20T10:00:00Z", updatedAt: "2026-11-21T10:00:00Z", ...over,
});

const experiment = (over: Partial<Experiment> = {}): Experiment => ({
  id: 7, productId: 3, flagId: 5, flagKey: "pricing_copy_test", name: "Pricing copy", holdout: 10, primaryEvent: "signup",
  secondaryEvents: ["checkout"], startDate: null, endDate: null, status: "running", pauseReason: "", winner: "",
  startedAt: "2026-11-22T08:00:00Z", sampleRatio: null, createdAt: "2026-11-21T10:00:00Z", updatedAt: "2026-11-22T08:00:00Z", ...over,
});

const est = (estimate: number, low: number, high: number) => ({ estimate, low, high });

const results = (over: Partial<ExperimentResults> = {}): ExperimentResults => ({
  experimentId: 7, flagKey: "pricing_copy_test", status: "running", pauseReason: "",
  from: "2026-11-22T00:00:00Z", to: "2026-11-24T12:00:00Z",
  arms: [{ variant: "control", weight: 50, exposed: 1000 }, { variant: "treatment", weight: 50, exposed: 1000 }],
  holdout: 112, excluded: 40, multipleArms: 3, minExposedPerArm: 100, enoughData: true, recommendedPerArm: 14_745,
  metrics: [
    {
      event: "signup", label: "signup", primary: true,
      arms: [
        { variant: "control", exposed: 1000, converted: 100, rate: 0.1, absoluteUplift: null, relativeUplift: null, pValue: null, chanceToBeatControl: null },
        {
          variant: "treatment", exposed: 1000, converted: 125, rate: 0.125, absoluteUplift: est(0.025, -0.0018, 0.0518),
          relativeUplift: est(0.25, -0.02, 0.52), pValue: 0.0821, chanceToBeatControl: 0.9589,
        },
      ],
    },
    {
      event: "checkout", label: "checkout", primary: false,
      arms: [
        { variant: "control", exposed: 1000, converted: 40, rate: 0.04, absoluteUplift: null, relativeUplift: null, pValue: null, chanceToBeatControl: null },
        {
          variant: "treatment", exposed: 1000, converted: 80, rate: 0.08, absoluteUplift: est(0.04, 0.0193, 0.0607),
          relativeUplift: est(1, 0.36, 1.64), pValue: 0.0002, chanceToBeatControl: 0.99995,
        },
      ],
    },
  ],
  timeline: [
    { date: "2026-11-22", variant: "control", exposed: 400, converted: 36, rate: 0.09 },
    { date: "2026-11-22", variant: "treatment", exposed: 410, converted: 45, rate: 0.1098 },
    { date: "2026-11-23", variant: "control", exposed: 1000, converted: 100, rate: 0.1 },
    { date: "2026-11-23", variant: "treatment", exposed: 1000, converted: 125, rate: 0.125 },
  ],
  sampleRatio: null,
  ...over,
});

const cells = (row: Element | null | undefined) => [...(row?.querySelectorAll("th, td") ?? [])].map((c) => c.textContent?.trim());
const badRequest = (message: string) => ({ status: 400, body: { error: { code: "invalid_request", message } } });

describe("flag form", () => {
  it("sends what was entered, with the payload parsed as JSON, and lists the new flag", async () => {
    let flags: Flag[] = [];
    const calls = fakeFetch({
      "GET /api/v1/flags": () => ({ body: { items: flags } }),
      "GET /api/v1/experiments": { body: { items: [] } },
      "POST /api/v1/flags": (c) => {
        flags = [flag({ ...(c.body as Partial<Flag>), key: "pricing_copy_test" })];
        return { status: 201, body: flags[0] };
      },
    });
    const root = await mount(<Flags product={product} />);
    expect(root.querySelector("[data-testid=no-flags]")).toBeTruthy();
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await type(form.querySelector("input[name=name]"), "Pricing copy test");
    expect(form.querySelector<HTMLInputElement>("input[name=key]")?.placeholder).toBe("pricing_copy_test");
    await type(form.querySelector("textarea[name=description]"), "Headline on /pricing");
    await click(form.querySelector("input[name=enabled]"));
    await type(form.querySelector("input[name=rollout]"), "25.5");
    await click(byText(form, "button", "Split into arms"));
    await type(form.querySelector("[aria-label='Arm 2 weight (%)']"), "50");
    await type(form.querySelector("[aria-label='Arm 2 payload (JSON, optional)']"), '{"headline": "Start free"}');
    await submit(form);
    const post = calls.filter((c) => c.method === "POST");
    expect(post).toHaveLength(1);
    expect(post[0].query.get("product")).toBe("3");
    expect(post[0].body).toEqual({
      name: "Pricing copy test", description: "Headline on /pricing", enabled: true, rollout: 25.5,
      variants: [{ key: "control", weight: 50 }, { key: "treatment", weight: 50, payload: { headline: "Start free" } }], conditions: [],
    });
    expect(root.querySelector("[role=status]")?.textContent).toBe("Created pricing_copy_test.");
    const row = root.querySelector("[data-testid=flag-row]");
    expect(cells(row).slice(0, 5)).toEqual(["pricing_copy_test", "Pricing copy test", "On", "25.5%", "control 50% · treatment 50%"]);
  });

  it("checks payloads are JSON before sending, and shows a 400 next to its field", async () => {
    let answer = badRequest("variants: the weights must sum to 100, not 99");
    const calls = fakeFetch({
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "POST /api/v1/flags": () => answer,
    });
    const root = await mount(<Flags product={product} />);
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await type(form.querySelector("input[name=name]"), "Checkout");
    await click(byText(form, "button", "Split into arms"));
    await type(form.querySelector("[aria-label='Arm 1 payload (JSON, optional)']"), "{headline: nope}");
    await submit(form);
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(0);
    const payload = form.querySelector("[aria-label='Arm 1 payload (JSON, optional)']")!;
    expect(payload.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector(`#${payload.getAttribute("aria-describedby")}`)?.textContent).toMatch(/^Arm 1: the payload is not valid JSON/);
    expect(document.activeElement).toBe(payload);

    await type(payload, "");
    await type(form.querySelector("[aria-label='Arm 2 weight (%)']"), "49");
    await submit(form);
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(1);
    const weights = form.querySelector("fieldset.arms")!;
    expect(weights.querySelector("[data-field=variants]")?.textContent).toBe("variants: the weights must sum to 100, not 99");
    expect(weights.querySelector("[data-testid=weight-sum]")?.textContent).toBe("Weights sum to 99%; they must sum to 100%.");

    answer = badRequest('variants[1].key: must be 1 to 64 lower-case letters and digits, with single _ or - between them (pricing_copy_test), not "Big"');
    await type(form.querySelector("[aria-label='Arm 2 key']"), "Big");
    await submit(form);
    const key = form.querySelector("[aria-label='Arm 2 key']")!;
    expect(key.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector(`#${key.getAttribute("aria-describedby")}`)?.textContent).toMatch(/^variants\[1\]\.key: must be 1 to 64/);
    expect(document.activeElement).toBe(key);
    expect(weights.querySelector("[data-field=variants]")).toBeNull();

    answer = badRequest("name: must be at most 120 characters, not 130");
    await submit(form);
    expect(form.querySelector("input[name=name]")?.getAttribute("aria-invalid")).toBe("true");
    expect(form.querySelector("[data-field=name]")?.textContent).toBe("name: must be at most 120 characters, not 130");
  });

  it("shows the flag's audit trail, and a running experiment's refusal next to the arms", async () => {
    const trail: FlagChange[] = [
      {
        id: 2, flagId: 5, flagKey: "pricing_copy_test", action: "updated", actor: "owner@example.com", at: "2026-11-21T10:00:00Z",
        changes: [{ field: "rollout", from: 50, to: 100 }, { field: "enabled", from: false, to: true }],
      },
      {
        id: 1, flagId: 5, flagKey: "pricing_copy_test", action: "created", actor: "owner@example.com", at: "2026-11-20T10:00:00Z",
        changes: [{ field: "key", from: null, to: "pricing_copy_test" }, { field: "variants", from: null, to: [{ key: "control", weight: 50 }, { key: "treatment", weight: 50 }] }],
      },
    ];
    const calls = fakeFetch({
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments": { body: { items: [experiment()] } },
      "GET /api/v1/flags/5/changes": { body: { items: trail } },
      "PUT /api/v1/flags/5": {
        status: 409,
        body: { error: { code: "experiment_running", message: "The flag's experiment is running: pause it (or apply a winner) before changing its arms or weights." } },
      },
    });
    const root = await mount(<FlagPage product={product} id={5} />);
    expect(root.querySelector("h1")?.textContent).toBe("Pricing copy test");
    expect(root.querySelector("[data-testid=flag-experiment]")?.textContent).toContain("arms and weights cannot change");
    const entries = root.querySelectorAll("[data-testid=audit-entry]");
    expect(entries).toHaveLength(2);
    expect(entries[0].querySelector(".audit-head")?.textContent).toBe("Updated by owner@example.com · 21 Nov 2026, 10:00 UTC");
    expect([...entries[0].querySelectorAll("tbody tr")].map(cells)).toEqual([["rollout", "50%", "100%"], ["enabled", "Off", "On"]]);
    expect([...entries[1].querySelectorAll("tbody tr")].map(cells)).toEqual([
      ["key", "—", "pricing_copy_test"],
      ["variants", "—", "control 50% · treatment 50%"],
    ]);

    const form = root.querySelector("form[aria-label='Change pricing_copy_test']")!;
    expect(form.querySelector<HTMLInputElement>("input[name=key]")?.readOnly).toBe(true);
    expect(form.querySelector<HTMLTextAreaElement>("[aria-label='Arm 2 payload (JSON, optional)']")?.value).toBe('{\n  "headline": "Start free"\n}');
    await type(form.querySelector("[aria-label='Arm 1 weight (%)']"), "60");
    await type(form.querySelector("[aria-label='Arm 2 weight (%)']"), "40");
    await submit(form);
    expect(calls.find((c) => c.method === "PUT")?.body).toMatchObject({ variants: [{ key: "control", weight: 60 }, { key: "treatment", weight: 40 }] });
    expect(form.querySelector("fieldset.arms [data-field=variants]")?.textContent).toBe(
      "The flag's experiment is running: pause it (or apply a winner) before changing its arms or weights.",
    );
  });

  it("switches a flag on from the list", async () => {
    let current = flag({ enabled: false });
    const calls = fakeFetch({
      "GET /api/v1/flags": () => ({ body: { items: [current] } }),
      "GET /api/v1/experiments": { body: { items: [] } },
      "PUT /api/v1/flags/5": (c) => {
        current = { ...current, ...(c.body as Partial<Flag>) };
        return { body: current };
      },
    });
    const root = await mount(<Flags product={product} />);
    const toggle = root.querySelector<HTMLInputElement>("[role=switch][aria-label='Enabled: pricing_copy_test']")!;
    expect(toggle.checked).toBe(false);
    await click(toggle);
    expect(calls.filter((c) => c.method === "PUT").map((c) => c.body)).toEqual([{ enabled: true }]);
    expect(root.querySelector<HTMLInputElement>("[role=switch]")?.checked).toBe(true);
  });

  it("deletes a flag only after confirmation", async () => {
    let flags = [flag()];
    const calls = fakeFetch({
      "GET /api/v1/flags": () => ({ body: { items: flags } }),
      "GET /api/v1/experiments": { body: { items: [] } },
      "DELETE /api/v1/flags/5": () => {
        flags = [];
        return { status: 204 };
      },
    });
    const root = await mount(<Flags product={product} />);
    await click(root.querySelector("button[aria-label='Delete pricing_copy_test']"));
    expect(root.querySelector("[role=alertdialog]")?.textContent).toContain("Delete pricing_copy_test?");
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Cancel"));
    expect(calls.filter((c) => c.method === "DELETE")).toHaveLength(0);
    await click(root.querySelector("button[aria-label='Delete pricing_copy_test']"));
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Delete flag"));
    expect(calls.filter((c) => c.method === "DELETE")).toHaveLength(1);
    expect(root.querySelector("[data-testid=no-flags]")).toBeTruthy();
  });
});

describe("experiments", () => {
  it("creates an experiment with control and treatment at 50/50 by default, and starts it from the list", async () => {
    let items: Experiment[] = [];
    const calls = fakeFetch({
      "GET /api/v1/experiments": () => ({ body: { items } }),
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/query/events": { body: { events: [{ name: "signup", count: 12 }] } },
      "POST /api/v1/experiments": () => {
        items = [experiment({ status: "draft", startedAt: null, name: "Checkout copy", holdout: 0, primaryEvent: "", secondaryEvents: [] })];
        return { status: 201, body: items[0] };
      },
      "POST /api/v1/experiments/7/start": () => {
        items = [{ ...items[0], status: "running", startedAt: "2026-11-24T10:00:00Z" }];
        return { body: items[0] };
      },
    });
    const root = await mount(<Experiments product={product} />);
    await click(byText(root, "button", "New experiment"));
    const form = root.querySelector("form[aria-label='New experiment']")!;
    expect([...form.querySelectorAll<HTMLInputElement>("[data-testid=arm-row] input")].map((i) => i.value)).toEqual(["control", "50", "treatment", "50"]);
    await type(form.querySelector("input[name=name]"), "Checkout copy");
    await click(byText(form, "button", "Add secondary metric"));
    await click(byText(form, "button", "Add secondary metric"));
    await type(form.querySelector("[aria-label='Secondary metric 2']"), "checkout");
    await submit(form);
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      name: "Checkout copy", holdout: 0, primaryEvent: "", secondaryEvents: ["checkout"],
      variants: [{ key: "control", weight: 50 }, { key: "treatment", weight: 50 }],
    });
    const row = root.querySelector("[data-testid=experiment-row]");
    expect(cells(row).slice(0, 4)).toEqual(["Checkout copy", "pricing_copy_test", "Draft", "Not started"]);
    await click(root.querySelector("button[aria-label='Start Checkout copy']"));
    expect(cells(root.querySelector("[data-testid=experiment-row]")).slice(2, 4)).toEqual(["Running", "24 Nov 2026, 10:00 UTC"]);
    expect(root.querySelector("button[aria-label='Pause Checkout copy']")).toBeTruthy();
  });

  it("puts a refused secondary metric next to its own row", async () => {
    fakeFetch({
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/flags": { body: { items: [] } },
      "POST /api/v1/experiments": badRequest("secondaryEvents[0]: must be an event name of 1 to 255 characters, not 300"),
    });
    const root = await mount(<Experiments product={product} />);
    await click(byText(root, "button", "New experiment"));
    const form = root.querySelector("form[aria-label='New experiment']")!;
    await type(form.querySelector("input[name=name]"), "Long names");
    await click(byText(form, "button", "Add secondary metric"));
    await click(byText(form, "button", "Add secondary metric"));
    await type(form.querySelector("[aria-label='Secondary metric 2']"), "x".repeat(300));
    await submit(form);
    // The empty first row is not sent, so the API's index 0 is the second row.
    expect(form.querySelector("[aria-label='Secondary metric 2']")?.getAttribute("aria-invalid")).toBe("true");
    expect(form.querySelector("[aria-label='Secondary metric 1']")?.getAttribute("aria-invalid")).toBeNull();
  });
});

describe("experiment results", () => {
  // Charts stop at now (TimeChart): a fixed clock after the results' days keeps them whole.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime("2026-11-24T12:00:00Z");
  });
  afterEach(() => vi.useRealTimers());

  it("shows each arm's numbers, uplifts with their interval, p-value and chance to beat control", async () => {
    const root = await mount(<ResultsView results={results()} />);
    const tables = root.querySelectorAll("table[aria-label^='Results:']");
    expect(tables).toHaveLength(2);
    const primary = tables[0].querySelectorAll("tbody tr");
    expect(cells(primary[0])).toEqual(["control", "1,000", "100", "10.0%", "—", "—", "—", "—"]);
    expect(cells(primary[1])).toEqual([
      "treatment", "1,000", "125", "12.5%", "+2.5 pp (−0.2 pp to +5.2 pp)", "+25.0% (−2.0% to +52.0%)", "0.082", "95.9%",
    ]);
    const secondary = tables[1].querySelectorAll("tbody tr");
    expect(cells(secondary[1])).toEqual([
      "treatment", "1,000", "80", "8.0%", "+4.0 pp (+1.9 pp to +6.1 pp)", "+100.0% (+36.0% to +164.0%)", "< 0.001", "> 99.9%",
    ]);
    // An interval clear of zero is marked better.
    expect(secondary[1].querySelector(".uplift")?.classList.contains("better")).toBe(true);
    expect(primary[1].querySelector(".uplift")?.classList.contains("better")).toBe(false);
    expect(root.querySelector("[data-testid=left-out]")?.textContent).toBe(
      "Left out of every arm: 112 holdout users, 40 users outside the flag's rollout and 3 users exposed to more than one arm.",
    );
    expect(root.querySelector("[data-testid=too-early]")).toBeNull();
    // The chart's numbers, as a table: the cumulative rate per day and arm.
    const chart = root.querySelector(".time-chart .data-table tbody");
    expect([...(chart?.querySelectorAll("tr") ?? [])].map((r) => cells(r).slice(1))).toEqual([["9.0%", "11.0%"], ["10.0%", "12.5%"]]);
  });

  it("says it is too early while an arm has fewer exposed users than the minimum", async () => {
    const r = results({
      enoughData: false, recommendedPerArm: 3900,
      arms: [{ variant: "control", weight: 50, exposed: 120 }, { variant: "treatment", weight: 50, exposed: 37 }],
    });
    let root = await mount(<ResultsView results={r} />);
    const guidance = root.querySelector("[data-testid=too-early]")!;
    expect(guidance.getAttribute("role")).toBe("status");
    expect(guidance.querySelector("p")?.textContent).toBe("Too early to read: each arm needs at least 100 exposed users; treatment has 37.");
    expect(guidance.textContent).toContain("plan for about 3,900 exposed users per arm");

    root = await mount(
      <ResultsView
        results={results({
          enoughData: false, recommendedPerArm: null,
          arms: [{ variant: "control", weight: 50, exposed: 12 }, { variant: "treatment", weight: 50, exposed: 9 }],
        })}
      />,
    );
    expect(root.querySelector("[data-testid=too-early] p")?.textContent).toBe(
      "Too early to read: each arm needs at least 100 exposed users; control has 12 and treatment has 9.",
    );
    expect(root.querySelector("[data-testid=too-early]")?.textContent).toContain("once control has a conversion");
  });

  it("shows the sample-ratio banner with the observed and expected split when the check paused it", async () => {
    const check = {
      checkedAt: "2026-11-24T09:30:00Z", pValue: 0.0000012, mismatch: true,
      arms: [
        { variant: "control", exposed: 300, observed: 2 / 3, expected: 0.5 },
        { variant: "treatment", exposed: 150, observed: 1 / 3, expected: 0.5 },
      ],
    };
    fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment({ status: "paused", pauseReason: "sample_ratio_mismatch", sampleRatio: check }) },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments/7/results": { body: results({ status: "paused", pauseReason: "sample_ratio_mismatch", sampleRatio: check }) },
    });
    const root = await mount(<ExperimentPage product={product} id={7} />);
    const banner = root.querySelector("[data-testid=srm-banner]")!;
    expect(banner.getAttribute("role")).toBe("alert");
    expect(banner.querySelector("h2")?.textContent).toBe("Paused: the split of users does not match the weights");
    expect(banner.textContent).toContain("(p < 0.001)");
    expect([...banner.querySelectorAll("tbody tr")].map(cells)).toEqual([
      ["control", "300", "66.7%", "50.0%"],
      ["treatment", "150", "33.3%", "50.0%"],
    ]);
    expect(byText(root, "button", "Resume")).toBeTruthy();

    fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment({ status: "paused", pauseReason: "manual" }) },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments/7/results": { body: results() },
    });
    const manual = await mount(<ExperimentPage product={product} id={7} />);
    expect(manual.querySelector("[data-testid=srm-banner]")).toBeNull();
  });

  it("applies the winner only after confirmation, then shows the experiment completed", async () => {
    const calls = fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment() },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments/7/results": { body: results() },
      "POST /api/v1/experiments/7/apply-winner": (c) => ({
        body: experiment({ status: "completed", winner: (c.body as { variant: string }).variant }),
      }),
    });
    const root = await mount(<ExperimentPage product={product} id={7} />);
    expect(root.querySelectorAll("table[aria-label^='Results:']")).toHaveLength(2);
    const select = root.querySelector<HTMLSelectElement>("section[aria-labelledby=winner-title] select")!;
    expect([...select.options].map((o) => o.value)).toEqual(["control", "treatment"]);
    // Treatment leads (12.5 % against 10 %): it is preselected.
    expect(select.value).toBe("treatment");
    expect(root.querySelector("[data-testid=arms]")?.textContent).toBe("control 50% · treatment 50%");
    await click(byText(root, "button", "Apply winner"));
    let dialog = root.querySelector("[role=alertdialog]")!;
    expect(dialog.querySelector("h2")?.textContent).toBe("Apply treatment to every user?");
    expect(document.activeElement?.textContent).toBe("Cancel");
    await click(byText(dialog, "button", "Cancel"));
    expect(calls.filter((c) => c.path.endsWith("/apply-winner"))).toHaveLength(0);

    await click(byText(root, "button", "Apply winner"));
    dialog = root.querySelector("[role=alertdialog]")!;
    await click(byText(dialog, "button", "Apply treatment"));
    expect(calls.filter((c) => c.path.endsWith("/apply-winner")).map((c) => c.body)).toEqual([{ variant: "treatment" }]);
    expect(root.querySelector("[role=alertdialog]")).toBeNull();
    expect(root.querySelector("[data-testid=experiment-status]")?.textContent).toBe("Completed");
    expect(root.querySelector("[data-testid=winner]")?.textContent).toBe(" · treatment applied to every user");
    expect(root.querySelector("section[aria-labelledby=winner-title]")).toBeNull();
    expect(byText(root, "button", "Pause")).toBeUndefined();
    // The header shows the arms the flag has now, not the 50/50 it ran with.
    const arms = root.querySelector("[data-testid=arms]")!;
    expect(arms.previousElementSibling?.textContent).toBe("Final arms");
    expect(arms.textContent).toBe("control 0% · treatment 100%");
  });

  it("shows a completed experiment's final arms when the page is opened later", async () => {
    fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment({ status: "completed", winner: "control" }) },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments/7/results": { body: results({ status: "completed" }) },
    });
    const root = await mount(<ExperimentPage product={product} id={7} />);
    expect(root.querySelector("[data-testid=arms]")?.textContent).toBe("control 100% · treatment 0%");
  });

  it("warns before applying a result that is not significant or whose sample is small, and still applies it", async () => {
    const calls = fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment() },
      "GET /api/v1/flags/5": { body: flag() },
      // Treatment leads at p = 0.0821 with 1,000 users an arm, below the recommended 14,745.
      "GET /api/v1/experiments/7/results": { body: results() },
      "POST /api/v1/experiments/7/apply-winner": (c) => ({ body: experiment({ status: "completed", winner: (c.body as { variant: string }).variant }) }),
    });
    const root = await mount(<ExperimentPage product={product} id={7} />);
    await click(byText(root, "button", "Apply winner"));
    const dialog = root.querySelector("[role=alertdialog]")!;
    const warning = dialog.querySelector("[data-testid=apply-warning]")!;
    expect([...warning.querySelectorAll("p")].map((p) => p.textContent)).toEqual([
      "Not significant: treatment against control on signup has p = 0.082 (5% is the usual bar); the difference may be chance.",
      "Small sample: control has 1,000 and treatment has 1,000 exposed users, below the recommended 14,745 per arm.",
      "You can still apply it.",
    ]);
    await click(byText(dialog, "button", "Apply treatment"));
    expect(calls.filter((c) => c.path.endsWith("/apply-winner")).map((c) => c.body)).toEqual([{ variant: "treatment" }]);
  });

  it("applies without a warning when the leader is significant and every arm has the recommended sample", async () => {
    const big = results({ arms: [{ variant: "control", weight: 50, exposed: 20_000 }, { variant: "treatment", weight: 50, exposed: 20_000 }] });
    big.metrics[0].arms[1].pValue = 0.0004;
    fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment() },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments/7/results": { body: big },
    });
    const root = await mount(<ExperimentPage product={product} id={7} />);
    await click(byText(root, "button", "Apply winner"));
    expect(root.querySelector("[role=alertdialog]")?.querySelector("h2")?.textContent).toBe("Apply treatment to every user?");
    expect(root.querySelector("[data-testid=apply-warning]")).toBeNull();
  });

  it("preselects control when no arm beats it, and says keeping it is not a finding", async () => {
    const worse = results();
    worse.metrics[0].arms[1] = { ...worse.metrics[0].arms[1], converted: 90, rate: 0.09, pValue: 0.45 };
    fakeFetch({
      "GET /api/v1/experiments/7": { body: experiment() },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments/7/results": { body: worse },
    });
    const root = await mount(<ExperimentPage product={product} id={7} />);
    const select = root.querySelector<HTMLSelectElement>("section[aria-labelledby=winner-title] select")!;
    expect(select.value).toBe("control");
    await click(byText(root, "button", "Apply winner"));
    expect(root.querySelector("[data-testid=apply-warning] p")?.textContent).toBe(
      "Not significant: no arm differs from control on signup at p < 0.05, so keeping control is not a finding either.",
    );
  });
});

describe("navigation", () => {
  it("routes /flags/{id} and /experiments/{id} to their pages, and another product to its list", async () => {
    const two = [product, { ...product, id: 4, name: "Blog" }];
    fakeFetch({
      "GET /api/v1/dashboard/config": { body: { setupRequired: false, features: { errorTracking: false } } },
      "GET /api/v1/session": { body: { user: { id: 1, email: "owner@example.com", createdAt: "2026-11-23T09:00:00Z" }, expiresAt: "2026-12-07T09:00:00Z" } },
      "GET /api/v1/products": { body: { items: two } },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/flags/5/changes": { body: { items: [] } },
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/experiments/7": { body: experiment({ status: "draft", startedAt: null }) },
    });
    try {
      history.replaceState(null, "", "/flags/5?product=3");
      let root = await mount(<App />);
      expect(root.querySelector("h1")?.textContent).toBe("Pricing copy test");
      expect(root.querySelector(".nav-item.active")?.textContent).toBe("Flags");
      const switcher = root.querySelector<HTMLSelectElement>("select[aria-label=Product]")!;
      await act(() => {
        switcher.value = "4";
        switcher.dispatchEvent(new Event("change", { bubbles: true }));
      });
      await settle();
      expect(location.pathname + location.search).toBe("/flags?product=4");

      history.replaceState(null, "", "/experiments/7?product=3");
      root = await mount(<App />);
      expect(root.querySelector("h1")?.textContent).toBe("Pricing copy");
      expect(root.querySelector("[data-testid=not-started]")).toBeTruthy();
      expect(root.querySelector(".nav-item.active")?.textContent).toBe("Experiments");
    } finally {
      history.replaceState(null, "", "/");
      localStorage.clear();
    }
  });

  it("keeps Flags and Experiments marked on a flag's or an experiment's page", () => {
    const items = navItems({ errorTracking: false });
    expect(activeItem(items, "/flags/5")?.label).toBe("Flags");
    expect(activeItem(items, "/experiments/7")?.label).toBe("Experiments");
    expect(activeItem(items, "/experiments")?.label).toBe("Experiments");
    expect(activeItem(items, "/nowhere/5")).toBeUndefined();
  });
});

describe("roles", () => {
  const listRoutes = {
    "GET /api/v1/experiments": { body: { items: [experiment({ status: "draft", startedAt: null })] } },
    "GET /api/v1/flags": { body: { items: [flag()] } },
  };
  const pageRoutes = {
    "GET /api/v1/experiments/7": { body: experiment() },
    "GET /api/v1/flags/5": { body: flag() },
    "GET /api/v1/experiments/7/results": { body: results() },
    "GET /api/v1/flags/5/changes": { body: { items: [] } },
    "GET /api/v1/experiments": { body: { items: [] } },
  };

  it("shows a viewer no new experiment and no status change in the list, a member both", async () => {
    fakeFetch(listRoutes);
    const viewer = await mount(asRole("viewer", <Experiments product={product} />));
    expect(viewer.querySelector("[data-testid=experiment-row]")).not.toBeNull();
    expect(byText(viewer, "button", "New experiment")).toBeUndefined();
    expect(byText(viewer, "button", "Start")).toBeUndefined();
    fakeFetch(listRoutes);
    const member = await mount(asRole("member", <Experiments product={product} />));
    expect(byText(member, "button", "New experiment")).toBeDefined();
    expect(byText(member, "button", "Start")).toBeDefined();
  });

  it("shows a viewer an experiment's results without Pause, Edit or Apply the winner, and a member all three", async () => {
    fakeFetch(pageRoutes);
    const viewer = await mount(asRole("viewer", <ExperimentPage product={product} id={7} />));
    expect(viewer.querySelector("#results-title")).not.toBeNull();
    for (const label of ["Pause", "Edit", "Apply winner"]) expect(byText(viewer, "button", label), label).toBeUndefined();
    expect(viewer.querySelector("#winner-title")).toBeNull();
    fakeFetch(pageRoutes);
    const member = await mount(asRole("member", <ExperimentPage product={product} id={7} />));
    for (const label of ["Pause", "Edit", "Apply winner"]) expect(byText(member, "button", label), label).toBeDefined();
  });

  it("shows a flag's settings to a viewer read-only, without Save or Delete; a member saves but does not delete; an admin deletes", async () => {
    fakeFetch(pageRoutes);
    const viewer = await mount(asRole("viewer", <FlagPage product={product} id={5} />));
    const form = viewer.querySelector("form[aria-label='Change pricing_copy_test']")!;
    expect(form.querySelector<HTMLInputElement>("input[name=name]")?.value).toBe("Pricing copy test");
    expect(form.querySelector<HTMLFieldSetElement>("fieldset.contents")?.disabled).toBe(true);
    expect(byText(viewer, "button", "Save changes")).toBeUndefined();
    expect(byText(viewer, "button", "Delete flag")).toBeUndefined();
    fakeFetch(pageRoutes);
    const member = await mount(asRole("member", <FlagPage product={product} id={5} />));
    expect(member.querySelector<HTMLFieldSetElement>("fieldset.contents")?.disabled).toBe(false);
    expect(byText(member, "button", "Save changes")).toBeDefined();
    expect(byText(member, "button", "Delete flag")).toBeUndefined();
    fakeFetch(pageRoutes);
    const admin = await mount(asRole("admin", <FlagPage product={product} id={5} />));
    expect(byText(admin, "button", "Delete flag")).toBeDefined();
  });

  it("disables a flag's switch in the list for a viewer, with the reason, and not for a member", async () => {
    fakeFetch(listRoutes);
    const viewer = await mount(asRole("viewer", <Flags product={product} />));
    const off = viewer.querySelector<HTMLInputElement>("input[aria-label='Enabled: pricing_copy_test']")!;
    expect(off.disabled).toBe(true);
    expect(off.title).toBe("Needs the member role");
    fakeFetch(listRoutes);
    const member = await mount(asRole("member", <Flags product={product} />));
    expect(member.querySelector<HTMLInputElement>("input[aria-label='Enabled: pricing_copy_test']")?.disabled).toBe(false);
  });
});
