import { useEffect, useMemo, useState } from "preact/hooks";
import { api, message } from "../api";
import { Markdown } from "../components/Markdown";
import { ErrorState, Skeleton } from "../components/States";
import { plural } from "../format";
import { parseSpec, type Content, type Field, type Operation, type Parameter, type Response, type SchemaView, type Spec } from "../openapi";
import type { BuildInfo } from "../types";
import "./api-reference.css";

type State = { state: "loading" } | { state: "failed"; error: string } | { state: "ready"; spec: Spec; build: BuildInfo | null };

/**
 * ApiReferenceView draws the HTTP API's reference from the contract the
 * server serves (GET /api/v1/openapi.yaml), so it always describes the
 * running build: the operations grouped by tag, each with its description,
 * credential, parameters, request body, responses and error codes.
 */
export function ApiReferenceView() {
  const [state, setState] = useState<State>({ state: "loading" });
  const [filter, setFilter] = useState("");
  const load = async () => {
    setState({ state: "loading" });
    let text: string;
    let build: BuildInfo | null;
    try {
      [text, build] = await Promise.all([api.spec(), api.version().catch(() => null)]);
    } catch (err) {
      setState({ state: "failed", error: `The API description could not be read: ${message(err)}` });
      return;
    }
    try {
      setState({ state: "ready", spec: parseSpec(text), build });
    } catch (err) {
      // A YAML syntax error or a document that is not OpenAPI: say which.
      setState({ state: "failed", error: `The API description could not be read: ${err instanceof Error ? err.message : String(err)}` });
    }
  };
  useEffect(() => void load(), []);
  // A link to an operation (#queryFunnel) opens it once the page is drawn,
  // and so does following one on the page.
  useEffect(() => {
    if (state.state !== "ready") return;
    const open = () => {
      const el = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
      if (el instanceof HTMLDetailsElement) el.open = true;
      el?.scrollIntoView?.();
    };
    open();
    window.addEventListener("hashchange", open);
    return () => window.removeEventListener("hashchange", open);
  }, [state.state]);

  const spec = state.state === "ready" ? state.spec : null;
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = useMemo(
    () => (spec?.tags ?? []).map((t) => ({ ...t, operations: t.operations.filter((op) => matches(op, t.name, words)) })),
    [spec, words.join(" ")],
  );
  const count = shown.reduce((n, t) => n + t.operations.length, 0);

  if (state.state !== "ready" || !spec) {
    return (
      <section class="page">
        <h1>API reference</h1>
        {state.state === "failed" ? <ErrorState message={state.error} onRetry={() => void load()} /> : <Skeleton rows={6} />}
      </section>
    );
  }
  return (
    <section class="page api-ref">
      <h1>API reference</h1>
      <p class="muted api-meta">
        {spec.title} {spec.version}
        {state.build ? ` · this server runs strata ${buildLine(state.build)}` : ""} ·{" "}
        <a href="/api/v1/openapi.yaml" download="openapi.yaml">
          openapi.yaml
        </a>
      </p>
      <details class="card api-intro">
        <summary>Conventions: errors, request bodies, credentials, dates</summary>
        <Markdown text={spec.description} />
      </details>
      {spec.schemes.length ? (
        <details class="card api-intro">
          <summary>Credentials</summary>
          <dl class="api-schemes">
            {spec.schemes.map((s) => (
              <div key={s.name}>
                <dt>
                  <code>{s.name}</code> <span class="muted">{s.label}</span>
                </dt>
                <dd>
                  <Markdown text={s.description} />
                </dd>
              </div>
            ))}
          </dl>
        </details>
      ) : null}
      <div class="api-toolbar">
        <label class="api-filter">
          Filter operations
          <input type="search" placeholder="path, method or summary" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <span class="muted" aria-live="polite">
          {plural(count, "operation")}
        </span>
      </div>
      <nav class="api-tags" aria-label="API sections">
        {shown
          .filter((t) => t.operations.length)
          .map((t) => (
            <a key={t.name} href={`#tag-${t.name}`}>
              {t.name} <span class="muted">{t.operations.length}</span>
            </a>
          ))}
      </nav>
      {count === 0 ? <p class="empty">No operation matches “{filter}”.</p> : null}
      {shown
        .filter((t) => t.operations.length)
        .map((t) => (
          <section key={t.name} id={`tag-${t.name}`} class="api-tag" aria-labelledby={`tag-${t.name}-title`}>
            <h2 id={`tag-${t.name}-title`}>{t.name}</h2>
            <Markdown text={t.description} class="muted" />
            {t.operations.map((op) => (
              <OperationView key={op.id} op={op} schemes={spec.schemes} />
            ))}
          </section>
        ))}
    </section>
  );
}

