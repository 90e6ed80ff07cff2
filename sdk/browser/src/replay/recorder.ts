import { record } from "rrweb";
import { stringify } from "../json.js";
import { beacon, request } from "../net.js";
import type { Properties, ReplayHost, ReplayRecorder } from "../types.js";
import { uuid } from "../uuid.js";

/** A chunk is sent after this many rrweb events, or this long after its first (docs/replay.md). */
export const CHUNK_EVENTS = 100;
export const CHUNK_MS = 5000;
/** Recording pauses after this long without input, and resumes on the next. */
export const IDLE_MS = 5 * 60 * 1000;
/** How many times a chunk the server could not take is sent again. */
const CHUNK_RETRIES = 3;
/** What the SDK sends by fetch with keepalive (the browsers' limit is 64 KiB for all in flight). */
const KEEPALIVE_BYTES = 60000;

/** An answer that refuses a chunk because its session, or its product's sessions, are full. */
const FULL = /"replay_(session|quota)_full"/;

/** The input that resumes a paused recording. */
const WAKE_EVENTS = ["mousedown", "keydown", "scroll", "touchstart", "mousemove"];

/** rrweb's incremental sources that are the user's own doing (mouse, scroll, input, touch…). */
const ACTIVE_SOURCES = [1, 2, 3, 5, 6, 7, 12];

/** The element rules every recording applies; pages cannot loosen them. */
export const PRIVACY = {
  maskAllInputs: true,
  maskInputOptions: { password: true },
  maskTextSelector: "[data-strata-mask]",
  blockSelector: "[data-strata-block], input[type=password]",
};

interface RREvent {
  type: number;
  timestamp: number;
  data?: { source?: number };
}

/**
 * Recorder records the page with rrweb and sends it in chunks as `$snapshot` events:
 * the chunk's events as a JSON array, gzipped with CompressionStream where the browser
 * has it (`gzip-json`), else as they are (`json`), base64-encoded. It pauses while the
 * tab is hidden or the user idle, and follows the SDK's session: a new session id
 * starts a new full snapshot at chunk 0.
 */
export class Recorder implements ReplayRecorder {
  private readonly host: ReplayHost;
  private readonly window = uuid();
  private session: string;
  private index = 0;
  private buffer: RREvent[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  private stopRecording?: () => void;
  private lastActive = Date.now();
  private lastTouch = 0;
  private idleTimer?: ReturnType<typeof setInterval>;
  private readonly cleanups: (() => void)[] = [];
  /** The session the server refused more chunks of (replay_session_full, replay_quota_full): none is recorded or sent until the next. */
  private full?: string;

  constructor(host: ReplayHost) {
    this.host = host;
    this.session = host.sessionId();
    const visibility = safe(() => (document.visibilityState == "hidden" ? this.pause() : this.resume()));
    document.addEventListener("visibilitychange", visibility);
    addEventListener("pagehide", safe(() => this.flush(true)));
    this.cleanups.push(() => document.removeEventListener("visibilitychange", visibility), () => this.listen(false));
    this.idleTimer = setInterval(safe(() => Date.now() - this.lastActive > IDLE_MS && this.pause()), 10000);
    if (document.visibilityState == "hidden") this.listen(true);
    else this.resume();
  }

  /**
   * listen adds (or removes) the listeners that resume a paused recording on
   * the user's next input. They are there only while paused: a running
   * recording sees the input in rrweb's own events (emit), and a listener on
   * every mouse move would cost the page for nothing.
   */
  private listen(on: boolean): void {
    for (const type of WAKE_EVENTS) {
      if (on) addEventListener(type, this.wake, { capture: true, passive: true });
      else removeEventListener(type, this.wake, { capture: true });
    }
  }

  private readonly wake = safe(() => this.resume());

  /** resume starts recording (a full snapshot first) unless it runs, or the session is full. */
  private resume(): void {
    this.lastActive = Date.now();
    if (this.stopRecording || document.visibilityState == "hidden") return;
    if (this.full) {
      this.touch();
      if (this.session == this.full) return;
    }
    this.listen(false);
    this.touch(true);
    this.stopRecording = record<RREvent>({
      ...PRIVACY,
      emit: (e) => this.emit(e),
      sampling: { mousemove: 50, scroll: 150, input: "last" },
      recordCanvas: false,
      collectFonts: false,
      inlineImages: false,
    });
  }

  /** pause stops recording and sends what is buffered. */
  private pause(): void {
    if (!this.stopRecording) return;
    this.stopRecording();
    this.stopRecording = undefined;
    this.listen(true);
    this.flush(document.visibilityState == "hidden");
  }

  /** touch counts activity for the session, at most once a second, and follows a new session id. */
  private touch(force?: boolean): void {
    const now = Date.now();
    if (!force && now - this.lastTouch < 1000) return;
    this.lastTouch = now;
    const id = this.host.sessionId();
    if (id == this.session) return;
    this.flush();
    this.session = id;
    this.index = 0;
    if (this.stopRecording) record.takeFullSnapshot(true);
  }

  private emit(e: RREvent): void {
    if (e.type == 3 && e.data && ACTIVE_SOURCES.indexOf(e.data.source as number) >= 0) {
      this.lastActive = Date.now();
      this.touch();
    }
    this.buffer.push(e);
    if (this.buffer.length >= CHUNK_EVENTS) this.flush();
    else if (!this.timer) this.timer = setTimeout(safe(() => this.flush()), CHUNK_MS);
  }

  /** event marks an SDK event in the recording as an rrweb custom event tagged with its name. */
  event(eventName: string, properties: Properties): void {
    try {
      if (!this.stopRecording || eventName == "$snapshot") return;
      const payload = eventName == "$exception" ? { message: String(properties.$exception_message || "").slice(0, 200) } : {};
      record.addCustomEvent(eventName, payload);
    } catch {
      // Never throw into the page.
    }
  }

  stop(): void {
    clearInterval(this.idleTimer);
    for (const f of [() => this.pause(), ...this.cleanups]) safe(f)();
  }

  /**
   * sessionFull stops the recording of a session the server takes no more
   * chunks of: it answered replay_session_full, the session being over the
   * server's cap, or replay_quota_full, the product keeping as many
   * sessions as the server allows and this one not among them
   * (docs/replay.md, "Limits"). Sending them again would be refused again,
   * so none is; the input listeners wait for the next session, which is
   * recorded from its start (by then the server's retention job has made
   * room in the product).
   */
  private sessionFull(id: string): void {
    this.full = id;
    if (id != this.session) return;
    this.buffer = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopRecording) {
      this.stopRecording();
      this.stopRecording = undefined;
      this.listen(true);
    }
  }

