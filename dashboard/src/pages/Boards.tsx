import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, message } from "../api";
import { SankeyChart } from "../charts/Sankey";
import { TimeChart } from "../charts/TimeChart";
import { BreakdownCard } from "../components/BreakdownCard";
import { useChartAnnotations } from "../components/ChartAnnotations";
import { CopyButton } from "../components/CopyButton";
import { Countries } from "../components/Countries";
import { Devices } from "../components/Devices";
import { Link } from "../components/Link";
import { Sources } from "../components/Sources";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { FiltersContext, type OverviewFilter } from "../overviewFilters";
import { boardRange, describe, kept, type DateRange } from "../range";
import { useAllows } from "../roles";
import { cohortProperty, useCohortOptions } from "../components/FilterEditor";
import type { Board, BoardInput, DataEnv, FilterRequest, FunnelResult, PathsResult, Product, RetentionResult, SavedQuery, SharedLink, Tile, TileCard, TrendResult } from "../types";
import { CohortTable } from "./Retention";
import { FunnelBars } from "./Funnels";
import { rangeInterval } from "./Overview";

/** The Overview's cards a tile may show, as the API names them. */
export const cardNames: Record<TileCard, string> = {
  traffic: "Traffic",
  top_pages: "Top pages",
  sources: "Top sources",
  countries: "Countries",
  devices: "Devices",
};

/** The grid's columns; a tile is 1 to maxWidth wide, small (1) or large (2). */
export const maxWidth = 4;

/** boardPath reads a /boards/{id} path: the board's id, or null for the list. */
export function boardPath(path: string): number | null {
  const m = /^\/boards\/(\d+)$/.exec(path);
  return m ? Number(m[1]) : null;
}

/** moved is tiles with tile i moved by delta places (−1 earlier, +1 later), or unchanged at an end. */
export function moved<T>(tiles: readonly T[], i: number, delta: number): T[] {
  const j = i + delta;
  if (j < 0 || j >= tiles.length) return [...tiles];
  const out = [...tiles];
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}

/** Which side of a tile a dragged tile is dropped on. */
export type DropSide = "before" | "after";

/**
 * dropped is tiles with tile from put just before or just after tile to
 * (the others keep their order), or null when that changes nothing: a tile
 * dropped on itself, or where it already is (before the tile that follows
 * it, after the one before it), or an index out of range.
 */
export function dropped<T>(tiles: readonly T[], from: number, to: number, side: DropSide): T[] | null {
  const n = tiles.length;
  if (from === to || from < 0 || to < 0 || from >= n || to >= n) return null;
  let at = side === "before" ? to : to + 1; // where it goes among all the tiles
  if (from < at) at--; // and among the others, once it is taken out
  if (at === from) return null;
  const out = [...tiles];
  const [t] = out.splice(from, 1);
  out.splice(at, 0, t);
  return out;
}

/** A tile's box on screen, as getBoundingClientRect gives it. */
export type Box = { left: number; top: number; width: number; height: number };

/**
 * dropSide is the side of a tile a pointer at (x, y) drops on: the half of
 * the tile it is over, left or right in a row of tiles (the grid reads left
 * to right, then down), top or bottom when the tile fills its row (a
 * phone's one column, or a tile four columns wide). The exact middle is after.
 */
export function dropSide(box: Box, x: number, y: number, fillsRow: boolean): DropSide {
  return fillsRow ? (y < box.top + box.height / 2 ? "before" : "after") : x < box.left + box.width / 2 ? "before" : "after";
}

/** rangeText writes a range as "Last 7 days (2026-11-23 – 2026-11-29)", or its dates alone. */
export function rangeText(r: DateRange): string {
  const dates = `${r.from} – ${r.to}`;
  return r.key === "custom" ? dates : `${describe(r)} (${dates})`;
}

