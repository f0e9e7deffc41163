"""The ``ingestbench`` command: the workflow's steps by hand, outside Snakemake.

Each subcommand has an ``add_<name>_parser(subparsers)`` function that declares its arguments and
sets ``func`` to the handler; the handler returns the exit code. Heavy imports (numpy, pyarrow)
happen inside the handlers, so ``ingestbench --help`` stays fast.

May import: errors, schema, config, variants, storage.disk, tsbs, server, results, ingest, publish,
datasets (the plan), preflight (the config checked before any job) and workflow.experiments
(what each experiment runs).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from ingestbench.preflight import add_check_parser
from ingestbench.variants import FORMATS

EXIT_USER_ERROR = 2


def _int(text: str) -> int:
    """A whole number (``1_000_000`` allowed); the range is checked with the other parameters."""
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def add_generate_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    # The defaults are the schema's, which checks the dataset too (DatasetParams.from_config):
    # an option left out is left out of the dataset entry.
    from ingestbench.schema import dataset_defaults

    default = dataset_defaults()
    parser = subparsers.add_parser(
        "generate",
        help="generate a TSBS cpu or iot dataset (Parquet, CSV and/or ILP text, plus a manifest)",
        description=(
            "Generate a TSBS cpu or iot dataset, seeded, into DIR/<name>.parquet, .csv, .ilp "
            "(the formats asked for) and <name>.manifest.json, and print the manifest's path."
        ),
    )
    parser.add_argument("--scale", type=_int, required=True, help="hosts (e.g. 4000)")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--epochs", type=_int, help="readings per host (rows = scale x epochs)")
    size.add_argument("--rows", type=_int, help="rows, rounded up to whole epochs")
    parser.add_argument("--seed", type=int, help=f"random seed (default: {default['seed']})")
    parser.add_argument("--start", help=f"first timestamp (default: {default['start']})")
    parser.add_argument("--interval", help=f"time between epochs (default: {default['interval']})")
    parser.add_argument(
        "--field-type",
        help="double (QuestDB's pandas benchmark) or long (TSBS's int64 truncation) (default: "
        f"{default['field_type']})",
    )
    parser.add_argument(
        "--use-case",
        help="cpu (hosts, one table; the default) or iot (trucks: readings and diagnostics, with "
        "TSBS's nulls and late rows; --scale is then the number of trucks)",
    )
    parser.add_argument(
        "--out-of-order-lag",
        metavar="LAG",
        help="shuffle rows within a lag window, e.g. 30s (a separate dataset)",
    )
    parser.add_argument(
        "--format",
        choices=(*FORMATS, "both"),
        nargs="+",
        default=["both"],
        help="files to write: parquet, csv, ilp (TSBS's ILP text), both = parquet and csv "
        "(default: both)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_generate)
    return parser


def run_generate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.storage.disk import Need, check_needs, files_bytes
    from ingestbench.tsbs import BOTH, DatasetParams, generate

    given = {
        "scale": args.scale,
        "seed": args.seed,
        "start": args.start,
        "interval": args.interval,
        "field_type": args.field_type,
        "out_of_order": {"lag": args.out_of_order_lag} if args.out_of_order_lag else None,
        "use_case": args.use_case,
        "rows": args.rows,
        "epochs": args.epochs,
    }
    entry = {key: value for key, value in given.items() if value is not None}
    params = DatasetParams.from_config(entry)
    formats = [f for arg in args.format for f in (BOTH if arg == "both" else [arg])]
    missing = [f for f in formats if not (Path(args.out) / f"{params.name}.{f}").exists()]
    check_needs([Need(Path(args.out), files_bytes(params.rows, missing), "the dataset files")])
    generate(params, args.out, formats=formats, progress=not args.no_progress)

    print(Path(args.out) / f"{params.name}.manifest.json")
    return 0


def add_variants_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "variants",
        help="list the variants a config runs, per dataset (the variant matrix), and what each "
        "experiment it has runs (paced jobs, delivery paths, reader counts, dtype cases)",
    )
    parser.add_argument("--config", default="config.yaml", help="default: %(default)s")
    parser.set_defaults(func=run_variants)
    return parser


def run_variants(args: argparse.Namespace) -> int:
    from ingestbench.datasets import plan
    from ingestbench.preflight import load_checked
    from ingestbench.server.versions import server_labels
    from ingestbench.workflow.experiments import listings, plural

    config = load_checked(args.config)
    planned = plan(config)
    count, experiments = listings(config, sum(len(variants) for _, variants in planned.values()))
    servers = server_labels(config)  # every job of the run once per server (server.versions)
    on = f", each on {len(servers)} servers ({', '.join(servers)})" if len(servers) > 1 else ""
    print(f"{args.config} runs {count}{on}")  # what `snakemake` with this config runs
    for name, (label, variants) in planned.items():
        print(f"{name} ({label}): {plural(len(variants), 'variant')}")
        for v in variants:
            print(f"  {v.name}")
    print("\n".join(experiments))
    return 0


def add_ingest_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "ingest",
        help="run one variant by hand on a fresh QuestDB (or the config's external one)",
        description=(
            "Ingest a dataset file (a generated one, or your own Parquet or CSV file) with one "
            "variant, R repeats, and write its run file. "
            "Example: ingestbench ingest pandas-dataframe-parquet-http "
            "--data results/data/cpu-s4000-e250-seed42.parquet --out run.json"
        ),
    )
    parser.add_argument("variant", help="a variant name, e.g. polars-threads-csv-tcp-w2")
    parser.add_argument(
        "--data",
        required=True,
        help="the dataset file in the variant's format: a generated one, or your own Parquet or "
        "CSV file (or directory of Parquet files), described as a dataset (docs/own-data.md)",
    )
    parser.add_argument(
        "--timestamp", help="your own file's designated timestamp, when it has several"
    )
    csv = parser.add_argument_group("your own CSV file (as datasets[].csv in a config)")
    csv.add_argument("--delimiter", help="the field separator (default: a tab for .tsv, else ,)")
    csv.add_argument(
        "--null-value",
        action="append",
        dest="null_values",
        help="a field value meaning null; repeat for several (default: the empty field)",
    )
    csv.add_argument("--timestamp-format", help="strptime format of the time columns")
    parser.add_argument("--config", default="config.yaml", help="default: %(default)s")
    parser.add_argument("--repeats", type=_int, help="override the config's repeats")
    parser.add_argument("--out", default="run.json", help="run file (default: %(default)s)")
    parser.set_defaults(func=run_ingest)
    return parser


def run_ingest(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.ingest.by_hand import ingest_by_hand

    run = ingest_by_hand(args.config, args.variant, Path(args.data), Path(args.out),
                         repeats=args.repeats, timestamp=args.timestamp,
                         delimiter=args.delimiter, null_values=args.null_values,
                         timestamp_format=args.timestamp_format)  # fmt: skip
    for r in run.repeats:
        rate = run.rows / r.end_to_end
        print(f"repeat {r.repeat}: {r.end_to_end:.3f} s end to end, {rate:,.0f} rows/s")
    print(args.out)
    return 0


def add_compare_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "compare",
        help="compare two results folders variant by variant (faster, slower, within noise)",
        description=(
            "For every dataset and variant run in both folders: median end-to-end and send "
            "rows/s, B/A, and a verdict that respects the repeats' min-max spread. Prints a "
            "table and writes it as markdown."
        ),
    )
    parser.add_argument("a", metavar="RESULTS_A", help="the results folder before (baseline)")
    parser.add_argument("b", metavar="RESULTS_B", help="the results folder after")
    parser.add_argument("--out", help="markdown file (default: RESULTS_B/compare.md)")
    parser.add_argument(
        "--fail-above",
        type=float,
        metavar="PCT",
        help="exit 1 when a variant of B is slower than A beyond the noise and by more than PCT %%",
    )
    parser.set_defaults(func=run_compare)
    return parser


def run_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.results.compare import write_compare

    out = Path(args.out) if args.out else Path(args.b) / "compare.md"
    report = write_compare(Path(args.a), Path(args.b), out)
    print(report.terminal(), end="")
    print(out)
    if args.fail_above is None:
        return 0
    slower = report.regressions(args.fail_above)
    if slower:
        named = ", ".join(f"{c.dataset}/{c.variant} ({c.ratio:.2f}x)" for c in slower)
        print(f"slower than A beyond the noise and by more than {args.fail_above:g} %: {named}")
        return 1
    print(f"no variant is slower than A beyond the noise and by more than {args.fail_above:g} %")
    return 0


def add_results_dir_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "results-dir",
        help="print the results folder a config writes to (results_dir, config.yaml merged under)",
    )
    parser.add_argument("--config", default="config.yaml", help="default: %(default)s")
    parser.set_defaults(func=run_results_dir)
    return parser


def run_results_dir(args: argparse.Namespace) -> int:
    from ingestbench.config import load_config

    print(load_config(args.config)["results_dir"])
    return 0


def add_datasets_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("datasets", help="print the names of a config's datasets")
    parser.add_argument("--config", default="config.yaml", help="default: %(default)s")
    parser.set_defaults(func=run_datasets)
    return parser


def run_datasets(args: argparse.Namespace) -> int:
    from ingestbench.config import load_config
    from ingestbench.datasets import dataset_entries

    print("\n".join(dataset_entries(load_config(args.config))))
    return 0


def _port(text: str) -> int:
    port = _int(text)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1..65535, got {port}")
    return port


def add_archive_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "archive",
        help="keep a finished run as one JSON document in archive/ (schemas/archive.schema.json)",
        description=(
            "Turn a results folder (summary.csv and environment.json of a finished run) into one "
            "self-describing document: machine, versions, commit, config, and per variant every "
            "phase's median/min/max, rows/s, CPU per 1M rows, memory, size on disk, validation."
        ),
    )
    parser.add_argument("results", nargs="?", default="results", help="default: %(default)s")
    parser.add_argument("--archive", default="archive", help="default: %(default)s")
    parser.add_argument(
        "--label", help="what the run was, in the file name (default: the config's hash)"
    )
    parser.set_defaults(func=run_archive)
    return parser


def run_archive(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.publish.archive import write_document

    print(write_document(Path(args.results), Path(args.archive), args.label))
    return 0


def add_history_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "history",
        help="each variant's rows/s over the archived runs of a machine and config, by commit",
        description=(
            "For every machine and config with two or more archived runs: each variant's median "
            "rows/s in commit order, the steps beyond the noise marked (as compare judges them)."
        ),
    )
    parser.add_argument("--archive", default="archive", help="default: %(default)s")
    parser.add_argument("--machine", help="only this machine id (as in the file names)")
    parser.set_defaults(func=run_history)
    return parser


def run_history(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.publish.archive import read_archive
    from ingestbench.publish.history import report, series

    docs = read_archive(Path(args.archive))
    if args.machine:
        docs = [d for d in docs if d["machine"]["id"] == args.machine]
    print(report(series(docs)), end="")
    return 0


def add_site_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "site",
        help="write the static results page (one offline HTML file) from archive/ and results/",
        description="One HTML file, everything inlined, that opens from file:// offline.",
    )
    parser.add_argument("--archive", default="archive", help="default: %(default)s")
    parser.add_argument("--results", default="results", help="default: %(default)s")
    parser.add_argument("--out", default="site/index.html", help="default: %(default)s")
    parser.set_defaults(func=run_site)
    return parser


def run_site(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.publish.site import write_site

    print(write_site(Path(args.archive), Path(args.results), Path(args.out)))
    return 0


def add_server_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "server",
        help="run the workflow's QuestDB in the foreground, for questdb.mode: external",
        description=(
            "Start the same QuestDB a job starts (the config's jar, Java and settings), print the "
            "questdb: block to put in a config file, and serve until Ctrl-C or SIGTERM."
        ),
    )
    parser.add_argument("--config", default="config.yaml", help="default: %(default)s")
    parser.add_argument(
        "--bind",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="address to listen on (default: %(default)s; 0.0.0.0 lets other machines in)",
    )
    parser.add_argument("--http-port", type=_port, help="HTTP port (default: a free one)")
    parser.add_argument("--ilp-port", type=_port, help="ILP/TCP port (default: a free one)")
    parser.add_argument("--log", help="server log file (default: in its data directory)")
    parser.add_argument(
        "--auth",
        action="store_true",
        help="ask for HTTP basic auth (user admin, password in $QDB_PASSWORD) and an ILP/TCP key "
        "(user ingestbench, private key in $QDB_ILP_KEY); unset variables get fresh secrets",
    )
    parser.set_defaults(func=run_server)
    return parser


def run_server(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ingestbench.config import QuestDBSettings, load_config
    from ingestbench.server.serve import serve

    serve(
        QuestDBSettings.from_config(load_config(args.config)),
        bind=args.bind,
        http_port=args.http_port,
        ilp_port=args.ilp_port,
        log_path=Path(args.log) if args.log else None,
        auth=args.auth,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ingestbench",
        description=(
            "Benchmark the ways to get a dataframe into QuestDB (TSBS cpu and iot datasets)."
        ),
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress (INFO)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_generate_parser(subparsers)
    add_check_parser(subparsers)
    add_variants_parser(subparsers)
    add_results_dir_parser(subparsers)
    add_datasets_parser(subparsers)
    add_ingest_parser(subparsers)
    add_compare_parser(subparsers)
    add_archive_parser(subparsers)
    add_history_parser(subparsers)
    add_site_parser(subparsers)
    add_server_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from ingestbench.errors import UserError

    try:
        return args.func(args)
    except UserError as exc:  # one sentence naming the cause and the fix, no traceback
        print(f"ERROR: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # the reader left early (`ingestbench variants | head`): fine
        # Python flushes stdout again at exit; send that to /dev/null instead of a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
