"""Faults a hostile user (or a bad day) brings, against real servers: each test checks the sentence
the user sees, the exit status, that no result claims success, that no process it started is left
(by PID: other runs on the machine may have servers of their own),
and that a plain rerun recovers. Run alone with `pytest -m faults` (`make test-faults`).

docs/faults.md quotes the sentences these tests produce.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest
import yaml

from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.server.jar import record_path
from ingestbench.server.process import free_port
from tests.helpers import QUESTDB_VERSION, snakemake_command, wait_for

BIN = Path(sys.executable).parent
EXIT_USER_ERROR = 2
DEADLINE_S = 300  # a hung job fails its test instead of the whole suite


# ---------------------------------------------------------------------------------------------
# Helpers


class ProcessTree:
    """Every process started under `root` while it runs (polled), to prove none is left after."""

    def __init__(self, root: subprocess.Popen):
        self.root = root
        self.seen: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.05):
            try:
                for p in psutil.Process(self.root.pid).children(recursive=True):
                    self.seen.setdefault(p.pid, p)
            except psutil.NoSuchProcess:
                return

    def questdb(self) -> psutil.Process | None:
        return next((p for p in self.children() if "io.questdb" in _cmdline(p)), None)

    def workers(self) -> list[psutil.Process]:
        return [p for p in self.children() if "spawn_main" in _cmdline(p)]

    def children(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.root.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def survivors(self, grace_s: float = 5.0) -> list[int]:
        """Processes of the job still alive `grace_s` after it ended: a child told of its
        parent's death (the kernel's signal, a closed pipe) takes a moment to go; a leaked one
        stays."""
        self._stop.set()
        self._thread.join()
        deadline = time.monotonic() + grace_s
        while (alive := [pid for pid, p in self.seen.items() if _alive(p)]) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.1)
        return alive


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def ilp_connected(server: psutil.Process) -> bool:
    """A client holds an established connection to the server's ILP/TCP port: it is sending."""
    port = int(server.environ()["QDB_LINE_TCP_NET_BIND_TO"].rsplit(":", 1)[1])
    return any(
        c.status == psutil.CONN_ESTABLISHED and c.raddr and c.raddr.port == port
        for c in psutil.net_connections("tcp")
    )


def write_config(path: Path, **changes) -> Path:
    config = {
        "repeats": 1,
        "datasets": [{"label": "tiny", "scale": 40, "epochs": 50, "seed": 7}],
        "variants": [{"library": "pandas", "method": "dataframe", "format": "parquet"}],
        **changes,
    }
    # A shared, loaded machine can take minutes to start a server; that is not the fault tested.
    config["questdb"] = {"startup_timeout_s": 300, **changes.get("questdb", {})}
    path.write_text(yaml.safe_dump(config))
    return path


def ingest_cli(variant: str, data: Path, config: Path, out: Path, cwd: Path, **popen):
    cmd = [str(BIN / "ingestbench"), "ingest", variant, "--data", str(data), "--config",
           str(config), "--out", str(out)]  # fmt: skip
    return subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, **popen,
    )  # fmt: skip


def finish(proc: subprocess.Popen, tree: ProcessTree | None = None) -> tuple[int, str]:
    _, stderr = proc.communicate(timeout=DEADLINE_S)
    if tree is not None:
        assert tree.survivors() == [], "a process of the job outlived it"
    return proc.returncode, stderr


def error_sentence(stderr: str) -> str:
    """The one line the user reads: `ERROR: …`, and never a traceback."""
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("ERROR: ")]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


def assert_no_result(out: Path) -> None:
    assert not out.exists(), f"{out} claims success"
    leftovers = [p.name for p in out.parent.iterdir() if ".tmp-" in p.name]
    assert leftovers == [], f"half-written files left: {leftovers}"


