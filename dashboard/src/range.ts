// The date range every chart page shares. It lives in the URL, so that a
// link opens the same view: ?range=<preset> for a preset, or
// ?from=YYYY-MM-DD&to=YYYY-MM-DD for a custom range. Dates are days of the
// product's time zone (docs/queries.md, "Time zones") and both ends are
// included, as the query API reads them: "today" is the zone's today, not
// the browser's or UTC's.

/** The product's time zone, an IANA name; the app sets it when the product changes. */
let zone = "UTC";

/** setTimeZone makes name the zone presets and labels follow; an unknown name is UTC. */
export function setTimeZone(name: string | undefined): void {
  zone = name && validZone(name) ? name : "UTC";
}

/** timeZone is the zone presets and labels follow. */
export function timeZone(): string {
  return zone;
}

/** validZone reports whether the browser knows the IANA zone name. */
export function validZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * wallTime is the zone's wall clock at instant t, written as a UTC time
 * (milliseconds): the form in which day buckets ("YYYY-MM-DD", read as UTC
 * midnights) and instants can be compared.
 */
export function wallTime(t: number, name: string = zone): number {
  if (name === "UTC") return t;
  const parts: Record<string, number> = {};
  for (const p of wallParts(name).formatToParts(new Date(t))) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  const ms = ((t % 1000) + 1000) % 1000;
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour % 24, parts.minute, parts.second, ms);
}

const partsByZone = new Map<string, Intl.DateTimeFormat>();
function wallParts(name: string): Intl.DateTimeFormat {
  let f = partsByZone.get(name);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: name, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
    });
    partsByZone.set(name, f);
  }
  return f;
}

/** zoneToday is the zone's day at instant now, as a UTC midnight. */
export function zoneToday(now: number = Date.now(), name: string = zone): Date {
  const w = new Date(wallTime(now, name));
  return new Date(Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate()));
}

/** A preset's key, as written in ?range=. */
export type PresetKey = "today" | "yesterday" | "7d" | "30d" | "90d" | "365d";

export interface Preset {
  key: PresetKey;
  label: string;
  /** days back from today to the first day, and to the last. */
  from: number;
  to: number;
}

/** The presets, in the order the picker lists them. */
export const presets: readonly Preset[] = [
  { key: "today", label: "Today", from: 0, to: 0 },
  { key: "yesterday", label: "Yesterday", from: 1, to: 1 },
  { key: "7d", label: "Last 7 days", from: 6, to: 0 },
  { key: "30d", label: "Last 30 days", from: 29, to: 0 },
  { key: "90d", label: "Last 90 days", from: 89, to: 0 },
  { key: "365d", label: "Last 365 days", from: 364, to: 0 },
];

/** The range used when the URL names none: the query API's default too. */
export const defaultPreset: PresetKey = "30d";

/** The longest custom range the query API accepts, in days. */
export const maxRangeDays = 3660;

export interface DateRange {
  /** The preset, or "custom". */
  key: PresetKey | "custom";
  from: string;
  to: string;
}

const dayMs = 86_400_000;
const datePattern = /^\d{4}-\d{2}-\d{2}$/;

/** isoDay writes a time's UTC day as YYYY-MM-DD. */
export function isoDay(t: Date): string {
  return t.toISOString().slice(0, 10);
}

/** parseDay reads YYYY-MM-DD as a UTC midnight, or null when it is not a real day. */
export function parseDay(s: string | null): Date | null {
  if (!s || !datePattern.test(s)) return null;
  const t = new Date(s + "T00:00:00Z");
  return Number.isNaN(t.getTime()) || isoDay(t) !== s ? null : t;
}

/** presetRange is a preset's days as of today (the zone's today, by default). */
export function presetRange(key: PresetKey, today: Date = zoneToday()): DateRange {
  const p = presets.find((x) => x.key === key) ?? presets.find((x) => x.key === defaultPreset)!;
  const base = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return { key: p.key, from: isoDay(new Date(base - p.from * dayMs)), to: isoDay(new Date(base - p.to * dayMs)) };
}

