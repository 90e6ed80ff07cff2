import { afterEach, describe, expect, it } from "vitest";
import { App } from "../src/app";
import { byText, click, fakeFetch, mount, submit, type } from "./helpers";

const user = { id: 1, email: "owner@example.com", createdAt: "2026-11-23T09:00:00Z" };
const session = { user, expiresAt: "2026-12-07T09:00:00Z", memberships: [{ workspaceId: 1, role: "admin" }] };
const products = { items: [{ id: 1, workspaceId: 1, name: "Default", createdAt: "2026-11-23T09:00:00Z" }] };
const config = (over = {}) => ({ setupRequired: false, features: { errorTracking: false }, ...over });
const token = "Zq3kP9xW2mN7vB4tR8yL1cH6dF5gJ0sA";
const notSignedIn = { status: 401, body: { error: { code: "not_signed_in", message: "Sign in to the dashboard first." } } };

const heading = (root: HTMLElement) => root.querySelector("h1")?.textContent;

describe("app", () => {
  afterEach(() => {
    history.replaceState(null, "", "/");
    localStorage.clear();
  });

  it("asks a fresh server for the owner with the token of the printed address, refuses a short password, then signs in", async () => {
    const calls = fakeFetch({
      "GET /api/v1/dashboard/config": { body: config({ setupRequired: true }) },
      "GET /api/v1/session": notSignedIn,
      "POST /api/v1/dashboard/setup": { status: 201, body: session },
      "GET /api/v1/products": { body: products },
    });
    history.replaceState(null, "", `/?setup_token=${token}`);
    const root = await mount(<App />);
    expect(heading(root)).toBe("Set up Strata");
    // The token left the address bar, and the form does not ask for it.
    expect(location.search).toBe("");
    expect(root.querySelector("input[name=setupToken]")).toBeNull();
    await type(root.querySelector("input[name=email]"), "owner@example.com");
    await type(root.querySelector("input[name=password]"), "short");
    await type(root.querySelector("input[name=confirm]"), "short");
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toMatch(/at least 10 characters/);
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    await type(root.querySelector("input[name=password]"), "long enough password");
    await type(root.querySelector("input[name=confirm]"), "long enough password");
    await submit(root.querySelector("form"));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ email: "owner@example.com", password: "long enough password", setupToken: token });
    expect(heading(root)).toBe("Overview");
    expect(location.search).toBe("?product=1");
  });

  it("asks for the setup token when opened without it, and shows the server's refusal", async () => {
    const refused = { status: 403, body: { error: { code: "invalid_setup_token", message: "The setup token is missing or wrong. See the server's log." } } };
    let answer: { status: number; body: unknown } = refused;
    const calls = fakeFetch({
      "GET /api/v1/dashboard/config": { body: config({ setupRequired: true }) },
      "GET /api/v1/session": notSignedIn,
      "POST /api/v1/dashboard/setup": () => answer,
      "GET /api/v1/products": { body: products },
    });
    const root = await mount(<App />);
    expect(heading(root)).toBe("Set up Strata");
    const field = root.querySelector("input[name=setupToken]");
    expect(field?.closest("label")?.textContent).toContain("Setup token");
    expect(root.querySelector("#setup-token-hint")?.textContent).toMatch(/printed an address .* in its log/);
    await type(root.querySelector("input[name=email]"), "owner@example.com");
    await type(root.querySelector("input[name=password]"), "long enough password");
    await type(root.querySelector("input[name=confirm]"), "long enough password");
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toMatch(/setup token/);
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    await type(field, "wrong");
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("The setup token is missing or wrong. See the server's log.");
    expect(heading(root)).toBe("Set up Strata");

    answer = { status: 201, body: session };
    await type(field, ` ${token} `);
    await submit(root.querySelector("form"));
    expect(calls.filter((c) => c.path === "/api/v1/dashboard/setup").map((c) => (c.body as { setupToken: string }).setupToken)).toEqual(["wrong", token]);
    expect(heading(root)).toBe("Overview");
  });

  it("asks for the current token when the printed address's is outdated", async () => {
    fakeFetch({
      "GET /api/v1/dashboard/config": { body: config({ setupRequired: true }) },
      "GET /api/v1/session": notSignedIn,
      "POST /api/v1/dashboard/setup": { status: 403, body: { error: { code: "invalid_setup_token", message: "The setup token is missing or wrong." } } },
    });
    history.replaceState(null, "", "/?setup_token=stale");
    const root = await mount(<App />);
    expect(root.querySelector("input[name=setupToken]")).toBeNull();
    await type(root.querySelector("input[name=email]"), "owner@example.com");
    await type(root.querySelector("input[name=password]"), "long enough password");
    await type(root.querySelector("input[name=confirm]"), "long enough password");
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("The setup token is missing or wrong.");
    expect((root.querySelector("input[name=setupToken]") as HTMLInputElement | null)?.value).toBe("");
  });

  it("removes a setup token from the address of a server that is set up", async () => {
    fakeFetch({ "GET /api/v1/dashboard/config": { body: config() }, "GET /api/v1/session": notSignedIn });
    history.replaceState(null, "", `/trends?product=1&setup_token=${token}`);
    const root = await mount(<App />);
    expect(heading(root)).toBe("Sign in");
    expect(location.pathname + location.search).toBe("/trends?product=1");
  });

  it("signs in, showing the server's refusal and the throttle's wait", async () => {
    let answer = { status: 401, body: { error: { code: "invalid_login", message: "The email or password is not correct." } }, headers: {} as Record<string, string> };
    fakeFetch({
      "GET /api/v1/dashboard/config": { body: config() },
      "GET /api/v1/session": notSignedIn,
      "POST /api/v1/session": () => answer,
      "GET /api/v1/products": { body: products },
    });
    const root = await mount(<App />);
    expect(heading(root)).toBe("Sign in");
    await type(root.querySelector("input[name=email]"), "owner@example.com");
    await type(root.querySelector("input[name=password]"), "wrong");
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("The email or password is not correct.");
    answer = { status: 429, body: { error: { code: "too_many_attempts", message: "Too many sign-in attempts." } }, headers: { "Retry-After": "12" } };
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toBe("Too many sign-in attempts. (Try again in 12 s.)");
    answer = { status: 200, body: session as never, headers: {} };
    await submit(root.querySelector("form"));
    expect(heading(root)).toBe("Overview");
  });

  it("shows Messages without a date picker, and /errors as not found unless the flag is on", async () => {
    fakeFetch({
      "GET /api/v1/dashboard/config": { body: config() }, "GET /api/v1/session": { body: session }, "GET /api/v1/products": { body: products },
      "GET /api/v1/campaigns": { body: { items: [] } }, "GET /api/v1/messages/settings": { body: { autoRender: false } },
    });
    history.replaceState(null, "", "/messages?product=1");
    let root = await mount(<App />);
    expect(heading(root)).toBe("Messages");
    expect(root.querySelector("[data-testid=no-campaigns]")?.textContent).toContain("No campaigns yet");
    expect(root.querySelector("select[aria-label='Date range']")).toBeFalsy();

    history.replaceState(null, "", "/errors?product=1");
    root = await mount(<App />);
    expect(heading(root)).toBe("Page not found");
    expect(byText(root, ".nav-item", "Errors")).toBeUndefined();

    fakeFetch({ "GET /api/v1/dashboard/config": { body: config({ features: { errorTracking: true } }) }, "GET /api/v1/session": { body: session }, "GET /api/v1/products": { body: products } });
    root = await mount(<App />);
    expect(heading(root)).toBe("Errors");
    expect(byText(root, ".nav-item", "Errors")).toBeTruthy();
  });

  it("says a product the URL names is not found, instead of showing another product's data", async () => {
    const two = { items: [...products.items, { id: 2, workspaceId: 1, name: "Shop", createdAt: "2026-11-23T09:00:00Z" }] };
    const calls = fakeFetch({
      "GET /api/v1/dashboard/config": { body: config() },
      "GET /api/v1/session": { body: session },
      "GET /api/v1/products": { body: two },
      "GET /api/v1/query/events": { body: { events: [] } },
      "GET /api/v1/queries": { body: { items: [] } },
      "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
      "POST /api/v1/query/trend": { body: { series: [] } },
    });
    localStorage.setItem("strata.product", "2");
    history.replaceState(null, "", "/trends?product=999&range=7d");
    const root = await mount(<App />);
    expect(heading(root)).toBe("Product not found");
    expect(root.querySelector("[data-testid=product-not-found]")?.textContent).toContain("There is no product 999 that you can see");
    // Nothing was asked of any product, and the address still names 999.
    expect(calls.filter((c) => c.path.startsWith("/api/v1/query/"))).toEqual([]);
    expect(location.search).toBe("?product=999&range=7d");
    expect(localStorage.getItem("strata.product")).toBe("2");
    // The switcher shows no product as current, and offers every one.
    const switcher = root.querySelector<HTMLSelectElement>("select[aria-label=Product]")!;
    expect(switcher.value).toBe("");
    expect([...switcher.options].map((o) => o.textContent)).toEqual(["Choose a product", "Default", "Shop"]);
    expect(root.querySelector("select[aria-label='Date range']")).toBeNull();
    expect(byText(root, "a", "Go to the products list")?.getAttribute("href")).toBe("/settings/products?range=7d");
    expect(byText(root, "a", "Open Default")?.getAttribute("href")).toBe("/trends?product=1&range=7d");

    await click(byText(root, "a", "Open Default"));
    expect(heading(root)).toBe("Trends");
    expect(location.search).toBe("?product=1&range=7d");
    expect(calls.find((c) => c.path === "/api/v1/query/trend")?.query.get("product")).toBe("1");
  });

  it("opens the product picked last for a link that names none", async () => {
    const two = { items: [...products.items, { id: 2, workspaceId: 1, name: "Shop", createdAt: "2026-11-23T09:00:00Z" }] };
    fakeFetch({ "GET /api/v1/dashboard/config": { body: config() }, "GET /api/v1/session": { body: session }, "GET /api/v1/products": { body: two } });
    localStorage.setItem("strata.product", "2");
    history.replaceState(null, "", "/messages");
    const root = await mount(<App />);
    expect(heading(root)).toBe("Messages");
    expect(location.search).toBe("?product=2");
  });

  it("offers a skip link to the page as the first thing the keyboard reaches", async () => {
    fakeFetch({ "GET /api/v1/dashboard/config": { body: config() }, "GET /api/v1/session": { body: session }, "GET /api/v1/products": { body: products } });
    history.replaceState(null, "", "/messages?product=1");
    const root = await mount(<App />);
    const first = root.querySelector("a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])");
    expect(first?.textContent).toBe("Skip to content");
    expect(first?.getAttribute("href")).toBe("#content");
    const main = root.querySelector("main");
    expect(main?.id).toBe("content");
    expect(main?.getAttribute("tabindex")).toBe("-1");
    await click(first);
    expect(document.activeElement).toBe(main);
    // The address does not gain #content.
    expect(location.hash).toBe("");
  });

  it("signs out, and returns to sign-in when the session expires", async () => {
    const calls = fakeFetch({
      "GET /api/v1/dashboard/config": { body: config() },
      "GET /api/v1/session": { body: session },
      "GET /api/v1/products": { body: products },
      "DELETE /api/v1/session": { status: 204 },
      "GET /api/v1/products/1/keys": notSignedIn,
      "GET /api/v1/products/1/tokens": notSignedIn,
    });
    let root = await mount(<App />);
    await click(byText(root, "button", "Sign out"));
    expect(calls.some((c) => c.method === "DELETE" && c.path === "/api/v1/session")).toBe(true);
    expect(heading(root)).toBe("Sign in");

    history.replaceState(null, "", "/settings/products/1?product=1");
    root = await mount(<App />);
    expect(heading(root)).toBe("Sign in");
    expect(location.pathname).toBe("/settings/products/1");
  });
});
