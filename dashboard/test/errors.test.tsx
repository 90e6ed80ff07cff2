// The Errors pages: the groups table drawn from a fixture (a long message
// cut with its whole text kept, the seven-day bars and their label, the
// Regressed badge), the filters and the page's range and env as query
// parameters, the empty states, a group's page (de-minified frames with
// their source line, minified ones with why, once per occurrence, and the
// raw stack), its status changes, the merge of selected groups (asked
// first, into the group picked), a group's merged groups and their
// unmerge (asked first), the releases' sourcemaps and their
// delete, asked first; and the routes.
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../src/app";
import { activeItem, navItems } from "../src/components/nav";
import { ErrorGroupPage, frameLocation, stayedMinified } from "../src/pages/ErrorGroup";
import { Errors, byRelease, groupHref } from "../src/pages/Errors";
import { presetRange, type DateRange } from "../src/range";
import type { ErrorGroup, ErrorGroupDetail, ErrorOccurrence, Product, Sourcemap } from "../src/types";
import { asRole, byText, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };
const range: DateRange = { key: "custom", from: "2026-11-01", to: "2026-11-23" };
const checkoutFp = "9f2c5b0e1d7a4c3b8e6f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f";
const loadFp = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809";
const longMessage = "Cannot read properties of undefined (reading 'items') while the cart was being totalled " + "at checkout ".repeat(20);

const week = (counts: number[]) => counts.map((events, i) => ({ date: `2026-11-${17 + i}`, events }));

const group = (over: Partial<ErrorGroup> = {}): ErrorGroup => ({
  fingerprint: checkoutFp, type: "RangeError", message: "marker-checkout", events: 1234, users: 3,
  firstSeen: "2026-11-20T08:00:00Z", lastSeen: "2026-11-23T10:04:00Z", daily: week([0, 0, 0, 4, 0, 2, 1228]),
  status: "open", regressed: false, resolvedRelease: "", ...over,
});

const groups = [
  group(),
  group({ fingerprint: loadFp, type: "TypeError", message: longMessage, events: 2, users: 1, regressed: true, daily: week([0, 0, 0, 0, 0, 0, 2]) }),
];

const app = "https://shop.example.com/assets/app.min.js";
const stack = `RangeError: marker-checkout\n    at u (${app}:1:583)\n    at ${app}:1:340`;

const occurrence = (over: Partial<ErrorOccurrence> = {}): ErrorOccurrence => ({
  time: "2026-11-23T10:04:00Z", distinctId: "u1", browser: "Chrome 148", os: "Linux", url: "https://shop.example.com/checkout", release: "2.0.0", sessionId: "",
  frames: [
    { function: "checkout", file: "app.ts", line: 22, column: 11, in_app: true, resolved: true, source_line: '    throw new RangeError("marker-checkout");' },
    { function: "add", file: "app.ts", line: 7, column: 5, in_app: true, resolved: true, source_line: '    if (n < 0) throw new Error("marker-add");' },
  ],
  resolution: "", stack, ...over,
});

const detail = (over: Partial<ErrorGroupDetail> = {}): ErrorGroupDetail => ({
  group: group(),
  merged: [],
  occurrences: [
    // Older first here: the page shows the newest first whatever the order.
    occurrence({
      time: "2026-11-20T08:00:00Z", distinctId: "u0", release: "1.9.0",
      frames: [
        { function: "u", file: app, line: 1, column: 583, in_app: true, resolved: false },
        { function: "", file: app, line: 1, column: 340, in_app: true, resolved: false },
        { function: "parse", file: "", in_app: false, resolved: false },
      ],
      resolution: `no sourcemap for release 1.9.0 and ${app}`,
    }),
    occurrence(),
  ],
  ...over,
});

const upload = (over: Partial<Sourcemap> = {}): Sourcemap => ({
  id: 1, productId: 3, release: "2.0.0", url: app, size: 1834, minified: false, createdAt: "2026-11-22T09:00:00Z", ...over,
});
const uploads = [
  upload({ id: 3, url: "https://shop.example.com/assets/vendor.min.js", size: 2_400_000, minified: true, createdAt: "2026-11-22T09:01:00Z" }),
  upload(),
  upload({ id: 1, release: "1.9.0", size: 912, createdAt: "2026-11-10T09:00:00Z" }),
];

const cells = (row: Element | null | undefined) => [...(row?.querySelectorAll("th, td") ?? [])].map((c) => c.textContent?.trim());

/** routes answers the Errors list's calls: the groups (all of them, whatever the filters) and the uploads. */
function routes(list: ErrorGroup[] = groups, maps: Sourcemap[] = uploads) {
  return {
    "GET /api/v1/errors": { body: { from: range.from, to: range.to, groups: list } },
    "GET /api/v1/sourcemaps": { body: { items: maps } },
  };
}

