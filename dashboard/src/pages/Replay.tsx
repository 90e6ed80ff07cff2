import { useEffect, useRef, useState } from "preact/hooks";
import { Replayer } from "rrweb";
import "rrweb/dist/style.css";
import { api, message } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { navigate } from "../router";
import type { Product, ReplayChunk, ReplayDetail } from "../types";
import { duration, userHref } from "./Replays";

/** An rrweb event, as much of it as the timeline reads. */
export interface RREvent {
  type: number;
  timestamp: number;
  data: { source?: number; type?: number; tag?: string; href?: string; payload?: { message?: string } };
}

/** A mark on the timeline: a page view, a click, an event the SDK captured, or an error. */
export interface Mark {
  kind: "page" | "click" | "event" | "error";
  offset: number;
  label: string;
}

/** legend names each kind of mark, in the order of the legend under the timeline. */
export const legend: readonly [Mark["kind"], string][] = [
  ["page", "Page view"],
  ["click", "Click"],
  ["event", "Event"],
  ["error", "Error"],
];

/** decodeChunk returns a chunk's rrweb events: base64, then gunzip for gzip-json (DecompressionStream). */
export async function decodeChunk(c: ReplayChunk): Promise<RREvent[]> {
  const bin = atob(c.data);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const text =
    c.encoding === "gzip-json"
      ? await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
      : new TextDecoder().decode(bytes);
  return JSON.parse(text) as RREvent[];
}

/** A node of rrweb's serialized DOM, as much of it as withoutInlineHandlers reads. */
interface SerializedNode {
  attributes?: Record<string, unknown>;
  childNodes?: SerializedNode[];
}

/** The data of a full snapshot (its DOM) or of a mutation (added nodes, changed attributes). */
interface SnapshotData {
  node?: SerializedNode;
  source?: number;
  adds?: { node?: SerializedNode }[];
  attributes?: { attributes?: Record<string, unknown> }[];
}

/** isInlineHandler tells an inline event handler attribute (onclick, onload…) by its name. */
const isInlineHandler = (name: string) => /^on/i.test(name);

function dropHandlers(attributes: Record<string, unknown> | undefined): void {
  if (!attributes) return;
  for (const name of Object.keys(attributes)) if (isInlineHandler(name)) delete attributes[name];
}

/** dropTreeHandlers drops the handlers of a node and its descendants (a loop, not recursion: a DOM can be deep). */
function dropTreeHandlers(root: SerializedNode | undefined): void {
  const todo = root ? [root] : [];
  for (let n = todo.pop(); n; n = todo.pop()) {
    dropHandlers(n.attributes);
    if (n.childNodes) todo.push(...n.childNodes);
  }
}

/**
 * withoutInlineHandlers removes inline event handler attributes (onclick,
 * onload… any attribute named on*) from a recording's events, in place:
 * from full snapshots' DOM trees and from mutations' added nodes and
 * changed attributes. rrweb rebuilds the recorded page in an iframe
 * sandboxed without scripts, where Chromium refuses every such handler
 * with a console error; a replay runs none of them anyway. Done as the
 * player reads the events, so recordings made before it are fixed too.
 */
export function withoutInlineHandlers<T extends { type: number; data: unknown }>(events: T[]): T[] {
  for (const e of events) {
    const d = e.data as SnapshotData;
    if (e.type === 2) dropTreeHandlers(d.node);
    else if (e.type === 3 && d.source === 0) {
      for (const a of d.adds ?? []) dropTreeHandlers(a.node);
      for (const a of d.attributes ?? []) dropHandlers(a.attributes);
    }
  }
  return events;
}

/** marks reads the timeline's marks from a window's events (docs/replay.md, "The player"). */
export function marks(events: RREvent[]): Mark[] {
  if (!events.length) return [];
  const start = events[0].timestamp;
  const out: Mark[] = [];
  for (const e of events) {
    const offset = e.timestamp - start;
    if (e.type === 4) out.push({ kind: "page", offset, label: e.data.href ?? "Page" });
    else if (e.type === 3 && e.data.source === 2 && e.data.type === 2) out.push({ kind: "click", offset, label: "Click" });
    else if (e.type === 5 && e.data.tag === "$exception") out.push({ kind: "error", offset, label: e.data.payload?.message || "Error" });
    else if (e.type === 5 && e.data.tag && e.data.tag !== "$pageview" && e.data.tag !== "$click") out.push({ kind: "event", offset, label: e.data.tag });
  }
  return out;
}

/**
 * fitScale is the scale that fits a recorded page of frameWidth px into a
 * stage of stageWidth px: never above 1 (a small recording is not blown
 * up), and 1 while either width is unknown (0: not laid out yet).
 */
