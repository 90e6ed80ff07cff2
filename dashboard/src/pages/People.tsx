import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Skeleton } from "../components/States";
import { when } from "../format";
import { useLoad } from "../load";
import { useQueryState } from "../router";
import type { PersonList, Product } from "../types";
import { userHref } from "./Replays";

/** The operators of a people filter (api/openapi.yaml, listPersons' where). */
export const PERSON_OPERATORS = ["eq", "neq", "contains", "is_set", "is_not_set"] as const;
export type PersonOperator = (typeof PERSON_OPERATORS)[number];

/** PersonFilter is one property filter of the people list. */
export interface PersonFilter {
  key: string;
  operator: PersonOperator;
  value?: string;
}

/** parseFilters reads ?where= (the API's JSON array), dropping what is not a filter. */
export function parseFilters(values: string[]): PersonFilter[] | null {
  if (!values.length) return null;
  try {
    const raw: unknown = JSON.parse(values[0]);
    if (!Array.isArray(raw)) return null;
    return raw.filter(
      (f): f is PersonFilter =>
        !!f && typeof f.key === "string" && f.key !== "" && (PERSON_OPERATORS as readonly string[]).includes(f.operator),
    );
  } catch {
    return null;
  }
}

/** needsValue is whether an operator compares with a value. */
export function needsValue(op: PersonOperator): boolean {
  return op !== "is_set" && op !== "is_not_set";
}

/** chipText writes a filter as its chip shows it: "plan = pro", "email is set". */
export function chipText(f: PersonFilter): string {
  const ops: Record<PersonOperator, string> = { eq: "=", neq: "≠", contains: "contains", is_set: "is set", is_not_set: "is not set" };
  return needsValue(f.operator) ? `${f.key} ${ops[f.operator]} ${f.value ?? ""}` : `${f.key} ${ops[f.operator]}`;
}

/** columnKeys reads the Columns input: comma-separated property keys, trimmed, without repeats. */
export function columnKeys(text: string): string[] {
  return [...new Set(text.split(",").map((k) => k.trim()).filter(Boolean))];
}

/** cell writes a property's value as the table shows it. */
export function cell(v: unknown): string {
  if (v === undefined || v === null) return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * People is /people: the product's person profiles (docs/dashboard.md,
 * "People"), latest seen first, with a search, property filters and
 * chosen property columns, all in the URL; "More" loads the next page.
 */
export function People(props: { product: Product | null }) {
  const [search, setSearch] = useQueryState("search", "");
  const [columns, setColumns] = useQueryState("columns", "");
  const [filters, setFilters] = useQueryState<PersonFilter[]>("where", [], parseFilters, (v) => (v.length ? [JSON.stringify(v)] : []));
  const [typed, setTyped] = useState(search);
  const [draft, setDraft] = useState<PersonFilter>({ key: "", operator: "eq", value: "" });
  const [pages, setPages] = useState<PersonList[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const pid = props.product?.id ?? 0;
  const cols = columnKeys(columns);
  const key = JSON.stringify([pid, search, filters, cols]);
  useEffect(() => {
    setPages([]);
    setCursor(null);
  }, [key]);
  const [page, retry] = useLoad<PersonList>(
    props.product
      ? () =>
          api.persons(pid, {
            search: search || undefined,
            where: filters.length ? JSON.stringify(filters) : undefined,
            columns: cols.length ? cols.join(",") : undefined,
            cursor: cursor ?? undefined,
          })
      : null,
    [key, cursor],
  );
  useEffect(() => {
    if (page.state === "done") setPages((p) => [...p, page.data]);
  }, [page.state === "done" ? page.data : null]);
  if (!props.product) return <NoProduct />;
  const rows = pages.flatMap((p) => p.items);
  const next = pages.length ? pages[pages.length - 1].nextCursor : null;
  const shownKeys = cols.length ? cols : [];
  return (
    <section class="page">
      <div class="section-head tight">
        <h1>People</h1>
      </div>
      <form
        class="inline-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(typed.trim());
        }}
      >
        <label>
          Search
          <input type="search" value={typed} placeholder="id, email or name" maxLength={200} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <button type="submit" class="button secondary">
          Search
        </button>
      </form>
      <form
        class="inline-form"
        aria-label="Property filter"
        onSubmit={(e) => {
          e.preventDefault();
          const k = draft.key.trim();
          if (!k) return;
          const f: PersonFilter = needsValue(draft.operator) ? { key: k, operator: draft.operator, value: draft.value ?? "" } : { key: k, operator: draft.operator };
          setFilters([...filters, f]);
          setDraft({ key: "", operator: "eq", value: "" });
        }}
      >
        <label>
          Property
          <input value={draft.key} onInput={(e) => setDraft({ ...draft, key: e.currentTarget.value })} />
        </label>
        <label>
          Operator
          <select value={draft.operator} onChange={(e) => setDraft({ ...draft, operator: e.currentTarget.value as PersonOperator })}>
            {PERSON_OPERATORS.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        {needsValue(draft.operator) ? (
          <label>
            Value
            <input value={draft.value ?? ""} onInput={(e) => setDraft({ ...draft, value: e.currentTarget.value })} />
          </label>
        ) : null}
        <button type="submit" class="button secondary" disabled={filters.length >= 10}>
          Add filter
        </button>
      </form>
      {filters.length ? (
        <ul class="chips" aria-label="Filters">
          {filters.map((f, i) => (
            <li key={i} class="chip">
              {chipText(f)}{" "}
              <button type="button" aria-label={`Remove ${chipText(f)}`} onClick={() => setFilters(filters.filter((_, j) => j !== i))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <div class="inline-form">
        <label>
          Columns
          <input value={columns} placeholder="email,plan" onChange={(e) => setColumns(columnKeys(e.currentTarget.value).join(","))} />
        </label>
      </div>
      {page.state === "failed" ? <ErrorState message={page.error} onRetry={retry} /> : null}
      {page.state === "loading" && rows.length === 0 ? <Skeleton rows={5} label="Listing people…" /> : null}
      {page.state === "done" && rows.length === 0 ? (
        <p class="empty">{search || filters.length ? "No person matches." : "No people yet: profiles appear once events are sent."}</p>
      ) : null}
      {rows.length ? (
        <div class="table-wrap">
          <table class="table" data-testid="people-table">
            <thead>
              <tr>
                <th>Distinct id</th>
                {shownKeys.map((k) => (
                  <th key={k}>{k}</th>
                ))}
                <th>Last seen</th>
                <th>First seen</th>
                <th class="num">Events</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.distinctId}>
                  <td>
                    <Link href={userHref(pid, r.distinctId)}>{r.distinctId}</Link>
                  </td>
                  {shownKeys.map((k) => (
                    <td key={k}>{cell(r.properties[k])}</td>
                  ))}
                  <td>{when(r.lastSeen)}</td>
                  <td>{when(r.firstSeen)}</td>
                  <td class="num">{r.eventCount}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {next ? (
        <button type="button" class="button secondary" disabled={page.state === "loading"} onClick={() => setCursor(next)}>
          More
        </button>
      ) : null}
    </section>
  );
}
