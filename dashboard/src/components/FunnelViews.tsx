import { TimeChart } from "../charts/TimeChart";
import { num } from "../charts/time";
import { useQueryState } from "../router";
import type { FunnelResult } from "../types";

/** FunnelView is what the Funnels page shows of a funnel: its steps, how long each step took, or conversion over time. */
export type FunnelView = "steps" | "time_to_convert" | "trends";
export const funnelViews: readonly FunnelView[] = ["steps", "time_to_convert", "trends"];
/** The buckets the Over time view groups entrants by: the API's day and ISO week. */
export type FunnelInterval = "day" | "week";
export const funnelIntervals: readonly FunnelInterval[] = ["day", "week"];

const viewNames: Record<FunnelView, string> = { steps: "Steps", time_to_convert: "Time to convert", trends: "Over time" };

/**
 * ViewSwitch picks the funnel's view. Every view takes a breakdown: its
 * answer then has a row per value, each with the view's numbers.
 */
export function ViewSwitch(props: { view: FunnelView; onChange: (v: FunnelView) => void }) {
  return (
    <div class="inline-form" role="group" aria-label="Funnel view" data-testid="funnel-views">
      {funnelViews.map((v) => (
        <button
          key={v}
          type="button"
          class={`button small${props.view === v ? "" : " secondary"}`}
          aria-pressed={props.view === v ? "true" : "false"}
          onClick={() => props.onChange(v)}
        >
          {viewNames[v]}
        </button>
      ))}
    </div>
  );
}

type BreakdownRow = NonNullable<FunnelResult["breakdown"]>[number];

/** rowLabel names a breakdown row as the steps view's table does: its value, "(not set)" for "", or "Other values". */
export function rowLabel(r: BreakdownRow): string {
  return r.other ? "Other values" : r.breakdownValue === "" ? "(not set)" : r.breakdownValue ?? "";
}

/** rowKey names a breakdown row in the URL: "v:" and its value, or "other". */
export function rowKey(r: BreakdownRow): string {
  return r.other ? "other" : `v:${r.breakdownValue ?? ""}`;
}

