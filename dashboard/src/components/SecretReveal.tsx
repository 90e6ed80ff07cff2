import { CopyButton } from "./CopyButton";
import { snippet } from "../format";

/**
 * SecretReveal shows a credential's plaintext, the one time it exists
 * outside the server, with copy buttons; for an API key also the script
 * tag that installs the browser SDK with it.
 */
export function SecretReveal(props: { kind: "key" | "token"; secret: string; origin: string; onDone: () => void }) {
  const tag = props.kind === "key" ? snippet(props.origin, props.secret) : null;
  const isTest = props.secret.startsWith("st_test_");
  return (
    <div class="secret" role="status" data-testid="secret">
      <p class="secret-warning">
        <strong>Copy this {props.kind === "key" ? "API key" : "query token"} now.</strong> It is shown only once; Strata keeps only a hash of it.
      </p>
      <div class="secret-row">
        <code class="secret-value" data-testid="secret-value">
          {props.secret}
        </code>
        <CopyButton text={props.secret} label={props.kind === "key" ? "Copy API key" : "Copy query token"} />
      </div>
      {tag ? (
        <>
          <p>Add the browser SDK to your pages with this snippet:</p>
          <div class="secret-row">
            <code class="snippet" data-testid="snippet">
              {tag}
            </code>
            <CopyButton text={tag} label="Copy snippet" />
          </div>
          {isTest ? <p class="muted">Test keys are accepted only from local origins (localhost, *.local, *.test) and their events stay out of live data.</p> : null}
        </>
      ) : (
        <p class="muted">
          Send it as <code>Authorization: Bearer …</code> to the query API (<code>/api/v1/query/…</code>).
        </p>
      )}
      <button type="button" class="button secondary" onClick={props.onDone}>
        I have copied it
      </button>
    </div>
  );
}