/** boardInput is what a PUT sends: the board's fields with patch applied, and its whole layout. */
export function boardInput(b: Board, patch: Partial<BoardInput> = {}): BoardInput {
  return {
    name: b.name,
    description: b.description,
    dateFrom: b.dateFrom,
    dateTo: b.dateTo,
    filters: b.filters,
    tiles: (b.tiles ?? []).map((t) => ({ id: t.id, width: t.width, height: t.height })),
    ...patch,
  };
}

/** overviewFilters are a board's filters as the Overview's cards read them (equality filters only). */
function overviewFilters(fs: FilterRequest[]): OverviewFilter[] {
  return fs.filter((f) => f.operator === "eq" && typeof f.value === "string").map((f) => ({ property: f.property, value: f.value as string }));
}

/**
 * Boards is the Dashboards page (docs/dashboard.md, "Dashboards"): the
 * product's boards at /boards, and one board at /boards/{id}.
 */
export function Boards(props: { product: Product | null; path: string; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  const id = boardPath(props.path);
  if (id !== null) return <BoardView key={id} product={props.product} id={id} range={props.range} env={props.env} />;
  return <BoardList product={props.product} />;
}

function BoardList(props: { product: Product }) {
  const pid = props.product.id;
  const [boards, setBoards] = useState<Board[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const mayEdit = useAllows("member");
  const load = () => {
    setError(null);
    api.boards(pid).then(
      (r) => setBoards(r.items),
      (e) => setError(message(e)),
    );
  };
  useEffect(load, [pid]);
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const b = await api.createBoard(pid, { name });
      setName("");
      setFormError(null);
      setBoards((l) => [...(l ?? []), b].sort((x, y) => x.name.localeCompare(y.name)));
    } catch (err) {
      setFormError(message(err));
    }
  };
  return (
    <section class="page">
      <div class="page-head">
        <h1>Dashboards</h1>
      </div>
      {mayEdit ? (
        <form class="card inline-form" onSubmit={create} aria-label="New dashboard">
          <label>
            Name
            <input type="text" name="boardName" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" class="button">
            Create dashboard
          </button>
          {formError ? (
            <p class="form-error" role="alert">
              {formError}
            </p>
          ) : null}
        </form>
      ) : null}
      {error ? <ErrorState message={error} onRetry={load} /> : null}
      {boards === null && !error ? <Skeleton rows={3} label="Loading dashboards…" /> : null}
      {boards !== null && boards.length === 0 ? <p class="empty">No dashboard yet: create one, then add saved insights to it.</p> : null}
      {boards !== null && boards.length > 0 ? (
        <ul class="card board-list" aria-label="Dashboards">
          {boards.map((b) => (
            <li key={b.id}>
              <Link href={`/boards/${b.id}?product=${pid}`}>{b.name}</Link>
              <span class="hint">
                {" "}
                {b.tileCount} {b.tileCount === 1 ? "tile" : "tiles"}
                {b.description ? ` · ${b.description}` : ""}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

type Loaded = { state: "loading" } | { state: "failed"; error: string } | { state: "done"; board: Board };

/** Where a dragged tile would land: before or after tile index, the line drawn across (fillsRow) or down its side. */
type DropAt = { index: number; side: DropSide; fillsRow: boolean };

/**
 * BoardView shows one board: its tiles in a grid, each running at once, and,
 * for a member, the editing of the board and its layout. readOnly is a
 * shared link's view, which edits nothing.
 */
export function BoardView(props: { product: Product; id: number; range: DateRange; env: DataEnv; readOnly?: boolean }) {
  const pid = props.product.id;
  const [st, setSt] = useState<Loaded>({ state: "loading" });
  const [saveError, setSaveError] = useState<string | null>(null);
  const member = useAllows("member") && !props.readOnly;
  // The index of the tile being dragged by its handle (a ref, read as the
  // pointer moves, before any render), and where it would land.
  const dragFrom = useRef<number | null>(null);
  const [dragging, setDragging] = useState<number | null>(null);
  const [dropAt, setDropAt] = useState<DropAt | null>(null);
  const load = () => {
    api.board(pid, props.id).then(
      (board) => setSt({ state: "done", board }),
      (e) => setSt({ state: "failed", error: message(e) }),
    );
  };
  useEffect(load, [pid, props.id]);
  if (st.state === "loading") return <Skeleton rows={6} label="Loading the dashboard…" />;
  if (st.state === "failed") return <ErrorState message={st.error} onRetry={load} />;
  const board = st.board;
  const tiles = board.tiles ?? [];
  const save = async (patch: Partial<BoardInput>) => {
    try {
      const b = await api.updateBoard(pid, board.id, boardInput(board, patch));
      setSt({ state: "done", board: b });
      setSaveError(null);
    } catch (err) {
      setSaveError(message(err));
      if (err instanceof ApiError && err.code === "layout_changed") load();
    }
  };
  const layout = (next: Tile[]) => save({ tiles: next.map((t) => ({ id: t.id, width: t.width, height: t.height })) });
  const endDrag = () => {
    dragFrom.current = null;
    setDragging(null);
    setDropAt(null);
  };
  // over is where a drop on tile i would land, or null when it would change nothing
  // (or nothing of ours is being dragged: a file, some text).
  const over = (e: DragEvent, i: number): DropAt | null => {
    const from = dragFrom.current;
    if (from === null) return null;
    const tile = e.currentTarget as HTMLElement;
    const box = tile.getBoundingClientRect();
    const grid = tile.parentElement?.getBoundingClientRect();
    const fillsRow = !grid || box.width >= grid.width - 2;
    const side = dropSide(box, e.clientX, e.clientY, fillsRow);
    return dropped(tiles, from, i, side) ? { index: i, side, fillsRow } : null;
  };
  const dragOver = (e: DragEvent, i: number) => {
    if (dragFrom.current === null) return;
    e.preventDefault(); // a tile of ours takes the drop, even where it changes nothing
    const at = over(e, i);
    if (e.dataTransfer) e.dataTransfer.dropEffect = at ? "move" : "none";
    if (at?.index !== dropAt?.index || at?.side !== dropAt?.side || at?.fillsRow !== dropAt?.fillsRow) setDropAt(at);
  };
  const drop = (e: DragEvent, i: number) => {
    if (dragFrom.current === null) return;
    e.preventDefault();
    const at = over(e, i);
    const next = at ? dropped(tiles, dragFrom.current, i, at.side) : null;
    endDrag();
    if (next) void layout(next);
  };
  const range: DateRange = board.dateFrom ? boardRange(board.dateFrom, board.dateTo) : props.range;
  const filters = (board.filters ?? []) as FilterRequest[];
  return (
    <section class="page">
      <div class="page-head">
        <h1>{board.name}</h1>
        {props.readOnly ? null : (
          <Link href={`/boards?product=${pid}`} class="hint">
            All dashboards
          </Link>
        )}
      </div>
      {board.description ? <p class="muted">{board.description}</p> : null}
      <div class="board-bar">
        <span class="hint" data-testid="board-range">
          {board.dateFrom ? `Dashboard range: ${rangeText(range)}` : `Range on screen: ${rangeText(props.range)}`}
        </span>
        {member ? (
          board.dateFrom ? (
            <button type="button" class="button secondary small" onClick={() => void save({ dateFrom: "", dateTo: "" })}>
              Use the range on screen
            </button>
          ) : (
            <button type="button" class="button secondary small" onClick={() => void save(kept(props.range))}>
              Keep this range for the dashboard
            </button>
          )
        ) : null}
      </div>
      <BoardFilters product={pid} filters={filters} editable={member} onChange={(fs) => void save({ filters: fs })} />
      {saveError ? (
        <p class="form-error" role="alert">
          {saveError}
        </p>
      ) : null}
      {member ? <BoardEditor product={pid} board={board} onRenamed={(name, description) => void save({ name, description })} onAdded={load} /> : null}
      {tiles.length === 0 ? <p class="empty">No tile yet{member ? ": add a saved insight or an Overview card above." : "."}</p> : null}
      <FiltersContext.Provider value={{ filters: overviewFilters(filters), add: () => undefined }}>
        <div class="board-grid" data-testid="board-grid">
          {tiles.map((t, i) => (
            <section
              key={t.id}
              class={`card board-tile h${t.height}${dragging === i ? " dragging" : ""}${dropAt?.index === i ? ` drop-${dropAt.side} drop-${dropAt.fillsRow ? "y" : "x"}` : ""}`}
              style={{ gridColumn: `span ${t.width}` }}
              aria-label={tileTitle(t)}
              data-testid="board-tile"
              onDragOver={member ? (e) => dragOver(e, i) : undefined}
              onDragLeave={
                member
                  ? (e) => {
                      // A tile's children send dragleave too: the pointer has left only when it is outside the tile's box.
                      const b = (e.currentTarget as HTMLElement).getBoundingClientRect();
                      const inside = e.clientX > b.left && e.clientX < b.right && e.clientY > b.top && e.clientY < b.bottom;
                      if (!inside && dropAt?.index === i) setDropAt(null);
                    }
                  : undefined
              }
              onDrop={member ? (e) => drop(e, i) : undefined}
            >
              <div class="section-head tight">
                <div class="tile-title">
                  {member ? (
                    <span
                      class="drag-handle"
                      role="img"
                      aria-label={`Drag ${tileTitle(t)}`}
                      title="Drag to move the tile (or use the arrows)"
                      draggable
                      onDragStart={(e) => {
                        dragFrom.current = i;
                        if (e.dataTransfer) {
                          e.dataTransfer.effectAllowed = "move";
                          // Firefox starts no drag without data; a type of our own, not text, so that
                          // a drop on a text field types nothing into it.
                          e.dataTransfer.setData("application/x-strata-tile", String(t.id));
                          // The whole tile follows the pointer, held where the handle was grabbed.
                          const tile = (e.currentTarget as HTMLElement).closest(".board-tile");
                          const b = tile?.getBoundingClientRect();
                          if (tile && b) e.dataTransfer.setDragImage(tile, e.clientX - b.left, e.clientY - b.top);
                        }
                        setDragging(i);
                      }}
                      onDragEnd={endDrag}
                    >
                      ⠿
                    </span>
                  ) : null}
                  <h2>{tileTitle(t)}</h2>
                </div>
                {member ? (
                  <div class="tile-tools" role="group" aria-label={`Arrange ${tileTitle(t)}`}>
                    <button type="button" class="button secondary small" aria-label="Move earlier" disabled={i === 0} onClick={() => void layout(moved(tiles, i, -1))}>
                      ←
                    </button>
                    <button type="button" class="button secondary small" aria-label="Move later" disabled={i === tiles.length - 1} onClick={() => void layout(moved(tiles, i, 1))}>
                      →
                    </button>
                    <select
                      aria-label="Width"
                      value={t.width}
                      onChange={(e) => void layout(tiles.map((x) => (x.id === t.id ? { ...x, width: Number(e.currentTarget.value) } : x)))}
                    >
                      {[1, 2, 3, 4].map((w) => (
                        <option key={w} value={w}>
                          {w} {w === 1 ? "column" : "columns"}
                        </option>
                      ))}
                    </select>
                    <button
                      type="button"
                      class="button secondary small"
                      aria-pressed={t.height === 2}
                      onClick={() => void layout(tiles.map((x) => (x.id === t.id ? { ...x, height: x.height === 2 ? 1 : 2 } : x)))}
                    >
                      {t.height === 2 ? "Small" : "Large"}
                    </button>
                    <button
                      type="button"
                      class="button secondary small danger"
                      aria-label={`Remove ${tileTitle(t)}`}
                      onClick={() => void api.removeTile(pid, board.id, t.id).then(load, (e) => setSaveError(message(e)))}
                    >
                      ✕
                    </button>
                  </div>
                ) : null}
              </div>
              <TileBody product={props.product} board={board} tile={t} range={range} env={props.env} readOnly={props.readOnly} />
            </section>
          ))}
        </div>
      </FiltersContext.Provider>
      {props.readOnly ? null : <BoardLinks product={pid} board={board} />}
    </section>
  );
}

/** tileTitle is a tile's heading: its saved query's name, or the card's. */
function tileTitle(t: Tile): string {
  return t.card ? cardNames[t.card] : (t.name ?? `Saved query ${t.queryId}`);
}

/**
 * BoardFilters shows a board's filters as chips and adds equality filters
 * ("country is FR", "person.plan is pro"), or with the property "cohort" a
 * cohort picked by name ("in cohort Beta testers").
 */
function BoardFilters(props: { product: number; filters: FilterRequest[]; editable: boolean; onChange: (fs: FilterRequest[]) => void }) {
  const [property, setProperty] = useState("country");
  const [value, setValue] = useState("");
  // Only an editor picks cohorts; a viewer's chips name a cohort by its id.
  const cohorts = useCohortOptions(props.product, props.editable);
  const cohort = property.trim() === cohortProperty;
  const chipText = (f: FilterRequest) => {
    if (f.property === cohortProperty) {
      const name = cohorts.find((c) => c.id === f.value)?.name ?? `cohort ${String(f.value)}`;
      return `${f.operator === "not_in" ? "not in" : "in"} ${name}`;
    }
    return `${f.property} ${f.operator === "eq" ? "is" : f.operator} ${f.value === undefined ? "" : String(f.value)}`;
  };
  return (
    <div class="board-filters" aria-label="Dashboard filters">
      {props.filters.length === 0 ? <span class="hint">No dashboard filter: every tile runs as saved.</span> : null}
      <ul class="chips">
        {props.filters.map((f, i) => (
          <li key={i} class="chip" data-testid="board-filter">
            {chipText(f)}
            {props.editable ? (
              <button type="button" aria-label={`Remove the filter on ${f.property}`} onClick={() => props.onChange(props.filters.filter((_, j) => j !== i))}>
                ×
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {props.editable ? (
        <form
          class="inline-form"
          aria-label="Add a dashboard filter"
          onSubmit={(e) => {
            e.preventDefault();
            if (!value.trim()) return;
            props.onChange([
              ...props.filters,
              cohort ? { property: cohortProperty, operator: "in", value: Number(value) } : { property: property.trim(), operator: "eq", value: value.trim() },
            ]);
            setValue("");
          }}
        >
          <label>
            Property
            <input type="text" name="filterProperty" value={property} onInput={(e) => setProperty(e.currentTarget.value)} />
          </label>
          {cohort ? (
            <label>
              Cohort
              <select name="filterCohort" value={value} onChange={(e) => setValue(e.currentTarget.value)}>
                <option value="">{cohorts.length ? "Pick a cohort" : "No cohort yet"}</option>
                {cohorts.map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.name}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <label>
              Is
              <input type="text" name="filterValue" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
            </label>
          )}
          <button type="submit" class="button secondary small">
            Add filter
          </button>
        </form>
      ) : null}
    </div>
  );
}

function BoardEditor(props: { product: number; board: Board; onRenamed: (name: string, description: string) => void; onAdded: () => void }) {
  const [saved, setSaved] = useState<SavedQuery[]>([]);
  const [pick, setPick] = useState("");
  const [name, setName] = useState(props.board.name);
  const [error, setError] = useState<string | null>(null);
  const mayDelete = useAllows("admin");
  useEffect(() => {
    api.savedQueries(props.product).then(
      (r) => setSaved(r.items),
      () => setSaved([]),
    );
  }, [props.product]);
  const add = async (e: Event) => {
    e.preventDefault();
    if (!pick) return;
    const [kind, id] = pick.split(":");
    try {
      await api.addTile(props.product, props.board.id, kind === "card" ? { card: id as TileCard } : { queryId: Number(id) });
      setError(null);
      setPick("");
      props.onAdded();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <div class="card board-editor">
      <form
        class="inline-form"
        aria-label="Rename the dashboard"
        onSubmit={(e) => {
          e.preventDefault();
          props.onRenamed(name, props.board.description);
        }}
      >
        <label>
          Name
          <input type="text" name="boardName" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" class="button secondary small">
          Rename
        </button>
        {mayDelete ? (
          <button
            type="button"
            class="button secondary small danger"
            onClick={() => {
              if (!confirm(`Delete the dashboard “${props.board.name}”? Its saved queries stay.`)) return;
              api.deleteBoard(props.product, props.board.id).then(
                () => history.back(),
                (err) => setError(message(err)),
              );
            }}
          >
            Delete dashboard
          </button>
        ) : null}
      </form>
      <form class="inline-form" aria-label="Add a tile" onSubmit={add}>
        <label>
          Add a tile
          <select name="tile" value={pick} onChange={(e) => setPick(e.currentTarget.value)}>
            <option value="">Pick a saved insight or a card…</option>
            <optgroup label="Saved insights">
              {saved.map((q) => (
                <option key={q.id} value={`query:${q.id}`}>
                  {q.name} ({q.kind})
                </option>
              ))}
            </optgroup>
            <optgroup label="Overview cards">
              {Object.entries(cardNames).map(([k, v]) => (
                <option key={k} value={`card:${k}`}>
                  {v}
                </option>
              ))}
            </optgroup>
          </select>
        </label>
        <button type="submit" class="button small" disabled={!pick}>
          Add tile
        </button>
      </form>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

type Run = { state: "loading" } | { state: "failed"; error: string } | { state: "done"; result: unknown };

/** TileBody runs one tile and draws its answer as its kind's page does. */
function TileBody(props: { product: Product; board: Board; tile: Tile; range: DateRange; env: DataEnv; readOnly?: boolean }) {
  const { tile, range, env } = props;
  const pid = props.product.id;
  if (tile.card) {
    const scope = { product: pid, from: range.from, to: range.to, env };
    if (tile.card === "top_pages") return <BreakdownCard {...scope} property="path" title="Top pages" heading="Page" />;
    if (tile.card === "sources") return <Sources {...scope} open={null} onOpen={() => undefined} />;
    if (tile.card === "countries") return <Countries {...scope} readOnly={props.readOnly} />;
    if (tile.card === "devices") return <Devices {...scope} />;
    return <TrafficTile product={pid} range={range} env={env} filters={(props.board.filters ?? []) as FilterRequest[]} />;
  }
  return <QueryTile {...props} />;
}

function QueryTile(props: { product: Product; board: Board; tile: Tile; range: DateRange; env: DataEnv; readOnly?: boolean }) {
  const { tile, range } = props;
  const pid = props.product.id;
  const [run, setRun] = useState<Run>({ state: "loading" });
  // A shared link reaches the workspace's annotations, not a saved query's own.
  const [annotations] = useChartAnnotations(pid, range.from, range.to, props.readOnly ? null : (tile.queryId ?? null));
  const go = () => {
    setRun({ state: "loading" });
    api.runTile(pid, props.board.id, tile.id, props.env, range).then(
      (result) => setRun({ state: "done", result }),
      (e) => setRun({ state: "failed", error: message(e) }),
    );
  };
  useEffect(go, [pid, props.board.id, props.board.updatedAt, tile.id, range.from, range.to, props.env]);
  if (run.state === "loading") return <Skeleton rows={4} label={`Running ${tileTitle(tile)}…`} />;
  if (run.state === "failed") return <ErrorState message={run.error} onRetry={go} />;
  if (tile.kind === "trend") {
    const r = run.result as TrendResult;
    return (
      <TimeChart
        kind="line"
        interval={rangeInterval(range)}
        buckets={r.series[0]?.data.map((p) => p.date) ?? []}
        lines={r.series.map((l) => ({ label: l.label, data: l.data.map((p) => p.value) }))}
        annotations={annotations}
        label={`Trend chart of ${tileTitle(tile)}`}
      />
    );
  }
  if (tile.kind === "funnel") return <FunnelBars result={run.result as FunnelResult} />;
  if (tile.kind === "retention") {
    return <CohortTable result={run.result as RetentionResult} annotations={annotations} />;
  }
  if (tile.kind === "paths") return <SankeyChart result={run.result as PathsResult} />;
  return null;
}

/** TrafficTile is the Overview's traffic chart: visitors and page views over the range. */
function TrafficTile(props: { product: number; range: DateRange; env: DataEnv; filters: FilterRequest[] }) {
  const [run, setRun] = useState<Run>({ state: "loading" });
  const interval = rangeInterval(props.range);
  const [annotations] = useChartAnnotations(props.product, props.range.from, props.range.to, null);
  const go = () => {
    setRun({ state: "loading" });
    api
      .trend(
        props.product,
        {
          series: [
            { event: "$pageview", math: "unique_users" },
            { event: "$pageview", math: "total" },
          ],
          dateFrom: props.range.from,
          dateTo: props.range.to,
          interval,
          filters: props.filters,
        },
        props.env,
      )
      .then(
        (result) => setRun({ state: "done", result }),
        (e) => setRun({ state: "failed", error: message(e) }),
      );
  };
  useEffect(go, [props.product, props.range.from, props.range.to, props.env, JSON.stringify(props.filters)]);
  if (run.state === "loading") return <Skeleton rows={4} label="Loading traffic…" />;
  if (run.state === "failed") return <ErrorState message={run.error} onRetry={go} />;
  const r = run.result as TrendResult;
  return (
    <TimeChart
      kind="line"
      interval={interval}
      buckets={r.series[0]?.data.map((p) => p.date) ?? []}
      lines={[
        { label: "Visitors", data: r.series[0]?.data.map((p) => p.value) ?? [] },
        { label: "Page views", data: r.series[1]?.data.map((p) => p.value) ?? [] },
      ]}
      annotations={annotations}
      label="Visitors and page views over time"
    />
  );
}

/** BoardLinks lists the board's shared links, creates one and (admins) revokes one. */
function BoardLinks(props: { product: number; board: Board }) {
  const [links, setLinks] = useState<SharedLink[]>([]);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const mayShare = useAllows("member");
  const mayRevoke = useAllows("admin");
  const load = () => {
    api.sharedLinks(props.product).then(
      (r) => setLinks(r.items.filter((l) => l.boardId === props.board.id)),
      () => setLinks([]),
    );
  };
  useEffect(load, [props.product, props.board.id]);
  if (!mayShare) return null;
  return (
    <section class="card" aria-labelledby="board-links-title">
      <h2 id="board-links-title">Shared links</h2>
      <p class="hint">A shared link shows this dashboard, read-only, to anyone who has it; it reaches no other dashboard and no other saved query.</p>
      {links.length > 0 ? (
        <ul class="board-list" aria-label="This dashboard's shared links">
          {links.map((l) => (
            <li key={l.id}>
              {l.name} <span class="hint">{l.prefix}…</span>
              {mayRevoke ? (
                <button type="button" class="button secondary small danger" onClick={() => void api.revokeSharedLink(props.product, l.id).then(load, (e) => setError(message(e)))}>
                  Revoke
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <button
        type="button"
        class="button secondary small"
        onClick={() =>
          void api.createBoardLink(props.product, props.board.id, props.board.name).then(
            (c) => {
              setCreated(c.url);
              setError(null);
              load();
            },
            (e) => setError(message(e)),
          )
        }
      >
        Share this dashboard
      </button>
      {created ? (
        <p data-testid="board-link">
          <code>{created}</code> <CopyButton text={created} label="Copy link" />
          <span class="hint"> Shown once: the server keeps only a hash of it.</span>
        </p>
      ) : null}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
