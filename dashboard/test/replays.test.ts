import { describe, expect, it } from "vitest";
import { fitScale, legend, marks, withoutInlineHandlers } from "../src/pages/Replay";
import { duration, replayHref } from "../src/pages/Replays";
import { LEAD_MS, MergedSession, clock, momentOffset, parseMoment, type RREvent, type WindowEvent } from "../src/replay";

describe("replay timeline", () => {
  it("marks page views, clicks, captured events and errors at their offsets", () => {
    const t = 1_700_000_000_000;
    const got = marks([
      { type: 4, timestamp: t, data: { href: "https://shop.example/" } },
      { type: 2, timestamp: t + 5, data: {} },
      { type: 3, timestamp: t + 1000, data: { source: 2, type: 2 } },
      { type: 3, timestamp: t + 1100, data: { source: 2, type: 1 } },
      { type: 3, timestamp: t + 1200, data: { source: 1 } },
      { type: 5, timestamp: t + 2000, data: { tag: "signup" } },
      { type: 5, timestamp: t + 2100, data: { tag: "$pageview" } },
      { type: 5, timestamp: t + 3000, data: { tag: "$exception", payload: { message: "boom" } } },
    ]);
    expect(got).toEqual([
      { kind: "page", offset: 0, label: "https://shop.example/", shows: 6 },
      { kind: "click", offset: 1000, label: "Click", shows: 1001 },
      { kind: "event", offset: 2000, label: "signup", shows: 2001 },
      { kind: "error", offset: 3000, label: "boom", shows: 3001 },
    ]);
    expect(marks([])).toEqual([]);
  });

  it("names every kind of mark in the legend", () => {
    expect(legend.map(([k]) => k)).toEqual(["page", "click", "event", "error"]);
  });

  it("scales a recorded page down to the stage's width, never up", () => {
    expect(fitScale(350, 1280)).toBeCloseTo(350 / 1280);
    expect(fitScale(1000, 800)).toBe(1);
    expect(fitScale(0, 1280)).toBe(1);
    expect(fitScale(350, 0)).toBe(1);
  });

  it("writes durations", () => {
    expect([duration(4400), duration(65_000), duration(3_725_000)]).toEqual(["4 s", "1 min 5 s", "1 h 2 min"]);
  });

  it("drops inline event handlers from snapshots and mutations, and nothing else", () => {
    const t = 1_700_000_000_000;
    const events = [
      {
        type: 2,
        timestamp: t,
        data: {
          node: {
            type: 0,
            childNodes: [
              {
                type: 2,
                tagName: "body",
                attributes: { onload: "init()", class: "page" },
                childNodes: [
                  { type: 2, tagName: "button", attributes: { onclick: "go()", ONMOUSEOVER: "x()", "data-on": "kept", id: "go" }, childNodes: [{ type: 3, textContent: "onclick" }] },
                  { type: 2, tagName: "img", attributes: { src: "a.png", onerror: "oops()" }, childNodes: [] },
                ],
              },
            ],
          },
        },
      },
      {
        type: 3,
        timestamp: t + 1,
        data: {
          source: 0,
          adds: [{ parentId: 1, node: { type: 2, tagName: "a", attributes: { href: "/x", onfocus: "f()" }, childNodes: [{ type: 2, tagName: "span", attributes: { onblur: "b()" } }] } }],
          attributes: [{ id: 4, attributes: { onclick: "again()", class: "on", onload: null } }],
          texts: [],
          removes: [],
        },
      },
      { type: 3, timestamp: t + 2, data: { source: 5, attributes: { onclick: "an input event is not a mutation" } } },
    ];
    const out = withoutInlineHandlers(events);
    expect(out).toBe(events);
    const body = events[0].data.node!.childNodes![0];
    expect(body.attributes).toEqual({ class: "page" });
    expect(body.childNodes![0].attributes).toEqual({ "data-on": "kept", id: "go" });
    expect(body.childNodes![0].childNodes![0]).toEqual({ type: 3, textContent: "onclick" });
    expect(body.childNodes![1].attributes).toEqual({ src: "a.png" });
    const added = events[1].data.adds![0].node;
    expect(added.attributes).toEqual({ href: "/x" });
    expect(added.childNodes![0].attributes).toEqual({});
    expect(events[1].data.attributes).toEqual([{ id: 4, attributes: { class: "on" } }]);
    expect(events[2].data.attributes).toEqual({ onclick: "an input event is not a mutation" });
  });
});

