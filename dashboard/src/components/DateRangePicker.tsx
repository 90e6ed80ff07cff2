import { useEffect, useRef, useState } from "preact/hooks";
import { checkCustom, describe, presetRange, presets, timeZone, type DateRange, type PresetKey } from "../range";

/**
 * DateRangePicker chooses a preset or a custom range. The range itself
 * lives in the URL; the picker reports changes through onChange.
 */
export function DateRangePicker(props: { range: DateRange; onChange: (r: DateRange) => void }) {
  const [custom, setCustom] = useState(props.range.key === "custom");
  const [from, setFrom] = useState(props.range.from);
  const [to, setTo] = useState(props.range.to);
  const [error, setError] = useState<string | null>(null);
  // choosing is set while the person has Custom… open and not applied: a
  // range that arrives meanwhile (the app catching up with a preset picked
  // a moment before) must not close the form or overwrite the dates typed.
  const choosing = useRef(false);
  useEffect(() => {
    if (choosing.current && props.range.key !== "custom") return;
    choosing.current = false;
    setCustom(props.range.key === "custom");
    setFrom(props.range.from);
    setTo(props.range.to);
    setError(null);
  }, [props.range.key, props.range.from, props.range.to]);

  const pick = (value: string) => {
    if (value === "custom") {
      choosing.current = true;
      setCustom(true);
      return;
    }
    choosing.current = false;
    setCustom(false);
    const p = presets.find((x) => x.key === value);
    if (p) props.onChange(presetRange(p.key as PresetKey));
  };
  const apply = (e: Event) => {
    e.preventDefault();
    const why = checkCustom(from, to);
    setError(why);
    if (!why) props.onChange({ key: "custom", from, to });
  };

  return (
    <div class="range-picker">
      <label class="switcher">
        <span class="label">Dates</span>
        <select aria-label="Date range" value={custom ? "custom" : props.range.key} onChange={(e) => pick((e.currentTarget as HTMLSelectElement).value)}>
          {presets.map((p) => (
            <option key={p.key} value={p.key}>
              {p.label}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {custom ? (
        <form class="custom-range" onSubmit={apply} aria-label="Custom date range">
          <input type="date" aria-label="From" value={from} required onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} />
          <span aria-hidden="true">–</span>
          <input type="date" aria-label="To" value={to} required onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)} />
          <button type="submit" class="button small">
            Apply
          </button>
          {error ? (
            <span class="field-error" role="alert">
              {error}
            </span>
          ) : null}
        </form>
      ) : null}
      <span class="range-days" title={`Days in ${timeZone()}, both included`}>
        {props.range.key === "custom" ? describe(props.range) : `${props.range.from} – ${props.range.to}`}
      </span>
      <span class="range-zone muted" data-testid="range-zone">
        Times in {timeZone()}
      </span>
    </div>
  );
}
