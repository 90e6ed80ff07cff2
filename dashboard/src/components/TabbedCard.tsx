import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

/**
 * TabbedCard is an Overview card of several small tables, one tab each, as
 * Plausible's Devices and Sources cards are: the title, the tabs beside it
 * (a tablist, arrow-free: each tab is a button), and the panel of the tab
 * shown, which children draws from its index. id names the tabs' and the
 * panel's ids; only the tab shown is drawn, so only it asks the server.
 */
export function TabbedCard(props: { id: string; title: string; by: string; tabs: readonly string[]; children: (shown: number) => ComponentChildren }) {
  const [shown, setShown] = useState(0);
  return (
    <section class="card" aria-label={props.title}>
      <div class="section-head tight">
        <h2>{props.title}</h2>
        <div class="tabs" role="tablist" aria-label={props.by}>
          {props.tabs.map((tab, i) => (
            <button
              key={tab}
              type="button"
              role="tab"
              id={`${props.id}-tab-${i}`}
              aria-selected={i === shown ? "true" : "false"}
              aria-controls={`${props.id}-panel`}
              onClick={() => setShown(i)}
            >
              {tab}
            </button>
          ))}
        </div>
      </div>
      <div role="tabpanel" id={`${props.id}-panel`} aria-labelledby={`${props.id}-tab-${shown}`}>
        {props.children(shown)}
      </div>
    </section>
  );
}
