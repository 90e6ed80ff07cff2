// The message renderer (src/messages/): loading it from the SDK, the active
// list and its session cache, triggers and path rules, the flow of steps and
// its events, the terminal rule and the countdown of impressions, and the
// dashboard's preview.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TRAITS_KEY } from "../src/client";
import { CACHE_KEY, DONE_KEY, LIST_TTL, Renderer } from "../src/messages/renderer";
import { preview } from "../src/messages/preview";
import type { Campaign, Step } from "../src/messages/types";
import type { MessageHost, MessageRenderer, Properties } from "../src/types";
import { HOST, KEY, start } from "./helpers";

/** One request the renderer made, with its JSON body. */
interface Req {
  url: URL;
  body?: Record<string, unknown>;
}

/** server answers the renderer's requests: the active list from `lists` (by path, "*" for any). */
const server = {
  lists: {} as Record<string, Campaign[]>,
  requests: [] as Req[],
  active(): Req[] {
    return this.requests.filter((r) => r.url.pathname == "/api/v1/messages/active");
  },
  posts(path: string): Record<string, unknown>[] {
    return this.requests.filter((r) => r.url.pathname == path).map((r) => r.body!);
  },
};

beforeEach(() => {
  server.lists = {};
  server.requests = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: string, init: RequestInit = {}) => {
      const url = new URL(input);
      server.requests.push({ url, body: typeof init.body == "string" ? JSON.parse(init.body) : undefined });
      if (url.pathname == "/api/v1/messages/active") {
        const list = server.lists[url.searchParams.get("path")!] || server.lists["*"] || [];
        return new Response(JSON.stringify({ messages: JSON.parse(JSON.stringify(list)) }));
      }
      if (url.pathname == "/api/v1/config") return new Response(JSON.stringify({ flags: [], messagesEnabled: true }));
      return new Response("{}", { status: 202 });
    }),
  );
  vi.spyOn(window, "requestAnimationFrame").mockImplementation(() => 0);
});

afterEach(() => {
  // Close what is on screen, as a page would, so no listener outlives its test.
  for (const r of renderers.splice(0)) (r as unknown as { close(): void }).close();
  document.querySelectorAll("strata-messages").forEach((e) => e.remove());
});

/** A recording MessageHost, as the SDK gives it. */
class FakeHost implements MessageHost {
  host = HOST;
  key = KEY;
  id = "anon-1";
  user = false;
  userTraits: Properties = {};
  captured: { name: string; props: Properties }[] = [];
  exposed: unknown[][] = [];
  flushed = 0;
  distinctId() {
    return this.id;
  }
  identified() {
    return this.user;
  }
  traits() {
    return this.userTraits;
  }
  capture(name: string, props: Properties) {
    this.captured.push({ name, props });
  }
  expose(...args: unknown[]) {
    this.exposed.push(args);
  }
  flush() {
    this.flushed++;
  }
  names() {
    return this.captured.map((c) => c.name);
  }
}

const renderers: Renderer[] = [];

/** page starts a renderer as a page load would (the list request begins at once). */
function page(h = new FakeHost()): { h: FakeHost; r: Renderer } {
  const r = new Renderer(h);
  renderers.push(r);
  return { h, r };
}

function step(over: Partial<Step> = {}): Step {
  return { kind: "modal", title: "Welcome", body: "Hello **there**", bodyFormat: "markdown", selector: "", placement: "", cta: null, question: null, ...over };
}

function campaign(over: Partial<Campaign> = {}): Campaign {
  return {
    id: 12,
    name: "Welcome tour",
    variant: "control",
    trigger: { event: "$pageview" },
    pathRegex: "^/pricing",
    remaining: 3,
    exposure: null,
    steps: [step()],
    ...over,
  };
}

async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
}

/** fire delivers a captured event to the renderer on the current page and lets it act. */
async function fire(r: MessageRenderer, name = "$pageview") {
  r.event(name, {}, location.href);
  await settle();
}

function root(): ShadowRoot | null {
  return document.querySelector("strata-messages")?.shadowRoot ?? null;
}

function box(): HTMLElement | null {
  return root()?.querySelector(".box") ?? null;
}

function click(label: string) {
  const b = Array.from(root()!.querySelectorAll("button")).find((b) => b.textContent == label || b.getAttribute("aria-label") == label);
  if (!b) throw new Error(`no button ${label}`);
  b.click();
}

