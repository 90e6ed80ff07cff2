// The API reference: the Markdown subset its descriptions are drawn with
// (safe whatever the text holds), the model read from the real
// api/openapi.yaml, and the page, lazily loaded, on that same file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { App } from "../src/app";
import { Markdown, safeHref } from "../src/components/Markdown";
import { methods, parseSpec, type Field, type Operation, type Spec } from "../src/openapi";
import { ApiReference } from "../src/pages/ApiReference";
import { mount, settle, type } from "./helpers";

const yaml = readFileSync(join(__dirname, "..", "..", "api", "openapi.yaml"), "utf8");
const build = { version: "v1.2.0", commit: "bb4fc1d5f20c9410dc899dc5290b55e34b238808", commitTime: "2026-11-25T00:32:51Z", modified: false, go: "go1.26.8" };

/** op finds an operation of spec by method and path. */
function op(spec: Spec, method: string, path: string): Operation {
  const found = spec.tags.flatMap((t) => t.operations).find((o) => o.method === method && o.path === path);
  if (!found) throw new Error(`${method} ${path} is not in the reference`);
  return found;
}

const field = (fields: Field[], name: string) => {
  const f = fields.find((x) => x.name === name);
  if (!f) throw new Error(`no field ${name} in ${fields.map((x) => x.name).join(", ")}`);
  return f;
};

/** serve answers the spec and the version as the server does; spec may fail. */
function serve(spec: { status: number; text: string } = { status: 200, text: yaml }, extra: Record<string, unknown> = {}) {
  const calls: string[] = [];
  vi.stubGlobal("fetch", async (input: string) => {
    const path = input.split("?")[0];
    calls.push(path);
    if (path === "/api/v1/openapi.yaml") return new Response(spec.text, { status: spec.status, headers: { "Content-Type": "application/yaml; charset=utf-8" } });
    if (path === "/api/v1/version") return new Response(JSON.stringify(build), { status: 200 });
    if (path in extra) return new Response(JSON.stringify(extra[path]), { status: 200 });
    return new Response(JSON.stringify({ error: { code: "not_found", message: "No route." } }), { status: 404 });
  });
  return calls;
}