describe("errors list", () => {
  it("draws the groups of a fixture: type, message cut with its whole text kept, counts, dates and the seven days", async () => {
    fakeFetch(routes());
    const root = await mount(<Errors product={product} range={range} env="live" />);
    expect(root.querySelector("h1")?.textContent).toBe("Errors");
    const table = root.querySelector("table[aria-label='Error groups']")!;
    expect(cells(table.querySelector("thead tr"))).toEqual(["Select", "Type", "Message", "Events", "Users", "Last seen", "First seen", "Last 7 days"]);
    const rows = table.querySelectorAll("[data-testid=error-row]");
    expect(rows).toHaveLength(2);
    expect(cells(rows[0])).toEqual(["", "RangeError", "marker-checkout", "1,234", "3", "23 Nov 2026, 10:04 UTC", "20 Nov 2026, 08:00 UTC", expect.stringMatching(/^Events per day/)]);

    const link = rows[1].querySelector<HTMLAnchorElement>(".error-message a")!;
    expect(link.textContent).toBe(longMessage);
    expect(link.title).toBe(longMessage);
    expect(link.getAttribute("href")).toBe(`/errors/${loadFp}?product=3&from=2026-11-01&to=2026-11-23`);

    const spark = rows[0].querySelector("svg.sparkline")!;
    expect(spark.getAttribute("role")).toBe("img");
    expect(spark.getAttribute("aria-label")).toMatch(/^Events per day: Nov 17, 0; Nov 18, 0; Nov 19, 0; Nov 20, 4; Nov 21, 0; Nov 22, 2; Nov 23, 1,228$/);
    const bars = [...spark.querySelectorAll("rect")].map((r) => Number(r.getAttribute("height")));
    expect(bars).toHaveLength(7);
    expect(bars[6]).toBe(24);
    expect(bars[0]).toBe(1);
    expect(bars[3]).toBeGreaterThanOrEqual(2);
  });

  it("marks a regressed group with a badge, and only that one", async () => {
    fakeFetch(routes());
    const root = await mount(<Errors product={product} range={range} env="live" />);
    const rows = root.querySelectorAll("[data-testid=error-row]");
    expect(rows[0].querySelector("[data-testid=regressed]")).toBeNull();
    expect(rows[1].querySelector("[data-testid=regressed]")?.textContent).toBe("Regressed");
    expect(cells(rows[1])[1]).toBe("TypeError Regressed");
  });

  it("asks for the page's range and env, open groups by default, then the status and release picked", async () => {
    const calls = fakeFetch(routes());
    const root = await mount(<Errors product={product} range={range} env="test" />);
    const listCalls = () => calls.filter((c) => c.path === "/api/v1/errors");
    expect(listCalls()).toHaveLength(1);
    expect(Object.fromEntries(listCalls()[0].query)).toEqual({ product: "3", dateFrom: "2026-11-01", dateTo: "2026-11-23", status: "open", env: "test" });

    const form = root.querySelector("form[aria-label='Error filters']")!;
    const status = form.querySelector<HTMLSelectElement>("select[name=status]")!;
    expect([...status.options].map((o) => o.value)).toEqual(["open", "resolved", "ignored"]);
    expect(status.value).toBe("open");
    await act(() => {
      status.value = "resolved";
      status.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle();
    expect(listCalls().at(-1)?.query.get("status")).toBe("resolved");
    expect(listCalls().at(-1)?.query.has("release")).toBe(false);

    // The release's suggestions are the releases with sourcemaps, once each.
    expect([...root.querySelectorAll("datalist#error-releases option")].map((o) => o.getAttribute("value"))).toEqual(["2.0.0", "1.9.0"]);
    await type(form.querySelector("input[name=release]"), " 2.0.0 ");
    expect(listCalls()).toHaveLength(2); // typing asks nothing
    await submit(form);
    expect(Object.fromEntries(listCalls().at(-1)!.query)).toEqual({
      product: "3", dateFrom: "2026-11-01", dateTo: "2026-11-23", release: "2.0.0", status: "resolved", env: "test",
    });

    await type(form.querySelector("input[name=release]"), "");
    await submit(form);
    expect(listCalls().at(-1)?.query.has("release")).toBe(false);
  });

  it("asks again when the page's range or env changes, and live data leaves env out", async () => {
    const calls = fakeFetch(routes());
    const root = await mount(<Errors product={product} range={range} env="test" />);
    const seven = presetRange("7d", new Date("2026-11-23T12:00:00Z"));
    await act(() => render(<Errors product={product} range={seven} env="live" />, root));
    await settle();
    const last = calls.filter((c) => c.path === "/api/v1/errors").at(-1)!;
    expect(last.query.get("dateFrom")).toBe("2026-11-17");
    expect(last.query.get("dateTo")).toBe("2026-11-23");
    expect(last.query.has("env")).toBe(false);
  });

  it("explains how to turn error tracking on and upload sourcemaps when there is no error", async () => {
    fakeFetch(routes([], []));
    const root = await mount(<Errors product={product} range={range} env="live" />);
    const empty = root.querySelector("[data-testid=no-errors]")!;
    expect(empty.querySelector("h2")?.textContent).toBe("No errors");
    expect(empty.querySelector("[data-testid=error-tracking-snippet]")?.textContent).toBe(
      'strata.init({apiKey: "st_live_YOUR_KEY", errorTracking: true, release: "1.4.2"})',
    );
    expect(empty.querySelector("pre.snippet")?.textContent).toContain("-F file=@dist/app.min.js.map");
    expect(empty.textContent).toContain("docs/errors.md");
    expect(byText(empty, "a", "The upload in the API reference")?.getAttribute("href")).toBe("/api-reference#uploadSourcemap");
    expect(root.querySelector("table[aria-label='Error groups']")).toBeNull();
    expect(root.querySelector("[data-testid=no-releases]")?.textContent).toBe("No sourcemap uploaded yet.");
  });

  it("says when the filters leave nothing, with the way back to the open errors", async () => {
    const calls = fakeFetch({ ...routes(), "GET /api/v1/errors": (c) => ({ body: { from: range.from, to: range.to, groups: c.query.get("status") === "open" ? groups : [] } }) });
    const root = await mount(<Errors product={product} range={range} env="live" />);
    const status = root.querySelector<HTMLSelectElement>("select[name=status]")!;
    await act(() => {
      status.value = "ignored";
      status.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle();
    expect(root.querySelector("[data-testid=no-matching-errors] p")?.textContent).toBe("No ignored errors from 2026-11-01 to 2026-11-23.");
    expect(root.querySelector("[data-testid=no-errors]")).toBeNull();
    await click(byText(root, "button", "Show open errors of every release"));
    expect(calls.filter((c) => c.path === "/api/v1/errors").at(-1)?.query.get("status")).toBe("open");
    expect(root.querySelectorAll("[data-testid=error-row]")).toHaveLength(2);
  });

  it("shows the server's message with Try again when the list fails", async () => {
    let fail = true;
    fakeFetch({
      ...routes(),
      "GET /api/v1/errors": () =>
        fail ? { status: 503, body: { error: { code: "query_unavailable", message: "The event store is busy." } } } : { body: { from: "", to: "", groups } },
    });
    const root = await mount(<Errors product={product} range={range} env="live" />);
    expect(root.querySelector("[role=alert]")?.textContent).toContain("The event store is busy.");
    fail = false;
    await click(byText(root, "button", "Try again"));
    expect(root.querySelectorAll("[data-testid=error-row]")).toHaveLength(2);
  });
});

describe("releases", () => {
  it("lists each release's sourcemaps, newest release first", async () => {
    fakeFetch(routes());
    const root = await mount(<Errors product={product} range={range} env="live" />);
    const releases = root.querySelectorAll("[data-testid=release]");
    expect([...releases].map((r) => r.getAttribute("aria-label"))).toEqual(["Release 2.0.0", "Release 1.9.0"]);
    const rows = releases[0].querySelectorAll("tbody tr");
    expect(cells(rows[0])).toEqual(["https://shop.example.com/assets/vendor.min.js", "2.4 MB", "Yes", "22 Nov 2026, 09:01 UTC"]);
    expect(cells(rows[1])).toEqual([app, "1.8 KB", "No", "22 Nov 2026, 09:00 UTC"]);
    expect(cells(releases[1].querySelector("tbody tr"))).toEqual([app, "912 B", "No", "10 Nov 2026, 09:00 UTC"]);
    expect(byRelease([]).length).toBe(0);
  });

  it("deletes a release only after the confirmation, then lists what is left", async () => {
    let maps = uploads;
    const calls = fakeFetch({
      ...routes(),
      "GET /api/v1/sourcemaps": () => ({ body: { items: maps } }),
      "DELETE /api/v1/sourcemaps": (c) => {
        const gone = maps.filter((m) => m.release === c.query.get("release"));
        maps = maps.filter((m) => m.release !== c.query.get("release"));
        return { body: { deleted: gone.length } };
      },
    });
    const root = await mount(<Errors product={product} range={range} env="live" />);
    const deletes = () => calls.filter((c) => c.method === "DELETE");
    const release = root.querySelector("[data-testid=release]")!;
    const button = byText(release, "button", "Delete release 2.0.0")!;
    expect(button.querySelector(".visually-hidden")?.textContent).toBe(" release 2.0.0");

    await click(button);
    let dialog = root.querySelector("[role=alertdialog]")!;
    expect(dialog.querySelector("h2")?.textContent).toBe("Delete release 2.0.0?");
    expect(document.activeElement?.textContent).toBe("Cancel");
    await click(byText(dialog, "button", "Cancel"));
    expect(root.querySelector("[role=alertdialog]")).toBeNull();
    expect(deletes()).toHaveLength(0);

    await click(byText(root.querySelector("[data-testid=release]")!, "button", "Delete release 2.0.0"));
    dialog = root.querySelector("[role=alertdialog]")!;
    await click(byText(dialog, "button", "Delete 2 sourcemaps"));
    expect(deletes()).toHaveLength(1);
    expect(Object.fromEntries(deletes()[0].query)).toEqual({ product: "3", release: "2.0.0" });
    expect(root.querySelector("[role=alertdialog]")).toBeNull();
    expect(root.querySelector(".ok[role=status]")?.textContent).toBe("Deleted release 2.0.0: 2 sourcemaps.");
    expect([...root.querySelectorAll("[data-testid=release]")].map((r) => r.getAttribute("aria-label"))).toEqual(["Release 1.9.0"]);
  });

  it("merges the selected groups into the one picked, only after the confirmation, then lists the groups again", async () => {
    let list = [...groups, group({ fingerprint: "c".repeat(64), type: "Error", message: "third", events: 1 })];
    const calls = fakeFetch({
      ...routes(),
      "GET /api/v1/errors": () => ({ body: { from: range.from, to: range.to, groups: list } }),
      "POST /api/v1/errors/merge": (c) => {
        const body = c.body as { into: string; groups: string[] };
        list = list.filter((g) => !body.groups.includes(g.fingerprint));
        return { body: { into: body.into, merged: body.groups } };
      },
    });
    const root = await mount(<Errors product={product} range={range} env="test" />);
    const merges = () => calls.filter((c) => c.method === "POST");
    const button = () => byText(root, "button", `Merge… (${root.querySelectorAll("[data-testid=error-row] input:checked").length})`)!;
    expect(button().hasAttribute("disabled")).toBe(true);
    const box = (i: number) => root.querySelectorAll<HTMLInputElement>("[data-testid=error-row] input[type=checkbox]")[i];
    expect(box(0).getAttribute("aria-label")).toBe("Select marker-checkout");
    await click(box(0));
    expect(button().hasAttribute("disabled")).toBe(true);
    await click(box(1));
    expect(button().textContent).toBe("Merge… (2)");
    expect(button().hasAttribute("disabled")).toBe(false);

    await click(button());
    let dialog = root.querySelector("[role=alertdialog]")!;
    expect(dialog.querySelector("h2")?.textContent).toBe("Merge 2 error groups?");
    const radios = [...dialog.querySelectorAll<HTMLInputElement>("input[type=radio]")];
    expect(radios.map((r) => r.checked)).toEqual([true, false]);
    await click(byText(dialog, "button", "Cancel"));
    expect(merges()).toHaveLength(0);

    // The second group is the one kept this time.
    await click(button());
    dialog = root.querySelector("[role=alertdialog]")!;
    await click(dialog.querySelectorAll<HTMLInputElement>("input[type=radio]")[1]);
    await click(byText(dialog, "button", "Merge groups"));
    expect(merges()).toHaveLength(1);
    expect(Object.fromEntries(merges()[0].query)).toEqual({ product: "3", dateFrom: "2026-11-01", dateTo: "2026-11-23", env: "test" });
    expect(merges()[0].body).toEqual({ into: loadFp, groups: [checkoutFp] });
    expect(root.querySelector("[role=alertdialog]")).toBeNull();
    expect(root.querySelector(".ok[role=status]")?.textContent).toBe(`Merged 1 group into “${longMessage}”.`);
    expect(root.querySelectorAll("[data-testid=error-row]")).toHaveLength(2);
    expect(root.querySelectorAll("[data-testid=error-row] input:checked")).toHaveLength(0);
  });

  it("shows a refused merge's message", async () => {
    fakeFetch({ ...routes(), "POST /api/v1/errors/merge": { status: 403, body: { error: { code: "error_aliases_full", message: "This product has 1000 merged error groups." } } } });
    const root = await mount(<Errors product={product} range={range} env="live" />);
    for (const b of root.querySelectorAll("[data-testid=error-row] input[type=checkbox]")) await click(b);
    await click(byText(root, "button", "Merge… (2)"));
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Merge groups"));
    expect(root.querySelector("[role=alert]")?.textContent).toContain("This product has 1000 merged error groups.");
  });

  it("shows a failed delete's message", async () => {
    fakeFetch({ ...routes(), "DELETE /api/v1/sourcemaps": { status: 500, body: { error: { code: "internal", message: "The store failed." } } } });
    const root = await mount(<Errors product={product} range={range} env="live" />);
    await click(byText(root, "button", "Delete release 1.9.0"));
    await click(byText(root.querySelector("[role=alertdialog]")!, "button", "Delete 1 sourcemap"));
    expect(root.querySelector("section[aria-labelledby=releases-title] [role=alert]")?.textContent).toContain("The store failed.");
    expect(root.querySelectorAll("[data-testid=release]")).toHaveLength(2);
  });
});

describe("error group page", () => {
  it("lists the merged groups and unmerges one only after the confirmation, then reads the group again", async () => {
    const merged = [
      { fingerprint: loadFp, reason: "merge" as const, mergedAt: "2026-11-22T09:30:00Z", mergedBy: "ada@example.com", type: "TypeError", message: "marker-load", events: 2 },
      { fingerprint: "d".repeat(64), reason: "sourcemap" as const, mergedAt: "2026-11-21T09:30:00Z", mergedBy: "ingest", type: "", message: "", events: 0 },
    ];
    let current = detail({ group: group({ events: 1236 }), merged });
    const calls = fakeFetch({
      [`GET /api/v1/errors/${checkoutFp}`]: () => ({ body: current }),
      "POST /api/v1/errors/unmerge": (c) => {
        const fps = (c.body as { groups: string[] }).groups;
        current = detail({ group: group({ events: 1234 }), merged: merged.filter((m) => !fps.includes(m.fingerprint)) });
        return { body: { unmerged: fps.map((fingerprint) => ({ fingerprint, into: checkoutFp, reason: "merge", createdAt: "2026-11-22T09:30:00Z", createdBy: "ada@example.com" })) } };
      },
    });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    const table = root.querySelector("table[aria-label='Merged groups']")!;
    expect(cells(table.querySelector("thead tr"))).toEqual(["Error", "Events", "Merged", "Actions"]);
    const rows = () => [...root.querySelectorAll("[data-testid=merged-group]")].map((r) => cells(r));
    expect(rows()).toEqual([
      [`TypeError marker-load${loadFp}`, "2", "By ada@example.com22 Nov 2026, 09:30 UTC", "Unmerge"],
      [expect.stringMatching(/^\(no event .*\)d{64}$/), "0", "By ingest, for a late sourcemap21 Nov 2026, 09:30 UTC", "Unmerge"],
    ]);
    const unmerges = () => calls.filter((c) => c.method === "POST");
    await click(root.querySelector<HTMLButtonElement>("button[aria-label='Unmerge marker-load']")!);
    let dialog = root.querySelector("[role=alertdialog]")!;
    expect(dialog.querySelector("h2")?.textContent).toBe("Unmerge this group?");
    await click(byText(dialog, "button", "Cancel"));
    expect(unmerges()).toHaveLength(0);
    await click(root.querySelector<HTMLButtonElement>("button[aria-label='Unmerge marker-load']")!);
    dialog = root.querySelector("[role=alertdialog]")!;
    await click(byText(dialog, "button", "Unmerge"));
    await settle();
    expect(unmerges()).toHaveLength(1);
    expect(unmerges()[0].path).toBe("/api/v1/errors/unmerge");
    expect(unmerges()[0].body).toEqual({ groups: [loadFp] });
    expect(root.querySelector("[role=alertdialog]")).toBeNull();
    expect(root.querySelector(".ok[role=status]")?.textContent).toBe("Unmerged “marker-load”: it is its own group again, on the Errors page.");
    expect(rows()).toHaveLength(1);
    expect(root.querySelector(".facts")?.textContent).toContain("1,234");
  });

  it("shows no merged groups when none were merged", async () => {
    fakeFetch({ [`GET /api/v1/errors/${checkoutFp}`]: { body: detail() } });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    expect(root.querySelector("table[aria-label='Merged groups']")).toBeNull();
  });

  it("shows the group and its occurrences newest first, with who, where and which release", async () => {
    const calls = fakeFetch({ [`GET /api/v1/errors/${checkoutFp}`]: { body: detail() } });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="test" />);
    expect(Object.fromEntries(calls[0].query)).toEqual({ product: "3", dateFrom: "2026-11-01", dateTo: "2026-11-23", env: "test" });
    expect(root.querySelector("h1")?.textContent).toBe("RangeError");
    expect(root.querySelector("[data-testid=error-message]")?.textContent).toBe("marker-checkout");
    expect(root.querySelector(".crumbs a")?.getAttribute("href")).toBe("/errors?product=3&from=2026-11-01&to=2026-11-23&env=test");
    const facts = Object.fromEntries([...root.querySelectorAll(".page > .facts > div")].map((d) => [d.querySelector("dt")?.textContent, d.querySelector("dd")?.textContent]));
    expect(facts).toEqual({
      Status: "Open", Events: "1,234", Users: "3", "First seen": "20 Nov 2026, 08:00 UTC", "Last seen": "23 Nov 2026, 10:04 UTC", Fingerprint: checkoutFp,
    });
    expect(byText(root, "p.hint", "The 2 latest of 1,234 occurrences from 2026-11-01 to 2026-11-23, newest first.")).toBeTruthy();
    const occurrences = root.querySelectorAll("[data-testid=occurrence]");
    expect([...occurrences].map((o) => o.querySelector("h3")?.textContent)).toEqual(["23 Nov 2026, 10:04 UTC", "20 Nov 2026, 08:00 UTC"]);
    const first = Object.fromEntries([...occurrences[0].querySelectorAll(".facts > div")].map((d) => [d.querySelector("dt")?.textContent, d.querySelector("dd")?.textContent]));
    expect(first).toEqual({ User: "u1", Browser: "Chrome 148", OS: "Linux", Release: "2.0.0", URL: "https://shop.example.com/checkout" });
    // The user opens their page: their events and replays.
    expect(occurrences[0].querySelector(".facts dd a")?.getAttribute("href")).toBe("/users/u1?product=3");
    // The newest occurrence's stack is open, the others folded.
    expect([...occurrences].map((o) => o.querySelector("details")?.open)).toEqual([true, false]);
  });

  it("links an occurrence of a recorded session to its replay at the error's moment", async () => {
    const time = "2026-11-23T10:04:00.250Z";
    fakeFetch({ [`GET /api/v1/errors/${checkoutFp}`]: { body: detail({ occurrences: [occurrence({ time, sessionId: "sess-1" })] }) } });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    const watch = byText(root.querySelector("[data-testid=occurrence]")!, "a", "Watch the session")!;
    expect(watch.getAttribute("href")).toBe(`/replays/sess-1?product=3&t=${Date.parse(time)}`);
  });

  it("shows de-minified frames with file:line:column and the source line, and minified ones with why, once", async () => {
    fakeFetch({ [`GET /api/v1/errors/${checkoutFp}`]: { body: detail() } });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    const [newest, oldest] = root.querySelectorAll("[data-testid=occurrence]");

    const resolved = newest.querySelectorAll("[data-testid=frame]");
    expect(resolved).toHaveLength(2);
    expect(resolved[0].querySelector(".frame-function")?.textContent).toBe("checkout");
    expect(resolved[0].querySelector(".frame-location")?.textContent).toBe("app.ts:22:11");
    expect(resolved[0].querySelector("pre.source-line code")?.textContent).toBe('throw new RangeError("marker-checkout");');
    expect(resolved[0].querySelector(".tag")).toBeNull();
    expect(newest.querySelector("[data-testid=resolution]")).toBeNull();

    const minified = oldest.querySelectorAll("[data-testid=frame]");
    expect([...minified].map((f) => f.querySelector(".frame-function")?.textContent)).toEqual(["u", "(anonymous)", "parse"]);
    expect(minified[0].querySelector(".frame-location")?.textContent).toBe(`${app}:1:583`);
    expect(minified[0].querySelector("pre")).toBeNull();
    expect([...minified].map((f) => f.querySelector(".tag")?.textContent)).toEqual(["minified", "minified", "not app code"]);
    expect(minified[2].querySelector(".frame-location")?.textContent).toBe("(unknown file)");
    expect(oldest.querySelectorAll("[data-testid=resolution]")).toHaveLength(1);
    expect(oldest.querySelector("[data-testid=resolution]")?.textContent).toBe(`Some frames stay minified: no sourcemap for release 1.9.0 and ${app}.`);
    expect(frameLocation({ file: "x.js", line: 3 })).toBe("x.js:3");
  });

  it("tags as minified only the frames the server marks so, and every unresolved one of older events", async () => {
    const page = "https://shop.example.com/checkout?step=2";
    fakeFetch({
      [`GET /api/v1/errors/${checkoutFp}`]: {
        body: detail({
          occurrences: [
            occurrence({
              frames: [
                { function: "checkout", file: page, line: 41, column: 13, in_app: true, resolved: false, minified: false },
                { function: "t", file: app, line: 1, column: 583, in_app: true, resolved: false, minified: true },
              ],
            }),
          ],
        }),
      },
    });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    const frames = root.querySelectorAll("[data-testid=frame]");
    expect([...frames].map((f) => f.querySelector(".tag")?.textContent ?? null)).toEqual([null, "minified"]);
    expect(stayedMinified({ function: "u", file: app, in_app: true, resolved: false })).toBe(true);
    expect(stayedMinified({ function: "u", file: app, in_app: true, resolved: true })).toBe(false);
  });

  it("shows and hides the raw stack of an occurrence", async () => {
    fakeFetch({ [`GET /api/v1/errors/${checkoutFp}`]: { body: detail() } });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    const newest = root.querySelector("[data-testid=occurrence]")!;
    const toggle = byText(newest, "button", "Show the raw stack")!;
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(newest.querySelector(".raw-stack")).toBeNull();
    await click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(toggle.textContent).toBe("Hide the raw stack");
    const raw = newest.querySelector(`#${toggle.getAttribute("aria-controls")}`);
    expect(raw?.textContent).toBe(stack);
    await click(toggle);
    expect(newest.querySelector(".raw-stack")).toBeNull();
  });

  it("resolves in the release asked for, defaulting to the latest occurrence's, then ignores and reopens", async () => {
    const calls = fakeFetch({
      [`GET /api/v1/errors/${checkoutFp}`]: { body: detail() },
      [`PUT /api/v1/errors/${checkoutFp}/status`]: (c) => {
        const b = c.body as { status: string; release?: string };
        return {
          body: {
            fingerprint: checkoutFp, status: b.status, resolvedRelease: b.status === "resolved" ? (b.release ?? "2.0.0") : "",
            changedAt: "2026-11-23T11:00:00Z", changedBy: "owner@example.com",
          },
        };
      },
    });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    const puts = () => calls.filter((c) => c.method === "PUT");
    const actions = () => [...root.querySelectorAll(".section-head .actions button")].map((b) => b.textContent);
    expect(actions()).toEqual(["Resolve…", "Ignore"]);

    // Cancel closes the form and gives focus back to its button.
    await click(byText(root, "button", "Resolve…"));
    await click(byText(root.querySelector("form[aria-label=Resolve]")!, "button", "Cancel"));
    expect(root.querySelector("form[aria-label=Resolve]")).toBeNull();
    expect(document.activeElement?.textContent).toBe("Resolve…");

    await click(byText(root, "button", "Resolve…"));
    const form = root.querySelector("form[aria-label=Resolve]")!;
    expect(byText(root, "button", "Resolve…")?.getAttribute("aria-expanded")).toBe("true");
    const input = form.querySelector<HTMLInputElement>("input[name=release]")!;
    expect(input.value).toBe("2.0.0");
    expect(document.activeElement).toBe(input);
    expect(puts()).toHaveLength(0);
    await type(input, "2.0.1");
    await submit(form);
    expect(puts().map((c) => [c.query.get("product"), c.body])).toEqual([["3", { status: "resolved", release: "2.0.1" }]]);
    expect(root.querySelector("[data-testid=error-status]")?.textContent).toBe("Resolved in 2.0.1");
    expect(root.querySelector("form[aria-label=Resolve]")).toBeNull();
    expect(root.querySelector(".ok[role=status]")?.textContent).toBe(
      "Resolved in release 2.0.1. An event of another release from now on reopens it as a regression.",
    );
    expect(actions()).toEqual(["Ignore", "Reopen"]);

    await click(byText(root, "button", "Ignore"));
    expect(puts().at(-1)?.body).toEqual({ status: "ignored" });
    expect(root.querySelector("[data-testid=error-status]")?.textContent).toBe("Ignored");
    expect(actions()).toEqual(["Resolve…", "Reopen"]);

    await click(byText(root, "button", "Reopen"));
    expect(puts().at(-1)?.body).toEqual({ status: "open" });
    expect(root.querySelector("[data-testid=error-status]")?.textContent).toBe("Open");
  });

  it("resolves without a release when the field is emptied, and keeps the form open on a refusal", async () => {
    let answer: { status: number; body: unknown } = {
      status: 400, body: { error: { code: "invalid_request", message: "release: must be at most 200 characters" } },
    };
    const calls = fakeFetch({
      [`GET /api/v1/errors/${checkoutFp}`]: { body: detail({ group: group({ status: "open", regressed: true }) }) },
      [`PUT /api/v1/errors/${checkoutFp}/status`]: () => answer,
    });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    expect(root.querySelector(".page > .facts [data-testid=regressed]")?.textContent).toBe("Regressed");
    await click(byText(root, "button", "Resolve…"));
    const form = root.querySelector("form[aria-label=Resolve]")!;
    await submit(form);
    expect(root.querySelector("[role=alert]")?.textContent).toContain("release: must be at most 200 characters");
    expect(root.querySelector("form[aria-label=Resolve]")).toBeTruthy();

    answer = { status: 200, body: { fingerprint: checkoutFp, status: "resolved", resolvedRelease: "2.0.0", changedAt: null, changedBy: "" } };
    await type(form.querySelector("input[name=release]"), " ");
    await submit(form);
    expect(calls.filter((c) => c.method === "PUT").at(-1)?.body).toEqual({ status: "resolved" });
    expect(root.querySelector("[data-testid=regressed]")).toBeNull();
  });

  it("says so when the range holds no event of the group", async () => {
    fakeFetch({ [`GET /api/v1/errors/${checkoutFp}`]: { status: 404, body: { error: { code: "error_group_not_found", message: "No such error group." } } } });
    const root = await mount(<ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />);
    expect(root.querySelector("[data-testid=no-group-events]")?.textContent).toContain("This error has no event from 2026-11-01 to 2026-11-23.");
    expect(root.querySelector("[role=alert]")).toBeNull();
  });
});

describe("errors routes", () => {
  const session = { user: { id: 1, email: "owner@example.com", createdAt: "2026-11-23T09:00:00Z" }, expiresAt: "2026-12-07T09:00:00Z" };
  const config = (errorTracking: boolean) => ({ body: { setupRequired: false, features: { errorTracking } } });
  afterEach(() => {
    history.replaceState(null, "", "/");
    localStorage.clear();
  });

  it("opens a group from the list, keeps Errors marked, and another product opens its list", async () => {
    const fp = "client/fingerprint 1";
    fakeFetch({
      "GET /api/v1/dashboard/config": config(true),
      "GET /api/v1/session": { body: session },
      "GET /api/v1/products": { body: { items: [product, { ...product, id: 4, name: "Blog" }] } },
      ...routes([group({ fingerprint: fp })]),
      [`GET /api/v1/errors/${encodeURIComponent(fp)}`]: { body: detail({ group: group({ fingerprint: fp }) }) },
    });
    history.replaceState(null, "", "/errors?product=3&range=7d");
    const root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe("Errors");
    expect(root.querySelector("select[aria-label='Date range']")).toBeTruthy();
    const link = root.querySelector<HTMLAnchorElement>(".error-message a")!;
    expect(link.getAttribute("href")).toMatch(/^\/errors\/client%2Ffingerprint%201\?product=3&range=7d$/);
    await click(link);
    expect(location.pathname).toBe("/errors/client%2Ffingerprint%201");
    expect(root.querySelector("h1")?.textContent).toBe("RangeError");
    expect(root.querySelector(".page .facts .fingerprint")?.textContent).toBe(fp);
    expect(root.querySelector(".nav-item.active")?.textContent).toBe("Errors");
    expect(root.querySelector("select[aria-label='Date range']")).toBeTruthy();

    const switcher = root.querySelector<HTMLSelectElement>("select[aria-label=Product]")!;
    await act(() => {
      switcher.value = "4";
      switcher.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle();
    expect(location.pathname + location.search).toBe("/errors?product=4&range=7d");
  });

  it("is not found while error tracking is off", async () => {
    fakeFetch({ "GET /api/v1/dashboard/config": config(false), "GET /api/v1/session": { body: session }, "GET /api/v1/products": { body: { items: [product] } } });
    history.replaceState(null, "", `/errors/${checkoutFp}?product=3`);
    const root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe("Page not found");
  });

  it("keeps Errors marked on a group's page, and links a group with the list's range and env", () => {
    const items = navItems({ errorTracking: true });
    expect(activeItem(items, `/errors/${checkoutFp}`)?.label).toBe("Errors");
    expect(activeItem(items, `/errors/${checkoutFp}`)?.chart).toBe(true);
    expect(groupHref(3, "a b", presetRange("30d"), "test")).toBe("/errors/a%20b?product=3&range=30d&env=test");
  });
});

describe("errors roles", () => {
  it("shows a viewer the groups without boxes or Merge, and no release's Delete; a member merges but deletes no release", async () => {
    fakeFetch(routes());
    const viewer = await mount(asRole("viewer", <Errors product={product} range={range} env="live" />));
    const table = viewer.querySelector("table[aria-label='Error groups']")!;
    expect(cells(table.querySelector("thead tr"))).toEqual(["Type", "Message", "Events", "Users", "Last seen", "First seen", "Last 7 days"]);
    expect(table.querySelector("input[type=checkbox]")).toBeNull();
    expect(viewer.querySelector(".table-actions")).toBeNull();
    expect(viewer.querySelectorAll("[data-testid=release]")).toHaveLength(2);
    expect(viewer.querySelector("[data-testid=release] button.danger")).toBeNull();
    fakeFetch(routes());
    const member = await mount(asRole("member", <Errors product={product} range={range} env="live" />));
    expect(member.querySelectorAll("table[aria-label='Error groups'] input[type=checkbox]")).toHaveLength(2);
    expect(byText(member, "button", "Merge… (0)")).toBeDefined();
    expect(member.querySelector("[data-testid=release] button.danger")).toBeNull();
    fakeFetch(routes());
    const admin = await mount(asRole("admin", <Errors product={product} range={range} env="live" />));
    expect(admin.querySelectorAll("[data-testid=release] button.danger")).toHaveLength(2);
  });

  it("shows a viewer a group without status changes or Unmerge, and a member both", async () => {
    const merged = [{ fingerprint: loadFp, reason: "merge" as const, mergedAt: "2026-11-22T09:30:00Z", mergedBy: "ada@example.com", type: "TypeError", message: "marker-load", events: 2 }];
    const groupRoutes = { [`GET /api/v1/errors/${checkoutFp}`]: { body: detail({ merged }) } };
    fakeFetch(groupRoutes);
    const viewer = await mount(asRole("viewer", <ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />));
    const table = viewer.querySelector("table[aria-label='Merged groups']")!;
    expect(cells(table.querySelector("thead tr"))).toEqual(["Error", "Events", "Merged"]);
    for (const label of ["Resolve…", "Ignore", "Unmerge"]) expect(byText(viewer, "button", label), label).toBeUndefined();
    fakeFetch(groupRoutes);
    const member = await mount(asRole("member", <ErrorGroupPage product={product} fingerprint={checkoutFp} range={range} env="live" />));
    for (const label of ["Resolve…", "Ignore", "Unmerge"]) expect(byText(member, "button", label), label).toBeDefined();
  });
});
