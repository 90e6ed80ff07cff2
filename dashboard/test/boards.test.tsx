// The Dashboards page (docs/dashboard.md, "Dashboards"): a board runs all
// its tiles at once with the range on screen (or the board's own), draws
// each by its kind, saves the layout whole when a tile moves or grows, and
// shows a viewer or a shared link no editing. A member drags a tile by its
// handle before or after another, saved whole as the buttons save it.
import { act } from "preact/test-utils";
import { describe, expect, it } from "vitest";
import { BoardView, boardInput, boardPath, dropped, dropSide, moved, rangeText } from "../src/pages/Boards";
import { boardRange, kept, presetRange, zoneToday } from "../src/range";
import type { Board, Product } from "../src/types";
import { asRole, byText, choose, click, fakeFetch, mount, settle, submit, type, type Call } from "./helpers";

const product: Product = { id: 3, name: "Shop", timeZone: "UTC", workspaceId: 1, createdAt: "" };
const range = { key: "custom" as const, from: "2026-11-21", to: "2026-11-27" };
const trend = { series: [{ label: "$pageview", data: [{ date: "2026-11-21", value: 4 }] }] };
const funnel = { steps: [{ name: "a", count: 2, conversionPct: 100 }], conversionPct: 100 };

function board(patch: Partial<Board> = {}): Board {
  return {
    id: 7, productId: 3, name: "Growth", description: "", dateFrom: "", dateTo: "", filters: [],
    createdAt: "", updatedAt: "1", createdBy: "owner@example.com", tileCount: 2,
    tiles: [
      { id: 11, boardId: 7, queryId: 1, kind: "trend", name: "Views", position: 0, width: 2, height: 1 },
      { id: 12, boardId: 7, queryId: 2, kind: "funnel", name: "Signup", position: 1, width: 2, height: 1 },
    ],
    ...patch,
  };
}

function routes(b: Board, extra: Record<string, unknown> = {}) {
  return {
    "GET /api/v1/boards/7": { body: b },
    "POST /api/v1/boards/7/tiles/11/run": { body: trend },
    "POST /api/v1/boards/7/tiles/12/run": { body: funnel },
    "GET /api/v1/annotations": { body: { items: [], page: 1, pageSize: 100, total: 0 } },
    "GET /api/v1/queries": { body: { items: [] } },
    "GET /api/v1/products/3/shared-links": { body: { items: [] } },
    ...extra,
  };
}

