import { afterEach, describe, expect, it, vi } from "vitest";
import { checkDefinition, Cohorts, definitionDraft, definitionRequest, describeCondition, newCondition } from "../src/pages/Cohorts";
import type { Product } from "../src/types";
import { act } from "preact/test-utils";
import { asRole, byText, choose, click, fakeFetch, mount, settle, submit, type } from "./helpers";

afterEach(() => {
  history.replaceState(null, "", "/");
  vi.useRealTimers();
});

const product: Product = { id: 3, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };

function cohort(over: Record<string, unknown> = {}) {
  return {
    id: 7, productId: 3, name: "Power users", description: "", kind: "dynamic", generation: 2, size: 3, computedAt: "2026-11-28T10:00:00Z",
    state: "ready", error: "", createdBy: "ann@example.com", createdAt: "2026-11-27T00:00:00Z", updatedAt: "2026-11-28T10:00:00Z",
    definition: { groups: [{ conditions: [{ type: "behavior", event: "signup", performed: true, atLeast: 2, days: 7 }, { type: "property", key: "plan", operator: "eq", value: "pro" }] }] },
    ...over,
  };
}

describe("the cohort definition editor's rows", () => {
  it("make the API's definition and read it back", () => {
    const groups = [
      [{ ...newCondition(), event: " signup ", atLeast: "2", days: "7" }, { ...newCondition("property"), key: "plan", value: "pro" }],
      [{ ...newCondition(), event: "purchase", performed: false, days: "30" }, { ...newCondition("property"), key: "email", operator: "is_set" as const }],
    ];
    const def = definitionRequest(groups);
    expect(def).toEqual({
      groups: [
        { conditions: [{ type: "behavior", event: "signup", performed: true, atLeast: 2, days: 7 }, { type: "property", key: "plan", operator: "eq", value: "pro" }] },
        { conditions: [{ type: "behavior", event: "purchase", performed: false, atLeast: 1, days: 30 }, { type: "property", key: "email", operator: "is_set" }] },
      ],
    });
    expect(definitionRequest(definitionDraft(def))).toEqual(def);
    expect(describeCondition(definitionDraft(def)[1][0])).toBe("did not do purchase in the last 30 days");
    expect(describeCondition(definitionDraft(def)[0][0])).toBe("did signup at least 2 times in the last 7 days");
  });

  it("are checked before they are sent", () => {
    expect(checkDefinition([[newCondition()]])).toMatch(/needs an event/);
    expect(checkDefinition([[{ ...newCondition(), event: "e", atLeast: "0" }]])).toMatch(/At least/);
    expect(checkDefinition([[{ ...newCondition(), event: "e", days: "400" }]])).toMatch(/1 to 365/);
    expect(checkDefinition([[newCondition("property")]])).toMatch(/needs a property/);
    expect(checkDefinition([[{ ...newCondition(), event: "e" }]])).toBeNull();
  });
});

