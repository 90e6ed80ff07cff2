/**
 * Targeting conditions of flags (docs/flags.md, "Targeting"): the same rule as
 * the Go server's `flags.Holds` (internal/flags/conditions.go), which message
 * audiences use too, and `flags.InCohort`. The shared vectors (sdk/browser/test/assignment.json,
 * "targeting") pin the two to the same answers.
 */

/** A targeting condition as `GET /api/v1/config` serves it. */
export interface Condition {
  /** "trait" or left out, or "cohort"; a condition of another type fails. */
  type?: string;
  /** The property of a trait condition. */
  trait?: string;
  /** The cohort of a cohort condition. */
  cohortId?: number;
  op: string;
  value: string;
}

/** A user's properties: the traits passed to identify, or the caller's. */
export type Properties = Readonly<Record<string, unknown>>;

/**
 * A user's memberships as `GET /api/v1/config?distinct_id=` gives them: for each
 * cohort a flag names, by id, whether the user is a member. A cohort left out is
 * unknown, and both of its conditions fail.
 */
export type Cohorts = Readonly<Record<string, boolean>>;

/**
 * targeted reports whether every condition holds for a user with these properties
 * and cohorts; none target everyone.
 */
export function targeted(conditions: readonly Condition[] | null | undefined, props: Properties | undefined, cohorts?: Cohorts | null): boolean {
  for (const c of conditions || []) {
    // A trait condition always has its trait (the server refuses one without).
    if (!(!c.type || c.type == "trait" ? holds(c.trait as string, c.op, c.value, props || {}) : c.type == "cohort" && inCohort(c.cohortId, c.op, cohorts))) return false;
  }
  return true;
}

/** own reads an object's own property only, never one of its prototype's. */
const own = (o: object, k: string): unknown => ({}.hasOwnProperty.call(o, k) ? (o as Record<string, unknown>)[k] : undefined);

/**
 * inCohort evaluates one cohort condition: in holds for a member, not_in for a
 * user known not to be one; a cohort whose membership is unknown (or not a
 * boolean) fails both, as does any other operator.
 */
export function inCohort(id: number | undefined, op: string, cohorts: Cohorts | null | undefined): boolean {
  const m = cohorts && own(cohorts, String(id));
  return op == "in" ? m === true : op == "not_in" && m === false;
}

/**
 * holds evaluates one trait condition. A missing (or null) property fails every
 * operator but neq. eq and neq compare the property's text exactly, contains
 * ignoring case, gt and lt as decimal numbers; exists holds for any value.
 */
export function holds(trait: string, op: string, value: string, props: Properties): boolean {
  const v = own(props, trait);
  if (v == null) return op == "neq";
  const text = traitText(v);
  if (op == "exists") return true;
  if (op == "eq") return text === value;
  if (op == "neq") return text !== value;
  if (op == "contains") return text.toLowerCase().includes(value.toLowerCase());
  const x = decimal(text);
  const y = decimal(value);
  return x != null && y != null && ((op == "gt" && x > y) || (op == "lt" && x < y));
}

/** decimal reads a finite decimal number as Go's flags.Number does (no hex, no Infinity, no spaces). */
export function decimal(s: string): number | undefined {
  const x = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : NaN;
  return isFinite(x) ? x : undefined;
}

/**
 * traitText is a property's value as conditions compare it, as Go writes it: a
 * string as is, a number in its shortest form without an exponent (Go's
 * FormatFloat(x, 'f', -1, 64)), a boolean as true or false, anything else as
 * Go's JSON of it (goJSON).
 */
export function traitText(v: unknown): string {
  if (typeof v == "string") return v;
  if (typeof v != "number") return goJSON(v);
  if (Object.is(v, -0)) return "-0";
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(v));
  if (!m) return String(v);
  const digits = m[2] + (m[3] || "");
  const point = 1 + +m[4]; // digits before the point
  return (
    m[1] +
    (point <= 0
      ? "0." + "0".repeat(-point) + digits
      : point >= digits.length
        ? digits + "0".repeat(point - digits.length)
        : digits.slice(0, point) + "." + digits.slice(point))
  );
}

/**
 * goJSON is JSON as Go's encoding/json writes a decoded value: object keys
 * sorted (by UTF-16 units here, by UTF-8 bytes in Go: the two differ only
 * between keys beyond U+FFFF and keys in U+E000–U+FFFF), and <, >, &, U+2028
 * and U+2029 in strings escaped as \u00XX.
 */
function goJSON(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(goJSON).join(",") + "]";
  if (v && typeof v == "object") {
    const o = v as Record<string, unknown>;
    return "{" + Object.keys(o).sort().map((k) => goJSON(k) + ":" + goJSON(o[k])).join(",") + "}";
  }
  return (JSON.stringify(v) ?? "null").replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}