def assert_plain_rerun_recovers(variant, data, config, out, cwd, rows) -> None:
    proc = ingest_cli(variant, data, config, out, cwd)
    tree = ProcessTree(proc)
    code, stderr = finish(proc, tree)
    assert code == 0, stderr[-3000:]
    assert yaml.safe_load(out.read_text())["rows"] == rows


def copy_cached_jar(questdb_jar: Path, cache: Path) -> Path:
    """A private copy of the verified jar and its record (the user's cache is never touched)."""
    from ingestbench.server.jar import fetch_jar

    fetch_jar(QUESTDB_VERSION, questdb_jar.parent)  # makes sure the record exists beside it
    cache.mkdir(parents=True, exist_ok=True)
    for source in (questdb_jar, record_path(questdb_jar)):
        shutil.copyfile(source, cache / source.name)
    return cache / questdb_jar.name


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def big_dataset(tmp_path_factory):
    """400,000 rows (about 140 MB of ILP): sending takes long enough to be killed in the middle."""
    from ingestbench.tsbs import DatasetParams, generate

    out = tmp_path_factory.mktemp("big")
    params = DatasetParams(scale=4000, epochs=100, seed=3)
    generate(params, out, formats=("parquet",), progress=False)
    return {"parquet": out / f"{params.name}.parquet", "rows": params.scale * params.epochs,
            "dir": out, "params": params}  # fmt: skip


@pytest.fixture(scope="session")
def private_cache(questdb_jar, tmp_path_factory):
    """A private copy of the cached jar, shared by the tests that only read it, with its JVM AOT
    cache made up front (as a run's first server start makes it): the servers the tests see are
    the jobs' own."""
    from ingestbench.server.aot import aot_cache_options
    from ingestbench.server.process import java_executable

    jar = copy_cached_jar(questdb_jar, tmp_path_factory.mktemp("private") / "cache")
    assert aot_cache_options(java_executable(None), jar, DEADLINE_S)
    return jar.parent


# ---------------------------------------------------------------------------------------------
# The server or a worker dies while rows are on the way


# Over TCP the client meets a killed server as a broken pipe or as a reset; a reset reads like
# the server closing the connection on a bad line, so that sentence names both causes.
_TCP_GONE = (
    r"(lost the connection to QuestDB|QuestDB closed the connection) \(ILP/tcp at 127\.0\.0\.1\)"
    r"(: over TCP it does so on a line it cannot take, .* or when it stops)?"
)
KILL_MID_SEND = [
    ("pandas-dataframe-parquet-tcp", _TCP_GONE),
    ("pandas-threads-parquet-tcp-w2", _TCP_GONE),
    ("pandas-processes-parquet-tcp-w2", r"a worker process failed \(\w+Error: .*\); check the"),
    ("none-server_parquet-parquet-http", r"QuestDB at http://127\.0\.0\.1:\d+ is unreachable"),
]


@pytest.mark.parametrize(("variant", "sentence"), KILL_MID_SEND, ids=[v for v, _ in KILL_MID_SEND])
def test_the_server_killed_mid_send(variant, sentence, big_dataset, private_cache, tmp_path):
    config = write_config(tmp_path / "c.yaml", questdb={"cache_dir": str(private_cache)})
    out = tmp_path / "run.json"
    proc = ingest_cli(variant, big_dataset["parquet"], config, out, tmp_path)
    tree = ProcessTree(proc)
    server = wait_for(tree.questdb, "the job's QuestDB")
    if "server_parquet" in variant:  # the file placed in the server's import root: the insert
        root = Path(server.cmdline()[server.cmdline().index("-d") + 1])
        wait_for(lambda: (root / "import" / big_dataset["parquet"].name).exists(), "the insert")
    else:
        wait_for(lambda: ilp_connected(server), "a client sending")
    server.kill()
    code, stderr = finish(proc, tree)
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.search(sentence, message), message
    assert_no_result(out)
    assert_plain_rerun_recovers(variant, big_dataset["parquet"], config, out, tmp_path,
                                big_dataset["rows"])  # fmt: skip


