// The sidebar's entries, in order. Errors is listed only while the server
// runs with NEXT_PUBLIC_FEATURE_ERROR_TRACKING=true.

export interface NavItem {
  path: string;
  label: string;
  /** chart pages share the date-range picker and the Live/Test switch. */
  chart: boolean;
  /** env pages have the Live/Test switch without the date picker (a user's events have no range). */
  env?: boolean;
}

const items: readonly (NavItem & { feature?: "errorTracking" })[] = [
  { path: "/", label: "Overview", chart: true },
  { path: "/trends", label: "Trends", chart: true },
  { path: "/funnels", label: "Funnels", chart: true },
  { path: "/paths", label: "Paths", chart: true },
  { path: "/retention", label: "Retention", chart: true },
  { path: "/acquisition", label: "Acquisition", chart: true },
  { path: "/boards", label: "Dashboards", chart: true },
  { path: "/annotations", label: "Annotations", chart: false },
  { path: "/errors", label: "Errors", chart: true, feature: "errorTracking" },
  { path: "/replays", label: "Replays", chart: true },
  { path: "/users", label: "Users", chart: false, env: true },
  { path: "/people", label: "People", chart: false },
  { path: "/cohorts", label: "Cohorts", chart: false },
  { path: "/messages", label: "Messages", chart: false },
  { path: "/experiments", label: "Experiments", chart: false },
  { path: "/flags", label: "Flags", chart: false },
  { path: "/settings/products", label: "Settings", chart: false },
  // Not a product's setting: the reference of the whole HTTP API, read by
  // whoever writes against it, so an entry of its own, last.
  { path: "/api-reference", label: "API reference", chart: false },
];

/** navItems is the sidebar for the server's features. */
export function navItems(features: { errorTracking: boolean }): NavItem[] {
  return items.filter((i) => !i.feature || features[i.feature]).map(({ path, label, chart, env }) => (env ? { path, label, chart, env } : { path, label, chart }));
}

/** activeItem is the entry a path belongs to, if any: /flags/3 is under Flags. */
export function activeItem(list: readonly NavItem[], path: string): NavItem | undefined {
  if (path.startsWith("/settings")) return list.find((i) => i.path.startsWith("/settings"));
  return list.find((i) => i.path === path) ?? list.find((i) => i.path !== "/" && path.startsWith(i.path + "/"));
}
