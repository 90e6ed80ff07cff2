import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LiveVisitors } from "../src/components/LiveVisitors";
import { mount } from "./helpers";

// A fetch whose answers the test gives by hand, one per request, in order.
function pendingFetch() {
  const asked: { url: string; answer: (visitors: number) => void }[] = [];
  vi.stubGlobal("fetch", (url: string) => {
    return new Promise<Response>((resolve) => {
      asked.push({
        url,
        answer: (visitors) =>
          resolve(new Response(JSON.stringify({ visitors, windowSeconds: 300, at: "2026-11-27T22:00:00Z" }), { status: 200 })),
      });
    });
  });
  return asked;
}

let visibility: DocumentVisibilityState = "visible";
function setVisibility(v: DocumentVisibilityState) {
  visibility = v;
  document.dispatchEvent(new Event("visibilitychange"));
}

// advance moves the fake clock and lets the promises and renders it
// causes run.
async function advance(ms: number) {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

describe("LiveVisitors", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    visibility = "visible";
  });

  it("refreshes every ten seconds, one request at a time, and not while the tab is hidden", async () => {
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => visibility });
    const asked = pendingFetch();
    const root = await mount(<LiveVisitors product={7} env="test" />);
    // Faked after mounting, which settles on real timers; every timer
    // the component sets from here on is on the fake clock.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const text = () => root.querySelector("[data-testid=live-count]")?.textContent;
    const region = root.querySelector("[aria-live=polite]");
    expect(region?.getAttribute("role")).toBe("status");
    expect(asked.length).toBe(1);
    expect(asked[0]!.url).toBe("/api/v1/query/live?product=7&env=test");
    expect(text()).toBe("Counting visitors now…");

    // A slow server: nothing more is asked while the first request waits.
    await advance(35_000);
    expect(asked.length).toBe(1);
    await act(async () => asked[0]!.answer(3));
    await advance(0);
    expect(text()).toBe("3 visitors now");

    // The next request goes ten seconds after the answer.
    await advance(9_900);
    expect(asked.length).toBe(1);
    await advance(200);
    expect(asked.length).toBe(2);
    await act(async () => asked[1]!.answer(1));
    await advance(0);
    expect(text()).toBe("1 visitor now");

    // Hidden: nothing is asked, however long.
    setVisibility("hidden");
    await advance(120_000);
    expect(asked.length).toBe(2);
    // Shown again: asked at once, then every ten seconds.
    setVisibility("visible");
    await advance(0);
    expect(asked.length).toBe(3);
    await act(async () => asked[2]!.answer(12));
    await advance(10_000);
    expect(text()).toBe("12 visitors now");
    expect(asked.length).toBe(4);
  });
});
