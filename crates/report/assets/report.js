// The report: reads the embedded JSON and builds findings, charts and tables
// with DOM text only. One function per chart; Charts (chart.js) draws them.
"use strict";

const DATA = JSON.parse(document.getElementById("report-data").textContent);
const el = Charts.el;
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
  "#17becf", "#bcbd22", "#7f7f7f", "#393b79"];
const OTHER_COLOR = "#b0b0b0";
const LOSS_BAND = "rgba(214, 39, 40, 0.12)";
const RED = "#d62728";
const OUTCOME_COLORS = { established: "#8fa8c8", retried: "#ff7f0e", reset: "#9467bd", failed: RED };
const TIME = { time: true, label: "time of day (UTC)" };
/** Ladder gaps up to this many times the usual one are drawn to scale; longer
 * ones grow with the logarithm of their length, and those over a
 * millisecond are marked as idle pauses cut short. */
const LADDER_TO_SCALE = 4;
const LADDER_CUT_MIN_MS = 1;
const charts = {};
let selected = null;

const typeColor = (kind) => (kind < PALETTE.length ? PALETTE[kind] : OTHER_COLOR);
const clockText = (t) => Charts.timeOfDay(DATA.meta.origin_day_ms + t, 0.5);
const plural = (n, word, many = `${word}s`) => `${n.toLocaleString("en")} ${n === 1 ? word : many}`;

function samplingNote(sampling, what) {
  if (sampling.shown >= sampling.total) return null;
  return `Sampled: ${sampling.shown.toLocaleString("en")} of ${sampling.total.toLocaleString("en")} ${what} shown ` +
    "(the notable ones first, the rest evenly spread); figures and tables use them all.";
}

// ---- header and findings --------------------------------------------------

function renderSummary() {
  const m = DATA.meta;
  const start = new Date(m.origin_epoch_ms).toISOString().replace("T", " ").replace("Z", " UTC");
  const text = `${m.files.join(", ")}: ${plural(m.frames, "frame")}, ` +
    `${plural(DATA.connections.id.length, "connection")}, ` +
    `${plural(DATA.transactions.sampling.total, "transaction")}; starts ${start}.`;
  document.getElementById("summary").textContent = text;
  if (m.partial) {
    const note = el("p", "partial", `This report is partial: ${m.partial}.`);
    document.getElementById("summary").after(note);
  }
  document.getElementById("footer").textContent = `Made by tcpwhy ${m.version}. ` +
    "This file is self-contained: it loads nothing from the network.";
}

function renderFindings() {
  const list = document.getElementById("finding-list");
  if (DATA.findings.length === 0) {
    list.append(el("p", "no-finding", "No finding: nothing in this capture looks slow."));
    return;
  }
  const table = el("div");
  table.id = "findings-table";
  list.append(table);
  const cards = DATA.findings.map((f, rank) => findingCard(f, rank + 1));
  list.append(...cards);
  const f = DATA.findings;
  const value = (key) => (i) => f[i][key];
  Table(table, {
    rows: f.length, id: "findings", pageSize: 20,
    columns: [
      { label: "rank", value: (i) => i + 1, numeric: true },
      { label: "severity", value: value("severity") },
      { label: "finding", value: value("title") },
      { label: "cost", value: value("cost_ms"), numeric: true, format: costCell },
      { label: "share", value: value("share"), numeric: true, format: (v) => `${(100 * v).toFixed(1)}%` },
      { label: "connections", value: value("connections"), numeric: true },
      { label: "transactions", value: value("transactions"), numeric: true },
      { label: "example", value: value("example_connection"), numeric: true },
    ],
    onRowClick: (i) => cards[i].scrollIntoView({ block: "start" }),
  });
}

/** What a finding costs: its time and share, or, for a failure, what failed. */
function costText(f) {
  const touched = `${plural(f.connections, "connection")}, ${plural(f.transactions, "transaction")}`;
  if (f.kind === "application_failure") return `A failure, not slowness: ${touched} failed.`;
  if (f.cost_ms < 0.05) return `No time of its own; ${touched}.`;
  // A side's own pace has time but no share: it is no part of the time at stake.
  const share = f.share > 0
    ? `${(100 * f.share).toFixed(1)}% of the time at stake`
    : "its own pace, not time anyone waited for";
  return `Cost ${Charts.duration(f.cost_ms)} (${share}), ${touched}.`;
}

/** A finding's cost in the table: none for a failure or a summary. */
const costCell = (ms) => (ms < 0.05 ? "none" : Charts.duration(ms));

