import { useState } from "preact/hooks";
import { cohortFilter, describeFilter, personKeyProblem, type OverviewFilter } from "../overviewFilters";

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

/**
 * PersonFilterForm adds a person property's filter to the Overview: the
 * trait's key and the value its persons have ("plan" is "pro"); an empty
 * value keeps the persons without it. A second value of the same key
 * replaces the first, as a row's click does.
 */
export function PersonFilterForm(props: { onPick: (f: OverviewFilter) => void }) {
  const [open, setOpen] = useState(false);
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <details class="person-filter" open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Person property…</summary>
      <form
        aria-label="Filter by a person property"
        onSubmit={(e) => {
          e.preventDefault();
          const k = key.trim();
          const why = personKeyProblem(k);
          setProblem(why);
          if (why) return;
          props.onPick({ property: `person.${k}`, value: value.trim() });
          setKey("");
          setValue("");
          setOpen(false);
        }}
      >
        <label>
          Property
          <input name="personKey" value={key} placeholder="plan" onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <label>
          is
          <input name="personValue" value={value} placeholder="pro" onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <button type="submit">Filter</button>
        {problem ? (
          <p class="form-error" role="alert">
            {problem}
          </p>
        ) : null}
      </form>
    </details>
  );
}
