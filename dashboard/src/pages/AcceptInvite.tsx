import { useState } from "preact/hooks";
import { api, message } from "../api";
import type { Session } from "../types";
import { minPasswordLength } from "./AuthForm";

/**
 * takeInviteToken reads the token of an invite link (/invite#st_inv_…)
 * once and takes it out of the address bar, so that it is not left in the
 * history. The token is in the fragment, which browsers never send to the
 * server, so no log holds it.
 */
export function takeInviteToken(): string {
  const token = location.hash.slice(1);
  if (token) history.replaceState(null, "", location.pathname);
  return token;
}

/**
 * AcceptInvite is the page an invite link opens: the invitee chooses a
 * password and joins the workspace with the invite's role, signed in.
 */
export function AcceptInvite(props: { token: string; onJoined: (s: Session) => void }) {
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (password !== confirm) {
      setError("The two passwords are not the same.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      props.onJoined(await api.acceptInvite(props.token, password));
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="invite-title">
        <div class="brand">
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <span>Strata</span>
        </div>
        <h1 id="invite-title">Join Strata</h1>
        {props.token ? (
          <p class="muted">You were invited to this dashboard. Choose a password to join; your email is the one the invite was sent to.</p>
        ) : (
          <p class="form-error" role="alert">
            This address has no invite token. Open the whole link you were sent, or ask an admin for a new one.
          </p>
        )}
        <label>
          Password
          <input type="password" name="password" autocomplete="new-password" required value={password} onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Repeat the password
          <input type="password" name="confirm" autocomplete="new-password" required value={confirm} onInput={(e) => setConfirm((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <p class="hint">At least {minPasswordLength} characters. A long phrase is easier to remember and harder to guess.</p>
        {error ? (
          <p class="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="button" disabled={busy || !props.token}>
          Join
        </button>
      </form>
    </main>
  );
}
