import { describe, expect, it } from "vitest";
import { nodeOfKey, pathsFromSearch, pathsSearch, sankeyData } from "../src/paths";
import type { PathsResult } from "../src/types";

describe("paths in the URL", () => {
  it("reads a link's query and writes it back with defaults left out", () => {
    const d = pathsFromSearch(new URLSearchParams("kind=event&end=signup&depth=3&branches=8"));
    expect(d).toEqual({ kind: "event", anchor: "end", name: "signup", depth: 3, branches: 8 });
    expect(pathsSearch(d)).toEqual({ kind: "event", start: null, end: "signup", depth: "3", branches: "8" });
    expect(pathsSearch(pathsFromSearch(new URLSearchParams("")))).toEqual({ kind: null, start: null, end: null, depth: null, branches: null });
  });
  it("falls back to the defaults for values out of range", () => {
    expect(pathsFromSearch(new URLSearchParams("kind=click&depth=9&branches=0"))).toEqual({
      kind: "pageview",
      anchor: "none",
      name: "",
      depth: 4,
      branches: 5,
    });
  });
});

const forward: PathsResult = {
  kind: "pageview",
  backward: false,
  users: 3,
  nodes: [
    { step: 1, name: "/pricing", other: false, users: 3, dropOff: 1 },
    { step: 2, name: "/docs", other: false, users: 1, dropOff: 1 },
    { step: 2, name: "", other: true, users: 1, dropOff: 0 },
    { step: 3, name: "/welcome", other: false, users: 1, dropOff: 1 },
  ],
  edges: [
    { from: 0, to: 1, users: 1 },
    { from: 0, to: 2, users: 1 },
    { from: 2, to: 3, users: 1 },
  ],
};

describe("sankeyData", () => {
  it("keys nodes by their place, labels the grouped node Other, and puts step 1 on the left", () => {
    const s = sankeyData(forward);
    expect(s.labels).toEqual({ n0: "/pricing", n1: "/docs", n2: "Other", n3: "/welcome" });
    expect(s.columns).toEqual({ n0: 0, n1: 1, n2: 1, n3: 2 });
    expect(s.flows).toEqual([
      { from: "n0", to: "n1", flow: 1 },
      { from: "n0", to: "n2", flow: 1 },
      { from: "n2", to: "n3", flow: 1 },
    ]);
    expect(nodeOfKey("n12")).toBe(12);
    expect(nodeOfKey("x")).toBeNull();
  });
  it("runs a backward answer right to left: the end node last, flows toward it", () => {
    const back: PathsResult = { ...forward, backward: true };
    const s = sankeyData(back);
    expect(s.columns).toEqual({ n0: 2, n1: 1, n2: 1, n3: 0 });
    expect(s.flows[0]).toEqual({ from: "n1", to: "n0", flow: 1 });
    expect(s.flows[2]).toEqual({ from: "n3", to: "n2", flow: 1 });
  });
});
