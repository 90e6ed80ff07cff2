// Formatting for people. Dates are shown in UTC, as the query API counts
// days in UTC, with the time where it matters.

import { num } from "./charts/time";

const dateTime = new Intl.DateTimeFormat("en-GB", {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZone: "UTC",
});

/** when writes a timestamp as "23 Nov 2026, 10:04 UTC", or the fallback when absent. */
export function when(iso: string | null | undefined, fallback = "Never"): string {
  if (!iso) return fallback;
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? fallback : `${dateTime.format(t)} UTC`;
}

/** snippet is the script tag that installs the browser SDK with a key. */
export function snippet(origin: string, key: string): string {
  return `<script src="${origin}/sdk/v1/sdk.min.js"></script><script>strata.init({apiKey: ${JSON.stringify(key)}})</script>`;
}

/**
 * plural writes a count with its noun, singular for exactly one: "1
 * detractor", "2 detractors", "1,204 users" (the number as num writes it). nouns is the plural when it is
 * not the noun plus "s" ("1 reply", "2 replies").
 */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${num(n)} ${n === 1 ? noun : nouns}`;
}

/** capitalise upper-cases the first letter. */
export function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// Experiment results. Shares (rates, the chance to beat control, the
// sample ratio) are fractions 0–1, as the API gives them; uplifts are a
// difference of two rates (absolute) or a fraction of control's rate
// (relative). Signs are written out, with a true minus sign.

const minus = "\u2212";

/** fixed writes x with digits decimals, a true minus sign, and no "-0.0". */
function fixed(x: number, digits: number, sign = false): string {
  const s = Math.abs(x).toFixed(digits);
  const zero = Number(s) === 0;
  if (x < 0 && !zero) return minus + s;
  return sign && !zero ? "+" + s : s;
}

/** percent writes a share as a percentage: 0.1234 → "12.3%". */
export function percent(share: number, digits = 1): string {
  return `${fixed(share * 100, digits)}%`;
}

/** points writes a difference of two rates in percentage points: 0.025 → "+2.5 pp". */
export function points(diff: number): string {
  return `${fixed(diff * 100, 1, true)} pp`;
}

/** relative writes a relative change as a signed percentage: 0.2 → "+20.0%". */
export function relative(change: number): string {
  return `${fixed(change * 100, 1, true)}%`;
}

/** pValue writes a p-value with three decimals, "< 0.001" below that. */
export function pValue(p: number): string {
  return p < 0.001 ? "< 0.001" : p.toFixed(3);
}

/** chance writes a probability as a percentage, "> 99.9%" and "< 0.1%" at the ends. */
export function chance(p: number): string {
  if (p > 0.999) return "> 99.9%";
  if (p < 0.001) return "< 0.1%";
  return percent(p);
}

/** bytes writes a size for people: 812 B, 12.3 KB, 4.1 MB (1 KB = 1,000 bytes, as file managers count). */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} KB`;
  return `${(n / 1_000_000).toFixed(1)} MB`;
}
