// A flag's targeting conditions on the Flags pages: rows added, edited and
// removed and sent as conditions, on a property or on a cohort, a refusal
// next to its row, the targeting shown in the list and in the audit trail,
// read-only for a viewer.
import { act } from "preact/test-utils";
import { describe, expect, it } from "vitest";
import { FlagPage, Flags, conditionsText } from "../src/pages/Flags";
import type { Flag, FlagChange, Product } from "../src/types";
import { asRole, byText, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };

const flag = (over: Partial<Flag> = {}): Flag => ({
  id: 5, productId: 3, key: "big_accounts", name: "Big accounts", description: "", enabled: true, rollout: 100, variants: [],
  conditions: [{ type: "trait", trait: "plan", op: "eq", value: "pro" }],
  createdAt: "2026-11-20T10:00:00Z", updatedAt: "2026-11-21T10:00:00Z", ...over,
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

/** select picks an option as a person would. */
async function select(el: Element | null, value: string) {
  const s = el as HTMLSelectElement;
  await act(() => {
    s.value = value;
    s.dispatchEvent(new Event("change", { bubbles: true }));
  });
  await settle();
}

describe("flag targeting", () => {
  it("writes conditions as text", () => {
    expect(conditionsText([])).toBe("Everyone");
    expect(conditionsText(undefined)).toBe("Everyone");
    expect(
      conditionsText([
        { type: "trait", trait: "plan", op: "eq", value: "pro" },
        { type: "trait", trait: "beta", op: "exists", value: "" },
        { type: "trait", trait: "seats", op: "gt", value: "10" },
      ]),
    ).toBe("plan equals pro · beta is set · seats greater than 10");
    const paying = [{ id: 7, name: "Paying" }];
    expect(
      conditionsText(
        [
          { type: "cohort", cohortId: 7, op: "in", value: "" },
          { type: "cohort", cohortId: 7, op: "not_in", value: "" },
          { type: "cohort", cohortId: 9, op: "in", value: "" },
        ],
        paying,
      ),
    ).toBe('in cohort "Paying" · not in cohort "Paying" · in cohort #9');
  });

  it("adds, edits and removes condition rows and sends them, exists without a value", async () => {
    const calls = fakeFetch({
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "POST /api/v1/flags": { status: 201, body: flag() },
    });
    const root = await mount(<Flags product={product} />);
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await type(form.querySelector("input[name=name]"), "Big accounts");
    expect(form.querySelector("[data-testid=flag-conditions]")?.textContent).toContain("No conditions: every user.");
    for (let i = 0; i < 3; i++) await click(byText(form, "button", "Add condition"));
    expect(form.querySelectorAll("[data-testid=flag-condition-row]")).toHaveLength(3);
    await type(form.querySelector("[aria-label='Condition 1 property']"), "plan");
    await type(form.querySelector("[aria-label='Condition 1 value']"), "pro");
    await type(form.querySelector("[aria-label='Condition 2 property']"), "to_remove");
    await type(form.querySelector("[aria-label='Condition 3 property']"), " beta ");
    await select(form.querySelector("[aria-label='Condition 3 operator']"), "exists");
    expect(form.querySelector("[aria-label='Condition 3 value']")).toBeNull();
    await click(form.querySelector("[aria-label='Remove condition 2']"));
    expect(form.querySelectorAll("[data-testid=flag-condition-row]")).toHaveLength(2);
    await submit(form);
    const post = calls.filter((c) => c.method === "POST");
    expect(post).toHaveLength(1);
    expect((post[0].body as { conditions: unknown }).conditions).toEqual([
      { type: "trait", trait: "plan", op: "eq", value: "pro" },
      { type: "trait", trait: "beta", op: "exists", value: "" },
    ]);
  });

  it("puts a refused condition next to its row, focused", async () => {
    fakeFetch({
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "POST /api/v1/flags": badRequest('conditions[1].value: must be a number for gt, not "ten"'),
    });
    const root = await mount(<Flags product={product} />);
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await type(form.querySelector("input[name=name]"), "Big accounts");
    await click(byText(form, "button", "Add condition"));
    await click(byText(form, "button", "Add condition"));
    await type(form.querySelector("[aria-label='Condition 2 property']"), "seats");
    await select(form.querySelector("[aria-label='Condition 2 operator']"), "gt");
    await type(form.querySelector("[aria-label='Condition 2 value']"), "ten");
    await submit(form);
    const value = form.querySelector("[aria-label='Condition 2 value']")!;
    expect(value.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector(`#${value.getAttribute("aria-describedby")}`)?.textContent).toBe('conditions[1].value: must be a number for gt, not "ten"');
    const rows = form.querySelectorAll("[data-testid=flag-condition-row]");
    expect(rows[1].querySelector("[data-field]")?.getAttribute("data-field")).toBe("conditions[1].value");
    expect(rows[0].querySelector("[data-field]")).toBeNull();
    expect(document.activeElement).toBe(value);
  });

  it("shows the targeting in the list, loads it into the form, and lists its change in the audit trail", async () => {
    const trail: FlagChange[] = [
      {
        id: 2, flagId: 5, flagKey: "big_accounts", action: "updated", actor: "owner@example.com", at: "2026-11-21T10:00:00Z",
        changes: [{ field: "conditions", from: [], to: [{ type: "trait", trait: "plan", op: "eq", value: "pro" }] }],
      },
    ];
    const calls = fakeFetch({
      "GET /api/v1/flags": { body: { items: [flag(), flag({ id: 6, key: "dark_mode", name: "Dark mode", conditions: [] })] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/flags/5/changes": { body: { items: trail } },
      "PUT /api/v1/flags/5": (c) => ({ body: flag(c.body as Partial<Flag>) }),
    });
    const list = await mount(<Flags product={product} />);
    expect([...list.querySelectorAll("[data-testid=flag-targeting]")].map((c) => c.textContent?.trim())).toEqual(["plan equals pro", "Everyone"]);

    const root = await mount(<FlagPage product={product} id={5} />);
    const rows = [...root.querySelectorAll("[data-testid=audit-entry] tbody tr")].map((r) => [...r.querySelectorAll("th, td")].map((c) => c.textContent));
    expect(rows).toEqual([["conditions", "Everyone", "plan equals pro"]]);
    const form = root.querySelector("form[aria-label='Change big_accounts']")!;
    expect(form.querySelector<HTMLInputElement>("[aria-label='Condition 1 property']")?.value).toBe("plan");
    expect(form.querySelector<HTMLInputElement>("[aria-label='Condition 1 value']")?.value).toBe("pro");
    await click(form.querySelector("[aria-label='Remove condition 1']"));
    await submit(form);
    expect((calls.find((c) => c.method === "PUT")?.body as { conditions: unknown }).conditions).toEqual([]);
  });

  it("adds a cohort row, picks the cohort by name and sends it as a cohort condition", async () => {
    const calls = fakeFetch({
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/products/3/cohorts": cohortList,
      "POST /api/v1/flags": { status: 201, body: flag() },
    });
    const root = await mount(<Flags product={product} />);
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await type(form.querySelector("input[name=name]"), "Paying users");
    await click(byText(form, "button", "Add condition"));
    await click(byText(form, "button", "Add condition"));
    await type(form.querySelector("[aria-label='Condition 1 property']"), "plan");
    await select(form.querySelector("[aria-label='Condition 1 kind']"), "cohort");
    // A cohort row has no property or value, and its operator is membership.
    expect(form.querySelector("[aria-label='Condition 1 property']")).toBeNull();
    expect(form.querySelector("[aria-label='Condition 1 value']")).toBeNull();
    const op = form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 operator']")!;
    expect([...op.options].map((o) => [o.value, o.textContent])).toEqual([["in", "In cohort"], ["not_in", "Not in cohort"]]);
    expect(op.value).toBe("in");
    const picker = form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 cohort']")!;
    expect([...picker.options].map((o) => o.textContent)).toEqual(["Pick a cohort", "Paying", "Churned"]);

    // Not picked, the cohort is asked for before anything is sent.
    await submit(form);
    expect(calls.filter((c) => c.method === "POST")).toEqual([]);
    expect(form.querySelector("[data-field='conditions[0].cohortId']")?.textContent).toBe("Pick a cohort.");

    await select(picker, "8");
    await select(form.querySelector("[aria-label='Condition 2 kind']"), "cohort");
    await select(form.querySelector("[aria-label='Condition 2 operator']"), "not_in");
    await select(form.querySelector("[aria-label='Condition 2 cohort']"), "7");
    await submit(form);
    const post = calls.filter((c) => c.method === "POST");
    expect(post).toHaveLength(1);
    expect((post[0].body as { conditions: unknown }).conditions).toEqual([
      { type: "cohort", cohortId: 8, op: "in", value: "" },
      { type: "cohort", cohortId: 7, op: "not_in", value: "" },
    ]);
  });

  it("points to the Cohorts page when the product has no cohort", async () => {
    fakeFetch({
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/products/3/cohorts": { body: { items: [] } },
    });
    const root = await mount(<Flags product={product} />);
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await click(byText(form, "button", "Add condition"));
    expect(form.querySelector("[data-testid=no-cohorts]")).toBeNull();
    await select(form.querySelector("[aria-label='Condition 1 kind']"), "cohort");
    expect(form.querySelector("[aria-label='Condition 1 cohort']")).toBeNull();
    expect(form.querySelector("[data-testid=no-cohorts] a")?.getAttribute("href")).toBe("/cohorts?product=3");
  });

  it("puts a refused cohort next to its row, focused", async () => {
    fakeFetch({
      "GET /api/v1/flags": { body: { items: [] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/products/3/cohorts": cohortList,
      "POST /api/v1/flags": badRequest("conditions[0].cohortId: must be the id of a cohort of this product"),
    });
    const root = await mount(<Flags product={product} />);
    await click(byText(root, "button", "New flag"));
    const form = root.querySelector("form[aria-label='New flag']")!;
    await type(form.querySelector("input[name=name]"), "Paying users");
    await click(byText(form, "button", "Add condition"));
    await click(byText(form, "button", "Add condition"));
    await select(form.querySelector("[aria-label='Condition 1 kind']"), "cohort");
    await select(form.querySelector("[aria-label='Condition 1 cohort']"), "7");
    await type(form.querySelector("[aria-label='Condition 2 property']"), "plan");
    await submit(form);
    const picker = form.querySelector("[aria-label='Condition 1 cohort']")!;
    expect(picker.getAttribute("aria-invalid")).toBe("true");
    expect(root.querySelector(`#${picker.getAttribute("aria-describedby")}`)?.textContent).toBe(
      "conditions[0].cohortId: must be the id of a cohort of this product",
    );
    const rows = form.querySelectorAll("[data-testid=flag-condition-row]");
    expect(rows[0].querySelector("[data-field]")?.getAttribute("data-field")).toBe("conditions[0].cohortId");
    expect(rows[1].querySelector("[data-field]")).toBeNull();
    expect(form.querySelector("[role=alert].form-error")).toBeNull();
    expect(document.activeElement).toBe(picker);
  });

  it("names a stored cohort condition's cohort in the list and the audit trail, and loads it as a cohort row", async () => {
    const paying = flag({
      conditions: [
        { type: "cohort", cohortId: 7, op: "not_in", value: "" },
        { type: "trait", trait: "plan", op: "eq", value: "pro" },
        { type: "cohort", cohortId: 99, op: "in", value: "" },
      ],
    });
    const trail: FlagChange[] = [
      {
        id: 3, flagId: 5, flagKey: "big_accounts", action: "updated", actor: "owner@example.com", at: "2026-11-22T10:00:00Z",
        changes: [{ field: "conditions", from: [], to: [{ type: "cohort", cohortId: 7, op: "in", value: "" }] }],
      },
    ];
    const calls = fakeFetch({
      "GET /api/v1/flags": { body: { items: [paying, flag({ id: 6, key: "dark_mode", conditions: [] })] } },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/products/3/cohorts": cohortList,
      "GET /api/v1/flags/5": { body: paying },
      "GET /api/v1/flags/5/changes": { body: { items: trail } },
      "PUT /api/v1/flags/5": (c) => ({ body: flag(c.body as Partial<Flag>) }),
    });
    const list = await mount(<Flags product={product} />);
    expect([...list.querySelectorAll("[data-testid=flag-targeting]")].map((c) => c.textContent?.trim())).toEqual([
      'not in cohort "Paying" · plan equals pro · in cohort #99',
      "Everyone",
    ]);

    const root = await mount(<FlagPage product={product} id={5} />);
    const rows = [...root.querySelectorAll("[data-testid=audit-entry] tbody tr")].map((r) => [...r.querySelectorAll("th, td")].map((c) => c.textContent));
    expect(rows).toEqual([["conditions", "Everyone", 'in cohort "Paying"']]);
    const form = root.querySelector("form[aria-label='Change big_accounts']")!;
    expect(form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 kind']")?.value).toBe("cohort");
    expect(form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 operator']")?.value).toBe("not_in");
    const picker = form.querySelector<HTMLSelectElement>("[aria-label='Condition 1 cohort']")!;
    expect(picker.value).toBe("7");
    expect(picker.selectedOptions[0]?.textContent).toBe("Paying");
    expect(form.querySelector<HTMLSelectElement>("[aria-label='Condition 2 kind']")?.value).toBe("trait");
    expect(form.querySelector<HTMLInputElement>("[aria-label='Condition 2 property']")?.value).toBe("plan");
    // A cohort the product's list does not have (deleted since) stays, by its id.
    const gone = form.querySelector<HTMLSelectElement>("[aria-label='Condition 3 cohort']")!;
    expect([gone.value, gone.selectedOptions[0]?.textContent]).toEqual(["99", "cohort #99"]);
    // Saved untouched, the stored conditions go back as they came.
    await submit(form);
    expect((calls.find((c) => c.method === "PUT")?.body as { conditions: unknown }).conditions).toEqual(paying.conditions);
  });

  it("shows a viewer the conditions read-only", async () => {
    fakeFetch({
      "GET /api/v1/flags/5": { body: flag() },
      "GET /api/v1/experiments": { body: { items: [] } },
      "GET /api/v1/flags/5/changes": { body: { items: [] } },
    });
    const root = await mount(asRole("viewer", <FlagPage product={product} id={5} />));
    const form = root.querySelector("form[aria-label='Change big_accounts']")!;
    expect(form.querySelector<HTMLInputElement>("[aria-label='Condition 1 property']")?.value).toBe("plan");
    expect(form.querySelector<HTMLFieldSetElement>("fieldset")?.disabled).toBe(true);
    expect(byText(form, "button", "Add condition")?.closest("fieldset:disabled")).toBeTruthy();
  });
});