function findingCard(f, rank) {
  const card = el("article", `finding ${f.severity}`);
  card.dataset.kind = f.kind;
  const head = el("h3");
  head.append(el("span", `badge ${f.severity}`, f.severity), document.createTextNode(` ${rank}. ${f.title}`));
  card.append(head);
  card.append(el("p", "cost", costText(f)));
  if (f.kind !== "application_failure" && f.cost_ms >= 0.05) {
    const share = el("div", "share");
    const bar = el("div", "share-bar");
    bar.style.width = `${Math.max(1, 100 * f.share)}%`;
    share.append(bar);
    card.append(share);
  }
  if (f.suspected) card.append(el("p", "suspected", `Suspected: ${f.suspected}`));
  const facts = el("dl");
  for (const [term, text] of [["Why", f.explanation], ["Fix", f.fix], ["What if", f.what_if]]) {
    facts.append(el("dt", null, term), el("dd", null, text));
  }
  card.append(facts);
  card.append(evidence(f));
  return card;
}

function evidence(f) {
  const box = el("div", "evidence");
  box.append(el("span", "label", "Evidence: "));
  if (f.example_connection != null) {
    const link = el("button", "link finding-connection", `connection ${f.example_connection}`);
    link.addEventListener("click", () => selectConnection(f.example_connection, { scroll: true }));
    box.append(link);
  }
  if (f.frames.length) {
    box.append(document.createTextNode(f.frames.length === 1 ? " frame " : " frames "));
    for (const frame of f.frames) {
      const link = el("button", "link frame", String(frame));
      link.addEventListener("click", () => selectConnection(f.example_connection, { scroll: true, frame }));
      box.append(link, document.createTextNode(" "));
    }
  }
  box.append(el("div", "filter-line", "Wireshark: "));
  box.lastChild.append(el("code", null, f.wireshark_filter));
  return box;
}

// ---- timeline charts ------------------------------------------------------

/** Runs of ticks with retransmissions or lost segments, as [start, end)
 * bands; none (no layer, no legend) when nothing was lost. */
function lossBands() {
  const t = DATA.ticks, x0 = [], x1 = [];
  for (let i = 0; i < t.start.length; i++) {
    if (t.retransmissions[i] + t.lost_segments[i] === 0) continue;
    const end = t.start[i] + t.tick_ms;
    if (x1.length && x1[x1.length - 1] >= t.start[i] - 1e-9) x1[x1.length - 1] = end;
    else { x0.push(t.start[i]); x1.push(end); }
  }
  if (x0.length === 0) return null;
  return { type: "bands", name: "loss (ticks with retransmissions or lost segments)", x0, x1, color: LOSS_BAND,
    tooltip: (i) => ["loss period: retransmissions or lost segments", `${clockText(x0[i])} – ${clockText(x1[i])}`] };
}

/**
 * A per-tick series as a step line: each value held to the end of its tick,
 * so a capture of one tick still draws one. `at(i)` is the tick a point of
 * the line stands for.
 */
function tickLine(values) {
  const t = DATA.ticks, last = t.start.length - 1;
  if (last < 0) return { x: [], y: [], at: (i) => i };
  return { x: [...t.start, t.start[last] + t.tick_ms], y: [...values, values[last]], at: (i) => Math.min(i, last) };
}

/** The whole capture and a little room, for every timeline chart's time axis. */
function captureSpan() {
  const t = DATA.ticks, c = DATA.connections;
  const starts = [...t.start.slice(0, 1), ...c.start];
  const ends = [...t.start.slice(-1).map((s) => s + t.tick_ms), ...c.start.map((s, i) => s + c.duration_ms[i])];
  if (starts.length === 0) return {};
  const [first, last] = [Math.min(...starts), Math.max(...ends)];
  const room = (last - first) * 0.02 || 1;
  return { min: first - room, max: last + room };
}

/** The selected connection's span, bracketed and named. */
function selectionOverlay(ctx, m) {
  if (selected == null) return;
  const c = DATA.connections;
  const a = m.px(c.start[selected]), b = m.px(c.start[selected] + c.duration_ms[selected]);
  ctx.save();
  ctx.fillStyle = "rgba(0, 102, 204, 0.05)";
  ctx.fillRect(a, m.f.top, Math.max(2, b - a), m.f.height);
  ctx.strokeStyle = "rgba(0, 102, 204, 0.6)";
  ctx.setLineDash([4, 3]);
  for (const x of [a, b]) {
    ctx.beginPath();
    ctx.moveTo(Math.round(x) + 0.5, m.f.top);
    ctx.lineTo(Math.round(x) + 0.5, m.f.top + m.f.height);
    ctx.stroke();
  }
  ctx.fillStyle = "#06c";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const label = `selected: connection ${selected}`;
  const at = Math.min(Math.max(a, m.f.left) + 4, m.f.left + m.f.width - ctx.measureText(label).width - 4);
  ctx.fillText(label, at, m.f.top + 3);
  ctx.restore();
}

