import { useEffect, useState } from "preact/hooks";
import { api, type Days } from "../api";
import { plural } from "../format";
import type { DataEnv, EventNames } from "../types";

/**
 * useEventNamesResult loads the event names the product received in the
 * range, most frequent first (GET /api/v1/query/events), from live data
 * or, with env "test", from test keys, with whether the product ever
 * received an event: how pages tell a range without events from a product
 * that has none yet. null while loading or when the call failed.
 */
export function useEventNamesResult(product: number | null, days: Days, env: DataEnv = "live"): EventNames | null {
  const [result, setResult] = useState<EventNames | null>(null);
  useEffect(() => {
    if (product === null) return;
    let live = true;
    setResult(null);
    api.eventNames(product, days, env).then(
      (r) => live && setResult(r),
      () => live && setResult(null),
    );
    return () => {
      live = false;
    };
  }, [product, days.from, days.to, env]);
  return result;
}

/**
 * useEventNames is the names of useEventNamesResult: the suggestions of
 * the builders. null while loading or when the call failed (the builders
 * then work without suggestions).
 */
export function useEventNames(product: number | null, days: Days, env: DataEnv = "live"): { name: string; count: number }[] | null {
  return useEventNamesResult(product, days, env)?.events ?? null;
}

/** EventList is the shared <datalist> of event names the inputs suggest from. */
export function EventList(props: { id: string; names: { name: string; count: number }[] | null }) {
  return (
    <datalist id={props.id}>
      {(props.names ?? []).map((n) => (
        <option key={n.name} value={n.name}>
          {plural(n.count, "event")}
        </option>
      ))}
    </datalist>
  );
}

/** EventInput is a text input for an event name with the datalist's suggestions. */
export function EventInput(props: {
  label: string;
  value: string;
  list: string;
  onChange: (v: string) => void;
  name?: string;
  id?: string;
  placeholder?: string;
  /** The id of its hint or error. */
  describedBy?: string;
  invalid?: boolean;
}) {
  return (
    <input
      type="text"
      class="event-input"
      id={props.id}
      name={props.name}
      aria-label={props.label}
      aria-describedby={props.describedBy}
      aria-invalid={props.invalid || undefined}
      list={props.list}
      value={props.value}
      placeholder={props.placeholder}
      autocomplete="off"
      spellcheck={false}
      onInput={(e) => props.onChange(e.currentTarget.value)}
    />
  );
}
