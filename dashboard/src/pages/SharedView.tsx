import { useEffect, useState } from "preact/hooks";
import { api, ApiError, message, setApiBase } from "../api";
import { DateRangePicker } from "../components/DateRangePicker";
import { rangeFromSearch, searchWithRange, setTimeZone, type DateRange } from "../range";
import { navigate, useLocation } from "../router";
import type { Product, ShareInfo } from "../types";
import { BoardView } from "./Boards";
import { Overview } from "./Overview";

/**
 * sharedSecret is the secret of a shared link's address, /share/{secret},
 * or null for every other page.
 */
export function sharedSecret(path: string): string | null {
  const m = /^\/share\/([^/]+)$/.exec(path);
  return m ? m[1] : null;
}

type State =
  | { state: "loading" }
  | { state: "failed"; error: string; gone: boolean }
  | { state: "ready"; info: ShareInfo };

/**
 * SharedView is a shared link's page (docs/dashboard.md, "Shared links"):
 * one product's Overview, or one of its dashboards for a dashboard's link
 * ("Dashboards"), read-only, for anyone with the link. There is no
 * navigation, no product switcher and no editing; every call goes under
 * /share/{secret}, where the server answers the Overview's reads and
 * nothing else. A link with a password asks for it first.
 */
export function SharedView(props: { secret: string }) {
  const [st, setSt] = useState<State>({ state: "loading" });
  const load = async () => {
    try {
      setSt({ state: "ready", info: await api.shareInfo() });
    } catch (err) {
      setSt({ state: "failed", error: message(err), gone: err instanceof ApiError && err.status === 404 });
    }
  };
  useEffect(() => {
    setApiBase(`/share/${encodeURIComponent(props.secret)}`);
    void load();
  }, [props.secret]);

  if (st.state === "loading") return <p class="splash">Loading…</p>;
  if (st.state === "failed") {
    return (
      <main class="auth">
        <div class="card auth-card" role="alert" data-testid="shared-failed">
          <h1>{st.gone ? "This link does not work" : "Strata is unreachable"}</h1>
          <p>{st.error}</p>
          {st.gone ? null : (
            <button type="button" class="button" onClick={() => void load()}>
              Try again
            </button>
          )}
        </div>
      </main>
    );
  }
  const { info } = st;
  if (info.hasPassword && !info.unlocked) return <PasswordForm name={info.name} onUnlocked={() => void load()} />;
  return <SharedOverview info={info} />;
}

function SharedOverview(props: { info: ShareInfo }) {
  const loc = useLocation();
  // Dates and presets follow the product's zone, as in the dashboard.
  setTimeZone(props.info.timeZone);
  const range = rangeFromSearch(loc.search);
  const setRange = (r: DateRange) => navigate(`${loc.path}?${searchWithRange(loc.search, r)}`);
  // The Overview needs a product; the link names only its id and name.
  const product: Product = { id: props.info.productId, name: props.info.productName, timeZone: props.info.timeZone, workspaceId: 0, createdAt: "" };
  return (
    <div class="shared-shell">
      <header class="topbar">
        <span class="shared-product">{props.info.productName}</span>
        <span class="shared-label" data-testid="shared-label" title={`Shared link “${props.info.name}”: a read-only view`}>
          Shared view
        </span>
        <DateRangePicker range={range} onChange={setRange} />
      </header>
      <main class="content" id="content" tabIndex={-1}>
        {props.info.boardId ? (
          <BoardView product={product} id={props.info.boardId} range={range} env="live" readOnly />
        ) : (
          <Overview product={product} range={range} env="live" readOnly />
        )}
      </main>
    </div>
  );
}

function PasswordForm(props: { name: string; onUnlocked: () => void }) {
  const [password, setPassword] = useState("");
  const [state, setState] = useState<{ busy?: boolean; error?: string }>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      await api.unlockShare(password);
      props.onUnlocked();
    } catch (err) {
      setState({ error: message(err) });
    }
  };
  return (
    <main class="auth">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="share-title">
        <h1 id="share-title">{props.name}</h1>
        <p class="muted">This shared view is protected by a password. Enter the one you were given with the link.</p>
        <label>
          Password
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        {state.error ? (
          <p class="form-error" role="alert">
            {state.error}
          </p>
        ) : null}
        <button type="submit" class="button" disabled={state.busy}>
          View
        </button>
      </form>
    </main>
  );
}
