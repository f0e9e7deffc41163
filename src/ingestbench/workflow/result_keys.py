"""Which keys of a config can change a result, and so what a job is given and what groups runs:
the benchmark's config (`benchmark_config`, its hash `config_hash`), the keys without effect
that any job may read (`without_effect`), and a job's whole config (`job_config`). Apart from
ingestbench.config because the experiments' keys come from workflow.experiments, which config,
below the workflow, cannot import.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ingestbench.config import merge_config, readers_off
from ingestbench.workflow.experiments import EXPERIMENTS

#: Keys that choose where results go or how they are drawn, or what a job refuses or gives up on,
#: and the experiments that cannot change the backfill's results (workflow.experiments): not the
#: benchmark, so runs that differ only in them are one config.
NOT_BENCHMARK_KEYS = frozenset(
    {"results_dir", "data_dir", "charts", "guards"}
    | {e.key for e in EXPERIMENTS if not e.changes_backfill}
)
#: Keys of a section that cannot change what a run measures or finds: where the jar is cached,
#: how long to wait for a server's start or stop, whether its data directory (or, on an external
#: server, its tables and their names) are kept for debugging, whether the server's certificate
#: is verified (at each connection's handshake, never per row); how much memory DuckDB takes
#: before it spills, whether an export is kept.
WITHOUT_EFFECT = {
    "questdb": frozenset(
        {
            "cache_dir",
            "keep_data",
            "startup_timeout_s",
            "shutdown_grace_s",
            "table_prefix",
            "keep_tables",
            "tls_verify",
        }
    ),
    "validation": frozenset({"memory_limit", "keep_export"}),
}


def benchmark_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config without the keys that cannot change a result."""
    out = {k: v for k, v in config.items() if k not in NOT_BENCHMARK_KEYS}
    for section, keys in WITHOUT_EFFECT.items():
        if isinstance(out.get(section), Mapping):
            out[section] = {k: v for k, v in out[section].items() if k not in keys}
    return out


def without_effect(config: Mapping[str, Any]) -> dict[str, Any]:
    """The keys that cannot change a result (NOT_BENCHMARK_KEYS, WITHOUT_EFFECT): a job may be
    given them without being rerun by them."""
    out = {k: v for k, v in config.items() if k in NOT_BENCHMARK_KEYS}
    for section, keys in WITHOUT_EFFECT.items():
        out[section] = {k: v for k, v in config.get(section, {}).items() if k in keys}
    return json.loads(json.dumps(out))


def job_config(settings: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """What a job reads: its settings (its params, config-shaped) over the keys without effect,
    and nothing else, so a key it reads either reruns it or cannot change its result."""
    return merge_config(without_effect(config), settings)


#: `questdb` keys of a secured external server, newer than archived runs: at these defaults
#: (an open server) they leave a config's hash as it was before them.
NEUTRAL_QUESTDB_DEFAULTS = {"tls": False, "tls_roots": None, "auth": None,
                            # the server axis (server.versions): one version, its defaults
                            "versions": None, "settings": []}  # fmt: skip


def config_hash(config: dict[str, Any]) -> str:
    """The benchmark's config as 16 hex digits: what groups runs for compare and history."""
    benchmark = benchmark_config(config)
    if isinstance(benchmark.get("questdb"), dict):
        benchmark["questdb"] = {k: v for k, v in benchmark["questdb"].items()
                                if NEUTRAL_QUESTDB_DEFAULTS.get(k, ...) != v}  # fmt: skip
    if readers_off(benchmark.get("readers")):  # newer than archived runs: off, no part of it
        benchmark.pop("readers", None)
    return hashlib.sha256(json.dumps(benchmark, sort_keys=True).encode()).hexdigest()[:16]
