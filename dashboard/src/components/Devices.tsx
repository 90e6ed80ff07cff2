import type { DataEnv } from "../types";
import { TabbedCard, type BreakdownTab } from "./TabbedCard";

/** What the device type's values mean (docs/ingest.md, "Devices"). */
const deviceTypes: Record<string, string> = { desktop: "Desktop", mobile: "Mobile", tablet: "Tablet", bot: "Bot" };

/** The screen classes by the viewport widths they hold (docs/ingest.md, "Devices"). */
const screenClasses: Record<string, string> = {
  mobile: "Mobile (below 576 px)",
  tablet: "Tablet (576–991 px)",
  laptop: "Laptop (992–1439 px)",
  desktop: "Desktop (1440 px and wider)",
};

/** named labels a value by names, the empty value as "Unknown", any other as it is. */
const named = (names: Record<string, string>) => (v: string) => (v === "(none)" ? "Unknown" : (names[v] ?? v));

/** deviceName and screenName name a device type and a screen class as the card shows them. */
export const deviceName = named(deviceTypes);
export const screenName = named(screenClasses);

/**
 * The Devices card's tabs: each a breakdown of page views, whose table
 * keeps the name the Browsers and Operating systems cards had.
 */
const tabs: BreakdownTab[] = [
  { tab: "Browser", property: "browser", heading: "Browser", tableLabel: "Browsers" },
  { tab: "OS", property: "os", heading: "OS", tableLabel: "Operating systems" },
  { tab: "Device", property: "device_type", heading: "Device", tableLabel: "Device types", label: deviceName },
  { tab: "Screen", property: "screen_class", heading: "Screen size", tableLabel: "Screen sizes", label: screenName },
];

/**
 * Devices is the Overview's card of what visitors use (issue 37, item 3):
 * browser, operating system, device type and screen size, one tab each as
 * Plausible's Devices card has them, so that four small tables take one
 * card's room. Only the tab shown asks the server.
 */
export function Devices(props: { product: number; from: string; to: string; env: DataEnv }) {
  return <TabbedCard {...props} id="devices" title="Devices" by="Devices by" tabs={tabs} />;
}
