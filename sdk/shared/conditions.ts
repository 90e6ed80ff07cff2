/**
 * Targeting conditions of flags (docs/flags.md, "Targeting"): the same rule as
 * the Go server's `flags.Holds` (internal/flags/conditions.go), which message
 * audiences use too. The shared vectors (sdk/browser/test/assignment.json,
 * "targeting") pin the two to the same answers.
 */

/** A targeting condition as `GET /api/v1/config` serves it. */
export interface Condition {
  /** "trait" or left out; a condition of another type fails. */
  type?: string;
  trait: string;
  op: string;
  value: string;
}

/** A user's properties: the traits passed to identify, or the caller's. */
export type Properties = Readonly<Record<string, unknown>>;

/** targeted reports whether every condition holds for these properties; none target everyone. */
export function targeted(conditions: readonly Condition[] | null | undefined, props: Properties | undefined): boolean {
  for (const c of conditions || []) {
    if (c.type != null && c.type !== "" && c.type !== "trait") return false;
    if (!holds(c.trait, c.op, c.value, props || {})) return false;
  }
  return true;
}

/**
 * holds evaluates one trait condition. A missing (or null) property fails every
 * operator but neq; eq and neq compare the property's text exactly, contains
 * ignoring case, gt and lt as decimal numbers; exists holds for any value.
 */
export function holds(trait: string, op: string, value: string, props: Properties): boolean {
  const v = Object.prototype.hasOwnProperty.call(props, trait) ? props[trait] : undefined;
  if (v === undefined || v === null) return op === "neq";
  const text = traitText(v);
  switch (op) {
    case "exists":
      return true;
    case "eq":
      return text === value;
    case "neq":
      return text !== value;
    case "contains":
      return text.toLowerCase().includes(String(value).toLowerCase());
    case "gt":
    case "lt": {
      const x = decimal(text);
      const y = decimal(value);
      if (x === undefined || y === undefined) return false;
      return op === "gt" ? x > y : x < y;
    }
  }
  return false;
}

const DECIMAL = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/** decimal reads a finite decimal number as Go's flags.Number does (no hex, no Infinity, no spaces). */
export function decimal(s: string): number | undefined {
  if (!DECIMAL.test(s)) return undefined;
  const x = Number(s);
  return Number.isFinite(x) ? x : undefined;
}

/**
 * traitText is a property's value as conditions compare it, as Go writes it: a
 * string as is, a number in its shortest form without an exponent (Go's
 * FormatFloat(x, 'f', -1, 64)), a boolean as true or false, anything else as Go's
 * JSON (keys sorted, <, > and & escaped).
 */
export function traitText(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return numberText(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  return goJSON(v);
}

/** numberText writes x without an exponent, with the shortest digits that read back as x. */
export function numberText(x: number): string {
  if (Object.is(x, -0)) return "-0";
  if (!Number.isFinite(x)) return goJSON(null);
  const s = String(x);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[2] + (m[3] || "");
  const point = 1 + Number(m[4]); // digits before the point
  if (point <= 0) return m[1] + "0." + "0".repeat(-point) + digits;
  if (point >= digits.length) return m[1] + digits + "0".repeat(point - digits.length);
  return m[1] + digits.slice(0, point) + "." + digits.slice(point);
}

/** goJSON is JSON as Go's encoding/json writes a decoded value: keys sorted, HTML characters escaped. */
function goJSON(v: unknown): string {
  if (v === null || v === undefined || typeof v === "function" || typeof v === "symbol") return "null";
  if (typeof v === "number") return Number.isFinite(v) ? JSON.stringify(v) : "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "string") return goString(v);
  if (Array.isArray(v)) return "[" + v.map(goJSON).join(",") + "]";
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort((a, b) => (utf8Less(a, b) ? -1 : utf8Less(b, a) ? 1 : 0));
    return "{" + keys.map((k) => goString(k) + ":" + goJSON(o[k])).join(",") + "}";
  }
  return "null";
}

function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

/** utf8Less orders strings by their UTF-8 bytes, as Go sorts map keys (code points, not UTF-16 units). */
function utf8Less(a: string, b: string): boolean {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < x.length && i < y.length; i++) {
    const p = x[i].codePointAt(0)!;
    const q = y[i].codePointAt(0)!;
    if (p !== q) return p < q;
  }
  return x.length < y.length;
}
