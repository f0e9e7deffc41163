"""Turn run and validation files into results/summary.csv and results/summary.md.

One row per dataset and variant: its figures (`rows`, where each is defined; a run with readers
beside it has columns of its own, `readers`), checked against the settings the config gives it
(`settings`), written as CSV here and as readable tables (`markdown`); then the rows and the
section of each experiment the config runs (ingestbench.workflow.experiments), written with
them, once.

Within results, may import: records, ceiling, profile_text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench.results.ceiling import add_ceiling_fraction
from ingestbench.results.profile_text import (
    PROFILE_COLUMNS,
    load_profiles,
    profile_rows,
    recommendations,
)
from ingestbench.results.records import RunFile, SummaryRow, read_run
from ingestbench.results.summary.markdown import to_markdown
from ingestbench.results.summary.readers import add_readers_columns
from ingestbench.results.summary.rows import (
    MEASURED,
    STATUS,
    UNSUPPORTED,
    SummaryError,
    _speedups,
    add_speedups,
    backfill,
    host_columns,
    load_validations,
    measured,
    run_row,
    to_sql_speedups,
    warmup_columns,
)
from ingestbench.results.summary.servers import side_by_side
from ingestbench.results.summary.settings import check_settings
from ingestbench.server.versions import label_of
from ingestbench.storage.files import load_json, write_json_atomic, write_text_atomic

log = logging.getLogger(__name__)

__all__ = ["SummaryError", "read_summary", "summarize", "to_markdown", "write_summary"]


def summarize(
    run_paths: Iterable[Path],
    validation_paths: Iterable[Path] = (),
    expected_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """The summary table: one row per dataset and variant, sorted by dataset and rows/s; a
    variant whose method cannot load its data last, with `status` unsupported and the reason.

    With `expected_settings` (run file path -> the settings the config gives it), a run file
    that ran under other settings is refused."""
    run_paths = list(run_paths)
    read = [(p, read_run(p)) for p in run_paths]
    # A run of a method that cannot load the table measured nothing: a row of its own, below.
    unsupported = [r for _, r in read if r.extra.get("unsupported")]
    read = [(p, r) for p, r in read if not r.extra.get("unsupported")]
    records = [r for _, r in read]
    if expected_settings is not None:  # keyed by path as the rule wrote it (./results/… too)
        expected = {Path(k): v for k, v in expected_settings.items()}
        for path, record in read:
            check_settings(path, record, expected[Path(path)])
    rows = [run_row(record) for record in records]
    if not rows:
        raise SummaryError("there are no run files to summarize; the config selects no variant.")
    df = pd.DataFrame(rows)
    df = add_speedups(df)
    validations = load_validations(validation_paths)
    runs = zip(df["server"], df["dataset"], df["variant"], strict=True)
    validated = [validations.get((s, d, v), validations.get((None, d, v))) for s, d, v in runs]
    # True/False from the validation file; <NA> only if a run has no validation file at all.
    df["validated"] = pd.array(validated, dtype="boolean")
    df["speedup_iterrows"] = _speedups(df, "iterrows")[0]
    if (over_to_sql := to_sql_speedups(df)) is not None:  # the column only then
        df["speedup_to_sql"] = over_to_sql
    warm = pd.DataFrame([warmup_columns(r.to_dict()) for r in records], index=df.index)
    df[list(warm.columns)] = warm
    df = add_ceiling_fraction(df)
    # Another QuestDB or another job ran on the machine during the repeats (ingest.contention).
    df["contended"] = [bool((r.extra.get("contention") or {}).get("contended")) for r in records]
    # A dataset whose name stands for something (the user's file): what, in columns of its own.
    if any(key in r.dataset.extra for r in records for key in DESCRIBED_KEYS):
        for key in DESCRIBED_KEYS:
            df[f"dataset_{key}"] = [r.dataset.extra.get(key) for r in records]
    df["hosts"], df["mixed_machines"] = host_columns([r.to_dict() for r in records])
    df = add_readers_columns(df, records)  # only with readers: a summary without stays the same
    if unsupported:  # the columns only then: a summary without such runs stays as it was
        df[STATUS] = MEASURED
        df["reason"] = None
        df = pd.concat([df, pd.DataFrame([unsupported_row(r) for r in unsupported])],
                       ignore_index=True)  # fmt: skip
    for col in (
        "dataset_rows",
        "scale",
        "epochs",
        "seed",
        "workers",
        "batch_rows",
        "rows",
        "ilp_bytes",
        "ilp_protocol_version",
        "repeats",
        "warm_repeats",
        "warmup_rows",
    ):
        df[col] = pd.array(pd.to_numeric(df[col]), dtype="Int64")
    df = df.sort_values(
        ["dataset_rows", "dataset", "rows_per_s_median"], ascending=[False, True, False]
    )
    return df.reset_index(drop=True)


#: What a run file's dataset may say of itself besides its name and rows (its kind's run
#: summary, ingestbench.datasets: an own dataset's label, columns and bytes), shown as
#: `dataset_<key>` columns when any run says it.
DESCRIBED_KEYS = ("label", "columns", "bytes")


def unsupported_row(record: RunFile) -> dict[str, Any]:
    """The summary row of a run whose method cannot load its table: which run it is, its
    dataset, and the reason; no figures (nothing was measured)."""
    row = SummaryRow.from_run(record).to_dict()
    row["server"] = label_of((record.settings or {}).get("questdb"))  # the version that lacked it
    row |= {f"dataset_{key}": record.dataset.extra.get(key) for key in DESCRIBED_KEYS}
    return row | {"contended": False, STATUS: UNSUPPORTED, "reason": record.extra["unsupported"]}


def read_summary(path: Path, unsupported: bool = False) -> pd.DataFrame:
    """summary.csv's backfill rows as written by write_summary (booleans and integers restored):
    the runs that measured something, and with `unsupported` also those whose method cannot load
    the data; never an experiment's rows (paced's), which are no variant of the backfill."""
    df = pd.read_csv(path)
    df = (backfill(df) if unsupported else measured(df)).reset_index(drop=True)
    if "contended" in df:
        df["contended"] = df["contended"].map({True: True, "True": True}).fillna(False).astype(bool)
    if "validated" in df:
        df["validated"] = (
            df["validated"]
            .map({True: True, False: False, "True": True, "False": False})
            .astype("boolean")
        )
    return df


def write_summary(
    run_paths: Iterable[Path],
    validation_paths: Iterable[Path],
    environment_path: Path | None,
    csv_path: Path,
    md_path: Path,
    expected_settings: Mapping[str, Mapping[str, Any]] | None = None,
    profile_paths: Iterable[Path] = (),
    profiles_path: Path | None = None,
    experiments: Iterable[tuple[pd.DataFrame | None, str]] = (),
) -> pd.DataFrame:
    """summary.csv and summary.md, each written once; with `profile_paths` (manifests and
    expected files) each dataset's profile and recommendation too, in summary.md and in
    `profiles_path` (JSON, for the archive) with a table of them beside it (.csv, for the
    report). `experiments`: each experiment's rows of summary.csv (or None) and its section of
    summary.md, after the backfill's, in order."""
    run_paths = list(run_paths)
    df = summarize(run_paths, validation_paths, expected_settings)
    env = load_json(environment_path, "environment file") if environment_path else None
    profiles = load_profiles(profile_paths)
    profiles = {d: profiles[d] for d in df["dataset"].unique() if d in profiles}
    advice = recommendations(measured(df), profiles)
    table, text = df, to_markdown(df, env, profiles=profiles, advice=advice)
    if servers := side_by_side(df):  # several servers (server.versions) only
        text = f"{text.rstrip(chr(10))}\n\n{servers}"
    for rows, section in experiments:
        if rows is not None and len(rows):
            table = pd.concat([table, rows], ignore_index=True) if len(table) else rows
        text = f"{text.rstrip(chr(10))}\n\n{section.strip(chr(10))}\n"
    write_text_atomic(csv_path, table.to_csv(index=False))
    write_text_atomic(md_path, text)
    if profiles_path is not None:
        doc = {d: {**p, "recommendation": advice.get(d)} for d, p in profiles.items()}
        write_json_atomic(profiles_path, doc)
        table = pd.DataFrame(profile_rows(profiles, advice), columns=PROFILE_COLUMNS)
        write_text_atomic(Path(profiles_path).with_suffix(".csv"), table.to_csv(index=False))
    log.info("summarized %d runs into %s and %s", len(df), csv_path, md_path)
    return df