function transactionsChart() {
  const tx = DATA.transactions, t = DATA.ticks;
  const open = tickLine(t.connections_open), busy = tickLine(t.transactions_in_progress);
  const host = document.getElementById("chart-transactions");
  charts.transactions = Charts.create(host, {
    title: "Transactions: start and duration, colored by type; retransmissions ringed in red",
    note: samplingNote(tx.sampling, "transactions"),
    height: 340, originDayMs: DATA.meta.origin_day_ms,
    x: { ...TIME, ...captureSpan() },
    y: { label: "duration", kind: "log", format: Charts.duration },
    y2: { label: "concurrent", format: Charts.si, integer: true },
    overlay: selectionOverlay,
    layers: [
      lossBands(),
      { type: "points", name: "transactions", x: tx.start, y: tx.ms, color: (i) => typeColor(tx.kind[i]),
        ring: (i) => (tx.retransmissions[i] > 0 ? RED : null), radius: tx.start.length < 100 ? 3.5 : 2,
        tooltip: (i) => [tx.types[tx.kind[i]], `start ${clockText(tx.start[i])}`, `duration ${Charts.duration(tx.ms[i])}`,
          `connection ${tx.connection[i]}, transaction ${tx.index[i]}`,
          plural(tx.retransmissions[i], "retransmission"), "click: show the connection"] },
      { type: "line", name: "connections open", axis: "y2", step: true, ...open, color: "#555", width: 1,
        tooltip: (i) => [`${clockText(t.start[open.at(i)])}`, `${plural(t.connections_open[open.at(i)], "connection")} open`] },
      { type: "line", name: "transactions in progress", axis: "y2", step: true, ...busy,
        color: "#2ca02c", width: 1, dash: [4, 3],
        tooltip: (i) => [`${clockText(t.start[busy.at(i)])}`,
          `${plural(t.transactions_in_progress[busy.at(i)], "transaction")} in progress`] },
    ],
    onClick: (hit) => {
      if (hit && hit.layer.type === "points") selectConnection(tx.connection[hit.index], { scroll: true });
    },
  });
  host.append(typeLegend());
}

function typeLegend() {
  const legend = el("div", "type-legend");
  DATA.transactions.types.slice(0, PALETTE.length + 1).forEach((name, kind) => {
    const item = el("span", "legend-item");
    const swatch = el("span", "swatch");
    swatch.style.background = typeColor(kind);
    item.append(swatch, document.createTextNode(kind < PALETTE.length ? name : "other types"));
    legend.append(item);
  });
  return legend;
}

function setupsChart() {
  const s = DATA.setups;
  const c = DATA.connections;
  const host = document.getElementById("chart-setups");
  const layer = (outcome) => {
    const index = s.outcome.map((o, i) => (o === outcome ? i : -1)).filter((i) => i >= 0);
    return { type: "points", name: outcome, color: OUTCOME_COLORS[outcome], radius: outcome === "established" && s.start.length >= 100 ? 2 : 3.5,
      x: index.map((i) => s.start[i]), y: index.map((i) => s.ms[i]),
      tooltip: (k) => {
        const id = s.connection[index[k]];
        return [`connection ${id}: ${c.client[id]} → ${c.server[id]}`, `${outcome}, state ${c.state[id]}`,
          `at ${clockText(s.start[index[k]])}`, `setup ${Charts.duration(s.ms[index[k]])}`,
          plural(c.syn_retries[id], "SYN retry", "SYN retries"), "click: show the connection"];
      },
      connections: index.map((i) => s.connection[i]) };
  };
  charts.setups = Charts.create(host, {
    title: "Connection setups: SYN to handshake ACK (failed: first to last packet)",
    note: samplingNote(s.sampling, "setups"),
    height: 260, originDayMs: DATA.meta.origin_day_ms,
    x: { ...TIME, ...captureSpan() }, y: { label: "setup", kind: "log", format: Charts.duration },
    overlay: selectionOverlay,
    layers: ["established", "retried", "reset", "failed"].map(layer),
    onClick: (hit) => { if (hit) selectConnection(hit.layer.connections[hit.index], { scroll: true }); },
  });
}

