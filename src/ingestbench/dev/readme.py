"""The figures the README shows, and docs/configuration.md, generated from committed files.

`make readme` (python -m ingestbench.dev.readme) rewrites the README's block between its
results markers from `reference/default/summary.csv` and `environment.json` of the reference run
(committed), docs/configuration.md from schemas/config.schema.yaml, and from the method
catalogue docs/methods.md's method table and variant matrices, docs/iot.md's two-tables table,
the report's sentence of methods and configs/full.yaml's variants (ingestbench.dev.methods_doc).
Nothing is typed by hand, so the README cannot drift from the files it quotes; `--check` fails
when any is out of date (a test runs it), and a clean clone's `make readme` leaves `git diff` empty.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from ingestbench import CHECKOUT
from ingestbench.config import load_config
from ingestbench.dev.methods_doc import (
    FULL_CONFIG,
    IOT_DOC,
    METHODS_DOC,
    REPORT_WORKFLOW,
    full_config,
    iot_doc,
    methods_doc,
    report_workflow,
)
from ingestbench.schema import SCHEMA_PATH, load_schema
from ingestbench.storage.files import write_text_atomic
from ingestbench.workflow.result_keys import config_hash

README = CHECKOUT / "README.md"
CONFIGURATION = CHECKOUT / "docs" / "configuration.md"
RESULTS = CHECKOUT / "reference" / "default"  # the committed reference run, never a run's folder
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
LEADERS = 8  # rows of the README's table: the leading variants of the largest dataset
GIB = 1 << 30


def _rate(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.0f}"


def _num(value: Any, digits: int = 2) -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def run_line(env: dict[str, Any], config_name: str | None) -> str:
    """One line: machine, versions, commit, config and date of the reference run."""
    m, wf = env["machine"], env["workflow"]
    commit = (wf.get("git_commit") or "unknown")[:10] + (" (dirty)" if wf.get("git_dirty") else "")
    config = f"`{config_name}`" if config_name else "a config"
    return (
        f"Measured on {m['cores_logical']} cores ({m.get('cpu_model') or 'unknown CPU'}), "
        f"{m['ram_bytes'] / GIB:.1f} GiB RAM; QuestDB {env['questdb']['version']}, Python "
        f"{env['python']['version']}; commit {commit}, {config} (hash {wf['config_hash']}); "
        f"{env['timestamp_utc'][:10]}. Everything else: `reference/default/environment.json`."
    )


def leaders_table(summary: Any, dataset: str | None = None, intro: str | None = None) -> str:
    """The leading validated variants of `dataset` (the largest by default) by median rows/s."""
    dataset = dataset or _largest(summary)
    variants = int((summary["dataset"] == dataset).sum())
    df = summary[(summary["dataset"] == dataset) & (summary["validated"].astype(str) == "True")]
    df = df.sort_values("rows_per_s_median", ascending=False, kind="stable").head(LEADERS)
    lines = [
        f"{intro or 'Dataset'} `{dataset}`, its {len(df)} fastest validated variants of "
        f"{variants} (every variant and dataset: `reference/default/summary.csv`):",
        "",
        "| # | variant | rows/s, median (min–max) | × wire ceiling | client CPU-s per 1M rows |",
        "|---:|---|---:|---:|---:|",
    ]
    for i, (_, r) in enumerate(df.iterrows(), 1):
        cpu = r["client_cpu_s_median"] / r["rows"] * 1e6 if r["rows"] else math.nan
        lines.append(
            f"| {i} | `{r['variant']}` | {_rate(r['rows_per_s_median'])} "
            f"({_rate(r['rows_per_s_min'])}–{_rate(r['rows_per_s_max'])}) | "
            f"{_num(r.get('ceiling_fraction'))} | {_num(cpu)} |"
        )
    return "\n".join(lines)


def sql_line(summary: Any, dataset: str | None = None) -> list[str]:
    """Where SQL over PGWire stands on `dataset` (the largest by default): the fastest validated
    variant against pandas `to_sql`, and each SQL path's rate; nothing without SQL variants."""
    dataset = dataset or _largest(summary)
    if "speedup_to_sql" not in summary:
        return []
    df = summary[summary["dataset"] == dataset]
    sql = df[(df["transport"] == "pg") & (df["validated"].astype(str) == "True")]
    to_sql = sql[sql["method"] == "to_sql"]
    if to_sql.empty:
        return []
    ok = df[df["validated"].astype(str) == "True"]
    best = ok.loc[ok["rows_per_s_median"].idxmax()]
    paths = ", ".join(
        f"`{r['variant']}` {_rate(r['rows_per_s_median'])}"
        for _, r in sql.sort_values("rows_per_s_median", ascending=False).iterrows()
    )
    return [
        "",
        f"The path most users write first, pandas `to_sql` over PGWire, against the fastest: "
        f"`{best['variant']}` is **{best['speedup_to_sql']:.1f}×** "
        f"`{to_sql.iloc[0]['variant']}` on `{dataset}` (`speedup_to_sql` in "
        f"`reference/default/summary.csv`). Every SQL path, rows/s (first "
        f"{int(to_sql.iloc[0]['rows']):,} rows, `rows_cap`): {paths}.",
    ]


