/**
 * The DOM of one step: a host element appended to <body>, with an open shadow
 * root holding the renderer's styles and the step. The root is open, not
 * closed: closing it would not protect anything from the page (scripts of
 * the page run in the same realm and could patch attachShadow), while an
 * open root lets assistive-technology tooling, axe-core, browser tests and
 * the customer's own QA see the message. Style isolation is the same either way.
 */
import { render } from "./markdown.js";
import { CSS } from "./styles.js";
import type { AnswerValue, Question, Step } from "./types.js";

/** The tag of the host element; autocapture ignores everything under data-strata-no-capture. */
export const HOST_TAG = "strata-messages";

/** Where a step stands in its flow, which decides the buttons it gets. */
export interface Nav {
  /** The step's position among the flow's steps (0-based) and their number. */
  index: number;
  count: number;
  /** Back is offered (a step before this one can be shown). */
  back: boolean;
  /** No later step can be shown: Done (Submit for a survey) instead of Next. */
  last: boolean;
}

/** What the buttons do. `answer` reports a survey answer as it changes (undefined: none). */
export interface Actions {
  close(): void;
  back(): void;
  next(): void;
  done(): void;
  cta(): void;
  answer(value: AnswerValue | undefined): void;
}

/** A mounted host: its shadow root, and a function that removes it. */
export interface Mount {
  root: ShadowRoot;
  remove(): void;
}

/**
 * mount appends the host element to <body> and returns its shadow root. The
 * styles are a constructed stylesheet adopted by the root: a page's
 * Content-Security-Policy governs `<style>` elements (style-src without
 * 'unsafe-inline' blocks them) but not the CSSOM, so the message keeps its
 * styles under any CSP. Browsers without constructable stylesheets (before
 * Safari 16.4, Firefox 101) get a `<style>` with the page's nonce, if given.
 */
export function mount(nonce?: string): Mount {
  const host = document.createElement(HOST_TAG);
  host.setAttribute("data-strata-no-capture", "");
  // Inline and important: a page rule for every element (* {display: none}) loses.
  host.style.cssText = "all:initial!important;display:block!important;position:fixed!important;top:0!important;left:0!important;width:0!important;height:0!important;z-index:2147483647!important";
  const root = host.attachShadow({ mode: "open" });
  try {
    // Engines shipped the constructor and adoptedStyleSheets together: where
    // they are missing, the constructor throws.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } catch {
    const style = el("style");
    if (nonce) style.nonce = nonce;
    style.textContent = CSS;
    root.append(style);
  }
  document.body.append(host);
  return { root, remove: () => host.remove() };
}

/**
 * show renders `step` into `root` and returns a function that removes it with
 * its listeners. A tooltip is placed next to `anchor` and follows it; without
 * an anchor (the dashboard's preview) it sits in the middle of the viewport.
 * A modal or survey takes the focus and keeps it (Tab cycles inside); Escape
 * closes any step that has the focus, and a modal or survey wherever it is.
 */
