import type { Change } from "../compare";

/** Figure is one card of the Overview's row of figures. */
export interface Figure {
  /** id names the card's test ids: stat-<id> for the value, change-<id> for the change. */
  id: string;
  label: string;
  /** value is null while it loads. */
  value: number | null;
  /** failed shows a dash in place of the value. */
  failed?: boolean;
  format: (n: number) => string;
  hint?: string;
  /** change against the previous period; null while either period loads. */
  change: Change | null;
}

/** arrows repeat a change's sign for the eye, on the figure cards and the Goals card. */
export const arrows: Record<Change["direction"], string> = { up: "↑", down: "↓", flat: "→", new: "★" };

/**
 * FigureCards is a row of figures (as Plausible's top row), each with its
 * change against the previous period: an arrow and "+12 %" coloured as good
 * or bad news (a rise in bounce rate is bad), and for a screen reader the
 * change in words ("up 12 % from the previous 7 days"), which the arrow and
 * the colour only repeat.
 */
export function FigureCards(props: { figures: Figure[] }) {
  return (
    <div class="stats figures">
      {props.figures.map((f) => (
        <div class="stat card" key={f.id}>
          <span class="stat-label">{f.label}</span>
          <span class="stat-value" data-testid={`stat-${f.id}`}>
            {f.value !== null ? f.format(f.value) : f.failed ? "—" : <span class="skeleton-text" />}
          </span>
          {f.change ? (
            <span class={`change change-${f.change.tone}`} data-testid={`change-${f.id}`} data-direction={f.change.direction}>
              <span aria-hidden="true">
                {arrows[f.change.direction]} {f.change.text}
              </span>
              <span class="visually-hidden">{f.change.spoken}</span>
            </span>
          ) : (
            <span class="change change-neutral" aria-hidden="true">
              {"\u00a0"}
            </span>
          )}
          {f.hint ? <span class="hint">{f.hint}</span> : null}
        </div>
      ))}
    </div>
  );
}
