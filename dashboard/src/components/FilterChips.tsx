import { describeFilter, type OverviewFilter } from "../overviewFilters";

/**
 * FilterChips shows the Overview's filters above its figures, one chip a
 * filter ("Country is Germany ×"), as Plausible's filter bar does: the ×
 * removes that filter, and with two or more "Clear all" removes them all.
 * Nothing is shown without a filter. The list is labelled so that a
 * screen reader hears what the page is filtered by.
 */
export function FilterChips(props: { filters: OverviewFilter[]; onChange: (fs: OverviewFilter[]) => void }) {
  const fs = props.filters;
  if (fs.length === 0) return null;
  return (
    <div class="filter-chips" data-testid="filter-chips">
      <ul aria-label="Filters">
        {fs.map((f) => {
          const text = describeFilter(f);
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
