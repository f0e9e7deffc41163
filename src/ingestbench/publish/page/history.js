// Changes over time: for one machine and config, each variant's rate across its archived runs in
// commit order. The series and every step's verdict come from ingestbench.publish.history (the
// same rule as `ingestbench history` and `compare`: a step counts only when the min–max ranges of
// the two runs' repeats do not overlap), so the page marks what the command line flags.

const FASTER = "faster", SLOWER = "slower";
const groupKey = (g) => `${g.machine}|${g.config_hash}`;
const GROUPS = DATA.history;

function groupName(g) {
  return `${g.machine} · config ${g.label} (${g.config_hash.slice(0, 8)}) · ${g.runs.length} runs`;
}

/** The chosen group: the URL's, else the newest selected run's, else the one with most runs. */
function currentGroup() {
  const first = BY_ID.get(state.runs[0]);
  return GROUPS.find((g) => groupKey(g) === state.group)
    || GROUPS.find((g) => first && g.runs.includes(first.id))
    || [...GROUPS].sort((a, b) => b.runs.length - a.runs.length)[0];
}

function buildHistoryControls() {
  const select = document.getElementById("group");
  select.replaceChildren(...GROUPS.map((g) => el("option", { value: groupKey(g) }, groupName(g))));
  select.onchange = () => { state.group = select.value; render(); };
}

function stepMark(step) {
  return step === SLOWER ? "▼" : step === FASTER ? "▲" : "";
}

function renderChanges(group, series) {
  const changes = series.flatMap((s) => s.points.map((p, i) => ({ s, p, before: s.points[i - 1] })))
    .filter(({ p }) => p.step === FASTER || p.step === SLOWER)
    .map((c) => ({ ...c, ratio: c.p.median / c.before.median }))
    .sort((a, b) => Math.abs(Math.log(a.ratio)) < Math.abs(Math.log(b.ratio)) ? 1 : -1);
  const box = document.getElementById("changes");
  if (!changes.length) {
    box.replaceChildren(el("p", {}, "No step beyond the noise: every run's min–max range overlaps the run before it."));
    return;
  }
  box.replaceChildren(el("p", {}, `${changes.length} step${changes.length === 1 ? "" : "s"} beyond the noise (the two runs' min–max ranges do not overlap), largest first:`),
    el("ul", {}, ...changes.map(({ s, p, before, ratio }) => el("li", { class: `change ${p.step}`, "data-variant": s.variant, "data-run": p.run },
      el("span", { class: "mark" }, `${stepMark(p.step)} ${p.step} ×${fmt(ratio, 2)}`), " ", el("b", {}, s.variant),
      ` at ${p.commit} (${dayOf(BY_ID.get(p.run))}) against ${before.commit}: ${fmt(before.median)} → ${fmt(p.median)} rows/s`))));
}

function renderHistoryTable(group, series) {
  const runs = group.runs.map((id) => BY_ID.get(id));
  const head = el("tr", {}, el("th", {}, "variant"), ...runs.map((run, i) => el("th", { "data-run": run.id },
    `#${i + 1} ${commitOf(run)}`, el("br"), dayOf(run), el("br"), `QuestDB ${questdbOf(run)}`)));
  const body = series.map((s) => {
    const points = new Map(s.points.map((p, i) => [p.run, { p, before: s.points[i - 1] }]));
    return el("tr", { "data-variant": s.variant }, el("th", { class: "variant", scope: "row" }, s.variant),
      ...runs.map((run) => {
        if (!points.has(run.id)) return el("td", { class: "cell empty", "data-run": run.id }, "–");
        const { p, before } = points.get(run.id);
        const moved = p.step === FASTER || p.step === SLOWER;
        return el("td", { class: `cell${moved ? ` ${p.step}` : ""}`, "data-run": run.id, "data-step": p.step || "first",
          title: `min ${fmt(p.low)}, max ${fmt(p.high)}${p.step ? `; against the run before: ${p.step}` : ""}` },
        fmt(p.median), moved ? el("span", { class: "mark" }, ` ${stepMark(p.step)}×${fmt(p.median / before.median, 2)}`) : null);
      }));
  });
  document.getElementById("history").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
}

async function renderHistory() {
  const group = currentGroup();
  const box = document.getElementById("history-body");
  if (!group) {
    box.hidden = true;
    document.getElementById("no-history").hidden = false;
    return;
  }
  box.hidden = false;
  document.getElementById("no-history").hidden = true;
  document.getElementById("group").value = groupKey(group);
  const recordOf = (s) => BY_ID.get(s.points.at(-1).run).variants.find((v) => v.variant === s.variant && v.dataset === s.dataset);
  const series = group.series.filter((s) => s.dataset === state.dataset && passes(recordOf(s)))
    .sort((a, b) => b.points.at(-1).median - a.points.at(-1).median);
  document.getElementById("history-dataset").textContent = series.length ? ""
    : `This machine and config have no history for ${state.dataset}; pick another dataset or config.`;
  renderChanges(group, series);
  renderHistoryTable(group, series);
  const position = new Map(group.runs.map((id, i) => [id, i]));
  const values = series.flatMap((s) => s.points.map((p) => ({
    variant: s.variant, run: runName(BY_ID.get(p.run)), position: position.get(p.run),
    column: `#${position.get(p.run) + 1} ${p.commit}`, median: p.median, step: p.step || "first run",
  })));
  await embed("history-chart", DATA.specs.history, values);
}
