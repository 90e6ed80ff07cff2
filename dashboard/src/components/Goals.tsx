import { useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { change, periodName, previousPeriod, type Change } from "../compare";
import { useLoad } from "../load";
import type { DataEnv, FilterRequest, GoalsResult } from "../types";
import { countryName } from "./Countries";
import { arrows } from "./FigureCards";
import { Link } from "./Link";
import { ErrorState, Skeleton } from "./States";
import { Table } from "./Table";

/** The device types by name (docs/ingest.md, "Devices"). */
const deviceTypes: Record<string, string> = { desktop: "Desktop", mobile: "Mobile", tablet: "Tablet" };

/**
 * The breakdown tabs of a chosen goal: each splits the visitors by the
 * property on their first page view in the range (docs/queries.md,
 * "Goals"), the empty value named for what it means there.
 */
const tabs = [
  { tab: "Source", property: "source", heading: "Source", label: (v: string) => (v === "" ? "Direct / none" : v) },
  { tab: "Channel", property: "channel", heading: "Channel", label: (v: string) => (v === "" ? "Unknown" : v) },
  { tab: "Country", property: "country", heading: "Country", label: countryName },
  { tab: "Device", property: "device_type", heading: "Device", label: (v: string) => (v === "" ? "Unknown" : (deviceTypes[v] ?? v)) },
] as const;

/** rate writes a conversion rate (per 100, to one decimal) as "42.5 %", as the bounce rates are written. */
const rate = (pct: number) => `${pct.toLocaleString(undefined, { maximumFractionDigits: 1 })} %`;

/**
 * rateChange is a goal's conversion rate against the previous period's, in
 * percentage points as the bounce rate's change is written; "new" when the
 * previous period had no visitors and this one has (its 0 % meant
 * nothing), and null while the previous period is loading, failed, or had
 * no such goal.
 */
export function rateChange(cur: GoalsResult, prev: GoalsResult | null, id: number, period: string): Change | null {
  const g = cur.goals.find((x) => x.id === id);
  const p = prev?.goals.find((x) => x.id === id);
  if (!g || !p || !prev) return null;
  return change(g.conversionRate, p.conversionRate, { unit: "points" }, period, prev.visitors === 0 && cur.visitors > 0);
}

/** ChangeText shows a change in a table cell: an arrow and text for the eye, words for a screen reader. */
function ChangeText(props: { change: Change }) {
  const c = props.change;
  return (
    <span class={`change change-${c.tone} goal-change`} data-testid="goal-change" data-direction={c.direction}>
      <span aria-hidden="true">
        {arrows[c.direction]} {c.text}
      </span>
      <span class="visually-hidden">{c.spoken}</span>
    </span>
  );
}

/** Head is a goals table's header: what the rows are, two counts and the rate. */
function Head(props: { first: string; counts: [string, string] }) {
  return (
    <>
      <th scope="col">{props.first}</th>
      {props.counts.map((c) => (
        <th key={c} scope="col" class="num">
          {c}
        </th>
      ))}
      <th scope="col" class="num">
        Rate
      </th>
    </>
  );
}

/**
 * Goals is the Overview's card of the product's goals (issue 37, item 7;
 * docs/dashboard.md, "Goals"): for each goal the visitors who converted,
 * their conversions and the conversion rate over the range's visitors, as
 * Plausible's Goal Conversions card has them, the rate with its change
 * against the previous period. Choosing a goal shows its
 * rate by source, channel, country and device, one tab each as the Devices
 * card has its tables; only the tab shown asks the server. filters narrow
 * the visitors as the rest of the Overview's (none by default). Without
 * goals it says where to add them; a shared link's view (readOnly) has no
 * settings to send anyone to. visitFilter names an entry or exit page
 * filter of the Overview, which goals cannot take (a visitor is not a
 * visit): the card then says so and asks nothing, as the page-view cards do.
 */
export function Goals(props: {
  product: number;
  from: string;
  to: string;
  env: DataEnv;
  filters?: FilterRequest[];
  visitFilter?: string | null;
  readOnly?: boolean;
}) {
  const filters = props.filters ?? [];
  const key = JSON.stringify(filters);
  const [r, retry] = useLoad<GoalsResult>(
    props.visitFilter ? null : () => api.goalConversions(props.product, { dateFrom: props.from, dateTo: props.to, filters }, props.env),
    [props.product, props.from, props.to, props.env, key, props.visitFilter],
  );
  // The previous period of the same length, for each goal's change, as
  // every figure card of the Overview shows one (docs/dashboard.md, "The
  // previous period"): the Overview always compares.
  const previous = previousPeriod({ from: props.from, to: props.to });
  const period = periodName({ from: props.from, to: props.to });
  const [prev] = useLoad<GoalsResult>(
    props.visitFilter ? null : () => api.goalConversions(props.product, { dateFrom: previous.from, dateTo: previous.to, filters }, props.env),
    [props.product, previous.from, previous.to, props.env, key, props.visitFilter],
  );
  const [chosen, setChosen] = useState<number | null>(null);
  const goals = r.state === "done" ? r.data.goals : [];
  const before = prev.state === "done" ? prev.data : null;
  const picked = goals.find((g) => g.id === chosen) ?? null;
  return (
    <section class="card" aria-label="Goals" data-testid="goals-card">
      <h2>Goals</h2>
      {props.visitFilter ? (
        <p class="empty visit-only">
          Not filtered by {props.visitFilter}: goals count visitors, and an {props.visitFilter} belongs to a visit. The figures and the entry and exit
          pages show the visits filtered.
        </p>
      ) : null}
      {r.state === "loading" ? <Skeleton rows={3} label="Loading goals…" /> : null}
      {r.state === "failed" ? <ErrorState message={r.error} onRetry={retry} /> : null}
      {r.state === "done" && goals.length === 0 ? (
        props.readOnly ? (
          <p class="empty">This product has no goals.</p>
        ) : (
          <p class="empty">
            No goals yet. Mark a custom event (such as <code>signup</code>) or a page path (such as <code>/pricing</code>) as a goal in{" "}
            <Link href={`/settings/products/${props.product}?product=${props.product}`}>the product's settings</Link>, and its
            conversions show here.
          </p>
        )
      ) : null}
      {goals.length > 0 ? (
        <>
          <Table
            label="Goal conversions"
            class="table compact"
            head={<Head first="Goal" counts={["Visitors", "Conversions"]} />}
          >
            {goals.map((g) => (
              <tr key={g.id} data-testid="goal-row">
                <td class="bar-cell goal-name" style={{ background: `linear-gradient(90deg, #dcfce7 ${g.conversionRate}%, transparent 0)` }}>
                  <button
                    type="button"
                    class="link-button"
                    aria-expanded={g.id === chosen ? "true" : "false"}
                    onClick={() => setChosen(g.id === chosen ? null : g.id)}
                  >
                    {g.name}
                  </button>
                </td>
                <td class="num">{num(g.visitors)}</td>
                <td class="num">{num(g.conversions)}</td>
                <td class="num">
                  {rate(g.conversionRate)}
                  {(() => {
                    const c = r.state === "done" ? rateChange(r.data, before, g.id, period) : null;
                    return c ? <ChangeText change={c} /> : null;
                  })()}
                </td>
              </tr>
            ))}
          </Table>
          {picked ? (
            <GoalBreakdown key={picked.id} {...props} filters={filters} goal={picked.id} name={picked.name} />
          ) : (
            <p class="hint">Choose a goal to see its conversion rate by source, channel, country and device.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

/** GoalBreakdown is a chosen goal's conversion rate by one property, a tab each. */
function GoalBreakdown(props: { product: number; from: string; to: string; env: DataEnv; filters: FilterRequest[]; goal: number; name: string }) {
  const [shown, setShown] = useState(0);
  return (
    <div class="goal-breakdown" data-testid="goal-breakdown">
      <div class="section-head tight">
        <h3>{props.name}</h3>
        <div class="tabs" role="tablist" aria-label="Conversion rate by">
          {tabs.map((x, i) => (
            <button
              key={x.tab}
              type="button"
              role="tab"
              id={`goals-tab-${i}`}
              aria-selected={i === shown ? "true" : "false"}
              aria-controls="goals-panel"
              onClick={() => setShown(i)}
            >
              {x.tab}
            </button>
          ))}
        </div>
      </div>
      <div role="tabpanel" id="goals-panel" aria-labelledby={`goals-tab-${shown}`}>
        {/* Keyed by the tab, so that a tab's table never shows another's rows while it loads. */}
        <GoalTable key={shown} {...props} tab={tabs[shown]} />
      </div>
    </div>
  );
}

/** GoalTable is one tab's table: the visitors, converted visitors and rate of each value. */
function GoalTable(props: {
  product: number;
  from: string;
  to: string;
  env: DataEnv;
  filters: FilterRequest[];
  goal: number;
  name: string;
  tab: (typeof tabs)[number];
}) {
  const t = props.tab;
  const [r, retry] = useLoad<GoalsResult>(
    () =>
      api.goalConversions(
        props.product,
        { dateFrom: props.from, dateTo: props.to, filters: props.filters, goal: props.goal, breakdown: t.property, limit: 10 },
        props.env,
      ),
    [props.product, props.from, props.to, props.env, JSON.stringify(props.filters), props.goal, t.property],
  );
  const rows = r.state === "done" ? (r.data.rows ?? []) : [];
  return (
    <>
      {r.state === "loading" ? <Skeleton rows={3} /> : null}
      {r.state === "failed" ? <ErrorState message={r.error} onRetry={retry} /> : null}
      {r.state === "done" && rows.length === 0 ? <p class="empty">No visitors in this range.</p> : null}
      {rows.length > 0 ? (
        <Table
          label={`${props.name} by ${t.heading.toLowerCase()}`}
          class="table compact"
          head={<Head first={t.heading} counts={["Visitors", "Converted"]} />}
        >
          {rows.map((x) => (
            <tr key={x.value}>
              <td class="bar-cell">{t.label(x.value)}</td>
              <td class="num">{num(x.total)}</td>
              <td class="num">{num(x.visitors)}</td>
              <td class="num">{rate(x.conversionRate)}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </>
  );
}
