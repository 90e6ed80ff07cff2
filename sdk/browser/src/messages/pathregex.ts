/**
 * Path rules: a campaign's `pathRegex` (docs/messages.md, "Path regular
 * expressions") tested against a path without backtracking. JavaScript's
 * RegExp backtracks, so a pattern such as `^/(a+)+b|a$` takes 2^40 steps on
 * `/` and 40 `a` and freezes the page; RE2 on the server does not. Here the
 * pattern is compiled to an automaton (Thompson's construction) and run with
 * a set of states per path character (Pike's VM): at most the program's size
 * times the path's length, whatever the pattern and whatever the server
 * accepted (an older server, a hand-edited row).
 *
 * Only whether the path matches is asked, which an automaton and a
 * backtracking matcher answer alike, so the answer is RegExp's (and RE2's) for
 * every pattern of the subset. A pattern outside the subset, or larger than
 * MAX_SIZE (which the server refuses too), matches no path; "" matches every
 * path. The path is read as RegExp reads it without flags: UTF-16 units,
 * ASCII `\d \w \b`, `.` any unit but a line terminator.
 */

/** The largest pattern size matched, counted as the server counts it (analytics.MaxPathRegexSize). */
export const MAX_SIZE = 2000;
/** The largest repeat count, as in RE2. */
const MAX_REPEAT = 1000;

/** The instructions of the program. */
const CHAR = 0, SPLIT = 1, JMP = 2, ASSERT = 3, MATCH = 4;

/**
 * One instruction: CHAR goes on to the next one if `t` holds for the unit at
 * the position, ASSERT if `t` holds at the position (an anchor, `\b`); SPLIT
 * goes on at both `x` and `y`, JMP at `x`.
 */
interface Inst {
  op: number;
  x: number;
  y: number;
  t?: (s: string, i: number) => boolean;
}

/** A test of one UTF-16 unit. */
type Unit = (c: number) => boolean;

/** A parsed piece: what emits its instructions, and its size. */
type Piece = [emit: () => void, size: number];

const compiled = new Map<string, Inst[] | null>();

/** pathMatches reports whether `path` matches `pattern`; "" matches every path, a pattern outside the subset none. */
export function pathMatches(pattern: string, path: string): boolean {
  if (!pattern) return true;
  let prog = compiled.get(pattern);
  if (prog === undefined) {
    try {
      prog = compile(pattern);
    } catch {
      prog = null;
    }
    compiled.set(pattern, prog);
  }
  return !!prog && run(prog, path);
}

const digit: Unit = (c) => c >= 48 && c <= 57;
const word: Unit = (c) => digit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95;
const not = (f: Unit): Unit => (c) => !f(c);

/** patternSize is a pattern's size as the server counts it (docs/messages.md); it throws for one outside the subset. */
export function patternSize(pattern: string): number {
  return parse(pattern)[1];
}

/** compile emits the program of a pattern of the subset, only once its size is known to be within MAX_SIZE. */
function compile(pattern: string): Inst[] {
  const [emit, size, prog] = parse(pattern);
  if (size > MAX_SIZE) throw new RangeError(pattern);
  emit();
  return prog;
}

/**
 * parse reads the pattern into pieces, refusing (by throwing) anything
 * outside the subset, and returns what emits the whole program into the
 * returned array, and the pattern's size.
 */
