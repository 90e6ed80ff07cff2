// The data-retention part of the dashboard's end-to-end test (issue 39
// item 7; docs/privacy.md, "Retention"), on a server of its own whose
// retention job runs every second (STRATA_RETENTION_INTERVAL=1s). The
// owner opens a product's Settings: the "Data retention" card shows the
// defaults as placeholders, refuses a period past ten years with a
// message, asks before a change that keeps less, and saves; the server
// then keeps the periods, and an event sent ten days back leaves the
// trend while today's stays. A viewer, invited and joined, finds the card
// without its form. Screenshots at 1280 and 390 px: retention-settings.png,
// retention-confirm.png, retention-settings-phone.png, retention-viewer.png.
// E2E_ONLY=retention runs it alone.
import { joinAs, setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** retentionPages runs the checks; `h` is the harness's (see run.mjs). */
export async function retentionPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "", STRATA_RETENTION_INTERVAL: "1s" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 900 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

  // One event now and one ten days back.
  const now = Date.now() - 60_000;
  const old = now - 10 * 86_400_000;
  const res = await fetch(strata.url + "/e", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify({
      batch: [now, old].map((t, i) => ({ event_name: "kept_event", distinct_id: `r${i}`, timestamp: new Date(t).toISOString() })),
    }),
  });
  if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  const day = (t) => new Date(t).toISOString().slice(0, 10);
  const counts = () =>
    page.evaluate(
      async ([pid, from, to]) => {
        const r = await fetch(`/api/v1/query/trend?product=${pid}`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ series: [{ event: "kept_event" }], dateFrom: from, dateTo: to, interval: "day" }),
        });
        return (await r.json()).series[0].data.reduce((n, p) => n + p.value, 0);
      },
      [productId, day(old), day(now)],
    );

  await page.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
  const form = page.getByRole("form", { name: "Data retention" });
  await h.check("the card shows the defaults and the server's replay limit", async () => {
    await form.waitFor();
    const holders = await form.locator("input").evaluateAll((els) => els.map((e) => e.placeholder));
    const want = ["Forever", "As the events", "30 (server)"];
    if (JSON.stringify(holders) !== JSON.stringify(want)) throw new Error(`placeholders ${JSON.stringify(holders)}`);
    await page.getByTestId("data-retention").getByText("Replays are kept at most 30 days").waitFor();
    for (let i = 0; (await counts()) !== 2; i++) {
      if (i > 100) throw new Error("the two events were not stored");
      await page.waitForTimeout(100);
    }
  });
  await h.check("a period past ten years is refused with a message, and nothing is sent", async () => {
    await form.getByLabel("Events (days)").fill("5000");
    await form.getByRole("button", { name: "Save retention" }).click();
    const alert = page.getByTestId("data-retention").getByRole("alert");
    await alert.waitFor();
    if (!(await alert.textContent()).includes("from 1 to 3650")) throw new Error(await alert.textContent());
    const stored = await page.evaluate(async (pid) => (await (await fetch(`/api/v1/products/${pid}/retention`)).json()).eventsDays, productId);
    if (stored !== 0) throw new Error(`the server keeps ${stored}`);
  });
  await h.check("a shorter period asks first, then saves", async () => {
    await form.getByLabel("Events (days)").fill("3");
    await form.getByLabel("Error occurrences (days)").fill("1");
    await form.getByRole("button", { name: "Save retention" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.waitFor();
    const text = await dialog.textContent();
    if (!text.includes("Events older than 3 days and error occurrences older than 1 day will be deleted") || !text.includes("cannot be undone")) {
      throw new Error(text);
    }
    if ((await page.getByTestId("data-retention").getByRole("alert").count()) !== 0) throw new Error("the refusal's message is still shown");
    await shot("retention-confirm");
    await dialog.getByRole("button", { name: "Delete and save" }).click();
    await page.getByTestId("data-retention").getByText("Saved.", { exact: false }).waitFor();
    const stored = await page.evaluate(async (pid) => (await (await fetch(`/api/v1/products/${pid}/retention`)).json()), productId);
    if (stored.eventsDays !== 3 || stored.errorsDays !== 1 || stored.replaysDays !== 0) throw new Error(JSON.stringify(stored));
  });
  await h.check("the retention job drops the event of ten days ago and keeps today's", async () => {
    for (let i = 0; (await counts()) !== 1; i++) {
      if (i > 200) throw new Error(`the trend still counts ${await counts()} events`);
      await page.waitForTimeout(100);
    }
  });
  await shot("retention-settings");
  await atPhoneWidth("the Settings page with the retention card", "retention-settings-phone");

  // A viewer, invited through the API and joined in a browser of their own.
  const viewer = await joinAs(browser, h, page, productId, "viewer@example.com", "viewer");
  const v = viewer.page;
  await h.check("a viewer finds the card without its form, and the server refuses their change", async () => {
    await v.goto(`${strata.url}/settings/products/${productId}?product=${productId}`);
    await v.getByTestId("retention-admin-only").waitFor();
    if ((await v.getByRole("form", { name: "Data retention" }).count()) !== 0) throw new Error("the form is shown");
    const status = await v.evaluate(async (pid) => {
      const r = await fetch(`/api/v1/products/${pid}/retention`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ eventsDays: 1 }),
      });
      return `${r.status} ${(await r.json()).error.code}`;
    }, productId);
    if (status !== "403 role_forbidden") throw new Error(status);
  });
  await viewer.shot("retention-viewer");
  await h.check("the pages raised no errors", async () => {
    noPageErrors();
    viewer.noPageErrors();
  });
}