function ioChart() {
  const t = DATA.ticks;
  const host = document.getElementById("chart-io");
  const count = (key, name, color, hidden) => {
    const line = tickLine(t[key]);
    return { type: "line", name, axis: "y2", step: true, ...line, color, hidden,
      tooltip: (i) => [`${clockText(t.start[line.at(i)])}`, `${t[key][line.at(i)].toLocaleString("en")} ${name}`] };
  };
  const throughput = tickLine(t.throughput_bps);
  charts.io = Charts.create(host, {
    title: `IO graph, per ${Charts.duration(t.tick_ms)} tick`,
    height: 280, originDayMs: DATA.meta.origin_day_ms,
    x: { ...TIME, ...captureSpan() }, y: { label: "bit/s", format: Charts.si },
    y2: { label: "per tick", format: Charts.si, integer: true },
    layers: [
      lossBands(),
      { type: "line", name: "throughput", step: true, ...throughput, color: "#1f77b4",
        tooltip: (i) => [`${clockText(t.start[throughput.at(i)])}`, `${Charts.si(t.throughput_bps[throughput.at(i)])}bit/s`] },
      count("packets", "packets", "#999", true),
      count("retransmissions", "retransmissions", RED),
      count("lost_segments", "lost segments", "#8c564b"),
      count("duplicate_acks", "duplicate ACKs", "#ff7f0e"),
      count("zero_windows", "zero windows", "#9467bd"),
    ],
  });
}

// ---- transaction types ----------------------------------------------------

/** The histogram's bins shown: the type's, and empty ones around them to a
 * decade at least, so a single bin reads as a bar, not as the whole chart. */
function histogramRange(type) {
  const bins = type.histogram.length;
  const wanted = Math.max(bins + 4, type.bins_per_decade);
  const before = Math.floor((wanted - bins) / 2);
  return [type.first_bin - before, type.first_bin - before + wanted];
}

function histogramChart(kind) {
  const type = DATA.types[kind];
  const host = document.getElementById("chart-histogram");
  const edge = (bin) => Math.pow(10, bin / type.bins_per_decade);
  const x0 = type.histogram.map((_, i) => edge(type.first_bin + i));
  const x1 = type.histogram.map((_, i) => edge(type.first_bin + i + 1));
  const [first, last] = histogramRange(type);
  charts.histogram = Charts.create(host, {
    title: `Response times of ${type.name}: ${plural(type.count, "transaction")}`,
    height: 240,
    x: { label: "duration", kind: "log", format: Charts.duration, min: edge(first), max: edge(last) },
    y: { label: "transactions", format: Charts.si, integer: true },
    layers: [{ type: "bars", x0, x1, y: type.histogram, color: typeColor(kind),
      tooltip: (i) => [`${Charts.duration(x0[i])} – ${Charts.duration(x1[i])}`, plural(type.histogram[i], "transaction")] }],
  });
  host.prepend(typePicker(kind));
}

function typePicker(kind) {
  const label = el("label", "picker", "Type: ");
  const select = document.createElement("select");
  DATA.types.forEach((type, i) => {
    const option = el("option", null, `${type.name} (${type.count})`);
    option.value = String(i);
    select.append(option);
  });
  select.value = String(kind);
  select.addEventListener("change", () => histogramChart(Number(select.value)));
  label.append(select);
  return label;
}

function typesTable() {
  const types = DATA.types;
  const value = (key) => (i) => types[i][key];
  Table(document.getElementById("types-table"), {
    rows: types.length,
    columns: [
      { label: "type", value: value("name") },
      { label: "count", value: value("count"), numeric: true },
      { label: "total", value: value("total_ms"), numeric: true, format: Charts.duration },
      { label: "min", value: value("min_ms"), numeric: true, format: Charts.duration },
      { label: "mean", value: value("mean_ms"), numeric: true, format: Charts.duration },
      { label: "p50", value: value("p50_ms"), numeric: true, format: Charts.duration },
      { label: "p90", value: value("p90_ms"), numeric: true, format: Charts.duration },
      { label: "p99", value: value("p99_ms"), numeric: true, format: Charts.duration },
      { label: "max", value: value("max_ms"), numeric: true, format: Charts.duration },
    ],
    onRowClick: (i) => histogramChart(i),
    id: "types",
  });
}

// ---- tables ---------------------------------------------------------------

function connectionsTable() {
  const c = DATA.connections;
  const column = (label, key, format, numeric = true) => ({ label, value: (i) => c[key][i], format, numeric });
  charts.connectionsTable = Table(document.getElementById("connections-table"), {
    rows: c.id.length,
    id: "connections",
    columns: [
      column("id", "id"),
      column("client", "client", null, false),
      column("server", "server", null, false),
      column("state", "state", null, false),
      column("history", "history", null, false),
      column("start", "start", clockText),
      column("duration", "duration_ms", Charts.duration),
      column("setup", "setup_ms", Charts.duration),
      column("SYN retries", "syn_retries"),
      column("packets", "packets"),
      column("payload bytes", "payload_bytes", Charts.si),
      column("retrans", "retransmissions"),
      column("lost", "lost_segments"),
      column("dup ACKs", "duplicate_acks"),
      column("zero win", "zero_windows"),
      column("Path RTT", "rtt_ms", Charts.duration),
      column("transactions", "transactions"),
      column("slowest", "slowest_ms", Charts.duration),
      { label: "detail", value: (i) => (c.detail[i] ? "yes" : "no"), numeric: false },
    ],
    rowClass: (i) => (i === selected ? "selected" : ""),
    onRowClick: (i) => selectConnection(c.id[i], { scroll: true }),
  });
}

