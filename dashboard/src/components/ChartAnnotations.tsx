import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
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