  /** flush sends the buffer as the next chunk; `leaving` when the page is going away. */
  private flush(leaving?: boolean): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.session == this.full) this.buffer = [];
    if (!this.buffer.length) return;
    const events = this.buffer;
    this.buffer = [];
    const props = { $session_id: this.session, $window_id: this.window, $chunk_index: this.index++ };
    const bytes = new TextEncoder().encode(stringify(events));
    const last = new Date(events[events.length - 1].timestamp).toISOString();
    const send = (data: string, encoding: string) => {
      // The chunk's data goes in by concatenation rather than through a second
      // JSON.stringify, which would copy (and scan) the largest string again:
      // base64 needs no escaping, and the head ends with the properties' "}}]}".
      const head = stringify({
        api_key: this.host.key,
        sent_at: new Date().toISOString(),
        batch: [{ uuid: uuid(), event_name: "$snapshot", distinct_id: this.host.distinctId(), timestamp: last, url: location.href,
          properties: { ...props, $snapshot_encoding: encoding } }],
      });
      const body = head.slice(0, -4) + ',"$snapshot_data":"' + data + '"}}]}';
      const url = this.host.host + "/e";
      if (leaving && body.length < KEEPALIVE_BYTES && beacon(url, body)) return;
      // A chunk the server could not take for now (a network error, 429 or
      // 5xx) is sent again, 1, 2 and 4 s later: a lost chunk is a hole in the
      // recording, and chunk 0 holds the full snapshot the rest build on. A
      // chunk it refused (202 with the chunk rejected, or 400) is not; when
      // the reason is that the session, or the product's sessions, are full,
      // the session's recording stops.
      const post = (attempt: number): void => {
        const again = () => attempt < CHUNK_RETRIES && setTimeout(() => post(attempt + 1), 1000 * 2 ** attempt);
        request(url, { method: "POST", headers: { "Content-Type": "text/plain" }, body, keepalive: body.length < KEEPALIVE_BYTES })
          .then((r) => {
            if (r.status == 429 || r.status >= 500) again();
            else r.text().then((t) => FULL.test(t) && this.sessionFull(props.$session_id), () => {});
          }, again)
          .catch(() => {
            // Never an unhandled rejection of the page's.
          });
      };
      post(0);
    };
    // A page going away has no time for an asynchronous compression.
    if (typeof CompressionStream != "function" || leaving) {
      send(base64(bytes), "json");
      return;
    }
    gzip(bytes)
      .then((gz) => send(base64(gz), "gzip-json"))
      .catch(() => send(base64(bytes), "json"));
  }
}

/**
 * safe wraps a listener or timer of the recorder's: what it throws (rrweb on
 * a page it cannot record, a page's patched built-in) stays in the SDK
 * rather than being reported as the page's error.
 */
function safe(f: () => unknown): () => void {
  return () => {
    try {
      f();
    } catch {
      // Never throw into the page.
    }
  };
}

/**
 * gzip compresses bytes with the browser's CompressionStream. The bytes go in
 * and come out as arrays, not Blobs: a Blob's bytes pass through Chromium's
 * browser process and back, which took more of the page's time than the
 * compression itself (docs/benchmarks.md, "Session replay").
 */
function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const cs = new CompressionStream("gzip");
  const w = cs.writable.getWriter();
  // A failure shows in the readable side, which the caller handles.
  w.write(bytes as Uint8Array<ArrayBuffer>).catch(() => {});
  w.close().catch(() => {});
  return new Response(cs.readable).arrayBuffer().then((b) => new Uint8Array(b));
}

/** base64 encodes bytes (btoa takes a binary string; built in pieces to spare the stack). */
function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  return btoa(s);
}
