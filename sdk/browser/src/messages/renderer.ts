/**
 * The message renderer: it asks the server which campaigns this user may see
 * on this path, watches the events the SDK captures for their triggers, and
 * shows one flow at a time (docs/messages.md).
 */
import { stringify } from "../json.js";
import { request } from "../net.js";
import { getJSON, set } from "../storage.js";
import type { MessageHost, MessageRenderer } from "../types.js";
import { safeURL } from "./markdown.js";
import { pathMatches } from "./pathregex.js";
import type { ActiveList, AnswerValue, Campaign, MessageEvent, Step } from "./types.js";
import { mount, show, type Mount } from "./view.js";

/** sessionStorage key of the active lists, by path, of the current user. */
export const CACHE_KEY = "strata_messages";
/** localStorage key of the campaigns whose flow ended, as "distinct id\ncampaign id". */
export const DONE_KEY = "strata_messages_done";
/** An active list is reused this long in a session, unless identify() is called. */
export const LIST_TTL = 300_000;
/** At most this many paths' lists are kept, and this many ended flows remembered. */
const MAX_PATHS = 20;
const MAX_DONE = 500;
/** The server's limit on the traits sent with the list request. */
const MAX_TRAITS = 4096;
/** After a failed list request, the path's list is empty this long before it is asked again. */
const RETRY_AFTER = 30_000;

interface Entry {
  at: number;
  messages: Campaign[];
}

/** The session cache: the lists of one user by path. */
interface Cache {
  id: string;
  lists: Record<string, Entry>;
}

/** The flow on screen. */
interface Flow {
  c: Campaign;
  mount: Mount;
  /** The step shown, and how to remove it. */
  index: number;
  hide?: () => void;
  impressed?: boolean;
  answers: Record<string, AnswerValue>;
  /** Where the focus was when the flow began, to give it back at the end. */
  returnTo: Element | null;
}

/**
 * Renderer implements the SDK's MessageRenderer. Nothing it does throws into
 * the page: a request that fails shows nothing, a step that cannot be shown
 * (a tooltip whose selector throws or matches nothing) is skipped.
 */
export class Renderer implements MessageRenderer {
  private cache: Cache;
  /** List requests under way, by path; calls for the same path share one. */
  private pending: Record<string, Promise<Campaign[]> | undefined> = {};
  /** When a path's list request last failed, so that every event does not ask again. */
  private failed: Record<string, number> = {};
  /** Triggered campaigns waiting for the one on screen to end. */
  private queue: Campaign[] = [];
  private flow?: Flow;

  constructor(private readonly h: MessageHost) {
    this.cache = getJSON<Cache>("sessionStorage", CACHE_KEY) || { id: "", lists: {} };
    void this.list(location.pathname);
  }

  event(eventName: string, _properties: unknown, url: string): void {
    let path: string;
    try {
      path = new URL(url).pathname;
    } catch {
      return;
    }
    void this.list(path)
      .then((list) => {
        for (const c of list) {
          if (c.trigger && c.trigger.event == eventName && pathMatches(c.pathRegex, path) && !this.waiting(c.id)) {
            this.queue.push(c);
          }
        }
        this.next();
      })
      .catch(() => {
        // Never an unhandled rejection of the page's.
      });
  }

  identified(): void {
    // The audience may have changed: forget every list and ask again.
    this.cache = { id: this.h.distinctId(), lists: {} };
    this.pending = {};
    this.failed = {};
    this.save();
    void this.list(location.pathname);
  }

