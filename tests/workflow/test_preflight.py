"""Each config mistake the preflight catches, from a fresh clone: as `snakemake -n` and as
`ingestbench check`, each stops before any job is planned, naming the key, without a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingestbench.dev.workflow_copy import copy_workflow

ONE_VARIANT = (
    "variants:\n  - {library: pandas, method: dataframe, format: parquet, transport: http}\n"
)
#: (case, the config's text, a word the sentence names): the issue's table, row by row.
CASES = [
    ("results_dir", "results_dir: reference/default\n", "results_dir is 'reference/default'"),
    ("yaml", "repeats: 1\n  oops: [1, 2\n", "line 2, column 7"),
    ("other_format",
     "datasets:\n  - {label: mine, path: mine/t.parquet}\n"
     "variants:\n  - {library: pandas, method: dataframe, format: csv, transport: http}\n",
     "variants[0] plans pandas-dataframe-csv-http, which runs on no dataset"),
    ("missing_path", f"datasets:\n  - {{label: mine, path: mine/none.parquet}}\n{ONE_VARIANT}",
     "fix datasets[].path"),
    ("json", f"datasets:\n  - {{label: mine, path: mine/t.json}}\n{ONE_VARIANT}",
     "from its suffix (datasets[].path)"),
    ("timestamp",
     f"datasets:\n  - {{label: mine, path: mine/t.parquet, timestamp: when}}\n{ONE_VARIANT}",
     "set datasets[].timestamp to one of ts"),
    ("unset_env",
     "questdb: {mode: external, auth: {http: {username: admin, password_env: IB_PF_UNSET}}}\n",
     "questdb.auth.http.password_env names the environment variable IB_PF_UNSET"),
    ("host", 'questdb: {mode: external, host: "http://127.0.0.1:9000"}\n',
     "'questdb.host': 'http://127.0.0.1:9000' is not a host name or address"),
    ("label", f"datasets:\n  - {{label: my-data, scale: 2, epochs: 10}}\n{ONE_VARIANT}",
     "'my-data' is not a label: use lowercase letters, digits and _"),
    ("https",
     "variants:\n  - {library: pandas, method: dataframe, format: parquet, transport: https}\n",
     "set questdb.tls: true"),
]  # fmt: skip


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """One fresh clone for every case, with a small Parquet file and a .json beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    work = copy_workflow(tmp_path_factory.mktemp("preflight"))
    (work / "mine").mkdir()
    ts = pa.array(range(0, 10_000_000, 1_000_000), pa.timestamp("us"))
    pq.write_table(pa.table({"ts": ts, "v": pa.array(range(10), pa.float64())}),
                   work / "mine" / "t.parquet")  # fmt: skip
    (work / "mine" / "t.json").write_text("{}")
    for case, text, _ in CASES:
        (work / f"{case}.yaml").write_text(text)
    return work


def _said(workdir: Path, *cmd: str) -> tuple[int, str]:
    result = subprocess.run([sys.executable, "-m", *cmd], capture_output=True, text=True,
                            timeout=300, cwd=workdir)  # fmt: skip
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize(("case", "text", "named"), CASES, ids=[c[0] for c in CASES])
def test_a_config_mistake_stops_before_any_job_in_one_sentence(workdir, case, text, named):
    commands = [["ingestbench.cli", "check", "--config", f"{case}.yaml"]]
    if case != "yaml":  # Snakemake parses a --configfile itself, with its own message
        commands.append(["snakemake", "-n", "--cores", "1", "--configfile", f"{case}.yaml"])
    for cmd in commands:
        code, said = _said(workdir, *cmd)
        assert code == 1, said[-3000:]
        assert named in said, said[-3000:]
        assert "ERROR: " in said
        for stray in ("Traceback", 'File "', "Building DAG", "Job stats"):
            assert stray not in said, f"{stray!r} in {cmd}: {said[-3000:]}"


def test_a_good_config_plans_its_jobs_quietly(workdir):
    (workdir / "good.yaml").write_text(
        f"results_dir: results/mine\ndatasets:\n  - {{label: mine, path: mine/t.parquet}}\n"
        f"{ONE_VARIANT}"
    )
    code, said = _said(workdir, "ingestbench.cli", "check", "--config", "good.yaml")
    assert code == 0 and "no problem found" in said, said
    code, said = _said(workdir, "snakemake", "-n", "--cores", "1", "--configfile", "good.yaml")
    assert code == 0, said[-3000:]
    assert "pandas-dataframe-parquet-http" in said and "Shell command" not in said
