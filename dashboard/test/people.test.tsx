// The People page (/people): the product's persons from GET /api/v1/persons,
// with the search, property filters (chips, removable) and chosen columns
// in the URL, "More" from nextCursor, each row linking to the user's page;
// the empty and failed states; and the pure helpers behind them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cell, chipText, columnKeys, parseFilters, People } from "../src/pages/People";
import type { PersonRow, Product } from "../src/types";
import { byText, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };
const person = (id: string, properties: Record<string, unknown> = {}): PersonRow => ({
  distinctId: id, properties, firstSeen: "2026-11-20T08:00:00Z", lastSeen: "2026-11-23T10:58:00Z", eventCount: 4,
});

afterEach(() => {
  vi.unstubAllGlobals();
  history.replaceState(null, "", "/");
});

const rows = (root: HTMLElement) =>
  [...root.querySelectorAll("[data-testid=people-table] tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent));

describe("the People page", () => {
  it("lists persons linking to their page and loads More from nextCursor", async () => {
    const calls = fakeFetch({
      "GET /api/v1/persons": (c) => ({
        body: c.query.get("cursor") === "c1" ? { items: [person("bob")], nextCursor: null } : { items: [person("ann/1")], nextCursor: "c1" },
      }),
    });
    const root = await mount(<People product={product} />);
    expect(Object.fromEntries(calls[0].query)).toEqual({ product: "3" });
    expect(rows(root)).toEqual([["ann/1", "23 Nov 2026, 10:58 UTC", "20 Nov 2026, 08:00 UTC", "4"]]);
    expect(root.querySelector("[data-testid=people-table] a")?.getAttribute("href")).toBe("/users/ann%2F1?product=3");
    await click(byText(root, "button", "More"));
    expect(calls[1].query.get("cursor")).toBe("c1");
    expect(rows(root).map((r) => r[0])).toEqual(["ann/1", "bob"]);
    expect(byText(root, "button", "More")).toBeFalsy();
  });

  it("sends the search, a filter and the columns, keeps them in the URL, and removes a chip", async () => {
    const calls = fakeFetch({ "GET /api/v1/persons": { body: { items: [person("ann", { plan: "pro" })], nextCursor: null } } });
    const root = await mount(<People product={product} />);
    await type(root.querySelector("input[type=search]")!, "ann");
    await submit(root.querySelector("form[role=search]")!);
    expect(calls.at(-1)!.query.get("search")).toBe("ann");
    expect(new URLSearchParams(location.search).get("search")).toBe("ann");

    const form = root.querySelector("form[aria-label='Property filter']")!;
    const [keyInput, valueInput] = form.querySelectorAll("input");
    await type(keyInput, "plan");
    await type(valueInput, "pro");
    await submit(form);
    expect(JSON.parse(calls.at(-1)!.query.get("where")!)).toEqual([{ key: "plan", operator: "eq", value: "pro" }]);
    expect(root.querySelector(".chips")?.textContent).toContain("plan = pro");

    const columns = [...root.querySelectorAll("label")].find((l) => l.textContent?.startsWith("Columns"))!.querySelector("input")!;
    columns.value = "plan, email";
    columns.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(calls.at(-1)!.query.get("columns")).toBe("plan,email");
    expect([...root.querySelectorAll("[data-testid=people-table] th")].map((th) => th.textContent)).toEqual(["Distinct id", "plan", "email", "Last seen", "First seen", "Events"]);
    expect(rows(root)[0]).toEqual(["ann", "pro", "—", "23 Nov 2026, 10:58 UTC", "20 Nov 2026, 08:00 UTC", "4"]);

    await click(root.querySelector("button[aria-label='Remove plan = pro']")!);
    expect(calls.at(-1)!.query.get("where")).toBeNull();
    expect(new URLSearchParams(location.search).get("where")).toBeNull();
  });

  it("shows the empty state and a failure with Try again", async () => {
    let fail = true;
    fakeFetch({
      "GET /api/v1/persons": () => (fail ? { status: 503, body: { error: { code: "server_busy", message: "The server is busy." } } } : { body: { items: [], nextCursor: null } }),
    });
    const root = await mount(<People product={product} />);
    expect(root.querySelector("[role=alert]")?.textContent).toContain("The server is busy.");
    fail = false;
    await click(byText(root, "button", "Try again"));
    expect(root.textContent).toContain("No people yet");
  });
});

describe("the People page's helpers", () => {
  it("reads ?where= and drops what is not a filter", () => {
    expect(parseFilters(['[{"key":"plan","operator":"eq","value":"pro"},{"key":"x","operator":"bad"},{"key":"","operator":"is_set"}]'])).toEqual([{ key: "plan", operator: "eq", value: "pro" }]);
    expect(parseFilters(["not json"])).toBeNull();
    expect(parseFilters([])).toBeNull();
  });
  it("writes chips, columns and cells", () => {
    expect(chipText({ key: "email", operator: "is_set" })).toBe("email is set");
    expect(chipText({ key: "plan", operator: "neq", value: "free" })).toBe("plan ≠ free");
    expect(columnKeys(" email, plan,,email ")).toEqual(["email", "plan"]);
    expect(cell(undefined)).toBe("—");
    expect(cell(3)).toBe("3");
    expect(cell(true)).toBe("true");
  });
});