  /**
   * list resolves to the campaigns this user may see on `path`: the session's
   * list when it is fresh, else the server's, without those that ended here or
   * have no impression left. It never rejects; a failed request is an empty
   * list, asked again 30 seconds later.
   */
  list(path: string): Promise<Campaign[]> {
    const id = this.h.distinctId();
    if (this.cache.id != id) this.cache = { id, lists: {} };
    const cache = this.cache;
    const e = cache.lists[path];
    if (e && Date.now() - e.at < LIST_TTL) return Promise.resolve(this.usable(e.messages));
    if (Date.now() - (this.failed[path] || -Infinity) < RETRY_AFTER) return Promise.resolve([]);
    let traits = "";
    try {
      traits = stringify(this.h.traits());
    } catch {
      // Traits that cannot be sent are not sent.
    }
    const url =
      this.h.host +
      "/api/v1/messages/active?api_key=" + encodeURIComponent(this.h.key) +
      "&distinct_id=" + encodeURIComponent(id) +
      "&path=" + encodeURIComponent(path) +
      "&identified=" + (this.h.identified() ? 1 : 0) +
      (traits.length <= MAX_TRAITS && traits != "{}" ? "&traits=" + encodeURIComponent(traits) : "");
    const pending = this.pending;
    return (pending[path] ??= request(url)
      .then((r) => (r.ok ? (r.json() as Promise<ActiveList>) : undefined))
      .then((body) => {
        const messages = body && Array.isArray(body.messages) ? body.messages : [];
        if (!body) this.failed[path] = Date.now();
        else {
          cache.lists[path] = { at: Date.now(), messages };
          // Keep the most recent paths only.
          const paths = Object.keys(cache.lists).sort((a, b) => cache.lists[b].at - cache.lists[a].at);
          for (const p of paths.slice(MAX_PATHS)) delete cache.lists[p];
          if (cache == this.cache) this.save();
        }
        return this.usable(messages);
      })
      .catch(() => ((this.failed[path] = Date.now()), [] as Campaign[]))
      .finally(() => (pending[path] = undefined)));
  }

  /** usable drops the campaigns whose flow ended for this user, or with no impression left. */
  private usable(list: Campaign[]): Campaign[] {
    return list.filter((c) => c && Array.isArray(c.steps) && !this.ended(c.id) && !spent(c));
  }

  private waiting(id: number): boolean {
    return (this.flow && this.flow.c.id == id) || this.queue.some((q) => q.id == id);
  }

  /**
   * next starts the first queued campaign that can still be shown: not ended,
   * with an impression left, its path rule holding on the current page, and
   * one step that can be shown.
   */
  private next(): void {
    // An async script may run before <body> exists.
    if (!document.body) {
      document.addEventListener("DOMContentLoaded", () => this.next(), { once: true });
      return;
    }
    while (!this.flow && this.queue.length) {
      const c = this.queue.shift()!;
      if (this.ended(c.id) || !this.current(c.id) || !pathMatches(c.pathRegex, location.pathname)) continue;
      const first = this.step(c, -1, 1);
      if (first < 0) continue;
      try {
        const f: Flow = (this.flow = { c, mount: mount(this.h.nonce), index: first, answers: {}, returnTo: document.activeElement });
        this.render(f, first);
      } catch {
        this.close();
      }
    }
  }

  /** current reports whether a cached list still offers campaign `id` (not dropped at remaining 0). */
  private current(id: number): boolean {
    return Object.values(this.cache.lists).some((e) => e.messages.some((m) => m.id == id && !spent(m)));
  }

  /**
   * step returns the index of the first step after `from` in direction `dir`
   * that can be shown, or -1: a tooltip needs its anchor.
   */
  private step(c: Campaign, from: number, dir: 1 | -1): number {
    for (let i = from + dir; i >= 0 && i < c.steps.length; i += dir) {
      const s = c.steps[i];
      if (s && (s.kind == "tooltip" ? anchor(s) : s.kind == "survey" ? s.question : s.kind == "modal" || s.kind == "banner")) return i;
    }
    return -1;
  }

  private render(f: Flow, index: number): void {
    if (f.hide) f.hide();
    f.index = index;
    const s = f.c.steps[index];
    const q = s.question;
    const move = (dir: 1 | -1) => {
      const i = this.step(f.c, f.index, dir);
      if (i >= 0) this.render(f, i);
      // The next step's anchor went away since this one was shown: this is the last.
      else if (dir > 0) this.end("message_complete");
    };
    f.hide = show(
      f.mount.root,
      s,
      { index, count: f.c.steps.length, back: this.step(f.c, index, -1) >= 0, last: this.step(f.c, index, 1) < 0 },
      {
        close: () => this.end("message_dismiss"),
        back: () => move(-1),
        next: () => move(1),
        done: () => this.end("message_complete"),
        cta: () => this.end("message_cta_click"),
        answer: (v) => {
          if (!q) return;
          if (v === undefined) delete f.answers[q.id];
          else f.answers[q.id] = v;
        },
      },
      q ? f.answers[q.id] : undefined,
      s.kind == "tooltip" ? anchor(s) : null,
    );
    if (!f.impressed) {
      f.impressed = true;
      this.impression(f.c);
      this.send("message_impression", f);
    }
  }

