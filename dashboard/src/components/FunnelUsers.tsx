import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { ErrorState, Skeleton } from "./States";
import { plural } from "../format";
import { useLoad } from "../load";
import { navigate } from "../router";
import type { DataEnv, FunnelRequest, FunnelUsersResult } from "../types";

/**
 * FunnelPick is the users a click on the funnel asks for: those who
 * reached step `step` (converted) or reached it and not the next one
 * (dropped), of every user, or of one breakdown row (its value, or the
 * "other" row).
 */
export interface FunnelPick {
  step: number;
  status: "converted" | "dropped";
  /** How many users the funnel counted there, for the title. */
  count: number;
  breakdownValue?: string;
  other?: boolean;
}

/** pickRow names a pick's breakdown row as the table shows it, or "" for every user. */
function pickRow(p: FunnelPick): string {
  if (p.other) return "Other values";
  if (p.breakdownValue === undefined) return "";
  return p.breakdownValue === "" ? "(not set)" : p.breakdownValue;
}

/**
 * FunnelUsers lists the users of one step of the funnel on screen from
 * POST /query/funnel/users (docs/queries.md, "Who converted, who dropped
 * off"), newest first, a page at a time ("More users"); each links to the
 * user's page (events and replays) and their replays, with when they
 * reached the step. request is the funnel as run (filters, exclusions,
 * window, breakdown and range).
 */
export function FunnelUsers(props: {
  product: number;
  env: DataEnv;
  request: FunnelRequest;
  stepName: string;
  pick: FunnelPick;
  onClose: () => void;
  /** Users per page; the API's default (50) when absent. */
  limit?: number;
}) {
  const p = props.pick;
  const [pages, setPages] = useState<FunnelUsersResult[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const key = JSON.stringify([props.request, p, props.env, props.limit]);
  useEffect(() => {
    setPages([]);
    setCursor(null);
  }, [key]);
  // The view does not change the users; a funnel of groups has none (the page offers no pick then).
  const { view: _view, interval: _interval, aggregateBy: _groups, ...funnel } = props.request;
  const [page, retry] = useLoad<FunnelUsersResult>(
    () =>
      api.funnelUsers(
        props.product,
        {
          ...funnel,
          step: p.step,
          status: p.status,
          breakdownValue: p.other ? undefined : p.breakdownValue,
          other: p.other || undefined,
          limit: props.limit,
          cursor: cursor ?? undefined,
        },
        props.env,
      ),
    [key, cursor],
  );
  useEffect(() => {
    if (page.state === "done") setPages((l) => [...l, page.data]);
  }, [page.state === "done" ? page.data : null]);
  const users = pages.flatMap((x) => x.users);
  const next = pages.length ? pages[pages.length - 1].nextCursor : null;
  const row = pickRow(p);
  const what = p.status === "converted" ? `Converted at step ${p.step + 1}` : `Dropped off after step ${p.step + 1}`;
  return (
    <section class="card" aria-labelledby="funnel-users-title" data-testid="funnel-users">
      <h2 id="funnel-users-title">
        {what}: {props.stepName}
        {row ? ` · ${row}` : ""} <span class="hint heading-hint">{plural(p.count, "user")}, newest first</span>
      </h2>
      {page.state === "failed" ? <ErrorState message={page.error} onRetry={retry} /> : null}
      {page.state === "loading" && users.length === 0 ? <Skeleton rows={3} label="Listing users…" /> : null}
      {page.state === "done" && users.length === 0 ? <p class="empty">No user here.</p> : null}
      <ul class="paths-users">
        {users.map((u) => (
          <li key={u.distinctId} data-testid="funnel-user">
            <a
              href={u.link}
              onClick={(e) => {
                e.preventDefault();
                navigate(u.link);
              }}
            >
              {u.distinctId}
            </a>{" "}
            <span class="hint" data-testid="funnel-user-reached">
              reached the step {new Date(u.reachedAt).toLocaleString()}
            </span>{" "}
            <a
              class="hint"
              href={u.replaysLink}
              onClick={(e) => {
                e.preventDefault();
                navigate(u.replaysLink);
              }}
            >
              Replays
            </a>
          </li>
        ))}
      </ul>
      <div class="inline-form">
        {next ? (
          <button type="button" class="button secondary" disabled={page.state === "loading"} onClick={() => setCursor(next)}>
            More users
          </button>
        ) : null}
        <button type="button" class="button secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
    </section>
  );
}
