import { describe, expect, it, vi } from "vitest";
import { SecretReveal } from "../src/components/SecretReveal";
import { ProductSettings } from "../src/pages/ProductSettings";
import type { ApiKey, Product, QueryToken } from "../src/types";
import { asRole, byText, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };
const key = (over: Partial<ApiKey> = {}): ApiKey => ({
  id: 7, productId: 3, prefix: "st_live_AbCd", env: "live", status: "active", rateLimit: 0,
  createdAt: "2026-11-20T10:04:00Z", lastUsedAt: "2026-11-22T08:15:00Z", ...over,
});
const token: QueryToken = { id: 2, productId: 3, prefix: "st_tok_WxYz", status: "active", createdAt: "2026-11-21T12:00:00Z", lastUsedAt: null };
const secretKey = "st_live_" + "A".repeat(32);

function routes(keys: ApiKey[]) {
  return {
    "GET /api/v1/products/3/keys": () => ({ body: { items: keys } }),
    "GET /api/v1/products/3/tokens": { body: { items: [token] } },
  };
}

const cells = (row: Element | null | undefined) => [...(row?.querySelectorAll("td") ?? [])].map((c) => c.textContent?.trim());

describe("API keys", () => {
  it("lists keys with prefix, kind, status, created and last-used dates", async () => {
    fakeFetch(routes([key(), key({ id: 8, prefix: "st_test_QrSt", env: "test", status: "disabled", lastUsedAt: null })]));
    const root = await mount(<ProductSettings product={product} origin="https://stats.example.com" admin onRenamed={() => {}} />);
    const rows = root.querySelectorAll("table[aria-label='API keys'] tbody tr");
    expect(cells(rows[0]).slice(0, 5)).toEqual(["st_live_AbCd…", "Live", "Active", "20 Nov 2026, 10:04 UTC", "22 Nov 2026, 08:15 UTC"]);
    expect(cells(rows[1]).slice(0, 5)).toEqual(["st_test_QrSt…", "Test", "Disabled", "20 Nov 2026, 10:04 UTC", "Never"]);
    expect(byText(rows[0], "button", "Disable")).toBeTruthy();
    expect(byText(rows[1], "button", "Enable")).toBeTruthy();
    expect(cells(root.querySelector("table[aria-label='Query tokens'] tbody tr")).slice(0, 4)).toEqual(["st_tok_WxYz…", "Active", "21 Nov 2026, 12:00 UTC", "Never"]);
    // On a phone the tables scroll inside their own box, not the page (the row actions stay in view: styles.css).
    for (const t of root.querySelectorAll("table")) expect(t.parentElement?.classList.contains("table-scroll")).toBe(true);
    expect(rows[0].lastElementChild?.classList.contains("row-actions")).toBe(true);
  });

  it("shows a new key once, with the script-tag snippet", async () => {
    let keys = [key()];
    const calls = fakeFetch({
      ...routes([]),
      "GET /api/v1/products/3/keys": () => ({ body: { items: keys } }),
      "POST /api/v1/products/3/keys": () => {
        keys = [...keys, key({ id: 9, prefix: "st_live_AAAA" })];
        return { status: 201, body: { secret: secretKey, key: keys[1] } };
      },
    });
    const root = await mount(<ProductSettings product={product} origin="https://stats.example.com" admin onRenamed={() => {}} />);
    await click(byText(root, "button", "Create live key"));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ env: "live" });
    expect(root.querySelector("[data-testid=secret-value]")?.textContent).toBe(secretKey);
    expect(root.querySelector("[data-testid=snippet]")?.textContent).toBe(
      `<script src="https://stats.example.com/sdk/v1/sdk.min.js"></script><script>strata.init({apiKey: "${secretKey}"})</script>`,
    );
    expect(root.querySelectorAll("table[aria-label='API keys'] tbody tr")).toHaveLength(2);
    await click(byText(root, "button", "I have copied it"));
    expect(root.textContent).not.toContain(secretKey);
  });

  it("revokes only after confirmation", async () => {
    let keys = [key()];
    const calls = fakeFetch({
      ...routes([]),
      "GET /api/v1/products/3/keys": () => ({ body: { items: keys } }),
      "PATCH /api/v1/products/3/keys/7": (c) => {
        keys = [key({ status: (c.body as { status: ApiKey["status"] }).status })];
        return { body: keys[0] };
      },
    });
    const root = await mount(<ProductSettings product={product} origin="https://stats.example.com" admin onRenamed={() => {}} />);
    await click(byText(root, "button", "Revoke"));
    const dialog = root.querySelector("[role=alertdialog]");
    expect(dialog?.textContent).toContain("Revoke API key st_live_AbCd…?");
    expect(dialog?.textContent).toContain("cannot be undone");
    await click(byText(dialog!, "button", "Cancel"));
    expect(root.querySelector("[role=alertdialog]")).toBeNull();
    expect(calls.filter((c) => c.method === "PATCH")).toEqual([]);

    await click(byText(root, "button", "Revoke"));
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Revoke key"));
    expect(calls.filter((c) => c.method === "PATCH").map((c) => c.body)).toEqual([{ status: "revoked" }]);
    const row = root.querySelector("table[aria-label='API keys'] tbody tr");
    expect(cells(row)[2]).toBe("Revoked");
    expect(row?.querySelectorAll("button")).toHaveLength(0);
  });

  it("disables a key without asking, and shows the server's refusal", async () => {
    const calls = fakeFetch({
      ...routes([key()]),
      "PATCH /api/v1/products/3/keys/7": { status: 409, body: { error: { code: "key_revoked", message: "The key is revoked; revocation cannot be undone." } } },
    });
    const root = await mount(<ProductSettings product={product} origin="https://x" admin onRenamed={() => {}} />);
    await click(byText(root, "button", "Disable"));
    expect(calls.filter((c) => c.method === "PATCH").map((c) => c.body)).toEqual([{ status: "disabled" }]);
    expect(root.querySelector("[role=alert]")?.textContent).toBe("The key is revoked; revocation cannot be undone.");
  });

  it("creates a query token and shows it once, without a script tag", async () => {
    fakeFetch({ ...routes([]), "POST /api/v1/products/3/tokens": { status: 201, body: { secret: "st_tok_" + "B".repeat(40), token } } });
    const root = await mount(<ProductSettings product={product} origin="https://x" admin onRenamed={() => {}} />);
    await click(byText(root, "button", "Create query token"));
    expect(root.querySelector("[data-testid=secret-value]")?.textContent).toBe("st_tok_" + "B".repeat(40));
    expect(root.querySelector("[data-testid=snippet]")).toBeNull();
  });

  it("renames the product", async () => {
    fakeFetch({ ...routes([]), "PATCH /api/v1/products/3": (c) => ({ body: { ...product, name: (c.body as { name: string }).name } }) });
    const renamed = vi.fn();
    const root = await mount(<ProductSettings product={product} origin="https://x" admin onRenamed={renamed} />);
    await type(root.querySelector("form[aria-label='Rename product'] input"), "Shop");
    expect(byText(root, "button", "Rename")?.hasAttribute("disabled")).toBe(false);
    await submit(root.querySelector("form[aria-label='Rename product']"));
    expect(renamed).toHaveBeenCalledWith({ ...product, name: "Shop" });
  });
});