describe("Dashboards", () => {
  it("reads its paths and moves tiles", () => {
    expect(boardPath("/boards/12")).toBe(12);
    expect(boardPath("/boards")).toBeNull();
    expect(moved([1, 2, 3], 0, 1)).toEqual([2, 1, 3]);
    expect(moved([1, 2, 3], 0, -1)).toEqual([1, 2, 3]);
    expect(boardInput(board()).tiles).toEqual([{ id: 11, width: 2, height: 1 }, { id: 12, width: 2, height: 1 }]);
  });

  it("puts a dropped tile before or after another, the others keeping their order", () => {
    const abcd = ["a", "b", "c", "d"];
    expect(dropped(abcd, 0, 2, "before")).toEqual(["b", "a", "c", "d"]);
    expect(dropped(abcd, 0, 2, "after")).toEqual(["b", "c", "a", "d"]);
    expect(dropped(abcd, 0, 3, "after")).toEqual(["b", "c", "d", "a"]);
    expect(dropped(abcd, 3, 0, "before")).toEqual(["d", "a", "b", "c"]);
    expect(dropped(abcd, 3, 1, "after")).toEqual(["a", "b", "d", "c"]);
    expect(dropped(abcd, 2, 1, "before")).toEqual(["a", "c", "b", "d"]);
    expect(dropped(abcd, 1, 2, "after")).toEqual(["a", "c", "b", "d"]);
    // Nothing changes: on itself, where it already is, out of range.
    expect(dropped(abcd, 1, 1, "before")).toBeNull();
    expect(dropped(abcd, 1, 1, "after")).toBeNull();
    expect(dropped(abcd, 1, 2, "before")).toBeNull();
    expect(dropped(abcd, 2, 1, "after")).toBeNull();
    expect(dropped(abcd, 4, 0, "before")).toBeNull();
    expect(dropped(abcd, 0, -1, "after")).toBeNull();
    expect(dropped([], 0, 0, "after")).toBeNull();
    expect(abcd).toEqual(["a", "b", "c", "d"]);
  });

  it("drops on the half of a tile the pointer is over: left or right in a row, top or bottom alone in it", () => {
    const box = { left: 100, top: 50, width: 200, height: 100 };
    expect(dropSide(box, 150, 140, false)).toBe("before");
    expect(dropSide(box, 250, 60, false)).toBe("after");
    expect(dropSide(box, 200, 60, false)).toBe("after");
    expect(dropSide(box, 290, 60, true)).toBe("before");
    expect(dropSide(box, 110, 140, true)).toBe("after");
  });

  it("runs every tile at once over the range on screen, each drawn by its kind", async () => {
    const calls = fakeFetch(routes(board()));
    const root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    const runs = calls.filter((c) => c.path.endsWith("/run"));
    expect(runs.map((c) => c.path).sort()).toEqual(["/api/v1/boards/7/tiles/11/run", "/api/v1/boards/7/tiles/12/run"]);
    expect(runs.every((c) => c.query.get("dateFrom") === "2026-11-21" && c.query.get("dateTo") === "2026-11-27")).toBe(true);
    const tiles = root.querySelectorAll("[data-testid=board-tile]");
    expect(tiles.length).toBe(2);
    expect(tiles[0].querySelector("h2")!.textContent).toBe("Views");
    expect(tiles[0].querySelector("canvas, svg, [role=img]:not(.drag-handle)")).not.toBeNull();
    expect(tiles[1].textContent).toContain("a");
  });

  it("runs the tiles over the board's own range when it has one", async () => {
    const calls = fakeFetch(routes(board({ dateFrom: "2026-01-01", dateTo: "2026-01-31" })));
    const root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    const runs = calls.filter((c) => c.path.endsWith("/run"));
    expect(runs.length).toBe(2);
    expect(runs.every((c) => c.query.get("dateFrom") === "2026-01-01" && c.query.get("dateTo") === "2026-01-31")).toBe(true);
    expect(root.querySelector("[data-testid=board-range]")!.textContent).toContain("2026-01-01 – 2026-01-31");
  });

  it("reads a relative range from today, keeping the preset it matches", () => {
    const today = new Date(Date.UTC(2026, 10, 29));
    expect(boardRange("-6d", "-0d", today)).toEqual({ key: "7d", from: "2026-11-23", to: "2026-11-29" });
    expect(boardRange("-1d", "-1d", today)).toEqual({ key: "yesterday", from: "2026-11-28", to: "2026-11-28" });
    expect(boardRange("-10d", "-3d", today)).toEqual({ key: "custom", from: "2026-11-19", to: "2026-11-26" });
    expect(boardRange("2026-01-01", "2026-01-31", today)).toEqual({ key: "custom", from: "2026-01-01", to: "2026-01-31" });
    expect(kept(presetRange("30d", today))).toEqual({ dateFrom: "-29d", dateTo: "-0d" });
    expect(kept(presetRange("today", today))).toEqual({ dateFrom: "-0d", dateTo: "-0d" });
    expect(kept(range)).toEqual({ dateFrom: "2026-11-21", dateTo: "2026-11-27" });
    expect(rangeText(boardRange("-6d", "-0d", today))).toBe("Last 7 days (2026-11-23 – 2026-11-29)");
  });

  it("runs the tiles over a relative range counted back from today", async () => {
    const calls = fakeFetch(routes(board({ dateFrom: "-6d", dateTo: "-0d" })));
    const root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    const want = presetRange("7d", zoneToday());
    const runs = calls.filter((c) => c.path.endsWith("/run"));
    expect(runs.length).toBe(2);
    expect(runs.every((c) => c.query.get("dateFrom") === want.from && c.query.get("dateTo") === want.to)).toBe(true);
    expect(root.querySelector("[data-testid=board-range]")!.textContent).toBe(`Dashboard range: Last 7 days (${want.from} – ${want.to})`);
  });

  it("keeps a preset on screen as relative days, and a custom range as its dates", async () => {
    const puts: Call[] = [];
    fakeFetch(
      routes(board(), {
        "PUT /api/v1/boards/7": (c: Call) => {
          puts.push(c);
          const { dateFrom, dateTo } = c.body as Board;
          return { body: board({ dateFrom, dateTo }) };
        },
      }),
    );
    let root = await mount(<BoardView product={product} id={7} range={presetRange("30d")} env="live" />);
    await click(byText(root, "button", "Keep this range for the dashboard"));
    expect(puts[0].body).toMatchObject({ dateFrom: "-29d", dateTo: "-0d" });
    root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    await click(byText(root, "button", "Keep this range for the dashboard"));
    expect(puts[1].body).toMatchObject({ dateFrom: "2026-11-21", dateTo: "2026-11-27" });
  });

  it("saves the whole layout when a tile moves or grows", async () => {
    const puts: Call[] = [];
    const calls = fakeFetch(
      routes(board(), {
        "PUT /api/v1/boards/7": (c: Call) => {
          puts.push(c);
          return { body: board({ tiles: [...board().tiles!].reverse() }) };
        },
      }),
    );
    const root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    await click(root.querySelector("[aria-label='Move later']"));
    expect(puts.length).toBe(1);
    expect((puts[0].body as { tiles: unknown }).tiles).toEqual([{ id: 12, width: 2, height: 1 }, { id: 11, width: 2, height: 1 }]);
    expect((puts[0].body as { name: string }).name).toBe("Growth");
    await click(byText(root, "button", "Large"));
    expect((puts[1].body as { tiles: { id: number; height: number }[] }).tiles.map((t) => t.height)).toContain(2);
    expect(calls.some((c) => c.method === "PUT")).toBe(true);
  });

  it("saves the whole layout when a tile is dragged by its handle onto another, and nothing when dropped where it is", async () => {
    const puts: Call[] = [];
    fakeFetch(
      routes(board(), {
        "PUT /api/v1/boards/7": (c: Call) => {
          puts.push(c);
          return { body: board({ tiles: [...board().tiles!].reverse() }) };
        },
      }),
    );
    const root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    const handle = root.querySelector("[aria-label='Drag Views']");
    expect(handle?.getAttribute("draggable")).toBe("true");
    expect(root.querySelector("[aria-label='Drag Signup']")).not.toBeNull();
    const fire = async (el: Element | null | undefined, type: string) => {
      await act(() => {
        el!.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true }));
      });
    };
    const tiles = () => root.querySelectorAll("[data-testid=board-tile]");
    // On itself: no indicator, nothing sent.
    await fire(handle, "dragstart");
    expect(tiles()[0].classList.contains("dragging")).toBe(true);
    await fire(tiles()[0], "dragover");
    expect(root.querySelector(".drop-before, .drop-after")).toBeNull();
    await fire(tiles()[0], "drop");
    await fire(handle, "dragend");
    await settle();
    expect(puts.length).toBe(0);
    expect(tiles()[0].classList.contains("dragging")).toBe(false);
    // Onto the other tile (happy-dom's boxes are empty: the pointer is on its lower half, so after it).
    await fire(handle, "dragstart");
    await fire(tiles()[1], "dragover");
    expect(tiles()[1].classList.contains("drop-after")).toBe(true);
    await fire(tiles()[1], "drop");
    await fire(handle, "dragend");
    await settle();
    expect(puts.length).toBe(1);
    expect((puts[0].body as { tiles: unknown }).tiles).toEqual([{ id: 12, width: 2, height: 1 }, { id: 11, width: 2, height: 1 }]);
    expect((puts[0].body as { name: string }).name).toBe("Growth");
    expect([...tiles()].map((t) => t.querySelector("h2")!.textContent)).toEqual(["Signup", "Views"]);
    expect(root.querySelector(".drop-before, .drop-after, .dragging")).toBeNull();
    // A drag that is not a tile's (a file, some text) is not taken.
    await fire(tiles()[0], "dragover");
    await fire(tiles()[0], "drop");
    await settle();
    expect(puts.length).toBe(1);
  });

  it("adds a cohort, picked by name, as a dashboard filter", async () => {
    const puts: Call[] = [];
    fakeFetch(
      routes(board(), {
        "GET /api/v1/products/3/cohorts": { body: { items: [{ id: 5, name: "Beta testers" }] } },
        "PUT /api/v1/boards/7": (c: Call) => {
          puts.push(c);
          return { body: board({ filters: (c.body as Board).filters }) };
        },
      }),
    );
    const root = await mount(<BoardView product={product} id={7} range={range} env="live" />);
    await type(root.querySelector("input[name=filterProperty]"), "cohort");
    await choose(root.querySelector("select[name=filterCohort]"), "5");
    await submit(root.querySelector("form[aria-label='Add a dashboard filter']"));
    expect((puts[0].body as Board).filters).toEqual([{ property: "cohort", operator: "in", value: 5 }]);
    expect([...root.querySelectorAll("[data-testid=board-filter]")].map((c) => c.textContent?.replace("×", "").trim())).toEqual(["in Beta testers"]);
  });

  it("shows a viewer and a shared link no editing", async () => {
    fakeFetch(routes(board()));
    let root = await mount(asRole("viewer", <BoardView product={product} id={7} range={range} env="live" />));
    expect(root.querySelector("[aria-label='Move later']")).toBeNull();
    expect(root.querySelector("[draggable=true], .drag-handle")).toBeNull();
    expect(root.querySelector("form[aria-label='Add a tile']")).toBeNull();
    root = await mount(<BoardView product={product} id={7} range={range} env="live" readOnly />);
    expect(root.querySelector("[aria-label='Move later']")).toBeNull();
    expect(root.querySelector("[draggable=true], .drag-handle")).toBeNull();
    expect(byText(root, "button", "Share this dashboard")).toBeUndefined();
    expect(root.querySelectorAll("[data-testid=board-tile]").length).toBe(2);
  });
});
