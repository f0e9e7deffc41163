"""Data directories carry their owner; only those whose owner is gone are removed."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

from ingestbench.ingest.contention import Contention, MachineBusy
from ingestbench.server import data_dir


def _dir(tmp_path, name: str):
    root = tmp_path / f"{data_dir.PREFIX}{name}"
    root.mkdir()
    (root / "db").mkdir()
    (root / "db" / "data").write_bytes(b"x" * 1000)
    return root


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_directories_whose_owner_is_gone_are_removed(tmp_path, caplog):
    mine = _dir(tmp_path, "mine")
    data_dir.claim(mine)
    dead = _dir(tmp_path, "dead")
    data_dir.claim(dead)
    owner = json.loads((dead / data_dir.OWNER_FILE).read_text())
    pid = _dead_pid()
    (dead / data_dir.OWNER_FILE).write_text(json.dumps({**owner, "pid": pid}))
    kept = _dir(tmp_path, "kept")  # no owner file: kept on purpose, or another version's
    elsewhere = _dir(tmp_path, "elsewhere")
    (elsewhere / data_dir.OWNER_FILE).write_text(json.dumps({**owner, "pid": pid, "host": "x"}))
    with caplog.at_level(logging.WARNING, logger="ingestbench.server.data_dir"):
        assert data_dir.remove_orphans(tmp_path) == [dead]
    assert mine.is_dir() and kept.is_dir() and elsewhere.is_dir() and not dead.exists()
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith(f"removed the QuestDB data directory {dead} (0 MiB) left by "
                              f"process {pid}, which is gone")  # fmt: skip
    assert data_dir.live_owner(mine) is not None
    data_dir.release(mine)
    assert data_dir.live_owner(mine) is None and data_dir.owner_gone(mine) is None


def test_an_exclusive_job_names_what_it_saw():
    busy = Contention(other_questdb={11}, other_jobs={22})
    assert busy.contended and busy.to_dict()["other_job_pids"] == [22]
    try:
        busy.refuse_if_busy()
    except MachineBusy as exc:
        assert str(exc).startswith("another run is active on this machine (QuestDB pid 11, the "
                                   "job of pid 22) and guards.exclusive is true")  # fmt: skip
    else:
        raise AssertionError("a busy machine was not refused")
    Contention().refuse_if_busy()  # nothing seen: no refusal
