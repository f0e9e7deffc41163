// The answers block at the top and a section per part of a run (SECTIONS in state.js): each from
// the newest selected run that has it, so that the page carries every answer the runs hold. A
// section's optional `draw(run, part)` embeds its charts once its nodes are in the page.

/** The runs holding a section's part, the selected first (newest first), then the others: for
 * a section with `every` (the servers': versions and settings are runs of their own) the first
 * of each config on each machine (a rerun of a config replaces its answer, not adds one), else
 * the first alone. */
function sectionRuns(section) {
  const found = [];
  const seen = new Set();
  for (const id of new Set([...state.runs, ...RUNS.map((r) => r.id)])) {
    const run = BY_ID.get(id);
    const part = section.part(run);
    const key = `${run.workflow.config_hash}|${run.machine.id}`;
    if (part && !seen.has(key)) found.push({ run, part });
    if (part) seen.add(key);
  }
  return section.every ? found : found.slice(0, 1);
}

/** A link to a section that scrolls to it: the address keeps the selection, not a place. */
function sectionLink(section) {
  const link = el("a", { href: `#${section.id}`, class: "to-section" }, section.title);
  link.onclick = (e) => { e.preventDefault(); document.getElementById(section.id).scrollIntoView(); };
  return link;
}

async function renderSections() {
  const answers = [];
  const drawn = [];
  const boxes = SECTIONS.map((section) => {
    const box = el("section", { id: section.id, class: "experiment" });
    const runs = sectionRuns(section);
    box.hidden = !runs.length;
    if (runs.length) box.append(el("h2", {}, section.title));
    for (const found of runs) {
      if (section.draw) drawn.push(() => section.draw(found.run, found.part));
      const answer = section.answer(found.run, found.part);
      if (answer) {
        answers.push(el("li", { "data-section": section.id }, sectionLink(section), ": ", ...answer,
          el("span", { class: "note" }, ` (${found.run.machine.id}, ${dayOf(found.run)}, ${found.run.label})`)));
      }
      box.append(el("p", { class: "note" }, `From ${runName(found.run)}.`), ...section.render(found.run, found.part));
    }
    return box;
  });
  document.getElementById("sections").replaceChildren(...boxes);
  const list = document.getElementById("answers");
  list.hidden = !answers.length;
  list.replaceChildren(...answers);
  for (const draw of drawn) await draw(); // charts, once their boxes are in the page
}

/** A table from a head row and body rows, each a list of cells (text or nodes). */
function table(head, rows, attrs = {}) {
  return el("div", { class: "scroll" }, el("table", { class: "section-table", ...attrs },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c, i) =>
      c instanceof Node && c.tagName === "TD" ? c : el(i ? "td" : "th", i ? {} : { scope: "row" }, c)))))));
}