export function fitScale(stageWidth: number, frameWidth: number): number {
  if (!(stageWidth > 0) || !(frameWidth > 0)) return 1;
  return Math.min(1, stageWidth / frameWidth);
}

/**
 * frameSize is the recorded viewport rrweb gave its iframe (its width and
 * height attributes, set from the recording's meta events), else the
 * iframe's laid-out size, else a 1024 × 400 placeholder.
 */
function frameSize(frame: HTMLIFrameElement): { width: number; height: number } {
  const attr = (n: string) => Number(frame.getAttribute(n)) || 0;
  return { width: attr("width") || frame.offsetWidth || 1024, height: attr("height") || frame.offsetHeight || 400 };
}

/**
 * ReplayPage plays a recorded session with rrweb's Replayer, inactivity
 * skipped, above a timeline of its page views, clicks, captured events and
 * errors (each seeks there); a session of several tabs plays one at a time.
 */
export function ReplayPage(props: { product: Product | null; sessionId: string }) {
  if (!props.product) return <NoProduct />;
  return <Player key={`${props.product.id}/${props.sessionId}`} product={props.product} sessionId={props.sessionId} />;
}

function Player(props: { product: Product; sessionId: string }) {
  const pid = props.product.id;
  const [loaded, reload] = useLoad<ReplayDetail>(() => api.replay(pid, props.sessionId), [pid, props.sessionId]);
  // Every chunk loaded so far, in playing order: the first page's, then
  // the next pages', read one after the other while the first plays.
  const [chunks, setChunks] = useState<ReplayChunk[]>([]);
  const [windowId, setWindowId] = useState<string | null>(null);
  // A window's events decoded so far (the current window's, or none yet),
  // and how many of its chunks they are.
  const [decodedEvents, setDecodedEvents] = useState<{ window: string | null; list: RREvent[] }>({ window: null, list: [] });
  const decoded = useRef({ window: null as string | null, chunks: 0, generation: 0, queue: Promise.resolve() });
  const [failed, setFailed] = useState("");
  const [confirm, setConfirm] = useState(false);
  const { busy, notice, run } = useAction<"delete">();
  const stage = useRef<HTMLDivElement>(null);
  const player = useRef<Replayer | null>(null);
  // How many of the window's events the player was given.
  const fed = useRef(0);
  const list = `/replays?product=${pid}`;

  useEffect(() => {
    if (loaded.state !== "done") return;
    let stale = false;
    setChunks(loaded.data.chunks);
    (async () => {
      for (let next = loaded.data.next; next && !stale; ) {
        const page = await api.replay(pid, props.sessionId, next);
        if (stale) return;
        setChunks((c) => c.concat(page.chunks));
        next = page.next;
      }
    })().catch((e) => !stale && setFailed(message(e)));
    return () => {
      stale = true;
    };
  }, [loaded.state]);

  const windows = [...new Set(chunks.map((c) => c.windowId))];
  const current = windowId ?? windows[0] ?? null;
  const events = decodedEvents.window === current ? decodedEvents.list : [];
  // Decode the current window's chunks as they arrive, in order, one batch
  // after another; a window chosen anew starts again from nothing.
  useEffect(() => {
    const d = decoded.current;
    if (d.window !== current) {
      d.window = current;
      d.chunks = 0;
      d.generation++;
    }
    if (!current) return;
    const mine = chunks.filter((c) => c.windowId === current);
    const fresh = mine.slice(d.chunks);
    if (!fresh.length) return;
    d.chunks = mine.length;
    const generation = d.generation;
    d.queue = d.queue
      .then(() => Promise.all(fresh.map(decodeChunk)))
      .then((parts) => {
        if (d.generation !== generation) return;
        const added = withoutInlineHandlers(parts.flat().sort((a, b) => a.timestamp - b.timestamp));
        setDecodedEvents((ev) => ({ window: current, list: ev.window === current ? ev.list.concat(added) : added }));
      })
      .catch((e) => setFailed(message(e)));
  }, [chunks, current]);

  // The player: made once the window has two events, then given the
  // others as they are decoded (rrweb's Replayer takes events while it
  // plays); destroyed when another window is chosen.
  useEffect(() => {
    const r = player.current;
    if (r) {
      for (const e of events.slice(fed.current)) r.addEvent(e as never);
      fed.current = events.length;
    }
  }, [events]);
  const ready = events.length >= 2;
  useEffect(() => {
    if (!ready || !stage.current) return;
    stage.current.innerHTML = "";
    const box = stage.current;
    const r = new Replayer(events as never[], { root: box, skipInactive: true, showWarning: false, mouseTail: false });
    player.current = r;
    fed.current = events.length;
    // The recorded page keeps its own width (a desktop's 1280 px, say);
    // the wrapper is scaled to the stage's width, whatever the window's,
    // and again whenever the stage changes size (the window is resized or
    // turned, the sidebar folds) or the recording's viewport does (rrweb's
    // resize). The stage's own width does not depend on the wrapper, which
    // is positioned absolutely, so setting its height cannot loop.
    const fit = () => {
      const frame = r.iframe;
      if (!frame) return;
      const size = frameSize(frame);
      const scale = fitScale(box.clientWidth, size.width);
      r.wrapper.style.transform = `scale(${scale})`;
      r.wrapper.style.transformOrigin = "top left";
      // The box is border-box: its height holds its border too.
      box.style.height = `${Math.ceil(size.height * scale) + box.offsetHeight - box.clientHeight}px`;
    };
    r.on("resize", fit);
    r.play();
    fit();
    const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(fit);
    observer?.observe(box);
    window.addEventListener("resize", fit);
    return () => {
      observer?.disconnect();
      window.removeEventListener("resize", fit);
      r.destroy();
      player.current = null;
      fed.current = 0;
    };
  }, [ready, current]);

  if (loaded.state === "failed") {
    return (
      <section class="page">
        <p class="crumbs">
          <Link href={list}>Replays</Link>
        </p>
        <ErrorState message={loaded.error} onRetry={reload} />
      </section>
    );
  }
  if (loaded.state !== "done") return <Skeleton rows={6} label="Loading the replay…" />;
  const s = loaded.data.session;
  const timeline = events ? marks(events) : [];
  const total = events && events.length ? events[events.length - 1].timestamp - events[0].timestamp : 0;
  const remove = () =>
    run("delete", async () => {
      await api.deleteReplay(pid, props.sessionId);
      navigate(list);
    });
  return (
    <section class="page replay">
      <p class="crumbs">
        <Link href={list}>Replays</Link>
      </p>
      <div class="section-head tight">
        <h1>
          {/* Loaded anew, so that the user's page leaves this page's looser policy behind. */}
          <Link href={userHref(pid, s.distinctId)} reload title="The user's events and replays">
            {s.distinctId}
          </Link>
        </h1>
        <div class="actions">
          <button type="button" class="button secondary" onClick={() => player.current?.pause()}>
            Pause
          </button>
          <button type="button" class="button secondary" onClick={() => player.current?.play(player.current.getCurrentTime())}>
            Play
          </button>
          <button type="button" class="button danger" onClick={() => setConfirm(true)}>
            Delete…
          </button>
        </div>
      </div>
      <Notice notice={notice} />
      <dl class="facts compact">
        <div>
          <dt>Start</dt>
          <dd>
            <time dateTime={s.start}>{when(s.start)}</time>
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{duration(s.durationMs)}</dd>
        </div>
        <div>
          <dt>Pages</dt>
          <dd>{s.pages}</dd>
        </div>
        <div>
          <dt>Clicks</dt>
          <dd>{s.clicks}</dd>
        </div>
        <div>
          <dt>Errors</dt>
          <dd>{s.errors}</dd>
        </div>
      </dl>
      {windows.length > 1 && (
        <label>
          Tab{" "}
          <select value={current ?? ""} onChange={(e) => setWindowId(e.currentTarget.value)}>
            {windows.map((w, i) => (
              <option key={w} value={w}>
                Tab {i + 1}
              </option>
            ))}
          </select>
        </label>
      )}
      {failed && <ErrorState message={failed} />}
      <div class="replay-stage card" ref={stage} data-testid="replay-stage" />
      <ol class="replay-timeline" data-testid="replay-timeline" aria-label="Timeline">
        {timeline.map((m, i) => (
          <li key={i} class={`mark ${m.kind}`} style={{ left: `${total ? (100 * m.offset) / total : 0}%` }}>
            <button type="button" title={`${m.label} at ${duration(m.offset)}`} onClick={() => player.current?.play(m.offset)}>
              <span class="visually-hidden">
                {m.kind}: {m.label}
              </span>
            </button>
          </li>
        ))}
      </ol>
      <ul class="replay-legend" aria-label="Legend" data-testid="replay-legend">
        {legend.map(([kind, label]) => (
          <li key={kind} class={`mark ${kind}`}>
            <span class="swatch" aria-hidden="true" />
            {label}
          </li>
        ))}
      </ul>
      {confirm && (
        <ConfirmDialog title="Delete this replay?" confirmLabel="Delete replay" busy={busy !== null} onConfirm={remove} onCancel={() => setConfirm(false)}>
          <p>The recording of this session is deleted for good. Its events stay.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
