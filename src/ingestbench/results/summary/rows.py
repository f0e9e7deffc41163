"""The summary's figures: one run file's row (statistics over its timed repeats, rates per
repeat), the speedups over the row loops, the validations and the machines the runs ran on.

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
  `iterrows` loop (QuestDB's published baseline, pandas only); `speedup_to_sql` against the
  dataset's pandas `to_sql` over PGWire (any library and format: the path most users start
  from), present when a run measured it.
- ceiling_fraction = median rows/s / the best `ilp_file` median rows/s of the dataset (ceiling.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench.errors import UserError
from ingestbench.results.records import (
    PHASES,
    STATS,
    TIMES,
    RunFile,
    SummaryRow,
    read_validation,
)
from ingestbench.server.versions import label_of

RATES = ("rows_per_s", "send_rows_per_s", "mib_per_s", "send_mib_per_s")
MIB = 2**20
# Per-repeat figures beside the phases; peak_rss_bytes only in run files of schema_version 1.
MEASURES = ("client_cpu_s", "server_cpu_s", "peak_rss_bytes", "client_rss_bytes",
            "server_rss_bytes", "overlap", "table_disk_bytes")  # fmt: skip


#: A summary with unsupported runs says of each row whether it was measured or why not.
STATUS, MEASURED, UNSUPPORTED = "status", "measured", "unsupported"


class SummaryError(UserError):
    pass


def backfill(df: pd.DataFrame) -> pd.DataFrame:
    """The backfill's rows, measured or unsupported: no status (a summary without unsupported
    runs), or one of those two. An experiment's rows carry a status of their own (paced's
    "paced", ingestbench.paced.summary) and are no backfill variant, whatever it adds later."""
    return df[df[STATUS].isna() | df[STATUS].isin((MEASURED, UNSUPPORTED))] if STATUS in df else df


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """The backfill's rows of runs that measured something (all but the unsupported)."""
    rows = backfill(df)
    return rows[rows[STATUS] != UNSUPPORTED] if STATUS in rows else rows


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
    # The server it ran on (server.versions' label), from the settings it recorded.
    row["server"] = label_of((record.settings or {}).get("questdb"))
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


def _same_server(df: pd.DataFrame, server: Any) -> pd.Series:
    """Rows of `server` (a label; a summary without the column, or a run without a label: all)."""
    if "server" not in df.columns or server is None or server != server:  # NaN: unlabelled
        return pd.Series(True, index=df.index)
    return df["server"] == server


def _baseline_for(row: pd.Series, baselines: pd.DataFrame) -> pd.Series | None:
    """The row-loop run of the same server, dataset, library and format; same transport
    preferred. Per server: a version's speedup is against its own loop, not another's."""
    if row["library"] == "none":
        return None
    candidates = baselines[
        _same_server(baselines, row.get("server"))
        & (baselines["dataset"] == row["dataset"])
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


#: The SQL path `speedup_to_sql` divides by.
TO_SQL = "to_sql"


def to_sql_speedups(df: pd.DataFrame) -> list[float] | None:
    """Each row's median rows/s over that of its server's and dataset's `to_sql` variant (the
    fastest, if several); None when no dataset has one."""
    # Per server and dataset (a summary without servers: one key for all)
    servers = df["server"].fillna("") if "server" in df.columns else pd.Series("", index=df.index)
    keyed = df.assign(_server=servers)
    to_sql = (keyed[keyed["method"] == TO_SQL].groupby(["_server", "dataset"])
              ["rows_per_s_median"].max())  # fmt: skip
    if to_sql.empty:
        return None
    return [_ratio(rate, to_sql[(s, d)]) if (s, d) in to_sql.index else math.nan
            for s, d, rate in zip(keyed["_server"], keyed["dataset"], keyed["rows_per_s_median"],
                                  strict=True)]  # fmt: skip


def load_validations(paths: Iterable[Path]) -> dict[tuple[str | None, str, str], bool]:
    """{(server, dataset, variant name): passed} from validation files; the server is the level
    above the dataset's folder (validation/<server>/<dataset>/), None in an older layout."""
    out = {}
    for path in paths:
        path = Path(path)
        result = read_validation(path)
        dataset = result.dataset or path.parent.name
        if isinstance(dataset, dict):
            dataset = dataset["name"]
        variant = result.variant.get("name") or path.stem
        server = path.parent.parent.name if path.parent.parent.name != "validation" else None
        out[(server, dataset, variant)] = bool(result.passed)
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
