// The Privacy card of a product's Settings (issue 39 item 8; docs/privacy.md,
// "Cookieless mode"), on a server of its own. The owner finds both settings
// off, turns cookieless mode on (the card says what it cannot count before
// the save) and honours privacy signals; the server keeps them, the SDK's
// configuration carries them, and the audit log records the change. A member,
// invited and joined, finds the card without its form, and the server refuses
// their change. Screenshots at 1280 and 390 px: privacy-settings.png,
// privacy-settings-phone.png, privacy-settings-member.png.
// E2E_ONLY=cookieless runs it alone.
import { joinAs, setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** cookielessPages runs the checks; `h` is the harness's (see run.mjs). */
export async function cookielessPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const sdkConfig = async () => (await fetch(`${strata.url}/api/v1/config?api_key=${encodeURIComponent(key)}`)).json();

  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  const card = page.getByTestId("privacy-settings");
  const form = page.getByRole("form", { name: "Privacy" });
  const cookieless = form.getByLabel("Cookieless mode", { exact: false });
  const signals = form.getByLabel("Send nothing for browsers that ask not to be tracked", { exact: false });
  const save = form.getByRole("button", { name: "Save privacy settings" });
  await h.check("the Privacy card shows both settings off, with nothing to save", async () => {
    await form.waitFor();
    if (await cookieless.isChecked()) throw new Error("cookieless mode is on");
    if (await signals.isChecked()) throw new Error("privacy signals are honoured");
    if (!(await save.isDisabled())) throw new Error("Save is enabled before a change");
    const c = await sdkConfig();
    if (c.cookieless !== false || c.respectPrivacySignals !== false) throw new Error(JSON.stringify(c));
  });
  await h.check("turning cookieless mode on says what it cannot count, before the save", async () => {
    await cookieless.check();
    const text = await card.getByTestId("cookieless-counts").textContent();
    if (!text.includes("counts again") || !text.includes("retention")) throw new Error(text);
    if ((await sdkConfig()).cookieless !== false) throw new Error("saved before Save");
  });
  await h.check("saving keeps both settings, and the SDK's configuration carries them at once", async () => {
    await signals.check();
    await save.click();
    await card.getByText("Saved.", { exact: false }).waitFor();
    const stored = await page.evaluate(async (pid) => (await fetch(`/api/v1/products/${pid}/privacy`)).json(), productId);
    if (stored.cookieless !== true || stored.respectPrivacySignals !== true) throw new Error(JSON.stringify(stored));
    const c = await sdkConfig();
    if (c.cookieless !== true || c.respectPrivacySignals !== true) throw new Error(JSON.stringify(c));
    if (!(await save.isDisabled())) throw new Error("Save is still enabled");
  });
  await h.check("the change is in the audit log, and the card shows it after a reload", async () => {
    const log = await page.evaluate(async (pid) => (await fetch(`/api/v1/products/${pid}/audit-log`)).json(), productId);
    if (!log.items.some((e) => e.summary.includes("cookieless on, privacy signals on"))) throw new Error(JSON.stringify(log.items));
    await page.reload();
    await form.waitFor();
    if (!(await cookieless.isChecked()) || !(await signals.isChecked())) throw new Error("the card lost the settings");
  });
  await card.scrollIntoViewIfNeeded();
  await shot("privacy-settings");
  await atPhoneWidth("the Settings page with the Privacy card", "privacy-settings-phone");

  // A member, invited through the API and joined in a browser of their own.
  const member = await joinAs(browser, h, page, productId, "member@example.com", "member");
  const m = member.page;
  await h.check("a member finds the card without its form, and the server refuses their change", async () => {
    await m.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
    await m.getByTestId("privacy-settings-admin-only").waitFor();
    if ((await m.getByRole("form", { name: "Privacy" }).count()) !== 0) throw new Error("the form is shown");
    const status = await m.evaluate(async (pid) => {
      const r = await fetch(`/api/v1/products/${pid}/privacy`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ cookieless: false }),
      });
      return `${r.status} ${(await r.json()).error.code}`;
    }, productId);
    if (status !== "403 role_forbidden") throw new Error(status);
  });
  await m.getByTestId("privacy-settings").scrollIntoViewIfNeeded();
  await member.shot("privacy-settings-member");
  await h.check("the pages raised no errors", async () => {
    noPageErrors();
    member.noPageErrors();
  });
}