function key(target: EventTarget, k: string, shiftKey = false) {
  const e = new KeyboardEvent("keydown", { key: k, shiftKey, bubbles: true, composed: true, cancelable: true });
  target.dispatchEvent(e);
  return e;
}

describe("the SDK's side", () => {
  it("loads the renderer's script from the API's origin when the config says messagesEnabled", async () => {
    const added: HTMLScriptElement[] = [];
    vi.spyOn(document.head, "appendChild").mockImplementation((n) => (added.push(n as HTMLScriptElement), n));
    const s = start({ messages: true, autocapture: true });
    await settle();
    expect(added.map((s) => s.src)).toEqual([HOST + "/sdk/v1/messages.min.js"]);
    expect(added[0].async).toBe(true);
    expect(typeof window.__strataMessages).toBe("function");

    // The script registers; the page view captured while it loaded is replayed to it.
    const seen: string[] = [];
    let host: MessageHost | undefined;
    window.__strataMessages!((h) => ((host = h), { event: (name) => seen.push(name), identified: () => seen.push("identified()") }));
    expect(seen).toEqual(["$pageview"]);
    s.track("later");
    s.identify("u1", { plan: "pro" });
    expect(seen).toEqual(["$pageview", "later", "$identify", "identified()"]);
    expect(host!.distinctId()).toBe("u1");
    expect(host!.identified()).toBe(true);
    expect(host!.traits()).toEqual({ plan: "pro" });
    expect(host!.host).toBe(HOST);
    expect(host!.key).toBe(KEY);
    delete window.__strataMessages;
  });

  it("does not load it when messages are off, or the option says no", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify({ flags: [], messagesEnabled: false }))));
    const added = vi.spyOn(document.head, "appendChild");
    start({ messages: true });
    start({ messages: false });
    await settle();
    expect(added).not.toHaveBeenCalled();
    expect(vi.mocked(fetch).mock.calls).toHaveLength(1);
  });

  it("keeps the last traits passed to identify, across page loads", () => {
    const s = start();
    s.identify("u1", { plan: "pro", seats: 3 });
    s.identify("u1");
    expect(JSON.parse(localStorage.getItem(TRAITS_KEY)!)).toEqual({ plan: "pro", seats: 3 });
    expect(start().traits()).toEqual({ plan: "pro", seats: 3 });
    s.identify("u1", { plan: "team" });
    expect(start().traits()).toEqual({ plan: "team" });
  });

  it("sends the renderer's message_ events to /e and dedups $exposure with the flags'", async () => {
    vi.useFakeTimers();
    const s = start();
    s.capture("message_impression", { $message_id: 12 });
    s.expose("message_welcome", 5, "b");
    s.expose("message_welcome", 5, "b");
    await vi.advanceTimersByTimeAsync(1000);
    const sent = server.posts("/e").flatMap((b) => b.batch as { event_name: string }[]);
    expect(sent.map((e) => e.event_name)).toEqual(["message_impression", "$exposure"]);
  });
});

describe("the active list", () => {
  it("asks with the key, user, path, identity and traits", async () => {
    const h = new FakeHost();
    h.id = "u 1";
    h.user = true;
    h.userTraits = { plan: "pro" };
    page(h);
    await settle();
    const [req] = server.active();
    expect(req.url.origin).toBe(HOST);
    expect(Object.fromEntries(req.url.searchParams)).toEqual({
      api_key: KEY,
      distinct_id: "u 1",
      path: "/pricing",
      identified: "1",
      traits: '{"plan":"pro"}',
    });
  });

  it("leaves out traits over 4 KiB", async () => {
    const h = new FakeHost();
    h.userTraits = { bio: "x".repeat(5000) };
    page(h);
    await settle();
    expect(server.active()[0].url.searchParams.has("traits")).toBe(false);
    expect(server.active()[0].url.searchParams.get("identified")).toBe("0");
  });

  it("is cached 5 minutes a session, by path", async () => {
    server.lists["*"] = [campaign()];
    const now = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(now);
    const { r } = page();
    await fire(r);
    page(); // a reload
    await settle();
    expect(server.active()).toHaveLength(1);
    history.replaceState(null, "", "/other");
    await fire(r);
    expect(server.active()).toHaveLength(2); // another path, another list
    history.replaceState(null, "", "/pricing");
    clock.mockReturnValue(now + LIST_TTL);
    page();
    await settle();
    expect(server.active()).toHaveLength(3);
  });

  it("is asked again after identify, with the new user and traits", async () => {
    const { h, r } = page();
    await settle();
    h.id = "u1";
    h.user = true;
    h.userTraits = { plan: "pro" };
    r.identified();
    await settle();
    const [before, after] = server.active();
    expect(before.url.searchParams.get("identified")).toBe("0");
    expect(after.url.searchParams.get("distinct_id")).toBe("u1");
    expect(after.url.searchParams.get("identified")).toBe("1");
    expect(after.url.searchParams.get("traits")).toBe('{"plan":"pro"}');
    expect(JSON.parse(sessionStorage.getItem(CACHE_KEY)!).id).toBe("u1");
  });

  it.each([
    ["a network error", new TypeError("Failed to fetch")],
    ["a 500", new Response("{}", { status: 500 })],
  ])("shows nothing after %s, and asks again 30 seconds later", async (_, answer) => {
    if (answer instanceof Error) vi.mocked(fetch).mockRejectedValueOnce(answer);
    else vi.mocked(fetch).mockResolvedValueOnce(answer);
    server.lists["*"] = [campaign()];
    const now = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(now);
    const { r } = page();
    await settle();
    await fire(r);
    expect(box()).toBeNull();
    expect(vi.mocked(fetch).mock.calls).toHaveLength(1);
    clock.mockReturnValue(now + 30_000);
    await fire(r);
    expect(box()).not.toBeNull();
  });
});

