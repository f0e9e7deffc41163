// The results page: the archived runs (inlined as JSON), the selection and its URL, and helpers.
// Every string from the data reaches the page as text (createTextNode, textContent), never as
// markup, whatever an archive document holds.
const DATA = JSON.parse(document.getElementById("data").textContent);
// Newest first: the newest run gets the first swatch and the first column.
const RUNS = [...DATA.runs].sort((a, b) => b.date_utc.localeCompare(a.date_utc) || a.id.localeCompare(b.id));
const BY_ID = new Map(RUNS.map((r) => [r.id, r]));
const PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD"];
const COLOR = new Map(RUNS.map((r, i) => [r.id, PALETTE[i % PALETTE.length]]));
const FILTERS = ["library", "method", "format", "transport", "workers"];
// The sections beside the matrix, each from its part of a run document: the servers side by side
// (servers.js) and every experiment with a page script (workflow.experiments' `page`). Each
// registers { id, title, part(run), answer(run, part) -> [text or nodes] or null,
// render(run, part) -> [nodes], optionally draw(run, part), which embeds its charts, and
// every: true to show each run holding its part rather than the newest }.
const SECTIONS = [];
/** What the matrix and the history key a variant by: in a run of several servers, its server too. */
const nameOf = (v) => v.name || v.variant;
const CEILING = "ilp_file"; // the dataset's ILP text sent as it is: what the server takes

// The selection; `fromUrl` fills it from the address, `toUrl` writes it back on every change.
const state = {
  view: "runs", // or "history"
  dataset: null,
  runs: [], // selected run ids, newest first
  filters: {}, // key -> Set of kept values; absent = all
  sort: { key: "best", desc: true }, // "best", "variant" or a run id
  shade: "column", // ratio to the column's (run's) best or the row's (variant's) best
  published: false,
  group: null, // history: "<machine>|<config>"
};

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v; else if (k.startsWith("on")) node[k] = v; else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
};
const missing = (v) => v === null || v === undefined || Number.isNaN(v);
const fmt = (v, digits = 0) => missing(v) ? "–"
  : v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (v) => missing(v) ? "–" : `${fmt(100 * v)} %`;
const mib = (b) => missing(b) ? null : b / 2 ** 20;
const swatch = (runId) => el("span", { class: "swatch", style: `background:${COLOR.get(runId)}` });
const commitOf = (run) => run.workflow.git_commit.slice(0, 7);
const dayOf = (run) => run.date_utc.slice(0, 10);

/** The QuestDB a run ran on: its version, or the first and last of several servers. */
function questdbOf(run) {
  const servers = run.versions.questdb_servers || [];
  return servers.length > 1 ? `${servers[0]} to ${servers[servers.length - 1]} (${servers.length} servers)`
    : run.versions.questdb_server || "?";
}

/** machine · QuestDB version · commit and its date · label: how every run is named. */
function runName(run) {
  return `${run.machine.id} · QuestDB ${questdbOf(run)} · ${commitOf(run)} ${dayOf(run)} · ${run.label}`;
}

function datasetsOf(runs) {
  const seen = new Map();
  for (const run of runs) for (const d of run.datasets) {
    if (!seen.has(d.name)) seen.set(d.name, { ...d, runs: 0 });
    seen.get(d.name).runs += 1;
  }
  return [...seen.values()].sort((a, b) => b.runs - a.runs || (b.rows || 0) - (a.rows || 0) || a.name.localeCompare(b.name));
}
/** A TSBS dataset by its name, rows and field type; own data by its label, rows, columns and
 * bytes (the user's file), as the summary names it. */
function datasetName(d) {
  const runs = `${d.runs} run${d.runs > 1 ? "s" : ""}`;
  if (d.label) return `${d.label}: your data, ${fmt(d.rows)} rows, ${fmt(d.columns)} columns, ${fmt(mib(d.bytes), 1)} MiB (${d.name}, ${runs})`;
  return `${d.name} (${fmt(d.rows)} rows, ${d.field_type || "double"}, ${runs})`;
}
const holds = (run, dataset) => run.datasets.some((d) => d.name === dataset);
const runsOfDataset = () => RUNS.filter((r) => holds(r, state.dataset));

/** A run of one server: a run of the server axis compares servers, and its fastest cell is a
 * server's, not a way to load. */
const ofOneServer = (run) => !(run.versions.questdb_servers || []).length;
/** A run whose answer is the ways to load: one server and no experiment (a paced or delivery
 * run's backfill is a small control beside the experiment its section shows). */
const ofWaysToLoad = (run) => ofOneServer(run) && !Object.keys(run.experiments || {}).length;

/** The run a dataset opens on: its newest run of the ways to load, else of one server, else
 * its newest. */
const openingRun = () => {
  const runs = runsOfDataset();
  return (runs.find(ofWaysToLoad) || runs.find(ofOneServer) || runs[0]).id;
};

const passes = (v) => FILTERS.every((k) => !state.filters[k] || state.filters[k].has(String(v[k])));

/** The variant records of the selected dataset in one run that pass the filters. */
function variantsOf(run) {
  return run.variants.filter((v) => v.dataset === state.dataset && passes(v));
}

// The opening view: the dataset most runs share (the first of datasetsOf), on its opening run.
const openingDataset = () => datasetsOf(RUNS)[0].name;

function fromUrl() {
  const p = new URLSearchParams(location.hash.slice(1));
  const datasets = new Set(datasetsOf(RUNS).map((d) => d.name));
  state.view = p.get("view") === "history" ? "history" : "runs";
  state.dataset = datasets.has(p.get("dataset")) ? p.get("dataset") : openingDataset();
  const runs = (p.get("runs") || "").split(",").filter((id) => BY_ID.has(id) && holds(BY_ID.get(id), state.dataset));
  state.runs = runs.length ? RUNS.map((r) => r.id).filter((id) => runs.includes(id))
    : [openingRun()];
  const sort = p.get("sort") || "-best"; // a key that is no column falls back when drawn
  state.sort = { key: sort.replace(/^-/, ""), desc: sort.startsWith("-") };
  state.shade = p.get("shade") === "row" ? "row" : "column";
  state.published = p.get("published") === "1";
  state.filters = {};
  for (const k of FILTERS) if (p.has(k)) state.filters[k] = new Set(p.get(k).split(",").filter(Boolean));
  state.group = p.get("history");
}

function toUrl() {
  const p = new URLSearchParams();
  p.set("view", state.view);
  p.set("dataset", state.dataset);
  p.set("runs", state.runs.join(","));
  p.set("sort", `${state.sort.desc ? "-" : ""}${state.sort.key}`);
  p.set("shade", state.shade);
  if (state.published) p.set("published", "1");
  for (const k of FILTERS) if (state.filters[k]) p.set(k, [...state.filters[k]].join(","));
  if (state.group) p.set("history", state.group);
  const hash = `#${p}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}