/** relativeDays reads a board's relative day, "-6d" (six days before today), or undefined. */
export function relativeDays(s: string): number | undefined {
  const m = /^-(\d{1,4})d$/.exec(s);
  return m ? Number(m[1]) : undefined;
}

/**
 * boardRange is a board's stored range as dates (docs/dashboard.md, "The board's
 * range and filters"): two relative days ("-6d" to "-0d") are counted back from
 * today in the product's zone, and keep the preset they match; two dates are a
 * custom range.
 */
export function boardRange(from: string, to: string, today: Date = zoneToday()): DateRange {
  const f = relativeDays(from);
  const t = relativeDays(to);
  if (f === undefined || t === undefined) return { key: "custom", from, to };
  const base = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const p = presets.find((x) => x.from === f && x.to === t);
  return { key: p ? p.key : "custom", from: isoDay(new Date(base - f * dayMs)), to: isoDay(new Date(base - t * dayMs)) };
}

/**
 * kept is what a board stores to keep a range: a preset as relative days, so that
 * the board follows the calendar as the preset does; a custom range as its dates.
 */
export function kept(range: DateRange): { dateFrom: string; dateTo: string } {
  const p = presets.find((x) => x.key === range.key);
  return p ? { dateFrom: `-${p.from}d`, dateTo: `-${p.to}d` } : { dateFrom: range.from, dateTo: range.to };
}

/**
 * checkCustom returns why a custom range is not valid, or null when it is.
 */
export function checkCustom(from: string, to: string): string | null {
  const f = parseDay(from);
  const t = parseDay(to);
  if (!f || !t) return "Enter both dates as YYYY-MM-DD.";
  if (t < f) return "The end date is before the start date.";
  if ((t.getTime() - f.getTime()) / dayMs + 1 > maxRangeDays) return `A range can span at most ${maxRangeDays} days.`;
  return null;
}

/**
 * rangeFromSearch reads the range from a URL's parameters: a known preset,
 * else a valid custom range, else the default preset.
 */
export function rangeFromSearch(search: URLSearchParams, today: Date = zoneToday()): DateRange {
  const key = search.get("range");
  if (key && presets.some((p) => p.key === key)) return presetRange(key as PresetKey, today);
  const from = search.get("from");
  const to = search.get("to");
  if (from && to && checkCustom(from, to) === null) return { key: "custom", from, to };
  return presetRange(defaultPreset, today);
}

/**
 * searchWithRange returns a copy of search that names range: a preset by
 * its key, a custom range by its days. The default preset is written too,
 * so that a shared link keeps meaning the same range.
 */
export function searchWithRange(search: URLSearchParams, range: DateRange): URLSearchParams {
  const out = new URLSearchParams(search);
  out.delete("range");
  out.delete("from");
  out.delete("to");
  if (range.key === "custom") {
    out.set("from", range.from);
    out.set("to", range.to);
  } else {
    out.set("range", range.key);
  }
  return out;
}

/** describe is a range for people: the preset's label, or its two days. */
export function describe(range: DateRange): string {
  if (range.key !== "custom") return presets.find((p) => p.key === range.key)!.label;
  return range.from === range.to ? range.from : `${range.from} – ${range.to}`;
}

/**
 * during is a range as the end of a sentence: "today", "yesterday", "in
 * the last 7 days", "on 2026-11-01" or "from 2026-11-01 to 2026-11-23".
 */
export function during(range: DateRange): string {
  if (range.key === "today" || range.key === "yesterday") return range.key;
  if (range.key !== "custom") return `in the ${describe(range).toLowerCase()}`;
  return range.from === range.to ? `on ${range.from}` : `from ${range.from} to ${range.to}`;
}

/**
 * span is a range's days as the end of a sentence, whatever the preset:
 * "on 2026-11-26" or "between 2026-11-01 and 2026-11-26".
 */
export function span(range: DateRange): string {
  return range.from === range.to ? `on ${range.from}` : `between ${range.from} and ${range.to}`;
}
