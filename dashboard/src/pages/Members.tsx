import { useEffect, useState } from "preact/hooks";
import { api, message } from "../api";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { CopyButton } from "../components/CopyButton";
import { Link } from "../components/Link";
import { Table } from "../components/Table";
import { when } from "../format";
import { allows } from "../roles";
import type { Invite, InviteCreated, Member, Role } from "../types";
import { minPasswordLength } from "./AuthForm";

const roles: readonly Role[] = ["viewer", "member", "admin"];

/**
 * Members is Settings → Members: for an admin, the workspace's members
 * with their roles (change, remove) and its invites (create, revoke; a new
 * invite's link is shown once); for everyone, the form that changes their
 * own password.
 */
export function Members(props: { workspace: number; role: Role | null; userId: number }) {
  const admin = allows(props.role, "admin");
  return (
    <section class="page">
      <p class="crumbs">
        Settings · <Link href="/settings/products">Products</Link>
      </p>
      <h1>Members</h1>
      {admin ? (
        <Team workspace={props.workspace} userId={props.userId} />
      ) : (
        <p class="muted" data-testid="members-admin-only">
          You are a {props.role ?? "guest"} of this workspace. Only its admins invite people and manage members.
        </p>
      )}
      <PasswordForm />
    </section>
  );
}

function Team(props: { workspace: number; userId: number }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [created, setCreated] = useState<InviteCreated | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    try {
      const [m, i] = await Promise.all([api.members(props.workspace), api.invites(props.workspace)]);
      setMembers(m.items);
      setInvites(i.items);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void load(), [props.workspace]);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      await load();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const invite = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      setCreated(await api.createInvite(props.workspace, email, role));
      setEmail("");
    });
  };

  return (
    <>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <Table
        label="Members"
        head={
          <>
            <th>Email</th>
            <th>Role</th>
            <th>Joined</th>
            <th>
              <span class="visually-hidden">Actions</span>
            </th>
          </>
        }
      >
        {(members ?? []).map((m) => (
          <tr key={m.userId} data-testid="member-row">
            <td>{m.email}</td>
            <td>
              <select
                aria-label={`Role of ${m.email}`}
                value={m.role}
                disabled={busy}
                onChange={(e) => void run(() => api.setMemberRole(props.workspace, m.userId, (e.currentTarget as HTMLSelectElement).value as Role))}
              >
                {roles.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </td>
            <td>{when(m.createdAt)}</td>
            <td>
              {m.userId === props.userId ? null : (
                <button type="button" class="button secondary" disabled={busy} onClick={() => setRemoving(m)}>
                  Remove
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>

      <h2>Invites</h2>
      <form class="card inline-form" onSubmit={invite} aria-label="Invite someone">
        <label>
          Email
          <input type="email" name="inviteEmail" required value={email} onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Role
          <select name="inviteRole" value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="button" disabled={busy}>
          Create invite link
        </button>
      </form>
      {created ? (
        <div class="secret" role="status" data-testid="invite-link">
          <p class="secret-warning">
            <strong>Copy this link now and send it to {created.invite.email}.</strong> It is shown only once, works once, and expires{" "}
            {when(created.invite.expiresAt)}.{created.emailed ? " It was also e-mailed." : ""}
          </p>
          <div class="secret-row">
            <code class="secret-value" data-testid="invite-url">
              {created.url}
            </code>
            <CopyButton text={created.url} label="Copy invite link" />
          </div>
          <button type="button" class="button secondary" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      ) : null}
      <Table
        label="Pending invites"
        head={
          <>
            <th>Email</th>
            <th>Role</th>
            <th>Expires</th>
            <th>
              <span class="visually-hidden">Actions</span>
            </th>
          </>
        }
      >
        {(invites ?? []).map((i) => (
          <tr key={i.id} data-testid="invite-row">
            <td>{i.email}</td>
            <td>{i.role}</td>
            <td>{when(i.expiresAt)}</td>
            <td>
              <button type="button" class="button secondary" disabled={busy} onClick={() => void run(() => api.revokeInvite(props.workspace, i.id))}>
                Revoke
              </button>
            </td>
          </tr>
        ))}
      </Table>
      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove member"
          busy={busy}
          onConfirm={() => void run(async () => {
            await api.removeMember(props.workspace, removing.userId);
            setRemoving(null);
          })}
          onCancel={() => setRemoving(null)}
        >
          <p>They are signed out at once and can no longer open this workspace.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/** PasswordForm changes the signed-in user's password; their other sessions end. */
function PasswordForm() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await api.changePassword(current, next);
      setCurrent("");
      setNext("");
      setDone(true);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Change your password">
      <h2>Your password</h2>
      <label>
        Current password
        <input type="password" name="currentPassword" autocomplete="current-password" required value={current} onInput={(e) => setCurrent((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        New password
        <input
          type="password"
          name="newPassword"
          autocomplete="new-password"
          required
          minLength={minPasswordLength}
          value={next}
          onInput={(e) => setNext((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <p class="hint">At least {minPasswordLength} characters. Your other signed-in browsers are signed out.</p>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {done ? <p role="status">Password changed.</p> : null}
      <button type="submit" class="button" disabled={busy}>
        Change password
      </button>
    </form>
  );
}
