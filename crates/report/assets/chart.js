// A small canvas chart toolkit: axes (linear, logarithmic, time of day, or a
// scale of the caller's), layers (points, lines, bands, bars, rectangles,
// segments), zoom by wheel or Shift+drag box, pan by drag, reset by
// double-click, and a hover tooltip. Data never becomes HTML: labels are
// canvas text or DOM text nodes. A chart made again in the same place
// replaces the old one, which lets go of everything it held; redraws after
// a resize are gathered into one animation frame.
"use strict";

const Charts = (() => {
  const PAD = { left: 64, timeLeft: 110, right: 64, top: 28, bottom: 36 };
  const HOVER_PX = 8;
  const DOUBLE_CLICK_MS = 250;
  /** Charts on the page, by host element. */
  const live = new Map();
  /** Charts waiting for the next animation frame's redraw. */
  const due = new Set();
  let frameRequested = false;
  const stats = { draws: 0 };
  const resizes = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const chart = live.get(entry.target);
      if (chart && chart.drawnWidth !== entry.target.clientWidth) redraw(chart);
    }
  });

  // ---- formatting -------------------------------------------------------

  function two(n) { return String(n).padStart(2, "0"); }

  /** Milliseconds since midnight UTC as HH:MM:SS with as many decimals as `stepMs` needs. */
  function timeOfDay(dayMs, stepMs) {
    let ms = ((dayMs % 86400000) + 86400000) % 86400000;
    const h = Math.floor(ms / 3600000); ms -= h * 3600000;
    const m = Math.floor(ms / 60000); ms -= m * 60000;
    const s = Math.floor(ms / 1000); ms -= s * 1000;
    let text = `${two(h)}:${two(m)}:${two(s)}`;
    if (stepMs < 1) text += "." + String(Math.round(ms * 1000)).padStart(6, "0");
    else if (stepMs < 1000) text += "." + String(Math.round(ms)).padStart(3, "0");
    return text;
  }

  /** A number with SI prefix: 1.2k, 3.4M. */
  function si(value) {
    const abs = Math.abs(value);
    if (abs >= 1e9) return trim(value / 1e9) + "G";
    if (abs >= 1e6) return trim(value / 1e6) + "M";
    if (abs >= 1e3) return trim(value / 1e3) + "k";
    return trim(value);
  }

  function trim(value) {
    return String(Number(value.toPrecision(3)));
  }

  const DURATION_UNITS = [[1000, "s"], [1, "ms"], [1e-3, "µs"], [1e-6, "ns"]];

  /**
   * A duration in milliseconds as text. Alone, in the unit that suits it;
   * on an axis (`scale` = {step, top}), every label in the unit that suits
   * the axis's largest value, with the decimals its step needs.
   */
  function duration(ms, scale) {
    if (ms == null) return "–";
    if (!scale) {
      const [size, unit] = DURATION_UNITS.find(([size]) => Math.abs(ms) >= size) || DURATION_UNITS[3];
      return trim(ms / size) + " " + unit;
    }
    const [size, unit] = DURATION_UNITS.find(([size]) => scale.top >= size) || DURATION_UNITS[3];
    const decimals = Math.max(0, Math.min(6, -Math.floor(Math.log10(scale.step / size) + 1e-9)));
    return (ms / size).toFixed(decimals) + " " + unit;
  }

  // ---- scales -----------------------------------------------------------

  /** Maps values to a unit space where zoom and pan are linear. */
  function scale(kind) {
    if (kind === "log") {
      return { kind, to: (v) => Math.log10(Math.max(v, 1e-9)), from: (u) => Math.pow(10, u) };
    }
    return { kind, to: (v) => v, from: (u) => u };
  }

  const TIME_STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50,
    100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000,
    900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];

  function niceStep(span, count) {
    const raw = span / count;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
    return 10 * power;
  }

  /** Tick values and their labels for unit range [u0, u1]. */
  function ticks(axis, u0, u1, count, originDayMs) {
    if (axis.ticks) return axis.ticks(u0, u1, count);
    if (axis.scale.kind === "log") {
      if (u1 - u0 < 2) return logTicksWithinDecades(axis, u0, u1, count);
      const out = [];
      const step = Math.max(1, Math.ceil((u1 - u0) / count));
      for (let u = Math.ceil(u0); u <= u1; u += step) out.push([u, axis.format(Math.pow(10, u))]);
      return out;
    }
    if (axis.time) {
      const span = u1 - u0;
      const step = TIME_STEPS.find((s) => span / s <= count) || niceStep(span, count);
      const out = [];
      const first = Math.ceil((originDayMs + u0) / step) * step - originDayMs;
      for (let u = first; u <= u1 && out.length < 50; u += step) {
        out.push([u, timeOfDay(originDayMs + u, step)]);
      }
      return out;
    }
    return linearTicks(axis, u0, u1, count, axis.format);
  }

  /**
   * 1, 2 and 5 times powers of ten on a log axis that spans less than two
   * decades; evenly stepped values when fewer than two of those fall in it.
   */
  function logTicksWithinDecades(axis, u0, u1, count) {
    const out = [];
    for (let power = Math.floor(u0); power <= Math.ceil(u1); power++) {
      for (const m of [1, 2, 5]) {
        const u = power + Math.log10(m);
        if (u >= u0 && u <= u1) out.push([u, axis.format(m * Math.pow(10, power))]);
      }
    }
    if (out.length >= 2 || count < 2) return out;
    const [lo, hi] = [Math.pow(10, u0), Math.pow(10, u1)];
    const step = niceStep(hi - lo, count);
    const scale = { step, top: hi };
    const values = [];
    for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi * (1 + 1e-9) && values.length < 50; k++) {
      values.push([Math.log10(k * step), axis.format(k * step, scale)]);
    }
    return values;
  }

  /** Evenly stepped ticks; counts (`integer` axes) step by whole numbers. */
  function linearTicks(axis, u0, u1, count, format) {
    let step = niceStep(u1 - u0 || 1, count);
    if (axis.integer) step = Math.max(1, Math.round(step));
    const scale = { step, top: Math.max(Math.abs(u0), Math.abs(u1)) };
    const out = [];
    for (let k = Math.ceil(u0 / step - 1e-9); k * step <= u1 + step * 1e-9 && out.length < 50; k++) {
      // Multiplying, not adding, keeps float noise out of the labels.
      const u = k * step;
      out.push([u, format(axis.scale.from(u), scale)]);
    }
    return out;
  }

  // ---- the chart --------------------------------------------------------

  /**
   * Creates a chart in `host` (an element). Options: title, note (a sampling
   * note), height, x/y/y2 axes ({label, kind: "linear"|"log", time, format,
   * min, max, invert}), layers (see draw functions), tooltip(hit) → lines,
   * onClick(hit), originDayMs (for time axes).
   */
  function create(host, options) {
    if (live.has(host)) destroy(live.get(host));
    host.replaceChildren();
    const title = el("div", "chart-title", options.title);
    host.append(title);
    if (options.note) host.append(el("div", "chart-note", options.note));
    const legend = el("div", "chart-legend");
    host.append(legend);
    const canvas = document.createElement("canvas");
    canvas.height = options.height || 300;
    host.append(canvas);
    const tip = el("div", "chart-tip");
    tip.hidden = true;
    host.append(tip);
    const chart = {
      host, canvas, tip, options,
      layers: options.layers.filter((layer) => layer && !layer.hidden),
      axes: { x: axis(options.x), y: axis(options.y), y2: options.y2 ? axis(options.y2) : null },
    };
    for (const layer of options.layers) if (layer && layer.name) legend.append(legendItem(chart, layer));
    chart.home = homeView(chart);
    chart.view = { ...chart.home };
    attachInteraction(chart);
    live.set(host, chart);
    resizes.observe(host);
    draw(chart);
    return chart;
  }

  /** Removes a chart and lets go of its listeners, so nothing keeps it alive. */
  function destroy(chart) {
    live.delete(chart.host);
    due.delete(chart);
    resizes.unobserve(chart.host);
    for (const [type, listener] of chart.windowListeners) window.removeEventListener(type, listener);
    chart.host.replaceChildren();
  }

  /** Draws a chart again at the next animation frame, with the others due then. */
  function redraw(chart) {
    due.add(chart);
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(() => {
      frameRequested = false;
      const charts = [...due];
      due.clear();
      for (const c of charts) if (live.get(c.host) === c) draw(c);
    });
  }

  function axis(options) {
    const a = { label: "", format: si, ...options };
    a.scale = options.scale || scale(a.kind || "linear");
    return a;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  function legendItem(chart, layer) {
    const item = el("label", "legend-item");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = !layer.hidden;
    box.addEventListener("change", () => {
      layer.hidden = !box.checked;
      chart.layers = chart.options.layers.filter((l) => l && !l.hidden);
      const home = homeView(chart);
      Object.assign(chart.view, { y0: home.y0, y1: home.y1, z0: home.z0, z1: home.z1 });
      chart.home = { ...chart.home, y0: home.y0, y1: home.y1, z0: home.z0, z1: home.z1 };
      draw(chart);
    });
    const swatch = el("span", "swatch");
    swatch.style.background = typeof layer.color === "string" ? layer.color : "#888";
    item.append(box, swatch, document.createTextNode(layer.name));
    return item;
  }

  /** Each layer's extent along one axis, for layers on `which`. */
  function extent(chart, dimension, which) {
    let lo = Infinity, hi = -Infinity;
    for (const layer of chart.layers) {
      if (dimension === "y" && (layer.axis || "y") !== which) continue;
      if (layer.type === "bands" && dimension === "y") continue;
      for (const values of layerValues(layer, dimension)) {
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          if (v == null || !isFinite(v)) continue;
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
      }
    }
    return [lo, hi];
  }

  function layerValues(layer, dimension) {
    if (dimension === "x") return [layer.x, layer.x0, layer.x1].filter(Boolean);
    return [layer.y, layer.y0, layer.y1].filter(Boolean);
  }

  function homeRange(axisSpec, lo, hi) {
    if (axisSpec.min != null) lo = axisSpec.min;
    if (axisSpec.max != null) hi = axisSpec.max;
    if (!isFinite(lo) || !isFinite(hi)) { lo = axisSpec.scale.kind === "log" ? 1 : 0; hi = lo + 1; }
    let u0 = axisSpec.scale.to(lo), u1 = axisSpec.scale.to(hi);
    if (u1 - u0 <= 0) { u0 -= 0.5; u1 += 0.5; }
    const margin = axisSpec.min != null && axisSpec.max != null ? 0 : (u1 - u0) * 0.04;
    return [axisSpec.min != null ? u0 : u0 - margin, axisSpec.max != null ? u1 : u1 + margin];
  }

  function homeView(chart) {
    const { x, y, y2 } = chart.axes;
    const [x0, x1] = homeRange(x, ...extent(chart, "x"));
    let [ylo, yhi] = extent(chart, "y", "y");
    if (y.scale.kind !== "log" && y.min == null) ylo = Math.min(0, ylo);
    const [y0, y1] = homeRange(y, ylo, yhi);
    const view = { x0, x1, y0, y1 };
    if (y2) {
      let [lo, hi] = extent(chart, "y", "y2");
      [view.z0, view.z1] = homeRange(y2, Math.min(0, lo), hi);
    }
    return view;
  }

  // ---- drawing ----------------------------------------------------------

  function frame(chart) {
    const width = chart.canvas.width / devicePixelRatio;
    const height = chart.canvas.height / devicePixelRatio;
    const left = chart.axes.y.time ? PAD.timeLeft : PAD.left;
    return {
      left, top: PAD.top,
      width: Math.max(10, width - left - (chart.axes.y2 ? PAD.right : 16)),
      height: Math.max(10, height - PAD.top - PAD.bottom),
    };
  }

  /** Pixel mappers for the current view. */
  function mappers(chart) {
    const f = frame(chart);
    const { x, y, y2 } = chart.axes;
    const v = chart.view;
    const px = (value) => f.left + ((x.scale.to(value) - v.x0) / (v.x1 - v.x0)) * f.width;
    const vertical = (a, u0, u1) => (value) => {
      const share = (a.scale.to(value) - u0) / (u1 - u0);
      return a.invert ? f.top + share * f.height : f.top + f.height - share * f.height;
    };
    const py = vertical(y, v.y0, v.y1);
    const pz = y2 ? vertical(y2, v.z0, v.z1) : py;
    return { f, px, py, pz, yOf: (layer) => (layer.axis === "y2" ? pz : py) };
  }

  function draw(chart) {
    stats.draws++;
    const canvas = chart.canvas;
    const cssWidth = chart.host.clientWidth || 800;
    chart.drawnWidth = chart.host.clientWidth;
    const cssHeight = chart.options.height || 300;
    if (canvas.width !== Math.round(cssWidth * devicePixelRatio)) {
      canvas.width = Math.round(cssWidth * devicePixelRatio);
      canvas.height = Math.round(cssHeight * devicePixelRatio);
      canvas.style.width = cssWidth + "px";
      canvas.style.height = cssHeight + "px";
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    const m = mappers(chart);
    drawAxes(chart, ctx, m);
    ctx.save();
    ctx.beginPath();
    ctx.rect(m.f.left, m.f.top, m.f.width, m.f.height);
    ctx.clip();
    let marks = 0;
    for (const layer of chart.layers) marks += DRAW[layer.type](ctx, layer, m, chart);
    if (chart.options.overlay) chart.options.overlay(ctx, m, chart);
    ctx.restore();
    if (marks === 0) {
      ctx.fillStyle = "#999";
      ctx.font = "13px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText("No data here", m.f.left + m.f.width / 2, m.f.top + m.f.height / 2);
    }
    if (chart.box) drawBox(ctx, chart.box);
    canvas.dataset.points = String(marks);
    canvas.dataset.drawn = "1";
  }

  function drawAxes(chart, ctx, m) {
    const { f } = m;
    const v = chart.view;
    const origin = chart.options.originDayMs || 0;
    ctx.strokeStyle = "#ccc";
    ctx.fillStyle = "#444";
    ctx.font = "11px system-ui, sans-serif";
    ctx.lineWidth = 1;
    ctx.strokeRect(f.left + 0.5, f.top + 0.5, f.width, f.height);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const x = chart.axes.x;
    for (const [u, label] of ticks(x, v.x0, v.x1, Math.max(2, f.width / 110), origin)) {
      const p = f.left + ((u - v.x0) / (v.x1 - v.x0)) * f.width;
      gridLine(ctx, p, f.top, p, f.top + f.height);
      ctx.fillText(label, p, f.top + f.height + 4);
    }
    ctx.fillText(x.label, f.left + f.width / 2, f.top + f.height + 19);
    verticalAxis(chart, ctx, m, chart.axes.y, v.y0, v.y1, f.left - 4, "right", true);
    if (chart.axes.y2) verticalAxis(chart, ctx, m, chart.axes.y2, v.z0, v.z1, f.left + f.width + 4, "left", false);
  }

  function verticalAxis(chart, ctx, m, a, u0, u1, at, align, grid) {
    const { f } = m;
    const origin = chart.options.originDayMs || 0;
    ctx.textAlign = align;
    ctx.textBaseline = "middle";
    for (const [u, label] of ticks(a, u0, u1, Math.max(2, f.height / 40), origin)) {
      const share = (u - u0) / (u1 - u0);
      const p = a.invert ? f.top + share * f.height : f.top + f.height - share * f.height;
      if (grid) gridLine(ctx, f.left, p, f.left + f.width, p);
      ctx.fillText(label, at, p);
    }
    ctx.save();
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.fillText(a.label, align === "right" ? f.left : f.left + f.width, 6);
    ctx.restore();
  }

  function gridLine(ctx, x0, y0, x1, y1) {
    ctx.save();
    ctx.strokeStyle = "#eee";
    ctx.beginPath();
    ctx.moveTo(Math.round(x0) + 0.5, Math.round(y0) + 0.5);
    ctx.lineTo(Math.round(x1) + 0.5, Math.round(y1) + 0.5);
    ctx.stroke();
    ctx.restore();
  }

  function drawBox(ctx, box) {
    ctx.save();
    ctx.strokeStyle = "#06c";
    ctx.fillStyle = "rgba(0, 102, 204, 0.08)";
    ctx.fillRect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0);
    ctx.strokeRect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0);
    ctx.restore();
  }

  function colorOf(layer, i) {
    return typeof layer.color === "function" ? layer.color(i) : layer.color || "#333";
  }

  function inside(f, x, y) {
    return x >= f.left - 2 && x <= f.left + f.width + 2 && y >= f.top - 2 && y <= f.top + f.height + 2;
  }

  const DRAW = {
    /** Points: x, y, color, radius, ring(i) → outline color or null. */
    points(ctx, layer, m) {
      const py = m.yOf(layer);
      const r = layer.radius || 2;
      let count = 0;
      for (let i = 0; i < layer.x.length; i++) {
        if (layer.y[i] == null) continue;
        const x = m.px(layer.x[i]), y = py(layer.y[i]);
        if (!inside(m.f, x, y)) continue;
        ctx.fillStyle = colorOf(layer, i);
        ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
        const ring = layer.ring && layer.ring(i);
        if (ring) {
          ctx.strokeStyle = ring;
          ctx.lineWidth = 1.5;
          ctx.strokeRect(x - r - 2, y - r - 2, 2 * r + 4, 2 * r + 4);
        }
        count++;
      }
      return count;
    },
    /** A polyline: x, y, color; step: hold each value until the next x. */
    line(ctx, layer, m) {
      const py = m.yOf(layer);
      ctx.strokeStyle = colorOf(layer, 0);
      ctx.lineWidth = layer.width || 1.5;
      ctx.setLineDash(layer.dash || []);
      ctx.beginPath();
      let count = 0, started = false, lastY = 0;
      for (let i = 0; i < layer.x.length; i++) {
        if (layer.y[i] == null) { started = false; continue; }
        const x = m.px(layer.x[i]), y = py(layer.y[i]);
        if (!started) ctx.moveTo(x, y);
        else if (layer.step) { ctx.lineTo(x, lastY); ctx.lineTo(x, y); }
        else ctx.lineTo(x, y);
        started = true;
        lastY = y;
        if (x >= m.f.left && x <= m.f.left + m.f.width) count++;
      }
      ctx.stroke();
      ctx.setLineDash([]);
      return count;
    },
    /** Background bands over the full height: x0, x1, color. */
    bands(ctx, layer, m) {
      ctx.fillStyle = colorOf(layer, 0);
      let count = 0;
      for (let i = 0; i < layer.x0.length; i++) {
        const a = m.px(layer.x0[i]), b = m.px(layer.x1[i]);
        if (b < m.f.left || a > m.f.left + m.f.width) continue;
        ctx.fillRect(a, m.f.top, Math.max(1, b - a), m.f.height);
        count++;
      }
      return count;
    },
    /** Bars from the axis: x0, x1, y, color. */
    bars(ctx, layer, m) {
      const py = m.yOf(layer);
      const base = py(layer.base != null ? layer.base : 0);
      let count = 0;
      for (let i = 0; i < layer.x0.length; i++) {
        const a = m.px(layer.x0[i]), b = m.px(layer.x1[i]), top = py(layer.y[i]);
        ctx.fillStyle = colorOf(layer, i);
        ctx.fillRect(a + 0.5, Math.min(top, base), Math.max(1, b - a - 1), Math.abs(base - top));
        if (layer.y[i] > 0) count++;
      }
      return count;
    },
    /** Rectangles: x0, x1, y0, y1, color. */
    rects(ctx, layer, m) {
      const py = m.yOf(layer);
      let count = 0;
      for (let i = 0; i < layer.x0.length; i++) {
        if (layer.x0[i] == null || layer.x1[i] == null) continue;
        const a = m.px(layer.x0[i]), b = m.px(layer.x1[i]);
        const top = py(layer.y1[i]), bottom = py(layer.y0[i]);
        if (b < m.f.left || a > m.f.left + m.f.width) continue;
        ctx.fillStyle = colorOf(layer, i);
        ctx.fillRect(a, Math.min(top, bottom), Math.max(1.5, b - a), Math.max(1, Math.abs(bottom - top)));
        count++;
      }
      return count;
    },
    /** Line segments: x0, y0, x1, y1, color; arrow: draw a head at the end; label(i). */
    segments(ctx, layer, m) {
      const py = m.yOf(layer);
      let count = 0;
      ctx.lineWidth = layer.width || 1.2;
      ctx.setLineDash(layer.dash || []);
      for (let i = 0; i < layer.x0.length; i++) {
        const a = m.px(layer.x0[i]), b = py(layer.y0[i]), c = m.px(layer.x1[i]), d = py(layer.y1[i]);
        if (Math.max(b, d) < m.f.top || Math.min(b, d) > m.f.top + m.f.height) continue;
        if (Math.max(a, c) < m.f.left || Math.min(a, c) > m.f.left + m.f.width) continue;
        const color = colorOf(layer, i);
        ctx.strokeStyle = color;
        ctx.beginPath();
        ctx.moveTo(a, b);
        ctx.lineTo(c, d);
        ctx.stroke();
        if (layer.arrow) arrowHead(ctx, a, b, c, d, color);
        count++;
      }
      ctx.setLineDash([]);
      if (layer.label) labelSegments(ctx, layer, m, py);
      return count;
    },
  };

  function arrowHead(ctx, a, b, c, d, color) {
    const angle = Math.atan2(d - b, c - a);
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.moveTo(c, d);
    ctx.lineTo(c - 8 * Math.cos(angle - 0.35), d - 8 * Math.sin(angle - 0.35));
    ctx.lineTo(c - 8 * Math.cos(angle + 0.35), d - 8 * Math.sin(angle + 0.35));
    ctx.closePath();
    ctx.fill();
  }

  /** Labels at segment midpoints, only where they do not overlap. */
  function labelSegments(ctx, layer, m, py) {
    ctx.font = "10px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    let lastY = -Infinity;
    for (let i = 0; i < layer.x0.length; i++) {
      const x = (m.px(layer.x0[i]) + m.px(layer.x1[i])) / 2;
      const y = (py(layer.y0[i]) + py(layer.y1[i])) / 2;
      if (y < m.f.top || y > m.f.top + m.f.height || Math.abs(y - lastY) < 12) continue;
      ctx.fillStyle = colorOf(layer, i);
      ctx.fillText(layer.label(i), x, y - 2);
      lastY = y;
    }
  }

  // ---- hover and interaction -------------------------------------------

  /** The mark nearest to pixel (x, y), within HOVER_PX. */
  function nearest(chart, x, y) {
    const m = mappers(chart);
    let best = null, bestDistance = HOVER_PX * HOVER_PX;
    const consider = (layer, i, px, py) => {
      const d = (px - x) ** 2 + (py - y) ** 2;
      if (d <= bestDistance) { bestDistance = d; best = { layer, index: i }; }
    };
    for (const layer of chart.layers) {
      const yOf = m.yOf(layer);
      if (layer.type === "points" || layer.type === "line") {
        for (let i = 0; i < layer.x.length; i++) {
          if (layer.y[i] != null) consider(layer, i, m.px(layer.x[i]), yOf(layer.y[i]));
        }
      } else if (layer.type === "segments") {
        for (let i = 0; i < layer.x0.length; i++) {
          consider(layer, i, (m.px(layer.x0[i]) + m.px(layer.x1[i])) / 2, (yOf(layer.y0[i]) + yOf(layer.y1[i])) / 2);
        }
      } else if (layer.type === "bars" || layer.type === "rects" || layer.type === "bands") {
        for (let i = 0; i < layer.x0.length; i++) {
          const a = m.px(layer.x0[i]), b = m.px(layer.x1[i]);
          if (x < Math.min(a, b) - 1 || x > Math.max(a, b) + 1) continue;
          if (layer.type === "rects") {
            const top = yOf(layer.y1[i]), bottom = yOf(layer.y0[i]);
            if (y < Math.min(top, bottom) - 2 || y > Math.max(top, bottom) + 2) continue;
          }
          if (!best || layer.type !== "bands") { best = { layer, index: i }; bestDistance = 0; }
        }
      }
    }
    return best;
  }

  function showTip(chart, hit, x, y) {
    const lines = hit && hit.layer.tooltip ? hit.layer.tooltip(hit.index) : null;
    if (!lines) { chart.tip.hidden = true; return; }
    chart.tip.replaceChildren(...lines.map((line) => el("div", null, line)));
    chart.tip.hidden = false;
    const width = chart.host.clientWidth;
    chart.tip.style.left = Math.min(x + 14, width - 260) + "px";
    chart.tip.style.top = y + 14 + "px";
  }

  function attachInteraction(chart) {
    const canvas = chart.canvas;
    let drag = null;
    chart.windowListeners = [];
    const onWindow = (type, listener) => {
      window.addEventListener(type, listener);
      chart.windowListeners.push([type, listener]);
    };
    const point = (event) => {
      const rect = canvas.getBoundingClientRect();
      return [event.clientX - rect.left, event.clientY - rect.top];
    };
    canvas.addEventListener("wheel", (event) => {
      event.preventDefault();
      const [x, y] = point(event);
      const f = frame(chart);
      const factor = event.deltaY < 0 ? 0.8 : 1.25;
      const v = chart.view;
      if (event.shiftKey) {
        let share = (f.top + f.height - y) / f.height;
        if (chart.axes.y.invert) share = 1 - share;
        [v.y0, v.y1] = zoomRange(v.y0, v.y1, share, factor);
        if (chart.axes.y2) [v.z0, v.z1] = zoomRange(v.z0, v.z1, share, factor);
      } else {
        [v.x0, v.x1] = zoomRange(v.x0, v.x1, (x - f.left) / f.width, factor);
      }
      redraw(chart);
    }, { passive: false });
    canvas.addEventListener("mousedown", (event) => {
      const [x, y] = point(event);
      drag = { x, y, view: { ...chart.view }, box: event.shiftKey, moved: false };
    });
    onWindow("mousemove", (event) => {
      const [x, y] = point(event);
      if (!drag) {
        if (event.target === canvas) showTip(chart, nearest(chart, x, y), x, y);
        return;
      }
      drag.moved = drag.moved || Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3;
      if (drag.box) {
        chart.box = { x0: Math.min(x, drag.x), x1: Math.max(x, drag.x), y0: Math.min(y, drag.y), y1: Math.max(y, drag.y) };
      } else {
        pan(chart, drag, x - drag.x, y - drag.y);
      }
      redraw(chart);
    });
    onWindow("mouseup", (event) => {
      if (!drag) return;
      const [x, y] = point(event);
      if (drag.box && chart.box) zoomToBox(chart, chart.box);
      else if (!drag.moved && chart.options.onClick) {
        // A click waits out a double-click, which resets the view and selects nothing.
        const hit = nearest(chart, x, y);
        clearTimeout(chart.pendingClick);
        if (event.detail < 2) chart.pendingClick = setTimeout(() => chart.options.onClick(hit), DOUBLE_CLICK_MS);
      }
      chart.box = null;
      drag = null;
      draw(chart);
    });
    canvas.addEventListener("mouseleave", () => { chart.tip.hidden = true; });
    canvas.addEventListener("dblclick", () => {
      clearTimeout(chart.pendingClick);
      chart.view = { ...chart.home };
      draw(chart);
    });
  }

  function zoomRange(u0, u1, share, factor) {
    const at = u0 + (u1 - u0) * share;
    return [at - (at - u0) * factor, at + (u1 - at) * factor];
  }

  function pan(chart, drag, dx, dy) {
    const f = frame(chart);
    const from = drag.view, v = chart.view;
    const ux = ((from.x1 - from.x0) * dx) / f.width;
    v.x0 = from.x0 - ux; v.x1 = from.x1 - ux;
    const sign = chart.axes.y.invert ? -1 : 1;
    const uy = (sign * (from.y1 - from.y0) * dy) / f.height;
    v.y0 = from.y0 + uy; v.y1 = from.y1 + uy;
    if (chart.axes.y2) {
      const uz = (sign * (from.z1 - from.z0) * dy) / f.height;
      v.z0 = from.z0 + uz; v.z1 = from.z1 + uz;
    }
  }

  function zoomToBox(chart, box) {
    if (box.x1 - box.x0 < 4) return;
    const f = frame(chart);
    const v = chart.view;
    const ux = (p) => v.x0 + ((p - f.left) / f.width) * (v.x1 - v.x0);
    const share = (p) => {
      const s = (f.top + f.height - p) / f.height;
      return chart.axes.y.invert ? 1 - s : s;
    };
    const [x0, x1] = [ux(box.x0), ux(box.x1)];
    if (box.y1 - box.y0 >= 4) {
      const [a, b] = [share(box.y1), share(box.y0)].sort((p, q) => p - q);
      const [y0, y1] = [v.y0 + a * (v.y1 - v.y0), v.y0 + b * (v.y1 - v.y0)];
      if (chart.axes.y2) [v.z0, v.z1] = [v.z0 + a * (v.z1 - v.z0), v.z0 + b * (v.z1 - v.z0)];
      v.y0 = y0; v.y1 = y1;
    }
    v.x0 = x0; v.x1 = x1;
  }

  /** Shows `lo` to `hi` (values, not units) along axis "x" or "y". */
  function zoomTo(chart, which, lo, hi) {
    const s = chart.axes[which].scale;
    const pad = (s.to(hi) - s.to(lo)) * 0.05 || 1;
    chart.view[which + "0"] = s.to(lo) - pad;
    chart.view[which + "1"] = s.to(hi) + pad;
    draw(chart);
  }

  /** Charts on the page and draws so far: the browser check's measure of leaks. */
  function census() {
    return { live: live.size, draws: stats.draws };
  }

  return { create, destroy, draw, zoomTo, duration, si, timeOfDay, el, census };
})();