export function show(root: ShadowRoot, step: Step, nav: Nav, act: Actions, answer?: AnswerValue, anchor?: Element | null): () => void {
  const stops: (() => void)[] = [];
  const listen = (t: EventTarget, type: string, fn: (e: Event) => void, opts: boolean | AddEventListenerOptions = true) => {
    // What a button starts (a CTA's navigation, a request) must not throw into the page.
    const safe = (e: Event) => {
      try {
        fn(e);
      } catch {
        // Never throw into the page.
      }
    };
    t.addEventListener(type, safe, opts);
    stops.push(() => t.removeEventListener(type, safe, opts));
  };
  const modal = step.kind == "modal" || step.kind == "survey";
  // A survey is a modal asking a question: both get the modal's place and size.
  const box = el("div", modal ? "box modal" + (step.kind == "survey" ? " survey" : "") : "box " + step.kind);
  const nodes: HTMLElement[] = [box];
  if (modal) {
    const backdrop = el("div", "backdrop");
    // Clicks on the backdrop neither close the dialog nor take the focus out of it.
    listen(backdrop, "mousedown", (e) => e.preventDefault());
    nodes.unshift(backdrop);
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.tabIndex = -1;
  } else if (step.kind == "tooltip") {
    box.setAttribute("role", "dialog");
  } else {
    box.setAttribute("role", "region");
    box.classList.add(step.placement == "bottom" ? "bottom" : "top");
  }

  const content = el("div", "content");
  if (step.title) {
    const h = el("h2");
    h.id = "strata-title";
    h.textContent = step.title;
    content.append(h);
    box.setAttribute("aria-labelledby", h.id);
  } else {
    box.setAttribute("aria-label", step.question ? step.question.prompt : "Message");
  }
  if (step.body) {
    const body = el("div", "body");
    body.id = "strata-body";
    body.append(render(step.body, step.bodyFormat || "text"));
    content.append(body);
    if (modal) box.setAttribute("aria-describedby", body.id);
  }
  const buttons = el("div", "actions");
  const button = (label: string, fn: () => void, cls = "") => {
    const b = el("button", cls) as HTMLButtonElement;
    b.type = "button";
    b.textContent = label;
    listen(b, "click", fn, false);
    return b;
  };
  let primary: HTMLButtonElement;
  if (nav.count > 1) {
    const c = el("span", "count");
    c.textContent = nav.index + 1 + " of " + nav.count;
    buttons.append(c);
  }
  if (nav.back) buttons.append(button("Back", act.back));
  if (step.cta && step.cta.label) buttons.append(button(step.cta.label, act.cta, nav.last && !step.question ? "primary" : ""));
  buttons.append(
    (primary = nav.last ? button(step.kind == "survey" ? "Submit" : "Done", act.done, step.cta ? "" : "primary") : button("Next", act.next, "primary")),
  );
  if (step.kind == "survey" && step.question) {
    const q = question(step.question, answer, (v) => {
      primary.disabled = v === undefined;
      act.answer(v);
    });
    content.append(q);
    primary.disabled = answer === undefined;
  }
  const x = button("×", act.close, "x");
  x.setAttribute("aria-label", "Close");
  box.append(x, content, buttons);
  root.append(...nodes);

  listen(box, "keydown", (e) => {
    if ((e as KeyboardEvent).key == "Escape") {
      e.stopPropagation();
      act.close();
    }
  });
  if (modal) {
    // The page's keys while the dialog is open: Escape closes it, and Tab stays inside.
    listen(document, "keydown", (e) => trap(e as KeyboardEvent, root, box, act.close));
    const first = box.querySelector<HTMLElement>("input,textarea");
    (first || box).focus();
  }
  if (step.kind == "tooltip") stops.push(follow(box, anchor || null));
  return () => {
    for (const s of stops) s();
    for (const n of nodes) n.remove();
  };
}

/**
 * trap handles a key pressed while a modal is open: Escape closes it, and Tab
 * and Shift+Tab wrap around its focusable elements, also when the focus had
 * left the dialog.
 */
function trap(e: KeyboardEvent, root: ShadowRoot, box: HTMLElement, close: () => void): void {
  if (e.key == "Escape") {
    e.stopPropagation();
    e.preventDefault();
    close();
    return;
  }
  if (e.key != "Tab") return;
  const all = Array.from(box.querySelectorAll<HTMLElement>("button:not([disabled]),input:not([disabled]),textarea,a[href]"));
  if (!all.length) return;
  const active = root.activeElement;
  const first = all[0];
  const last = all[all.length - 1];
  let to: HTMLElement | undefined;
  if (!active || !box.contains(active)) to = e.shiftKey ? last : first;
  else if (e.shiftKey && (active == first || active == box)) to = last;
  else if (!e.shiftKey && active == last) to = first;
  if (to) {
    e.preventDefault();
    to.focus();
  }
}

/**
 * follow places a tooltip under its anchor, or over it when there is no room
 * below, centred on it as far as the viewport allows, and keeps it there on
 * scroll, resize, and whenever the anchor moves (checked every frame while
 * the tooltip is shown). It returns a function that stops following.
 */
