import { channelNames } from "../pages/Acquisition";
import type { DataEnv } from "../types";
import type { BreakdownProps } from "./BreakdownCard";
import { TabbedCard } from "./TabbedCard";

/**
 * The Top sources card's tabs, as Plausible's Sources card has them: page
 * views by source (a source opens its full referrers), by channel and by
 * UTM tag. Each counts only the page views that have one (docs/ingest.md,
 * "Sources and channels"): a move within the site and a direct visit have
 * no source, and most page views no UTM tag.
 */
type Tab = BreakdownProps & { tab: string };
const tabs: Tab[] = (
  [
    {
      tab: "Source",
      property: "source",
      title: "Top sources",
      heading: "Source",
      empty: "No visit came from another site in this range.",
      detail: { property: "referrer", heading: "Referrer" },
    },
    { tab: "Channel", property: "channel", title: "Channels", heading: "Channel", label: (v: string) => channelNames[v] ?? v, empty: "No visit in this range." },
    { tab: "UTM source", property: "utm_source", title: "UTM sources", heading: "utm_source" },
    { tab: "UTM medium", property: "utm_medium", title: "UTM mediums", heading: "utm_medium" },
    { tab: "UTM campaign", property: "utm_campaign", title: "UTM campaigns", heading: "utm_campaign" },
  ] as Tab[]
).map((t) => ({
  ...t,
  filters: [{ property: t.property, operator: "is_set" }],
  empty: t.empty ?? `No page view carried ${t.property} in this range.`,
}));

/**
 * Sources is the Overview's Top sources card: one tab a breakdown, only
 * the tab shown asking the server (as the Devices card). The source opened
 * is the page's (open, onOpen), so that it stays in the URL.
 */
export function Sources(props: { product: number; from: string; to: string; env: DataEnv; open: string | null; onOpen: (v: string | null) => void }) {
  const { open, onOpen, ...scope } = props;
  const shown = tabs.map((t) => ({ ...t, tableLabel: t.title, ...(t.detail ? { open, onOpen } : {}) }));
  return <TabbedCard {...scope} id="sources" title="Top sources" by="Sources by" tabs={shown} />;
}
