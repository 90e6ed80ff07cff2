// Colours of chart series and annotation markers. Annotation colours are the
// API's six preset names (docs/annotations.md), mapped to Tailwind shades
// that read on a white chart and stay apart in hue.
import type { AnnotationColor } from "../types";

export const annotationColors: Record<AnnotationColor, string> = {
  emerald: "#059669",
  sky: "#0284c7",
  amber: "#d97706",
  rose: "#e11d48",
  violet: "#7c3aed",
  slate: "#475569",
};

export const colorNames = Object.keys(annotationColors) as AnnotationColor[];

/** Series colours, in order; they repeat past the tenth line. */
const series = ["#0284c7", "#e11d48", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569", "#ea580c"];

export function seriesColor(i: number): string {
  return series[i % series.length];
}