// ---- the selected connection ---------------------------------------------

function detailOf(id) {
  return DATA.details.find((d) => d.connection === id) || null;
}

function selectConnection(id, how = {}) {
  if (id == null || id >= DATA.connections.id.length) return;
  selected = id;
  for (const name of ["transactions", "setups"]) if (charts[name]) Charts.draw(charts[name]);
  charts.connectionsTable.showRow(id);
  for (const row of document.querySelectorAll("#connections-table tbody tr")) {
    row.classList.toggle("selected", Number(row.dataset.row) === id);
  }
  const detail = detailOf(id);
  renderDetailHeader(id, detail);
  const chartsBox = document.getElementById("detail-charts");
  chartsBox.hidden = !detail;
  if (detail) {
    windowChart(detail);
    rttChart(detail);
    sequenceChart(detail);
    ladderChart(id, detail, how.frame);
    waterfallChart(detail);
  }
  if (how.scroll) document.getElementById("detail").scrollIntoView({ block: "start" });
}

function renderDetailHeader(id, detail) {
  const c = DATA.connections;
  const header = document.getElementById("detail-header");
  const facts = [
    `Connection ${id}: ${c.client[id]} → ${c.server[id]}${c.roles_guessed[id] ? " (roles guessed)" : ""}`,
    `state ${c.state[id]}, history ${c.history[id]}, closed by ${c.close[id]}; from ${clockText(c.start[id])} ` +
      `for ${Charts.duration(c.duration_ms[id])}; setup ${Charts.duration(c.setup_ms[id])}; ` +
      `${plural(c.packets[id], "packet")}, ${plural(c.retransmissions[id], "retransmission")}, ` +
      `path RTT ${Charts.duration(c.rtt_ms[id])}; first frame ${c.first_frame[id]}`,
  ];
  header.replaceChildren(el("h3", null, facts[0]), el("p", null, facts[1]));
  if (!detail) {
    const note = el("p", "no-detail", "This connection has no packet detail in this report " +
      `(it details up to ${DATA.meta.detail_limits.connections} connections: the findings' examples, the largest and the slowest). ` +
      "To detail it, run: ");
    note.append(el("code", null, `${DATA.meta.detail_command} ${id}`));
    header.append(note);
    return;
  }
  const notes = [];
  if (detail.sample_stride > 1) {
    notes.push(`Sampled: every ${detail.sample_stride}th of ${detail.packets_seen.toLocaleString("en")} packets in the ` +
      "window and time-sequence charts; retransmissions kept apart" +
      (detail.resent_seen > detail.resent.frame.length ? ` (the first ${detail.resent.frame.length} of ${detail.resent_seen})` : "") + ".");
  }
  if (detail.packets_seen > detail.ladder.frame.length) {
    notes.push(`The ladder shows the first ${detail.ladder.frame.length} of ${detail.packets_seen.toLocaleString("en")} packets.`);
  }
  if (detail.rtt_stride > 1) notes.push(`RTT: every ${detail.rtt_stride}th sample.`);
  if (detail.waterfall.total > detail.waterfall.index.length) {
    notes.push(`The waterfall shows the first ${detail.waterfall.index.length} of ${detail.waterfall.total} transactions.`);
  }
  for (const text of notes) header.append(el("p", "chart-note", text));
}

const side = (fromClient) => (fromClient ? "client" : "server");

function flagsText(flags) {
  const names = [[2, "SYN"], [1, "FIN"], [4, "RST"], [8, "PSH"], [16, "ACK"]];
  return names.filter(([bit]) => flags & bit).map(([, name]) => name).join(" ");
}

function packetLines(p, i) {
  return [`frame ${p.frame[i]} at ${clockText(p.t[i])}`, `${side(p.from_client[i])} → ${side(!p.from_client[i])}`,
    `seq ${p.seq[i]} len ${p.len[i]} ack ${p.ack[i]} [${flagsText(p.flags[i])}]`,
    `window ${p.window[i].toLocaleString("en")} B, in flight ${p.in_flight[i].toLocaleString("en")} B`,
    p.resent[i] ? "retransmission" : ""].filter(Boolean);
}

