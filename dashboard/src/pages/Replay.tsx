import { useEffect, useRef, useState } from "preact/hooks";
import { Replayer } from "rrweb";
import "rrweb/dist/style.css";
import { api, message } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { when } from "../format";
import { useLoad } from "../load";
import { navigate } from "../router";
import type { Product, ReplayChunk, ReplayDetail } from "../types";
import { duration } from "./Replays";

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
  const [windowId, setWindowId] = useState<string | null>(null);
  const [events, setEvents] = useState<RREvent[] | null>(null);
  const [failed, setFailed] = useState("");
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ ok?: string; error?: string }>({});
  const stage = useRef<HTMLDivElement>(null);
  const player = useRef<Replayer | null>(null);
  const list = `/replays?product=${pid}`;

  const windows = loaded.state === "done" ? [...new Set(loaded.data.chunks.map((c) => c.windowId))] : [];
  const current = windowId ?? windows[0] ?? null;
  useEffect(() => {
    if (loaded.state !== "done" || !current) return;
    let stale = false;
    Promise.all(loaded.data.chunks.filter((c) => c.windowId === current).map(decodeChunk))
      .then((parts) => !stale && setEvents(parts.flat().sort((a, b) => a.timestamp - b.timestamp)))
      .catch((e) => !stale && setFailed(message(e)));
    return () => {
      stale = true;
    };
  }, [loaded.state, current]);
  useEffect(() => {
    if (!events || events.length < 2 || !stage.current) return;
    stage.current.innerHTML = "";
    const r = new Replayer(events as never[], { root: stage.current, skipInactive: true, showWarning: false, mouseTail: false });
    player.current = r;
    const fit = () => {
      const box = stage.current;
      const frame = r.iframe;
      if (!box || !frame) return;
      const scale = Math.min(1, box.clientWidth / (frame.offsetWidth || 1));
      r.wrapper.style.transform = `scale(${scale})`;
      r.wrapper.style.transformOrigin = "top left";
      box.style.height = `${(frame.offsetHeight || 400) * scale}px`;
    };
    r.on("resize", fit);
    r.play();
    setTimeout(fit, 0);
    return () => {
      r.destroy();
      player.current = null;
    };
  }, [events]);

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
  const remove = async () => {
    setBusy(true);
    try {
      await api.deleteReplay(pid, props.sessionId);
      navigate(list);
    } catch (err) {
      setNotice({ error: message(err) });
      setBusy(false);
    }
  };
  return (
    <section class="page replay">
      <p class="crumbs">
        <Link href={list}>Replays</Link>
      </p>
      <div class="section-head tight">
        <h1>{s.distinctId}</h1>
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
      <ul class="replay-legend">
        <li class="mark page">Page view</li>
        <li class="mark click">Click</li>
        <li class="mark event">Event</li>
        <li class="mark error">Error</li>
      </ul>
      {confirm && (
        <ConfirmDialog title="Delete this replay?" confirmLabel="Delete replay" busy={busy} onConfirm={remove} onCancel={() => setConfirm(false)}>
          <p>The recording of this session is deleted for good. Its events stay.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
