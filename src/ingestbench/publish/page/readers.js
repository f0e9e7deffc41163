// Readers beside ingestion (a run whose config had `readers`): rows accepted and visible over
// time of its leading variants, one panel per reader count, and per variant the rate, slowdown,
// visibility lag and query latency with each reader count. Hidden when no selected run has them.

/** The newest selected run with series of the dataset, and those series. */
function readersRun() {
  for (const id of state.runs) {
    const run = BY_ID.get(id);
    const series = (run.series || []).filter((s) => s.dataset === state.dataset);
    if (series.length) return { run, series };
  }
  return null;
}

function overTimeRows(series) {
  return series.flatMap((s) => s.t_s.flatMap((t, i) => [
    { variant: s.variant, readers: `${s.readers} readers`, t, rows: s.rows_accepted[i], line: "accepted" },
    { variant: s.variant, readers: `${s.readers} readers`, t, rows: s.rows_visible[i], line: "visible" },
  ]));
}

function pinningText(run) {
  const p = run.pinning;
  if (!p) return "Cores: not pinned (the server, the client and the readers share every core).";
  const part = (k) => p[k] ? `${k} on core${p[k].length > 1 ? "s" : ""} ${p[k].join(", ")}` : null;
  return `Cores pinned: ${["server", "client", "readers"].map(part).filter(Boolean).join("; ")}.`;
}

function readersTable(run) {
  const variants = run.variants.filter((v) => v.dataset === state.dataset && v.readers);
  const counts = [...new Set(variants.flatMap((v) => v.readers.by_count.map((c) => c.readers)))].sort((a, b) => a - b);
  const head = el("tr", {}, el("th", {}, "variant"), el("th", {}, "plain rows/s"),
    ...counts.map((n) => el("th", {}, `${n} readers: rows/s (slowdown)`)),
    el("th", {}, "lag p50 / p99 s (basis)"), el("th", {}, "query p50 / p99 ms, ingesting → idle"), el("th", {}, "errors"));
  const body = variants.sort((a, b) => (b.rows_per_s.median || 0) - (a.rows_per_s.median || 0)).map((v) => {
    const by = new Map(v.readers.by_count.map((c) => [c.readers, c]));
    const top = by.get(counts[counts.length - 1]) || {};
    const q = top.query_ms || {}, idle = top.query_ms_idle || {};
    return el("tr", {}, el("td", {}, v.variant), el("td", {}, fmt(v.rows_per_s.median)),
      ...counts.map((n) => { const c = by.get(n) || {}; return el("td", {}, `${fmt(c.rows_per_s)} (${fmt(c.slowdown, 2)}×)`); }),
      el("td", {}, `${fmt(top.lag_s?.p50, 2)} / ${fmt(top.lag_s?.p99, 2)} (${v.readers.lag_basis})`),
      el("td", {}, `${fmt(q.p50, 1)} / ${fmt(q.p99, 1)} → ${fmt(idle.p50, 1)} / ${fmt(idle.p99, 1)}`),
      el("td", {}, fmt(top.errors)));
  });
  return [head, ...body];
}

async function renderReaders() {
  const found = readersRun();
  const section = document.getElementById("readers-section");
  section.hidden = !found;
  if (!found) return;
  document.getElementById("readers-note").textContent =
    `${runName(found.run)}. Solid: rows accepted (visible plus waiting in the WAL); dashed: rows visible. ${pinningText(found.run)}`;
  await embed("over-time", DATA.specs.throughput_over_time, overTimeRows(found.series));
  document.getElementById("readers-table").replaceChildren(...readersTable(found.run));
}
