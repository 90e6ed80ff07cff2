import { num } from "../charts/time";
import type { Load } from "../load";
import { describeFilter, useFilterScope } from "../overviewFilters";
import type { SessionsResult } from "../types";
import { ErrorState, Skeleton } from "./States";
import { Table } from "./Table";

/** rate writes a bounce rate (per 100, to one decimal) as "42.5 %". */
export function rate(r: number): string {
  return `${r.toLocaleString(undefined, { maximumFractionDigits: 1 })} %`;
}

/**
 * SessionPages is the Overview's "Entry pages" and "Exit pages" cards, from
 * the sessions query the page already made (docs/queries.md, "Sessions"):
 * the paths most visits started on, with those visits' bounce rate, and
 * the paths most visits ended on. A page view without a path lists as
 * "(none)", as the breakdowns write it. On the Overview a page filters the
 * page's visits by their entry (or exit) page.
 */
export function SessionPages(props: { sessions: Load<SessionsResult>; onRetry: () => void }) {
  const s = props.sessions;
  const entry = s.state === "done" ? s.data.entryPages : [];
  const exit = s.state === "done" ? s.data.exitPages : [];
  return (
    <>
      <PageCard title="Entry pages" property="entry_page" load={s} onRetry={props.onRetry} rows={entry} bounce />
      <PageCard title="Exit pages" property="exit_page" load={s} onRetry={props.onRetry} rows={exit} />
    </>
  );
}

function PageCard(props: {
  title: string;
  property: "entry_page" | "exit_page";
  load: Load<SessionsResult>;
  onRetry: () => void;
  rows: { path: string; visits: number; bounceRate?: number }[];
  bounce?: boolean;
}) {
  const max = props.rows.reduce((m, x) => Math.max(m, x.visits), 0);
  const scope = useFilterScope();
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.load.state === "loading" ? <Skeleton rows={3} /> : null}
      {props.load.state === "failed" ? <ErrorState message={props.load.error} onRetry={props.onRetry} /> : null}
      {props.load.state === "done" && props.rows.length === 0 ? <p class="empty">No visit viewed a page in this range.</p> : null}
      {props.rows.length > 0 ? (
        <Table
          label={props.title}
          class="table compact"
          head={
            <>
              <th scope="col">Page</th>
              <th scope="col" class="num">
                Visits
              </th>
              {props.bounce ? (
                <th scope="col" class="num">
                  Bounce rate
                </th>
              ) : null}
            </>
          }
        >
          {props.rows.map((x) => (
            <tr key={x.path}>
              <td class="bar-cell" style={{ background: `linear-gradient(90deg, #e0f2fe ${(x.visits / max) * 100}%, transparent 0)` }}>
                {scope ? (
                  <button
                    type="button"
                    class="link-button row-filter"
                    title={`Filter: ${describeFilter({ property: props.property, value: x.path })}`}
                    onClick={() => scope.add({ property: props.property, value: x.path })}
                  >
                    {x.path || "(none)"}
                  </button>
                ) : (
                  x.path || "(none)"
                )}
              </td>
              <td class="num">{num(x.visits)}</td>
              {props.bounce ? <td class="num">{rate(x.bounceRate ?? 0)}</td> : null}
            </tr>
          ))}
        </Table>
      ) : null}
    </section>
  );
}
