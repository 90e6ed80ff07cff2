import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { useLoad } from "../load";
import { describeFilter, eventFilters, useFilterScope, visitOnly, type FilterScope } from "../overviewFilters";
import type { DataEnv, FilterRequest, TrendResult } from "../types";
import { ErrorState, Skeleton } from "./States";
import { Table } from "./Table";

/**
 * totals sums each line of a breakdown trend into rows, most first; "other"
 * last. An empty value is labelled "(none)" and marked empty.
 */
export function totals(r: TrendResult): { label: string; value: number; other: boolean; empty: boolean }[] {
  return r.series
    .map((l) => ({
      label: l.breakdownValue === null ? l.label : l.breakdownValue || "(none)",
      value: l.data.reduce((n, p) => n + p.value, 0),
      other: !!l.other,
      empty: l.breakdownValue === "",
    }))
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
  /** label names a value; mark, when set, is shown before it for the eye only (a flag). */
  label?: (value: string) => string;
  mark?: (value: string) => string;
  empty?: string;
  detail?: Detail;
}

/**
 * Detail is what a value of a breakdown opens: the top values of property
 * among that value's page views, each of which may open a further Detail.
 * none, when set, replaces a table whose values are all empty.
 */
export interface Detail {
  property: string;
  heading: string;
  none?: string;
  detail?: Detail;
}

/** BreakdownTableProps says which page views a breakdown counts, and where its opened value lives. */
export type BreakdownTableProps = { product: number; from: string; to: string; env: DataEnv; open?: string | null; onOpen?: (value: string | null) => void } & Omit<
  BreakdownProps,
  "title"
> & { tableLabel: string };

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
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      <BreakdownTable {...props} tableLabel={props.title} />
    </section>
  );
}

/**
 * BreakdownTable is a BreakdownCard's table without the card, for a card
 * that shows several (the Devices card's tabs); tableLabel names it.
 */
export function BreakdownTable(props: BreakdownTableProps) {
  const measure = props.measure ?? "total";
  // On the Overview, the page's filters too (docs/dashboard.md, "Filters").
  const scope = useFilterScope();
  const filters = [...(props.filters ?? []), ...(scope ? eventFilters(scope.filters) : [])];
  const blocked = scope ? visitOnly(scope.filters) : null;
  const [r, retry] = useLoad<TrendResult>(
    blocked
      ? null
      : () =>
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
    [props.product, props.from, props.to, props.env, props.property, measure, JSON.stringify(filters), blocked],
  );
  const [own, setOwn] = useState<string | null>(null);
  const open = props.onOpen ? (props.open ?? null) : own;
  const setOpen = props.onOpen ?? setOwn;
  const rows = r.state === "done" ? totals(r.data) : [];
  const max = rows.reduce((m, x) => Math.max(m, x.value), 0);
  const label = (x: { label: string; other: boolean }) => (x.other ? "Other" : props.label ? props.label(x.label) : x.label);
  const valueHeading = measure === "unique_users" ? "Visitors" : "Views";
  if (blocked) return <VisitOnly filter={blocked} />;
  return (
    <>
      {r.state === "loading" ? <Skeleton rows={3} /> : null}
      {r.state === "failed" ? <ErrorState message={r.error} onRetry={retry} /> : null}
      {r.state === "done" && rows.length === 0 ? <p class="empty">{props.empty ?? "No page views in this range."}</p> : null}
      {rows.length > 0 ? (
        <Table
          label={props.tableLabel}
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
            // Other and the empty value are no single value to open.
            const opens = !!props.detail && !x.other && !x.empty;
            const opened = opens && open === x.label;
            return [
              <tr key={x.label + x.other}>
                <td class="bar-cell" style={{ background: `linear-gradient(90deg, #e0f2fe ${(x.value / max) * 100}%, transparent 0)` }}>
                  {props.mark && !x.other ? <Mark text={props.mark(x.empty ? "" : x.label)} /> : null}
                  <RowLabel
                    scope={scope}
                    property={props.property}
                    row={x}
                    name={label(x)}
                    toggle={opens ? { opened, onToggle: () => setOpen(opened ? null : x.label) } : null}
                  />
                </td>
                <td class="num">{num(x.value)}</td>
              </tr>,
              opened && props.detail
                ? detailRow(x.label, { ...props, measure, filters: [...filters, { property: props.property, operator: "eq", value: x.label }] }, props.detail, label(x))
                : null,
            ];
          })}
        </Table>
      ) : null}
    </>
  );
}

/** Mark is a value's sign for the eye (a country's flag); screen readers read the name after it. */
function Mark(props: { text: string }) {
  return props.text ? (
    <span class="mark" aria-hidden="true">
      {props.text}{" "}
    </span>
  ) : null;
}

/**
 * VisitOnly stands in for a page-view card under an entry or exit page
 * filter: those are a visit's, and a page view has neither, so the card
 * says why it shows nothing rather than counting what the filter does not
 * keep (docs/dashboard.md, "Filters").
 */
