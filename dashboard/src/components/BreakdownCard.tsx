import { useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { useLoad } from "../load";
import type { DataEnv, FilterRequest, TrendResult } from "../types";
import { ErrorState, Skeleton } from "./States";
import { Table } from "./Table";

/** totals sums each line of a breakdown trend into rows, most first; "other" last. */
export function totals(r: TrendResult): { label: string; value: number; other: boolean }[] {
  return r.series
    .map((l) => ({ label: l.breakdownValue === null ? l.label : l.breakdownValue || "(none)", value: l.data.reduce((n, p) => n + p.value, 0), other: !!l.other }))
    .filter((x) => x.value > 0)
    .sort((a, b) => Number(a.other) - Number(b.other) || b.value - a.value);
}

/** What a breakdown card counts: page views, or the users who viewed a page. */
export type Measure = "total" | "unique_users";

/** BreakdownProps says what a breakdown card shows. */
export interface BreakdownProps {
  property: string;
  title: string;
  /** heading names the property's column. */
  heading: string;
  measure?: Measure;
  filters?: FilterRequest[];
  label?: (value: string) => string;
  empty?: string;
  detail?: { property: string; heading: string };
}

/**
 * BreakdownCard is a table of the top values of one property over the
 * range, for $pageview: page views or visitors per value, most first, the
 * rest as "Other". With `detail`, each value opens a second table below it,
 * the top values of `detail` among that value's page views (a source's
 * full referrers). The value opened is the card's own, or, with onOpen,
 * the page's (open), so that a page can keep it in its URL.
 */
export function BreakdownCard(
  props: { product: number; from: string; to: string; env: DataEnv; open?: string | null; onOpen?: (value: string | null) => void } & BreakdownProps,
) {
  const measure = props.measure ?? "total";
  const filters = props.filters ?? [];
  const [r, retry] = useLoad<TrendResult>(
    () =>
      api.trend(
        props.product,
        {
          series: [{ event: "$pageview", math: measure }],
          interval: "month",
          breakdown: props.property,
          breakdownLimit: 10,
          filters,
          dateFrom: props.from,
          dateTo: props.to,
        },
        props.env,
      ),
    [props.product, props.from, props.to, props.env, props.property, measure, JSON.stringify(filters)],
  );
  const [own, setOwn] = useState<string | null>(null);
  const open = props.onOpen ? (props.open ?? null) : own;
  const setOpen = props.onOpen ?? setOwn;
  const rows = r.state === "done" ? totals(r.data) : [];
  const max = rows.reduce((m, x) => Math.max(m, x.value), 0);
  const label = (x: { label: string; other: boolean }) => (x.other ? "Other" : props.label ? props.label(x.label) : x.label);
  const valueHeading = measure === "unique_users" ? "Visitors" : "Views";
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {r.state === "loading" ? <Skeleton rows={3} /> : null}
      {r.state === "failed" ? <ErrorState message={r.error} onRetry={retry} /> : null}
      {r.state === "done" && rows.length === 0 ? <p class="empty">{props.empty ?? "No page views in this range."}</p> : null}
      {rows.length > 0 ? (
        <Table
          label={props.title}
          class="table compact"
          head={
            <>
              <th scope="col">{props.heading}</th>
              <th scope="col" class="num">
                {valueHeading}
              </th>
            </>
          }
        >
          {rows.map((x) => {
            const opened = props.detail && !x.other && open === x.label;
            return [
              <tr key={x.label + x.other}>
                <td class="bar-cell" style={{ background: `linear-gradient(90deg, #e0f2fe ${(x.value / max) * 100}%, transparent 0)` }}>
                  {props.detail && !x.other ? (
                    <button
                      type="button"
                      class="link-button"
                      aria-expanded={opened ? "true" : "false"}
                      onClick={() => setOpen(opened ? null : x.label)}
                    >
                      {label(x)}
                    </button>
                  ) : (
                    label(x)
                  )}
                </td>
                <td class="num">{num(x.value)}</td>
              </tr>,
              opened && props.detail ? (
                <tr key={x.label + "/detail"} class="detail-row">
                  <td colSpan={2}>
                    <DetailTable
                      product={props.product}
                      env={props.env}
                      from={props.from}
                      to={props.to}
                      measure={measure}
                      filters={[...filters, { property: props.property, operator: "eq", value: x.label }]}
                      property={props.detail.property}
                      heading={props.detail.heading}
                      title={`${props.detail.heading} of ${label(x)}`}
                    />
                  </td>
                </tr>
              ) : null,
            ];
          })}
        </Table>
      ) : null}
    </section>
  );
}

/** DetailTable lists the top values of a property among filtered page views. */
function DetailTable(props: {
  product: number;
  env: DataEnv;
  from: string;
  to: string;
  measure: Measure;
  filters: FilterRequest[];
  property: string;
  heading: string;
  title: string;
}) {
  const [r, retry] = useLoad<TrendResult>(
    () =>
      api.trend(
        props.product,
        {
          series: [{ event: "$pageview", math: props.measure }],
          interval: "month",
          breakdown: props.property,
          breakdownLimit: 20,
          filters: props.filters,
          dateFrom: props.from,
          dateTo: props.to,
        },
        props.env,
      ),
    [props.product, props.from, props.to, props.env, props.property, JSON.stringify(props.filters)],
  );
  if (r.state === "loading" || r.state === "idle") return <Skeleton rows={2} />;
  if (r.state === "failed") return <ErrorState message={r.error} onRetry={retry} />;
  return (
    <table class="table compact detail" aria-label={props.title}>
      <thead>
        <tr>
          <th scope="col">{props.heading}</th>
          <th scope="col" class="num">
            {props.measure === "unique_users" ? "Visitors" : "Views"}
          </th>
        </tr>
      </thead>
      <tbody>
        {totals(r.data).map((x) => (
          <tr key={x.label + x.other}>
            <td class="url">{x.other ? "Other" : x.label}</td>
            <td class="num">{num(x.value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
