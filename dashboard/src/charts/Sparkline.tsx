import { bucketLabel, num } from "./time";

/** The bars' size in the SVG's units (and in CSS pixels: it is drawn at this size). */
const barWidth = 8;
const gap = 3;
const height = 24;

/**
 * Sparkline draws a few days' counts as small bars: an inline SVG, so no
 * chart library for a table cell. The numbers are its accessible name
 * (and its title, shown on hover), since the bars alone say nothing to a
 * screen reader. A day without events keeps a 1-pixel stub, so that the
 * seven days stay countable.
 */
export function Sparkline(props: { days: { date: string; events: number }[]; label: string }) {
  const max = props.days.reduce((m, d) => Math.max(m, d.events), 0);
  const width = props.days.length * (barWidth + gap) - gap;
  const text = `${props.label}: ${props.days.map((d) => `${bucketLabel(d.date, "day")}, ${num(d.events)}`).join("; ")}`;
  return (
    <svg class="sparkline" role="img" aria-label={text} width={Math.max(width, 0)} height={height} viewBox={`0 0 ${Math.max(width, 0)} ${height}`}>
      <title>{text}</title>
      {props.days.map((d, i) => {
        const h = max > 0 && d.events > 0 ? Math.max(2, Math.round((d.events / max) * height)) : 1;
        return <rect key={d.date} class={d.events > 0 ? "bar" : "bar none"} x={i * (barWidth + gap)} y={height - h} width={barWidth} height={h} rx={1} />;
      })}
    </svg>
  );
}
