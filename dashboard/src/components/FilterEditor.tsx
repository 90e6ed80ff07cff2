import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import type { FilterRequest, Operator } from "../types";

/** The operators of docs/queries.md, as people read them. */
export const operators: { value: Operator; label: string }[] = [
  { value: "eq", label: "equals" },
  { value: "neq", label: "does not equal" },
  { value: "contains", label: "contains" },
  { value: "not_contains", label: "does not contain" },
  { value: "regex", label: "matches regex" },
  { value: "gt", label: "greater than" },
  { value: "lt", label: "less than" },
  { value: "is_set", label: "is set" },
  { value: "is_not_set", label: "is not set" },
];

/** The cohort filter's operators (docs/queries.md, "Cohort filters"). */
export type CohortOperator = "in" | "not_in";
export const cohortOperators: { value: CohortOperator; label: string }[] = [
  { value: "in", label: "is in cohort" },
  { value: "not_in", label: "is not in cohort" },
];

/** The property a cohort filter names. */
export const cohortProperty = "cohort";

/** A cohort a filter may name, as the product's list has it. */
export interface CohortOption {
  id: number;
  name: string;
}

/**
 * useCohortOptions lists the product's cohorts for cohort filters, by
 * name; none while loading or when the list cannot be read, and none
 * asked for unless enabled (a shared link's view may not read the list).
 */
export function useCohortOptions(product: number, enabled = true): CohortOption[] {
  const [cohorts, setCohorts] = useState<CohortOption[]>([]);
  useEffect(() => {
    let live = true;
    setCohorts([]);
    if (!enabled) return;
    api.cohorts(product).then(
      (r) => live && setCohorts(r.items.map((c) => ({ id: c.id, name: c.name }))),
      () => live && setCohorts([]),
    );
    return () => {
      live = false;
    };
  }, [product, enabled]);
  return cohorts;
}

export interface FilterDraft {
  property: string;
  operator: Operator | CohortOperator;
  /** The value as typed; for a cohort filter, the cohort's id. */
  value: string;
}

/**
 * filtersFromSearch reads filters from a URL's ?filter=property:operator:value
 * values (property:operator for is_set and is_not_set), at most 20; a value
 * that names no operator is left out.
 */
export function filtersFromSearch(values: string[]): FilterDraft[] {
  const filters: FilterDraft[] = [];
  // The operator is the first ":name:" (or final ":name") that names one:
  // a property rarely holds one, a value (a URL) often has colons.
  const re = new RegExp(`^(.+?):(${[...operators, ...cohortOperators].map((o) => o.value).join("|")})(?::(.*))?$`, "s");
  for (const f of values) {
    const m = re.exec(f);
    if (m) filters.push({ property: m[1], operator: m[2] as FilterDraft["operator"], value: m[3] ?? "" });
  }
  return filters.slice(0, 20);
}

/** filterSearch writes filters as filtersFromSearch reads them. */
export function filterSearch(filters: FilterDraft[]): string[] {
  return filters.map((f) => (f.operator === "is_set" || f.operator === "is_not_set" ? `${f.property}:${f.operator}` : `${f.property}:${f.operator}:${f.value}`));
}

/** draftFilters turns filters as the API has them into the editor's. */
export function draftFilters(fs: FilterRequest[] | null | undefined): FilterDraft[] {
  return (fs ?? []).map((f) => ({ property: f.property, operator: f.operator, value: f.value === undefined || f.value === null ? "" : String(f.value) }));
}

/** isCohortFilter reports whether a drafted filter is on cohort membership. */
export function isCohortFilter(f: FilterDraft): boolean {
  return f.property.trim() === cohortProperty;
}

/** filterRequest turns a drafted filter into the API's: numbers for gt and lt and a cohort's id, no value for is_set. */
export function filterRequest(f: FilterDraft): FilterRequest {
  if (isCohortFilter(f)) return { property: cohortProperty, operator: f.operator as CohortOperator, value: Number(f.value) };
  const operator = f.operator as Operator;
  if (operator === "is_set" || operator === "is_not_set") return { property: f.property.trim(), operator };
  if (operator === "gt" || operator === "lt") return { property: f.property.trim(), operator, value: Number(f.value) };
  return { property: f.property.trim(), operator, value: f.value };
}

