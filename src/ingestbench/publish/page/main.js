// The controls, one render for every change of the selection (which also writes the URL), and
// the start: the selection from the URL, else the dataset's opening run (openingRun).

function buildControls() {
  const select = document.getElementById("dataset");
  select.replaceChildren(...datasetsOf(RUNS).map((d) => el("option", { value: d.name }, datasetName(d))));
  select.onchange = () => {
    state.dataset = select.value;
    state.runs = state.runs.filter((id) => holds(BY_ID.get(id), state.dataset));
    if (!state.runs.length) state.runs = [openingRun()];
    state.filters = {};
    render();
  };
  for (const input of document.querySelectorAll("input[name='view']")) {
    input.onchange = () => { state.view = input.value; render(); };
  }
  const shade = document.getElementById("shade");
  shade.onchange = () => { state.shade = shade.value; render(); };
  const published = document.getElementById("published");
  published.onchange = () => { state.published = published.checked; render(); };
  buildHistoryControls();
}

/** The runs holding the dataset, newest first, each checkbox with its swatch. */
function renderRuns() {
  const box = document.getElementById("runs-list");
  box.replaceChildren(...runsOfDataset().map((run) => {
    const input = el("input", { type: "checkbox", value: run.id });
    input.checked = state.runs.includes(run.id);
    input.onchange = () => {
      const chosen = new Set(state.runs);
      if (input.checked) chosen.add(run.id); else chosen.delete(run.id);
      if (!chosen.size) { input.checked = true; return; } // one run at least
      state.runs = RUNS.map((r) => r.id).filter((id) => chosen.has(id));
      render();
    };
    return el("label", { title: run.id }, input, swatch(run.id), runName(run));
  }));
}

/** One fieldset per variant property (library, method, ...), its values as checkboxes. */
function renderFilters() {
  const records = runsOfDataset().flatMap((run) => run.variants.filter((v) => v.dataset === state.dataset));
  const box = document.getElementById("filters");
  box.replaceChildren(...FILTERS.map((key) => {
    const values = [...new Set(records.map((v) => String(v[key])))].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    return el("fieldset", { "data-filter": key }, el("legend", {}, key), ...values.map((value) => {
      const input = el("input", { type: "checkbox", value });
      input.checked = !state.filters[key] || state.filters[key].has(value);
      input.onchange = () => {
        const kept = new Set(state.filters[key] || values);
        if (input.checked) kept.add(value); else kept.delete(value);
        if (kept.size === values.length) delete state.filters[key]; else state.filters[key] = kept;
        render();
      };
      return el("label", {}, input, ` ${value}`);
    }));
  }));
  const narrowed = FILTERS.filter((k) => state.filters[k]).length;
  document.getElementById("filter-count").textContent = narrowed ? ` (${narrowed} narrowed)` : "";
}

function showDetails(runId) {
  const { variants, ...about } = BY_ID.get(runId);
  document.getElementById("details-text").textContent = JSON.stringify(about, null, 2);
  document.getElementById("details").showModal();
}

let rendering = Promise.resolve();
function render() {
  rendering = rendering.then(draw, draw);
  return rendering;
}

async function draw() {
  // A sort by a run no longer ticked falls back to the variants' best.
  if (!["best", "variant", ...state.runs].includes(state.sort.key)) state.sort = { key: "best", desc: true };
  toUrl();
  document.getElementById("dataset").value = state.dataset;
  for (const input of document.querySelectorAll("input[name='view']")) input.checked = input.value === state.view;
  document.getElementById("shade").value = state.shade;
  document.getElementById("published").checked = state.published;
  document.getElementById("runs-view").hidden = state.view !== "runs";
  document.getElementById("history-view").hidden = state.view !== "history";
  renderFilters();
  if (state.view === "runs") {
    renderRuns();
    const m = matrix();
    renderAnswer(m);
    renderMatrixLegend(m);
    renderMatrix(m);
    await renderCharts(m);
    await renderReaders();
    await renderSections();
  } else {
    await renderHistory();
  }
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

document.getElementById("built").textContent = DATA.built;
document.getElementById("counts").textContent = `${RUNS.length} run${RUNS.length === 1 ? "" : "s"} on ${new Set(RUNS.map((r) => r.machine.id)).size} machine(s)`;
fromUrl();
buildControls();
window.addEventListener("hashchange", () => { fromUrl(); render(); });
render();
