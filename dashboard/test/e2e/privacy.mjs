// The People data card in a product's settings (issue 39 items 5–6;
// docs/privacy.md): the owner exports a person (a JSON download holding
// their events), deletes two persons by their ids after a confirmation,
// watches the job until done, and finds the request, the export and the
// end in the audit log, which never names the persons; their events are
// gone and another person's are not; a viewer's Settings do not show the
// card. Screenshots at 1280 and 390 px: people-data.png, people-data-phone.png.
// E2E_ONLY=privacy runs it alone.
import { readFile } from "node:fs/promises";
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** privacyPages runs the checks on a fresh server of its own. */
export async function privacyPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);
  const send = async (batch) => {
    const res = await fetch(`${strata.url}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
  };
  const pv = (id, path) => ({ event_name: "$pageview", distinct_id: id, url: "https://shop.example.com" + path, properties: { $session_id: "s-" + id } });
  await h.check("the persons' page views are accepted", () =>
    send([pv("ann@example.com", "/"), pv("ann@example.com", "/pricing"), pv("ben", "/"), pv("cleo", "/blog")]),
  );
  // The events of a person, through the owner's session.
  const eventsOf = (id) =>
    page.evaluate(async ([pid, id]) => {
      const r = await fetch(`/api/v1/users/${encodeURIComponent(id)}/events?product=${pid}`);
      return (await r.json()).events.length;
    }, [productId, id]);

  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  const card = page.getByTestId("people-data");
  await h.check("Settings show an admin the People data card, with an empty audit log", async () => {
    await card.getByRole("heading", { name: "People data" }).waitFor();
    await card.getByText("No deletion or export yet.").waitFor();
  });

  // The person updater writes ann's profile a moment after her events are
  // stored; wait for it so the export's profile is not a race.
  const hasProfile = (id) =>
    page.evaluate(async ([pid, id]) => (await fetch(`/api/v1/persons/${encodeURIComponent(id)}?product=${pid}`)).status === 200, [productId, id]);
  await h.check("exporting a person downloads one JSON document with their events and profile", async () => {
    for (let i = 0; !(await hasProfile("ann@example.com")); i++) {
      if (i >= 150) throw new Error("ann's profile was not written within 15 s");
      await page.waitForTimeout(100);
    }
    await card.getByRole("textbox", { name: "Export one person" }).fill("ann@example.com");
    const [download] = await Promise.all([page.waitForEvent("download"), card.getByRole("link", { name: "Download JSON" }).click()]);
    const doc = JSON.parse(await readFile(await download.path(), "utf8"));
    if (doc.distinctId !== "ann@example.com" || doc.events.length !== 2 || doc.profile?.distinctId !== "ann@example.com") throw new Error(JSON.stringify(doc).slice(0, 300));
  });

  await h.check("deleting asks first, then shows the job until it is done", async () => {
    await card.getByRole("textbox", { name: /Distinct ids to delete/ }).fill("ann@example.com\n\nben\nann@example.com\n");
    await card.getByRole("button", { name: "Delete 2 persons" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText("Delete these 2 persons everywhere?").waitFor();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await card.locator("[data-testid=people-data-job][data-status=done]").waitFor({ timeout: 20_000 });
    const text = await card.getByTestId("people-data-job").textContent();
    if (!/of 2 ids: done — deleted .*3 events/.test(text)) throw new Error(text);
  });
  await h.check("the persons' events are gone, another person's are not", async () => {
    const got = [await eventsOf("ann@example.com"), await eventsOf("ben"), await eventsOf("cleo")];
    if (JSON.stringify(got) !== "[0,0,1]") throw new Error(`events of ann, ben, cleo: ${got}`);
  });
  await h.check("the audit log lists the end, the request and the export, never the ids", async () => {
    await card.getByRole("cell", { name: "Deletion done" }).waitFor();
    const rows = await card
      .getByRole("table", { name: "Audit log" })
      .locator(":scope > tbody > tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll(":scope > td")].map((td) => td.textContent.trim())));
    const what = rows.map((r) => r[1]).join(", ");
    if (what !== "Deletion done, Deletion requested, Export") throw new Error(what);
    if (JSON.stringify(rows).includes("ann@") || JSON.stringify(rows).includes("ben")) throw new Error(JSON.stringify(rows));
  });
  await card.scrollIntoViewIfNeeded();
  await shot("people-data");
  await atPhoneWidth("the People data card", "people-data-phone");

  // A viewer, invited through the API and signed in by accepting.
  const invite = await page.evaluate(async (pid) => {
    const p = await (await fetch(`/api/v1/products/${pid}`)).json();
    const r = await fetch(`/api/v1/workspaces/${p.workspaceId}/invites`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "viewer@example.com", role: "viewer" }),
    });
    return (await r.json()).url;
  }, productId);
  const viewer = await watchedPage(browser, h, { width: 1280, height: 900 });
  await h.check("a viewer's Settings do not show the People data card", async () => {
    await viewer.page.goto(strata.url + "/");
    const status = await viewer.page.evaluate(async (token) => {
      const r = await fetch("/api/v1/invites/accept", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token, password: "the viewer's password" }) });
      return r.status;
    }, invite.split("#")[1]);
    if (status >= 300) throw new Error(`accepting: ${status}`);
    await viewer.page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
    await viewer.page.getByTestId("goal-settings").waitFor();
    if ((await viewer.page.getByTestId("people-data").count()) !== 0) throw new Error("a viewer sees the card");
  });
  await noPageErrors();
  await viewer.noPageErrors();
}
