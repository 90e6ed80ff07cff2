// Time buckets as the query API writes them ("YYYY-MM-DD", or an RFC 3339
// time for hourly buckets), formatted in the browser's locale. Buckets are
// the product's local days and hours (docs/queries.md, "Time zones"): a
// day is shown as the date the API wrote (read as a UTC midnight, formatted
// in UTC), an hour in the product's zone.
import { timeZone, wallTime } from "../range";
import type { Interval } from "../types";

export function bucketTime(date: string): number {
  return new Date(date.length === 10 ? date + "T00:00:00Z" : date).getTime();
}

const hourFormats = new Map<string, Intl.DateTimeFormat>();
function hourFormat(): Intl.DateTimeFormat {
  const zone = timeZone();
  let f = hourFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZone: zone });
    hourFormats.set(zone, f);
  }
  return f;
}

const fmt = {
  day: new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" }),
  month: new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", timeZone: "UTC" }),
  full: new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" }),
};

/** bucketLabel is a bucket for an axis tick. */
export function bucketLabel(date: string, interval: Interval): string {
  const t = bucketTime(date);
  if (interval === "hour") return hourFormat().format(t);
  if (interval === "month") return fmt.month.format(t);
  return fmt.day.format(t);
}

/** bucketTitle is a bucket for a tooltip's title. */
export function bucketTitle(date: string, interval: Interval): string {
  const t = bucketTime(date);
  if (interval === "hour") return hourFormat().format(t) + " " + timeZone();
  if (interval === "month") return fmt.month.format(t);
  if (interval === "week") return "Week of " + fmt.full.format(t);
  return fmt.full.format(t);
}

/** nextBucket is the start of the bucket after the one starting at t. */
export function nextBucket(t: number, interval: Interval): number {
  const d = new Date(t);
  switch (interval) {
    case "hour":
      return t + 3_600_000;
    case "week":
      return t + 7 * 86_400_000;
    case "month":
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  return t + 86_400_000;
}

/**
 * markerPosition places an instant on a category axis of buckets: the
 * index of its bucket plus the fraction of the bucket gone by, or null
 * when it falls outside the buckets.
 */
export function markerPosition(at: number, buckets: string[], interval: Interval): number | null {
  if (buckets.length === 0) return null;
  // Hours are instants; days, weeks and months are local dates, which an
  // instant meets as the zone's wall time.
  if (interval !== "hour") at = wallTime(at);
  const starts = buckets.map(bucketTime);
  const end = nextBucket(starts[starts.length - 1], interval);
  if (at < starts[0] || at >= end) return null;
  let i = starts.length - 1;
  while (i > 0 && starts[i] > at) i--;
  const next = i + 1 < starts.length ? starts[i + 1] : end;
  return i + (at - starts[i]) / (next - starts[i]);
}

/**
 * pastBuckets is how many of the buckets (in order) have begun by now: the
 * rest lie in the future. "Today" and every range ending today hold the
 * hours or days still to come, which the API counts as 0; the charts stop
 * at now instead of drawing them as a fall to zero. The current bucket has
 * begun, so it counts (partial as it is).
 */
export function pastBuckets(buckets: string[], now: number): number {
  // An hour's label is an instant; a day's is a local date, which now
  // meets as the zone's wall time.
  const wall = wallTime(now);
  let n = buckets.length;
  while (n > 0 && bucketTime(buckets[n - 1]) > (buckets[n - 1].length === 10 ? wall : now)) n--;
  return n;
}

/** untilNow is a line's values with those of the buckets still to come as null, which Chart.js leaves undrawn. */
export function untilNow(data: number[], buckets: string[], now: number): (number | null)[] {
  const past = pastBuckets(buckets, now);
  return data.map((v, i) => (i < past ? v : null));
}

const numbers = new Intl.NumberFormat();

/** num writes a count in the browser's locale. */
export function num(n: number): string {
  return numbers.format(n);
}