describe("triggers", () => {
  it("shows a campaign on its event while the path matches", async () => {
    server.lists["*"] = [campaign({ trigger: { event: "signup_started" } })];
    const { r } = page();
    await fire(r, "$pageview");
    expect(box()).toBeNull();
    await fire(r, "signup_started");
    expect(box()).not.toBeNull();
  });

  it.each([
    ["another path", "^/checkout$"],
    ["an invalid pattern", "^/(pricing"],
  ])("does not show it on %s", async (_, pathRegex) => {
    server.lists["*"] = [campaign({ pathRegex })];
    const { r } = page();
    await expect(fire(r)).resolves.toBeUndefined();
    expect(box()).toBeNull();
  });

  it("matches the path of the event's page", async () => {
    server.lists["*"] = [campaign({ pathRegex: "^/app" })];
    const { r } = page();
    history.replaceState(null, "", "/app/home");
    await fire(r);
    expect(box()).not.toBeNull();
  });

  it("shows one campaign at a time, the others after it", async () => {
    server.lists["*"] = [campaign({ id: 1, steps: [step({ title: "First" })] }), campaign({ id: 2, steps: [step({ title: "Second" })] })];
    const { r } = page();
    await fire(r);
    await fire(r); // triggered again while shown and queued: still once each
    expect(document.querySelectorAll("strata-messages")).toHaveLength(1);
    expect(root()!.querySelector("h2")!.textContent).toBe("First");
    click("Done");
    expect(root()!.querySelector("h2")!.textContent).toBe("Second");
    click("Done");
    expect(box()).toBeNull();
  });
});

