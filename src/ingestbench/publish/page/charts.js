// The charts (Vega-Lite specs from ingestbench.publish.specs, fed the selection): what each
// variant costs per run (client and server CPU per 1M rows, the table on disk); its rates are the
// matrix's own bars. Their legend is drawn above them from the runs' swatches, as in the checkboxes.

const views = new Map();

async function embed(id, spec, values) {
  if (views.has(id)) views.get(id).finalize();
  const full = { ...spec, datasets: { ...(spec.datasets || {}), rows: values } };
  views.set(id, (await window.vegaEmbed(`#${id}`, full, { actions: false, renderer: "svg" })).view);
}

function chartRows(m) {
  const runOrder = new Map(m.runs.map((run, i) => [run.id, i]));
  return m.rows.flatMap((row) => m.runs.filter((run) => row.cells.has(run.id)).map((run) => {
    const v = row.cells.get(run.id);
    const r = v.rows_per_s;
    return {
      variant: row.variant, order: row.order, run: runName(run), run_order: runOrder.get(run.id), color: COLOR.get(run.id),
      rate: r.median, low: r.min ?? r.median, high: r.max ?? r.median,
      client_cpu: v.client_cpu_s_per_1m_rows, server_cpu: v.server_cpu_s_per_1m_rows, disk: mib(v.table_disk_bytes),
    };
  })).filter((r) => r.rate);
}

function legend(runs) {
  return runs.map((run) => el("span", { class: "key" }, swatch(run.id), runName(run)));
}

async function renderCharts(m) {
  const values = chartRows(m);
  document.getElementById("costs-legend").replaceChildren(...legend(m.runs));
  await embed("costs", DATA.specs.costs, values);
}
