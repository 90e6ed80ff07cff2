import { TimeChart } from "../charts/TimeChart";
import { num } from "../charts/time";
import type { FunnelResult } from "../types";

/** FunnelView is what the Funnels page shows of a funnel: its steps, how long each step took, or conversion over time. */
export type FunnelView = "steps" | "time_to_convert" | "trends";
export const funnelViews: readonly FunnelView[] = ["steps", "time_to_convert", "trends"];
/** The buckets the Over time view groups entrants by: the API's day and ISO week. */
export type FunnelInterval = "day" | "week";
export const funnelIntervals: readonly FunnelInterval[] = ["day", "week"];

const viewNames: Record<FunnelView, string> = { steps: "Steps", time_to_convert: "Time to convert", trends: "Over time" };

/**
 * ViewSwitch picks the funnel's view. The API refuses a view with a
 * breakdown, so while one is set the other views are disabled and a hint
 * says why, rather than sending a request that fails.
 */
export function ViewSwitch(props: { view: FunnelView; breakdown: boolean; onChange: (v: FunnelView) => void }) {
  return (
    <div class="inline-form" role="group" aria-label="Funnel view" data-testid="funnel-views">
      {funnelViews.map((v) => (
        <button
          key={v}
          type="button"
          class={`button small${props.view === v ? "" : " secondary"}`}
          aria-pressed={props.view === v ? "true" : "false"}
          disabled={props.breakdown && v !== "steps"}
          onClick={() => props.onChange(v)}
        >
          {viewNames[v]}
        </button>
      ))}
      {props.breakdown ? (
        <span class="hint" data-testid="funnel-views-hint">
          Time to convert and Over time show the whole funnel: remove the breakdown to see them.
        </span>
      ) : null}
    </div>
  );
}

/** duration writes seconds as people read them: 45 s, 12 min, 3.5 h, 1 day, 2.1 days. */
export function duration(s: number): string {
  if (s < 60) return `${Math.round(s * 10) / 10} s`;
  if (s < 3600) return `${Math.round((s / 60) * 10) / 10} min`;
  if (s < 86400) return `${Math.round((s / 3600) * 10) / 10} h`;
  const d = Math.round((s / 86400) * 10) / 10;
  return d === 1 ? "1 day" : `${d} days`;
}

/** bucketName writes a histogram bucket: "10 s – 30 s", or "7 days and more" for the last. */
function bucketName(from: number, to: number | null): string {
  if (to === null) return `${duration(from)} and more`;
  if (from === 0) return `under ${duration(to)}`;
  return `${duration(from)} – ${duration(to)}`;
}

/**
 * TimeToConvert is the time_to_convert view: for each step after the
 * first, the median time its users took from the step before, and their
 * times as horizontal bars over the API's fixed buckets.
 */
export function TimeToConvert(props: { result: FunnelResult }) {
  const times = props.result.timeToConvert ?? [];
  return (
    <div data-testid="funnel-time">
      {times.map((t) => {
        const most = Math.max(1, ...t.histogram.map((b) => b.count));
        const name = props.result.steps[t.step]?.name ?? "";
        const before = props.result.steps[t.step - 1]?.name ?? "";
        return (
          <section key={t.step} class="funnel-time-step" data-testid="funnel-time-step">
            <h3>
              <span class="step-num">{t.step + 1}</span> {before} → {name}
            </h3>
            <p class="hint">
              Median:{" "}
              <strong data-testid="funnel-time-median">{t.medianSeconds === null ? "—" : duration(t.medianSeconds)}</strong> for{" "}
              {num(t.converted)} {t.converted === 1 ? "user" : "users"}
            </p>
            <div class="table-scroll">
              <table class="funnel-table">
                <caption class="visually-hidden">
                  Users by time taken from step {t.step} to step {t.step + 1}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Time taken</th>
                    <th scope="col" class="bar-col">
                      Users
                    </th>
                    <th scope="col" class="num">
                      Count
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {t.histogram.map((b, k) => (
                    <tr key={k} data-testid="funnel-time-bucket">
                      <th scope="row">{bucketName(b.fromSeconds, b.toSeconds)}</th>
                      <td class="bar-col">
                        <div class="hbar" aria-hidden="true">
                          <div class="hbar-fill" style={{ width: `${(b.count / most) * 100}%` }} />
                        </div>
                      </td>
                      <td class="num">{num(b.count)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        );
      })}
    </div>
  );
}

/**
 * OverTime is the trends view: the conversion from the first step to the
 * last of the users who entered in each bucket, as a line, with a table of
 * entrants, converted and conversion per bucket.
 */
export function OverTime(props: { result: FunnelResult; interval: FunnelInterval }) {
  const rows = props.result.overTime ?? [];
  return (
    <div data-testid="funnel-over-time">
      <TimeChart
        kind="line"
        interval={props.interval}
        buckets={rows.map((r) => r.date)}
        lines={[{ label: "Conversion %", data: rows.map((r) => r.conversionPct) }]}
        label="Conversion from the first step to the last, by when users entered"
        format={(v) => `${v}%`}
      />
      <div class="table-scroll">
        <table class="funnel-table" data-testid="funnel-over-time-table">
          <caption class="visually-hidden">Entrants and conversion per {props.interval}</caption>
          <thead>
            <tr>
              <th scope="col">{props.interval === "week" ? "Week of" : "Day"}</th>
              <th scope="col" class="num">
                Entered
              </th>
              <th scope="col" class="num">
                Converted
              </th>
              <th scope="col" class="num">
                Conversion
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.date} data-testid="funnel-over-time-row">
                <th scope="row">{r.date}</th>
                <td class="num">{num(r.entered)}</td>
                <td class="num">{num(r.converted)}</td>
                <td class="num">{r.conversionPct}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
