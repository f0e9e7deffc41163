// The results page: every archived run (inlined as JSON), filtered and sorted in the browser.
// The chart is Vega-Lite (spec built by altair in Python, library inlined); the table is plain DOM.
const DATA = JSON.parse(document.getElementById("data").textContent);
const RUNS = DATA.runs;
const FILTERS = ["library", "method", "format", "transport", "workers"];
const PHASES = ["read", "convert", "send", "visible"];
const state = { dataset: null, runs: new Set(), filters: {}, sort: { key: "rate", desc: true } };

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node[k] = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
};
const fmt = (v, digits = 0) => (v === null || v === undefined || Number.isNaN(v)) ? "–"
  : v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mib = (b) => (b === null || b === undefined) ? null : b / 2 ** 20;

function runLabel(run) {
  return `${run.machine.id} · QuestDB ${run.versions.questdb_server} · ${run.workflow.git_commit.slice(0, 7)} · ${run.label}`;
}

function datasetsOf() {
  const seen = new Map();
  for (const run of RUNS) for (const d of run.datasets) {
    const key = d.name;
    if (!seen.has(key)) seen.set(key, { ...d, runs: 0 });
    seen.get(key).runs += 1;
  }
  return [...seen.values()].sort((a, b) => b.runs - a.runs || b.rows - a.rows);
}

function buildControls() {
  const select = document.getElementById("dataset");
  for (const d of datasetsOf()) {
    select.append(el("option", { value: d.name }, `${d.name} (${fmt(d.rows)} rows, ${d.field_type || "double"}, ${d.runs} run${d.runs > 1 ? "s" : ""})`));
  }
  state.dataset = select.value;
  select.onchange = () => { state.dataset = select.value; buildRuns(); buildFilters(); render(); };
  document.getElementById("published").onchange = render;
  buildRuns();
  buildFilters();
}

function buildRuns() {
  const box = document.getElementById("runs");
  box.querySelectorAll("label").forEach((n) => n.remove());
  state.runs = new Set();
  for (const run of RUNS) {
    if (!run.datasets.some((d) => d.name === state.dataset)) continue;
    state.runs.add(run.id);
    const input = el("input", { type: "checkbox", value: run.id, checked: "" });
    input.onchange = () => { input.checked ? state.runs.add(run.id) : state.runs.delete(run.id); render(); };
    box.append(el("label", {}, input, " ", runLabel(run)));
  }
}

function variantsOfDataset() {
  return RUNS.flatMap((run) => run.variants.filter((v) => v.dataset === state.dataset).map((v) => ({ run, v })));
}

function buildFilters() {
  const box = document.getElementById("filters");
  box.replaceChildren();
  state.filters = {};
  const rows = variantsOfDataset();
  for (const key of FILTERS) {
    const values = [...new Set(rows.map(({ v }) => String(v[key])))].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    state.filters[key] = new Set(values);
    const field = el("fieldset", { "data-filter": key }, el("legend", {}, key));
    for (const value of values) {
      const input = el("input", { type: "checkbox", value, checked: "" });
      input.onchange = () => { input.checked ? state.filters[key].add(value) : state.filters[key].delete(value); render(); };
      field.append(el("label", {}, input, " ", value));
    }
    box.append(field);
  }
  box.style.display = "contents";
}

function selectedRows() {
  const rows = variantsOfDataset()
    .filter(({ run, v }) => state.runs.has(run.id) && FILTERS.every((k) => state.filters[k].has(String(v[k]))))
    .map(({ run, v }) => {
      const busy = PHASES.reduce((s, p) => s + (v.phases_s[p].median || 0), 0);
      return {
        key: `${run.id}|${v.variant}`, runId: run.id, runLabel: runLabel(run), variant: v.variant, method: v.method,
        rate: v.rows_per_s.median, low: v.rows_per_s.min, high: v.rows_per_s.max,
        phases: PHASES.map((p) => [p, busy > 0 ? (v.phases_s[p].median || 0) / busy : 0]),
        client_cpu: v.client_cpu_s_per_1m_rows, server_cpu: v.server_cpu_s_per_1m_rows,
        rss: mib(v.client_rss_bytes), disk: mib(v.table_disk_bytes),
        ceiling: v.ceiling_fraction, validated: v.validated, published: false, contended: v.contended === true,
      };
    });
  const dataset = datasetsOf().find((d) => d.name === state.dataset);
  if (document.getElementById("published").checked) {
    // Beside the same variant of this workflow only: the published figures have no other match.
    const shown = new Set(rows.map((r) => r.variant));
    for (const p of DATA.published) {
      if (!shown.has(p.variant)) continue;
      rows.push({ key: `published|${p.variant}`, runId: null, runLabel: `QuestDB's published ${p.label} · ${p.machine}`, variant: p.variant,
        method: p.method, rate: p.send_rows_per_s, low: null, high: null, phases: [], client_cpu: null, server_cpu: null,
        rss: null, disk: null, ceiling: null, validated: null, published: true, rows: p.rows, datasetRows: dataset && dataset.rows });
    }
  }
  return rows;
}

