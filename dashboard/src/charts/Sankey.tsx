import { Chart, LinearScale, Tooltip, type ChartConfiguration } from "chart.js";
import { Flow as FlowElement, SankeyController } from "chartjs-chart-sankey";
import { useEffect, useRef, useState } from "preact/hooks";
import { nodeOfKey, sankeyData } from "../paths";
import type { PathsResult } from "../types";
import { seriesColor } from "./colors";
import { num } from "./time";

// The Sankey controller (chartjs-chart-sankey, docs/dependencies.md)
// beside the controllers TimeChart registers.
Chart.register(SankeyController, FlowElement, LinearScale, Tooltip);

/**
 * SankeyChart draws a paths answer as flows between the steps' nodes
 * (sankeyData). Clicking a band picks the node it flows into, or for a
 * band into nothing its source: onPick gets the node's place in the
 * answer. The nodes' table beside it offers the same picks to keyboards
 * and screen readers; the canvas is labelled as an image of it.
 */
export function SankeyChart(props: { result: PathsResult; onPick?: (node: number) => void }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const latest = useRef(props);
  latest.current = props;
  const [noCanvas, setNoCanvas] = useState(false);
  useEffect(() => {
    const el = canvas.current;
    if (!el || !el.getContext?.("2d")) {
      setNoCanvas(true);
      return;
    }
    const { flows, labels, columns } = sankeyData(props.result);
    // One colour per node name, so that a page is the same colour in
    // every step.
    const names = [...new Set(Object.values(labels))];
    const color = (key: string) => seriesColor(Math.max(0, names.indexOf(labels[key])));
    const config = {
      type: "sankey",
      data: {
        datasets: [
          {
            label: "Users",
            data: flows,
            labels,
            column: columns,
            colorFrom: (c: { raw?: { from: string } }) => color(c.raw?.from ?? ""),
            colorTo: (c: { raw?: { to: string } }) => color(c.raw?.to ?? ""),
            colorMode: "gradient",
            size: "max",
            borderWidth: 0,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (item: { raw: { from: string; to: string; flow: number } }) =>
                ` ${labels[item.raw.from]} → ${labels[item.raw.to]}: ${num(item.raw.flow)} users`,
            },
          },
        },
        onClick: (_evt: unknown, els: { index: number }[]) => {
          const pick = latest.current.onPick;
          const hit = els[0];
          if (!pick || !hit) return;
          const f = flows[hit.index];
          const node = nodeOfKey(latest.current.result.backward ? f.from : f.to);
          if (node !== null) pick(node);
        },
      },
    };
    const chart = new Chart(el, config as unknown as ChartConfiguration);
    return () => chart.destroy();
  }, [JSON.stringify(props.result)]);
  if (noCanvas) return null;
  return (
    <div class="sankey-wrap">
      <canvas ref={canvas} role="img" aria-label="Paths as flows between steps; the table below lists every node" data-testid="paths-sankey" />
    </div>
  );
}