describe("the Cohorts page", () => {
  it("lists the cohorts with their state, and a viewer gets no write control", async () => {
    fakeFetch({
      "GET /api/v1/products/3/cohorts": {
        body: { items: [cohort(), cohort({ id: 8, name: "Beta", kind: "static", state: "pending", size: 0, computedAt: null, definition: undefined })] },
      },
    });
    const root = await mount(<Cohorts product={product} path="/cohorts" />);
    const rows = [...root.querySelectorAll("table[aria-label='Cohorts'] tbody tr")].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows).toEqual([
      ["Power users", "Dynamic", "3", "Ready", "28 Nov 2026, 10:00 UTC", "ann@example.com"],
      ["Beta", "Static", "0", "No members uploaded", "Never", "ann@example.com"],
    ]);
    expect(byText(root, "button", "New cohort")).toBeTruthy();
    const viewer = await mount(asRole("viewer", <Cohorts product={product} path="/cohorts" />));
    expect(byText(viewer, "button", "New cohort")).toBeUndefined();
  });

  it("creates a dynamic cohort from the form, and shows a field the server refused next to it", async () => {
    let refuse = true;
    const calls = fakeFetch({
      "GET /api/v1/products/3/cohorts": { body: { items: [] } },
      "GET /api/v1/query/events": { body: { events: [{ name: "signup", count: 3 }] } },
      "POST /api/v1/products/3/cohorts": () =>
        refuse ? { status: 400, body: { error: { code: "invalid_request", message: "name: a cohort of this name exists" } } } : { status: 201, body: cohort() },
    });
    const root = await mount(<Cohorts product={product} path="/cohorts" />);
    await click(byText(root, "button", "New cohort"));
    await type(root.querySelector("input[name=name]"), "Power users");
    await type(root.querySelector("[aria-label='Group 1 condition 1 event']"), "signup");
    await type(root.querySelector("[aria-label='Group 1 condition 1 at least']"), "2");
    await click(byText(root, "button", "Add condition to group 1"));
    await choose(root.querySelector("[aria-label='Group 1 condition 2 type']"), "property");
    await type(root.querySelector("[aria-label='Group 1 condition 2 property']"), "plan");
    await type(root.querySelector("[aria-label='Group 1 condition 2 value']"), "pro");
    await submit(root.querySelector("form[aria-label='New cohort']"));
    await settle();
    const nameError = root.querySelector("input[name=name]")?.closest("label")?.nextElementSibling;
    expect(nameError?.textContent).toBe("name: a cohort of this name exists");
    refuse = false;
    await submit(root.querySelector("form[aria-label='New cohort']"));
    await settle();
    const post = calls.filter((c) => c.method === "POST").pop();
    expect(post?.body).toEqual({
      name: "Power users",
      description: "",
      kind: "dynamic",
      definition: { groups: [{ conditions: [{ type: "behavior", event: "signup", performed: true, atLeast: 2, days: 7 }, { type: "property", key: "plan", operator: "eq", value: "pro" }] }] },
    });
    expect(location.pathname).toBe("/cohorts/7");
  });

  it("shows a cohort, recomputes it until it is ready, and pages its members", async () => {
    let reads = 0;
    let state = "ready";
    const calls = fakeFetch({
      "GET /api/v1/products/3/cohorts/7": () => {
        reads++;
        if (state === "computing" && reads > 3) state = "ready";
        return { body: cohort({ state, size: state === "ready" && reads > 3 ? 4 : 3, generation: reads > 3 ? 3 : 2 }) };
      },
      "GET /api/v1/query/events": { body: { events: [] } },
      "POST /api/v1/products/3/cohorts/7/compute": () => {
        state = "computing";
        return { status: 202, body: cohort({ state: "computing" }) };
      },
      "GET /api/v1/products/3/cohorts/7/members": (c) =>
        c.query.get("cursor") ? { body: { generation: 2, items: ["carol"], nextCursor: null } } : { body: { generation: 2, items: ["alice", "bob"], nextCursor: "bob" } },
    });
    const root = await mount(<Cohorts product={product} path="/cohorts/7" />);
    expect(root.querySelector("[data-testid=cohort-size]")?.textContent).toBe("3 people");
    expect(root.querySelector("ul[aria-label=Definition]")?.textContent).toBe("did signup at least 2 times in the last 7 days and plan equals “pro”");
    expect([...root.querySelectorAll("ul[aria-label=Members] a")].map((a) => a.getAttribute("href"))).toEqual(["/users/alice?product=3", "/users/bob?product=3"]);
    await click(byText(root, "button", "More"));
    expect([...root.querySelectorAll("ul[aria-label=Members] a")].map((a) => a.textContent)).toEqual(["alice", "bob", "carol"]);
    await click(byText(root, "button", "Recompute now"));
    await settle();
    expect(root.querySelector("[data-testid=cohort-state]")?.textContent).toBe("Computing…");
    for (let i = 0; i < 40 && root.querySelector("[data-testid=cohort-state]")?.textContent !== "Ready"; i++) {
      await act(() => new Promise((r) => setTimeout(r, 100)));
    }
    expect(root.querySelector("[data-testid=cohort-state]")?.textContent).toBe("Ready");
    expect(root.querySelector("[data-testid=cohort-size]")?.textContent).toBe("4 people");
    expect(calls.filter((c) => c.path === "/api/v1/products/3/cohorts/7/compute")).toHaveLength(1);
  });
});
