// The answers block at the top and a section per part of a run (SECTIONS in state.js): each from
// the newest selected run that has it, so that the page carries every answer the runs hold. A
// section's optional `draw(run, part)` embeds its charts once its nodes are in the page.

/** The newest selected run holding a section's part, else the newest run of all holding it. */
function sectionRun(section) {
  for (const id of [...state.runs, ...RUNS.map((r) => r.id)]) {
    const run = BY_ID.get(id);
    const part = section.part(run);
    if (part) return { run, part };
  }
  return null;
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
    const found = sectionRun(section);
    const box = el("section", { id: section.id, class: "experiment" });
    if (!found) { box.hidden = true; return box; }
    if (section.draw) drawn.push(() => section.draw(found.run, found.part));
    const answer = section.answer(found.run, found.part);
    if (answer) {
      answers.push(el("li", { "data-section": section.id }, sectionLink(section), ": ", ...answer,
        el("span", { class: "note" }, ` (${found.run.machine.id}, ${dayOf(found.run)})`)));
    }
    box.append(el("h2", {}, section.title), el("p", { class: "note" }, `From ${runName(found.run)}.`),
      ...section.render(found.run, found.part));
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
