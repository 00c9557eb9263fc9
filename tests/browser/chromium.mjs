// What both page checks share: the system's headless Chromium, through
// playwright-core, in a fresh profile, and a page watched for what a
// self-contained page must never do (log an error, load from the network,
// open a dialog from a script in the data).
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Chromium in a fresh profile directory (playwright passes it as --user-data-dir). */
export async function launch(executable) {
  const profile = mkdtempSync(join(tmpdir(), "tcpwhy-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: executable,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A new page whose console errors and requests off the file system are
 * collected, and whose alert, confirm and prompt only record their calls in
 * `window.__alerts`.
 */
export async function watchedPage(context) {
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => { if (!request.url().startsWith("file:")) requests.push(request.url()); });
  await page.addInitScript(() => {
    window.__alerts = [];
    for (const name of ["alert", "confirm", "prompt"]) window[name] = (...args) => { window.__alerts.push([name, ...args]); };
  });
  return { page, errors, requests };
}

/**
 * Checks that the page shows each of `expectText` as text, and that nothing
 * from the data ran or was loaded: no dialog opened, no element matching
 * `injectedSelector`, no console error, no request to the network. Records
 * what it saw in `result` and each reason it failed in `failures`.
 */
export async function checkShownAndInert({ page, errors, requests }, { expectText, injectedSelector, result, failures }) {
  const text = await page.evaluate(() => document.body.innerText);
  for (const expected of expectText) {
    if (!text.includes(expected)) failures.push(`the page does not show ${JSON.stringify(expected)} as text`);
  }
  result.alerts = await page.evaluate(() => window.__alerts);
  if (result.alerts.length) failures.push(`a script from the data ran: ${JSON.stringify(result.alerts)}`);
  result.injectedElements = await page.evaluate((selector) => document.querySelectorAll(selector).length, injectedSelector);
  if (result.injectedElements) failures.push(`${result.injectedElements} elements came from the data`);
  result.consoleErrors = errors;
  if (errors.length) failures.push(`console errors: ${errors.join(" | ")}`);
  result.networkRequests = requests;
  if (requests.length) failures.push(`the page loaded from the network: ${requests.join(", ")}`);
}
