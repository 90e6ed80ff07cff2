import { useEffect, useState } from "preact/hooks";
import { api } from "../api";

/**
 * useGroupTypes loads the group types a product has groups of (GET
 * /api/v1/groups), the choices of CountSelect; an empty list while loading or
 * when the request fails, so the selector still offers "Users".
 */
export function useGroupTypes(product: number): string[] {
  const [types, setTypes] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    setTypes([]);
    api.groups(product).then(
      (r) => live && setTypes(r.types),
      () => live && setTypes([]),
    );
    return () => {
      live = false;
    };
  }, [product]);
  return types;
}

/**
 * CountSelect picks what a trend or funnel counts: users (""), or the groups of
 * one type, such as companies (the request's aggregateBy; docs/queries.md,
 * "Counting groups"). A type the product has no groups of yet, as a saved query
 * may name, stays selectable.
 */
export function CountSelect(props: { types: string[]; value: string; onChange: (v: string) => void }) {
  const types = props.value && !props.types.includes(props.value) ? [...props.types, props.value] : props.types;
  return (
    <label>
      Count
      <select name="aggregateBy" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">Users</option>
        {types.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    </label>
  );
}