/** checkFilter returns why a drafted filter cannot run, or null. */
export function checkFilter(f: FilterDraft): string | null {
  if (!f.property.trim()) return "Every filter needs a property.";
  if (isCohortFilter(f)) {
    if (f.operator !== "in" && f.operator !== "not_in") return "A cohort filter is “is in cohort” or “is not in cohort”.";
    if (!/^[1-9]\d*$/.test(f.value)) return "Pick the cohort of the cohort filter.";
    return null;
  }
  if (f.operator === "in" || f.operator === "not_in") return `“${f.property}” takes a comparison, not a cohort's.`;
  if ((f.operator === "gt" || f.operator === "lt") && (f.value.trim() === "" || Number.isNaN(Number(f.value))))
    return `“${f.property}” ${f.operator === "gt" ? "greater than" : "less than"} needs a number.`;
  return null;
}

/** setProperty changes a drafted filter's property, moving its operator between a property's and a cohort's. */
function setProperty(f: FilterDraft, property: string): FilterDraft {
  const next = { ...f, property };
  const cohort = isCohortFilter(next);
  if (cohort && f.operator !== "in" && f.operator !== "not_in") return { ...next, operator: "in", value: "" };
  if (!cohort && (f.operator === "in" || f.operator === "not_in")) return { ...next, operator: "eq", value: "" };
  return next;
}

/**
 * FilterEditor edits a list of property filters, the trend's shape: a
 * property (a column or properties.<key>, suggested from the list named
 * list), an operator, and a value unless the operator takes none. The
 * Trends page edits its filters with it, and the Funnels page each step's
 * and each exclusion's; name says whose filters they are in the labels
 * ("Filter 2 property", "Step 1 filter 2 property"). The property
 * "cohort" makes a cohort filter: its operators are "is in cohort" and "is
 * not in cohort", and its value is picked from cohorts (the product's).
 */
export function FilterEditor(props: {
  filters: FilterDraft[];
  onChange: (f: FilterDraft[]) => void;
  list?: string;
  empty?: string;
  name?: string;
  max?: number;
  cohorts?: CohortOption[] | null;
}) {
  const { filters } = props;
  const label = props.name ? `${props.name} filter` : "Filter";
  const setF = (i: number, patch: Partial<FilterDraft>) => props.onChange(filters.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <>
      {filters.length === 0 && props.empty ? <p class="hint">{props.empty}</p> : null}
      <ul class="rows">
        {filters.map((f, i) => (
          <li key={i} class="row">
            <input
              type="text"
              aria-label={`${label} ${i + 1} property`}
              placeholder="path or properties.plan"
              list={props.list}
              value={f.property}
              onInput={(e) => {
                const property = e.currentTarget.value;
                props.onChange(filters.map((x, j) => (j === i ? setProperty(x, property) : x)));
              }}
            />
            <select aria-label={`${label} ${i + 1} operator`} value={f.operator} onChange={(e) => setF(i, { operator: e.currentTarget.value as FilterDraft["operator"] })}>
              {(isCohortFilter(f) ? cohortOperators : operators).map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
            {isCohortFilter(f) ? (
              <select aria-label={`${label} ${i + 1} cohort`} value={f.value} onChange={(e) => setF(i, { value: e.currentTarget.value })}>
                <option value="">{props.cohorts?.length ? "Pick a cohort" : "No cohort yet"}</option>
                {(props.cohorts ?? []).map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.name}
                  </option>
                ))}
                {f.value && !(props.cohorts ?? []).some((c) => String(c.id) === f.value) ? <option value={f.value}>Cohort {f.value}</option> : null}
              </select>
            ) : f.operator === "is_set" || f.operator === "is_not_set" ? null : (
              <input
                type="text"
                inputMode={f.operator === "gt" || f.operator === "lt" ? "decimal" : "text"}
                aria-label={`${label} ${i + 1} value`}
                value={f.value}
                onInput={(e) => setF(i, { value: e.currentTarget.value })}
              />
            )}
            <button type="button" class="icon-button" aria-label={`Remove ${label.toLowerCase()} ${i + 1}`} onClick={() => props.onChange(filters.filter((_, j) => j !== i))}>
              ✕
            </button>
          </li>
        ))}
      </ul>
      <button
        type="button"
        class="button secondary small"
        disabled={filters.length >= (props.max ?? 20)}
        onClick={() => props.onChange([...filters, { property: "path", operator: "eq", value: "" }])}
      >
        {props.name ? `Add ${props.name.toLowerCase()} filter` : "Add filter"}
      </button>
    </>
  );
}