def test_a_worker_process_killed_mid_send(big_dataset, private_cache, tmp_path):
    variant = "pandas-processes-parquet-tcp-w2"
    config = write_config(tmp_path / "c.yaml", questdb={"cache_dir": str(private_cache)})
    out = tmp_path / "run.json"
    proc = ingest_cli(variant, big_dataset["parquet"], config, out, tmp_path)
    tree = ProcessTree(proc)
    server = wait_for(tree.questdb, "the job's QuestDB")
    wait_for(lambda: len(tree.workers()) == 2 and ilp_connected(server), "workers sending")
    tree.workers()[0].kill()
    code, stderr = finish(proc, tree)
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.search(r"a worker process died without a word \(exit codes \[.*-9.*\]\); check "
                     r"memory and the server log, then rerun this job\.", message)  # fmt: skip
    assert_no_result(out)
    assert_plain_rerun_recovers(variant, big_dataset["parquet"], config, out, tmp_path,
                                big_dataset["rows"])  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Bad inputs: the jar, the data, the server's address


def test_a_corrupted_cached_jar(tiny_dataset, questdb_jar, tmp_path):
    jar = copy_cached_jar(questdb_jar, tmp_path / "cache")
    data = bytearray(jar.read_bytes())
    data[1000:1016] = bytes(b ^ 0xFF for b in data[1000:1016])
    jar.write_bytes(bytes(data))
    config = write_config(tmp_path / "c.yaml", questdb={"cache_dir": str(jar.parent)})
    out, variant = tmp_path / "run.json", "pandas-dataframe-parquet-http"
    proc = ingest_cli(variant, tiny_dataset["parquet"], config, out, tmp_path)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    assert error_sentence(stderr) == (
        f"ERROR: the cached QuestDB jar {jar} is corrupted (its SHA-1 differs from the one in "
        f"{jar.name}.json); delete {jar} and rerun, the workflow downloads it again."
    )
    assert_no_result(out)
    jar.unlink()  # what the sentence says to do
    assert_plain_rerun_recovers(variant, tiny_dataset["parquet"], config, out, tmp_path, 2000)


@pytest.mark.parametrize("damage", ["truncated-parquet", "malformed-csv"])
def test_a_damaged_data_file(damage, tiny_dataset, private_cache, tmp_path):
    fmt = "parquet" if "parquet" in damage else "csv"
    good = tiny_dataset[fmt]
    data = tmp_path / good.name
    manifest = good.with_name(f"{tiny_dataset['params'].name}.manifest.json")
    shutil.copyfile(manifest, tmp_path / manifest.name)
    if fmt == "parquet":
        data.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    else:
        lines = good.read_text().splitlines(keepends=True)
        lines[1000] = "host_1,not,a,row\n"
        data.write_text("".join(lines))
    variant = f"pandas-dataframe-{fmt}-http"
    config = write_config(tmp_path / "c.yaml", questdb={"cache_dir": str(private_cache)})
    out = tmp_path / "run.json"
    proc = ingest_cli(variant, data, config, out, tmp_path)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert f"ERROR: cannot read {data} (" in message
    assert message.endswith("the file is corrupted or truncated: delete it and rerun so that the "
                            "generate rule writes it again.")  # fmt: skip
    assert_no_result(out)
    shutil.copyfile(good, data)  # what the generate rule writes again
    assert_plain_rerun_recovers(variant, data, config, out, tmp_path, 2000)


def _other_format(good: Path, data: Path) -> None:
    """The dataset's CSV where the variant reads Parquet."""
    shutil.copyfile(good.with_suffix(".csv"), data)


def _lacking_a_column(good: Path, data: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(good).drop_columns(["usage_user"]), data)


