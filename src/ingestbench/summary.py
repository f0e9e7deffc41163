"""Turn run and validation files into results/summary.csv and results/summary.md.

One row per dataset and variant. Statistics cover every repeat, the cold one included (its end to
end time also gets a column of its own). Rates are computed per repeat and then summarised, so the
median rows/s is the median of the repeats' rows/s:

- rows/s      = rows / end_to_end          send rows/s = rows / send
- MiB/s       = ilp_bytes / 2**20 / end_to_end   send MiB/s = ilp_bytes / 2**20 / send
- speedup     = median rows/s / median rows/s of the `rows` baseline of the same dataset, library
  and format (rates, not times, because the `rows` method may ingest a capped prefix).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import UserError
from .files import write_text_atomic

log = logging.getLogger(__name__)

PHASES = ("read", "convert", "serialize", "send", "visible")
TIMES = (*PHASES, "end_to_end")
STATS = ("median", "min", "max")
RATES = ("rows_per_s", "send_rows_per_s", "mib_per_s", "send_mib_per_s")
ID_COLUMNS = [
    "dataset",
    "dataset_rows",
    "scale",
    "epochs",
    "seed",
    "field_type",
    "variant",
    "library",
    "method",
    "format",
    "transport",
    "workers",
    "batch_rows",
    "rows",
    "ilp_bytes",
    "ilp_protocol_version",
    "repeats",
]
MIB = 2**20


class SummaryError(UserError):
    pass


def _load_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise SummaryError(f"cannot read the {what} {path}: {exc.strerror}.") from None
    except json.JSONDecodeError as exc:
        raise SummaryError(
            f"the {what} {path} is not valid JSON ({exc.msg}); delete it and rerun its rule."
        ) from None
    if data.get("schema_version") != 1:
        raise SummaryError(
            f"the {what} {path} has schema_version {data.get('schema_version')!r}, expected 1; "
            f"delete it and rerun its rule."
        )
    return data


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


def run_row(run: dict[str, Any]) -> dict[str, Any]:
    """The summary row of one run file (without speedup and validation)."""
    ds, var = run["dataset"], run["variant"]
    repeats = run["repeats"]
    if not repeats:
        raise SummaryError(f"the run file of {ds['name']}/{var['name']} has no repeats; rerun it.")
    rows = _num(run.get("rows", ds.get("rows")))
    ilp_mib = _num(run.get("ilp_bytes")) / MIB
    row: dict[str, Any] = {
        "dataset": ds["name"],
        "dataset_rows": ds.get("rows"),
        "scale": ds.get("scale"),
        "epochs": ds.get("epochs"),
        "seed": ds.get("seed"),
        "field_type": ds.get("field_type"),
        "variant": var["name"],
        "library": var["library"],
        "method": var["method"],
        "format": var["format"],
        "transport": var["transport"],
        "workers": var.get("workers"),
        "batch_rows": var.get("batch_rows"),
        "rows": run.get("rows", ds.get("rows")),
        "ilp_bytes": run.get("ilp_bytes"),
        "ilp_protocol_version": run.get("ilp_protocol_version"),
        "repeats": len(repeats),
    }
    per_repeat: dict[str, list[float]] = {name: [] for name in (*TIMES, *RATES)}
    for extra in ("client_cpu_s", "server_cpu_s", "peak_rss_bytes"):
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
        for extra in ("client_cpu_s", "server_cpu_s", "peak_rss_bytes"):
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
    row["peak_rss_mib_max"] = _stats(per_repeat["peak_rss_bytes"])["max"] / MIB
    return row


def _baseline_for(row: pd.Series, baselines: pd.DataFrame) -> pd.Series | None:
    """The `rows` run of the same dataset, library and format; same transport preferred."""
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


def add_speedups(df: pd.DataFrame) -> pd.DataFrame:
    baselines = df[df["method"] == "rows"]
    speedups, names = [], []
    for _, row in df.iterrows():
        base = _baseline_for(row, baselines)
        if base is None:
            speedups.append(math.nan)
            names.append(None)
        else:
            speedups.append(_ratio(row["rows_per_s_median"], base["rows_per_s_median"]))
            names.append(base["variant"])
    df["speedup_vs_rows"] = speedups
    df["baseline_variant"] = pd.Series(names, index=df.index, dtype="object")
    return df


def load_validations(paths: Iterable[Path]) -> dict[tuple[str, str], bool]:
    """{(dataset, variant name): passed} from validation files."""
    out = {}
    for path in paths:
        path = Path(path)
        data = _load_json(path, "validation file")
        dataset = data.get("dataset") or path.parent.name
        if isinstance(dataset, dict):
            dataset = dataset["name"]
        variant = data.get("variant", {}).get("name") or path.stem
        out[(dataset, variant)] = bool(data.get("passed"))
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


def summarize(run_paths: Iterable[Path], validation_paths: Iterable[Path] = ()) -> pd.DataFrame:
    """The summary table: one row per dataset and variant, sorted by dataset and rows/s."""
    runs = [_load_json(Path(p), "run file") for p in run_paths]
    rows = [run_row(run) for run in runs]
    if not rows:
        raise SummaryError("there are no run files to summarize; the config selects no variant.")
    df = pd.DataFrame(rows)
    df = add_speedups(df)
    validations = load_validations(validation_paths)
    validated = [validations.get((d, v)) for d, v in zip(df["dataset"], df["variant"], strict=True)]
    # True/False from the validation file; <NA> only if a run has no validation file at all.
    df["validated"] = pd.array(validated, dtype="boolean")
    df["hosts"], df["mixed_machines"] = host_columns(runs)
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
    ):
        df[col] = pd.array(pd.to_numeric(df[col]), dtype="Int64")
    df = df.sort_values(
        ["dataset_rows", "dataset", "rows_per_s_median"], ascending=[False, True, False]
    )
    return df.reset_index(drop=True)


def read_summary(path: Path) -> pd.DataFrame:
    """summary.csv as written by write_summary (booleans and integers restored)."""
    df = pd.read_csv(path)
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


def to_markdown(df: pd.DataFrame, env: dict[str, Any] | None = None, top: int = 20) -> str:
    """A readable table per dataset: the `top` variants by median end-to-end rows/s."""
    lines = ["# Ingestion benchmark summary", "", machine_line(env), ""]
    lines.append(
        "Medians over all repeats (the cold first one included); ranges are min–max. "
        "End to end = read + convert + send + visible. MiB are ILP bytes. Speedup is against "
        "the `rows` loop of the same library and format. Every column is in `summary.csv`."
    )
    for dataset, group in df.groupby("dataset", sort=False):
        group = group.sort_values("rows_per_s_median", ascending=False)
        first = group.iloc[0]
        lines += ["", f"## {dataset}: {int(first['dataset_rows']):,} rows", ""]
        lines.append(
            "| # | variant | rows/s (min–max) | MiB/s | end to end s | cold s | "
            "speedup | validated |"
        )
        lines.append("|---:|---|---:|---:|---:|---:|---:|:---:|")
        for i, (_, r) in enumerate(group.head(top).iterrows(), start=1):
            rate = (
                f"{_fmt_rate(r['rows_per_s_median'])} "
                f"({_fmt_rate(r['rows_per_s_min'])}–{_fmt_rate(r['rows_per_s_max'])})"
            )
            speedup = "–" if pd.isna(r["speedup_vs_rows"]) else f"{r['speedup_vs_rows']:.1f}×"
            validated = {True: "yes", False: "**FAILED**"}.get(r["validated"], "not checked")
            lines.append(
                f"| {i} | `{r['variant']}` | {rate} | {_fmt_rate(r['mib_per_s_median'], 1, 1)} | "
                f"{r['end_to_end_s_median']:.2f} | {r['cold_end_to_end_s']:.2f} | {speedup} | "
                f"{validated} |"
            )
        if len(group) > top:
            lines.append("")
            lines.append(f"{len(group) - top} more variants in `summary.csv`.")
        capped = group[(group["method"] == "rows") & (group["rows"] < group["dataset_rows"])]
        if not capped.empty:
            lines.append("")
            lines.append(
                f"The `rows` variants ingest the first {int(capped['rows'].iloc[0]):,} "
                "rows only (`rows_cap`); compare their rates, not their times."
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
    return "\n".join(lines) + "\n"


def write_summary(
    run_paths: Iterable[Path],
    validation_paths: Iterable[Path],
    environment_path: Path | None,
    csv_path: Path,
    md_path: Path,
) -> pd.DataFrame:
    df = summarize(run_paths, validation_paths)
    env = json.loads(Path(environment_path).read_text()) if environment_path else None
    write_text_atomic(csv_path, df.to_csv(index=False))
    write_text_atomic(md_path, to_markdown(df, env))
    log.info("summarized %d runs into %s and %s", len(df), csv_path, md_path)
    return df