/** Indices of packets in `p` sent by the client (true) or the server (false). */
function from(p, client, filter = () => true) {
  return p.t.map((_, i) => i).filter((i) => p.from_client[i] === client && filter(i));
}

function windowChart(d) {
  const p = d.sample;
  const series = (client, key, name, color, dash, filter) => {
    const index = from(p, client, filter);
    return { type: "line", step: true, name, color, dash, x: index.map((i) => p.t[i]), y: index.map((i) => p[key][i]),
      tooltip: (k) => packetLines(p, index[k]) };
  };
  const hasData = (i) => p.len[i] > 0;
  charts.window = Charts.create(document.getElementById("chart-window"), {
    title: "Advertised receive window and bytes in flight",
    height: 260, originDayMs: DATA.meta.origin_day_ms,
    x: TIME, y: { label: "bytes", format: Charts.si },
    layers: [
      series(true, "window", "client's window", "#1f77b4"),
      series(false, "window", "server's window", "#ff7f0e"),
      series(true, "in_flight", "client's bytes in flight", "#1f77b4", [4, 3], hasData),
      series(false, "in_flight", "server's bytes in flight", "#ff7f0e", [4, 3], hasData),
    ],
  });
}

function rttChart(d) {
  const layer = (client, color) => {
    const index = d.rtt_t.map((_, i) => i).filter((i) => d.rtt_from_client[i] === client);
    return { type: "points", name: `data from the ${side(client)}`, color, radius: 2.5,
      x: index.map((i) => d.rtt_t[i]), y: index.map((i) => d.rtt_ms[i]),
      tooltip: (k) => [`${clockText(d.rtt_t[index[k]])}`, `RTT ${Charts.duration(d.rtt_ms[index[k]])} (data from the ${side(client)} to its ACK)`] };
  };
  charts.rtt = Charts.create(document.getElementById("chart-rtt"), {
    title: "RTT at the capture point: data to its ACK",
    note: d.rtt_t.length ? null : "No RTT sample: no data was acknowledged.",
    height: 220, originDayMs: DATA.meta.origin_day_ms,
    x: TIME, y: { label: "RTT", format: Charts.duration },
    layers: [layer(true, "#1f77b4"), layer(false, "#ff7f0e")],
  });
}

/** The time-sequence graph of the direction that sent more data. */
function sequenceChart(d) {
  const p = d.sample, r = d.resent;
  const bytes = (client) => p.len.reduce((sum, len, i) => sum + (p.from_client[i] === client ? len : 0), 0);
  const client = bytes(true) >= bytes(false);
  const data = from(p, client, (i) => p.len[i] > 0 && !p.resent[i]);
  const resent = from(r, client, (i) => r.len[i] > 0);
  const acks = from(p, !client);
  const segments = (q, index, name, color, width) => ({ type: "segments", name, color, width,
    x0: index.map((i) => q.t[i]), x1: index.map((i) => q.t[i]),
    y0: index.map((i) => q.seq[i]), y1: index.map((i) => q.seq[i] + q.len[i]),
    tooltip: (k) => packetLines(q, index[k]) });
  charts.sequence = Charts.create(document.getElementById("chart-sequence"), {
    title: `Time-sequence graph of the ${side(client)}'s data (tcptrace style)`,
    height: 300, originDayMs: DATA.meta.origin_day_ms,
    x: TIME, y: { label: "relative sequence", format: Charts.si },
    layers: [
      segments(p, data, "data", "#1f77b4", 2),
      segments(r, resent, "retransmissions", RED, 3),
      { type: "line", step: true, name: `${side(!client)}'s ACK`, color: "#2ca02c", width: 1,
        x: acks.map((i) => p.t[i]), y: acks.map((i) => p.ack[i]), tooltip: (k) => packetLines(p, acks[k]) },
      { type: "line", step: true, name: "ACK + window", color: "#bcbd22", width: 1,
        x: acks.map((i) => p.t[i]), y: acks.map((i) => p.ack[i] + p.window[i]), tooltip: (k) => packetLines(p, acks[k]) },
    ],
  });
}

/**
 * The ladder's time axis: packets spaced by their time, but never closer than
 * a label's height apart, and every pause far longer than the usual gap cut
 * short (`cuts` says where, and how long it was). Maps times to units and back.
 */