describe("a flow", () => {
  it("sends message_impression and $exposure once, when its first step renders", async () => {
    server.lists["*"] = [
      campaign({ variant: "b", exposure: { flag: "message_welcome_tour", experiment_id: 5, variant: "b" }, steps: [step(), step({ title: "Two" })] }),
    ];
    const { h, r } = page();
    await fire(r);
    click("Next");
    click("Back");
    expect(h.names()).toEqual(["message_impression"]);
    expect(h.captured[0].props).toEqual({ $message_id: 12, $message_name: "Welcome tour", $variant: "b", $step: 0 });
    expect(h.exposed).toEqual([["message_welcome_tour", 5, "b"]]);
    expect(server.posts("/api/v1/messages/12/track")).toEqual([{ distinct_id: "anon-1", event: "message_impression", variant: "b", step: 0 }]);
    expect(server.requests.find((q) => q.url.pathname.endsWith("/track"))!.url.searchParams.get("api_key")).toBe(KEY);
  });

  it.each([
    ["×", "Close", "message_dismiss"],
    ["Done", "Done", "message_complete"],
  ])("ends with %s as %s, and never shows again for this user", async (_, button, event) => {
    server.lists["*"] = [campaign()];
    const { h, r } = page();
    await fire(r);
    click(button);
    expect(box()).toBeNull();
    expect(h.names()).toEqual(["message_impression", event]);
    expect(server.posts("/api/v1/messages/12/track").map((b) => b.event)).toEqual(["message_impression", event]);
    expect(JSON.parse(localStorage.getItem(DONE_KEY)!)).toEqual(["anon-1\n12"]);
    expect(JSON.parse(sessionStorage.getItem(CACHE_KEY)!).lists["/pricing"].messages).toEqual([]);

    // Another page load, whose fresh list (another node) still offers it.
    sessionStorage.clear();
    const next = page();
    await fire(next.r);
    expect(box()).toBeNull();
    // Another user in this browser may see it.
    next.h.id = "someone-else";
    await fire(next.r);
    expect(box()).not.toBeNull();
  });

  it("dismisses on Escape and gives the focus back", async () => {
    const before = document.createElement("button");
    document.body.append(before);
    before.focus();
    server.lists["*"] = [campaign()];
    const { h, r } = page();
    await fire(r);
    expect(root()!.activeElement).toBe(box());
    key(box()!, "Escape");
    expect(box()).toBeNull();
    expect(h.names()).toEqual(["message_impression", "message_dismiss"]);
    expect(document.activeElement).toBe(before);
  });

  it("opens the CTA's URL after message_cta_click", async () => {
    const assign = vi.spyOn(location, "assign").mockImplementation(() => undefined);
    server.lists["*"] = [campaign({ steps: [step({ cta: { label: "Start", url: "/start" } })] })];
    const { h, r } = page();
    await fire(r);
    click("Start");
    expect(h.names()).toEqual(["message_impression", "message_cta_click"]);
    expect(h.flushed).toBe(1);
    expect(assign).toHaveBeenCalledWith("https://shop.example.com/start");
  });

  it("does not open a CTA URL with another scheme", async () => {
    const assign = vi.spyOn(location, "assign").mockImplementation(() => undefined);
    server.lists["*"] = [campaign({ steps: [step({ cta: { label: "Go", url: "javascript:alert(1)" } })] })];
    const { h, r } = page();
    await fire(r);
    click("Go");
    expect(h.names()).toEqual(["message_impression", "message_cta_click"]);
    expect(assign).not.toHaveBeenCalled();
  });

  it("counts impressions down and drops the campaign at 0 until the next list", async () => {
    server.lists["*"] = [campaign({ remaining: 2 })];
    let p = page();
    await fire(p.r);
    expect(JSON.parse(sessionStorage.getItem(CACHE_KEY)!).lists["/pricing"].messages[0].remaining).toBe(1);
    // The page is left with the flow open (no terminal event): shown once more.
    p = page();
    await fire(p.r);
    expect(document.querySelectorAll("strata-messages")).toHaveLength(2);
    expect(JSON.parse(sessionStorage.getItem(CACHE_KEY)!).lists["/pricing"].messages).toEqual([]);
    document.querySelectorAll("strata-messages").forEach((e) => e.remove());
    p = page();
    await fire(p.r);
    expect(box()).toBeNull();
    expect(server.active()).toHaveLength(1);
  });
});

