import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { annotationColors } from "../charts/colors";
import { bucketTime } from "../charts/time";
import { wallTime } from "../range";
import { plural, when } from "../format";
import type { Annotation, SavedQuery } from "../types";
import { AnnotationForm } from "./AnnotationForm";

/**
 * useChartAnnotations loads the markers a chart draws over the range: the
 * workspace's annotations, plus a saved query's own when one is shown
 * (GET /api/v1/annotations?queryId=). A failure leaves the chart without
 * markers rather than without data.
 */
export function useChartAnnotations(product: number, from: string, to: string, queryId: number | null): [Annotation[], (a: Annotation) => void] {
  const [items, setItems] = useState<Annotation[]>([]);
  useEffect(() => {
    let live = true;
    api.annotations(product, { from, to, pageSize: 100, queryId: queryId ?? undefined }).then(
      (r) => live && setItems(r.items),
      () => live && setItems([]),
    );
    return () => {
      live = false;
    };
  }, [product, from, to, queryId]);
  return [items, (a) => setItems((l) => [...l, a])];
}

/** AnnotateDialog creates an annotation at a point picked on a chart. */
export function AnnotateDialog(props: {
  product: number;
  at: number;
  savedQueries: SavedQuery[];
  queryId?: number;
  onCreated: (a: Annotation) => void;
  onClose: () => void;
}) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && props.onClose();
    document.addEventListener("keydown", onKey);
    (document.querySelector(".dialog input[name=label]") as HTMLInputElement | null)?.focus();
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <div class="overlay">
      <div class="dialog wide" role="dialog" aria-modal="true" aria-labelledby="annotate-title">
        <h2 id="annotate-title">Add an annotation</h2>
        <AnnotationForm
          idPrefix="dlg"
          product={props.product}
          initialDate={props.at}
          savedQueries={props.savedQueries}
          queryId={props.queryId}
          onCreated={(a) => {
            props.onCreated(a);
            props.onClose();
          }}
          onCancel={props.onClose}
        />
      </div>
    </div>
  );
}

/** annotationsBetween keeps the annotations at or after start and before end (milliseconds), in time order. */
export function annotationsBetween(items: Annotation[], start: number, end: number, wall = false): Annotation[] {
  return items
    .map((a) => ({ a, t: wall ? wallTime(new Date(a.date).getTime()) : new Date(a.date).getTime() }))
    .filter(({ t }) => t >= start && t < end)
    .sort((x, y) => x.t - y.t || x.a.id - y.a.id)
    .map(({ a }) => a);
}

/** AnnotationText is what a marker shows on hover or focus: label, date and description. */
function AnnotationText(props: { annotation: Annotation }) {
  const a = props.annotation;
  return (
    <>
      <strong>{a.label}</strong>
      <span>{when(a.date)}</span>
      {a.description ? <span>{a.description}</span> : null}
    </>
  );
}

/**
 * AnnotationMarker is one annotation as a vertical marker in its colour: a
 * focusable button placed by style, whose label, date and description show
 * on hover or keyboard focus. The time charts and the funnel's timeline
 * strip draw it.
 */
export function AnnotationMarker(props: { annotation: Annotation; flip?: boolean; style: Record<string, string> }) {
  const a = props.annotation;
  return (
    <button
      type="button"
      class={`marker${props.flip ? " flip" : ""}`}
      data-testid="annotation-marker"
      data-color={a.color}
      style={{ ...props.style, "--marker": annotationColors[a.color] }}
      aria-label={`Annotation: ${a.label}, ${when(a.date)}`}
    >
      <span class="marker-label" role="tooltip">
        <AnnotationText annotation={a} />
      </span>
    </button>
  );
}

const dayMs = 86_400_000;

/**
 * AnnotationStrip is a compact timeline of a date range (YYYY-MM-DD, both
 * days included, days of the product's zone) with a marker for each
 * annotation inside it, for charts without a time axis (the funnel). The
 * days are wall times written as UTC, so the annotations' instants are
 * placed by their wall time in the zone.
 */
export function AnnotationStrip(props: { from: string; to: string; annotations: Annotation[] }) {
  const start = bucketTime(props.from);
  const end = bucketTime(props.to) + dayMs;
  const shown = annotationsBetween(props.annotations, start, end, true);
  const span = Math.max(end - start, 1);
  return (
    <div class="annotation-strip" role="group" aria-label={`Annotations from ${props.from} to ${props.to}`} data-testid="annotation-strip">
      <div class="strip-line">
        {shown.map((a) => {
          const pct = ((wallTime(new Date(a.date).getTime()) - start) / span) * 100;
          return <AnnotationMarker key={a.id} annotation={a} flip={pct > 60} style={{ left: `${pct}%`, top: "0", height: "100%" }} />;
        })}
      </div>
      <div class="strip-ends" aria-hidden="true">
        <span>{props.from}</span>
        <span>{shown.length ? "" : "No annotations in this range"}</span>
        <span>{props.to}</span>
      </div>
    </div>
  );
}

/**
 * PeriodMarker marks a row of a table (a retention cohort) whose period
 * holds annotations: a dot per annotation in its colour, in one focusable
 * button whose labels, dates and descriptions show on hover or focus. The
 * list is placed with fixed coordinates so that a scrolling table does not
 * clip it.
 */
export function PeriodMarker(props: { annotations: Annotation[] }) {
  const [at, setAt] = useState<{ left: number; top: number } | null>(null);
  const n = props.annotations.length;
  if (n === 0) return null;
  const place = (e: Event) => {
    const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
    setAt({ left: r.left, top: r.bottom + 4 });
  };
  const dots = props.annotations.slice(0, 4);
  return (
    <button
      type="button"
      class="period-marker"
      data-testid="period-annotations"
      aria-label={`${plural(n, "annotation")}: ${props.annotations.map((a) => `${a.label}, ${when(a.date)}`).join("; ")}`}
      onMouseEnter={place}
      onFocus={place}
    >
      {dots.map((a) => (
        <span key={a.id} class="period-dot" data-color={a.color} style={{ background: annotationColors[a.color] }} />
      ))}
      {n > dots.length ? <span class="period-more">+{n - dots.length}</span> : null}
      <span class="marker-label period-label" role="tooltip" style={at ? { left: `${at.left}px`, top: `${at.top}px` } : undefined}>
        {props.annotations.map((a) => (
          <span key={a.id} class="period-item" data-testid="period-annotation" data-color={a.color}>
            <span class="dot" style={{ background: annotationColors[a.color] }} />
            <AnnotationText annotation={a} />
          </span>
        ))}
      </span>
    </button>
  );
}
