import { useState } from "preact/hooks";
import { api, message } from "../api";
import type { Session } from "../types";

/** The shortest password setup accepts; the server checks it too. */
export const minPasswordLength = 10;

/**
 * AuthForm is the first-run setup form (create the owner) or the sign-in
 * form. Both take an email and a password and end signed in.
 */
export function AuthForm(props: { mode: "setup" | "login"; onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const setup = props.mode === "setup";

  const submit = async (e: Event) => {
    e.preventDefault();
    if (setup && [...password].length < minPasswordLength) {
      setError(`The password must be at least ${minPasswordLength} characters long.`);
      return;
    }
    if (setup && password !== confirm) {
      setError("The two passwords differ.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      props.onSignedIn(setup ? await api.setup(email, password) : await api.login(email, password));
    } catch (err) {
      setError(message(err));
      setBusy(false);
    }
  };

  return (
    <main class="auth">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="auth-title">
        <div class="brand">
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <span>Strata</span>
        </div>
        <h1 id="auth-title">{setup ? "Set up Strata" : "Sign in"}</h1>
        {setup ? (
          <p class="muted">
            This server has no owner yet. Choose the email and password of its owner account; there is no default password.
          </p>
        ) : null}
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autocomplete={setup ? "new-password" : "current-password"}
            required
            value={password}
            onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        {setup ? (
          <>
            <label>
              Repeat the password
              <input type="password" name="confirm" autocomplete="new-password" required value={confirm} onInput={(e) => setConfirm((e.currentTarget as HTMLInputElement).value)} />
            </label>
            <p class="hint">At least {minPasswordLength} characters. A long phrase is easier to remember and harder to guess.</p>
          </>
        ) : null}
        {error ? (
          <p class="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="button" disabled={busy}>
          {setup ? "Create owner account" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
