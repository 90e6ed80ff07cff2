import { useEffect, useMemo, useState } from "preact/hooks";
import { api, message, setSignedOutHandler } from "./api";
import { DateRangePicker } from "./components/DateRangePicker";
import { EnvSwitch, TestDataBanner } from "./components/EnvSwitch";
import { NotFound } from "./components/NotFound";
import { ProductSwitcher } from "./components/ProductSwitcher";
import { Sidebar } from "./components/Sidebar";
import { ProductNotFound } from "./components/States";
import { activeItem, navItems } from "./components/nav";
import { envFromSearch, searchWithEnv } from "./dataEnv";
import { AcceptInvite, takeInviteToken } from "./pages/AcceptInvite";
import { AuthForm } from "./pages/AuthForm";
import { Members } from "./pages/Members";
import { RoleContext, roleIn } from "./roles";
import { ErrorGroupPage } from "./pages/ErrorGroup";
import { Errors } from "./pages/Errors";
import { ReplayPage } from "./pages/Replay";
import { parseMoment } from "./replay";
import { Replays } from "./pages/Replays";
import { FindUser, PersonPage } from "./pages/Person";
import { Acquisition } from "./pages/Acquisition";
import { Annotations } from "./pages/Annotations";
import { ApiReference } from "./pages/ApiReference";
import { CampaignPage } from "./pages/Campaign";
import { ExperimentPage } from "./pages/Experiment";
import { Experiments } from "./pages/Experiments";
import { FlagPage, Flags } from "./pages/Flags";
import { Funnels } from "./pages/Funnels";
import { Paths } from "./pages/Paths";
import { People } from "./pages/People";
import { Cohorts } from "./pages/Cohorts";
import { Boards } from "./pages/Boards";
import { Messages } from "./pages/Messages";
import { Overview } from "./pages/Overview";
import { Retention } from "./pages/Retention";
import { Trends } from "./pages/Trends";
import { ProductSettings } from "./pages/ProductSettings";
import { Products } from "./pages/Products";
import { SharedView, sharedSecret } from "./pages/SharedView";
import { rangeFromSearch, searchWithRange, setTimeZone, type DateRange } from "./range";
import { navigate, sharedParams, useLocation, withParams, type Loc } from "./router";
import { takeSetupToken } from "./setupToken";
import type { DashboardConfig, DataEnv, Membership, Product, Session, User } from "./types";

/** lastProductKey remembers the product picked last, for links that name none. */
const lastProductKey = "strata.product";

/** mainId is the id of the main region, which the skip link and the phone menu send focus to. */
const mainId = "content";

/**
 * skipToContent moves focus to the main region without adding #content to
 * the address (the link's href keeps its meaning without a script).
 */
function skipToContent(e: MouseEvent) {
  e.preventDefault();
  document.getElementById(mainId)?.focus();
}

type Boot =
  | { state: "loading" }
  | { state: "failed"; error: string }
  | { state: "ready"; config: DashboardConfig; user: User | null; memberships: Membership[] };

/**
 * App is the whole dashboard: first-run setup on a fresh server, sign-in,
 * then the signed-in shell. A call that finds the session gone brings the
 * sign-in form back, on the same URL. A shared link's address
 * (/share/{secret}) is the read-only shared view instead, with no sign-in.
 */
export function App() {
  const secret = sharedSecret(location.pathname);
  return secret ? <SharedView secret={secret} /> : <Dashboard />;
}