function parse(p: string): [emit: () => void, size: number, prog: Inst[]] {
  const prog: Inst[] = [];
  let j = 0;
  const fail = (): never => {
    throw new SyntaxError(p);
  };
  const emit = (op: number, t?: Inst["t"], x = 0) => prog.push({ op, x, y: 0, t }) - 1;
  const unit = (f: Unit): Piece => [() => emit(CHAR, (s, i) => f(s.charCodeAt(i))), 1];
  const assert = (t: Inst["t"]): Piece => [() => emit(ASSERT, t), 1];

  /** esc reads the escape after a `\`: a class (\d \D \w \W) or a punctuation character's code. */
  const esc = (): Unit | number => {
    const c = p[j++] || "";
    const f = c == "d" || c == "D" ? digit : c == "w" || c == "W" ? word : null;
    if (f) return c < "a" ? not(f) : f;
    if (c > " " && c <= "~" && !/[\dA-Za-z]/.test(c)) return c.charCodeAt(0);
    return fail();
  };

  /**
   * cls reads a class after its `[`: ranges, single characters and class
   * escapes, maybe negated. It is compiled to a table of the 128 ASCII units
   * and one answer for every unit past ASCII (which only \D and \W hold),
   * so that testing a unit takes one step however many items the class has:
   * the program's size, which bounds the time per path character, counts a
   * class as 1.
   */
  const cls = (): Unit => {
    const neg = p[j] == "^";
    if (neg) j++;
    const ascii = new Uint8Array(128);
    let high = false;
    const item = (): Unit | number => {
      const c = p[j++] || "";
      if (c == "\\") return esc();
      if (c < " " || c > "~" || c == "[" || c == "]") fail();
      return c.charCodeAt(0);
    };
    do {
      const lo = item();
      // A - after a class escape, first or last is the character, as in both Go and RegExp.
      if (typeof lo == "number" && p[j] == "-" && p[j + 1] && p[j + 1] != "]") {
        j++;
        const hi = item();
        if (typeof hi != "number" || hi < lo) fail();
        ascii.fill(1, lo, (hi as number) + 1);
      } else if (typeof lo == "number") ascii[lo] = 1;
      else {
        for (let c = 0; c < 128; c++) if (lo(c)) ascii[c] = 1;
        high ||= lo(128);
      }
    } while (p[j] != "]");
    j++;
    return (c) => (c < 128 ? ascii[c] == 1 : high) != neg;
  };

  /** atom reads one atom, and whether a quantifier may follow it. */
  const atom = (): [Piece, boolean] => {
    const c = p[j++];
    if (c == "(") {
      if (p[j] == "?") {
        if (p[j + 1] != ":") fail();
        j += 2;
      }
      const group = alt();
      if (p[j++] != ")") fail();
      return [group, true];
    }
    if (c == "[") return [unit(cls()), true];
    if (c == ".") return [unit((u) => u != 10 && u != 13 && u != 0x2028 && u != 0x2029), true];
    if (c == "^") return [assert((_, i) => i == 0), false];
    if (c == "$") return [assert((s, i) => i == s.length), false];
    if (c == "\\" && (p[j] == "b" || p[j] == "B")) {
      const b = p[j++] == "b";
      return [assert((s, i) => (word(s.charCodeAt(i - 1)) != word(s.charCodeAt(i))) == b), false];
    }
    if (c == "\\") {
      const e = esc();
      return [unit(typeof e == "number" ? (u) => u == e : e), true];
    }
    if (c < " " || c > "~" || "*+?{}[]".includes(c)) fail();
    const code = c.charCodeAt(0);
    return [unit((u) => u == code), true];
  };

  /**
   * repeat reads an atom and its quantifier, if any. x{n,m} is emitted as n
   * copies of x and m-n optional ones, x+ as x looped, x* as a loop around x.
   */
  const repeat = (): Piece => {
    const [[e, size], repeatable] = atom();
    const c = p[j];
    let min = 1;
    let max = 1;
    if (c == "*") min = 0, max = Infinity;
    else if (c == "+") max = Infinity;
    else if (c == "?") min = 0;
    else if (c == "{") {
      const braces = /\{(\d+)(,(\d*))?\}/y;
      braces.lastIndex = j;
      const m = braces.exec(p) || fail();
      min = +m[1];
      max = !m[2] ? min : m[3] ? +m[3] : Infinity;
      if (max < min || min > MAX_REPEAT || (max > MAX_REPEAT && max < Infinity)) fail();
      j += m[0].length - 1;
    } else return [e, size];
    if (!repeatable) fail();
    if (p[++j] == "?") j++; // lazy: the same answer to "does it match"
    const times = c != "{" ? 1 : Math.max(max == Infinity ? min + 1 : max, 1);
    const emitRepeat = () => {
      for (let i = 1; i < min; i++) e();
      if (max == Infinity) {
        if (min) {
          const loop = prog.length;
          e();
          prog[emit(SPLIT, undefined, loop)].y = prog.length;
        } else {
          const split = emit(SPLIT, undefined, prog.length + 1);
          e();
          emit(JMP, undefined, split);
          prog[split].y = prog.length;
        }
        return;
      }
      if (min) e();
      const skips: number[] = [];
      for (let i = min; i < max; i++) {
        skips.push(emit(SPLIT, undefined, prog.length + 1));
        e();
      }
      for (const s of skips) prog[s].y = prog.length;
    };
    return [emitRepeat, (size + 1) * times];
  };

  /** cat reads atoms up to a `|`, a `)` or the end. */
  const cat = (): Piece => {
    const parts: Piece[] = [];
    while (j < p.length && p[j] != "|" && p[j] != ")") parts.push(repeat());
    return [() => parts.forEach((x) => x[0]()), parts.reduce((n, x) => n + x[1], 0)];
  };

  /** alt reads alternatives, each tried: SPLIT to this one or the next, JMP past the last. */
  const alt = (): Piece => {
    const alts = [cat()];
    while (p[j] == "|") j++, alts.push(cat());
    const emitAlt = () => {
      const ends: number[] = [];
      alts.forEach(([e], k) => {
        const split = k < alts.length - 1 ? emit(SPLIT, undefined, prog.length + 1) : -1;
        e();
        if (split < 0) return;
        ends.push(emit(JMP));
        prog[split].y = prog.length;
      });
      for (const x of ends) prog[x].x = prog.length;
    };
    return [emitAlt, alts.reduce((n, x) => n + x[1], alts.length - 1)];
  };

  const [e, size] = alt();
  if (j < p.length) fail();
  return [() => (e(), emit(MATCH)), size, prog];
}

