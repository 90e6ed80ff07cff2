import {
  BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip,
  type ChartConfiguration, type Plugin,
} from "chart.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { AnnotationMarker } from "../components/ChartAnnotations";
import type { Annotation, Interval } from "../types";
import { seriesColor } from "./colors";
import { bucketLabel, bucketTitle, markerPosition, num, pastBuckets, untilNow } from "./time";

// Only what the dashboard draws is registered, which keeps the bundle small.
Chart.register(LineController, BarController, LineElement, PointElement, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

export interface Line {
  label: string;
  data: number[];
  /**
   * previousOf makes the line an overlay of line previousOf's previous
   * period, aligned bucket by bucket: dashed, in that line's colour, and
   * drawn over every bucket, as a past period has no buckets to come.
   */
  previousOf?: number;
}

interface Marker {
  annotation: Annotation;
  left: number;
  top: number;
  height: number;
  /** flip puts the label left of a marker near the right edge. */
  flip: boolean;
}

/**
 * TimeChart draws lines or bars over time buckets with Chart.js, with the
 * annotations as vertical markers in their colour (label on hover or
 * focus). Clicking the chart picks the bucket under the pointer (onPick),
 * which the pages use to create an annotation there. A data table below
 * gives the same numbers without the canvas. format writes the values
 * (axis, tooltip, table): counts in the browser's locale unless given.
 * Buckets that start after now are still to come: their points are not
 * drawn (null, not 0) and the table leaves them out, so a range ending
 * today does not look like a fall to zero; the current bucket is drawn.
 */
export function TimeChart(props: {
  kind: "line" | "bar";
  interval: Interval;
  buckets: string[];
  lines: Line[];
  annotations?: Annotation[];
  onPick?: (bucket: string) => void;
  label: string;
  format?: (value: number) => string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  const [markers, setMarkers] = useState<Marker[]>([]);
  const [noCanvas, setNoCanvas] = useState(false);
  const latest = useRef(props);
  latest.current = props;
  const now = Date.now();
  const past = pastBuckets(props.buckets, now);

  useEffect(() => {
    const el = canvas.current;
    if (!el || !el.getContext?.("2d")) {
      setNoCanvas(true);
      return;
    }
    // Markers follow the chart's layout: recomputed after every draw
    // (resize included), and set only when they moved.
    let last = "";
    const place: Plugin<"line" | "bar"> = {
      id: "strataMarkers",
      afterDraw(c) {
        const p = latest.current;
        const x = c.scales.x;
        const area = c.chartArea;
        if (!x || !area) return;
        const out: Marker[] = [];
        for (const a of p.annotations ?? []) {
          const pos = markerPosition(new Date(a.date).getTime(), p.buckets, p.interval);
          if (pos === null) continue;
          const i = Math.floor(pos);
          const here = x.getPixelForValue(i);
          const step = p.buckets.length > 1 ? x.getPixelForValue(1) - x.getPixelForValue(0) : 0;
          const left = here + (pos - i) * step;
          out.push({ annotation: a, left, top: area.top, height: area.bottom - area.top, flip: left > c.width * 0.6 });
        }
        const key = JSON.stringify(out.map((m) => [m.annotation.id, Math.round(m.left), Math.round(m.height)]));
        if (key !== last) {
          last = key;
          setMarkers(out);
        }
      },
    };
    const config: ChartConfiguration<"line" | "bar"> = {
      type: props.kind,
      data: { labels: [], datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "index", intersect: false },
        plugins: {
          legend: { position: "bottom", labels: { boxWidth: 12 } },
          tooltip: {
            callbacks: {
              title: (items) => bucketTitle(latest.current.buckets[items[0]?.dataIndex ?? 0] ?? "", latest.current.interval),
              label: (item) => ` ${item.dataset.label}: ${(latest.current.format ?? num)(Number(item.raw))}`,
            },
          },
        },
        scales: {
          x: {
            ticks: {
              autoSkip: true,
              maxRotation: 0,
              callback: (_v, i) => bucketLabel(latest.current.buckets[i] ?? "", latest.current.interval),
            },
            grid: { display: false },
          },
          y: { beginAtZero: true, ticks: { precision: props.format ? undefined : 0, callback: (v) => (latest.current.format ?? num)(Number(v)) } },
        },
        onClick: (evt, _els, c) => {
          const pick = latest.current.onPick;
          if (!pick || !evt.native) return;
          const hit = c.getElementsAtEventForMode(evt.native, "index", { intersect: false }, false)[0];
          if (hit) pick(latest.current.buckets[hit.index]);
        },
      },
      plugins: [place],
    };
    chart.current = new Chart(el, config as ChartConfiguration);
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, [props.kind]);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data.labels = props.buckets;
    // A line of one bucket is drawn in the middle, not on the left edge.
    const x = c.options.scales?.x as { offset?: boolean } | undefined;
    if (x) x.offset = props.kind === "bar" || props.buckets.length === 1;
    c.data.datasets = props.lines.map((l, i) => ({
      label: l.label,
      data: l.previousOf === undefined ? untilNow(l.data, props.buckets, now) : l.data,
      borderColor: seriesColor(l.previousOf ?? i),
      backgroundColor: seriesColor(l.previousOf ?? i),
      borderDash: l.previousOf === undefined ? [] : [6, 4],
      pointRadius: l.previousOf !== undefined || props.buckets.length > 60 ? 0 : 3,
      borderWidth: l.previousOf === undefined ? 2 : 1.5,
      tension: 0.2,
    }));
    c.update();
  }, [props.kind, props.buckets.join(), past, JSON.stringify(props.lines), JSON.stringify(props.annotations ?? [])]);

  return (
    <div class="time-chart">
      <div class={`chart-box${props.onPick ? " pickable" : ""}`}>
        <canvas ref={canvas} role="img" aria-label={props.label} />
        {markers.map((m) => (
          <AnnotationMarker
            key={m.annotation.id}
            annotation={m.annotation}
            flip={m.flip}
            style={{ left: `${m.left}px`, top: `${m.top}px`, height: `${m.height}px` }}
          />
        ))}
      </div>
      {past < props.buckets.length ? (
        <p class="hint" data-testid="future-hint">
          The chart stops at the current {props.interval}: the rest of the range is still to come.
        </p>
      ) : null}
      {noCanvas ? <p class="hint">This browser cannot draw charts; the numbers are in the table below.</p> : null}
      <details class="data-table" open={noCanvas}>
        <summary>Data table</summary>
        <div class="table-scroll">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Date</th>
                {props.lines.map((l, i) => (
                  <th scope="col" key={i}>
                    {l.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.buckets.slice(0, past).map((b, i) => (
                <tr key={b}>
                  <td>{bucketTitle(b, props.interval)}</td>
                  {props.lines.map((l, j) => (
                    <td key={j}>{(props.format ?? num)(l.data[i] ?? 0)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
