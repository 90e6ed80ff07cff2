// The browser page of an e2e section, watched for what must not happen on
// any dashboard page: a script error, something the server's
// Content-Security-Policy blocked, or a script a sandboxed frame refused
// (the replay player's iframe runs no script, and is given none).
import { join } from "node:path";

/**
 * watchedPage opens a browser context (closed by the harness's cleanups)
 * and a page in it, and returns them with what the watch caught so far
 * (pageErrors; a section may add a page of its own to it) and the helpers
 * the sections share: shot saves a full-page screenshot to the artifacts
 * folder, noSidewaysScroll fails if the page is wider than the viewport,
 * atPhoneWidth checks that at 390 px and screenshots it, and noPageErrors
 * fails with what the watch caught. A check must not evaluate() in the
 * replay player's iframe: Playwright's script there is refused by the
 * sandbox, with the same message, when rrweb rebuilds the frame's
 * document; read it with textContent(), getAttribute() or inputValue().
 */
export async function watchedPage(browser, h, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  context.setDefaultTimeout(10_000);
  h.cleanups.push(() => context.close());
  const pageErrors = [];
  context.on("weberror", (e) => pageErrors.push(e.error().message));
  context.on("console", (m) => {
    if (/Content Security Policy|Blocked script execution|sandboxed/i.test(m.text())) pageErrors.push(m.text());
  });
  const page = await context.newPage();
  const shot = (name) => page.screenshot({ path: join(h.artifacts, `${name}.png`), fullPage: true });
  const noSidewaysScroll = () => noSideScroll(page);
  const atPhoneWidth = async (what, name) => {
    await page.setViewportSize({ width: 390, height: 800 });
    await h.check(`at 390 px ${what} does not push the page sideways`, noSidewaysScroll);
    await shot(name);
    await page.setViewportSize(viewport);
  };
  const noPageErrors = () => {
    if (pageErrors.length) throw new Error(pageErrors.join(" | "));
  };
  return { context, page, pageErrors, shot, noSidewaysScroll, atPhoneWidth, noPageErrors };
}

/** noSideScroll fails when the page is wider than the viewport. */
export async function noSideScroll(page) {
  // Charts follow a resize on the next frames: give them a moment.
  await page.waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, null, { timeout: 3000 }).catch(() => {});
  const [scroll, width, wide] = await page.evaluate(() => {
    // The outermost elements that reach past the viewport, to name the culprit.
    const clipped = (e) => e.parentElement?.closest(".table-scroll") !== null && e.parentElement?.closest(".table-scroll") !== undefined;
    const out = [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !clipped(e));
    const top = out.filter((e) => !out.includes(e.parentElement)).slice(0, 3);
    return [document.documentElement.scrollWidth, window.innerWidth, top.map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join(".")}`)];
  });
  if (scroll > width) throw new Error(`the page is ${scroll} px wide in a ${width} px viewport (${wide.join(", ")})`);
}
