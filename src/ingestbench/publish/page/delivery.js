// Delivery under faults (experiment delivery): per server, each path × fault cell the worst of its
// fault points (exact, duplicates, lost reported / unknown / acknowledged, altered, not measured),
// and the fastest path that never lost a row unreported nor altered one.

/** A cell's verdict class from its text, for its colour. */
function verdictClass(text) {
  if (text.startsWith("exact")) return "v-exact";
  if (text.startsWith("duplicates")) return "v-dup";
  if (text.startsWith("lost") || text.startsWith("altered") || text.startsWith("no result")) return "v-lost";
  return "v-none";
}

/** The paths whose cells lost or altered rows under some fault, with the worst such cell. */
function losing(server) {
  return Object.entries(server.cells).filter(([, byFault]) =>
    Object.values(byFault).some((t) => verdictClass(t) === "v-lost")).map(([path]) => path);
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
          ...server.faults.map((f) => { const t = byFault[f] || ""; return el("td", { class: `verdict ${verdictClass(t)}` }, t); })]),
        { "data-section-table": "delivery" }),
        Object.keys(server.unsupported || {}).length ? el("ul", { class: "note" },
          ...Object.entries(server.unsupported).map(([path, why]) => el("li", {}, `${path} is unsupported: ${why}.`))) : null,
        el("p", { class: "advice" }, server.recommendation),
      ].filter(Boolean))];
  },
});