function Dashboard() {
  const [boot, setBoot] = useState<Boot>({ state: "loading" });
  // Taken from the URL once, before any page reads the location, whether
  // or not setup is still needed: the address bar must not keep it.
  const [setupToken] = useState(takeSetupToken);
  // An invite link (/invite#st_inv_…) opens the page that accepts it.
  const [inviteToken, setInviteToken] = useState(() => (location.pathname === "/invite" ? takeInviteToken() : null));
  const start = async () => {
    try {
      const [config, session] = await Promise.all([api.config(), api.session()]);
      setBoot({ state: "ready", config, user: session?.user ?? null, memberships: session?.memberships ?? [] });
    } catch (err) {
      setBoot({ state: "failed", error: message(err) });
    }
  };
  useEffect(() => {
    void start();
    setSignedOutHandler(() => setBoot((b) => (b.state === "ready" ? { ...b, user: null } : b)));
    return () => setSignedOutHandler(null);
  }, []);

  if (boot.state === "loading") return <p class="splash">Loading…</p>;
  if (boot.state === "failed") {
    return (
      <main class="auth">
        <div class="card auth-card" role="alert">
          <h1>Strata is unreachable</h1>
          <p>{boot.error}</p>
          <button type="button" class="button" onClick={() => void start()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  const signedIn = (s: Session) =>
    setBoot({ state: "ready", config: { ...boot.config, setupRequired: false }, user: s.user, memberships: s.memberships ?? [] });
  if (inviteToken !== null) {
    return (
      <AcceptInvite
        token={inviteToken}
        onJoined={(s) => {
          setInviteToken(null);
          navigate("/", { replace: true });
          signedIn(s);
        }}
      />
    );
  }
  if (!boot.user) {
    return (
      <AuthForm
        key={boot.config.setupRequired ? "setup" : "login"}
        mode={boot.config.setupRequired ? "setup" : "login"}
        setupToken={setupToken}
        onSignedIn={signedIn}
      />
    );
  }
  const logout = async () => {
    try {
      await api.logout();
    } finally {
      setBoot({ ...boot, user: null });
    }
  };
  return <Shell config={boot.config} user={boot.user} memberships={boot.memberships} onLogout={logout} />;
}

/**
 * Shell is the signed-in dashboard: a skip link to the page (the first
 * thing the keyboard reaches), the sidebar, the top bar and the page.
 */
function Shell(props: { config: DashboardConfig; user: User; memberships: Membership[]; onLogout: () => void }) {
  const loc = useLocation();
  const [products, setProducts] = useState<Product[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.products().then((r) => setProducts(r.items), (err) => setError(message(err)));
  }, []);

  const items = useMemo(() => navItems(props.config.features), [props.config.features]);
  const { product, missing } = currentProduct(products, loc);
  // Name the product in the URL, so that the address can be shared.
  useEffect(() => {
    if (product && loc.search.get("product") !== String(product.id)) {
      const s = new URLSearchParams(loc.search);
      s.set("product", String(product.id));
      navigate(`${loc.path}?${s}`, { replace: true });
    }
    if (product) localStorage.setItem(lastProductKey, String(product.id));
  }, [product?.id, loc.path, loc.search.toString()]);

  if (error) return <p class="splash" role="alert">{error}</p>;
  if (!products) return <p class="splash">Loading…</p>;

  // Dates, presets and chart labels follow the product's time zone.
  setTimeZone(product?.timeZone);
  const range = rangeFromSearch(loc.search);
  // A product the user cannot see shows no chart, so no date picker either.
  const item = missing ? undefined : activeItem(items, loc.path);
  const chart = item?.chart ?? false;
  // A user's events can be test data too, though they have no date range.
  const envPage = chart || (item?.env ?? false);
  const setRange = (r: DateRange) => navigate(`${loc.path}?${searchWithRange(loc.search, r)}`);
  const env = envFromSearch(loc.search);
  const setEnv = (e: DataEnv) => navigate(`${loc.path}?${searchWithEnv(loc.search, e)}`);
  // Another product keeps the shared parameters only: a page's own state
  // (a saved query, a release, a user) names things of this product.
  const productHref = (id: number) => {
    const s = new URLSearchParams(loc.search);
    s.set("product", String(id));
    return withParams(productPath(loc.path, id), s);
  };
  const switchProduct = (id: number) => navigate(productHref(id));
  const replaceProduct = (p: Product) => setProducts((list) => (list ?? []).map((x) => (x.id === p.id ? p : x)));

  return (
    <div class="shell">
      <a class="skip-link" href={`#${mainId}`} onClick={skipToContent}>
        Skip to content
      </a>
      <Sidebar items={items} path={loc.path} search={loc.search} email={props.user.email} onLogout={props.onLogout} main={mainId} />
      <div class="main">
        <header class="topbar">
          <ProductSwitcher products={products} current={product?.id ?? null} onChange={switchProduct} />
          {chart ? <DateRangePicker range={range} onChange={setRange} /> : null}
          {envPage ? <EnvSwitch env={env} onChange={setEnv} /> : null}
        </header>
        <main class="content" id={mainId} tabIndex={-1}>
          {envPage && env === "test" ? <TestDataBanner onLive={() => setEnv("live")} /> : null}
          {missing ? (
            <ProductNotFound
              id={missing}
              first={products[0]}
              firstHref={productHref(products[0].id)}
              list={withParams("/settings/products", loc.search, sharedParams.filter((k) => k !== "product"))}
            />
          ) : (
            <RoleContext.Provider value={roleIn(props.memberships, product?.workspaceId)}>
              <Page
                loc={loc}
                range={range}
                env={env}
                product={product}
                products={products}
                user={props.user}
                memberships={props.memberships}
                errorTracking={props.config.features.errorTracking}
                onProductCreated={(p) => setProducts((list) => [...(list ?? []), p])}
                onProductRenamed={replaceProduct}
              />
            </RoleContext.Provider>
          )}
        </main>
      </div>
    </div>
  );
}

/**
 * currentProduct is the product the URL names, else the one picked last,
 * else the first. A product the URL names that the user cannot see (it
 * does not exist, or is in another workspace) is not replaced by another:
 * missing is then its id, and the page says the product was not found.
 */
function currentProduct(products: Product[] | null, loc: Loc): { product: Product | null; missing: string | null } {
  if (!products || products.length === 0) return { product: null, missing: null };
  const byId = (raw: string | null) => products.find((p) => String(p.id) === raw);
  const named = loc.search.get("product");
  if (named) {
    const p = byId(named);
    return p ? { product: p, missing: null } : { product: null, missing: named };
  }
  return { product: byId(localStorage.getItem(lastProductKey)) ?? products[0], missing: null };
}

/**
 * productPath is where path leads for another product: a flag, an
 * experiment, a campaign, an error group, a replay or a user (distinct_ids
 * are a product's own) belongs to one product, so another product opens
 * its list, and a product's settings open the other product's.
 */
function productPath(path: string, id: number): string {
  const item = /^\/(flags|experiments|messages)\/(\d+|new)$/.exec(path) ?? /^\/(errors|replays|users|boards)\/./.exec(path);
  return path.startsWith("/settings/products/") ? `/settings/products/${id}` : item ? `/${item[1]}` : path;
}

/**
 * groupFingerprint is the fingerprint an /errors/{fingerprint} path names
 * (a client may send its own, so it is any text, escaped in the path), or
 * null when the path names none or cannot be decoded.
 */
function groupFingerprint(path: string): string | null {
  try {
    return decodeURIComponent(path.slice("/errors/".length)) || null;
  } catch {
    return null;
  }
}

function Page(props: {
  loc: Loc;
  range: DateRange;
  env: DataEnv;
  product: Product | null;
  products: Product[];
  user: User;
  memberships: Membership[];
  errorTracking: boolean;
  onProductCreated: (p: Product) => void;
  onProductRenamed: (p: Product) => void;
}) {
  const { path, search } = props.loc;
  const home = withParams("/", search);
  if (path === "/") return <Overview product={props.product} range={props.range} env={props.env} />;
  if (path === "/trends") return <Trends product={props.product} range={props.range} env={props.env} />;
  if (path === "/funnels") return <Funnels product={props.product} range={props.range} env={props.env} />;
  if (path === "/paths") return <Paths product={props.product} range={props.range} env={props.env} />;
  if (path === "/retention") return <Retention product={props.product} range={props.range} env={props.env} />;
  if (path === "/acquisition") return <Acquisition product={props.product} range={props.range} env={props.env} />;
  if (path === "/boards" || path.startsWith("/boards/")) return <Boards product={props.product} path={path} range={props.range} env={props.env} />;
  if (path === "/annotations") return <Annotations product={props.product} />;
  if (path === "/flags") return <Flags product={props.product} />;
  if (path === "/experiments") return <Experiments product={props.product} />;
  if (path === "/messages") return <Messages product={props.product} />;
  if (path === "/messages/new") return <CampaignPage product={props.product} id="new" />;
  const item = /^\/(flags|experiments|messages)\/(\d+)$/.exec(path);
  if (item?.[1] === "flags") return <FlagPage product={props.product} id={Number(item[2])} />;
  if (item?.[1] === "experiments") return <ExperimentPage product={props.product} id={Number(item[2])} />;
  if (item?.[1] === "messages") return <CampaignPage product={props.product} id={Number(item[2])} />;
  if (path === "/api-reference") return <ApiReference />;
  if (path === "/replays") return <Replays product={props.product} range={props.range} />;
  if (path.startsWith("/replays/")) {
    const id = groupFingerprint(path.replace("/replays/", "/errors/"));
    return id ? <ReplayPage product={props.product} sessionId={id} at={parseMoment(search.get("t"))} /> : <NotFound home={home} />;
  }
  if (path === "/people") return <People product={props.product} />;
  if (path === "/cohorts" || /^\/cohorts\/\d+$/.test(path)) return <Cohorts product={props.product} path={path} />;
  if (path === "/users") return <FindUser product={props.product} env={props.env} />;
  if (path.startsWith("/users/")) {
    const id = groupFingerprint(path.replace("/users/", "/errors/"));
    if (!id) return path === "/users/" ? <Redirect to={withParams("/users", search)} /> : <NotFound home={home} />;
    return <PersonPage product={props.product} distinctId={id} env={props.env} />;
  }
  // Errors exists only while the server runs with error tracking on.
  if (path === "/errors" || path.startsWith("/errors/")) {
    if (!props.errorTracking) return <NotFound home={home} />;
    if (path === "/errors") return <Errors product={props.product} range={props.range} env={props.env} />;
    const fingerprint = groupFingerprint(path);
    if (!fingerprint) return path === "/errors/" ? <Redirect to={withParams("/errors", search)} /> : <NotFound home={home} />;
    return <ErrorGroupPage product={props.product} fingerprint={fingerprint} range={props.range} env={props.env} />;
  }
  if (path === "/settings" || path === "/settings/") return <Redirect to={withParams("/settings/products", search)} />;
  // The workspace of Settings is the current product's, else the first
  // the user belongs to.
  const workspace = props.product?.workspaceId ?? props.memberships[0]?.workspaceId ?? 0;
  const role = roleIn(props.memberships, workspace);
  if (path === "/settings/products") return <Products products={props.products} role={role} onCreated={props.onProductCreated} />;
  if (path === "/settings/members") return <Members workspace={workspace} role={role} userId={props.user.id} />;
  const m = /^\/settings\/products\/(\d+)$/.exec(path);
  if (m) {
    const p = props.products.find((x) => String(x.id) === m[1]);
    return p ? <ProductSettings product={p} origin={location.origin} admin={roleIn(props.memberships, p.workspaceId) === "admin"} onRenamed={props.onProductRenamed} /> : <NotFound home={home} />;
  }
  return <NotFound home={home} />;
}

/** Redirect replaces the URL once drawn, leaving no history entry behind. */
function Redirect(props: { to: string }) {
  useEffect(() => navigate(props.to, { replace: true }), [props.to]);
  return null;
}
