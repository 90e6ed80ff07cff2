// The Messages part of the dashboard's end-to-end test, on a server of its
// own: a campaign is created through the editor (a modal step with a
// Markdown body), after the server refused the path regular expression
// (?i)x next to its field; the preview frame (sandboxed, drawn by the SDK's
// message renderer) follows what is typed; the campaign is activated and
// the product's auto-render setting turned on, the warning about active
// campaigns that no page shows going away; an impression and a CTA click
// posted to /track as the SDK does show in the list's stats; a survey
// campaign's answers posted to /api/v1/surveys/{id}/respond show per
// question with the NPS score, and its CSV downloads with them; an A/B
// variant added to the active campaign starts its experiment, whose
// headline and link show on the campaign's page, and which then refuses a
// change of the weights next to the variants.
// Screenshots messages*.png and, at 390 px without sideways scrolling,
// messages*-phone.png.
import { readFileSync } from "node:fs";
import { setUpOwner } from "./owner.mjs";
import { watchedPage } from "./page.mjs";

/**
 * messagePages runs the checks on a fresh server. `h` holds the harness's
 * check, startStrata and cleanups, the owner's credentials and the
 * artifacts folder.
 */
export async function messagePages(browser, h) {
  const strata = await h.startStrata({});
  const { page, shot, atPhoneWidth, noPageErrors } = await watchedPage(browser, h);
  // The dashboard's own API, with the session cookie (and the Origin the server checks).
  const call = (method, path, body) =>
    page.evaluate(
      async ([method, path, body]) => {
        const res = await fetch(path, { method, headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
        return { status: res.status, body: await res.text() };
      },
      [method, path, body],
    );
  // The SDK's paths, with the API key.
  const sdk = async (path, key, body) => {
    const res = await fetch(`${strata.url}${path}?api_key=${encodeURIComponent(key)}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    if (res.status !== 202) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };

  const { productId, key } = await setUpOwner(page, strata, h.owner);

  await page.locator("nav.sidebar").getByRole("link", { name: "Messages" }).click();
  await page.getByRole("heading", { name: "Messages", exact: true }).waitFor();
  await h.check("with no campaign, Messages says so and offers to create one", async () => {
    await page.getByTestId("no-campaigns").getByRole("link", { name: "Create a campaign" }).waitFor();
    if (await page.getByRole("switch", { name: "Auto-render messages" }).isChecked()) throw new Error("auto-render starts on");
  });
  await shot("messages-empty");

  await page.getByRole("link", { name: "New campaign" }).click();
  await page.getByRole("heading", { name: "New campaign" }).waitFor();
  const form = page.getByRole("form", { name: "New campaign" });
  const frame = page.frameLocator("iframe[title='Message preview']");
  await form.getByLabel("Name", { exact: true }).fill("Welcome tour");
  await form.getByLabel("Path (regular expression)").fill("(?i)x");
  await form.getByLabel("Step 1 title").fill("Welcome aboard");
  await form.getByRole("group", { name: "Step 1 body format" }).getByRole("button", { name: "Markdown" }).click();
  await form.getByLabel("Step 1 body", { exact: true }).fill("Hello **there**, see [the docs](https://example.com/docs).");
  await form.getByLabel("Step 1 button label").fill("Take the tour");
  await form.getByLabel("Step 1 button address").fill("/tour");

  // The renderer is the SDK's (sdk/browser/src/messages); a server built
  // without it serves no /sdk/v1/messages.min.js, and the frame says so.
  const renderer = (await page.evaluate(async () => (await fetch("/sdk/v1/messages.min.js")).status)) === 200;
  await h.check("the preview frame is sandboxed and keeps the focus in the editor", async () => {
    const sandbox = await page.locator("iframe[title='Message preview']").getAttribute("sandbox");
    if (sandbox !== "allow-scripts") throw new Error(`sandbox="${sandbox}"`);
    await page.locator(`[data-testid=message-preview][data-state=${renderer ? "ready" : "no-renderer"}]`).waitFor();
    const title = form.getByLabel("Step 1 title");
    await title.click();
    await page.keyboard.press("End");
    await page.keyboard.type(", friend", { delay: 20 });
    if ((await title.inputValue()) !== "Welcome aboard, friend") throw new Error(`the title is ${JSON.stringify(await title.inputValue())}`);
  });
  if (renderer) {
    await h.check("the preview draws the step as it is typed, Markdown and all", async () => {
      await frame.getByText("Welcome aboard, friend").first().waitFor();
      await frame.getByText("there", { exact: true }).first().waitFor();
      if ((await frame.getByText("**there**").count()) > 0) throw new Error("the Markdown is shown as written");
      await form.getByLabel("Step 1 title").fill("Welcome aboard!");
      await frame.getByText("Welcome aboard!").first().waitFor();
      await frame.getByRole("button", { name: "Take the tour" }).waitFor();
    });
  } else {
    console.log("# the server serves no /sdk/v1/messages.min.js: the preview's drawing is not checked");
    await h.check("without the renderer, the preview says what it needs", async () => {
      const text = await page.getByTestId("preview-unavailable").textContent();
      if (!text.includes("/sdk/v1/messages.min.js")) throw new Error(text);
    });
  }
  await page.waitForTimeout(500); // the preview's entrance
  await shot("messages-editor");

  await form.getByRole("button", { name: "Create campaign" }).click();
  await h.check("the server's refusal of (?i)x shows next to the path field", async () => {
    const path = form.getByLabel("Path (regular expression)");
    await page.locator("[data-field=pathRegex]").waitFor();
    const text = await page.locator("[data-field=pathRegex]").textContent();
    if (!text.startsWith("pathRegex:")) throw new Error(text);
    if ((await path.getAttribute("aria-invalid")) !== "true") throw new Error("the field is not marked invalid");
    if (!(await path.evaluate((el) => el === document.activeElement))) throw new Error("the field does not have focus");
  });
  await form.getByLabel("Path (regular expression)").fill("^/app");
  await form.getByRole("button", { name: "Create campaign" }).click();
  let campaignId = 0;
  await h.check("the campaign is created as a draft, and its page opens with the Markdown as stored", async () => {
    await page.waitForURL(/\/messages\/\d+\?/);
    campaignId = Number(new URL(page.url()).pathname.split("/")[2]);
    await page.getByRole("heading", { name: "Welcome tour" }).waitFor();
    await page.getByText("Created as a draft.").waitFor();
    const stored = JSON.parse((await call("GET", `/api/v1/campaigns/${campaignId}?product=${productId}`)).body);
    const step = stored.variants[0].steps[0];
    if (stored.status !== "draft" || step.bodyFormat !== "markdown" || step.cta?.url !== "/tour" || stored.pathRegex !== "^/app") {
      throw new Error(JSON.stringify(stored));
    }
  });
  await h.check("Activate makes it active", async () => {
    await page.getByRole("button", { name: "Activate", exact: true }).click();
    await page.getByTestId("campaign-status").filter({ hasText: "Active" }).first().waitFor();
  });

  await page.locator(".crumbs").getByRole("link", { name: "Messages" }).click();
  await page.getByRole("table", { name: "Campaigns" }).waitFor();
  await h.check("an active campaign with auto-render off is flagged, and turning it on clears the warning", async () => {
    await page.getByTestId("auto-render-off").waitFor();
    await page.getByRole("switch", { name: "Auto-render messages" }).click();
    await page.getByTestId("auto-render-off").waitFor({ state: "detached" });
    const settings = JSON.parse((await call("GET", `/api/v1/messages/settings?product=${productId}`)).body);
    if (settings.autoRender !== true) throw new Error(JSON.stringify(settings));
  });

  // The SDK's reports: two users shown the campaign, one of whom clicked its button.
  for (const [user, events] of [["u1", ["message_impression", "message_cta_click"]], ["u2", ["message_impression"]]]) {
    for (const event of events) await sdk(`/api/v1/messages/${campaignId}/track`, key, { distinct_id: user, event, variant: "control", step: 0 });
  }
  await h.check("the list shows the users shown and the CTA rate the /track reports make", async () => {
    // The server's cache of the stats lasts about 2 seconds.
    for (let i = 0; ; i++) {
      await page.reload();
      await page.getByRole("table", { name: "Campaigns" }).waitFor();
      const row = await page.getByTestId("campaign-row").first().evaluate((tr) => [...tr.querySelectorAll("td")].slice(0, 7).map((td) => td.textContent.trim()));
      if (JSON.stringify(row) === JSON.stringify(["Welcome tour", "Active", "Page view on ^/app", "2", "50.0%", "0.0%", "1"])) break;
      if (i === 20) throw new Error(JSON.stringify(row));
      await page.waitForTimeout(300);
    }
  });
  await page.locator("[data-testid=auto-render] input[role=switch]:not([disabled])").waitFor();
  await shot("messages");
  await atPhoneWidth("the campaigns list", "messages-phone");

  // A survey, made through the API, answered by three users.
  const created = await call("POST", `/api/v1/campaigns?product=${productId}`, {
    name: "How are we doing", trigger: { event: "$pageview" }, pathRegex: "", status: "active",
    audience: { identified: false, percentage: 100, conditions: [] }, cap: { kind: "once" },
    variants: [{ key: "control", weight: 100, steps: [
      { kind: "survey", title: "", body: "", bodyFormat: "text", selector: "", placement: "", cta: null,
        question: { id: "nps", type: "nps", prompt: "How likely are you to recommend us?", scale: 0, choices: [] } },
      { kind: "survey", title: "", body: "", bodyFormat: "text", selector: "", placement: "", cta: null,
        question: { id: "plan", type: "single", prompt: "Which plan are you on?", scale: 0, choices: ["Free", "Pro"] } },
    ] }],
  });
  if (created.status !== 201) throw new Error(`creating the survey: ${created.status} ${created.body}`);
  const surveyId = JSON.parse(created.body).id;
  const answers = [["s1", 10, "Pro"], ["s2", 9, "Pro"], ["s3", 3, "Free"]];
  for (const [user, score, plan] of answers) {
    await sdk(`/api/v1/surveys/${surveyId}/respond`, key, {
      distinct_id: user, variant: "control", answers: [{ questionId: "nps", value: score }, { questionId: "plan", value: plan }],
    });
  }
  await page.goto(`${strata.url}/messages/${surveyId}?product=${productId}`);
  await page.getByRole("heading", { name: "How are we doing" }).waitFor();
  const question = (id) => page.locator(`[data-testid=survey-question][data-question=${id}]`);
  const counts = (id) => question(id).getByTestId("survey-count").evaluateAll((rows) => rows.map((r) => `${r.dataset.value}:${r.querySelectorAll("td")[1].textContent}`));
  await h.check("the survey's results count each question's answers, with the NPS score", async () => {
    await question("nps").waitFor();
    const got = [await question("nps").getByTestId("answers").textContent(), await question("nps").getByTestId("nps").textContent()];
    // Two promoters and one detractor of three: (2 − 1) / 3 = +33.
    if (got.join() !== "3 answers,NPS +33") throw new Error(got.join());
    const nps = await counts("nps");
    if (nps.length !== 11 || nps[10] !== "10:1" || nps[9] !== "9:1" || nps[3] !== "3:1" || nps[0] !== "0:0") throw new Error(nps.join());
    const plan = await counts("plan");
    if (plan.join() !== "Free:1,Pro:2") throw new Error(plan.join());
  });
  await h.check("Download CSV downloads every answer", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    const text = readFileSync(await download.path(), "utf8");
    const lines = text.trim().split(/\r?\n/);
    // A header, then one row per answer (or per response, with a column per question).
    if (lines.length < 4 || !["s1", "s2", "s3"].every((u) => text.includes(u)) || !text.includes("Pro") || !text.includes("Free")) {
      throw new Error(text.slice(0, 400));
    }
  });
  if (renderer) {
    await h.check("the preview draws a survey step's question", async () => {
      await page.locator("[data-testid=message-preview][data-state=ready]").waitFor();
      await frame.getByText("How likely are you to recommend us?").first().waitFor();
      await page.getByRole("button", { name: "Preview Step 2" }).click();
      await frame.getByText("Pro", { exact: true }).first().waitFor();
      await frame.getByText("2 of 2").first().waitFor();
    });
  }
  await shot("messages-survey");
  await atPhoneWidth("a campaign's page", "messages-survey-phone");

  // An A/B variant makes the active campaign an experiment, started at once.
  await page.goto(`${strata.url}/messages/${campaignId}?product=${productId}`);
  await page.getByRole("heading", { name: "Welcome tour" }).waitFor();
  const edit = page.getByRole("form", { name: "Change Welcome tour" });
  await edit.getByRole("button", { name: "Add A/B variant" }).click();
  await edit.getByLabel("Variant 2 step 1 title").fill("Welcome, take two");
  await edit.getByRole("button", { name: "Save changes" }).click();
  await h.check("an A/B variant links the campaign to its running experiment, whose headline shows", async () => {
    const results = page.getByTestId("variant-results");
    await results.getByTestId("experiment-status").filter({ hasText: "Running" }).waitFor();
    await results.getByRole("table", { name: "Results: message_cta_click" }).waitFor();
    const href = await results.getByRole("link", { name: "Open the experiment" }).getAttribute("href");
    if (!/^\/experiments\/\d+\?product=\d+$/.test(href)) throw new Error(href);
  });
  await h.check("while the experiment runs, a change of the weights is refused at the variants", async () => {
    await edit.getByLabel("Variant 1 weight (%)").fill("60");
    await edit.getByLabel("Variant 2 weight (%)").fill("40");
    await edit.getByRole("button", { name: "Save changes" }).click();
    const text = await edit.locator("[data-field=variants]").textContent();
    if (!/experiment is running/.test(text)) throw new Error(text);
  });
  await page.getByTestId("variant-results").getByRole("link", { name: "Open the experiment" }).click();
  await h.check("the experiment's page opens from the campaign", async () => {
    await page.getByRole("heading", { name: "Message: Welcome tour" }).waitFor();
  });

  await h.check("the Messages pages ran without script errors or blocked content", async () => {
    noPageErrors();
  });
}
