// Servers side by side (a run of several QuestDB versions or settings sets): each path's rows/s
// on each server as a ratio against the newest version's defaults, with the min–max of its
// repeats, shaded as the matrix is; and the settings that beat the defaults beyond the noise.

function ratioCell(cell) {
  if (!cell || cell.status === "missing") return el("td", { class: "empty" }, "–");
  if (cell.status !== "ok") return el("td", { class: "unsupported" }, cell.status);
  const slower = cell.ratio < 1 ? 1 / cell.ratio : 1;
  return el("td", { style: `background:${shade(slower)}`, title: `min–max of the repeats over the baseline's median` },
    el("b", {}, `${fmt(cell.ratio, 2)}×`), el("span", { class: "spread" }, ` (${fmt(cell.low, 2)}–${fmt(cell.high, 2)})`));
}

function serversTable(data, ds, servers) {
  const by = new Map(ds.cells.map((c) => [`${c.variant}|${c.server}`, c]));
  return table(["path", ...servers.map((s) => `QuestDB ${s}`)],
    ds.variants.map((v) => [v, ...servers.map((s) => ratioCell(by.get(`${v}|${s}`)))]));
}

/** The selected dataset's comparison, else every dataset's. */
const datasetsShown = (part) => {
  const chosen = part.datasets.filter((d) => d.dataset === state.dataset);
  return chosen.length ? chosen : part.datasets;
};

SECTIONS.push({
  id: "servers-section",
  title: "Servers side by side",
  every: true, // each run of the axis (versions, settings) has a comparison of its own
  part: (run) => run.servers,
  answer(run, part) {
    // what held in every run of its config on its machine, else this run's own sentence
    return [part.held || datasetsShown(part)[0].verdict];
  },
  render(run, part) {
    const shown = datasetsShown(part);
    return shown.flatMap((ds) => [
      shown.length > 1 ? el("h3", {}, ds.dataset) : null,
      part.versions.length > 1 ? el("p", {}, "Versions × paths, rows/s against ", el("b", {}, part.baseline), ":") : null,
      part.versions.length > 1 ? serversTable(part, ds, part.versions) : null,
      part.settings.length ? el("p", {}, "Settings × paths:") : null,
      part.settings.length ? serversTable(part, ds, [part.baseline, ...part.settings]) : null,
      // one run's recommendation only where no earlier run of its config says what held
      ds.recommendation && !part.held ? el("p", { class: "advice" }, ds.recommendation) : null,
    ].filter(Boolean)).concat(part.held ? [el("p", { class: "advice" }, part.held)] : []);
  },
});
