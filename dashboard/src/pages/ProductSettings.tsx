import { useEffect, useMemo, useState } from "preact/hooks";
import { api, message } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Crumb } from "../components/ItemHead";
import { SecretReveal } from "../components/SecretReveal";
import { SharedLinks } from "../components/SharedLinks";
import { GoalSettings } from "../components/GoalSettings";
import { DataRetention } from "../components/DataRetention";
import { PeopleData } from "../components/PeopleData";
import { PrivacySettings } from "../components/PrivacySettings";
import { RowActions, Table } from "../components/Table";
import { capitalise, when } from "../format";
import { useAllows } from "../roles";
import type { ApiKey, CredentialStatus, KeyEnv, Product, QueryToken } from "../types";

/** A credential in either list: an API key or a query token. */
type Credential = (ApiKey & { kind: "key" }) | (QueryToken & { kind: "token" });

/**
 * ProductSettings is Settings → Products → a product: its name, its API
 * keys, its query tokens and its shared links. New secrets are shown once; revoking asks
 * first, since it cannot be undone.
 */
export function ProductSettings(props: { product: Product; origin: string; admin: boolean; onRenamed: (p: Product) => void }) {
  const { product } = props;
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [tokens, setTokens] = useState<QueryToken[] | null>(null);
  const [secret, setSecret] = useState<{ kind: "key" | "token"; value: string } | null>(null);
  const [revoking, setRevoking] = useState<Credential | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    // Keys and tokens are an admin's (docs/security.md, "Roles"): other
    // roles neither list nor see them.
    if (!props.admin) return;
    try {
      const [k, t] = await Promise.all([api.keys(product.id), api.tokens(product.id)]);
      setKeys(k.items);
      setTokens(t.items);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => {
    setKeys(null);
    setTokens(null);
    setSecret(null);
    setError(null);
    void load();
  }, [product.id]);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const createKey = (env: KeyEnv) =>
    run(async () => {
      const r = await api.createKey(product.id, env);
      setSecret({ kind: "key", value: r.secret });
      await load();
    });
  const createToken = () =>
    run(async () => {
      const r = await api.createToken(product.id);
      setSecret({ kind: "token", value: r.secret });
      await load();
    });
  const setStatus = (c: Credential, status: CredentialStatus) =>
    run(async () => {
      if (c.kind === "key") await api.setKeyStatus(product.id, c.id, status);
      else await api.setTokenStatus(product.id, c.id, status);
      setRevoking(null);
      await load();
    });

  return (
    <section class="page">
      <Crumb href={`/settings/products?product=${product.id}`}>Settings → Products</Crumb>
      <h1>{product.name}</h1>
      <RenameForm product={product} onRenamed={props.onRenamed} />
      <TimeZoneForm product={product} onSaved={props.onRenamed} />
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {secret ? <SecretReveal kind={secret.kind} secret={secret.value} origin={props.origin} onDone={() => setSecret(null)} /> : null}

      {props.admin ? (
        <>
        <div class="section-head">
          <h2 id="keys-title">API keys</h2>
          <div class="actions">
            <button type="button" class="button" disabled={busy} onClick={() => createKey("live")}>
              Create live key
            </button>
            <button type="button" class="button secondary" disabled={busy} onClick={() => createKey("test")}>
              Create test key
            </button>
          </div>
        </div>
        <p class="muted">
          Keys send events to this product (ingest, <code>POST /e</code>). Test keys keep their events apart from live data: the chart
          pages show them when the top bar's Data switch is on Test.
        </p>
        <CredentialTable
          label="API keys"
          rows={keys?.map((k) => ({ ...k, kind: "key" as const })) ?? null}
          busy={busy}
          empty="No API keys yet. Create one to start sending events."
          onStatus={setStatus}
          onRevoke={setRevoking}
        />
        <p class="hint">Last use is recorded within about half a minute.</p>

        <div class="section-head">
          <h2 id="tokens-title">Query tokens</h2>
          <div class="actions">
            <button type="button" class="button" disabled={busy} onClick={createToken}>
              Create query token
            </button>
          </div>
        </div>
        <p class="muted">Tokens read this product's data through the query API; they cannot send events.</p>
        <CredentialTable
          label="Query tokens"
          rows={tokens?.map((t) => ({ ...t, kind: "token" as const })) ?? null}
          busy={busy}
          empty="No query tokens yet."
          onStatus={setStatus}
          onRevoke={setRevoking}
        />
        <p class="hint">Last use is recorded within about half a minute.</p>
        </>
      ) : (
        <p class="muted" data-testid="credentials-admin-only">
          Only an admin of this workspace manages API keys and query tokens.
        </p>
      )}

      <SharedLinks productId={product.id} />

      <GoalSettings productId={product.id} />

      <DataRetention productId={product.id} />
      <PrivacySettings productId={product.id} />
      <PeopleData productId={product.id} />

      {revoking ? (
        <ConfirmDialog
          title={`Revoke ${revoking.kind === "key" ? "API key" : "query token"} ${revoking.prefix}…?`}
          confirmLabel={revoking.kind === "key" ? "Revoke key" : "Revoke token"}
          busy={busy}
          onConfirm={() => setStatus(revoking, "revoked")}
          onCancel={() => setRevoking(null)}
        >
          <p>
            {revoking.kind === "key"
              ? "Every request with this key will be refused (401), including from pages that still embed it."
              : "Every query with this token will be refused (401)."}{" "}
            Revoking cannot be undone; to pause it instead, disable it.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/**
 * zoneChoices lists the IANA zones the browser knows, the browser's own
 * zone first, then UTC, then the rest in order; the product's zone is
 * listed even when the browser does not know it.
 */
export function zoneChoices(current: string): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  let all: string[] = [];
  try {
    all = (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf("timeZone");
  } catch {
    all = [];
  }
  const first = [own, "UTC", current].filter((z, i, a) => z && a.indexOf(z) === i);
  return [...first, ...all.filter((z) => !first.includes(z))];
}

/**
 * TimeZoneForm sets the product's time zone: the days, ranges and buckets
 * of every chart follow it (docs/queries.md, "Time zones").
 */
function TimeZoneForm(props: { product: Product; onSaved: (p: Product) => void }) {
  // Renaming and the time zone need the member role: disabled, not hidden, as the current value is worth seeing.
  const canWrite = useAllows("member");
  const current = props.product.timeZone ?? "UTC";
  const [zone, setZone] = useState(current);
  useEffect(() => setZone(current), [props.product.id, current]);
  const choices = useMemo(() => zoneChoices(current), [current]);
  const { state, save } = useProductSave(() => api.setProductTimeZone(props.product.id, zone), props.onSaved);
  return (
    <form class="inline-form" onSubmit={save} aria-label="Time zone">
      <label>
        Time zone
        <select name="timeZone" disabled={!canWrite} value={zone} onChange={(e) => setZone((e.currentTarget as HTMLSelectElement).value)}>
          {choices.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="button secondary" disabled={state.busy || zone === current || !canWrite} title={canWrite ? undefined : "Needs the member role"}>
        Save time zone
      </button>
      <SaveStatus state={state} />
      <p class="hint">Days, date ranges, "today" and chart buckets follow this zone.</p>
    </form>
  );
}

type SaveState = { error?: string; saved?: boolean; busy?: boolean };

/** useProductSave runs a change of the product from a form, keeping whether it is under way, done or refused. */
function useProductSave(update: () => Promise<Product>, onSaved: (p: Product) => void) {
  const [state, setState] = useState<SaveState>({});
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      onSaved(await update());
      setState({ saved: true });
    } catch (err) {
      setState({ error: message(err) });
    }
  };
  return { state, save };
}

/** SaveStatus says a form's change was saved, or why it was refused. */
function SaveStatus(props: { state: SaveState }) {
  return (
    <>
      {props.state.saved ? <span class="ok">Saved.</span> : null}
      {props.state.error ? (
        <span class="form-error" role="alert">
          {props.state.error}
        </span>
      ) : null}
    </>
  );
}

function RenameForm(props: { product: Product; onRenamed: (p: Product) => void }) {
  // Renaming and the time zone need the member role: disabled, not hidden, as the current value is worth seeing.
  const canWrite = useAllows("member");
  const [name, setName] = useState(props.product.name);
  useEffect(() => setName(props.product.name), [props.product.id, props.product.name]);
  const { state, save } = useProductSave(() => api.renameProduct(props.product.id, name), props.onRenamed);
  return (
    <form class="inline-form" onSubmit={save} aria-label="Rename product">
      <label>
        Name
        <input name="name" required maxLength={100} disabled={!canWrite} value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <button
        type="submit"
        class="button secondary"
        disabled={state.busy || name.trim() === props.product.name || !canWrite}
        title={canWrite ? undefined : "Needs the member role"}
      >
        Rename
      </button>
      <SaveStatus state={state} />
    </form>
  );
}

function CredentialTable(props: {
  label: string;
  rows: Credential[] | null;
  busy: boolean;
  empty: string;
  onStatus: (c: Credential, s: CredentialStatus) => void;
  onRevoke: (c: Credential) => void;
}) {
  if (props.rows === null) return <p class="muted">Loading…</p>;
  if (props.rows.length === 0) return <p class="empty">{props.empty}</p>;
  const keys = props.rows[0].kind === "key";
  return (
    <Table
      label={props.label}
      head={
        <>
          <th>Prefix</th>
          {keys ? <th>Kind</th> : null}
          <th>Status</th>
          <th>Created</th>
          <th>Last used</th>
          <th>
            <span class="visually-hidden">Actions</span>
          </th>
        </>
      }
    >
      {props.rows.map((c) => (
        <tr key={c.id} data-status={c.status}>
          <td>
            <code>{c.prefix}…</code>
          </td>
          {c.kind === "key" ? <td>{capitalise(c.env)}</td> : null}
          <td>
            <span class={`status status-${c.status}`}>{capitalise(c.status)}</span>
          </td>
          <td>{when(c.createdAt)}</td>
          <td>{when(c.lastUsedAt)}</td>
          <RowActions>
            {c.status === "active" ? (
              <button type="button" class="button small secondary" disabled={props.busy} onClick={() => props.onStatus(c, "disabled")}>
                Disable
              </button>
            ) : null}
            {c.status === "disabled" ? (
              <button type="button" class="button small secondary" disabled={props.busy} onClick={() => props.onStatus(c, "active")}>
                Enable
              </button>
            ) : null}
            {c.status !== "revoked" ? (
              <button type="button" class="button small danger" disabled={props.busy} onClick={() => props.onRevoke(c)}>
                Revoke
              </button>
            ) : null}
          </RowActions>
        </tr>
      ))}
    </Table>
  );
}