describe("copy button", () => {
  it("copies the key to the clipboard", async () => {
    const writeText = vi.fn(async () => {});
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    const root = await mount(<SecretReveal kind="key" secret={secretKey} origin="https://x" onDone={() => {}} />);
    await click(root.querySelector("button[aria-label='Copy API key']"));
    expect(writeText).toHaveBeenCalledWith(secretKey);
    expect(root.querySelector("button[aria-label='Copy API key']")?.textContent).toBe("Copied");
  });
});

describe("the product's time zone", () => {
  it("offers the browser's zone first and UTC, and saves the zone picked", async () => {
    const calls = fakeFetch({
      ...routes([]),
      "PATCH /api/v1/products/3": () => ({ body: { ...product, timeZone: "Europe/Berlin" } }),
    });
    let saved: Product | null = null;
    const root = await mount(<ProductSettings product={product} origin="https://stats.example.com" admin onRenamed={(p) => (saved = p)} />);
    const select = root.querySelector<HTMLSelectElement>("form[aria-label='Time zone'] select")!;
    const options = [...select.options].map((o) => o.value);
    expect(options[0]).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(options).toContain("UTC");
    expect(options).toContain("Europe/Berlin");
    expect(select.value).toBe("UTC");
    select.value = "Europe/Berlin";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    await submit(root.querySelector("form[aria-label='Time zone']")!);
    expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ timeZone: "Europe/Berlin" });
    expect(saved).toMatchObject({ timeZone: "Europe/Berlin" });
    expect(root.textContent).toContain("Saved.");
  });
});