def _largest(summary: Any) -> str:
    """The dataset with the most rows, and of those the one with the most variants."""
    sizes = summary.groupby("dataset").agg(rows=("dataset_rows", "max"), n=("variant", "size"))
    return sizes.sort_values(["rows", "n"], kind="stable").index[-1]


def integer_tables(summary: Any) -> list[str]:
    """A table for each dataset of integer fields beside the largest one (TSBS's own type,
    which ILP writes as text: the client paths meet another ceiling there)."""
    if "field_type" not in summary:
        return []
    names = set(summary.loc[summary["field_type"] == "long", "dataset"]) - {_largest(summary)}
    intro = "The same readings as integers (`field_type: long`, TSBS's own type), dataset"
    return [leaders_table(summary, name, intro) for name in sorted(names)]


def results_block(results: Path = RESULTS, config: Path = CHECKOUT / "config.yaml") -> str:
    import pandas as pd

    summary = pd.read_csv(results / "summary.csv")
    env = json.loads((results / "environment.json").read_text())
    name = None
    if config.is_file() and config_hash(load_config(config)) == env["workflow"]["config_hash"]:
        name = (
            config.relative_to(CHECKOUT).as_posix()
            if config.is_relative_to(CHECKOUT)
            else str(config)
        )
    chart = (results / "plots" / "throughput.png").relative_to(CHECKOUT).as_posix()
    return "\n".join(
        [
            BEGIN,
            "<!-- written by `make readme` from reference/default/summary.csv and "
            "environment.json; do not edit -->",
            "",
            f"![Ingestion throughput per variant]({chart})",
            "",
            run_line(env, name),
            "",
            leaders_table(summary),
            *sql_line(summary),
            *(part for table in integer_tables(summary) for part in ("", table)),
            END,
        ]
    )


