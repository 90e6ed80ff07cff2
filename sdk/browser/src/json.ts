/**
 * JSON that holds whatever the page did to the built-ins. Pages with an old
 * Prototype.js (1.6) define `toJSON` on Array.prototype (and on String's,
 * Number's and Date's) returning the value already serialised, so that the
 * native JSON.stringify writes every array as a string: a batch would go out
 * as `"batch":"[{…}]"`, which the server refuses (400 invalid_envelope), and
 * every event of the site would be lost. Other pages replace JSON.stringify
 * itself. stringify uses the native one when the built-ins are as the
 * language defines them, and otherwise serialises by itself, giving what the
 * native one gives on a clean page.
 */

/** The built-ins whose prototypes pages give a `toJSON` (Object's is reached through each). */
const BOXES = [Array, String, Number, Boolean];

/** native reports whether f is the browser's own function, not a page's replacement. */
function native(f: unknown): boolean {
  return /\[native code\]/.test("" + f);
}

/**
 * stringify is JSON.stringify(v) as on a page that left the built-ins alone.
 * A `toJSON` of the value's own class (a Luxon date, a Decimal) is used; one
 * that a page put on Object, Array, String, Number, Boolean or Date is not.
 * Like JSON.stringify it throws on a cycle or a BigInt.
 */
export function stringify(v: unknown): string {
  return native(JSON.stringify) && native(Date.prototype.toJSON) && BOXES.every((C) => !("toJSON" in C.prototype))
    ? JSON.stringify(v)
    : (write(v, []) as string);
}

/** write serialises v as the native JSON.stringify does, or returns undefined where it leaves a value out. */
function write(v: unknown, stack: unknown[]): string | undefined {
  if (v instanceof Date) v = isFinite(+v) ? v.toISOString() : null;
  else if (v && typeof v == "object") {
    const t = (v as { toJSON?: unknown }).toJSON;
    // Not the toJSON a page put on a built-in's prototype.
    if (typeof t == "function" && ![Object, Date, ...BOXES].some((C) => (C.prototype as { toJSON?: unknown }).toJSON === t)) v = t.call(v);
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  const type = typeof v;
  if (type == "string") return quote(v as string);
  if (type == "number") return isFinite(v as number) ? "" + v : "null";
  if (type == "boolean" || v === null) return "" + v;
  if (type == "bigint") throw new TypeError("BigInt");
  if (type != "object") return undefined; // undefined, a function, a symbol
  if (stack.indexOf(v) >= 0) throw new TypeError("cycle");
  stack.push(v);
  const o = v as Record<string, unknown>;
  const array = Array.isArray(o);
  const out: string[] = [];
  for (const k of array ? Array.from(o as unknown as unknown[], (_, i) => "" + i) : Object.keys(o)) {
    const s = write(o[k], stack);
    if (array) out.push(s === undefined ? "null" : s);
    else if (s !== undefined) out.push(quote(k) + ":" + s);
  }
  stack.pop();
  return array ? "[" + out.join() + "]" : "{" + out.join() + "}";
}

/**
 * quote writes a JSON string as the native JSON.stringify does: quotes,
 * backslashes and control characters escaped (the short forms where JSON has
 * them), and, as since ES2019, a lone surrogate too.
 */
function quote(s: string): string {
  return (
    '"' +
    s.replace(/["\\\0-\x1f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => {
      const i = "\"\\\b\t\n\f\r".indexOf(c);
      return i >= 0 ? "\\" + "\"\\btnfr"[i] : "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    }) +
    '"'
  );
}
