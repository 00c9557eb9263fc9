// Tables for the report's pages (Charts, chart.js, makes their cells): sort
// by a header's click, filter by text, page through. Cells are DOM text.
"use strict";

/** A sortable, filterable, paged table over `rows` row indices. */
function Table(host, spec) {
  const el = Charts.el;
  const pageSize = spec.pageSize || 50;
  let order = [...Array(spec.rows).keys()];
  let shown = order, page = 0, sortColumn = -1, descending = false;
  const filter = document.createElement("input");
  filter.type = "search";
  filter.placeholder = "Filter rows (text in any column)";
  const info = el("span", "table-info");
  const pager = el("span", "pager");
  const previous = el("button", null, "‹ previous"), next = el("button", null, "next ›");
  pager.append(previous, next);
  const table = el("table");
  table.id = `${spec.id}-table`;
  const head = el("thead"), body = el("tbody");
  table.append(head, body);
  const headRow = el("tr");
  spec.columns.forEach((column, index) => {
    const th = el("th", column.numeric ? "num" : null, column.label);
    th.addEventListener("click", () => sortBy(index));
    headRow.append(th);
  });
  head.append(headRow);
  const controls = el("div", "table-controls");
  controls.append(filter, info, pager);
  host.replaceChildren(controls, table);
  const text = (column, i) => {
    const v = column.value(i);
    return v == null ? "–" : column.format ? column.format(v) : String(v);
  };

  function sortBy(index) {
    descending = sortColumn === index ? !descending : spec.columns[index].numeric;
    sortColumn = index;
    const column = spec.columns[index];
    const key = order.map((i) => column.value(i));
    const position = new Map(order.map((row, k) => [row, k]));
    order.sort((a, b) => compare(key[position.get(a)], key[position.get(b)]) * (descending ? -1 : 1));
    applyFilter();
  }

  function compare(a, b) {
    if (a == null) return b == null ? 0 : 1;
    if (b == null) return -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function applyFilter() {
    const needle = filter.value.trim().toLowerCase();
    shown = needle ? order.filter((i) => spec.columns.some((c) => text(c, i).toLowerCase().includes(needle))) : order;
    page = 0;
    render();
  }

  function render() {
    const rows = shown.slice(page * pageSize, (page + 1) * pageSize);
    body.replaceChildren(...rows.map((i) => {
      const tr = el("tr");
      tr.dataset.row = String(i);
      if (spec.rowClass) tr.className = spec.rowClass(i);
      for (const column of spec.columns) tr.append(el("td", column.numeric ? "num" : null, text(column, i)));
      if (spec.onRowClick) tr.addEventListener("click", () => spec.onRowClick(i));
      return tr;
    }));
    const pages = Math.max(1, Math.ceil(shown.length / pageSize));
    info.textContent = `${shown.length.toLocaleString("en")} of ${spec.rows.toLocaleString("en")} rows, page ${page + 1} of ${pages}`;
    previous.disabled = page === 0;
    next.disabled = page + 1 >= pages;
  }

  filter.addEventListener("input", applyFilter);
  previous.addEventListener("click", () => { page--; render(); });
  next.addEventListener("click", () => { page++; render(); });
  render();
  return { showRow: (i) => { const k = shown.indexOf(i); if (k >= 0) { page = Math.floor(k / pageSize); render(); } } };
}
