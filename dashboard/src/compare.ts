// Comparing the Overview's figures with the previous period (docs/dashboard.md,
// "The previous period"): the period of the same number of days that ends the
// day before the range starts, and each figure's change against it, written
// for the eye ("+12 %", with an arrow) and for a screen reader ("up 12 % from
// the previous 7 days"). Kept apart from the components so that the
// arithmetic is tested on its own.
import { isoDay, parseDay } from "./range";

/** Days are a range of UTC days, both included, as the query API reads them. */
type Days = { from: string; to: string };

const dayMs = 86_400_000;

/** previousPeriod is the days of the same length as d that end the day before d.from. */
export function previousPeriod(d: Days): Days {
  const from = parseDay(d.from)!.getTime();
  const to = parseDay(d.to)!.getTime();
  const end = from - dayMs;
  return { from: isoDay(new Date(end - (to - from))), to: isoDay(new Date(end)) };
}

/** periodName names the previous period in a sentence: "the previous day", "the previous 7 days". */
export function periodName(d: Days): string {
  const days = Math.round((parseDay(d.to)!.getTime() - parseDay(d.from)!.getTime()) / dayMs) + 1;
  return days === 1 ? "the previous day" : `the previous ${days} days`;
}

/**
 * How a figure is compared: as a relative change ("percent", for counts,
 * durations and pages per visit, where more is better) or as a difference in
 * percentage points ("points", for a rate that is itself a percentage; with
 * lowerIsBetter for the bounce rate, whose rise is not good).
 */
export interface ChangeKind {
  unit: "percent" | "points";
  lowerIsBetter?: boolean;
}

/** Change is a figure's change against the previous period, ready to show. */
export interface Change {
  /** text is what the card shows: "+12 %", "−3 %", "+2.5 pp", "0 %" or "new". */
  text: string;
  /** direction is the change's sign; "new" when the previous period had nothing to compare with. */
  direction: "up" | "down" | "flat" | "new";
  /** tone says whether the change is good news, bad news or neither. */
  tone: "good" | "bad" | "neutral";
  /** spoken is the change as a sentence's end for screen readers: "up 12 % from the previous 7 days". */
  spoken: string;
}

const minus = "\u2212";

/**
 * change compares current with previous. empty says the previous period had
 * nothing to measure and the current one has (visits, say, for a bounce
 * rate, whose 0 over no visits means nothing): it shows "new". A percent
 * change from 0 to more is "new" too rather than a division by zero, and
 * from 0 to 0 no change. A percent
 * change is rounded to a whole percent and a points change to one decimal,
 * and one that rounds to zero is flat.
 */
export function change(current: number, previous: number, kind: ChangeKind, period: string, empty = false): Change {
  if (empty || (kind.unit === "percent" && previous === 0 && current !== 0)) {
    return { text: "new", direction: "new", tone: "neutral", spoken: `nothing to compare with in ${period}` };
  }
  if (kind.unit === "percent" && previous === 0) return { text: "0 %", direction: "flat", tone: "neutral", spoken: `no change from ${period}` };
  const delta = kind.unit === "percent" ? Math.round(((current - previous) / previous) * 100) : Math.round((current - previous) * 10) / 10;
  const unit = kind.unit === "percent" ? " %" : " pp";
  const spokenUnit = kind.unit === "percent" ? " %" : " percentage points";
  if (delta === 0) return { text: `0${unit}`, direction: "flat", tone: "neutral", spoken: `no change from ${period}` };
  const up = delta > 0;
  const size = Math.abs(delta);
  const good = up !== !!kind.lowerIsBetter;
  return {
    text: `${up ? "+" : minus}${size}${unit}`,
    direction: up ? "up" : "down",
    tone: good ? "good" : "bad",
    spoken: `${up ? "up" : "down"} ${size}${spokenUnit} from ${period}`,
  };
}

/** duration writes seconds as m:ss below an hour and h:mm:ss from one, rounded to the second: "1:15", "1:02:05". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}
