import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import type { DataEnv } from "../types";

/** How often the count is asked for while the page is visible. */
export const liveRefreshMs = 10_000;

/**
 * LiveVisitors shows "N visitors now": the distinct users with an event in
 * the last five minutes (GET /api/v1/query/live), asked again every
 * `every` ms without reloading the page. The next request is scheduled
 * only when the previous one has answered, so a slow server never has
 * more than one request of a tab waiting; while the tab is hidden nothing
 * is asked, and the count is asked at once when the tab shows again. The
 * text is a polite live region, so a screen reader reads a new count
 * without interrupting.
 */
export function LiveVisitors(props: { product: number; env: DataEnv; every?: number }) {
  const { product, env } = props;
  const every = props.every ?? liveRefreshMs;
  const [count, setCount] = useState<number | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let stopped = false;
    let asking = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hidden = () => document.visibilityState === "hidden";
    const schedule = () => {
      if (!stopped && !asking && timer === undefined && !hidden()) timer = setTimeout(ask, every);
    };
    const ask = async () => {
      timer = undefined;
      if (stopped || asking || hidden()) return;
      asking = true;
      try {
        const res = await api.live(product, env);
        if (!stopped) {
          setCount(res.visitors);
          setFailed(false);
        }
      } catch {
        // The last count stays on screen, marked as not current; the
        // next tick tries again.
        if (!stopped) setFailed(true);
      } finally {
        asking = false;
        schedule();
      }
    };
    const onVisibility = () => {
      if (hidden()) {
        clearTimeout(timer);
        timer = undefined;
      } else if (!asking && timer === undefined) {
        void ask();
      }
    };
    document.addEventListener("visibilitychange", onVisibility);
    void ask();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [product, env, every]);

  const text =
    count === null ? (failed ? "Visitors now: unavailable" : "Counting visitors now…") : `${num(count)} ${count === 1 ? "visitor" : "visitors"} now`;
  return (
    <p class={`live${failed ? " live-stale" : ""}`} data-testid="live-visitors" title="Distinct visitors with an event in the last 5 minutes">
      <span class="live-dot" aria-hidden="true" />
      <span role="status" aria-live="polite" aria-atomic="true" data-testid="live-count">
        {text}
      </span>
      {failed && count !== null ? <span class="hint"> (not updating)</span> : null}
    </p>
  );
}