def with_block(readme: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(readme):
        raise SystemExit(f"{README} has no {begin} … {end} block; put one where the results go.")
    return pattern.sub(lambda _: block, readme)


#: The committed reference runs of the server axis, and the README's block that quotes them.
SERVER_RUNS = (CHECKOUT / "reference" / "versions", CHECKOUT / "reference" / "settings")
ARCHIVE = CHECKOUT / "archive"
SERVERS_BEGIN, SERVERS_END = "<!-- servers:begin -->", "<!-- servers:end -->"


def _archived_runs(run: Path, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The comparisons of the archived runs (`docs`) of `run`'s config on its machine, oldest
    first."""
    from ingestbench.publish.archive import config_on_machine, machine_id

    env = json.loads((run / "environment.json").read_text())
    key = (machine_id(env["machine"]), env["workflow"]["config_hash"])
    return [d["servers"] for d in docs if d.get("servers") and config_on_machine(d) == key]


def servers_block(runs: tuple[Path, ...] = SERVER_RUNS, archive: Path = ARCHIVE) -> str:
    """One line per committed run of the server axis: its verdict (results.summary.servers),
    with where it ran and where its figures are; where the archive holds several runs of its
    config on its machine, what held in every one of them instead (a cell beyond the noise of
    one run's repeats is no finding on a machine that drifts between jobs)."""
    from ingestbench.publish.archive import read_archive
    from ingestbench.results.summary import read_summary
    from ingestbench.results.summary.servers import comparison, held_verdict

    docs = read_archive(archive) if archive.is_dir() else []

    lines = [
        SERVERS_BEGIN,
        "<!-- written by `make readme` from reference/versions, "
        "reference/settings and archive/; do not edit -->",
    ]
    for run in runs:
        if not (run / "summary.csv").is_file():
            continue
        data = comparison(read_summary(run / "summary.csv", unsupported=True))
        if data is None:
            continue
        archived = _archived_runs(run, docs)
        text = held_verdict(archived) if len(archived) > 1 else data["datasets"][0]["verdict"]
        where = _where(run, "summary.md") + (
            f"; its config's {len(archived)} runs in `archive/`" if len(archived) > 1 else ""
        )
        lines += ["", f"- {text} ({where})"]
    return "\n".join([*lines, SERVERS_END])


#: The committed reference runs of the stream experiments, and the README's block that quotes
#: them: paced ingestion's recommendation, delivery's.
PACED_RUN, DELIVERY_RUN = CHECKOUT / "reference" / "paced", CHECKOUT / "reference" / "delivery"
STREAM_BEGIN, STREAM_END = "<!-- stream:begin -->", "<!-- stream:end -->"


def stream_block(paced: Path = PACED_RUN, delivery: Path = DELIVERY_RUN) -> str:
    """The answers a streaming user came for, each the sentence the run's own summary gives
    (paced.summary.recommendation, delivery.matrix.recommendation), with where it ran."""
    from ingestbench.delivery.matrix import outcomes
    from ingestbench.delivery.matrix import recommendation as delivery_advice
    from ingestbench.delivery.summary import read_rows
    from ingestbench.paced.summary import highest_sustained
    from ingestbench.paced.summary import recommendation as paced_advice
    from ingestbench.paced.table import read_paced_table

    lines = [STREAM_BEGIN, "<!-- written by `make readme` from reference/paced and "
             "reference/delivery; do not edit -->"]  # fmt: skip
    if (paced / "paced.csv").is_file():
        best = highest_sustained(read_paced_table(paced / "paced.csv"))
        for (_server, dataset), group in best.groupby(["server", "dataset"], sort=False):
            lines += ["", f"- **Streaming** ({dataset}, p99 under "
                      f"{group['paced_latency_bound_s'].iloc[0]:g} s from due to readable): "
                      f"{paced_advice(group)} ({_where(paced, 'summary.md')})"]  # fmt: skip
    for csv in sorted(delivery.glob("delivery/*/delivery.csv")):
        rows, where = read_rows(csv), _where(delivery, "summary.md")
        lines += ["", f"- **Delivery under faults** (QuestDB {csv.parent.name}): "
                  f"{outcomes(rows)} {delivery_advice(rows)} ({where})"]  # fmt: skip
    return "\n".join([*lines, STREAM_END])


def _where(run: Path, name: str) -> str:
    """`reference/x/summary.md`, N cores, the day: where a quoted sentence comes from."""
    env = json.loads((run / "environment.json").read_text())
    shown = run.relative_to(CHECKOUT).as_posix() if run.is_relative_to(CHECKOUT) else run
    return (f"`{shown}/{name}`, {env['machine']['cores_logical']} cores, "
            f"{env['timestamp_utc'][:10]}")  # fmt: skip


# ------------------------------------------------------------------ docs/configuration.md


def _type(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " \\| ".join(f"`{v}`" for v in spec["enum"])
    if "const" in spec:
        return f"`{json.dumps(spec['const'])}`"
    # A oneOf beside a type only picks required keys (epochs or rows): the type says it all.
    if "oneOf" in spec and "type" not in spec:  # shapes of an object by their keys
        return " or ".join("`{" + ", ".join(s["properties"]) + "}`" if "properties" in s
                           else _type(s) for s in spec["oneOf"])  # fmt: skip
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1].replace("_", " ")
    t = spec.get("type", "object")
    kind = " or ".join(t) if isinstance(t, list) else t
    if "items" in spec:
        kind += f" of {_type(spec['items'])}"
    return kind


def _default(spec: dict[str, Any]) -> str:
    if "default" not in spec:
        if spec.get("_one_of"):
            return "required: " + " or ".join(spec["_one_of"])
        return "required" if spec.get("_required") else "–"
    value = spec["default"]
    if isinstance(value, dict) and not value:
        return "(its keys' defaults)"
    return f"`{json.dumps(value)}`"


def _rows(
    properties: dict[str, Any],
    required: list[str],
    prefix: str,
    defs: dict[str, Any],
    either: list[str] | None = None,
) -> list[str]:
    """The table's rows of an object's keys; `either`: keys of which one is required (a oneOf
    of `required` lists beside the keys)."""
    rows = []
    for key, spec in properties.items():
        one_of = either if either and key in either else None
        spec = {**spec, "_required": key in required, "_one_of": one_of}
        path = f"{prefix}{key}"
        text = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{path}` | {_type(spec)} | {_default(spec)} | {text} |")
        if "properties" in spec:
            rows += _rows(spec["properties"], spec.get("required", []), f"{path}.", defs)
        shapes = _item_schemas(spec.get("items", {}), defs)
        for title, items in shapes:  # each shape of item apart, under its own heading row
            if len(shapes) > 1:
                rows.append(f"| **`{path}[]`: {title}** | | | |")
            either = [k for b in items.get("oneOf", []) for k in b.get("required", [])]
            rows += _rows(items["properties"], items.get("required", []), f"{path}[].", defs,
                          either)  # fmt: skip
    return rows


def _item_schemas(items: dict[str, Any], defs: dict[str, Any]) -> list[tuple[str, dict]]:
    """An array's item schemas with properties, with their titles: the one, or each branch of
    an if/then/else."""
    branches = [items.get("else"), items.get("then")] if "if" in items else [items]
    found = []
    for branch in branches:
        if branch and "$ref" in branch:
            branch = defs[branch["$ref"].rsplit("/", 1)[-1]]
        if branch and "properties" in branch:
            found.append((str(branch.get("title", "")), branch))
    return found


def configuration_doc(schema_path: Path = SCHEMA_PATH) -> str:
    schema = load_schema(schema_path)
    lines = [
        "# Configuration",
        "",
        "<!-- written by `make readme` from schemas/config.schema.yaml; do not edit -->",
        "",
        "`config.yaml` is the default experiment; `--configfile FILE` (`make run CONFIG=FILE`) "
        "runs another (each file in `configs/` is one experiment), into its own `results_dir`. "
        "The schema (`schemas/config.schema.yaml`) owns every key and default; a wrong key, "
        "type or value stops the run before any job, naming the key. Machine resources "
        "(cores, memory) are never config: pass them to Snakemake.",
        "",
        "**Checked before any job**: `ingestbench check --config FILE` runs the preflight "
        "(`ingestbench.preflight`) alone, in about a second; the Snakefile runs it where it "
        "reads the config, and `make run`, `smoke`, `run-scale`, `run-dtypes` and `charts` run "
        "it before Snakemake. Besides the schema it checks that `results_dir` and `data_dir` "
        "lie outside the project's own folders (`reference/`, `docs/`, `src/`, `configs/`, "
        "...), that every `*_env` variable is set (naming the variable, never its value), that "
        "each own file exists and reads as its job will read it (a `.parquet`, `.csv` or `.tsv` "
        "file or a folder of Parquet files; its schema from the Parquet footer, or from a "
        "CSV's header and first 16 MiB of rows, the block its types are inferred from; its "
        "timestamp column), and that each variant runs on some dataset (a variant an own "
        "dataset leaves out for its file's format is one note). A file a rule makes "
        "(`results/examples/`) is checked when it is made. Each mistake is one sentence naming "
        "the key, the value and the fix, and the command exits with status 1. A YAML syntax "
        "error gets its file, line and column from `ingestbench check` and the make targets; "
        "a direct `snakemake --configfile FILE` parses the file before any of the workflow's "
        "code runs, so there it is Snakemake's own message (`Config file is not valid JSON or "
        "YAML`): run `ingestbench check --config FILE` to find the line. What only a job can "
        "find: a value the server refuses, a file corrupt past its header or footer, a server "
        "that cannot be reached.",
        "",
        "**How a `--configfile` combines with `config.yaml`**: as Snakemake merges them, "
        "`config.yaml` first, then the file over it: mappings (`questdb`, `validation`, "
        "`charts`) key by key, everything else, lists included, replaced whole. A file that "
        "sets only `repeats: 5` runs config.yaml's matrix five times; a file with `datasets` of "
        "its own needs `variants` of its own (config.yaml's name its datasets' labels). "
        "`ingestbench variants --config FILE` and every other command that takes `--config` "
        "merge the same way and give the same errors.",
        "",
        "**What reruns after an edit**: each rule's params carry the slice of the config its "
        "outputs depend on (`ingestbench.workflow.rule_inputs`), each job records them beside its "
        "output, and a job whose record differs from the config reruns, with or without "
        "Snakemake's metadata ([development.md](development.md#what-reruns-a-job)), so "
        "`snakemake -n` shows exactly what an edit changes: `repeats`, `warmup_rows`, "
        "`ilp_protocol_version`, `table`, the `questdb` settings, "
        "`validation.export_piece_rows` and `validation.rel_tolerance` (the checks of every "
        "repeat use it) rerun the ingestions (`rows_cap` only the row loops) and what follows "
        "them; the other `validation` keys the validations (`validation.memory_limit` too: it "
        "is a validation setting, a param of every validation, though it cannot change a "
        "verdict); `charts` the charts; `datasets` regenerate their data, and so does "
        "`data_dir` (the datasets are written in the new folder, and the jobs that read them "
        "rerun). The keys that cannot change a result (`questdb.cache_dir`, `keep_data`, "
        "`startup_timeout_s`, `shutdown_grace_s`, `tls_verify`, `validation.keep_export`, "
        "`results_dir`) rerun nothing; they, `validation.memory_limit` and `data_dir` are left "
        "out of the config's hash.",
        "",
        " ".join(str(schema.get("description", "")).split()),
        "",
        "| key | type | default | what it does |",
        "|---|---|---|---|",
        *_rows(schema["properties"], schema.get("required", []), "", schema.get("$defs", {})),
        "",
    ]
    for name, spec in schema.get("$defs", {}).items():
        if "properties" in spec:  # an object's keys are rows of the table above
            continue
        text = " ".join(str(spec.get("description", "")).split())
        lines.append(f"- *{name.replace('_', ' ')}*: {_type(spec)}. {text}".rstrip() + "\n")
    return "\n".join(lines).rstrip("\n") + "\n"


def _stale(wanted: dict[Path, str], check: bool) -> list[Path]:
    """The files whose text is not `wanted`; each written anew unless only checking."""
    stale = [path for path, text in wanted.items()
             if not path.is_file() or path.read_text() != text]  # fmt: skip
    for path in [] if check else stale:
        write_text_atomic(path, wanted[path])
        print(f"wrote {path.relative_to(CHECKOUT)}")
    return stale


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--results", type=Path, default=RESULTS, help="the reference run's folder")
    p.add_argument("--check", action="store_true", help="fail if a file is out of date")
    args = p.parse_args(argv)
    # The full config first: the methods page counts its variants.
    stale = _stale({FULL_CONFIG: full_config(FULL_CONFIG.read_text())}, args.check)
    wanted = {
        README: with_block(
            with_block(
                with_block(README.read_text(), results_block(args.results)),
                servers_block(),
                SERVERS_BEGIN,
                SERVERS_END,
            ),
            stream_block(),
            STREAM_BEGIN,
            STREAM_END,
        ),
        CONFIGURATION: configuration_doc(),
        METHODS_DOC: methods_doc(METHODS_DOC.read_text()),
        IOT_DOC: iot_doc(IOT_DOC.read_text()),
        REPORT_WORKFLOW: report_workflow(REPORT_WORKFLOW.read_text()),
    }
    stale += _stale(wanted, args.check)
    if args.check:
        for path in stale:
            print(f"{path.relative_to(CHECKOUT)} is out of date: run `make readme`.")
        return 1 if stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
