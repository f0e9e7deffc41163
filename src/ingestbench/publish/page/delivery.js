// Delivery under faults (experiment delivery): per server, each path × fault cell the worst of its
// fault points (exact, duplicates, lost reported / unknown / acknowledged, altered, not measured),
// and the fastest path that never lost a row unreported nor altered one. Each cell's text, class
// and cases come from the archive (delivery.matrix): nothing is judged again here.

/** The paths with a cell that lost or altered rows under some fault. */
function losing(server) {
  return Object.entries(server.cells).filter(([, byFault]) =>
    Object.values(byFault).some((cell) => cell.class === "lost")).map(([path]) => path);
}

/** A cell, its cases (fault time and verdict) on hover. */
function verdictCell(cell) {
  if (!cell) return el("td", { class: "verdict" }, "");
  const title = cell.cases.map((c) => `${missing(c.at_s) ? "no fault" : `fault at ${fmt(c.at_s, 2)} s`}: ${c.verdict}`).join("\n");
  return el("td", { class: `verdict v-${cell.class.replace(" ", "-")}`, title: title || null }, cell.text);
}

SECTIONS.push({
  id: "delivery-section",
  title: "Delivery under faults: what each path loses or duplicates",
  part: (run) => run.experiments && run.experiments.delivery,
  answer(run, part) {
    const server = part.servers[part.servers.length - 1];
    const lost = losing(server);
    return [lost.length ? `${lost.join(", ")} lost or altered rows under a fault (QuestDB ${server.server}). ` : `no path lost a row (QuestDB ${server.server}). `,
      server.recommendation];
  },
  render(run, part) {
    return [el("p", { class: "note" }, "Each cell is the worst of its fault points, from a row-for-row comparison of the table with its source. Lost rows are acknowledged (the server said it had them), unknown (the connection broke before an answer) or reported (the error reached the caller); (silent): no error reached the caller at all."),
      ...part.servers.flatMap((server) => [
        part.servers.length > 1 ? el("h3", {}, `QuestDB ${server.server}`) : null,
        table(["path", ...server.faults], Object.entries(server.cells).map(([path, byFault]) => [path,
          ...server.faults.map((f) => verdictCell(byFault[f]))]),
        { "data-section-table": "delivery" }),
        Object.keys(server.unsupported || {}).length ? el("ul", { class: "note" },
          ...Object.entries(server.unsupported).map(([path, why]) => el("li", {}, `${path} is unsupported: ${why}.`))) : null,
        el("p", { class: "advice" }, server.recommendation),
      ].filter(Boolean))];
  },
});
