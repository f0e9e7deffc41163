// Paced ingestion (experiment paced): per server and dataset, each path and flush mode's unpaced
// maximum, its highest rate sustained the whole way up (every lower rate held in every repeat)
// with the p99 there, and the recommendation.

const latencyText = (s, resolution) => missing(s) ? "–" : s < resolution ? `< ${resolution} s` : `${fmt(s, 2)} s`;

/** Each server and dataset's paths, in the archive's order. */
function pacedGroups(part) {
  const groups = new Map();
  for (const p of part.paths) {
    const key = `${p.server}|${p.dataset}`;
    if (!groups.has(key)) groups.set(key, { server: p.server, dataset: p.dataset, paths: [] });
    groups.get(key).paths.push(p);
  }
  return [...groups.values()];
}

const pacedOf = (group, s) => s.server === group.server && s.dataset === group.dataset;

/** The chart's records: per path and flush, rate and percentile, the worst of the repeats. */
function pacedChartRows(part, group) {
  const worst = new Map();
  for (const s of part.steps.filter((s) => pacedOf(group, s))) {
    const path = group.paths.find((p) => p.path === s.path && p.flush === s.flush);
    for (const [percentile, latency] of [["p50", s.latency_p50_s], ["p99", s.latency_p99_s]]) {
      if (missing(latency) || missing(s.offered_rows_per_s)) continue;
      const key = `${s.path}|${s.flush}|${s.offered_rows_per_s}|${percentile}`;
      if (worst.has(key) && worst.get(key).latency >= latency) continue;
      worst.set(key, { line: `${s.path} · ${s.flush}`, rate: s.offered_rows_per_s, latency, percentile,
        bound: path ? path.paced_latency_bound_s : null,
        sustained: Boolean(path && path.paced_sustained_rows_per_s === s.offered_rows_per_s) });
    }
  }
  return [...worst.values()];
}

function stepTable(part, group) {
  const steps = part.steps.filter((s) => pacedOf(group, s));
  return el("details", {}, el("summary", {}, `Every step (${steps.length})`),
    table(["path", "flush", "repeat", "offered rows/s", "visible rows/s", "p50", "p99", "status"],
      steps.map((s) => [s.path, s.flush, fmt(s.repeat), fmt(s.offered_rows_per_s), fmt(s.visible_rows_per_s),
        latencyText(s.latency_p50_s, s.resolution_s), latencyText(s.latency_p99_s, s.resolution_s), s.status || "–"])));
}

SECTIONS.push({
  id: "paced-section",
  title: "Streaming: the rate each path sustains",
  part: (run) => run.experiments && run.experiments.paced,
  answer(run, part) {
    const advice = part.recommendations.find((r) => r.dataset === state.dataset) || part.recommendations[0];
    return advice ? [advice.text] : null;
  },
  render(run, part) {
    return [el("p", { class: "note" }, "Arrivals of a few rows on a fixed schedule; latency counts from when an arrival was due to when a query reads it, in steady state. A rate is sustained when it and every lower rate passed in every repeat. The chart: p99 solid, p50 dashed, the worst of the repeats; the bound dashed grey; each sustained rate a diamond."),
      ...pacedGroups(part).flatMap((group, i) => {
        const advice = part.recommendations.find((r) => r.server === group.server && r.dataset === group.dataset);
        const bound = group.paths[0].paced_latency_bound_s;
        return [el("h3", {}, `${group.dataset} on QuestDB ${group.server}`),
          el("div", { id: `paced-chart-${i}`, class: "chart" }),
          table(["path", "flush", "unpaced rows/s (visible)", `highest sustained rows/s (p99 ≤ ${bound} s)`, "worst p99 there (spread)", "repeats", "validated"],
            group.paths.map((p) => [p.path, p.flush, fmt(p.paced_unpaced_rows_per_s),
              missing(p.paced_sustained_rows_per_s) ? "none of its rates" : fmt(p.paced_sustained_rows_per_s),
              latencyText(p.paced_p99_s, p.paced_resolution_s) + (missing(p.paced_p99_spread_s) ? "" : ` (± ${fmt(p.paced_p99_spread_s / 2, 2)} s)`),
              String(p.paced_repeats), p.validated ? "yes" : el("td", { class: "no" }, "NO")]), { "data-section-table": "paced" }),
          (part.steps || []).length ? stepTable(part, group) : null,
          advice ? el("p", { class: "advice" }, `At your rate: ${advice.text}`) : null].filter(Boolean);
      })];
  },
  async draw(run, part) {
    const groups = pacedGroups(part);
    for (let i = 0; i < groups.length; i++) {
      const rows = pacedChartRows(part, groups[i]);
      if (rows.length) await embed(`paced-chart-${i}`, DATA.specs.paced, rows);
    }
  },
});
