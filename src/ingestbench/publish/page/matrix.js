// The answer and the runs × variants matrix: a row per variant, a column per selected run, each
// cell the median rows/s shaded by its ratio to the best of its column (run) or of its row
// (variant), as ClickBench shades its queries. The wire ceiling is a reference, not a way to
// load a dataframe: it is never the best and its cells stay unshaded.

const isCeiling = (v) => v.method === CEILING;
// A method that cannot load the dataset (own data): never ranked; its reason is in the cell's
// tooltip and in a numbered note under the matrix, so a long one does not stretch the columns.
const isUnsupported = (v) => v.status === "unsupported";
const rateOf = (v) => (v && v.rows_per_s.median) || null;

/** The selected runs, the rows of the matrix (variant, its records by run, its best rate) and
 * every column's best, in the order of state.sort. */
function matrix() {
  const runs = state.runs.map((id) => BY_ID.get(id));
  const byVariant = new Map();
  for (const run of runs) for (const v of variantsOf(run)) {
    const key = nameOf(v);
    if (!byVariant.has(key)) byVariant.set(key, { variant: key, method: v.method, cells: new Map() });
    byVariant.get(key).cells.set(run.id, v);
  }
  const rows = [...byVariant.values()];
  for (const row of rows) row.best = Math.max(0, ...[...row.cells.values()].map(rateOf).filter(Boolean));
  const columnBest = new Map(runs.map((run) => [run.id, Math.max(0,
    ...rows.filter((r) => !isCeiling(r)).map((r) => rateOf(r.cells.get(run.id))).filter(Boolean))]));
  const { key, desc } = state.sort;
  const value = (row) => key === "variant" ? row.variant : key === "best" ? row.best : rateOf(row.cells.get(key));
  rows.sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === y) return a.variant.localeCompare(b.variant);
    if (missing(x)) return 1;
    if (missing(y)) return -1;
    const order = typeof x === "string" ? x.localeCompare(y) : x - y;
    return desc ? -order : order;
  });
  rows.forEach((row, i) => { row.order = i; });
  return { runs, rows, columnBest };
}

/** How many times slower than the best (1 = the best; ClickBench's "× best"). */
function timesBest(rate, row, run, m) {
  const best = state.shade === "row" ? Math.max(0, ...m.runs.map((r) => rateOf(row.cells.get(r.id)) || 0))
    : m.columnBest.get(run.id);
  return rate && best ? best / rate : null;
}

// Green at the best, through yellow, to red at 8 times slower and beyond (log scale).
function shade(times) {
  const t = Math.min(1, Math.log2(Math.max(1, times)) / 3);
  return `hsl(${(120 * (1 - t)).toFixed(0)}, 60%, ${(86 - 4 * t).toFixed(0)}%)`;
}

function spreadOf(v) {
  const { median, min, max } = v.rows_per_s;
  return median && !missing(min) && !missing(max) ? (max - min) / 2 / median : null;
}

function cellTitle(v) {
  const r = v.rows_per_s;
  return [`${v.variant}`, `rows/s median ${fmt(r.median)}, min ${fmt(r.min)}, max ${fmt(r.max)} over ${v.repeats} repeats`,
    `of the wire ceiling: ${pct(v.ceiling_fraction)}`, `client CPU-s per 1M rows ${fmt(v.client_cpu_s_per_1m_rows, 2)}, server ${fmt(v.server_cpu_s_per_1m_rows, 2)}`,
    `table on disk ${fmt(mib(v.table_disk_bytes))} MiB`, `validated: ${v.validated === null ? "unknown" : v.validated ? "yes" : "NO"}`].join("\n");
}

/** Each unsupported cell's reason, numbered once per distinct reason, with its variants. */
function reasonNotes(m) {
  const notes = new Map();
  for (const row of m.rows) for (const run of m.runs) {
    const v = row.cells.get(run.id);
    if (!v || !isUnsupported(v)) continue;
    if (!notes.has(v.reason)) notes.set(v.reason, { number: notes.size + 1, variants: new Set() });
    notes.get(v.reason).variants.add(v.variant);
  }
  return notes;
}

function matrixCell(row, run, m) {
  const v = row.cells.get(run.id);
  if (!v) return el("td", { class: "cell empty", "data-run": run.id }, "–");
  if (isUnsupported(v)) {
    const number = m.notes.get(v.reason).number;
    return el("td", { class: "cell unsupported", "data-run": run.id, title: `${v.variant} cannot load this data: ${v.reason}` },
      el("span", { class: "badge unsupported" }, "unsupported"), el("sup", { class: "note-ref" }, String(number)));
  }
  const rate = rateOf(v);
  const times = isCeiling(v) ? null : timesBest(rate, row, run, m);
  const spread = spreadOf(v);
  return el("td", { class: `cell${isCeiling(v) ? " ceiling" : ""}`, "data-run": run.id, title: cellTitle(v),
    style: times ? `background:${shade(times)}` : null },
  el("span", { class: "num" }, fmt(rate)),
  spread === null ? null : el("span", { class: "spread", title: "half the min–max range of the repeats" }, `±${fmt(100 * spread)}%`),
  el("br"),
  el("span", { class: "times" }, isCeiling(v) ? "ceiling" : times ? `×${fmt(times, 2)}` : "–"),
  el("span", { class: "ceil" }, ` · ${pct(v.ceiling_fraction)}`),
  v.validated === false ? el("span", { class: "no", title: "its rows did not match the source" }, " not validated") : null,
  v.contended === true ? el("span", { class: "badge contended", title: "another QuestDB or job ran on the machine during its repeats" }, "contended") : null);
}

