// Opens a tcpwhy HTML report in headless Chromium (the system's, through
// playwright-core) and checks that it works: no console error, findings
// shown, every chart drawn with data, a click on a connection row draws its
// ladder, and no script from the data runs. With --leak-check, selects
// connections ROUNDS times and measures the JS heap (after garbage
// collection) and the charts on the page before and after, then how many
// charts one resize redraws. Prints a JSON summary; exits 1 with the reasons
// when a check fails.
//
//   node check.mjs REPORT.html [--screenshot FILE [--screenshot-height PX | --screenshot-element CSS]]
//                  [--expect-text TEXT]... [--no-click] [--leak-check ROUNDS]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { checkShownAndInert, launch, watchedPage } from "./chromium.mjs";

const TIMELINE_CHARTS = ["chart-transactions", "chart-setups", "chart-io", "chart-histogram"];
const CONNECTION_CHARTS = ["chart-window", "chart-rtt", "chart-sequence", "chart-ladder", "chart-waterfall"];

function parseArguments(argv) {
  const options = { report: null, screenshot: null, expectText: [], click: true, executable: "/usr/bin/chromium" };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--screenshot") options.screenshot = argv[++i];
    else if (arg === "--expect-text") options.expectText.push(argv[++i]);
    else if (arg === "--no-click") options.click = false;
    else if (arg === "--screenshot-height") options.screenshotHeight = Number(argv[++i]);
    else if (arg === "--screenshot-element") options.screenshotElement = argv[++i];
    else if (arg === "--chromium") options.executable = argv[++i];
    else if (arg === "--leak-check") options.leakRounds = Number(argv[++i]);
    else options.report = arg;
  }
  if (!options.report) throw new Error("usage: node check.mjs REPORT.html [--screenshot FILE] [--expect-text TEXT]...");
  return options;
}

/** Sorts the connections table by a column, largest first; returns how long it took. */
async function sortBy(page, label) {
  return page.evaluate((label) => {
    const th = [...document.querySelectorAll("#connections-table thead th")].find((h) => h.textContent === label);
    const started = performance.now();
    th.click();
    return Math.round(performance.now() - started);
  }, label);
}

/** Points drawn by a chart before and after zooming in with the wheel, then a double-click reset. */
async function wheelZoom(page, id) {
  const canvas = page.locator(`#${id} canvas`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const points = () => canvas.getAttribute("data-points").then(Number);
  const before = await points();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
  for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -120);
  await page.waitForTimeout(100);
  const after = await points();
  const selected = () => page.locator("#detail-header").textContent();
  const selectedBefore = await selected();
  await canvas.dblclick({ position: { x: box.width * 0.3, y: box.height / 2 } });
  const reset = await points();
  // A double-click resets the view and selects nothing, also on a point.
  await page.waitForTimeout(400);
  const selectionKept = (await selected()) === selectedBefore;
  return { before, after, reset, selectionKept };
}