describe("steps", () => {
  it("renders a modal as an accessible dialog, with Next, Back and the count", async () => {
    server.lists["*"] = [campaign({ steps: [step(), step({ title: "Two", cta: { label: "Go", url: "/go" } })] })];
    const { r } = page();
    await fire(r);
    const b = box()!;
    expect(b.getAttribute("role")).toBe("dialog");
    expect(b.getAttribute("aria-modal")).toBe("true");
    expect(root()!.getElementById(b.getAttribute("aria-labelledby")!)!.textContent).toBe("Welcome");
    expect(root()!.querySelector(".body")!.innerHTML).toBe("<p>Hello <strong>there</strong></p>");
    const labels = () => Array.from(root()!.querySelectorAll("button"), (x) => x.getAttribute("aria-label") || x.textContent);
    expect(labels()).toEqual(["Close", "Next"]);
    expect(root()!.querySelector(".count")!.textContent).toBe("1 of 2");
    click("Next");
    expect(labels()).toEqual(["Close", "Back", "Go", "Done"]);
  });

  it("keeps Tab inside a modal", async () => {
    server.lists["*"] = [campaign({ steps: [step(), step()] })];
    const { r } = page();
    await fire(r);
    const [close, next] = Array.from(root()!.querySelectorAll("button"));
    next.focus();
    expect(key(next, "Tab").defaultPrevented).toBe(true);
    expect(root()!.activeElement).toBe(close);
    expect(key(close, "Tab", true).defaultPrevented).toBe(true);
    expect(root()!.activeElement).toBe(next);
    document.body.focus();
    key(document.body, "Tab");
    expect(root()!.activeElement).toBe(close);
  });

  it("renders a banner at the top or bottom, without taking the focus", async () => {
    const before = document.createElement("input");
    document.body.append(before);
    before.focus();
    server.lists["*"] = [campaign({ steps: [step({ kind: "banner", placement: "bottom" })] })];
    const { r } = page();
    await fire(r);
    expect(box()!.className).toBe("box banner bottom");
    expect(box()!.getAttribute("role")).toBe("region");
    expect(document.activeElement).toBe(before);
    // Escape on the page is the page's; Escape in the banner dismisses it.
    key(before, "Escape");
    expect(box()).not.toBeNull();
    key(root()!.querySelector("button")!, "Escape");
    expect(box()).toBeNull();
  });

  it("anchors a tooltip to its element and follows it", async () => {
    const target = document.createElement("button");
    target.id = "buy";
    document.body.append(target);
    let rect = { left: 100, top: 50, width: 80, height: 20 };
    vi.spyOn(target, "getBoundingClientRect").mockImplementation(() => ({ ...rect, right: rect.left + rect.width, bottom: rect.top + rect.height }) as DOMRect);
    server.lists["*"] = [campaign({ steps: [step({ kind: "tooltip", selector: "#buy" })] })];
    const { r } = page();
    await fire(r);
    expect(box()!.style.top).toBe("82px"); // 12 px below the element
    rect = { ...rect, top: 150 };
    dispatchEvent(new Event("scroll"));
    expect(box()!.style.top).toBe("182px");
  });

  it.each([
    ["matches nothing", "#missing"],
    ["throws", "[[nope"],
  ])("skips a tooltip whose selector %s, without throwing", async (_, selector) => {
    server.lists["*"] = [
      campaign({ id: 1, steps: [step({ kind: "tooltip", selector })] }),
      campaign({ id: 2, steps: [step({ title: "One" }), step({ kind: "tooltip", selector }), step({ title: "Three" })] }),
    ];
    const { h, r } = page();
    await expect(fire(r)).resolves.toBeUndefined();
    // The first campaign has nothing to show (no impression); the second skips its tooltip.
    expect(h.captured.map((c) => c.props.$message_id)).toEqual([2]);
    expect(root()!.querySelector(".count")!.textContent).toBe("1 of 3");
    click("Next");
    expect(root()!.querySelector("h2")!.textContent).toBe("Three");
    expect(root()!.querySelector(".count")!.textContent).toBe("3 of 3");
    click("Back");
    expect(root()!.querySelector("h2")!.textContent).toBe("One");
  });

  it("asks survey questions and sends the answers with message_complete", async () => {
    server.lists["*"] = [
      campaign({
        id: 7,
        variant: "control",
        steps: [
          step({ kind: "survey", title: "Quick question", question: { id: "nps", type: "nps", prompt: "How likely…?" } }),
          step({ kind: "survey", title: "Rate", question: { id: "stars", type: "rating", prompt: "Stars", scale: 5 } }),
          step({ kind: "survey", title: "Why", question: { id: "why", type: "single", prompt: "Why?", choices: ["Price", "Speed"] } }),
          step({ kind: "survey", title: "Which", question: { id: "which", type: "multiple", prompt: "Which?", choices: ["A", "B", "C"] } }),
          step({ kind: "survey", title: "Else", question: { id: "else", type: "text", prompt: "Anything else?" } }),
        ],
      }),
    ];
    const { h, r } = page();
    await fire(r);
    const next = () => Array.from(root()!.querySelectorAll("button")).find((b) => b.textContent == "Next" || b.textContent == "Submit")!;
    const choose = (value: string) => {
      const input = Array.from(root()!.querySelectorAll("input")).find((i) => i.value == value)!;
      input.checked = !input.checked;
      input.dispatchEvent(new Event("change"));
    };
    expect(root()!.querySelectorAll("input[type=radio]")).toHaveLength(11);
    expect(root()!.querySelector("legend")!.textContent).toBe("How likely…?");
    expect(next().disabled).toBe(true);
    choose("9");
    expect(next().disabled).toBe(false);
    next().click();
    expect(root()!.querySelectorAll("input[type=radio]")).toHaveLength(5);
    choose("4");
    next().click();
    choose("Speed");
    next().click();
    expect(root()!.querySelectorAll("input[type=checkbox]")).toHaveLength(3);
    choose("A");
    choose("C");
    next().click();
    const text = root()!.querySelector("textarea")!;
    expect(text.maxLength).toBe(2000);
    expect(root()!.querySelector<HTMLLabelElement>("label.prompt")!.htmlFor).toBe(text.id);
    text.value = "Great";
    text.dispatchEvent(new Event("input"));
    expect(next().textContent).toBe("Submit");
    next().click();
    expect(h.names()).toEqual(["message_impression", "message_complete"]);
    expect(h.captured[1].props.$step).toBe(4);
    expect(server.posts("/api/v1/surveys/7/respond")).toEqual([
      {
        distinct_id: "anon-1",
        variant: "control",
        answers: [
          { questionId: "nps", value: 9 },
          { questionId: "stars", value: 4 },
          { questionId: "why", value: "Speed" },
          { questionId: "which", value: ["A", "C"] },
          { questionId: "else", value: "Great" },
        ],
      },
    ]);
  });

  it("keeps an answer when going back", async () => {
    server.lists["*"] = [
      campaign({
        steps: [
          step({ kind: "survey", question: { id: "stars", type: "rating", prompt: "Stars", scale: 10 } }),
          step({ kind: "modal", title: "Thanks" }),
        ],
      }),
    ];
    const { r } = page();
    await fire(r);
    const input = Array.from(root()!.querySelectorAll("input")).find((i) => i.value == "7")!;
    input.checked = true;
    input.dispatchEvent(new Event("change"));
    click("Next");
    click("Back");
    expect(root()!.querySelector<HTMLInputElement>("input:checked")!.value).toBe("7");
    click("Close");
    // A dismissed survey still reports what was answered.
    expect(server.posts("/api/v1/surveys/12/respond")).toEqual([{ distinct_id: "anon-1", variant: "control", answers: [{ questionId: "stars", value: 7 }] }]);
  });

  it("isolates its styles in a shadow root, and has no transitions with reduced motion", async () => {
    server.lists["*"] = [campaign()];
    const { r } = page();
    await fire(r);
    const host = document.querySelector("strata-messages")!;
    expect(host.hasAttribute("data-strata-no-capture")).toBe(true);
    expect((host as HTMLElement).style.zIndex).toBe("2147483647");
    expect((host as HTMLElement).style.getPropertyPriority("z-index")).toBe("important");
    // A constructed stylesheet, which a page's style-src cannot block, and no <style>, which it can.
    expect(root()!.querySelector("style")).toBeNull();
    const sheets = root()!.adoptedStyleSheets;
    expect(sheets).toHaveLength(1);
    const css = Array.from(sheets[0].cssRules, (r) => r.cssText).join("\n");
    expect(css).toContain(":host { all: initial; }");
    expect(css).toMatch(/@media \(prefers-reduced-motion:reduce\) \{[^}]*animation: none !important; transition: none !important;/);
    expect(document.querySelector(".box")).toBeNull(); // the page cannot select it
  });

  it("falls back to a <style> with the page's nonce where constructable stylesheets are missing", async () => {
    vi.stubGlobal("CSSStyleSheet", undefined);
    server.lists["*"] = [campaign()];
    const h = new FakeHost();
    (h as { nonce?: string }).nonce = "n0nce";
    const { r } = page(h);
    await fire(r);
    const style = root()!.querySelector("style")!;
    expect(style.nonce).toBe("n0nce");
    expect(style.textContent).toContain(":host{all:initial}");
    expect(root()!.adoptedStyleSheets).toHaveLength(0);
  });
});

describe("preview", () => {
  it("renders any step without fetching or tracking, and reports its buttons", () => {
    const actions: string[] = [];
    const handle = preview(step({ cta: { label: "Go", url: "/go" } }), { index: 1, count: 3, onAction: (a) => actions.push(a) });
    expect(box()!.getAttribute("role")).toBe("dialog");
    expect(root()!.querySelector(".count")!.textContent).toBe("2 of 3");
    click("Back");
    click("Go");
    click("Next");
    click("Close");
    expect(actions).toEqual(["back", "cta", "next", "close"]);
    expect(box()).not.toBeNull();
    expect(server.requests).toEqual([]);

    // A new preview replaces it; a tooltip without its element sits in the middle.
    preview(step({ kind: "tooltip", selector: "#nothing" }));
    expect(document.querySelectorAll("strata-messages")).toHaveLength(1);
    expect(box()!.className).toBe("box tooltip");
    handle.close(); // the old handle no longer removes the new preview
    expect(box()).not.toBeNull();
    preview(step({ kind: "survey", question: { id: "q", type: "text", prompt: "Why?" } }), { answer: "Because" }).close();
    expect(box()).toBeNull();
  });
});
