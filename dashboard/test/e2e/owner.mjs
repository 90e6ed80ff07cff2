// The start of every e2e section that runs on a fresh server of its own:
// the owner is set up through the setup address (which signs them in),
// and the product the dashboard opens gets a live API key.

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