function sortHeader(key, ...children) {
  const sorted = state.sort.key === key;
  const th = el("th", { class: `sortable${sorted ? (state.sort.desc ? " desc" : " asc") : ""}`, "data-sort": key, tabindex: "0",
    "aria-sort": sorted ? (state.sort.desc ? "descending" : "ascending") : "none" }, ...children);
  th.onclick = () => {
    state.sort = sorted ? { key, desc: !state.sort.desc } : { key, desc: key !== "variant" };
    render();
  };
  th.onkeydown = (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); th.onclick(); } };
  return th;
}

function runHeader(run) {
  const details = el("button", { class: "run", title: "machine, versions, settings and config of this run" }, "details");
  details.onclick = (e) => { e.stopPropagation(); showDetails(run.id); };
  return sortHeader(run.id, swatch(run.id), el("span", { class: "machine" }, run.machine.id), el("br"),
    `QuestDB ${questdbOf(run)}`, el("br"), `${commitOf(run)} · ${dayOf(run)}`, el("br"),
    el("b", {}, run.label), " ", details);
}

/** The row's rates as bars, one per run in its swatch, on one scale for the whole matrix, each
 * with its min–max range as a line: the matrix is its own chart. */
function barsCell(row, m, top) {
  const height = Math.max(3, Math.min(9, Math.floor(26 / m.runs.length)));
  const share = (x) => `${(100 * Math.max(0, x || 0) / top).toFixed(2)}%`;
  return el("td", { class: "bars" }, ...m.runs.map((run) => {
    const v = row.cells.get(run.id);
    const r = v ? v.rows_per_s : {};
    return el("div", { class: `track${v && isCeiling(v) ? " ceiling" : ""}`, style: `height:${height}px` },
      v ? el("span", { class: "hbar", style: `width:${share(r.median)};background:${COLOR.get(run.id)}` }) : null,
      v && !missing(r.min) && !missing(r.max) ? el("span", { class: "range", style: `left:${share(r.min)};width:${share(r.max - r.min)}` }) : null);
  }));
}

function renderMatrix(m) {
  m.notes = reasonNotes(m);
  const published = new Map(DATA.published.map((p) => [p.variant, p]));
  const top = Math.max(1, ...m.rows.flatMap((row) => [...row.cells.values()].map((v) => v.rows_per_s.max || rateOf(v) || 0)));
  const head = el("tr", {}, sortHeader("variant", "variant"), ...m.runs.map(runHeader),
    state.published ? el("th", { class: "published" }, "QuestDB's published", el("br"), "send rows/s, their machine") : null,
    el("th", { class: "bars" }, `rows/s, 0 to ${fmt(top)}: a bar per run, its min–max as a line`));
  const body = m.rows.map((row) => el("tr", { "data-variant": row.variant },
    el("th", { class: "variant", scope: "row" }, row.variant, isCeiling(row) ? el("span", { class: "badge ceiling" }, "wire ceiling") : null),
    ...m.runs.map((run) => matrixCell(row, run, m)),
    state.published ? el("td", { class: "cell published" }, published.has(row.variant) ? fmt(published.get(row.variant).send_rows_per_s) : "") : null,
    barsCell(row, m, top)));
  document.getElementById("matrix").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  const notes = document.getElementById("matrix-notes");
  notes.hidden = !m.notes.size;
  notes.replaceChildren(...[...m.notes].map(([reason, note]) =>
    el("li", { "data-note": note.number }, `${[...note.variants].join(", ")} cannot load this data: ${reason}`)));
}

/** One sentence first: the newest selected run's fastest variants, against the best and the
 * wire ceiling. */
function renderAnswer(m) {
  const run = m.runs[0];
  const leading = m.rows.filter((r) => !isCeiling(r) && rateOf(r.cells.get(run.id)))
    .sort((a, b) => rateOf(b.cells.get(run.id)) - rateOf(a.cells.get(run.id))).slice(0, 3);
  const ceiling = m.rows.filter((r) => isCeiling(r) && r.cells.has(run.id))
    .map((r) => r.cells.get(run.id)).sort((a, b) => rateOf(b) - rateOf(a))[0];
  const parts = [swatch(run.id), " ", el("b", {}, runName(run)), ": "];
  if (!leading.length) parts.push("no variant passes the filters.");
  leading.forEach((row, i) => {
    const v = row.cells.get(run.id);
    parts.push(i ? (i === leading.length - 1 ? " and " : ", ") : "fastest ", el("b", { class: "lead" }, v.variant),
      ` ${fmt(rateOf(v))} rows/s (${i ? `×${fmt(m.columnBest.get(run.id) / rateOf(v), 2)} best, ` : ""}${pct(v.ceiling_fraction)} of the wire ceiling)`);
  });
  if (ceiling) parts.push(`; the wire ceiling is ${fmt(rateOf(ceiling))} rows/s.`);
  document.getElementById("answer").replaceChildren(...parts);
  renderProfile(run);
}

/** The dataset's profile in the run the answer names, and the recommendation drawn from it. */
function renderProfile(run) {
  const profile = (run.datasets.find((d) => d.name === state.dataset) || {}).profile;
  const box = document.getElementById("profile");
  box.hidden = !profile;
  box.textContent = profile ? profile.text : "";
}

function renderMatrixLegend(m) {
  const scale = [1, 1.5, 2, 4, 8].map((t) => el("span", { class: "scale", style: `background:${shade(t)}` }, `×${t}`));
  document.getElementById("matrix-legend").replaceChildren(
    el("span", {}, `${m.rows.length} variants × ${m.runs.length} run${m.runs.length === 1 ? "" : "s"}; a cell: rows/s ±half its min–max, × the ${state.shade === "row" ? "variant's" : "run's"} best, % of the wire ceiling `),
    ...scale);
}