/** waitFor lets the app run until check passes: the page's chunk loads asynchronously. */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await act(async () => {
      await new Promise((r) => setTimeout(r, 10));
    });
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("Markdown", () => {
  it("draws paragraphs, lists, tables, code and emphasis", async () => {
    const text = [
      "A **bold** start with `code` and *stress*.",
      "Same paragraph.",
      "",
      "- first item",
      "  continued",
      "- second with `x|y`",
      "",
      "| Code | Meaning |",
      "|---|---|",
      "| `a_b` | One \\| two |",
      "",
      "```json",
      '{"a": 1}',
      "```",
      "",
      "1. one",
      "2. two",
    ].join("\n");
    const root = await mount(<Markdown text={text} />);
    const ps = root.querySelectorAll("p");
    expect(ps[0].textContent).toBe("A bold start with code and stress. Same paragraph.");
    expect(ps[0].querySelector("strong")?.textContent).toBe("bold");
    expect(ps[0].querySelector("code")?.textContent).toBe("code");
    expect(ps[0].querySelector("em")?.textContent).toBe("stress");
    expect([...root.querySelectorAll("ul li")].map((li) => li.textContent)).toEqual(["first item continued", "second with x|y"]);
    expect([...root.querySelectorAll("ol li")].map((li) => li.textContent)).toEqual(["one", "two"]);
    expect([...root.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["Code", "Meaning"]);
    expect([...root.querySelectorAll("td")].map((td) => td.textContent)).toEqual(["a_b", "One | two"]);
    expect(root.querySelector("pre code")?.textContent).toBe('{"a": 1}');
  });

  it("shows raw HTML as text and keeps only safe links", async () => {
    const text = [
      'Try <script>alert(1)</script> and <img src=x onerror="alert(2)"> or <b onclick="x()">this</b>.',
      "",
      "[bad](javascript:alert(3)) [data](data:text/html,hi) [ok](https://example.com/docs) [here](/api-reference) [up](#query)",
      "",
      "`<q>` stays code; snake_case_words stay whole, as does 2 * 3 * 4.",
    ].join("\n");
    const root = await mount(<Markdown text={text} />);
    expect(root.querySelector("script, img, b, [onclick], [onerror]")).toBeNull();
    expect(root.textContent).toContain('<script>alert(1)</script>');
    expect(root.textContent).toContain('<img src=x onerror="alert(2)">');
    const links = [...root.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href")]);
    expect(links).toEqual([["ok", "https://example.com/docs"], ["here", "/api-reference"], ["up", "#query"]]);
    expect(root.textContent).toContain("[bad](javascript:alert(3))");
    expect(root.querySelector("code")?.textContent).toBe("<q>");
    expect(root.querySelector("em")).toBeNull();
    expect(root.textContent).toContain("snake_case_words stay whole, as does 2 * 3 * 4.");
    expect(safeHref(" JavaScript:alert(1)")).toBeNull();
    expect(safeHref("//evil.example/x")).toBeNull();
  });
});

describe("the reference model of api/openapi.yaml", () => {
  const spec = parseSpec(yaml);

  it("holds every operation of the document, grouped by tag in the document's order", () => {
    const doc = yaml.split("\npaths:\n")[1].split("\ncomponents:\n")[0];
    let count = 0;
    let inPath = false;
    for (const line of doc.split("\n")) {
      if (/^ {2}\/\S*:\s*$/.test(line)) inPath = true;
      else if (/^ {2}\S/.test(line)) inPath = false;
      const m = /^ {4}([a-z]+):\s*$/.exec(line);
      if (inPath && m && (methods as readonly string[]).includes(m[1])) count++;
    }
    expect(count).toBeGreaterThan(40);
    expect(spec.tags.reduce((n, t) => n + t.operations.length, 0)).toBe(count);
    expect(spec.tags.map((t) => t.name).slice(0, 4)).toEqual(["ingest", "health", "server", "query"]);
    expect(spec.title).toBe("Strata HTTP API");
    expect(new Set(spec.tags.flatMap((t) => t.operations.map((o) => o.id))).size).toBe(count);
  });

  it("reads the funnel query: credential, request fields with their limits, answer fields, error codes", () => {
    const funnel = op(spec, "POST", "/api/v1/query/funnel");
    expect(funnel.summary).toBe("Compute a funnel");
    expect(funnel.security).toEqual([["bearer"]]);
    expect(funnel.parameters.map((p) => `${p.in} ${p.name}`)).toEqual(["query env"]);
    const body = funnel.body!;
    expect(body.required).toBe(true);
    expect(body.content[0].mediaType).toBe("application/json");
    expect(body.content[0].schema?.name).toBe("FunnelRequest");
    expect(body.content[0].example).toContain('"steps"');
    const fields = body.content[0].schema!.fields;
    expect(fields.map((f) => f.name)).toEqual(["steps", "dateFrom", "dateTo", "windowHours", "aggregateBy", "exclusions", "breakdown", "breakdownLimit", "view", "interval"]);
    const steps = field(fields, "steps");
    expect(steps.required).toBe(true);
    expect(steps.schema.type).toBe("array of string or FunnelStepObject");
    expect(steps.schema.constraints).toContain("2–20 items");
    const window = field(fields, "windowHours");
    expect(window.required).toBe(false);
    expect(window.schema.type).toBe("integer or null");
    expect(window.schema.constraints).toEqual(["1–720", "default 24"]);
    expect(field(fields, "dateFrom").schema.description).toMatch(/first day of the range/);

    const ok = funnel.responses.find((r) => r.status === "200")!;
    const result = ok.content[0].schema!;
    expect(result.name).toBe("FunnelResult");
    const stepList = field(result.fields, "steps");
    expect(stepList.schema.type).toBe("array of FunnelStep");
    expect(stepList.schema.fields.map((f) => `${f.name}:${f.schema.type}`)).toEqual(["name:string", "where:array of PropertyFilter or CohortFilter or PersonPropertyFilter", "count:integer (int64)", "conversionPct:number or null"]);

    const codes = (status: string) => funnel.responses.find((r) => r.status === status)?.codes;
    expect(codes("401")).toEqual(["missing_credentials", "invalid_credentials", "test_key_not_allowed", "not_signed_in"]);
    expect(codes("403")).toEqual(["key_not_allowed", "key_disabled", "token_disabled", "bad_origin"]);
    expect(codes("400")).toContain("invalid_request");
    expect(funnel.responses.map((r) => r.status)).toEqual(["200", "400", "401", "403", "408", "413", "429", "500", "503"]);
  });

  it("reads the public paths as taking no credential, and the schemes' labels", () => {
    expect(op(spec, "GET", "/api/v1/version").security).toEqual([]);
    expect(op(spec, "GET", "/api/v1/openapi.yaml").security).toEqual([]);
    const version = op(spec, "GET", "/api/v1/version").responses[0].content[0].schema!;
    expect(version.fields.map((f) => f.name)).toEqual(["version", "commit", "commitTime", "modified", "go"]);
    expect(op(spec, "POST", "/e").security).toEqual([["apiKeyHeader"], ["apiKeyQuery"], []]);
    expect(spec.schemes.find((s) => s.name === "apiKeyHeader")?.label).toBe("X-API-Key header");
    expect(spec.schemes.find((s) => s.name === "bearer")?.label).toBe("Authorization: Bearer (st_tok_… query token)");
  });

  it("names the alternatives of a oneOf by their types", () => {
    const event = op(spec, "POST", "/e").body!.content[0].schema!;
    expect(field(event.fields, "api_key").schema.type).toBe("string or null");
    const batch = field(event.fields, "batch");
    expect(batch.schema.type).toBe("array of Event");
    expect(field(batch.schema.fields, "properties").schema.type).toBe("EventProperties or null");
  });

  it("merges path-level parameters with the operation's", () => {
    const patch = op(spec, "PATCH", "/api/v1/products/{id}/tokens/{tokenId}");
    expect(patch.parameters.map((p) => `${p.in} ${p.name}`)).toEqual(expect.arrayContaining(["path id", "path tokenId"]));
  });

  it("refuses a document that is not OpenAPI", () => {
    expect(() => parseSpec("just: text")).toThrow(/not an OpenAPI description/);
    expect(() => parseSpec("openapi: [")).toThrow();
  });
});

// Drawing the whole contract takes seconds on a loaded 2-core machine; the
// default 5 s was too tight once the contract grew (boards, people).
describe("the API reference page", { timeout: 30_000 }, () => {
  afterEach(() => history.replaceState(null, "", "/"));

  it("loads its chunk, fetches the contract and draws the operations by tag, folded", async () => {
    const calls = serve();
    const root = await mount(<ApiReference />);
    await waitFor(() => !!root.querySelector(".api-op"), "the operations");
    expect(calls).toEqual(expect.arrayContaining(["/api/v1/openapi.yaml", "/api/v1/version"]));
    expect(root.querySelector("h1")?.textContent).toBe("API reference");
    expect(root.querySelector(".api-meta")?.textContent).toMatch(/Strata HTTP API 0\.1\.0 · this server runs strata v1\.2\.0 \(commit bb4fc1d5f20c, 2026-11-25T00:32:51Z\) go1\.26\.8/);
    expect(root.querySelector(".api-meta a")?.getAttribute("href")).toBe("/api/v1/openapi.yaml");
    const tags = [...root.querySelectorAll(".api-tag h2")].map((h) => h.textContent);
    expect(tags.slice(0, 4)).toEqual(["ingest", "health", "server", "query"]);

    const funnel = root.querySelector<HTMLDetailsElement>('details[data-operation="POST /api/v1/query/funnel"]')!;
    expect(funnel.id).toBe("queryFunnel");
    expect(funnel.open).toBe(false);
    expect(funnel.querySelector("summary")?.textContent).toBe("POST/api/v1/query/funnelCompute a funnel");
    expect(funnel.closest("section")?.id).toBe("tag-query");
    const names = [...funnel.querySelectorAll(".api-content [data-field]")].map((li) => li.getAttribute("data-field"));
    expect(names).toEqual(expect.arrayContaining(["steps", "windowHours", "dateFrom", "dateTo", "name", "count", "conversionPct"]));
    const window = funnel.querySelector('[data-field="windowHours"] .api-field-head')?.textContent;
    expect(window).toContain("integer or null");
    expect(window).toContain("1–720 · default 24");
    expect(funnel.querySelector(".api-auth")?.textContent).toBe("Credential: Authorization: Bearer (st_tok_… query token)");
    const unauthorized = [...funnel.querySelectorAll(".api-response")].find((li) => li.querySelector(".api-status")?.textContent === "401");
    expect([...(unauthorized?.querySelectorAll(".api-codes code") ?? [])].map((c) => c.textContent)).toEqual(["missing_credentials", "invalid_credentials", "test_key_not_allowed", "not_signed_in"]);
    // A code table in a description is a table, not pipes.
    expect(unauthorized?.querySelector("table th")?.textContent).toBe("Code");
    const version = root.querySelector('details[data-operation="GET /api/v1/version"] .api-auth');
    expect(version?.textContent).toBe("Credential: none");
    // No raw HTML reached the page: `<query token>` in descriptions is text.
    expect(root.querySelector(".api-ref query, .api-ref token")).toBeNull();
    expect(root.textContent).toContain("Authorization: Bearer <query token>");
  });

  it("filters operations by path, method or summary", async () => {
    serve();
    const root = await mount(<ApiReference />);
    await waitFor(() => !!root.querySelector(".api-op"), "the operations");
    await type(root.querySelector("input[type=search]"), "post funnel");
    await settle();
    expect([...root.querySelectorAll(".api-op")].map((d) => d.getAttribute("data-operation"))).toEqual([
      "POST /api/v1/query/funnel",
      "POST /api/v1/query/funnel/users",
    ]);
    expect(root.querySelector(".api-toolbar")?.textContent).toContain("2 operations");
    expect([...root.querySelectorAll(".api-tags a")].map((a) => a.getAttribute("href"))).toEqual(["#tag-query"]);
    await type(root.querySelector("input[type=search]"), "no such thing");
    await settle();
    expect(root.querySelector(".api-op")).toBeNull();
    expect(root.querySelector(".empty")?.textContent).toBe("No operation matches “no such thing”.");
  });

  it("opens the operation a link names, on load and when followed", async () => {
    serve();
    history.replaceState(null, "", "/api-reference#getVersion");
    const root = await mount(<ApiReference />);
    await waitFor(() => !!root.querySelector(".api-op"), "the operations");
    await settle();
    expect(root.querySelector<HTMLDetailsElement>("#getVersion")?.open).toBe(true);
    expect(root.querySelector<HTMLDetailsElement>("#queryFunnel")?.open).toBe(false);
    // Following a link on the page opens its operation too.
    await act(() => {
      location.hash = "#queryFunnel";
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    });
    expect(root.querySelector<HTMLDetailsElement>("#queryFunnel")?.open).toBe(true);
  });

  it("shows why the contract could not be read, and tries again", async () => {
    let answer = { status: 503, text: "{}" };
    vi.stubGlobal("fetch", async (input: string) =>
      input === "/api/v1/openapi.yaml" ? new Response(answer.text, { status: answer.status }) : new Response(JSON.stringify(build)),
    );
    const root = await mount(<ApiReference />);
    await waitFor(() => !!root.querySelector("[role=alert]"), "the error");
    expect(root.querySelector("[role=alert]")?.textContent).toMatch(/could not be read: The server answered 503/);
    answer = { status: 200, text: "not: openapi" };
    await act(() => (root.querySelector("[role=alert] button") as HTMLButtonElement).click());
    await waitFor(() => /not an OpenAPI description/.test(root.querySelector("[role=alert]")?.textContent ?? ""), "the second error");
    answer = { status: 200, text: yaml };
    await act(() => (root.querySelector("[role=alert] button") as HTMLButtonElement).click());
    await waitFor(() => !!root.querySelector(".api-op"), "the operations");
  });

  it("is a page of the app, with its own sidebar entry", async () => {
    serve(undefined, {
      "/api/v1/dashboard/config": { setupRequired: false, features: { errorTracking: false } },
      "/api/v1/session": { user: { id: 1, email: "owner@example.com", createdAt: "2026-11-23T09:00:00Z" }, expiresAt: "2026-12-07T09:00:00Z" },
      "/api/v1/products": { items: [{ id: 1, workspaceId: 1, name: "Default", createdAt: "2026-11-23T09:00:00Z" }] },
    });
    history.replaceState(null, "", "/api-reference?product=1");
    const root = await mount(<App />);
    await waitFor(() => !!root.querySelector(".api-op"), "the operations");
    expect(root.querySelector("h1")?.textContent).toBe("API reference");
    expect(root.querySelector("nav.sidebar [aria-current=page]")?.textContent).toBe("API reference");
    expect(root.querySelector("nav.sidebar [aria-current=page]")?.getAttribute("href")).toBe("/api-reference?product=1");
  });
});
