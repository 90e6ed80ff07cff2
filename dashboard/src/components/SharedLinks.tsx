import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { useAction, useLoad } from "../load";
import { ConfirmDialog } from "./ConfirmDialog";
import { CopyButton } from "./CopyButton";
import { RowActions, Table } from "./Table";
import { when } from "../format";
import type { SharedLink } from "../types";
import { useAllows } from "../roles";

/**
 * SharedLinks is the product settings' section of shared links: read-only
 * public links to the product's Overview (docs/dashboard.md, "Shared
 * links"). A new link's URL is shown once, with a copy button, since the
 * server keeps only a hash of its secret; revoking asks first.
 */
export function SharedLinks(props: { productId: number }) {
  const canWrite = useAllows("member");
  // Revoking a link is an admin's, as the server allows it.
  const canRevoke = useAllows("admin");
  const [links, reload] = useLoad(() => api.sharedLinks(props.productId).then((r) => r.items), [props.productId]);
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<SharedLink | null>(null);
  const { busy, notice, run } = useAction<string>();
  useEffect(() => setCreated(null), [props.productId]);

  const create = (e: Event) => {
    e.preventDefault();
    void run("create", async () => {
      const r = await api.createSharedLink(props.productId, name.trim(), password);
      setCreated(r.url);
      setName("");
      setPassword("");
      reload();
    });
  };
  const revoke = (l: SharedLink) =>
    run("revoke", async () => {
      await api.revokeSharedLink(props.productId, l.id);
      setRevoking(null);
      reload();
    });

  return (
    <section aria-labelledby="shared-title" data-testid="shared-links">
      <div class="section-head">
        <h2 id="shared-title">Shared links</h2>
      </div>
      <p class="muted">
        A shared link shows this product's Overview, read-only, to anyone who has it: page views, visitors, top pages, sources, browsers
        and operating systems. Nothing else of the product is reachable through it. Give it a password to limit it further.
      </p>
      {canWrite ? (
        <form class="inline-form" onSubmit={create} aria-label="Create a shared link">
          <label>
            Name
            <input name="share-name" required maxLength={100} value={name} placeholder="Investors' board" onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label>
            Password (optional)
            <input
              name="share-password"
              type="password"
              autocomplete="new-password"
              minLength={8}
              maxLength={256}
              value={password}
              onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="button" disabled={busy !== null || name.trim() === ""}>
            Create shared link
          </button>
        </form>
      ) : null}
      {notice.error ? (
        <p class="form-error" role="alert">
          {notice.error}
        </p>
      ) : null}
      {created ? (
        <div class="secret" role="status" data-testid="shared-link-created">
          <p class="secret-warning">
            <strong>Copy this link now.</strong> It is shown only once; Strata keeps only a hash of it.
          </p>
          <div class="secret-row">
            <code class="secret-value" data-testid="shared-link-url">
              {created}
            </code>
            <CopyButton text={created} label="Copy link" />
          </div>
          <button type="button" class="button secondary" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      ) : null}
      {links.state === "failed" ? (
        <p class="form-error" role="alert">
          {links.error}
        </p>
      ) : links.state !== "done" ? (
        <p class="muted">Loading…</p>
      ) : links.data.length === 0 ? (
        <p class="empty">No shared links yet.</p>
      ) : (
        <Table
          label="Shared links"
          actions={canRevoke}
          head={
            <>
              <th>Name</th>
              <th>Link</th>
              <th>Password</th>
              <th>Created</th>
            </>
          }
        >
          {links.data.map((l) => (
            <tr key={l.id} data-testid="shared-link-row">
              <td>{l.name}</td>
              <td>
                <code>{l.prefix}…</code>
              </td>
              <td>{l.hasPassword ? "Yes" : "No"}</td>
              <td>{when(l.createdAt)}</td>
              {canRevoke ? (
                <RowActions>
                  <button type="button" class="button small danger" disabled={busy !== null} onClick={() => setRevoking(l)}>
                    Revoke
                  </button>
                </RowActions>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke the shared link “${revoking.name}”?`}
          confirmLabel="Revoke link"
          busy={busy !== null}
          onConfirm={() => revoke(revoking)}
          onCancel={() => setRevoking(null)}
        >
          <p>Anyone who opens it from then on is told it was revoked. Revoking cannot be undone; create a new link to share again.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
