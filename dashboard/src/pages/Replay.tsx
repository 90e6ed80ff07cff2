import { useEffect, useRef, useState } from "preact/hooks";
import { Replayer } from "rrweb";
import "rrweb/dist/style.css";
import { api, message } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Crumb, ItemHead } from "../components/ItemHead";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import { navigate } from "../router";
import { LEAD_MS, MergedSession, SPEEDS, clock, momentOffset, type RREvent, type WindowEvent } from "../replay";
import type { Product, ReplayChunk, ReplayDetail } from "../types";
import { duration, userHref } from "./Replays";

export type { RREvent };

/**
 * A mark on the timeline: a page view, a click, an event the SDK captured,
 * or an error, at its offset from the session's start. `shows` is where a
 * seek to it lands so that what it marks is on screen: rrweb applies, when
 * it seeks, the events before the time asked, not at it, and a page view
 * (rrweb's meta event) is drawn by the full snapshot that follows it.
 */
export interface Mark {
  kind: "page" | "click" | "event" | "error";
  offset: number;
  label: string;
  shows: number;
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

/**
 * marks reads the timeline's marks from a session's events (docs/replay.md,
 * "The player"), at their offsets from start (the session's start; the
 * first event's time when not given).
 */
export function marks(events: RREvent[], start = events.length ? events[0].timestamp : 0): Mark[] {
  const out: Mark[] = [];
  // The page view whose full snapshot has not come yet.
  let page: Mark | null = null;
  for (const e of events) {
    const offset = e.timestamp - start;
    const mark = (kind: Mark["kind"], label: string) => out.push({ kind, offset, label, shows: offset + 1 });
    if (e.type === 4) {
      mark("page", e.data.href ?? "Page");
      page = out[out.length - 1];
    } else if (e.type === 2 && page) {
      page.shows = offset + 1;
      page = null;
    } else if (e.type === 3 && e.data.source === 2 && e.data.type === 2) mark("click", "Click");
    else if (e.type === 5 && e.data.tag === "$exception") mark("error", e.data.payload?.message || "Error");
    else if (e.type === 5 && e.data.tag && e.data.tag !== "$pageview" && e.data.tag !== "$click") mark("event", e.data.tag);
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
 * ReplayPage plays a recorded session as one recording, every page load
 * (window) in time order (src/replay.ts, MergedSession), with rrweb's
 * Replayer: one play/pause control, speeds, the session's elapsed and total
 * time, a seek bar, inactivity skipped, above a timeline of its page views,
 * clicks, captured events and errors (each seeks there). `at`, a link's
 * moment (milliseconds since 1970), starts it LEAD_MS before that moment.
 */
export function ReplayPage(props: { product: Product | null; sessionId: string; at?: number }) {
  if (!props.product) return <NoProduct />;
  return <Player key={`${props.product.id}/${props.sessionId}/${props.at ?? ""}`} product={props.product} sessionId={props.sessionId} at={props.at} />;
}

/** Where playback is: before the player can start, playing, paused, or at the end of the session. */
type Status = "loading" | "playing" | "paused" | "ended";

/**
 * The player's imperative side, kept across renders: the merged session,
 * the Replayer playing it, and what the page reading knows.
 */
interface Machine {
  merged: MergedSession;
  replayer: Replayer | null;
  /** True once the last page of chunks was read. */
  done: boolean;
  /** True while playback reached the end of the pages read so far and waits for the next. */
  waiting: boolean;
  /** Stops and removes the Replayer and what watches its size. */
  teardown: () => void;
  /** The status last shown, for the code that runs outside a render. */
  status: Status;
}

function Player(props: { product: Product; sessionId: string; at?: number }) {
  const pid = props.product.id;
  const [loaded, reload] = useLoad<ReplayDetail>(() => api.replay(pid, props.sessionId), [pid, props.sessionId]);
  const [failed, setFailed] = useState("");
  const [confirm, setConfirm] = useState(false);
  const { busy, notice, run } = useAction<"delete">();
  const canDelete = useAllows("admin");
  const stage = useRef<HTMLDivElement>(null);
  const machine = useRef<Machine>({ merged: new MergedSession(), replayer: null, done: false, waiting: false, teardown: () => {}, status: "loading" });
  const [status, showStatus] = useState<Status>("loading");
  const setStatus = (st: Status) => {
    machine.current.status = st;
    showStatus(st);
  };
  // The playing position, as an offset from the session's start.
  const [elapsed, setElapsed] = useState(0);
  const [speed, setSpeed] = useState<number>(1);
  const [skipInactive, setSkipInactive] = useState(true);
  const [skipping, setSkipping] = useState(false);
  // The timeline's marks, read again when a page's events are merged
  // (not at each render: the elapsed time renders five times a second).
  const [timeline, setTimeline] = useState<Mark[]>([]);
  const list = `/replays?product=${pid}`;

  const session = loaded.state === "done" ? loaded.data.session : null;
  const origin = session ? Date.parse(session.start) : 0;
  const total = session ? Math.max(0, session.durationMs) : 0;
  // What the imperative code below reads: the values of the latest render.
  const now = useRef({ origin, total, speed, skipInactive });
  now.current = { origin, total, speed, skipInactive };

  /** offsetOf is where r plays, as an offset from the session's start. */
  const offsetOf = (r: Replayer) => r.getMetaData().startTime + r.getCurrentTime() - now.current.origin;

  /**
   * mount makes a Replayer of every playable event merged so far and
   * starts it at offset (from the session's start), playing or paused:
   * at first, and again when events arrive that go before those it has.
   */
  const mount = (offset: number, play: boolean) => {
    const m = machine.current;
    const box = stage.current;
    const events = m.merged.playable;
    if (!box || events.length < 2) return;
    m.teardown();
    box.innerHTML = "";
    const { speed, skipInactive, origin, total } = now.current;
    const r = new Replayer(events as never[], { root: box, skipInactive, speed, showWarning: false, mouseTail: false });
    m.replayer = r;
    m.waiting = false;
    // The end of what was read: the end of the session once every page is
    // in, else a pause until the next page's events are added.
    r.on("finish", () => {
      if (m.replayer !== r) return;
      if (m.done) {
        setStatus("ended");
        setElapsed(total);
      } else m.waiting = true;
    });
    r.on("skip-start", () => m.replayer === r && setSkipping(true));
    r.on("skip-end", () => m.replayer === r && setSkipping(false));
    // The recorded page keeps its own width (a desktop's 1280 px, say);
    // the wrapper is scaled to the stage's width, whatever the window's,
    // and again whenever the stage changes size (the window is resized or
    // turned, the sidebar folds) or the recording's viewport does (rrweb's
    // resize, at each page load too). The stage's own width does not
    // depend on the wrapper, which is positioned absolutely, so setting
    // its height cannot loop.
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
    const at = Math.max(0, offset - (events[0].timestamp - origin));
    if (play) r.play(at);
    else r.pause(at);
    setStatus(play ? "playing" : "paused");
    setElapsed(Math.min(total, Math.max(0, offset)));
    fit();
    const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(fit);
    observer?.observe(box);
    window.addEventListener("resize", fit);
    m.teardown = () => {
      observer?.disconnect();
      window.removeEventListener("resize", fit);
      r.destroy();
      if (m.replayer === r) m.replayer = null;
    };
  };

  /**
   * feed merges a page's events and hands the player what changed: the
   * events after those it has are added to it as it plays (and playback
   * that waited at the end of the pages read goes on); events that go
   * before them (windows overlapping in time) make a new player at the
   * same position. The first player is made once there is something to
   * play and, for a link's moment, once the pages read reach it.
   */
  const feed = (batch: WindowEvent[], last: boolean) => {
    const m = machine.current;
    const { rebuilt, added } = m.merged.add(batch);
    m.done = last;
    const r = m.replayer;
    if (!r) {
      const reached = props.at === undefined || m.merged.last >= props.at || last;
      if (reached) mount(momentOffset(props.at, now.current.origin, now.current.total), true);
    } else if (rebuilt) {
      mount(offsetOf(r), m.status === "playing");
    } else {
      for (const e of added) r.addEvent(e as never);
      if (m.waiting && added.length) {
        m.waiting = false;
        r.play(r.getCurrentTime());
      } else if (m.waiting && last) {
        setStatus("ended");
        setElapsed(now.current.total);
      }
    }
    setTimeline(marks(m.merged.playable, now.current.origin));
  };

  // Read the session page by page, each page's chunks decoded and merged
  // before the next is asked for, so that the player starts on the first
  // page and what it holds is the events, not the pages' base64.
  useEffect(() => {
    if (loaded.state !== "done") return;
    let stale = false;
    (async () => {
      for (let page = loaded.data; ; ) {
        const parts = await Promise.all(page.chunks.map(async (c) => ({ windowId: c.windowId, events: withoutInlineHandlers(await decodeChunk(c)) })));
        if (stale) return;
        feed(
          parts.flatMap((p) => p.events.map((event) => ({ windowId: p.windowId, event }))),
          !page.next,
        );
        if (!page.next) return;
        page = await api.replay(pid, props.sessionId, page.next);
        if (stale) return;
      }
    })().catch((e) => !stale && setFailed(message(e)));
    return () => {
      stale = true;
    };
  }, [loaded.state]);

  useEffect(() => () => machine.current.teardown(), []);

  // The elapsed time follows the player while it plays.
  useEffect(() => {
    if (status !== "playing") return;
    const timer = setInterval(() => {
      const r = machine.current.replayer;
      if (r) setElapsed(Math.min(now.current.total, Math.max(0, offsetOf(r))));
    }, 200);
    return () => clearInterval(timer);
  }, [status]);

  /** toggle plays or pauses; at the end, it plays the session again from its start. */
  const toggle = () => {
    const m = machine.current;
    const r = m.replayer;
    if (!r) return;
    if (status === "playing") {
      r.pause();
      m.waiting = false;
      setStatus("paused");
      setElapsed(Math.min(total, Math.max(0, offsetOf(r))));
    } else if (status === "ended") {
      seek(0, true);
    } else {
      r.play(r.getCurrentTime());
      setStatus("playing");
    }
  };

  /** seek moves to offset (from the session's start), playing on if it played. */
  const seek = (offset: number, play = status === "playing") => {
    const r = machine.current.replayer;
    if (!r) return;
    const at = Math.max(0, offset - (r.getMetaData().startTime - origin));
    machine.current.waiting = false;
    if (play) r.play(at);
    else r.pause(at);
    setStatus(play ? "playing" : "paused");
    setElapsed(Math.min(total, Math.max(0, offset)));
  };

  const changeSpeed = (v: number) => {
    setSpeed(v);
    machine.current.replayer?.setConfig({ speed: v });
  };
  const changeSkip = (on: boolean) => {
    setSkipInactive(on);
    machine.current.replayer?.setConfig({ skipInactive: on });
    if (!on) setSkipping(false);
  };

  // Space plays or pauses while the player has the focus, unless a
  // control that takes the space itself has it (a button, a checkbox).
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== " ") return;
    const target = e.target as HTMLElement | null;
    if (target?.closest("button, a, select, textarea, input:not([type=range])")) return;
    e.preventDefault();
    toggle();
  };

  if (loaded.state === "failed") {
    return (
      <section class="page">
        <Crumb href={list}>Replays</Crumb>
        <ErrorState message={loaded.error} onRetry={reload} />
      </section>
    );
  }
  if (loaded.state !== "done") return <Skeleton rows={6} label="Loading the replay…" />;
  const s = loaded.data.session;
  const remove = () =>
    run("delete", async () => {
      await api.deleteReplay(pid, props.sessionId);
      navigate(list);
    });
  const ready = status !== "loading";
  return (
    <section class="page replay">
      <ItemHead
        list={list}
        listLabel="Replays"
        title={
          <>
            {/* Loaded anew, so that the user's page leaves this page's looser policy behind. */}
            <Link href={userHref(pid, s.distinctId)} reload title="The user's events and replays">
              {s.distinctId}
            </Link>
          </>
        }
        actions={
          canDelete ? (
            <button type="button" class="button danger" onClick={() => setConfirm(true)}>
              Delete…
            </button>
          ) : null
        }
      />
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
      {props.at !== undefined && (
        <p class="hint" data-testid="replay-moment">
          Opened at the moment you followed, from {LEAD_MS / 1000} s before it.
        </p>
      )}
      {failed && <ErrorState message={failed} />}
      {/* The player takes the focus (a click on it, or Tab) so that space plays and pauses it. */}
      <div class="replay-player" tabIndex={0} onKeyDown={onKey} role="group" aria-label="Player: space plays or pauses" data-testid="replay-player">
        <div class="replay-stage card" ref={stage} data-testid="replay-stage" />
        <div class="replay-controls" data-testid="replay-controls">
          <button type="button" class="button" onClick={toggle} disabled={!ready} data-testid="replay-toggle">
            {status === "playing" ? "Pause" : status === "ended" ? "Play again" : "Play"}
          </button>
          <span class="replay-time" data-testid="replay-time">
            <span data-testid="replay-elapsed">{clock(elapsed)}</span> / <span data-testid="replay-total">{clock(total)}</span>
          </span>
          <input
            type="range"
            class="replay-seek"
            aria-label="Position in the session"
            min={0}
            max={total}
            step={100}
            value={elapsed}
            disabled={!ready}
            onInput={(e) => seek(Number(e.currentTarget.value))}
            data-testid="replay-seek"
          />
          <span class="replay-speeds" role="group" aria-label="Speed">
            {SPEEDS.map((v) => (
              <button key={v} type="button" class="button secondary" aria-pressed={speed === v} onClick={() => changeSpeed(v)}>
                {v}×
              </button>
            ))}
          </span>
          <label class="checkbox replay-skip">
            <input type="checkbox" checked={skipInactive} onChange={(e) => changeSkip(e.currentTarget.checked)} /> Skip inactivity
          </label>
          <span class="replay-status" role="status" data-testid="replay-status">
            {status === "loading" ? "Loading…" : skipping ? "Skipping inactivity…" : ""}
          </span>
        </div>
        <ol class="replay-timeline" data-testid="replay-timeline" aria-label="Timeline">
          {timeline.map((m, i) => (
            <li key={i} class={`mark ${m.kind}`} style={{ left: `${total ? Math.min(100, (100 * m.offset) / total) : 0}%` }}>
              <button type="button" title={`${m.label} at ${clock(m.offset)}`} onClick={() => seek(m.shows)}>
                <span class="visually-hidden">
                  {m.kind}: {m.label}
                </span>
              </button>
            </li>
          ))}
        </ol>
      </div>
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
