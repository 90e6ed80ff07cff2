// The start of every e2e section that runs on a fresh server of its own:
// the owner is set up through the setup address (which signs them in),
// and the product the dashboard opens gets a live API key; joinAs adds a
// member of another role, signed in in a page of their own.
import { watchedPage } from "./page.mjs";

/**
 * setUpOwner creates the owner on page and returns the product the
 * dashboard opened and a new live API key of it.
 */
export async function setUpOwner(page, strata, owner) {
  await page.goto(strata.setupUrl);
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password", { exact: true }).fill(owner.password);
  await page.getByLabel("Repeat the password").fill(owner.password);
  await page.getByRole("button", { name: "Create owner account" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.waitForURL(/[?&]product=\d+/);
  const productId = Number(new URL(page.url()).searchParams.get("product"));
  const key = await page.evaluate(async (pid) => {
    const res = await fetch(`/api/v1/products/${pid}/keys`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ env: "live" }) });
    if (res.status !== 201) throw new Error(`creating a key: ${res.status} ${await res.text()}`);
    return (await res.json()).secret;
  }, productId);
  return { productId, key };
}

/**
 * joinAs invites `email` with `role` to the workspace of productId (the
 * owner's page sends the invite) and accepts it in a browser page of its
 * own, which is returned signed in on the Overview (a watchedPage).
 */
export async function joinAs(browser, h, ownerPage, productId, email, role) {
  const link = await ownerPage.evaluate(
    async ([pid, email, role]) => {
      const ws = (await (await fetch(`/api/v1/products/${pid}`)).json()).workspaceId;
      const r = await fetch(`/api/v1/workspaces/${ws}/invites`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, role }),
      });
      return (await r.json()).url;
    },
    [productId, email, role],
  );
  const joined = await watchedPage(browser, h, { width: 1280, height: 900 });
  await joined.page.goto(link);
  await joined.page.getByLabel("Password", { exact: true }).fill(`the ${role}'s password`);
  await joined.page.getByLabel("Repeat the password").fill(`the ${role}'s password`);
  await joined.page.getByRole("button", { name: "Join" }).click();
  await joined.page.getByRole("heading", { name: "Overview" }).waitFor();
  return joined;
}