function follow(box: HTMLElement, anchor: Element | null): () => void {
  const arrow = el("div", "arrow");
  box.prepend(arrow);
  let last = "";
  let frame = 0;
  const place = () => {
    const vw = innerWidth;
    const vh = innerHeight;
    const w = box.offsetWidth;
    const h = box.offsetHeight;
    if (!anchor) {
      arrow.style.display = "none";
      box.style.left = Math.max(8, (vw - w) / 2) + "px";
      box.style.top = Math.max(8, (vh - h) / 2) + "px";
      return;
    }
    const r = anchor.getBoundingClientRect();
    const key = [r.left, r.top, r.width, r.height, vw, vh, w, h].join();
    if (key == last) return;
    last = key;
    const gap = 12;
    const above = r.bottom + gap + h > vh && r.top - gap - h >= 0;
    const left = Math.max(8, Math.min(r.left + r.width / 2 - w / 2, vw - w - 8));
    box.style.left = left + "px";
    box.style.top = (above ? r.top - gap - h : r.bottom + gap) + "px";
    arrow.style.left = Math.max(12, Math.min(r.left + r.width / 2 - left - 6, w - 24)) + "px";
    arrow.style.top = above ? h - 6 + "px" : "-6px";
  };
  const tick = () => {
    place();
    frame = requestAnimationFrame(tick);
  };
  const onChange = () => place();
  addEventListener("scroll", onChange, { capture: true, passive: true });
  addEventListener("resize", onChange);
  tick();
  return () => {
    cancelAnimationFrame(frame);
    removeEventListener("scroll", onChange, { capture: true });
    removeEventListener("resize", onChange);
  };
}

/**
 * question renders a survey question: a row of 1..scale or 0–10 (nps) radio
 * buttons, radios for one choice, checkboxes for several, or a text area of at
 * most 2,000 characters. `answer` is the value to show as chosen; `changed`
 * gets every change, undefined when nothing is chosen.
 */
function question(q: Question, answer: AnswerValue | undefined, changed: (v: AnswerValue | undefined) => void): HTMLElement {
  if (q.type == "text") {
    const wrap = el("div");
    const label = el("label", "prompt") as HTMLLabelElement;
    label.htmlFor = "strata-q";
    label.textContent = q.prompt;
    const t = el("textarea") as HTMLTextAreaElement;
    t.id = "strata-q";
    t.maxLength = 2000;
    if (typeof answer == "string") t.value = answer;
    t.addEventListener("input", () => changed(t.value.trim() ? t.value.slice(0, 2000) : undefined));
    wrap.append(label, t);
    return wrap;
  }
  const fs = el("fieldset");
  const legend = el("legend");
  legend.textContent = q.prompt;
  fs.append(legend);
  const scale = q.type == "rating" || q.type == "nps";
  const values: (string | number)[] = scale
    ? Array.from({ length: q.type == "nps" ? 11 : q.scale || 5 }, (_, i) => (q.type == "nps" ? i : i + 1))
    : q.choices || [];
  const list = el("div", scale ? "scale" : "choices");
  const multiple = q.type == "multiple";
  const inputs: HTMLInputElement[] = [];
  for (const v of values) {
    const label = el("label", "opt");
    const input = el("input") as HTMLInputElement;
    input.type = multiple ? "checkbox" : "radio";
    input.name = "strata-q";
    input.value = String(v);
    input.checked = Array.isArray(answer) ? answer.includes(String(v)) : answer === v;
    input.addEventListener("change", () => {
      const on = inputs.filter((i) => i.checked).map((i) => i.value);
      changed(multiple ? (on.length ? on : undefined) : scale ? Number(on[0]) : on[0]);
    });
    inputs.push(input);
    const text = el("span");
    text.textContent = String(v);
    label.append(input, text);
    list.append(label);
  }
  fs.append(list);
  if (q.type == "nps") {
    const ends = el("div", "ends");
    ends.setAttribute("aria-hidden", "true");
    const lo = el("span");
    lo.textContent = "Not likely";
    const hi = el("span");
    hi.textContent = "Very likely";
    ends.append(lo, hi);
    fs.append(ends);
  }
  return fs;
}

function el(tag: string, cls = ""): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}
