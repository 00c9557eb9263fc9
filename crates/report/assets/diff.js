// The diff page: two runs of one workload, before and after a change. Reads
// the embedded JSON (`tcpwhy diff`'s result) and builds the findings' changes,
// the runs' series on shared axes and the response time table, with DOM text
// only. Charts (chart.js) draws; Table (table.js) lists.
"use strict";

const DATA = JSON.parse(document.getElementById("report-data").textContent);
const DIFF = DATA.diff;
const el = Charts.el;
const RUNS = [
  { key: "before", color: "#7f7f7f", dash: [6, 4] },
  { key: "after", color: "#1f77b4", dash: [] },
];
const CHANGE_SEVERITY = { gone: "info", new: "critical", still: "warning", with_the_work: "info" };
const charts = {};

const plural = (n, word, many = `${word}s`) => `${n.toLocaleString("en")} ${n === 1 ? word : many}`;
const signed = (ms) => (ms > 0 ? "+" : ms < 0 ? "−" : "±") + Charts.duration(Math.abs(ms));

function renderSummary() {
  const run = (name) => {
    const r = DIFF[name];
    return `${name}: ${r.path} (${plural(r.connections, "connection")}, ${plural(r.transactions, "transaction")}, ` +
      `${plural(r.retransmissions, "retransmission")}, ${Charts.si(8 * r.throughput_bytes_per_s)}bit/s)`;
  };
  const summary = document.getElementById("summary");
  summary.append(el("span", null, run("before")), el("br"), el("span", null, run("after")));
  document.getElementById("footer").textContent = `Made by tcpwhy ${DATA.meta.version}. ` +
    "This file is self-contained: it loads nothing from the network.";
}

// ---- findings -------------------------------------------------------------

function renderChanges() {
  const list = document.getElementById("change-list");
  if (DIFF.findings.length === 0) {
    list.append(el("p", "no-finding", "No finding in either run."));
    return;
  }
  list.append(...DIFF.findings.map(changeCard));
}

/**
 * One kind of finding: gone, new, still there at a changed cost per
 * transaction, or found in one run only at the same time per transaction.
 */
function changeCard(change) {
  const card = el("article", `finding change ${CHANGE_SEVERITY[change.change]}`);
  card.dataset.kind = change.kind;
  card.dataset.change = change.change;
  const found = change.after || change.before;
  const head = el("h3");
  head.append(el("span", `badge ${CHANGE_SEVERITY[change.change]}`, change.change),
    document.createTextNode(` ${found.title}`));
  card.append(head);
  card.append(el("p", "cost", costText(change)));
  if (change.change === "still") {
    const facts = el("dl");
    facts.append(el("dt", null, "Before"), el("dd", null, change.before.title));
    card.append(facts);
  }
  return card;
}

/**
 * A finding's cost per transaction of its run: none for a summary or a
 * failure, which take no time of their own.
 */
const perTransaction = (found) => found.cost_per_transaction_ms ?? 0;
const cost = (found) =>
  (perTransaction(found) < 0.0005 ? "none" : `${Charts.duration(perTransaction(found))} per transaction`);

function costText(change) {
  const { before, after } = change;
  if (change.change === "gone") return `Cost ${cost(before)} before; not found after.`;
  if (change.change === "new") return `Not found before; cost ${cost(after)} after.`;
  if (change.change === "with_the_work") {
    const [run, found] = before ? ["before", before] : ["after", after];
    return `Found ${run} only (cost ${cost(found)}), at the same time per transaction in both runs: the amount of work, not a change.`;
  }
  const moved = perTransaction(after) - perTransaction(before);
  return `Cost ${cost(before)} before, ${cost(after)} after` + (Math.abs(moved) < 0.0005 ? "." : ` (${signed(moved)}).`);
}

// ---- series on shared axes ------------------------------------------------

/** The time since the capture's start on the shared axis. */
const SINCE_START = { label: "time since the capture's start", format: Charts.duration };

/**
 * One chart with a step line per run: `values(series)` picks the run's
 * per-tick values, each held to the end of its tick.
 */
function overlaidChart(id, title, y, values, describe) {
  const tickMs = DIFF.series.tick_ms;
  const layers = RUNS.map((run) => {
    const v = values(DIFF.series[run.key]);
    const x = v.map((_, i) => i * tickMs);
    if (v.length) x.push(v.length * tickMs);
    const y = v.length ? [...v, v[v.length - 1]] : [];
    const at = (i) => Math.min(i, v.length - 1);
    return { type: "line", name: run.key, step: true, x, y, color: run.color, dash: run.dash, width: 2,
      tooltip: (i) => [`${run.key}, ${Charts.duration(at(i) * tickMs)} – ${Charts.duration((at(i) + 1) * tickMs)}`,
        describe(v[at(i)])] };
  });
  charts[id] = Charts.create(document.getElementById(id), {
    title: `${title}, per ${Charts.duration(tickMs)} tick`, height: 240,
    x: SINCE_START, y, layers,
  });
}

/** A window holds until the next one is advertised: ticks without a packet keep the last. */
function heldWindows(windows) {
  let last = null;
  return windows.map((w) => (last = w == null ? last : w));
}

function seriesCharts() {
  overlaidChart("chart-throughput", "Throughput (payload)", { label: "bit/s", format: Charts.si },
    (s) => s.throughput_bps, (v) => `${Charts.si(v)}bit/s`);
  overlaidChart("chart-window", "Smallest receive window advertised", { label: "bytes", format: Charts.si },
    (s) => heldWindows(s.window_bytes), (v) => (v == null ? "no window advertised yet" : `${Charts.si(v)}B`));
  overlaidChart("chart-retransmissions", "Retransmissions", { label: "per tick", format: Charts.si, integer: true },
    (s) => s.retransmissions, (v) => plural(v, "retransmission"));
}

// ---- transaction types ----------------------------------------------------

function typesTable() {
  const types = DIFF.transaction_types;
  const stat = (run, key) => (i) => (types[i][run] ? types[i][run][key] : null);
  Table(document.getElementById("types-table"), {
    rows: types.length, id: "types",
    columns: [
      { label: "type", value: (i) => types[i].transaction_type },
      { label: "count before", value: stat("before", "count"), numeric: true },
      { label: "count after", value: stat("after", "count"), numeric: true },
      { label: "p50 before", value: stat("before", "p50_ms"), numeric: true, format: Charts.duration },
      { label: "p50 after", value: stat("after", "p50_ms"), numeric: true, format: Charts.duration },
      { label: "p50 change", value: (i) => types[i].p50_change_ms, numeric: true, format: signed },
      { label: "p90 before", value: stat("before", "p90_ms"), numeric: true, format: Charts.duration },
      { label: "p90 after", value: stat("after", "p90_ms"), numeric: true, format: Charts.duration },
      { label: "p90 change", value: (i) => types[i].p90_change_ms, numeric: true, format: signed },
    ],
  });
}

// ---- start ----------------------------------------------------------------

function start() {
  renderSummary();
  renderChanges();
  seriesCharts();
  typesTable();
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
}

start();