/** matches reports whether every word of the filter is in the operation's method, path, summary, id or tag. */
function matches(op: Operation, tag: string, words: string[]): boolean {
  const hay = `${op.method} ${op.path} ${op.summary} ${op.id} ${tag}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** buildLine writes a build as `strata version` does. */
function buildLine(b: BuildInfo): string {
  const commit = [b.commit ? `commit ${b.commit.slice(0, 12)}` : "", b.commitTime, b.modified ? "modified" : ""].filter(Boolean);
  return `${b.version}${commit.length ? ` (${commit.join(", ")})` : ""} ${b.go}`;
}

/** OperationView is one operation, folded to its method, path and summary until opened. */
function OperationView(props: { op: Operation; schemes: Spec["schemes"] }) {
  const { op } = props;
  return (
    <details class="api-op" id={op.id} data-operation={`${op.method} ${op.path}`}>
      <summary>
        <span class={`api-method api-method-${op.method.toLowerCase()}`}>{op.method}</span>
        <code class="api-path">{op.path}</code>
        <span class="api-summary">{op.summary}</span>
      </summary>
      <div class="api-op-body">
        <Markdown text={op.description} />
        <Security op={op} schemes={props.schemes} />
        {op.parameters.length ? (
          <>
            <h3>Parameters</h3>
            <ul class="api-fields">
              {op.parameters.map((p) => (
                <ParameterView key={`${p.in} ${p.name}`} p={p} />
              ))}
            </ul>
          </>
        ) : null}
        {op.body ? (
          <>
            <h3>
              Request body <span class="api-badge">{op.body.required ? "required" : "optional"}</span>
            </h3>
            <Markdown text={op.body.description} />
            {op.body.content.map((c) => (
              <ContentView key={c.mediaType} c={c} />
            ))}
          </>
        ) : null}
        <h3>Responses</h3>
        <ul class="api-responses">
          {op.responses.map((r) => (
            <ResponseView key={r.status} r={r} />
          ))}
        </ul>
      </div>
    </details>
  );
}

/** Security says which credential the operation takes. */
function Security(props: { op: Operation; schemes: Spec["schemes"] }) {
  const { security } = props.op;
  if (security === null) return null;
  const label = (name: string) => props.schemes.find((s) => s.name === name)?.label ?? name;
  const ways = security.map((names) => (names.length ? names.map(label).join(" and ") : "none"));
  return (
    <p class="api-auth">
      <strong>Credential:</strong> {security.length === 0 ? "none" : ways.join(", or ")}
    </p>
  );
}

function ParameterView(props: { p: Parameter }) {
  const { p } = props;
  return (
    <li data-field={p.name}>
      <div class="api-field-head">
        <code class="api-field-name">{p.name}</code>
        <span class="api-in">in {p.in}</span>
        {p.schema ? <span class="api-type">{p.schema.type}</span> : null}
        {p.required ? <span class="api-badge">required</span> : null}
        {p.schema ? <Constraints s={p.schema} /> : null}
      </div>
      <Markdown text={p.description || p.schema?.description || ""} class="api-field-desc" />
    </li>
  );
}

/** ContentView is a body of one media type: its schema's name and fields, and an example. */
function ContentView(props: { c: Content }) {
  const { c } = props;
  return (
    <div class="api-content">
      <p class="api-media">
        <code>{c.mediaType}</code>
        {c.schema?.name ? <span class="api-type">{c.schema.name}</span> : c.schema ? <span class="api-type">{c.schema.type}</span> : null}
      </p>
      {c.schema ? <SchemaBody s={c.schema} /> : null}
      {c.example !== null ? (
        <details class="api-example">
          <summary>Example</summary>
          <pre>
            <code>{c.example}</code>
          </pre>
        </details>
      ) : null}
    </div>
  );
}

function SchemaBody(props: { s: SchemaView }) {
  const { s } = props;
  return (
    <>
      {s.fields.length ? <Fields fields={s.fields} /> : null}
      {s.variants.map((v, i) => (
        <div class="api-variant" key={i}>
          <p class="api-variant-head">
            {i === 0 && !s.fields.length ? "One of:" : "Or:"} <span class="api-type">{v.name || v.type}</span>
          </p>
          <Fields fields={v.fields} />
        </div>
      ))}
    </>
  );
}

/** Fields lists an object's fields, nested objects inside their field. */
function Fields(props: { fields: Field[] }) {
  return (
    <ul class="api-fields">
      {props.fields.map((f) => (
        <li key={f.name} data-field={f.name}>
          <div class="api-field-head">
            <code class="api-field-name">{f.name}</code>
            <span class="api-type">{f.schema.type}</span>
            {f.required ? <span class="api-badge">required</span> : null}
            <Constraints s={f.schema} />
          </div>
          <Markdown text={f.schema.description} class="api-field-desc" />
          <SchemaBody s={f.schema} />
        </li>
      ))}
    </ul>
  );
}

function Constraints(props: { s: SchemaView }) {
  if (!props.s.constraints.length) return null;
  return <span class="api-constraints">{props.s.constraints.join(" · ")}</span>;
}

function ResponseView(props: { r: Response }) {
  const { r } = props;
  const success = r.status.startsWith("2") || r.status.startsWith("3");
  return (
    <li class="api-response">
      <div class="api-response-head">
        <span class={`api-status api-status-${r.status.charAt(0)}xx`}>{r.status}</span>
        {r.codes.length ? (
          <span class="api-codes" aria-label="Error codes">
            {r.codes.map((c) => (
              <code key={c}>{c}</code>
            ))}
          </span>
        ) : null}
      </div>
      <Markdown text={r.description} />
      {success ? r.content.map((c) => <ContentView key={c.mediaType} c={c} />) : null}
    </li>
  );
}