/** Moves the mouse over a chart on a grid until its tooltip shows; returns the tooltip's text. */
async function hoverUntilTooltip(page, id) {
  const canvas = page.locator(`#${id} canvas`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const tip = page.locator(`#${id} .chart-tip`);
  for (let y = 30; y < box.height - 30; y += 8) {
    for (let x = 70; x < box.width - 70; x += 8) {
      await page.mouse.move(box.x + x, box.y + y);
      if (await tip.isVisible()) return tip.innerText();
    }
  }
  return null;
}

/** The JS heap in use after a full garbage collection, in bytes. */
async function heapAfterGc(cdp) {
  await cdp.send("HeapProfiler.collectGarbage");
  return (await cdp.send("Runtime.getHeapUsage")).usedSize;
}

/**
 * Selects the detailed connections in turn `rounds` times, as a user
 * clicking through them would: every selection tears the connection's charts
 * down and makes them again. Returns the heap and the charts on the page
 * before and after, and the redraws one resize of the window causes.
 */
async function leakCheck(page, rounds) {
  const cdp = await page.context().newCDPSession(page);
  const select = (count) => page.evaluate((count) => {
    const ids = DATA.details.map((d) => d.connection);
    for (let i = 0; i < count; i++) selectConnection(ids[i % ids.length]);
    return Charts.census ? Charts.census() : { live: null, draws: null };
  }, count);
  // Warm up first: compiled code and inline caches grow the heap for a while, then stop.
  await select(200);
  const heapBefore = await heapAfterGc(cdp);
  const before = await select(0);
  const after = await select(rounds);
  const heapAfter = await heapAfterGc(cdp);
  await page.setViewportSize({ width: 1300, height: 1000 });
  await page.waitForTimeout(500);
  const resized = await select(0);
  await page.setViewportSize({ width: 1400, height: 1000 });
  return {
    rounds, heapBefore, heapAfter, heapGrowth: heapAfter - heapBefore,
    chartsBefore: before.live, chartsAfter: after.live,
    resizeRedraws: resized.draws == null ? null : resized.draws - after.draws,
  };
}

/** Drawn marks per chart canvas, as the chart toolkit records them. */
async function chartPoints(page, ids) {
  return page.evaluate((ids) => Object.fromEntries(ids.map((id) => {
    const canvas = document.querySelector(`#${id} canvas`);
    return [id, canvas ? Number(canvas.dataset.points || 0) : -1];
  })), ids);
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const browser = await launch(options.executable);
  const failures = [];
  const result = {};
  try {
    const watched = await watchedPage(browser.context);
    const { page } = watched;
    const started = Date.now();
    await page.goto(pathToFileURL(resolve(options.report)).href);
    await page.waitForSelector("body[data-ready='1']", { timeout: 120000 });
    result.loadToDrawnMs = Number(await page.getAttribute("body", "data-ready-ms"));
    result.wallToDrawnMs = Date.now() - started;
    result.findings = await page.locator("#finding-list .finding").count();
    result.findingTitles = await page.locator("#finding-list .finding h3").allTextContents();
    result.timelineCharts = await chartPoints(page, TIMELINE_CHARTS);
    for (const [id, points] of Object.entries(result.timelineCharts)) {
      if (!(points > 0)) failures.push(`${id} drew no data (${points})`);
    }
    if (options.click) {
      const rows = page.locator("#connections-table tbody tr");
      const count = await rows.count();
      // A row with detail and payload, one not selected yet where there is one.
      const headers = await page.locator("#connections-table thead th").allTextContents();
      result.sortMs = await sortBy(page, "payload bytes");
      let candidate = null;
      for (let i = 0; i < count; i++) {
        const cells = await rows.nth(i).locator("td").allTextContents();
        if (cells[cells.length - 1] !== "yes" || cells[headers.indexOf("payload bytes")] === "0") continue;
        const isSelected = ((await rows.nth(i).getAttribute("class")) || "").includes("selected");
        if (candidate == null || !isSelected) candidate = { row: i, id: Number(cells[0]) };
        if (!isSelected) break;
      }
      let clicked = null;
      if (candidate) {
        await page.evaluate(() => { document.querySelector("#chart-ladder canvas")?.setAttribute("data-points", "0"); });
        await rows.nth(candidate.row).click();
        clicked = candidate.id;
      }
      if (clicked == null) failures.push("no connection row with detail to click");
      result.clickedConnection = clicked;
      result.detailHeader = await page.locator("#detail-header h3").textContent();
      if (clicked != null && !result.detailHeader.startsWith(`Connection ${clicked}:`)) {
        failures.push(`the click selected "${result.detailHeader}", not connection ${clicked}`);
      }
      result.connectionCharts = await chartPoints(page, CONNECTION_CHARTS);
      if (!(result.connectionCharts["chart-ladder"] > 0)) failures.push("the ladder of the clicked connection is empty");
      for (const id of ["chart-window", "chart-sequence"]) {
        if (!(result.connectionCharts[id] > 0)) failures.push(`${id} drew no data`);
      }
    }
    result.zoom = await wheelZoom(page, "chart-transactions");
    if (!result.zoom.selectionKept) failures.push("a double-click on the transaction chart selected a connection");
    if (!(result.zoom.after > 0 && result.zoom.after < result.zoom.before && result.zoom.reset === result.zoom.before)) {
      failures.push(`zooming into the transaction chart did not narrow it: ${JSON.stringify(result.zoom)}`);
    }
    result.tooltip = await hoverUntilTooltip(page, "chart-transactions");
    if (!result.tooltip) failures.push("hovering the transaction chart showed no tooltip");
    if (options.leakRounds) result.leaks = await leakCheck(page, options.leakRounds);
    result.redrawMs = await page.evaluate(() => {
      const started = performance.now();
      for (let i = 0; i < 5; i++) Charts.draw(charts.transactions);
      return Math.round((performance.now() - started) / 5);
    });
    await checkShownAndInert(watched, {
      expectText: options.expectText,
      injectedSelector: "main img, main iframe, main script, main [onload], main [onerror]",
      result,
      failures,
    });
    // No tooltip left from the hover above, and no sticky bar over an element.
    await page.mouse.move(0, 0);
    await page.addStyleTag({ content: "nav { position: static; }" });
    if (options.screenshot && options.screenshotElement) {
      await page.locator(options.screenshotElement).screenshot({ path: options.screenshot });
    } else if (options.screenshot) {
      await page.evaluate(() => window.scrollTo(0, 0));
      const clip = options.screenshotHeight ? { x: 0, y: 0, width: 1400, height: options.screenshotHeight } : undefined;
      await page.screenshot({ path: options.screenshot, fullPage: true, clip });
    }
  } finally {
    await browser.close();
  }
  result.failures = failures;
  console.log(JSON.stringify(result));
  process.exit(failures.length ? 1 : 0);
}

main().catch((error) => { console.error(String(error && error.stack || error)); process.exit(2); });
