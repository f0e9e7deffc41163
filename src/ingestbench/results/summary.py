"""Turn run and validation files into results/summary.csv and results/summary.md.

One row per dataset and variant. Statistics cover every timed repeat. With a warm-up (an untimed
ingestion on the fresh server first, `warmup` in the run file) every repeat is warm; without one
the first repeat met a cold server and is included (its end to end time also gets a column of its
own, `cold_end_to_end_s`). Rates are computed per repeat and then summarised, so the median rows/s
is the median of the repeats' rows/s:

- rows/s      = rows / end_to_end          send rows/s = rows / send
- MiB/s       = ilp_bytes / 2**20 / end_to_end   send MiB/s = ilp_bytes / 2**20 / send
- speedup     = median rows/s / median rows/s of the `rows` baseline of the same dataset, library
  and format (rates, not times, because the `rows` method may ingest a capped prefix);
  `speedup_vs_rows` against the itertuples/iter_rows loop, `speedup_iterrows` against the
  `iterrows` loop (QuestDB's published baseline, pandas only).
- ceiling_fraction = median rows/s / the best `ilp_file` median rows/s of the dataset (ceiling.py).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench.errors import UserError
from ingestbench.files import load_json, write_text_atomic
from ingestbench.results.ceiling import add_ceiling_fraction, wire_ceilings
from ingestbench.results.records import (
    PHASES,
    STATS,
    TIMES,
    RunFile,
    SummaryRow,
    read_run,
    read_validation,
)
from ingestbench.rule_inputs import settings_differences
from ingestbench.variants import ROW_LOOP_METHODS

log = logging.getLogger(__name__)

RATES = ("rows_per_s", "send_rows_per_s", "mib_per_s", "send_mib_per_s")
MIB = 2**20
# Per-repeat figures beside the phases; peak_rss_bytes only in run files of schema_version 1.
MEASURES = ("client_cpu_s", "server_cpu_s", "peak_rss_bytes", "client_rss_bytes",
            "server_rss_bytes", "overlap", "table_disk_bytes")  # fmt: skip


class SummaryError(UserError):
    pass


def _num(value: Any) -> float:
    """A number from a result file; null (or absent) becomes NaN."""
    return math.nan if value is None else float(value)


def _ratio(numerator: float, denominator: float) -> float:
    if math.isnan(numerator) or math.isnan(denominator) or denominator <= 0:
        return math.nan
    return numerator / denominator


def _stats(values: list[float]) -> dict[str, float]:
    s = pd.Series(values, dtype="float64").dropna()
    if s.empty:
        return dict.fromkeys(STATS, math.nan)
    return {"median": float(s.median()), "min": float(s.min()), "max": float(s.max())}


def run_row(record: RunFile) -> dict[str, Any]:
    """The summary row of one run file (without speedup and validation)."""
    row: dict[str, Any] = SummaryRow.from_run(record).to_dict()
    run = record.to_dict()  # the statistics below read the repeats as the file holds them
    ds, var = run["dataset"], run["variant"]
    repeats = run["repeats"]
    if not repeats:
        raise SummaryError(f"the run file of {ds['name']}/{var['name']} has no repeats; rerun it.")
    rows = _num(run.get("rows", ds.get("rows")))
    ilp_mib = _num(run.get("ilp_bytes")) / MIB
    per_repeat: dict[str, list[float]] = {name: [] for name in (*TIMES, *RATES)}
    for extra in MEASURES:
        per_repeat[extra] = []
    for rep in repeats:
        phases = rep.get("phases", {})
        for phase in PHASES:
            per_repeat[phase].append(_num(phases.get(phase)))
        e2e = _num(rep.get("end_to_end"))
        send = _num(phases.get("send"))
        per_repeat["end_to_end"].append(e2e)
        per_repeat["rows_per_s"].append(_ratio(rows, e2e))
        per_repeat["send_rows_per_s"].append(_ratio(rows, send))
        per_repeat["mib_per_s"].append(_ratio(ilp_mib, e2e))
        per_repeat["send_mib_per_s"].append(_ratio(ilp_mib, send))
        for extra in MEASURES:
            per_repeat[extra].append(_num(rep.get(extra)))
    for name in TIMES:
        for stat, value in _stats(per_repeat[name]).items():
            row[f"{name}_s_{stat}"] = value
    cold = [r for r in repeats if r.get("cold")]
    row["cold_end_to_end_s"] = _num(cold[0].get("end_to_end")) if cold else math.nan
    for name in RATES:
        for stat, value in _stats(per_repeat[name]).items():
            row[f"{name}_{stat}"] = value
    row["client_cpu_s_median"] = _stats(per_repeat["client_cpu_s"])["median"]
    row["server_cpu_s_median"] = _stats(per_repeat["server_cpu_s"])["median"]
    row["peak_rss_mib_max"] = _stats(per_repeat["peak_rss_bytes"])["max"] / MIB  # old files
    row["client_rss_bytes_max"] = _stats(per_repeat["client_rss_bytes"])["max"]
    row["server_rss_bytes_max"] = _stats(per_repeat["server_rss_bytes"])["max"]
    row["overlap_median"] = _stats(per_repeat["overlap"])["median"]
    # CPU per row: what a path costs the machine, comparable across datasets of any size.
    for side in ("client", "server"):
        per_1m = [_ratio(cpu, rows / 1e6) for cpu in per_repeat[f"{side}_cpu_s"]]
        row[f"{side}_cpu_s_per_1m_rows"] = _stats(per_1m)["median"]
    row["table_disk_mib_median"] = _stats(per_repeat["table_disk_bytes"])["median"] / MIB
    return row


def warmup_columns(run: dict[str, Any]) -> dict[str, Any]:
    """How warm the repeats were: the warm-up (if any) and how many warm repeats the statistics
    cover (all of them after a warm-up; without one, all but the cold first)."""
    warmup = run.get("warmup") or {}
    return {
        "warm_repeats": sum(not r.get("cold") for r in run["repeats"]),
        "warmup_rows": warmup.get("rows", 0),
        "warmup_s": _num(warmup.get("seconds")),
    }


def _baseline_for(row: pd.Series, baselines: pd.DataFrame) -> pd.Series | None:
    """The row-loop run of the same dataset, library and format; same transport preferred."""
    if row["library"] == "none":
        return None
    candidates = baselines[
        (baselines["dataset"] == row["dataset"])
        & (baselines["library"] == row["library"])
        & (baselines["format"] == row["format"])
    ]
    if candidates.empty:
        return None
    same = candidates[candidates["transport"] == row["transport"]]
    pick = same if not same.empty else candidates.sort_values("transport")
    return pick.iloc[0]


def _speedups(df: pd.DataFrame, loop: str) -> tuple[list[float], list[str | None]]:
    """Each row's median rows/s over that of its `loop` baseline, and the baseline's name."""
    baselines = df[df["method"] == loop]
    speedups, names = [], []
    for _, row in df.iterrows():
        base = _baseline_for(row, baselines)
        if base is None:
            speedups.append(math.nan)
            names.append(None)
        else:
            speedups.append(_ratio(row["rows_per_s_median"], base["rows_per_s_median"]))
            names.append(base["variant"])
    return speedups, names


def add_speedups(df: pd.DataFrame) -> pd.DataFrame:
    speedups, names = _speedups(df, "rows")
    df["speedup_vs_rows"] = speedups
    df["baseline_variant"] = pd.Series(names, index=df.index, dtype="object")
    return df


def load_validations(paths: Iterable[Path]) -> dict[tuple[str, str], bool]:
    """{(dataset, variant name): passed} from validation files."""
    out = {}
    for path in paths:
        path = Path(path)
        result = read_validation(path)
        dataset = result.dataset or path.parent.name
        if isinstance(dataset, dict):
            dataset = dataset["name"]
        variant = result.variant.get("name") or path.stem
        out[(dataset, variant)] = bool(result.passed)
    return out


def machine_kind(host: dict[str, Any] | None) -> tuple[str | None, int | None] | None:
    """What makes rates comparable across hosts: the CPU model and core count (None: unknown)."""
    if not host:
        return None
    return (host.get("cpu_model"), host.get("cpu_count"))


def host_columns(runs: list[dict[str, Any]]) -> tuple[list[str | None], list[bool]]:
    """`hosts` (where each run's repeats ran) and `mixed_machines` (its dataset's runs ran on
    more than one kind of machine, so their rates are not comparable); runs from before hosts
    were recorded count as unknown, not as different."""
    kinds: dict[str, set] = {}
    for run in runs:
        kind = machine_kind(run.get("host"))
        if kind is not None:
            kinds.setdefault(run["dataset"]["name"], set()).add(kind)
    hosts = [(run.get("host") or {}).get("hostname") for run in runs]
    mixed = [len(kinds.get(run["dataset"]["name"], ())) > 1 for run in runs]
    return hosts, mixed


def check_settings(path: Path, record: RunFile, expected: Mapping[str, Any]) -> None:
    """Refuse a run file that ran under other settings than the config's (one sentence naming
    the variant and the keys)."""
    what = f"{record.variant.name} on {record.dataset.name} ({path})"
    if record.settings is None:
        raise SummaryError(
            f"{what} does not record the settings it ran under (it predates that record); "
            f"rerun it: snakemake --forcerun {path}"
        )
    differ = settings_differences(record.settings, expected)
    if differ:
        keys = ", ".join(
            f"{k} ({_dotted(record.settings, k)!r} in the run file, "
            f"{_dotted(expected, k)!r} in the config)"
            for k in differ
        )
        raise SummaryError(
            f"{what} ran under other settings than the config's: {keys}; rerun it with "
            f"snakemake (its params changed), or use the config it ran under."
        )


def _dotted(values: Mapping[str, Any], key: str) -> Any:
    for part in key.split("."):
        values = values.get(part) if isinstance(values, Mapping) else None
    return values


def summarize(
    run_paths: Iterable[Path],
    validation_paths: Iterable[Path] = (),
    expected_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """The summary table: one row per dataset and variant, sorted by dataset and rows/s.

    With `expected_settings` (run file path -> the settings the config gives it), a run file
    that ran under other settings is refused."""
    run_paths = list(run_paths)
    read = [(p, read_run(p)) for p in run_paths]
    # A run of a method that cannot load the table measured nothing: it is listed apart.
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
    validated = [validations.get((d, v)) for d, v in zip(df["dataset"], df["variant"], strict=True)]
    # True/False from the validation file; <NA> only if a run has no validation file at all.
    df["validated"] = pd.array(validated, dtype="boolean")
    df["speedup_iterrows"] = _speedups(df, "iterrows")[0]
    warm = pd.DataFrame([warmup_columns(r.to_dict()) for r in records], index=df.index)
    df[list(warm.columns)] = warm
    df = add_ceiling_fraction(df)
    # Another QuestDB or another job ran on the machine during the repeats (ingest.contention).
    df["contended"] = [bool((r.extra.get("contention") or {}).get("contended")) for r in records]
    if any(r.dataset.extra.get("own") for r in records):  # own data: what its name stands for
        for key in OWN_DATASET_KEYS:
            df[f"dataset_{key}"] = [r.dataset.extra.get(key) for r in records]
    df["hosts"], df["mixed_machines"] = host_columns([r.to_dict() for r in records])
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


#: What a run file says of an own dataset besides its name and rows (ingestbench.own.job).
OWN_DATASET_KEYS = ("label", "columns", "bytes")


def unsupported_runs(run_paths: Iterable[Path]) -> list[dict[str, str]]:
    """{dataset, variant, reason} of every run whose method cannot load its table."""
    out = []
    for path in run_paths:
        record = read_run(path)
        if record.extra.get("unsupported"):
            out.append({"dataset": record.dataset.name, "variant": record.variant.name,
                        "reason": record.extra["unsupported"]})  # fmt: skip
    return out


def dataset_heading(dataset: str, first: pd.Series) -> str:
    """`name: N rows`; for own data also its label, columns and bytes."""
    heading = f"{dataset}: {int(first['dataset_rows']):,} rows"
    label = first.get("dataset_label")
    if isinstance(label, str) and label:
        heading += (f", {int(first['dataset_columns'])} columns, "
                    f"{first['dataset_bytes'] / MIB:,.1f} MiB (your data, `{label}`)")  # fmt: skip
    return heading


def read_summary(path: Path) -> pd.DataFrame:
    """summary.csv as written by write_summary (booleans and integers restored)."""
    df = pd.read_csv(path)
    if "contended" in df:
        df["contended"] = df["contended"].map({True: True, "True": True}).fillna(False).astype(bool)
    if "validated" in df:
        df["validated"] = (
            df["validated"]
            .map({True: True, False: False, "True": True, "False": False})
            .astype("boolean")
        )
    return df


def machine_line(env: dict[str, Any] | None) -> str:
    """One sentence describing the machine and software from environment.json."""
    if not env:
        return "Machine: not recorded."
    m = env.get("machine", {})
    ram = m.get("ram_bytes")
    parts = [
        f"{m.get('cores_logical')} cores ({m.get('cores_available')} available to the workflow)",
        m.get("cpu_model") or "unknown CPU",
        f"{ram / 2**30:.1f} GiB RAM" if ram else None,
        m.get("os"),
    ]
    soft = [
        f"Python {env.get('python', {}).get('version')}",
        f"QuestDB {env.get('questdb', {}).get('version')}",
        f"Java {env.get('java', {}).get('version')}",
    ]
    wf = env.get("workflow", {})
    commit = wf.get("git_commit")
    soft.append(f"commit {commit[:10]}" if commit else "no git commit")
    soft.append(f"config {wf.get('config_hash')}")
    return (
        "Machine: "
        + ", ".join(p for p in parts if p)
        + "; "
        + ", ".join(soft)
        + f"; recorded {env.get('timestamp_utc')}."
    )


def _fmt_rate(v: float, scale: float = 1.0, digits: int = 0) -> str:
    return "n/a" if pd.isna(v) else f"{v / scale:,.{digits}f}"


def to_markdown(
    df: pd.DataFrame,
    env: dict[str, Any] | None = None,
    top: int = 20,
    unsupported: list[dict[str, str]] | None = None,
) -> str:
    """A readable table per dataset: the `top` variants by median end-to-end rows/s."""
    lines = ["# Ingestion benchmark summary", "", machine_line(env), ""]
    lines.append(
        f"{_warmth_sentence(df)} Ranges are min–max. "
        "End to end = read + convert + send + visible (streamed variants: the wall time, their "
        "phases overlap). MiB are ILP bytes. Speedup is against "
        "the `rows` loop (itertuples) of the same library and format, × iterrows against the "
        "`iterrows` loop (QuestDB's published baseline). Client MiB: peak RSS of the client's "
        "processes, the server apart. Every column is in `summary.csv`."
    )
    for dataset, group in df.groupby("dataset", sort=False):
        group = group.sort_values("rows_per_s_median", ascending=False)
        first = group.iloc[0]
        lines += ["", f"## {dataset_heading(dataset, first)}", ""]
        lines.append(
            "| # | variant | rows/s (min–max) | MiB/s | end to end s | cold s | "
            "speedup | × iterrows | client MiB | validated |"
        )
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|:---:|")
        for i, (_, r) in enumerate(group.head(top).iterrows(), start=1):
            rate = (
                f"{_fmt_rate(r['rows_per_s_median'])} "
                f"({_fmt_rate(r['rows_per_s_min'])}–{_fmt_rate(r['rows_per_s_max'])})"
            )
            speedup, vs_iterrows = (
                "–" if pd.isna(r[col]) else f"{r[col]:.1f}×"
                for col in ("speedup_vs_rows", "speedup_iterrows")
            )
            cold = "–" if pd.isna(r["cold_end_to_end_s"]) else f"{r['cold_end_to_end_s']:.2f}"
            validated = {True: "yes", False: "**FAILED**"}.get(r["validated"], "not checked")
            name = f"`{r['variant']}`" + (" (contended)" if r.get("contended") in (True,) else "")
            lines.append(
                f"| {i} | {name} | {rate} | {_fmt_rate(r['mib_per_s_median'], 1, 1)} | "
                f"{r['end_to_end_s_median']:.2f} | {cold} | {speedup} | {vs_iterrows} | "
                f"{_fmt_rate(r.get('client_rss_bytes_max', math.nan), MIB)} | {validated} |"
            )
        if len(group) > top:
            lines.append("")
            lines.append(f"{len(group) - top} more variants in `summary.csv`.")
        ceiling = wire_ceilings(group).get(dataset)
        if ceiling:
            lines += ["", f"Wire ceiling (`{ceiling[1]}`, the ILP file sent as it is): "
                      f"{_fmt_rate(ceiling[0])} rows/s; `ceiling_fraction` in `summary.csv` "
                      "is each variant's share of it."]  # fmt: skip
        loops = group["method"].isin(ROW_LOOP_METHODS)
        capped = group[loops & (group["rows"] < group["dataset_rows"])]
        if not capped.empty:
            lines.append("")
            lines.append(
                f"The row loops ({', '.join(f'`{m}`' for m in ROW_LOOP_METHODS)}) ingest the first "
                f"{int(capped['rows'].iloc[0]):,} rows only (`rows_cap`); compare their rates, "
                "not their times."
            )
    if "mixed_machines" in df and df["mixed_machines"].fillna(False).astype(bool).any():
        mixed = df[df["mixed_machines"].fillna(False).astype(bool)]
        lines += [
            "",
            "**Mixed machines:** the runs of "
            + ", ".join(f"`{d}`" for d in mixed["dataset"].unique())
            + " ran on more than one kind of machine (CPU model or core count; see the `hosts` "
            "column and each run file's `host`), so their rates are not comparable with each "
            "other. Pin the ingestion jobs to one node type to compare them.",
        ]
    if "contended" in df and df["contended"].fillna(False).astype(bool).any():
        busy = df[df["contended"].fillna(False).astype(bool)]
        lines += [
            "",
            "**Contended:** "
            + ", ".join(f"`{d}/{v}`" for d, v in zip(busy["dataset"], busy["variant"], strict=True))
            + " shared the machine with another QuestDB or another job of this workflow during "
            "their repeats (each run file's `contention` says which, and the machine's load), so "
            "their rates are lower than the machine gives; rerun them alone to compare them.",
        ]
    failed = df[df["validated"] == False]  # noqa: E712 (nullable boolean)
    if not failed.empty:
        lines += [
            "",
            "**Failed validation:** "
            + ", ".join(
                f"`{d}/{v}`" for d, v in zip(failed["dataset"], failed["variant"], strict=True)
            )
            + ".",
        ]
    if unsupported:
        lines += ["", "**Unsupported on this data** (the method cannot load the table; nothing "
                  "was measured):", ""]  # fmt: skip
        lines += [f"- `{u['dataset']}/{u['variant']}`: {u['reason']}" for u in unsupported]
    return "\n".join(lines) + "\n"


def _warmth_sentence(df: pd.DataFrame) -> str:
    """Whether the medians describe a warm server (after a warm-up) or include a cold repeat."""
    warmed = df["warmup_rows"].fillna(0) > 0
    if warmed.all():
        rows = ", ".join(f"{n:,}" for n in sorted(set(df["warmup_rows"])))
        return (
            f"Every job first warmed its fresh server up with {rows} rows (untimed, `warmup_s`); "
            "medians are over the timed repeats, all warm."
        )
    if not warmed.any():
        return (
            "No warm-up: medians are over all repeats, the first (cold) one included "
            "(cold s = its end to end)."
        )
    return (
        "Some jobs warmed their server up first and some did not (`warmup_rows`): medians "
        "include a cold first repeat where cold s is given."
    )


def write_summary(
    run_paths: Iterable[Path],
    validation_paths: Iterable[Path],
    environment_path: Path | None,
    csv_path: Path,
    md_path: Path,
    expected_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    run_paths = list(run_paths)
    df = summarize(run_paths, validation_paths, expected_settings)
    env = load_json(environment_path, "environment file") if environment_path else None
    write_text_atomic(csv_path, df.to_csv(index=False))
    write_text_atomic(md_path, to_markdown(df, env, unsupported=unsupported_runs(run_paths)))
    log.info("summarized %d runs into %s and %s", len(df), csv_path, md_path)
    return df
