import { cohortFilter, describeFilter, type OverviewFilter } from "../overviewFilters";

/**
 * FilterChips shows the Overview's filters above its figures, one chip a
 * filter ("Country is Germany ×"), as Plausible's filter bar does: the ×
 * removes that filter, and with two or more "Clear all" removes them all.
 * Nothing is shown without a filter. The list is labelled so that a
 * screen reader hears what the page is filtered by. cohortName names a
 * cohort filter's cohort.
 */
export function FilterChips(props: { filters: OverviewFilter[]; onChange: (fs: OverviewFilter[]) => void; cohortName?: (id: string) => string | undefined }) {
  const fs = props.filters;
  if (fs.length === 0) return null;
  return (
    <div class="filter-chips" data-testid="filter-chips">
      <ul aria-label="Filters">
        {fs.map((f) => {
          const text = describeFilter(f, props.cohortName);
          return (
            <li class="chip" key={f.property}>
              <span>{text}</span>
              <button
                type="button"
                class="chip-remove"
                aria-label={`Remove filter ${text}`}
                title="Remove this filter"
                onClick={() => props.onChange(fs.filter((x) => x.property !== f.property))}
              >
                ×
              </button>
            </li>
          );
        })}
      </ul>
      {fs.length > 1 ? (
        <button type="button" class="link-button" onClick={() => props.onChange([])}>
          Clear all
        </button>
      ) : null}
    </div>
  );
}

/**
 * CohortPicker adds a cohort filter to the Overview ("In cohort …" or "Not
 * in cohort …"), one menu of the product's cohorts; a pick replaces the
 * cohort filter there was. Nothing is shown without a cohort.
 */
export function CohortPicker(props: { cohorts: { id: number; name: string }[]; onPick: (f: OverviewFilter) => void }) {
  if (props.cohorts.length === 0) return null;
  return (
    <label class="cohort-picker">
      <span class="visually-hidden">Filter by cohort</span>
      <select
        value=""
        onChange={(e) => {
          const [op, id] = e.currentTarget.value.split(":");
          e.currentTarget.value = "";
          if (id) props.onPick({ property: cohortFilter, value: id, negated: op === "not_in" });
        }}
      >
        <option value="">Filter by cohort…</option>
        <optgroup label="In cohort">
          {props.cohorts.map((c) => (
            <option key={`in${c.id}`} value={`in:${c.id}`}>
              In {c.name}
            </option>
          ))}
        </optgroup>
        <optgroup label="Not in cohort">
          {props.cohorts.map((c) => (
            <option key={`not${c.id}`} value={`not_in:${c.id}`}>
              Not in {c.name}
            </option>
          ))}
        </optgroup>
      </select>
    </label>
  );
}