export function VisitOnly(props: { filter: string }) {
  return (
    <p class="empty visit-only" data-testid="visit-only">
      Not filtered by {props.filter}: this card counts page views, and an {props.filter} belongs to a visit. The figures and the entry and exit pages
      show the visits filtered.
    </p>
  );
}

/**
 * RowLabel is a row's value. On the Overview (scope set) a value filters
 * the page by it: the name itself is the control, or, where the name opens
 * the value's detail (a source's referrers, a country's regions), a filter
 * button beside it. "Other" folds many values and filters nothing.
 */
function RowLabel(props: {
  scope: FilterScope | null;
  property: string;
  row: { label: string; other: boolean; empty: boolean };
  name: string;
  toggle: { opened: boolean; onToggle: () => void } | null;
}) {
  const { scope, row } = props;
  const f = { property: props.property, value: row.empty ? "" : row.label };
  const add = scope && !row.other ? () => scope.add(f) : null;
  if (props.toggle) {
    return (
      <>
        <Toggle opened={props.toggle.opened} onToggle={props.toggle.onToggle}>
          {props.name}
        </Toggle>
        {add ? <FilterButton name={props.name} title={describeFilter(f)} onClick={add} /> : null}
      </>
    );
  }
  if (!add) return <>{props.name}</>;
  return (
    <button type="button" class="link-button row-filter" title={`Filter: ${describeFilter(f)}`} onClick={add}>
      {props.name}
    </button>
  );
}

/** FilterButton filters the Overview by a value whose name opens its detail. */
export function FilterButton(props: { name: string; title: string; onClick: () => void }) {
  return (
    <button type="button" class="filter-button" aria-label={`Filter by ${props.name}`} title={`Filter: ${props.title}`} onClick={props.onClick}>
      <svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
        <path d="M1 2h14l-5.5 6.5V14l-3-1.5V8.5z" fill="currentColor" />
      </svg>
    </button>
  );
}

/** Toggle is a value that opens its detail below its row, or closes it. */
function Toggle(props: { opened: boolean; onToggle: () => void; children: ComponentChildren }) {
  return (
    <button type="button" class="link-button" aria-expanded={props.opened ? "true" : "false"} onClick={props.onToggle}>
      {props.children}
    </button>
  );
}

/** Scope is the page views a detail table counts among. */
type Scope = { product: number; env: DataEnv; from: string; to: string; measure: Measure; filters: FilterRequest[] };

/** detailRow is the row below the opened value named name: detail's table among scope's page views. */
function detailRow(value: string, scope: Scope, detail: Detail, name: string) {
  return (
    <tr key={value + "/detail"} class="detail-row">
      <td colSpan={2}>
        <DetailTable
          product={scope.product}
          env={scope.env}
          from={scope.from}
          to={scope.to}
          measure={scope.measure}
          filters={scope.filters}
          detail={detail}
          title={`${detail.heading} of ${name}`}
        />
      </td>
    </tr>
  );
}

/**
 * DetailTable lists the top values of detail's property among filtered page
 * views; with a further detail, each value opens its own table below it.
 */
function DetailTable(props: Scope & { detail: Detail; title: string }) {
  const { property, heading } = props.detail;
  const scope = useFilterScope();
  const [open, setOpen] = useState<string | null>(null);
  const [r, retry] = useLoad<TrendResult>(
    () =>
      api.trend(
        props.product,
        {
          series: [{ event: "$pageview", math: props.measure }],
          interval: "month",
          breakdown: property,
          breakdownLimit: 20,
          filters: props.filters,
          dateFrom: props.from,
          dateTo: props.to,
        },
        props.env,
      ),
    [props.product, props.from, props.to, props.env, property, JSON.stringify(props.filters)],
  );
  if (r.state === "loading" || r.state === "idle") return <Skeleton rows={2} />;
  if (r.state === "failed") return <ErrorState message={r.error} onRetry={retry} />;
  const rows = totals(r.data);
  if (props.detail.none && rows.every((x) => x.empty)) return <p class="empty">{props.detail.none}</p>;
  const next = props.detail.detail;
  return (
    <table class="table compact detail" aria-label={props.title}>
      <thead>
        <tr>
          <th scope="col">{heading}</th>
          <th scope="col" class="num">
            {props.measure === "unique_users" ? "Visitors" : "Views"}
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((x) => {
          const name = x.other ? "Other" : x.label;
          const opens = !!next && !x.other && !x.empty;
          const opened = opens && open === x.label;
          return [
            <tr key={x.label + x.other}>
              <td class="url">
                <RowLabel scope={scope} property={property} row={x} name={name} toggle={opens ? { opened, onToggle: () => setOpen(opened ? null : x.label) } : null} />
              </td>
              <td class="num">{num(x.value)}</td>
            </tr>,
            opened && next ? detailRow(x.label, { ...props, filters: [...props.filters, { property, operator: "eq", value: x.label }] }, next, name) : null,
          ];
        })}
      </tbody>
    </table>
  );
}
