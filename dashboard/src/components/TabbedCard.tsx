import { useState } from "preact/hooks";
import type { DataEnv } from "../types";
import { BreakdownTable, type BreakdownTableProps } from "./BreakdownCard";

/** BreakdownTab is one tab of a TabbedCard: its name and the table it shows. */
export type BreakdownTab = { tab: string } & Omit<BreakdownTableProps, "product" | "from" | "to" | "env">;

/**
 * TabbedCard is an Overview card of several small breakdown tables, one
 * tab each, as Plausible's Devices and Sources cards are: the title, the
 * tabs beside it (a tablist; each tab a button), and the table of the tab
 * shown. id names the tabs' and the panel's ids; only the tab shown is
 * drawn, so only it asks the server.
 */
export function TabbedCard(props: { product: number; from: string; to: string; env: DataEnv; id: string; title: string; by: string; tabs: BreakdownTab[] }) {
  const [shown, setShown] = useState(0);
  const { tab: _, ...table } = props.tabs[shown];
  return (
    <section class="card" aria-label={props.title}>
      <div class="section-head tight">
        <h2>{props.title}</h2>
        <div class="tabs" role="tablist" aria-label={props.by}>
          {props.tabs.map((t, i) => (
            <button
              key={t.tab}
              type="button"
              role="tab"
              id={`${props.id}-tab-${i}`}
              aria-selected={i === shown ? "true" : "false"}
              aria-controls={`${props.id}-panel`}
              onClick={() => setShown(i)}
            >
              {t.tab}
            </button>
          ))}
        </div>
      </div>
      <div role="tabpanel" id={`${props.id}-panel`} aria-labelledby={`${props.id}-tab-${shown}`}>
        <BreakdownTable key={table.property} product={props.product} from={props.from} to={props.to} env={props.env} {...table} />
      </div>
    </section>
  );
}
