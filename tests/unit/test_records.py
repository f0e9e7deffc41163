"""The result files as typed records: old run files load, bad ones are refused in one sentence."""

from __future__ import annotations

import json

import pytest

from ingestbench.results.records import (
    SCHEMA_VERSION,
    RecordError,
    RunFile,
    read_run,
    read_validation,
    write_run,
)
from tests.helpers import FIXTURE_RESULTS

FIXTURES = FIXTURE_RESULTS
OLD_RUNS = sorted((FIXTURES / "runs").glob("*/*.json"))


def test_fixtures_are_run_files_from_before_the_records():
    assert OLD_RUNS and all(json.loads(p.read_text())["schema_version"] == 1 for p in OLD_RUNS)


@pytest.mark.parametrize("path", OLD_RUNS, ids=lambda p: p.stem)
def test_a_version_1_run_file_loads_and_keeps_every_field(path):
    run = read_run(path)
    old = json.loads(path.read_text())
    assert isinstance(run, RunFile) and run.schema_version == 1
    assert run.variant.name == path.stem and run.dataset.name == path.parent.name
    assert run.repeats[0].peak_rss_bytes == old["repeats"][0]["peak_rss_bytes"]
    assert run.host is None and run.warmup is None and run.repeats[0].client_rss_bytes is None
    assert _holds(run.to_dict(), old)  # nothing lost (fields the file lacks get defaults)


def _holds(new, old) -> bool:
    """Every key and value of `old` is in `new`, recursively."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and _holds(new[k], v) for k, v in old.items())
    if isinstance(old, list):
        return len(new) == len(old) and all(_holds(n, o) for n, o in zip(new, old, strict=True))
    return new == old


def test_rewriting_an_old_run_file_stamps_the_current_version(tmp_path):
    written = write_run(tmp_path / "run.json", json.loads(OLD_RUNS[0].read_text()))
    again = read_run(tmp_path / "run.json")
    assert written.schema_version == again.schema_version == SCHEMA_VERSION
    assert again.to_dict() == written.to_dict()


def test_new_optional_fields_and_unknown_ones_survive_a_round_trip(tmp_path):
    doc = json.loads(OLD_RUNS[0].read_text())
    doc["host"] = {"hostname": "n1", "slurm_job_id": None, "cpu_model": "x", "cpu_count": 2}
    doc["warmup"] = {"rows": 1000, "seconds": 0.5}
    doc["repeats"][0] |= {"client_rss_bytes": 1, "server_rss_bytes": 2, "overlap": 1.0}
    doc["repeats"][0]["something_newer"] = [1, 2]
    write_run(tmp_path / "run.json", doc)
    run = read_run(tmp_path / "run.json")
    assert run.host.hostname == "n1" and run.warmup.rows == 1000
    assert run.repeats[0].overlap == 1.0 and run.repeats[0].extra == {"something_newer": [1, 2]}
    assert _holds(run.to_dict(), doc | {"schema_version": SCHEMA_VERSION})


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "holds a JSON list, not an object"),
        (json.dumps({"rows": 3}), "is not a run file of this workflow (no schema_version)"),
        (json.dumps({"schema_version": 3}), "schema_version 3, but this ingestbench reads"),
        (json.dumps({"schema_version": 2, "passed": True}), "lacks dataset, variant, rows"),
        (
            json.dumps(
                {
                    "schema_version": 1,
                    "dataset": {"name": "d", "rows": 1},
                    "variant": {"name": "v"},
                    "rows": 1,
                    "repeats": [],
                }
            ),  # fmt: skip
            "variant lacks library",
        ),
    ],
)
def test_a_bad_run_file_is_refused_in_one_sentence_naming_it(tmp_path, content, fragment):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(RecordError) as info:
        read_run(bad)
    message = str(info.value)
    assert fragment in message and str(bad) in message and "\n" not in message
    assert "rerun" in message or "update ingestbench" in message


def test_a_newer_version_says_to_update(tmp_path):
    bad = tmp_path / "new.json"
    bad.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(RecordError, match="update ingestbench to read it"):
        read_run(bad)


def test_old_validation_files_load():
    for path in sorted((FIXTURES / "validation").glob("*/*.json")):
        result = read_validation(path)
        assert result.variant["name"] == path.stem and isinstance(result.passed, bool)
