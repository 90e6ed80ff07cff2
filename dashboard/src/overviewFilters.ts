// The Overview's filters (docs/dashboard.md, "Filters"): what a click on a
// card's row adds, how the filters sit in the URL, and what each query of
// the page sends for them. Kept apart from the page so that every card
// reads them from one context rather than through every prop.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { countryName } from "./components/Countries";
import { deviceName, screenName } from "./components/Devices";
import { channelNames } from "./pages/Acquisition";
import { useQueryState } from "./router";
import type { FilterRequest, SessionsRequest } from "./types";

/**
 * OverviewFilter is one chip: the property is value. An empty value is the
 * rows "(none)" and "Unknown". With the property "cohort" the value is a
 * cohort's id, and negated keeps the users not in it.
 */
export interface OverviewFilter {
  property: string;
  value: string;
  negated?: boolean;
}

/** The property of a cohort filter, picked from the Overview's cohort menu rather than a row. */
export const cohortFilter = "cohort";

/** A person property's filter is `person.` and the trait's key ("person.plan"), typed in the Overview's head. */
export function isPersonProperty(property: string): boolean {
  return property.startsWith("person.") && property.length > "person.".length;
}

/** personKeyProblem says why a typed trait key cannot be filtered by, or null. */
export function personKeyProblem(key: string): string | null {
  if (key === "") return "Name the property, such as plan.";
  if (key.startsWith("$") || key.startsWith("/")) return "A property's name does not start with $ or /.";
  if (key.includes(",")) return "A property's name here has no comma.";
  if (new TextEncoder().encode(key).length > 193) return "A property's name is at most 193 bytes.";
  return null;
}

/** onlyShared keeps the filters a shared link answers: no cohort and no person property, whose counts the link's viewer must not learn. */
export function onlyShared(fs: OverviewFilter[]): OverviewFilter[] {
  return fs.filter((f) => f.property !== cohortFilter && !isPersonProperty(f.property));
}

/** The properties the Overview's rows filter by, as the chips name them. */
export const filterProperties: Record<string, string> = {
  path: "Page",
  entry_page: "Entry page",
  exit_page: "Exit page",
  source: "Source",
  referrer: "Referrer",
  channel: "Channel",
  utm_source: "UTM source",
  utm_medium: "UTM medium",
  utm_campaign: "UTM campaign",
  country: "Country",
  region: "Region",
  city: "City",
  browser: "Browser",
  os: "OS",
  device_type: "Device",
  screen_class: "Screen size",
  cohort: "Cohort",
};

/** Entry and exit pages are a visit's, not an event's: only the sessions query takes them. */
export function isVisitProperty(property: string): boolean {
  return property === "entry_page" || property === "exit_page";
}

/** valueName is a filter's value as its card shows it ("DE" is "Germany"). */
export function valueName(f: OverviewFilter): string {
  switch (f.property) {
    case "country":
      return countryName(f.value);
    case "channel":
      return channelNames[f.value] ?? (f.value || "(none)");
    case "device_type":
      return deviceName(f.value || "(none)");
    case "screen_class":
      return screenName(f.value || "(none)");
  }
  return f.value || "(none)";
}

/**
 * describeFilter is a chip's text: "Country is Germany", or for a cohort
 * "In cohort Beta testers" (cohortName names it; without a name, its id).
 */
export function describeFilter(f: OverviewFilter, cohortName?: (id: string) => string | undefined): string {
  if (f.property === cohortFilter) return `${f.negated ? "Not in" : "In"} cohort ${cohortName?.(f.value) ?? `#${f.value}`}`;
  if (isPersonProperty(f.property)) return `Person ${f.property.slice("person.".length)} is ${f.value || "(none)"}`;
  return `${filterProperties[f.property] ?? f.property} is ${valueName(f)}`;
}

/**
 * The URL holds the filters as Plausible's does, one parameter repeated:
 * ?f=is,country,DE&f=is,source,Google, a cohort's as is or is_not and its
 * id: f=is_not,cohort,12, and a person property's by its key:
 * f=is,person.plan,pro. The value is everything after the second
 * comma, so a value with commas survives; an entry whose property the
 * Overview does not know, or a cohort that is not an id, is dropped.
 */
export function parseFilters(values: string[]): OverviewFilter[] | null {
  const out: OverviewFilter[] = [];
  for (const v of values) {
    const m = /^(is|is_not),([a-z_]+|person\.[^,]+),([\s\S]*)$/.exec(v);
    if (!m || !(m[2] in filterProperties || isPersonProperty(m[2])) || out.some((f) => f.property === m[2])) continue;
    if (isPersonProperty(m[2]) && personKeyProblem(m[2].slice("person.".length))) continue;
    const cohort = m[2] === cohortFilter;
    if (cohort ? !/^[1-9][0-9]{0,17}$/.test(m[3]) : m[1] !== "is") continue;
    out.push(cohort ? { property: m[2], value: m[3], negated: m[1] === "is_not" } : { property: m[2], value: m[3] });
  }
  return out.length ? out : null;
}

export function formatFilters(fs: OverviewFilter[]): string[] {
  return fs.map((f) => `${f.negated ? "is_not" : "is"},${f.property},${f.value}`);
}

/** eventFilters are the filters a trend takes: every event property, the empty value as "not set". */
export function eventFilters(fs: OverviewFilter[]): FilterRequest[] {
  return fs
    .filter((f) => !isVisitProperty(f.property))
    .map((f): FilterRequest => {
      if (f.property === cohortFilter) return { property: "cohort", operator: f.negated ? "not_in" : "in", value: Number(f.value) };
      return f.value === "" ? { property: f.property, operator: "is_not_set" } : { property: f.property, operator: "eq", value: f.value };
    });
}

/** sessionFilters are the sessions query's: the event filters and the entry and exit pages. */
export function sessionFilters(fs: OverviewFilter[]): NonNullable<SessionsRequest["filters"]> {
  return [
    ...eventFilters(fs),
    ...fs.filter((f) => isVisitProperty(f.property)).map((f) => ({ property: f.property as "entry_page" | "exit_page", operator: "eq" as const, value: f.value })),
  ];
}

/**
 * FilterScope is what the Overview's cards read: the filters, and add,
 * which a row calls. A value of a property already filtered replaces it
 * (as a click does in Plausible): the filters of different properties
 * combine, all of them must hold.
 */
export interface FilterScope {
  filters: OverviewFilter[];
  add: (f: OverviewFilter) => void;
}

export const FiltersContext = createContext<FilterScope | null>(null);

/** useFilterScope is the Overview's filters, or null outside it (Acquisition's cards do not filter). */
export function useFilterScope(): FilterScope | null {
  return useContext(FiltersContext);
}

/**
 * visitOnly names the entry or exit page filter a page-view card cannot
 * take (a page view has no entry page), or null without one.
 */
export function visitOnly(fs: OverviewFilter[]): string | null {
  const f = fs.find((x) => isVisitProperty(x.property));
  return f ? (filterProperties[f.property] ?? f.property).toLowerCase() : null;
}

/** useOverviewFilters keeps the filters in the URL: each change a new history entry, so back undoes it. */
export function useOverviewFilters(): [OverviewFilter[], (fs: OverviewFilter[]) => void] {
  return useQueryState<OverviewFilter[]>("f", [], parseFilters, formatFilters);
}

/** withFilter is fs with f added, replacing a filter of the same property. */
export function withFilter(fs: OverviewFilter[], f: OverviewFilter): OverviewFilter[] {
  const i = fs.findIndex((x) => x.property === f.property);
  return i < 0 ? [...fs, f] : fs.map((x, k) => (k === i ? f : x));
}
