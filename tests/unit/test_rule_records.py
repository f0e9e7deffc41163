"""Each job's record of what its outputs were made under, and the judgement made from it when
the DAG is built (the workflow's own rerun trigger; tests/workflow/test_reruns.py runs it)."""

from __future__ import annotations

from types import SimpleNamespace

from ingestbench.workflow.rule_records import (
    needs_rerun,
    record_path,
    recorded_digest,
    settings_digest,
    stale_outputs,
    write_record,
)


def job(output, **params):
    """What stale_outputs reads of a Snakemake job: its outputs and its params."""
    return SimpleNamespace(output=[str(output)], params=SimpleNamespace(items=params.items))


def test_the_record_sits_beside_the_output_in_a_hidden_folder(tmp_path):
    out = tmp_path / "runs" / "ds" / "v.json"
    assert record_path(out) == tmp_path / "runs" / "ds" / ".settings" / "v.json.json"


def test_an_output_made_under_these_settings_and_code_does_not_rerun(tmp_path):
    out = tmp_path / "v.json"
    out.write_text("{}")
    write_record(out, {"repeats": 3, "questdb": {"worker_idle": "park"}}, "abc")
    assert recorded_digest(out) == settings_digest(
        {"repeats": 3, "questdb": {"worker_idle": "park"}}, "abc"
    )
    assert not needs_rerun(out, {"questdb": {"worker_idle": "park"}, "repeats": 3}, "abc")


def test_other_settings_other_code_or_no_record_rerun(tmp_path):
    out = tmp_path / "v.json"
    out.write_text("{}")
    assert needs_rerun(out, {"repeats": 3}, "abc")  # no record: nothing says what made it
    write_record(out, {"repeats": 3}, "abc")
    assert needs_rerun(out, {"repeats": 2}, "abc")
    assert needs_rerun(out, {"repeats": 3}, "abd")
    record_path(out).write_text("not json")
    assert needs_rerun(out, {"repeats": 3}, "abc")  # an unreadable record claims nothing


def test_a_missing_output_is_left_to_snakemake(tmp_path):
    assert not needs_rerun(tmp_path / "absent.json", {"repeats": 3}, "abc")


def test_tuples_and_lists_are_one_setting(tmp_path):
    """Params reach a script through Snakemake as they were given; JSON makes them equal."""
    out = tmp_path / "v.json"
    out.write_text("{}")
    write_record(out, {"formats": ["parquet", "csv"]}, "abc")
    assert not needs_rerun(out, {"formats": ("parquet", "csv")}, "abc")


def test_the_stale_outputs_of_a_dag_are_those_whose_records_differ(tmp_path):
    fresh, stale, bare = (tmp_path / n for n in ("fresh.json", "stale.json", "bare.json"))
    for path in (fresh, stale, bare):
        path.write_text("{}")
    write_record(fresh, {"k": 1}, "c")
    write_record(stale, {"k": 1}, "c")
    jobs = [
        job(fresh, settings={"k": 1}, code="c"),
        job(stale, settings={"k": 2}, code="c"),
        job(bare),  # a rule without settings (the `all` target): never judged
        job(tmp_path / "missing.json", settings={"k": 1}, code="c"),
    ]
    assert stale_outputs(jobs) == [str(stale)]
