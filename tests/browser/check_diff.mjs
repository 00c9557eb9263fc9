// Opens a `tcpwhy diff --html` page in headless Chromium (the system's,
// through playwright-core) and checks that it works: no console error, no
// request to the network, no script from the data run, every series chart
// drawn with a line per run on one time axis. Prints a JSON summary (each
// finding's change, each chart's runs) and exits 1 with the reasons when a
// check fails.
//
//   node check_diff.mjs PAGE.html [--expect-text TEXT]... [--screenshot FILE]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { checkShownAndInert, launch, watchedPage } from "./chromium.mjs";

const SERIES_CHARTS = ["chart-throughput", "chart-window", "chart-retransmissions"];

function parseArguments(argv) {
  const options = { page: null, expectText: [], screenshot: null, executable: "/usr/bin/chromium" };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--expect-text") options.expectText.push(argv[++i]);
    else if (arg === "--screenshot") options.screenshot = argv[++i];
    else if (arg === "--chromium") options.executable = argv[++i];
    else options.page = arg;
  }
  if (!options.page) throw new Error("usage: node check_diff.mjs PAGE.html [--expect-text TEXT]...");
  return options;
}

/**
 * Each series chart's time axis (its home view) and, per run's line, the
 * points in that view and the span of its times: a run whose line starts at
 * 0 and lies inside the axis shares it with the other.
 */
function seriesCharts(page) {
  return page.evaluate((ids) => Object.fromEntries(ids.map((id) => {
    const chart = charts[id];
    const { x0, x1 } = chart.home;
    const runs = chart.layers.map((layer) => {
      const drawn = layer.x.filter((x, i) => layer.y[i] != null && x >= x0 && x <= x1).length;
      return { name: layer.name, drawn, first: layer.x[0], last: layer.x[layer.x.length - 1] };
    });
    return [id, { axis: [x0, x1], points: Number(chart.canvas.dataset.points), runs }];
  })), SERIES_CHARTS);
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const browser = await launch(options.executable);
  const failures = [];
  const result = {};
  try {
    const watched = await watchedPage(browser.context);
    const { page } = watched;
    await page.goto(pathToFileURL(resolve(options.page)).href);
    await page.waitForSelector("body[data-ready='1']", { timeout: 60000 });
    result.changes = await page.evaluate(() => [...document.querySelectorAll("#change-list .change")].map((card) =>
      ({ change: card.dataset.change, kind: card.dataset.kind, text: card.querySelector("h3").textContent })));
    result.typeRows = await page.locator("#types-table tbody tr").count();
    result.charts = await seriesCharts(page);
    for (const [id, chart] of Object.entries(result.charts)) {
      const names = chart.runs.map((run) => run.name).join(", ");
      if (names !== "before, after") failures.push(`${id} draws ${names}, not before and after`);
      for (const run of chart.runs) {
        if (!(run.drawn > 0)) failures.push(`${id} drew nothing of ${run.name}`);
        if (run.first !== 0) failures.push(`${id}: ${run.name} does not start at the capture's start`);
        if (run.last > chart.axis[1]) failures.push(`${id}: ${run.name} runs past the time axis`);
      }
    }
    await checkShownAndInert(watched, {
      expectText: options.expectText,
      injectedSelector: "body img, body iframe, main script, body [onload], body [onerror]",
      result,
      failures,
    });
    if (options.screenshot) {
      await page.addStyleTag({ content: "nav { position: static; }" });
      await page.screenshot({ path: options.screenshot, fullPage: true });
    }
  } finally {
    await browser.close();
  }
  result.failures = failures;
  console.log(JSON.stringify(result));
  process.exit(failures.length ? 1 : 0);
}

main().catch((error) => { console.error(String(error && error.stack || error)); process.exit(2); });
