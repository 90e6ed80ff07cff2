import { useState } from "preact/hooks";
import { ApiError, api, message } from "../api";
import type { Session } from "../types";

/** The shortest password setup accepts; the server checks it too. */
export const minPasswordLength = 10;

/**
 * AuthForm is the first-run setup form (create the owner) or the sign-in
 * form. Both take an email and a password and end signed in. Setup also
 * sends the setup token: the one of the address the server printed
 * (setupToken, taken from the URL), or, opened without it, one typed into
 * a field of its own, which also appears when the server refuses the
 * token of the URL (a restart printed a new one).
 */
export function AuthForm(props: { mode: "setup" | "login"; setupToken?: string; onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [token, setToken] = useState(props.setupToken ?? "");
  const [askToken, setAskToken] = useState(!props.setupToken);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const setup = props.mode === "setup";

  const submit = async (e: Event) => {
    e.preventDefault();
    if (setup && !token.trim()) {
      setError("Enter the setup token from the server's log.");
      return;
    }
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
      props.onSignedIn(setup ? await api.setup(email, password, token.trim()) : await api.login(email, password));
    } catch (err) {
      if (err instanceof ApiError && err.code === "invalid_setup_token" && !askToken) {
        // The address's token is outdated: ask for the current one.
        setAskToken(true);
        setToken("");
      }
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
        {setup && askToken ? (
          <>
            <label>
              Setup token
              <input
                type="text"
                name="setupToken"
                autocomplete="off"
                spellcheck={false}
                required
                aria-describedby="setup-token-hint"
                value={token}
                onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
              />
            </label>
            <p class="hint" id="setup-token-hint">
              At its first start the server printed an address to open, ending in <code>?setup_token=…</code>, in its log (“first-run
              setup: open this address to create the owner”). Open that address, or paste the token here. Each restart prints a new one.
            </p>
          </>
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