function ladderScale(times) {
  const gaps = times.slice(1).map((t, i) => t - times[i]).filter((gap) => gap > 0).sort((a, b) => a - b);
  const usual = Math.max(gaps.length ? gaps[Math.floor(gaps.length / 2)] : 1, 1e-3);
  const cutAbove = Math.max(2 * LADDER_TO_SCALE * usual, LADDER_CUT_MIN_MS);
  const step = (gap) => {
    const ratio = gap / usual;
    return ratio <= LADDER_TO_SCALE ? Math.max(1, ratio) : LADDER_TO_SCALE + 2 * Math.log2(ratio / LADDER_TO_SCALE);
  };
  const knots = [[times[0] ?? 0, 0]];
  const cuts = [];
  for (let i = 1; i < times.length; i++) {
    const gap = times[i] - times[i - 1];
    if (gap <= 0) continue;
    const [, u] = knots[knots.length - 1];
    const cut = gap > cutAbove;
    if (cut) cuts.push({ from: times[i - 1], to: times[i] });
    knots.push([times[i], u + step(gap)]);
  }
  const slope = 1 / usual;
  const between = (pairs, value, fromIndex, toIndex) => {
    const last = pairs.length - 1;
    let k = 0;
    while (k < last - 1 && pairs[k + 1][fromIndex] <= value) k++;
    const [a, b] = last === 0 ? [pairs[0], null] : [pairs[k], pairs[k + 1]];
    if (!b || value < a[fromIndex] || value > b[fromIndex]) {
      const edge = !b || value < a[fromIndex] ? a : b;
      const rate = fromIndex === 0 ? slope : 1 / slope;
      return edge[toIndex] + (value - edge[fromIndex]) * rate;
    }
    const share = (value - a[fromIndex]) / (b[fromIndex] - a[fromIndex] || 1);
    return a[toIndex] + share * (b[toIndex] - a[toIndex]);
  };
  return {
    kind: "ladder", cuts, knots,
    to: (t) => between(knots, t, 0, 1),
    from: (u) => between(knots, u, 1, 0),
  };
}

/** Ticks at packets, as many as fit, each with its time of day. */
function ladderTicks(scale) {
  return (u0, u1, count) => {
    const inside = scale.knots.filter(([, u]) => u >= u0 && u <= u1);
    const every = Math.max(1, Math.ceil(inside.length / Math.max(1, count)));
    return inside.filter((_, i) => i % every === 0).map(([t, u]) => [u, clockText(t)]);
  };
}

/** The cut pauses, as a break across the ladder with the time they took. */
function ladderCuts(scale) {
  return (ctx, m) => {
    ctx.save();
    ctx.font = "11px system-ui, sans-serif";
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    for (const cut of scale.cuts) {
      const top = m.py(cut.from) + 6, bottom = m.py(cut.to) - 6;
      if (bottom - top < 4 || bottom < m.f.top || top > m.f.top + m.f.height) continue;
      ctx.fillStyle = "rgba(0, 0, 0, 0.04)";
      ctx.fillRect(m.f.left, top, m.f.width, bottom - top);
      ctx.strokeStyle = "#bbb";
      ctx.setLineDash([2, 4]);
      for (const y of [top, bottom]) {
        ctx.beginPath();
        ctx.moveTo(m.f.left, Math.round(y) + 0.5);
        ctx.lineTo(m.f.left + m.f.width, Math.round(y) + 0.5);
        ctx.stroke();
      }
      ctx.fillStyle = "#666";
      // At the left, clear of the arrows' labels in the middle.
      ctx.fillText(`⋯ ${Charts.duration(cut.to - cut.from)} idle, cut short`, m.f.left + 6, (top + bottom) / 2);
    }
    ctx.restore();
  };
}