describe("a session of several page loads", () => {
  const t = 1_700_000_000_000;
  /** page returns a window's events: its meta and full snapshot at `at`, then a click at each of clicks. */
  const page = (windowId: string, at: number, clicks: number[]): WindowEvent[] =>
    [
      { type: 4, timestamp: at, data: { href: `https://shop.example/${windowId}` } },
      { type: 2, timestamp: at, data: {} },
      ...clicks.map((c) => ({ type: 3, timestamp: c, data: { source: 2, type: 2 } })),
    ].map((event) => ({ windowId, event }));
  const times = (events: RREvent[]) => events.map((e) => `${e.type}@${e.timestamp - t}`);

  it("plays windows one after another in time order, as they arrive page by page", () => {
    const s = new MergedSession();
    const first = s.add(page("a", t, [t + 1000, t + 2000]));
    expect(first.rebuilt).toBe(false);
    expect(times(first.added)).toEqual(["4@0", "2@0", "3@1000", "3@2000"]);
    const second = s.add(page("b", t + 5000, [t + 6000]));
    expect(second.rebuilt).toBe(false);
    expect(times(second.added)).toEqual(["4@5000", "2@5000", "3@6000"]);
    const third = s.add(page("c", t + 9000, [t + 9500]));
    expect(times(s.playable)).toEqual(["4@0", "2@0", "3@1000", "3@2000", "4@5000", "2@5000", "3@6000", "4@9000", "2@9000", "3@9500"]);
    expect(third.rebuilt).toBe(false);
    expect(s.last).toBe(t + 9500);
    // The timeline marks each page load at its offset from the session's start.
    expect(marks(s.playable, t).filter((m) => m.kind === "page").map((m) => m.offset)).toEqual([0, 5000, 9000]);
  });

  it("keeps a meta event before its full snapshot when they share a timestamp", () => {
    const s = new MergedSession();
    s.add(page("a", t, []).concat(page("b", t, [])));
    expect(s.playable.map((e) => e.type)).toEqual([4, 2, 4, 2]);
  });

  it("plays, of overlapping windows, the one whose full snapshot came last, and rebuilds when an earlier window arrives late", () => {
    const s = new MergedSession();
    // Window a (the API's first, by its first chunk) runs 0–10 s; b is opened
    // at 4 s and takes the screen until a is shown again with a full snapshot at 8 s.
    s.add(page("a", t, [t + 1000, t + 5000, t + 7000]).concat([{ windowId: "a", event: { type: 2, timestamp: t + 8000, data: {} } }, { windowId: "a", event: { type: 3, timestamp: t + 9000, data: { source: 2, type: 2 } } }]));
    const late = s.add(page("b", t + 4000, [t + 4500, t + 8500]));
    expect(late.rebuilt).toBe(true);
    expect(late.added).toEqual(s.playable);
    // a's clicks at 5 and 7 s, while b was on screen, are left out; so is b's at 8.5 s, after a came back.
    expect(times(s.playable)).toEqual(["4@0", "2@0", "3@1000", "4@4000", "2@4000", "3@4500", "2@8000", "3@9000"]);
  });

  it("adds nothing for an empty batch", () => {
    const s = new MergedSession();
    expect(s.add([])).toEqual({ rebuilt: false, added: [] });
    expect(s.last).toBe(-Infinity);
  });
});

describe("the player's times", () => {
  it("writes m:ss, and h:mm:ss from an hour", () => {
    expect([0, 999, 1000, 61_500, 599_999, 3_599_999, 3_600_000, 3_725_000, 36_061_000, -5].map(clock)).toEqual([
      "0:00", "0:00", "0:01", "1:01", "9:59", "59:59", "1:00:00", "1:02:05", "10:01:01", "0:00",
    ]);
  });

  it("starts a link's moment two seconds before it, within the session", () => {
    const start = 1_700_000_000_000;
    expect(momentOffset(start + 30_000, start, 60_000)).toBe(30_000 - LEAD_MS);
    expect(momentOffset(start + 1000, start, 60_000)).toBe(0);
    expect(momentOffset(start - 5000, start, 60_000)).toBe(0);
    expect(momentOffset(start + 90_000, start, 60_000)).toBe(60_000);
    expect(momentOffset(undefined, start, 60_000)).toBe(0);
  });

  it("reads t as whole milliseconds since 1970, and nothing else", () => {
    expect(parseMoment("1700000030000")).toBe(1_700_000_030_000);
    expect([null, "", "-5", "1.5", "abc", "1e12", "9".repeat(16)].map(parseMoment)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it("links to a session at an event's moment, or at its start", () => {
    expect(replayHref(3, "s 1")).toBe("/replays/s%201?product=3");
    expect(replayHref(3, "s1", "2026-11-23T10:58:30.250Z")).toBe(`/replays/s1?product=3&t=${Date.parse("2026-11-23T10:58:30.250Z")}`);
    expect(replayHref(3, "s1", 1_700_000_000_000)).toBe("/replays/s1?product=3&t=1700000000000");
    expect(replayHref(3, "s1", "not a time")).toBe("/replays/s1?product=3");
  });
});
