import { describe, expect, it } from "vitest";
import { fitScale, legend, marks, withoutInlineHandlers } from "../src/pages/Replay";
import { duration } from "../src/pages/Replays";

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
      { kind: "page", offset: 0, label: "https://shop.example/" },
      { kind: "click", offset: 1000, label: "Click" },
      { kind: "event", offset: 2000, label: "signup" },
      { kind: "error", offset: 3000, label: "boom" },
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
