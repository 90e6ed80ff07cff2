import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { PrivacySettings as Settings } from "../types";

/**
 * PrivacySettings is the product settings' "Privacy" card (docs/privacy.md,
 * "Cookieless mode" and "Opting out"): whether the product's browser SDKs
 * keep nothing in the browser, and whether they honour Global Privacy
 * Control and Do Not Track. A page's own init options win over these. Only
 * an admin reads and sets them, as the server allows; what cookieless mode
 * cannot count is said beside the switch, before it is saved.
 */
export function PrivacySettings(props: { productId: number }) {
  const admin = useAllows("admin");
  const [load, reload] = useLoad(admin ? () => api.privacySettings(props.productId) : null, [props.productId, admin]);
  const stored = load.state === "done" ? load.data : null;
  const [draft, setDraft] = useState<Settings>({ cookieless: false, respectPrivacySignals: false });
  const { busy, notice, run } = useAction<"save">();
  useEffect(() => {
    if (stored) setDraft(stored);
  }, [stored]);

  if (!admin) {
    return (
      <section aria-labelledby="privacy-settings-title" data-testid="privacy-settings">
        <h2 id="privacy-settings-title">Privacy</h2>
        <p class="muted" data-testid="privacy-settings-admin-only">
          Only an admin of this workspace sets whether this product's visitors are tracked without cookies.
        </p>
      </section>
    );
  }

  const changed = stored !== null && (draft.cookieless !== stored.cookieless || draft.respectPrivacySignals !== stored.respectPrivacySignals);
  const save = (e: Event) => {
    e.preventDefault();
    void run("save", async () => {
      await api.setPrivacySettings(props.productId, draft);
      reload();
      return "Saved. Browsers pick it up within seconds, at their next page load.";
    });
  };

  return (
    <section aria-labelledby="privacy-settings-title" data-testid="privacy-settings">
      <div class="section-head">
        <h2 id="privacy-settings-title">Privacy</h2>
      </div>
      <p class="muted">
        What the browser SDK keeps and sends for this product's visitors. A page that sets <code>cookieless</code> or{" "}
        <code>respectPrivacySignals</code> in <code>init</code> keeps its own choice.
      </p>
      {load.state === "failed" ? (
        <p class="form-error" role="alert">
          {load.error}
        </p>
      ) : null}
      {stored === null ? (
        load.state === "failed" ? null : <p class="muted">Loading…</p>
      ) : (
        <form class="stack-form" onSubmit={save} aria-label="Privacy">
          <label class="checkbox">
            <input
              type="checkbox"
              name="cookieless"
              checked={draft.cookieless}
              onChange={(e) => setDraft({ ...draft, cookieless: (e.currentTarget as HTMLInputElement).checked })}
            />
            Cookieless mode: keep nothing in cookies or browser storage
          </label>
          {draft.cookieless ? (
            <p class="hint" data-testid="cookieless-counts">
              Each visitor is counted from a hash of their address and browser that changes every day, as Plausible does. Unique visitors
              and sessions within a day stay right; a visitor who returns on another day counts again, so returning visitors, retention
              and funnels across days count anonymous visitors as new ones, and session replay is off. Identified users are followed as
              before, from the page load they sign in.
            </p>
          ) : null}
          <label class="checkbox">
            <input
              type="checkbox"
              name="respectPrivacySignals"
              checked={draft.respectPrivacySignals}
              onChange={(e) => setDraft({ ...draft, respectPrivacySignals: (e.currentTarget as HTMLInputElement).checked })}
            />
            Send nothing for browsers that ask not to be tracked (Global Privacy Control, Do Not Track)
          </label>
          <div>
            <button type="submit" class="button secondary" disabled={busy !== null || !changed}>
              Save privacy settings
            </button>
          </div>
        </form>
      )}
      {notice.ok ? <p class="ok">{notice.ok}</p> : null}
      {notice.error ? (
        <p class="form-error" role="alert">
          {notice.error}
        </p>
      ) : null}
    </section>
  );
}
