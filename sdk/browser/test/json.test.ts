// The serialiser (src/json.ts): what the native JSON.stringify gives on a
// clean page, also on pages that put toJSON on the built-ins (Prototype.js
// 1.6), replaced JSON.stringify, or added enumerable keys to Object.prototype.
import { describe, expect, it } from "vitest";
import { stringify } from "../src/json";

/** Values that exercise every branch of a JSON serialiser. */
class Money {
  constructor(readonly cents: number) {}
  toJSON() {
    return { amount: this.cents / 100, currency: "EUR" };
  }
}
const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
const values: [string, unknown][] = [
  ["a batch", { api_key: "k", batch: [{ uuid: "u", properties: { tags: ["a", "b"], n: 1, nested: [[1, [2]], {}] } }] }],
  ["strings to escape", ['quote " backslash \\ slash /', "tab\tnew\nline\r\u0000\u001f\u007f", "é ß 漢 😀", "\u2028\u2029"]],
  ["lone surrogates", ["a\ud800b", "\udc00", "😀".slice(0, 1), "x\udbff"]],
  ["numbers", [0, -0, 1.5, -2e-7, 1e21, 2 ** 53, NaN, Infinity, -Infinity, Number.MAX_VALUE]],
  ["what JSON leaves out or nulls", { u: undefined, f: () => 1, s: Symbol("x"), arr: [undefined, () => 1, Symbol("y")], sparse }],
  ["dates", { d: new Date(Date.UTC(2026, 10, 27, 15, 4, 5, 6)), bad: new Date(NaN) }],
  ["a class's own toJSON", { price: new Money(1999), list: [new Money(5)] }],
  ["boxed primitives", [Object(1), Object("s"), Object(false)]],
  ["null, booleans, empty", [null, true, false, {}, [], ""]],
  ["a top-level string", "just a string"],
  ["a top-level number", 42],
];

/** clean is what the native JSON.stringify gives now, before any test pollutes. */
const clean = values.map(([, v]) => JSON.stringify(v));

/**
 * polluted runs f on a page that did what pages do to the built-ins, and
 * undoes it before returning (the test runner itself uses JSON).
 */
function polluted<T>(f: () => T, what: "prototype" | "replaced" | "object-keys" | "all" = "all"): T {
  const saved = {
    stringify: JSON.stringify,
    date: Date.prototype.toJSON,
  };
  const protos = [Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype] as Record<string, unknown>[];
  try {
    if (what == "prototype" || what == "all") {
      // Prototype.js 1.6: toJSON returns the value already serialised.
      (Array.prototype as unknown as Record<string, unknown>).toJSON = function (this: unknown[]) {
        return "[" + this.map((x) => saved.stringify(x)).join(", ") + "]";
      };
      (String.prototype as unknown as Record<string, unknown>).toJSON = function (this: string) {
        return '"' + this + '"';
      };
      (Number.prototype as unknown as Record<string, unknown>).toJSON = function (this: number) {
        return isFinite(this) ? this.toString() : "null";
      };
      (Boolean.prototype as unknown as Record<string, unknown>).toJSON = function (this: boolean) {
        return String(this);
      };
      Date.prototype.toJSON = function (this: Date) {
        return '"' + this.toISOString() + '"';
      };
      (Object.prototype as Record<string, unknown>).toJSON = function () {
        return "[object]";
      };
    }
    if (what == "replaced" || what == "all") {
      JSON.stringify = () => "replaced by the page";
    }
    if (what == "object-keys" || what == "all") {
      (Object.prototype as Record<string, unknown>).pageHelper = "inherited";
      (Array.prototype as unknown as Record<string, unknown>).last = function () {};
    }
    return f();
  } finally {
    JSON.stringify = saved.stringify;
    Date.prototype.toJSON = saved.date;
    for (const p of protos) {
      delete p.toJSON;
      delete p.pageHelper;
      delete p.last;
    }
  }
}

describe("stringify", () => {
  it.each(values.map(([name], i) => [name, i]))("gives what JSON.stringify gives on a clean page: %s", (_, i) => {
    expect(stringify(values[i as number][1])).toBe(clean[i as number]);
  });

  it.each(["prototype", "replaced", "object-keys", "all"] as const)("gives the same on a page that polluted the built-ins: %s", (what) => {
    const got = polluted(() => values.map(([, v]) => stringify(v)), what);
    expect(got).toEqual(clean);
  });

  it("sees the pollution the native JSON.stringify falls for (the check is not vacuous)", () => {
    const batch = { batch: [{ tags: ["a"] }] };
    const native = JSON.stringify;
    const proto = Array.prototype as unknown as Record<string, unknown>;
    proto.toJSON = function (this: unknown[]) {
      return "[" + this.map((x) => native(x)).join(", ") + "]";
    };
    let before: string, after: string;
    try {
      before = JSON.stringify(batch);
      after = stringify(batch);
    } finally {
      delete proto.toJSON;
    }
    expect(typeof JSON.parse(before).batch).toBe("string");
    expect(after).toBe('{"batch":[{"tags":["a"]}]}');
  });

  it("writes what JSON.parse reads back as the same value, lone surrogates as their escapes", () => {
    const v = { s: "a\ud800b\udc00c 😀 \"\\\n", n: [1, { x: null }] };
    const out = polluted(() => stringify(v));
    expect(out).toBe(JSON.stringify(v));
    expect(out).toContain("\\ud800");
    expect(JSON.parse(out)).toEqual(v);
  });

  it("throws on a cycle and on a BigInt, as JSON.stringify does, also when it serialises by itself", () => {
    const cyclic: Record<string, unknown> = { a: [1] };
    (cyclic.a as unknown[]).push(cyclic);
    for (const what of ["none", "all"] as const) {
      const run = (v: unknown) => () => (what == "all" ? polluted(() => stringify(v)) : stringify(v));
      expect(run(cyclic)).toThrow(TypeError);
      expect(run({ n: BigInt(1) })).toThrow(TypeError);
      // The same object twice, not nested, is no cycle.
      const shared = { x: 1 };
      expect(run({ a: shared, b: [shared] })()).toBe('{"a":{"x":1},"b":[{"x":1}]}');
    }
  });
});