describe("roles on a product's settings", () => {
  const goalRoutes = {
    "GET /api/v1/products/3/goals": { body: { items: [{ id: 4, productId: 3, kind: "event", event: "signup", createdAt: "2026-11-20T10:04:00Z" }] } },
    "GET /api/v1/products/3/shared-links": {
      body: { items: [{ id: 6, productId: 3, name: "Board", prefix: "st_share_Ab", hasPassword: false, createdAt: "2026-11-20T10:04:00Z" }] },
    },
  };
  const draw = (role: "viewer" | "member" | "admin") =>
    mount(asRole(role, <ProductSettings product={product} origin="https://x" admin={role === "admin"} onRenamed={() => {}} />));

  it("shows a viewer the goals without the form to add one or Delete, and the name and time zone disabled with the reason", async () => {
    fakeFetch(goalRoutes);
    const root = await draw("viewer");
    const goals = root.querySelector("[data-testid=goal-settings]")!;
    expect(goals.querySelectorAll("[data-testid=goal-settings-row]")).toHaveLength(1);
    expect(goals.querySelector("form[aria-label='Add a goal']")).toBeNull();
    expect(byText(goals, "button", "Delete")).toBeUndefined();
    for (const name of ["Rename product", "Time zone"]) {
      const form = root.querySelector(`form[aria-label='${name}']`)!;
      expect(form.querySelector<HTMLInputElement | HTMLSelectElement>("input, select")?.disabled, name).toBe(true);
      expect(form.querySelector<HTMLButtonElement>("button[type=submit]")?.title, name).toBe("Needs the member role");
    }
  });

  it("shows a member the form to add a goal but no goal's Delete or link's Revoke, and an admin all", async () => {
    fakeFetch(goalRoutes);
    const member = await draw("member");
    expect(member.querySelector("form[aria-label='Add a goal']")).not.toBeNull();
    expect(byText(member.querySelector("[data-testid=goal-settings]")!, "button", "Delete")).toBeUndefined();
    expect(member.querySelector("[data-testid=shared-link-row]")).not.toBeNull();
    expect(byText(member, "button", "Revoke")).toBeUndefined();
    expect(member.querySelector<HTMLInputElement>("form[aria-label='Rename product'] input")?.disabled).toBe(false);
    fakeFetch({ ...goalRoutes, ...routes([]) });
    const admin = await draw("admin");
    expect(byText(admin.querySelector("[data-testid=goal-settings]")!, "button", "Delete")).toBeDefined();
    expect(byText(admin, "button", "Revoke")).toBeDefined();
  });
});

describe("the Privacy card", () => {
  it("shows the stored settings, says what cookieless mode cannot count, and saves both", async () => {
    const calls = fakeFetch({
      ...routes([]),
      "GET /api/v1/products/3/privacy": { body: { cookieless: false, respectPrivacySignals: true } },
      "PUT /api/v1/products/3/privacy": (call) => ({ body: call.body }),
    });
    const root = await mount(asRole("admin", <ProductSettings product={product} origin="https://x" admin onRenamed={() => {}} />));
    const form = root.querySelector<HTMLFormElement>("form[aria-label='Privacy']")!;
    const box = (name: string) => form.querySelector<HTMLInputElement>(`input[name=${name}]`)!;
    expect(box("cookieless").checked).toBe(false);
    expect(box("respectPrivacySignals").checked).toBe(true);
    const button = form.querySelector<HTMLButtonElement>("button[type=submit]")!;
    expect(button.disabled).toBe(true);
    expect(root.querySelector("[data-testid=cookieless-counts]")).toBeNull();
    await click(box("cookieless"));
    expect(root.querySelector("[data-testid=cookieless-counts]")?.textContent).toContain("counts again");
    expect(button.disabled).toBe(false);
    await submit(form);
    expect(calls.find((c) => c.method === "PUT")?.body).toEqual({ cookieless: true, respectPrivacySignals: true });
    expect(root.querySelector("[data-testid=privacy-settings]")?.textContent).toContain("Saved.");
  });

  it("shows a member the card without its form, and asks the server nothing", async () => {
    const calls = fakeFetch(routes([]));
    const root = await mount(asRole("member", <ProductSettings product={product} origin="https://x" admin={false} onRenamed={() => {}} />));
    expect(root.querySelector("[data-testid=privacy-settings-admin-only]")).not.toBeNull();
    expect(root.querySelector("form[aria-label='Privacy']")).toBeNull();
    expect(calls.filter((c) => c.path.includes("/privacy"))).toEqual([]);
  });
});
