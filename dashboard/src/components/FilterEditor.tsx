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

export interface FilterDraft {
  property: string;
  operator: Operator;
  value: string;
}

/** filterRequest turns a drafted filter into the API's: numbers for gt and lt, no value for is_set. */
export function filterRequest(f: FilterDraft): FilterRequest {
  if (f.operator === "is_set" || f.operator === "is_not_set") return { property: f.property.trim(), operator: f.operator };
  if (f.operator === "gt" || f.operator === "lt") return { property: f.property.trim(), operator: f.operator, value: Number(f.value) };
  return { property: f.property.trim(), operator: f.operator, value: f.value };
}

/**
 * FilterEditor edits a list of property filters, the trend's shape: a
 * property (a column or properties.<key>, suggested from the list named
 * list), an operator, and a value unless the operator takes none. The
 * Trends page edits its filters with it, and the Funnels page each step's
 * and each exclusion's; name says whose filters they are in the labels
 * ("Filter 2 property", "Step 1 filter 2 property").
 */
export function FilterEditor(props: { filters: FilterDraft[]; onChange: (f: FilterDraft[]) => void; list?: string; empty?: string; name?: string; max?: number }) {
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
              onInput={(e) => setF(i, { property: e.currentTarget.value })}
            />
            <select aria-label={`${label} ${i + 1} operator`} value={f.operator} onChange={(e) => setF(i, { operator: e.currentTarget.value as Operator })}>
              {operators.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
            {f.operator === "is_set" || f.operator === "is_not_set" ? null : (
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
