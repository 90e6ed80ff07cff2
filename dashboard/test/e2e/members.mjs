// The members part of the dashboard's end-to-end test: the owner opens
// Settings → Members, invites a viewer (the link shown once), and a second
// browser context opens the link, chooses a password and joins, signed in
// as a viewer: Settings hides what a viewer may not do (the invite form,
// creating products, the keys and tokens), and a write the viewer sends
// anyway is refused by the server with 403 role_forbidden; the Annotations
// and Flags pages and the shared links hide their writes from a viewer. The owner then
// sees the viewer among the members, and revokes a second invite. The
// viewer changes their password with the form. Screenshots at 1280 and 390
// px: members(-phone).png, invite-accept(-phone).png, members-viewer.png.
// E2E_ONLY=members runs it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** memberPages runs the checks on a fresh server of its own. */
export async function memberPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 800 });
  const { productId } = await setUpOwner(page, strata, h.owner);

  const invite = async (email, role) => {
    const form = page.getByRole("form", { name: "Invite someone" });
    await form.getByLabel("Email").fill(email);
    await form.getByLabel("Role").selectOption(role);
    await form.getByRole("button", { name: "Create invite link" }).click();
    const url = page.getByTestId("invite-url");
    await url.waitFor();
    const text = (await url.textContent()).trim();
    await page.getByRole("button", { name: "Done" }).click();
    return text;
  };
  await page.goto(`${strata.url}/settings/members?product=${productId}`);
  await page.getByRole("heading", { name: "Members" }).waitFor();
  let link;
  await h.check("an admin invites a viewer and sees the link once", async () => {
    link = await invite("viewer@example.com", "viewer");
    if (!new RegExp(`^${strata.url}/invite#st_inv_[0-9A-Za-z]{32}$`).test(link)) throw new Error(`link ${link}`);
    await page.getByTestId("invite-row").filter({ hasText: "viewer@example.com" }).waitFor();
    if ((await page.getByTestId("invite-url").count()) !== 0) throw new Error("the link is still shown");
  });
  await invite("later@example.com", "member");
  await shot("members");
  await atPhoneWidth("the Members page", "members-phone");

  // The invitee, in a browser of their own.
  const invitee = await watchedPage(browser, h, { width: 1280, height: 800 });
  const v = invitee.page;
  await v.goto(link);
  await h.check("the invite link opens the page that accepts it, and drops the token from the address", async () => {
    await v.getByRole("heading", { name: "Join Strata" }).waitFor();
    if (new URL(v.url()).hash !== "") throw new Error(`the address keeps the token: ${v.url()}`);
  });
  await invitee.shot("invite-accept");
  await invitee.atPhoneWidth("the invite page", "invite-accept-phone");
  await h.check("accepting signs the invitee in", async () => {
    await v.getByLabel("Password", { exact: true }).fill("the viewer's password");
    await v.getByLabel("Repeat the password").fill("the viewer's password");
    await v.getByRole("button", { name: "Join" }).click();
    await v.getByRole("heading", { name: "Overview" }).waitFor();
  });
  await h.check("the link works once", async () => {
    const status = await v.evaluate(async (token) => {
      const r = await fetch("/api/v1/invites/accept", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token, password: "another password" }) });
      return r.status;
    }, link.split("#")[1]);
    if (status !== 404) throw new Error(`a second acceptance answered ${status}`);
  });
  await h.check("a viewer's Settings hide what a viewer may not do", async () => {
    await v.goto(`${strata.url}/settings/members?product=${productId}`);
    await v.getByTestId("members-admin-only").waitFor();
    if ((await v.getByRole("form", { name: "Invite someone" }).count()) !== 0) throw new Error("the invite form is shown");
    await v.goto(`${strata.url}/settings/products?product=${productId}`);
    await v.getByRole("heading", { name: "Products" }).waitFor();
    if ((await v.getByRole("form", { name: "New product" }).count()) !== 0) throw new Error("the new-product form is shown");
    await v.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
    await v.getByTestId("credentials-admin-only").waitFor();
    if ((await v.getByRole("button", { name: "Create live key" }).count()) !== 0) throw new Error("the key buttons are shown");
  });
  await invitee.shot("members-viewer");
  await h.check("a viewer's pages hide the writes: no new annotation, flag or shared link", async () => {
    await v.goto(`${strata.url}/annotations?product=${productId}`);
    await v.getByRole("heading", { name: "Annotations" }).waitFor();
    if ((await v.getByRole("form", { name: "New annotation" }).count()) !== 0) throw new Error("the annotation form is shown");
    await v.goto(`${strata.url}/flags?product=${productId}`);
    await v.getByRole("heading", { name: "Flags" }).waitFor();
    if ((await v.getByRole("button", { name: "New flag" }).count()) !== 0) throw new Error("the New flag button is shown");
    await v.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
    await v.getByTestId("shared-links").waitFor();
    if ((await v.getByRole("form", { name: "Create a shared link" }).count()) !== 0) throw new Error("the shared-link form is shown");
  });
  await h.check("the server refuses a viewer's write with 403 role_forbidden", async () => {
    const r = await v.evaluate(async (pid) => {
      const res = await fetch(`/api/v1/annotations?product=${pid}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ label: "Launch", date: "2026-11-01T10:00:00Z", color: "emerald", scope: "workspace" }),
      });
      return { status: res.status, body: await res.json() };
    }, productId);
    if (r.status !== 403 || r.body.error.code !== "role_forbidden") throw new Error(`answered ${r.status} ${JSON.stringify(r.body)}`);
  });
  await h.check("the viewer changes their password with the form", async () => {
    await v.goto(`${strata.url}/settings/members?product=${productId}`);
    const form = v.getByRole("form", { name: "Change your password" });
    await form.getByLabel("Current password").fill("the viewer's password");
    await form.getByLabel("New password").fill("a newer password");
    await form.getByRole("button", { name: "Change password" }).click();
    await v.getByText("Password changed.").waitFor();
  });

  await h.check("the admin sees the viewer among the members and revokes the other invite", async () => {
    await page.reload();
    await page.getByTestId("member-row").filter({ hasText: "viewer@example.com" }).waitFor();
    const row = page.getByTestId("invite-row").filter({ hasText: "later@example.com" });
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.waitFor({ state: "detached" });
    if ((await page.getByTestId("invite-row").count()) !== 0) throw new Error("invites are still listed");
  });
  await h.check("no page errors on the members pages", () => {
    noPageErrors();
    invitee.noPageErrors();
  });
}