/** overall is the conversion from the first step to the last, "—" when nobody entered: 12.5%. */
export function overall(first: number, last: number): string {
  return first ? `${Math.round((last / first) * 1000) / 10}%` : "—";
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
 * times as horizontal bars over the API's fixed buckets. With a
 * breakdown, a table of each row's median per step comes first (all
 * users, then the rows in the steps view's order), and the histograms
 * are those of the row picked under it, the first value's at first.
 */
export function TimeToConvert(props: { result: FunnelResult }) {
  const rows = props.result.breakdown ?? [];
  // The row whose histograms show, kept in the URL (?histograms=, rowKey
  // or "all"), so that a reload or a shared link shows the same; the
  // first row when it names none, or a row this answer does not have.
  const [picked, setPicked] = useQueryState<string>("histograms", "");
  if (!props.result.breakdown) return <StepHistograms steps={props.result.steps} times={props.result.timeToConvert ?? []} />;
  const found = rows.findIndex((r) => rowKey(r) === picked);
  // An index into rows, or -1 for all users.
  const shown = picked === "all" || !rows.length ? -1 : Math.max(found, 0);
  const times = shown < 0 ? props.result.timeToConvert ?? [] : rows[shown].timeToConvert ?? [];
  const who = shown < 0 ? "all users" : rowLabel(rows[shown]);
  return (
    <div data-testid="funnel-time">
      <TimesByRow result={props.result} />
      {rows.length ? (
        <label class="inline-form">
          Histograms of
          <select name="time-row" value={shown < 0 ? "all" : rowKey(rows[shown])} onChange={(e) => setPicked(e.currentTarget.value)}>
            {rows.map((r) => (
              <option key={rowKey(r)} value={rowKey(r)}>
                {rowLabel(r)}
              </option>
            ))}
            <option value="all">All users</option>
          </select>
        </label>
      ) : null}
      <StepHistograms steps={props.result.steps} times={times} who={who} />
    </div>
  );
}

/**
 * TimesByRow is the table of a broken-down time to convert: a row for all
 * users and one for each breakdown row, a column for each step after the
 * first with its median and how many users it is of.
 */
function TimesByRow(props: { result: FunnelResult }) {
  const rows = props.result.breakdown ?? [];
  const all = { label: "All users", times: props.result.timeToConvert ?? [] };
  return (
    <div class="table-scroll">
      <table class="funnel-table" data-testid="funnel-time-breakdown">
        <caption class="visually-hidden">Median time to convert to each step, by breakdown value</caption>
        <thead>
          <tr>
            <th scope="col">Value</th>
            {props.result.steps.slice(1).map((s, i) => (
              <th scope="col" key={i} class="num">
                {i + 1} → {i + 2}. {s.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[all, ...rows.map((r) => ({ label: rowLabel(r), times: r.timeToConvert ?? [] }))].map((r, k) => (
            <tr key={k} data-testid="funnel-time-breakdown-row">
              <th scope="row">{r.label}</th>
              {r.times.map((t) => (
                <td key={t.step} class="num time-cell">
                  <span data-testid="funnel-time-breakdown-median">{t.medianSeconds === null ? "—" : duration(t.medianSeconds)}</span>
                  <span class="hint"> of {num(t.converted)}</span>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * StepHistograms are the times of one set of users (all of them, or one
 * breakdown row's, who), a section per step after the first: the median
 * and the users in each of the API's buckets.
 */
function StepHistograms(props: { steps: FunnelResult["steps"]; times: NonNullable<FunnelResult["timeToConvert"]>; who?: string }) {
  return (
    <div data-testid={props.who === undefined ? "funnel-time" : "funnel-time-histograms"}>
      {props.times.map((t) => {
        const most = Math.max(1, ...t.histogram.map((b) => b.count));
        const name = props.steps[t.step]?.name ?? "";
        const before = props.steps[t.step - 1]?.name ?? "";
        return (
          <section key={t.step} class="funnel-time-step" data-testid="funnel-time-step">
            <h3>
              <span class="step-num">{t.step + 1}</span> {before} → {name}
              {props.who !== undefined ? <span class="hint"> · {props.who}</span> : null}
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
                  {props.who !== undefined ? `, ${props.who}` : ""}
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
 * entrants, converted and conversion per bucket. With a breakdown it
 * draws a line per row (the chart's data table has each bucket's
 * figures) and tables each row's entrants and conversion over the range.
 */
export function OverTime(props: { result: FunnelResult; interval: FunnelInterval }) {
  const rows = props.result.overTime ?? [];
  if (props.result.breakdown) return <OverTimeByRow result={props.result} interval={props.interval} />;
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
          <ConversionHead first={props.interval === "week" ? "Week of" : "Day"} />
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

/** ConversionHead heads an Over time table: its first column's name, then entered, converted and conversion. */
function ConversionHead(props: { first: string }) {
  return (
    <thead>
      <tr>
        <th scope="col">{props.first}</th>
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
  );
}

/** OverTimeByRow is OverTime with a breakdown: a line and a table row per breakdown row. */
function OverTimeByRow(props: { result: FunnelResult; interval: FunnelInterval }) {
  const rows = props.result.breakdown ?? [];
  const buckets = (props.result.overTime ?? []).map((p) => p.date);
  const last = props.result.steps.length - 1;
  return (
    <div data-testid="funnel-over-time">
      <TimeChart
        kind="line"
        interval={props.interval}
        buckets={buckets}
        lines={rows.map((r) => ({ label: rowLabel(r), data: (r.overTime ?? []).map((p) => p.conversionPct) }))}
        label="Conversion from the first step to the last by when users entered, a line per breakdown value"
        format={(v) => `${v}%`}
      />
      {rows.length === 0 ? <p class="empty">No user entered the funnel in this range.</p> : null}
      <div class="table-scroll">
        <table class="funnel-table" data-testid="funnel-over-time-breakdown">
          <caption class="visually-hidden">Entrants and conversion over the range, by breakdown value</caption>
          <ConversionHead first="Value" />
          <tbody>
            {rows.map((r, k) => {
              const entered = r.steps[0]?.count ?? 0;
              const converted = r.steps[last]?.count ?? 0;
              return (
                <tr key={k} data-testid="funnel-over-time-breakdown-row">
                  <th scope="row">{rowLabel(r)}</th>
                  <td class="num">{num(entered)}</td>
                  <td class="num">{num(converted)}</td>
                  <td class="num">{overall(entered, converted)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
