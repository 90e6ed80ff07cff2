import type { Properties } from "./types.js";

/** Elements under an element with this attribute are never captured. */
const NO_CAPTURE = "[data-strata-no-capture]";
/** What counts as a link or button for `$click`. */
const CLICKABLE = "a,button,input[type=button],input[type=submit],input[type=reset],[role=button]";
/** Dispatched on window after history.pushState and replaceState. */
const NAVIGATE = "strata:navigate";

type Capture = (eventName: string, properties: Properties) => void;

/**
 * autocapture listens for clicks on links and buttons and for form submits, and
 * calls `onNavigate` after every SPA navigation (pushState, replaceState,
 * popstate). It reads tag names, attributes and visible text only, never the
 * value of a form field. It returns a function that removes the listeners.
 */
export function autocapture(capture: Capture, onNavigate: () => void): () => void {
  patchHistory();
  const click = (ev: Event) => {
    const el = (ev.target as Element | null)?.closest?.(CLICKABLE);
    if (!el || el.closest(NO_CAPTURE)) return;
    const props: Properties = { $tag: el.tagName.toLowerCase(), $selector: selector(el) };
    // An <input>'s label is its value, and values are never read.
    const text = el.tagName == "INPUT" ? "" : clean(el.textContent);
    if (text) props.$text = text;
    const href = el.getAttribute("href");
    if (href) props.$href = absolute(href);
    capture("$click", props);
  };
  const submit = (ev: Event) => {
    const form = ev.target as Element | null;
    if (!form?.closest || form.closest(NO_CAPTURE)) return;
    // getAttribute, not form.id: a field named "id" or "action" shadows the property.
    const props: Properties = { $selector: selector(form) };
    for (const a of ["id", "name", "action"]) {
      const v = form.getAttribute(a);
      if (v) props["$form_" + a] = a == "action" ? absolute(v) : v;
    }
    capture("$form_submit", props);
  };
  // A page's odd element or patched DOM method must not make a listener of
  // the SDK throw: the error would be reported as the page's.
  const safe = (fn: (ev: Event) => void) => (ev: Event) => {
    try {
      fn(ev);
    } catch {
      // Never throw into the page.
    }
  };
  const listeners: [EventTarget, string, (ev: Event) => void][] = [
    [document, "click", safe(click)],
    [document, "submit", safe(submit)],
    [window, NAVIGATE, safe(onNavigate)],
    [window, "popstate", safe(onNavigate)],
  ];
  for (const [t, type, fn] of listeners) t.addEventListener(type, fn, true);
  return () => {
    for (const [t, type, fn] of listeners) t.removeEventListener(type, fn, true);
  };
}

/**
 * patchHistory wraps pushState and replaceState once per page so SPA route
 * changes can be seen; the wrappers call the originals unchanged.
 */
function patchHistory(): void {
  for (const m of ["pushState", "replaceState"] as const) {
    const orig = history[m] as History["pushState"] & { strata?: 1 };
    if (orig.strata) continue;
    const wrapped = function (this: History, ...args: Parameters<History["pushState"]>) {
      const r = orig.apply(this, args);
      dispatchEvent(new Event(NAVIGATE));
      return r;
    };
    (wrapped as typeof orig).strata = 1;
    history[m] = wrapped;
  }
}

/**
 * selector describes an element for humans: up to three levels of
 * `tag#id` or `tag.class1.class2`, stopping at the first id, e.g.
 * `div.pricing > button.cta`.
 */
export function selector(el: Element): string {
  const parts: string[] = [];
  for (let e: Element | null = el; e && parts.length < 3 && e != document.body; e = e.parentElement) {
    const tag = e.tagName.toLowerCase();
    if (e.id) {
      parts.unshift(tag + "#" + esc(e.id));
      break;
    }
    parts.unshift(tag + Array.from(e.classList).slice(0, 2).map((c) => "." + esc(c)).join(""));
  }
  return parts.join(" > ");
}

/** clean collapses whitespace and trims text to 255 characters (code points). */
export function clean(text: string | null): string {
  return Array.from((text || "").replace(/\s+/g, " ").trim()).slice(0, 255).join("");
}

function esc(s: string): string {
  return typeof CSS != "undefined" && CSS.escape ? CSS.escape(s) : s;
}

function absolute(u: string): string {
  try {
    return new URL(u, location.href).href;
  } catch {
    return u;
  }
}