def _mistyped_column(good: Path, data: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(good)
    i = table.schema.get_field_index("usage_user")
    text = pa.array(["high"] * len(table))
    pq.write_table(table.set_column(i, "usage_user", text), data)


# Each case: how the input goes wrong, and the sentence that tells it from the others. Only a
# damaged file (test_a_damaged_data_file) is worth deleting; the others are good files in the
# wrong place, and their sentence says so.
INPUT_CASES = {
    "missing": (
        None,
        r"the data file {data} given to --data does not exist; check the path, or write the "
        r"dataset with `ingestbench generate` first\.",
    ),
    "other format": (
        _other_format,
        r"{data} holds text \(CSV, perhaps\), not Parquet, and this variant reads Parquet: "
        r"point it at the dataset's \.parquet file or choose a csv variant\.",
    ),
    "lacking a column": (
        _lacking_a_column,
        r"{data} lacks the column\(s\) \['usage_user'\] of the TSBS cpu table; it is not a file "
        r"this workflow generates: point the job at the dataset's generated file\.",
    ),
    "mistyped column": (
        _mistyped_column,
        r"column 'usage_user' of {data} holds (object|str|string)\S* where the TSBS cpu table has "
        r"numbers; it is not a file this workflow generates: point the job at the dataset's "
        r"generated file\.",
    ),
}


@pytest.mark.parametrize("case", INPUT_CASES)
def test_input_files_that_are_not_the_datasets_are_told_apart(
    case, tiny_dataset, private_cache, tmp_path
):
    make, sentence = INPUT_CASES[case]
    good = tiny_dataset["parquet"]
    data = tmp_path / good.name
    manifest = good.with_name(f"{tiny_dataset['params'].name}.manifest.json")
    shutil.copyfile(manifest, tmp_path / manifest.name)
    if make is not None:
        make(good, data)
    variant = "pandas-dataframe-parquet-http"
    config = write_config(tmp_path / "c.yaml", questdb={"cache_dir": str(private_cache)})
    out = tmp_path / "run.json"
    proc = ingest_cli(variant, data, config, out, tmp_path)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.fullmatch("ERROR: " + sentence.format(data=re.escape(str(data))), message), message
    assert "delete" not in message  # a good file is never to be deleted
    assert_no_result(out)
    if make is not None:
        assert data.exists()  # nothing the user gave is removed
    shutil.copyfile(good, data)  # the dataset's own file, where it should be
    assert_plain_rerun_recovers(variant, data, config, out, tmp_path, 2000)


def test_an_unreachable_external_server(tiny_dataset, questdb, tmp_path):
    port = free_port()
    config = write_config(tmp_path / "c.yaml", questdb={"mode": "external", "http_port": port})
    out, variant = tmp_path / "run.json", "pandas-dataframe-parquet-http"
    proc = ingest_cli(variant, tiny_dataset["parquet"], config, out, tmp_path)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    assert error_sentence(stderr) == (
        f"ERROR: QuestDB at http://127.0.0.1:{port} is unreachable (ConnectionError); check that "
        f"the server is running and questdb.host/http_port are right."
    )
    assert_no_result(out)
    external = {"mode": "external", "http_port": questdb.http_port, "ilp_port": questdb.ilp_port}
    write_config(config, questdb=external, table="faults_external")
    assert_plain_rerun_recovers(variant, tiny_dataset["parquet"], config, out, tmp_path, 2000)


# ---------------------------------------------------------------------------------------------
# A full disk (a file-size limit in the job's process: the server it talks to is not limited)


def _limit_file_size(limit: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def test_a_full_disk_while_writing_the_run_file(tiny_dataset, questdb, tmp_path):
    external = {"mode": "external", "http_port": questdb.http_port, "ilp_port": questdb.ilp_port}
    config = write_config(tmp_path / "c.yaml", questdb=external, table="faults_full_run")
    out, variant = tmp_path / "runs" / "run.json", "pandas-dataframe-parquet-http"
    out.parent.mkdir()
    proc = ingest_cli(variant, tiny_dataset["parquet"], config, out, tmp_path,
                      preexec_fn=_limit_file_size(200))  # fmt: skip
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    assert error_sentence(stderr) == (
        f"ERROR: no space left to write {out} (File too large); nothing half-written was kept: "
        f"free space on its disk (or raise the file size limit), then rerun."
    )
    assert_no_result(out)
    assert_plain_rerun_recovers(variant, tiny_dataset["parquet"], config, out, tmp_path, 2000)


EXPORT_JOB = """
import json, sys
from pathlib import Path
from ingestbench.config import Settings, load_config
from ingestbench.errors import run_reporting_user_errors
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.variants import parse_variant_name

config, data, manifest, out = sys.argv[1:5]
outs = [Path(out) / name for name in ("run.json", "actual.json", "export")]
run_reporting_user_errors(lambda: ingest_job(
    Settings.from_config(load_config(config)), parse_variant_name("pandas-dataframe-parquet-http"),
    IngestFiles(Path(data), Path(manifest), *outs)), exit_code=2)
"""


def test_a_full_disk_while_writing_the_export(tiny_dataset, questdb, tmp_path):
    """The workflow's ingest job writes the table's export before its run file."""
    external = {"mode": "external", "http_port": questdb.http_port, "ilp_port": questdb.ilp_port}
    config = write_config(tmp_path / "c.yaml", questdb=external, table="faults_full_export")
    out = tmp_path / "outs"
    out.mkdir()
    manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
    args = [sys.executable, "-c", textwrap.dedent(EXPORT_JOB), str(config),
            str(tiny_dataset["parquet"]), str(manifest), str(out)]  # fmt: skip
    limited = subprocess.run(args, capture_output=True, text=True, timeout=DEADLINE_S,
                             preexec_fn=_limit_file_size(20_000))  # fmt: skip
    assert limited.returncode == EXIT_USER_ERROR
    assert error_sentence(limited.stderr) == (
        f"ERROR: no space left to write {out / 'export'} (File too large); nothing "
        f"half-written was kept: free space on its disk (or raise the file size limit), then rerun."
    )
    assert sorted(p.name for p in out.iterdir()) == ["actual.json"], "no export, no run file"
    rerun = subprocess.run(args, capture_output=True, text=True, timeout=DEADLINE_S)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    pieces = list((out / "export" / "cpu").glob("*.parquet"))  # a directory of pieces per table
    assert pieces and sum(p.stat().st_size for p in pieces) > 20_000
    assert yaml.safe_load((out / "run.json").read_text())["rows"] == 2000


# ---------------------------------------------------------------------------------------------
# The workflow: Ctrl-C, and two clones at once


def snakemake(workdir: Path, config: Path, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen(snakemake_command(config, *args), cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            **popen)  # fmt: skip


def new_dir(path: Path) -> Path:
    path.mkdir()
    return path


def dry_run(workdir: Path, config: Path, *targets: str) -> str:
    proc = snakemake(workdir, config, "-n", *targets)
    output, _ = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 0, output[-3000:]
    return output


def test_ctrl_c_of_the_workflow_mid_repeat_then_a_plain_rerun(private_cache, tmp_path):
    workdir = copy_workflow(new_dir(tmp_path / "clone"))
    cache = private_cache
    dataset = {"label": "mid", "scale": 4000, "epochs": 50, "seed": 5}
    config = write_config(tmp_path / "c.yaml", repeats=3, datasets=[dataset],
                          questdb={"cache_dir": str(cache)})  # fmt: skip
    run = (
        workdir
        / f"results/runs/{QUESTDB_VERSION}/cpu-s4000-e50-seed5/pandas-dataframe-parquet-tcp.json"
    )
    target = str(run.relative_to(workdir))
    proc = snakemake(workdir, config, target)
    tree = ProcessTree(proc)
    server = wait_for(tree.questdb, "the ingest job's QuestDB", timeout_s=240)
    wait_for(lambda: ilp_connected(server) or not _alive(server), "a repeat sending")
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
    output, _ = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode != 0
    assert "Terminating processes on user request" in output, output[-3000:]
    assert tree.survivors() == []
    assert not run.exists()
    rerun = snakemake(workdir, config, target)  # plain: no --rerun-incomplete needed
    output, _ = rerun.communicate(timeout=DEADLINE_S)
    assert rerun.returncode == 0, output[-3000:]
    assert "IncompleteFilesException" not in output
    assert len(yaml.safe_load(run.read_text())["repeats"]) == 3


def test_two_clones_at_once_share_the_jar_and_never_rerun_each_other(tmp_path):
    cache = tmp_path / "shared-cache"  # empty: both clones download the jar at the same time
    variants = [{"library": "pandas", "method": ["dataframe", "rows"], "format": "parquet"}]
    clones = [copy_workflow(new_dir(tmp_path / name)) for name in ("a", "b")]
    configs = [write_config(tmp_path / f"{c.name}.yaml", variants=variants, rows_cap=300,
                            questdb={"cache_dir": str(cache)}) for c in clones]  # fmt: skip
    ds = f"results/validation/{QUESTDB_VERSION}/cpu-s40-e50-seed7"
    targets = [f"{ds}/pandas-dataframe-parquet-http.json", f"{ds}/pandas-rows-parquet-http.json",
               "results/environment.json"]  # fmt: skip
    procs = [snakemake(c, cfg, *targets) for c, cfg in zip(clones, configs, strict=True)]
    trees = [ProcessTree(proc) for proc in procs]
    for proc, tree in zip(procs, trees, strict=True):
        output, _ = proc.communicate(timeout=DEADLINE_S)
        assert proc.returncode == 0, output[-3000:]
        assert tree.survivors() == []
    jar = cache / f"questdb-{QUESTDB_VERSION}.jar"
    # One JVM AOT cache, made once, under its lock, by the first server start of either clone.
    (aot,) = [p.name for p in cache.iterdir() if p.suffix == ".aot"]
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [jar.name, f"{jar.name}.json", aot, f".{aot}.lock"]
    )
    os.utime(jar)  # the shared jar touched (as a re-download used to): nothing reruns
    for clone, config in zip(clones, configs, strict=True):
        assert "Nothing to be done" in dry_run(clone, config, *targets)


# ------------------------------------------------------------------------------------------------
# Rows the server refuses: silent over TCP, an error over HTTP


def _clashing_table(qdb, table, field_type="double", dedup=False):
    """The run's table (a name or a spec, as `recreate_table` takes), but with usage_user as
    LONG: the client's doubles clash with it."""
    from ingestbench.server.table import create_table_sql

    sql = create_table_sql(table, field_type, dedup)
    qdb.sql(f"DROP TABLE IF EXISTS {getattr(table, 'table', table)}")
    qdb.sql(sql.replace("usage_user DOUBLE", "usage_user LONG"))
    qdb.created_tables.add(getattr(table, "table", table))  # the run's own: dropped at its end


def _external(questdb, table: str):
    from ingestbench.config import Settings, validate_config

    server = {"mode": "external", "host": questdb.host, "http_port": questdb.http_port,
              "ilp_port": questdb.ilp_port}  # fmt: skip
    config = {"datasets": [{"label": "tiny", "scale": 40, "epochs": 50}],
              "variants": [{"method": "dataframe"}], "repeats": 1, "warmup_rows": 0,
              "table": table, "questdb": server}  # fmt: skip
    return Settings.from_config(validate_config(config))


def _ingest_files(dataset, out: Path):
    from ingestbench.ingest.job import IngestFiles

    return IngestFiles(
        data=dataset["parquet"],
        manifest=dataset["dir"] / f"{dataset['params'].name}.manifest.json",
        run=out / "run.json",
        actual=out / "actual.json",
        export=out / "export",
    )


def test_rows_the_server_drops_over_tcp_are_counted_and_are_no_result(
    questdb, tmp_path, monkeypatch
):
    """20 rows fit in the socket's buffers: the client has sent them all before the server
    closes the connection, so nothing tells the client; only the count does."""
    from ingestbench.ingest import runner
    from ingestbench.ingest.job import ingest_job
    from ingestbench.server import table as table_module
    from ingestbench.server.handle import QuestDBError
    from ingestbench.tsbs import DatasetParams, generate
    from ingestbench.variants import parse_variant_name

    params = DatasetParams(scale=2, epochs=10, seed=1)
    generate(params, tmp_path / "data", formats=("parquet",), progress=False)
    dataset = {"parquet": tmp_path / "data" / f"{params.name}.parquet",
               "dir": tmp_path / "data", "params": params}  # fmt: skip
    monkeypatch.setattr(runner, "recreate_table", _clashing_table)
    monkeypatch.setattr(table_module, "STALL_S", 3.0)  # the count stands still: give up soon
    files = _ingest_files(dataset, tmp_path)
    variant = parse_variant_name("pandas-dataframe-parquet-tcp")
    with pytest.raises(QuestDBError) as caught:
        ingest_job(_external(questdb, "t_clash_tcp"), variant, files)
    sentence = str(caught.value)
    assert re.fullmatch(
        r"table ingestbench_[0-9a-f]{8}_t_clash_tcp holds 0 rows but 20 were sent: 20 rows are "
        r"missing \(over ILP/TCP the server drops the lines it cannot take without telling the "
        r"client; its log names them\), so this run is no result: fix the data or the table, "
        r"then rerun\.",
        sentence,
    ), sentence
    # No run file: the summary, the charts and the archive never see this run.
    assert not files.run.exists() and not files.actual.exists()


def test_a_connection_the_server_closes_on_a_clash_is_named_as_such(
    questdb, big_dataset, tmp_path, monkeypatch
):
    """400,000 rows do not fit in any buffer: the client meets the closed connection itself."""
    from ingestbench.errors import UserError
    from ingestbench.ingest import runner
    from ingestbench.ingest.job import ingest_job
    from ingestbench.variants import parse_variant_name

    monkeypatch.setattr(runner, "recreate_table", _clashing_table)
    files = _ingest_files(big_dataset, tmp_path)
    variant = parse_variant_name("pandas-dataframe-parquet-tcp")
    with pytest.raises(UserError, match=r"^pandas-dataframe-parquet-tcp: QuestDB closed the "
                       r"connection \(ILP/tcp at 127\.0\.0\.1\): over TCP it does so on a line "
                       r"it cannot take, such as a value whose type clashes"):  # fmt: skip
        ingest_job(_external(questdb, "t_clash_reset"), variant, files)
    assert not files.run.exists()


def test_rows_the_server_refuses_over_http_stop_the_run_in_one_sentence(
    questdb, tiny_dataset, tmp_path, monkeypatch
):
    from ingestbench.errors import UserError
    from ingestbench.ingest import runner
    from ingestbench.ingest.job import ingest_job
    from ingestbench.variants import parse_variant_name

    monkeypatch.setattr(runner, "recreate_table", _clashing_table)
    files = _ingest_files(tiny_dataset, tmp_path)
    variant = parse_variant_name("pandas-dataframe-parquet-http")
    with pytest.raises(UserError) as caught:
        ingest_job(_external(questdb, "t_clash_http"), variant, files)
    sentence = str(caught.value)
    assert sentence.startswith("pandas-dataframe-parquet-http: QuestDB refused the rows (ILP/http")
    assert "usage_user" in sentence and "\n" not in sentence
    assert not files.run.exists()
