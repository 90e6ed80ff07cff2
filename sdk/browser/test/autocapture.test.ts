// Autocapture: page views (also in SPAs), clicks and form submits, and what is
// never read.
import { describe, expect, it, vi } from "vitest";
import { clean, selector } from "../src/autocapture";
import { FLUSH_DELAY } from "../src/queue";
import { net, start } from "./helpers";

async function sent() {
  await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
  return net.events();
}

function click(el: Element) {
  el.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
}

describe("page views", () => {
  it("sends $pageview on init with url", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    const [pv] = await sent();
    expect(pv.event_name).toBe("$pageview");
    expect(pv.url).toBe("https://shop.example.com/pricing?plan=pro");
  });

  it("sends nothing by itself with autocapture off", async () => {
    vi.useFakeTimers();
    start({ autocapture: false });
    history.pushState(null, "", "/next");
    document.body.innerHTML = "<button>Buy</button>";
    click(document.querySelector("button")!);
    expect(await sent()).toEqual([]);
  });

  it("sends $pageview on SPA navigation with the previous page as referrer", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    history.pushState({}, "", "/checkout");
    history.replaceState({}, "", "/checkout?step=2");
    history.replaceState({ scroll: 1 }, "", "/checkout?step=2"); // same page: no view
    history.pushState({}, "", "/checkout?step=2#summary"); // hash only: no view
    history.pushState({}, "", "/done");
    history.back();
    await vi.advanceTimersByTimeAsync(50); // popstate is asynchronous
    const views = (await sent()).filter((e) => e.event_name == "$pageview");
    const base = "https://shop.example.com";
    expect(views.map((e) => [e.url, e.referrer])).toEqual([
      [base + "/pricing?plan=pro", undefined],
      [base + "/checkout", base + "/pricing?plan=pro"],
      [base + "/checkout?step=2", base + "/checkout"],
      [base + "/done", base + "/checkout?step=2"],
      [base + "/checkout?step=2#summary", base + "/done"],
    ]);
  });

  it("keeps history.pushState working and wraps it only once", () => {
    start({ autocapture: true });
    start({ autocapture: true });
    history.pushState({ a: 1 }, "", "/x");
    expect(location.pathname).toBe("/x");
    expect(history.state).toEqual({ a: 1 });
  });

  it("gives every event the page's url and referrer", async () => {
    vi.useFakeTimers();
    const s = start({ autocapture: true });
    history.pushState({}, "", "/cart");
    s.track("cart_viewed");
    const e = (await sent()).at(-1)!;
    expect([e.url, e.referrer]).toEqual(["https://shop.example.com/cart", "https://shop.example.com/pricing?plan=pro"]);
  });
});

describe("clicks", () => {
  it("captures a link with tag, trimmed text, absolute href and selector", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    document.body.innerHTML = `<nav id="top"><ul class="menu main extra"><li><a class="nav-link" href="/docs?x=1">
        Read   the <b>docs</b>
      </a></li></ul></nav>`;
    click(document.querySelector("b")!);
    const c = (await sent()).find((e) => e.event_name == "$click")!;
    expect(c.properties).toMatchObject({
      $tag: "a",
      $text: "Read the docs",
      $href: "https://shop.example.com/docs?x=1",
      $selector: "ul.menu.main > li > a.nav-link",
    });
    expect(c.url).toBe("https://shop.example.com/pricing?plan=pro");
  });

  it("captures buttons and the element role=button, stopping the selector at an id", async () => {
    vi.useFakeTimers();
    start();
    document.body.innerHTML = `<div id="plans"><button class="cta"><span>Buy</span></button></div>
      <div role="button" id="fake">Go</div>`;
    start({ autocapture: true });
    click(document.querySelector("span")!);
    click(document.querySelector("#fake")!);
    const clicks = (await sent()).filter((e) => e.event_name == "$click");
    expect(clicks.map((e) => [e.properties.$tag, e.properties.$text, e.properties.$selector])).toEqual([
      ["button", "Buy", "div#plans > button.cta"],
      ["div", "Go", "div#fake"],
    ]);
    expect(clicks[0].properties).not.toHaveProperty("$href");
  });

  it("trims text to 255 characters without splitting one", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    document.body.innerHTML = `<button>${"😀".repeat(300)}</button>`;
    click(document.querySelector("button")!);
    const text = (await sent()).find((e) => e.event_name == "$click")!.properties.$text as string;
    expect(Array.from(text)).toHaveLength(255);
    expect(text).toBe("😀".repeat(255));
    expect(clean("  a \n\t b  ")).toBe("a b");
  });

  it("ignores clicks on other elements", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    document.body.innerHTML = `<div><p>text</p><input type="text" value="x"></div>`;
    click(document.querySelector("p")!);
    click(document.querySelector("input")!);
    expect((await sent()).filter((e) => e.event_name == "$click")).toEqual([]);
  });

  it("never reads input values, also of submit buttons", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    document.body.innerHTML = `<form><input type="submit" value="Pay SECRET-LABEL"><input name="card" value="4242-SECRET"></form>`;
    click(document.querySelector("input[type=submit]")!);
    const events = await sent();
    const c = events.find((e) => e.event_name == "$click")!;
    expect(c.properties).toMatchObject({ $tag: "input", $selector: "form > input" });
    expect(c.properties).not.toHaveProperty("$text");
    expect(JSON.stringify(events)).not.toContain("SECRET");
  });

  it("ignores everything inside data-strata-no-capture", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    document.body.innerHTML = `<section data-strata-no-capture><div><a href="/private">Private</a>
      <form id="f"><button>Send</button></form></div></section>`;
    click(document.querySelector("a")!);
    document.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    expect((await sent()).map((e) => e.event_name)).toEqual(["$pageview"]);
  });
});

describe("form submits", () => {
  it("captures id, name and action, never field values", async () => {
    vi.useFakeTimers();
    start({ autocapture: true });
    document.body.innerHTML = `<form id="signup" name="signup_form" action="/api/signup" method="post">
      <input name="email" value="person@SECRET.example"><input type="password" name="pw" value="hunter2-SECRET">
      <input name="action" value="SECRET-shadow"><textarea name="note">SECRET note</textarea></form>`;
    const form = document.querySelector("form")!;
    form.addEventListener("submit", (e) => e.preventDefault());
    form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    const events = await sent();
    const f = events.find((e) => e.event_name == "$form_submit")!;
    expect(f.properties).toMatchObject({
      $form_id: "signup",
      $form_name: "signup_form",
      $form_action: "https://shop.example.com/api/signup",
      $selector: "form#signup",
    });
    expect(JSON.stringify(events)).not.toContain("SECRET");
    expect(JSON.stringify(events)).not.toContain("hunter2");
  });
});

describe("selector", () => {
  it("escapes odd class names and ids", () => {
    document.body.innerHTML = `<div class="md:flex w-1/2"><a id="1st">x</a><i class="a b c">y</i></div>`;
    expect(selector(document.querySelector("a")!)).toBe("a#\\31 st");
    expect(selector(document.querySelector("i")!)).toBe("div.md\\:flex.w-1\\/2 > i.a.b");
  });
});