/**
 * run reports whether the program matches anywhere in s: a thread starts at
 * every position, and each list holds each instruction once (seen[pc] is the
 * generation that added it), so every step costs at most the program's size.
 */
function run(prog: Inst[], s: string): boolean {
  const n = prog.length;
  const seen = new Int32Array(n);
  // add's stack (each instruction pushes at most two), and the threads at
  // this position and the next: the arrays are reused at every position.
  const stack = new Int32Array(2 * n + 1);
  let cur = new Int32Array(n);
  let next = new Int32Array(n);
  let count = 0;
  /**
   * add appends to list (holding len threads) the CHAR instructions reachable
   * from pc without reading a unit, following SPLIT, JMP and the ASSERTs that
   * hold at position i; it returns the new length, or -1 when MATCH is reachable.
   */
  const add = (list: Int32Array, len: number, gen: number, pc: number, i: number): number => {
    let top = 0;
    stack[top++] = pc;
    while (top) {
      const k = stack[--top];
      if (seen[k] == gen) continue;
      seen[k] = gen;
      const x = prog[k];
      if (x.op == MATCH) return -1;
      if (x.op == CHAR) list[len++] = k;
      else if (x.op == ASSERT) {
        if (x.t!(s, i)) stack[top++] = k + 1;
      } else {
        if (x.op == SPLIT) stack[top++] = x.y;
        stack[top++] = x.x;
      }
    }
    return len;
  };
  for (let i = 0; ; i++) {
    if ((count = add(cur, count, i + 1, 0, i)) < 0) return true;
    if (i == s.length) return false;
    let len = 0;
    for (let k = 0; k < count; k++) {
      if (prog[cur[k]].t!(s, i) && (len = add(next, len, i + 2, cur[k] + 1, i + 1)) < 0) return true;
    }
    [cur, next] = [next, cur];
    count = len;
  }
}
