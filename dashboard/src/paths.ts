// The Paths page's logic, kept apart from rendering so that it is tested
// on its own: the query a URL names, and the answer as Sankey flows.
import type { PathNode, PathsResult } from "./types";
import type { QueryPatch } from "./router";

/** PathsDraft is what the page's form sets: the query a link names. */
export interface PathsDraft {
  kind: "pageview" | "event";
  /** anchor says whether name is the start, the end, or unused. */
  anchor: "none" | "start" | "end";
  name: string;
  depth: number;
  branches: number;
}

export const pathDepth = { min: 2, max: 5, default: 4 };
export const pathBranches = { min: 1, max: 20, default: 5 };

/**
 * pathsFromSearch reads the paths a URL names: ?kind=event, ?start= or
 * ?end= (the anchor), ?depth=, ?branches=; defaults for what is absent or
 * invalid.
 */
export function pathsFromSearch(search: URLSearchParams): PathsDraft {
  const int = (name: string, l: { min: number; max: number; default: number }) => {
    const n = Number(search.get(name));
    return Number.isInteger(n) && n >= l.min && n <= l.max ? n : l.default;
  };
  const start = search.get("start");
  const end = search.get("end");
  return {
    kind: search.get("kind") === "event" ? "event" : "pageview",
    anchor: start ? "start" : end ? "end" : "none",
    name: start || end || "",
    depth: int("depth", pathDepth),
    branches: int("branches", pathBranches),
  };
}

/** pathsSearch is the query-string patch naming a draft, defaults left out. */
export function pathsSearch(d: PathsDraft): QueryPatch {
  return {
    kind: d.kind === "event" ? "event" : null,
    start: d.anchor === "start" && d.name ? d.name : null,
    end: d.anchor === "end" && d.name ? d.name : null,
    depth: d.depth !== pathDepth.default ? String(d.depth) : null,
    branches: d.branches !== pathBranches.default ? String(d.branches) : null,
  };
}

/** nodeLabel is how a node is shown: its name, or "Other" for the grouped node. */
export function nodeLabel(n: PathNode): string {
  if (n.other) return "Other";
  return n.name;
}

/** Flow is one band of the Sankey chart, between two node keys. */
export interface Flow {
  from: string;
  to: string;
  flow: number;
}

/**
 * sankeyData turns an answer into the chart's flows: each node is keyed by
 * its place in the answer (names repeat across steps), labelled with its
 * name, and placed in the column of its step, step 1 on the left, or on
 * the right for paths run back from an end, so that time runs left to
 * right either way. An edge of a backward answer flows from its `to` (the
 * earlier node) to its `from`.
 */
export function sankeyData(r: PathsResult): { flows: Flow[]; labels: Record<string, string>; columns: Record<string, number> } {
  const key = (i: number) => `n${i}`;
  const steps = Math.max(0, ...r.nodes.map((n) => n.step));
  const labels: Record<string, string> = {};
  const columns: Record<string, number> = {};
  r.nodes.forEach((n, i) => {
    labels[key(i)] = nodeLabel(n);
    columns[key(i)] = r.backward ? steps - n.step : n.step - 1;
  });
  const flows = r.edges.map((e) =>
    r.backward ? { from: key(e.to), to: key(e.from), flow: e.users } : { from: key(e.from), to: key(e.to), flow: e.users },
  );
  return { flows, labels, columns };
}

/** nodeOfKey reads a node's place back from its chart key. */
export function nodeOfKey(key: string): number | null {
  const m = /^n(\d+)$/.exec(key);
  return m ? Number(m[1]) : null;
}