  /**
   * impression sends the variant's `$exposure` (deduplicated per session by the
   * SDK) and counts an impression down in every cached list, dropping the
   * campaign at 0 until the list is fetched again.
   */
  private impression(c: Campaign): void {
    const x = c.exposure;
    if (x && x.flag) this.h.expose(x.flag, x.experiment_id, x.variant);
    for (const e of Object.values(this.cache.lists)) {
      e.messages = e.messages.filter((m) => m.id != c.id || typeof m.remaining != "number" || --m.remaining > 0);
    }
    this.save();
  }

  /**
   * end closes the flow with its terminal event: the campaign, any variant,
   * is not shown to this user in this browser again. Survey answers given so
   * far are sent; a CTA then opens its URL.
   */
  private end(event: Exclude<MessageEvent, "message_impression">): void {
    const f = this.flow;
    if (!f) return;
    const c = f.c;
    this.send(event, f);
    const answers = Object.keys(f.answers).map((questionId) => ({ questionId, value: f.answers[questionId] }));
    if (answers.length) {
      post(this.h, "/api/v1/surveys/" + c.id + "/respond", { distinct_id: this.h.distinctId(), variant: c.variant, answers });
    }
    this.remember(c.id);
    this.close();
    const cta = event == "message_cta_click" && c.steps[f.index].cta;
    const url = cta ? safeURL(cta.url) : "";
    if (url) {
      this.h.flush();
      location.assign(url);
    }
    this.next();
  }

  /** close removes the flow from the page and gives the focus back if the flow held it. */
  private close(): void {
    const f = this.flow;
    this.flow = undefined;
    if (!f) return;
    const focused = !!f.mount.root.activeElement;
    if (f.hide) f.hide();
    f.mount.remove();
    const r = f.returnTo as HTMLElement | null;
    if (focused && r && r.isConnected && typeof r.focus == "function") r.focus();
  }

  /** send records a flow event: to `/e` through the SDK, and to the campaign's state (`/track`). */
  private send(event: MessageEvent, f: Flow): void {
    const c = f.c;
    this.h.capture(event, { $message_id: c.id, $message_name: c.name, $variant: c.variant, $step: f.index });
    post(this.h, "/api/v1/messages/" + c.id + "/track", { distinct_id: this.h.distinctId(), event, variant: c.variant, step: f.index });
  }

  /** remember marks campaign `id` ended for this user, and drops it from the lists and the queue. */
  private remember(id: number): void {
    const done = getJSON<string[]>("localStorage", DONE_KEY) || [];
    done.push(this.h.distinctId() + "\n" + id);
    set("localStorage", DONE_KEY, stringify(done.slice(-MAX_DONE)));
    for (const e of Object.values(this.cache.lists)) e.messages = e.messages.filter((m) => m.id != id);
    this.queue = this.queue.filter((q) => q.id != id);
    this.save();
  }

  private ended(id: number): boolean {
    const done = getJSON<string[]>("localStorage", DONE_KEY);
    return Array.isArray(done) && done.includes(this.h.distinctId() + "\n" + id);
  }

  private save(): void {
    set("sessionStorage", CACHE_KEY, stringify(this.cache));
  }
}

/** spent reports whether the cap allows no more impressions now. */
function spent(c: Campaign): boolean {
  return typeof c.remaining == "number" && c.remaining <= 0;
}

/** anchor returns the element a tooltip step points at, or null when its selector matches nothing or throws. */
export function anchor(s: Step): Element | null {
  try {
    return s.selector ? document.querySelector(s.selector) : null;
  } catch {
    return null;
  }
}

/**
 * post sends a small JSON body to an SDK path with the key in the query, with
 * keepalive so that it survives the navigation a CTA starts. text/plain keeps
 * it a simple request (no CORS preflight), as the events are.
 */
function post(h: MessageHost, path: string, body: unknown): void {
  try {
    void request(h.host + path + "?api_key=" + encodeURIComponent(h.key), {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: stringify(body),
      keepalive: true,
    }).catch(() => undefined);
  } catch {
    // Never throw into the page.
  }
}