const COLUMNS = [
  ["runLabel", "run", "text"], ["variant", "variant", "text"], ["rate", "rows/s", "bar"], ["times", "× best", ""],
  ["low", "min – max", ""], ["phases", "phases", "text"], ["client_cpu", "client CPU-s / 1M", ""],
  ["server_cpu", "server CPU-s / 1M", ""], ["rss", "client RSS MiB", ""], ["disk", "disk MiB", ""],
  ["ceiling", "of ceiling", ""], ["validated", "validated", ""],
];

function sortRows(rows) {
  const { key, desc } = state.sort;
  const value = (r) => (key === "times" ? -r.rate : r[key]);
  return rows.sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const order = typeof x === "string" ? x.localeCompare(y) : x - y;
    return desc ? -order : order;
  });
}

function showDetails(runId) {
  const run = RUNS.find((r) => r.id === runId);
  const { variants, ...about } = run;
  document.getElementById("details-text").textContent = JSON.stringify(about, null, 2);
  document.getElementById("details").showModal();
}

function cell(row, best, maxRate) {
  return {
    runLabel: () => row.runId ? el("button", { class: "run", onclick: () => showDetails(row.runId) }, row.runLabel) : row.runLabel,
    variant: () => {
      const parts = [row.variant];
      if (row.method === "ilp_file") parts.push(" ", el("span", { class: "badge ceiling" }, "wire ceiling"));
      if (row.published) parts.push(" ", el("span", { class: "badge published" }, "published"));
      if (row.contended) parts.push(" ", el("span", { class: "badge contended", title: "another QuestDB or job ran on the machine during its repeats" }, "contended"));
      return el("span", {}, ...parts);
    },
    rate: () => el("span", {}, el("span", { class: "rate", style: `width:${(8 * (row.rate || 0) / maxRate).toFixed(2)}em` }), fmt(row.rate)),
    times: () => row.rate ? `×${fmt(best / row.rate, 2)}` : "–",
    low: () => row.low === null ? "–" : `${fmt(row.low)} – ${fmt(row.high)}`,
    phases: () => el("span", { class: "phases", title: row.phases.map(([p, f]) => `${p} ${fmt(100 * f)} %`).join(", ") },
      ...row.phases.map(([p, f]) => el("span", { class: `ph ${p}`, style: `width:${(100 * f).toFixed(1)}%` }))),
    client_cpu: () => fmt(row.client_cpu, 2), server_cpu: () => fmt(row.server_cpu, 2),
    rss: () => fmt(row.rss), disk: () => fmt(row.disk),
    ceiling: () => row.ceiling === null ? "–" : `${fmt(row.ceiling, 2)}×`,
    validated: () => row.validated === null ? "–" : el("span", { class: row.validated ? "yes" : "no" }, row.validated ? "yes" : "NO"),
  };
}

function renderTable(rows) {
  const head = document.querySelector("#results thead");
  head.replaceChildren(el("tr", {}, ...COLUMNS.map(([key, title, kind]) => {
    const sorted = state.sort.key === key;
    const th = el("th", { class: `${kind === "text" ? "text" : ""} ${sorted ? "sorted" : ""} ${sorted && !state.sort.desc ? "asc" : ""}`, "data-key": key }, title);
    th.onclick = () => { state.sort = { key, desc: sorted ? !state.sort.desc : key === "rate" }; render(); };
    return th;
  })));
  const measured = rows.filter((r) => !r.published && r.rate);
  const best = Math.max(...measured.map((r) => r.rate), 0);
  const maxRate = Math.max(...rows.map((r) => r.rate || 0), 1);
  const body = document.querySelector("#results tbody");
  body.replaceChildren(...sortRows(rows).map((row) => {
    const cells = cell(row, best, maxRate);
    return el("tr", { "data-key": row.key, class: row.published ? "published" : "" },
      ...COLUMNS.map(([key, , kind]) => el("td", { class: kind, "data-col": key }, cells[key]())));
  }));
}

let view = null;
async function renderChart(rows) {
  const values = rows.filter((r) => r.rate).map((r) => ({
    run: r.runLabel, variant: r.variant, rate: r.rate, low: r.low ?? r.rate, high: r.high ?? r.rate,
  }));
  // Each run's bar is 9 px: a variant's band grows with the runs shown.
  const spec = { ...DATA.spec, data: { name: "rows", values }, height: { step: 9, for: "offset" } };
  if (view) view.finalize();
  view = (await window.vegaEmbed("#chart", spec, { actions: false, renderer: "svg" })).view;
}

async function render() {
  const rows = selectedRows();
  document.getElementById("shown").textContent = `(${rows.length} rows shown)`;
  renderTable(rows);
  await renderChart(rows);
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

document.getElementById("built").textContent = DATA.built;
document.getElementById("counts").textContent = `${RUNS.length} run${RUNS.length === 1 ? "" : "s"} on ${new Set(RUNS.map((r) => r.machine.id)).size} machine(s)`;
buildControls();
render();
