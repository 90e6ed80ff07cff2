// The members part of the dashboard's end-to-end test: the owner opens
// Settings → Members, invites a viewer (the link shown once), and a second
// browser context opens the link, chooses a password and joins, signed in
// as a viewer: Settings hides what a viewer may not do (the invite form,
// creating products, the keys and tokens), and a write the viewer sends
// anyway is refused by the server with 403 role_forbidden; the Annotations
// and Flags pages and the shared links hide their writes from a viewer. The owner then
// sees the viewer among the members, and revokes a second invite. The
// viewer changes their password with the form. With an experiment, a
// campaign, an error, a replay, a saved trend, a goal and a shared link made
// by the owner, a viewer finds no write control on Experiments, Messages,
// Errors, Replays, Trends' saved list or the goals settings, a member (invited and joined
// too) finds the writes but no delete, and the owner finds the deletes.
// Screenshots at 1280 and 390 px: members(-phone).png,
// invite-accept(-phone).png, members-viewer.png,
// roles-viewer-campaign(-phone).png.
// E2E_ONLY=members runs it alone.
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/** memberPages runs the checks on a fresh server of its own. */
export async function memberPages(browser, h) {
  const strata = await h.startStrata({ NEXT_PUBLIC_FEATURE_ERROR_TRACKING: "true" });
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h, { width: 1280, height: 800 });
  const { productId, key } = await setUpOwner(page, strata, h.owner);

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
  const memberLink = await invite("member@example.com", "member");
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
  await roleChecks(h, strata, productId, key, page, invitee, await join(browser, h, memberLink, "the member's password"));

  await h.check("the viewer changes their password with the form", async () => {
    await v.goto(`${strata.url}/settings/members?product=${productId}`);
    const form = v.getByRole("form", { name: "Change your password" });
    await form.getByLabel("Current password").fill("the viewer's password");
    await form.getByLabel("New password").fill("a newer password");
    await form.getByRole("button", { name: "Change password" }).click();
    await v.getByText("Password changed.").waitFor();
  });

  await h.check("the admin sees the viewer among the members and revokes the other invite", async () => {
    await page.goto(`${strata.url}/settings/members?product=${productId}`);
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

/** join accepts an invite link in a browser of its own and returns its page. */
async function join(browser, h, link, password) {
  const joined = await watchedPage(browser, h, { width: 1280, height: 800 });
  await joined.page.goto(link);
  await joined.page.getByLabel("Password", { exact: true }).fill(password);
  await joined.page.getByLabel("Repeat the password").fill(password);
  await joined.page.getByRole("button", { name: "Join" }).click();
  await joined.page.getByRole("heading", { name: "Overview" }).waitFor();
  return joined;
}

/**
 * roleChecks makes, as the owner, one of each thing the remaining pages
 * change (a running experiment, a draft campaign, an error, a replay, a
 * saved trend, a goal), then visits each page as the viewer (no write
 * control), the member (the writes, no delete) and the owner (the
 * deletes, which shows the checks look for controls that are there).
 */
async function roleChecks(h, strata, productId, key, owner, viewer, member) {
  const call = (method, path, body) =>
    owner.evaluate(
      async ([method, path, body]) => {
        const res = await fetch(path, { method, headers: { "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: res.status, body: await res.text() };
      },
      [method, path, body],
    );
  const made = async (method, path, body) => {
    const r = await call(method, path, body);
    if (r.status !== 200 && r.status !== 201) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
    return JSON.parse(r.body);
  };
  const send = async (batch) => {
    const res = await fetch(`${strata.url}/e`, { method: "POST", headers: { "Content-Type": "application/json", "X-API-Key": key }, body: JSON.stringify({ batch }) });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  };
  const q = `product=${productId}`;
  const session = "roles-e2e-session";
  const user = "roles-user-e2e";
  let experiment, campaign, fingerprint;
  await h.check("the owner makes an experiment, a campaign, an error, a replay, a saved trend and a goal", async () => {
    experiment = await made("POST", `/api/v1/experiments?${q}`, { name: "Checkout copy", primaryEvent: "signup" });
    await made("POST", `/api/v1/experiments/${experiment.id}/start?${q}`);
    campaign = await made("POST", `/api/v1/campaigns?${q}`, {
      name: "Welcome tour", trigger: { event: "$pageview" }, pathRegex: "", status: "draft",
      audience: { identified: false, percentage: 100, conditions: [] }, cap: { kind: "once" },
      variants: [{ key: "control", weight: 100, steps: [{ kind: "modal", title: "Welcome", body: "Hello", bodyFormat: "text", selector: "", placement: "", cta: null }] }],
    });
    await made("POST", `/api/v1/queries?${q}`, { kind: "trend", name: "Views", definition: { series: [{ event: "$pageview" }] } });
    await made("POST", `/api/v1/products/${productId}/goals`, { kind: "event", event: "signup" });
    await made("POST", `/api/v1/products/${productId}/shared-links`, { name: "Board" });
    const t0 = Date.now() - 5 * 60_000;
    await send([{ event_name: "$exception", distinct_id: user, url: "https://shop.example.com/", properties: { $exception_type: "TypeError", $exception_message: "roles-marker", $exception_source: "onerror" } }]);
    const events = [
      { type: 4, timestamp: t0, data: { href: "https://shop.example/", width: 1280, height: 720 } },
      {
        type: 2, timestamp: t0 + 5,
        data: { node: { type: 0, id: 1, childNodes: [{ type: 2, id: 2, tagName: "html", attributes: {}, childNodes: [{ type: 2, id: 3, tagName: "body", attributes: {}, childNodes: [] }] }] }, initialOffset: { left: 0, top: 0 } },
      },
    ];
    await send([{ event_name: "$snapshot", distinct_id: user, properties: { $session_id: session, $window_id: "w1", $chunk_index: 0, $snapshot_encoding: "json", $snapshot_data: Buffer.from(JSON.stringify(events)).toString("base64") } }]);
    for (const until = Date.now() + 10_000; ; ) {
      const groups = JSON.parse((await call("GET", `/api/v1/errors?${q}`)).body).groups ?? [];
      fingerprint = groups.find((g) => g.message === "roles-marker")?.fingerprint;
      if (fingerprint) break;
      if (Date.now() > until) throw new Error("the error group did not appear");
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  // Each page, what every role must not find, and what the roles above must.
  const pages = [
    { path: `/experiments?${q}`, ready: (p) => p.getByTestId("experiment-row").first(), member: [["button", "New experiment"], ["button", "Pause Checkout copy"]] },
    { path: `/experiments/${experiment.id}?${q}`, ready: (p) => p.getByRole("heading", { name: "Results" }), member: [["button", "Pause"], ["button", "Edit"], ["button", "Apply winner"]] },
    { path: `/messages?${q}`, ready: (p) => p.getByTestId("campaign-row").first(), member: [["link", "New campaign"], ["button", "Activate Welcome tour"]] },
    { path: `/messages/${campaign.id}?${q}`, ready: (p) => p.getByRole("heading", { name: "Welcome tour" }), member: [["button", "Activate"], ["button", "Save changes"]], admin: [["button", "Delete"]] },
    { path: `/errors?${q}`, ready: (p) => p.getByTestId("error-row").first(), member: [["button", /^Merge…/], ["checkbox", "Select roles-marker"]] },
    { path: `/errors/${fingerprint}?${q}`, ready: (p) => p.getByTestId("error-message"), member: [["button", "Resolve…"], ["button", "Ignore"]] },
    { path: `/replays?${q}&distinct_id=${user}`, ready: (p) => p.getByTestId("replays").getByRole("link", { name: user }).first(), admin: [["button", `Delete all of ${user}'s replays…`]] },
    { path: `/replays/${session}?${q}`, ready: (p) => p.getByRole("heading", { name: user, exact: true }), admin: [["button", "Delete…"]] },
    { path: `/trends?${q}`, ready: (p) => p.getByRole("button", { name: "Run Views" }), member: [["form", "Save trend"]], admin: [["button", "Delete Views"]] },
    { path: `/settings/products/${productId}?${q}`, ready: (p) => p.getByTestId("goal-settings-row").first(), member: [["form", "Add a goal"]], admin: [["button", "Delete", "goal-settings"], ["button", "Revoke"]] },
  ];
  const count = (p, [role, name, within]) => (within ? p.getByTestId(within) : p).getByRole(role, { name, exact: typeof name === "string" }).count();
  const visit = async (p, role, expectPresent, expectAbsent) => {
    for (const pg of pages) {
      await p.goto(strata.url + pg.path);
      await pg.ready(p).waitFor();
      for (const c of expectPresent(pg)) if ((await count(p, c)) === 0) throw new Error(`${pg.path}: ${role} does not find ${c[0]} ${c[1]}`);
      for (const c of expectAbsent(pg)) if ((await count(p, c)) !== 0) throw new Error(`${pg.path}: ${role} finds ${c[0]} ${c[1]}`);
    }
  };
  await h.check("a viewer finds no write control on Experiments, Messages, Errors, Replays, a saved trend or the goals", () =>
    visit(viewer.page, "the viewer", () => [], (pg) => [...(pg.member ?? []), ...(pg.admin ?? [])]),
  );
  await h.check("a viewer sees the campaign's settings, disabled, and auto-render switched off for them", async () => {
    const v = viewer.page;
    await v.goto(`${strata.url}/messages/${campaign.id}?${q}`);
    const name = v.getByRole("form", { name: "Change Welcome tour" }).getByLabel("Name");
    if ((await name.inputValue()) !== "Welcome tour" || !(await name.isDisabled())) throw new Error("the campaign's name is not shown disabled");
    await viewer.shot("roles-viewer-campaign");
    await viewer.atPhoneWidth("a campaign, as a viewer,", "roles-viewer-campaign-phone");
    await v.goto(`${strata.url}/messages?${q}`);
    const toggle = v.getByTestId("auto-render").getByRole("switch");
    await toggle.waitFor();
    if (!(await toggle.isDisabled()) || (await toggle.getAttribute("title")) !== "Needs the member role") throw new Error("auto-render is not disabled for a viewer");
  });
  await h.check("a member finds the writes but no delete", () =>
    visit(member.page, "the member", (pg) => pg.member ?? [], (pg) => pg.admin ?? []),
  );
  await h.check("the owner finds the deletes", () => visit(owner, "the owner", (pg) => [...(pg.member ?? []), ...(pg.admin ?? [])], () => []));
  await h.check("no page errors on the pages the roles visited", () => member.noPageErrors());
}