/** Client on the left, server on the right, time going down; arrows cross the capture point when seen. */
function ladderChart(id, d, frame) {
  const p = d.ladder, c = DATA.connections;
  const toClient = (c.rtt_to_client_ms[id] || 0) / 2, toServer = (c.rtt_to_server_ms[id] || 0) / 2;
  const capture = toClient + toServer > 0 ? toClient / (toClient + toServer) : 0.5;
  const index = p.t.map((_, i) => i);
  const start = (i) => (p.from_client[i] ? p.t[i] - toClient : p.t[i] - toServer);
  const end = (i) => (p.from_client[i] ? p.t[i] + toServer : p.t[i] + toClient);
  const color = (i) => (p.resent[i] ? RED : p.flags[i] & 7 ? "#9467bd" : p.len[i] > 0 ? "#1f77b4" : "#999");
  const links = [];
  index.forEach((i) => {
    if (!p.resent[i] || p.len[i] === 0) return;
    const original = index.find((j) => j < i && p.from_client[j] === p.from_client[i] && p.seq[j] === p.seq[i] && p.len[j] > 0);
    if (original != null) links.push([original, i]);
  });
  const linkX = (i) => (p.from_client[i] ? 0.03 : 0.97);
  const scale = ladderScale(p.t);
  const cut = scale.cuts.length ? `; ${plural(scale.cuts.length, "idle pause")} cut short` : "";
  charts.ladder = Charts.create(document.getElementById("chart-ladder"), {
    title: `Packet ladder: client (left), capture point (dashed), server (right); the first ${plural(p.t.length, "packet")}${cut}`,
    height: 560, originDayMs: DATA.meta.origin_day_ms,
    x: { label: "", min: -0.06, max: 1.06, format: (v) => (Math.abs(v) < 0.01 ? "client" : Math.abs(v - 1) < 0.01 ? "server" : "") },
    y: { ...TIME, label: "time", invert: true, scale, ticks: ladderTicks(scale) },
    overlay: ladderCuts(scale),
    layers: [
      { type: "segments", color: "#bbb", dash: [5, 4], width: 1, x0: [capture], x1: [capture],
        y0: [Math.min(...p.t.map(start))], y1: [Math.max(...p.t.map(end))] },
      { type: "segments", name: "packets", arrow: true, color, x0: index.map((i) => (p.from_client[i] ? 0 : 1)),
        x1: index.map((i) => (p.from_client[i] ? 1 : 0)), y0: index.map(start), y1: index.map(end),
        label: (i) => `${flagsText(p.flags[i])} seq ${p.seq[i]} len ${p.len[i]} ack ${p.ack[i]}`,
        tooltip: (i) => packetLines(p, i) },
      { type: "segments", name: "retransmission ← original", color: RED, dash: [3, 3], width: 1.5,
        x0: links.map(([a]) => linkX(a)), x1: links.map(([, b]) => linkX(b)),
        y0: links.map(([a]) => start(a)), y1: links.map(([, b]) => start(b)),
        tooltip: (k) => [`frame ${p.frame[links[k][1]]} retransmits frame ${p.frame[links[k][0]]}`,
          `after ${Charts.duration(p.t[links[k][1]] - p.t[links[k][0]])}`] },
    ].filter((layer) => layer.x0.length),
  });
  const at = frame != null ? p.frame.indexOf(frame) : -1;
  if (frame != null && at < 0) {
    document.getElementById("detail-header").append(el("p", "chart-note",
      `Frame ${frame} is not among the ${p.t.length} packets of this connection's ladder.`));
  }
  const focus = at >= 0 ? at : 0;
  const last = Math.min(p.t.length - 1, focus + 30);
  if (p.t.length > 40 || at >= 0) Charts.zoomTo(charts.ladder, "y", start(Math.max(0, focus - 5)), end(last));
}

function waterfallChart(d) {
  const w = d.waterfall;
  const rows = w.index.map((_, i) => i);
  const bar = (name, color, from, to) => ({ type: "rects", name, color,
    x0: rows.map((i) => from[i]), x1: rows.map((i) => to[i]), y0: rows.map((i) => i + 0.7), y1: rows.map((i) => i + 1.3),
    tooltip: (i) => [`transaction ${w.index[i]}: ${DATA.transactions.types[w.kind[i]]}`,
      `request ${clockText(w.request_start[i])}, ${w.request_bytes[i].toLocaleString("en")} B`,
      `response ${w.response_start[i] == null ? "none" : clockText(w.response_start[i])}, ${w.response_bytes[i].toLocaleString("en")} B`,
      `server think ${Charts.duration(w.response_start[i] == null ? null : w.response_start[i] - w.request_end[i])}`,
      `${w.retransmissions[i]} retransmissions`] });
  charts.waterfall = Charts.create(document.getElementById("chart-waterfall"), {
    title: "Transaction waterfall: request, server think time, response",
    note: rows.length ? null : "No transaction: no payload was exchanged.",
    height: Math.min(420, 90 + 18 * rows.length), originDayMs: DATA.meta.origin_day_ms,
    x: TIME, y: { label: "transaction", invert: true, min: 0.5, max: Math.max(1.5, rows.length + 0.5), format: (v) => (Number.isInteger(v) ? String(v) : "") },
    layers: [
      bar("request", "#1f77b4", w.request_start, w.request_end),
      bar("server think", "#d9d9d9", w.request_end, w.response_start),
      bar("response", "#2ca02c", w.response_start, w.response_end),
    ],
  });
}

// ---- start ----------------------------------------------------------------

function start() {
  renderSummary();
  renderFindings();
  transactionsChart();
  setupsChart();
  ioChart();
  if (DATA.types.length) histogramChart(0);
  else document.getElementById("chart-histogram").append(el("p", null, "No transaction."));
  typesTable();
  connectionsTable();
  const first = DATA.findings.find((f) => f.example_connection != null);
  if (first) selectConnection(first.example_connection);
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
}

start();
