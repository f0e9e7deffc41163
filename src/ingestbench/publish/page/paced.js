// Paced ingestion (experiment paced): per server and dataset, each path and flush mode's unpaced
// maximum, its highest rate sustained the whole way up (every lower rate held in every repeat)
// with the p99 there, and the recommendation.

const latencyText = (s, resolution) => missing(s) ? "–" : s < resolution ? `< ${resolution} s` : `${fmt(s, 2)} s`;

SECTIONS.push({
  id: "paced-section",
  title: "Streaming: the rate each path sustains",
  part: (run) => run.experiments && run.experiments.paced,
  answer(run, part) {
    const advice = part.recommendations.find((r) => r.dataset === state.dataset) || part.recommendations[0];
    return advice ? [advice.text] : null;
  },
  render(run, part) {
    const groups = new Map();
    for (const p of part.paths) {
      const key = `${p.server}|${p.dataset}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(p);
    }
    return [el("p", { class: "note" }, "Arrivals of a few rows on a fixed schedule; latency counts from when an arrival was due to when a query reads it, in steady state. A rate is sustained when it and every lower rate passed in every repeat."),
      ...[...groups].flatMap(([key, paths]) => {
        const [server, dataset] = key.split("|");
        const advice = part.recommendations.find((r) => r.server === server && r.dataset === dataset);
        const bound = paths[0].paced_latency_bound_s;
        return [el("h3", {}, `${dataset} on QuestDB ${server}`),
          table(["path", "flush", "unpaced rows/s (visible)", `highest sustained rows/s (p99 ≤ ${bound} s)`, "worst p99 there (spread)", "repeats", "validated"],
            paths.map((p) => [p.path, p.flush, fmt(p.paced_unpaced_rows_per_s),
              missing(p.paced_sustained_rows_per_s) ? "none of its rates" : fmt(p.paced_sustained_rows_per_s),
              latencyText(p.paced_p99_s, p.paced_resolution_s) + (missing(p.paced_p99_spread_s) ? "" : ` (± ${fmt(p.paced_p99_spread_s / 2, 2)} s)`),
              String(p.paced_repeats), p.validated ? "yes" : el("td", { class: "no" }, "NO")]), { "data-section-table": "paced" }),
          advice ? el("p", { class: "advice" }, `At your rate: ${advice.text}`) : null].filter(Boolean);
      })];
  },
});
