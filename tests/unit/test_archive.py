"""The archive of runs: documents built from a results folder, checked by the JSON Schema when
written and read, and the history across them (steps beyond the noise, in commit order)."""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from ingestbench.cli import EXIT_USER_ERROR, main
from ingestbench.publish.archive import (
    ArchiveError,
    build_document,
    check,
    read_archive,
    read_document,
    write_document,
)
from ingestbench.publish.history import report, series
from ingestbench.results.summary import read_summary
from tests.helpers import OWN, OWN_PROFILE, REFERENCE, with_own_data

RESULTS = REFERENCE


@pytest.fixture(scope="module")
def doc():
    return build_document(RESULTS, "reference")


def test_a_document_describes_machine_versions_commit_config_and_every_variant(doc):
    env = json.loads((RESULTS / "environment.json").read_text())
    summary = read_summary(RESULTS / "summary.csv", unsupported=True)  # the archive keeps both
    assert doc["workflow"]["git_commit"] == env["workflow"]["git_commit"]
    assert doc["id"] == (f"{env['timestamp_utc'][:10]}_{doc['machine']['id']}_"
                         f"{env['workflow']['git_commit'][:7]}_reference")  # fmt: skip
    assert doc["machine"]["id"].endswith(f"-{env['machine']['cores_logical']}c-24gib")
    assert doc["versions"]["questdb_server"] == env["questdb"]["version"]
    assert doc["versions"]["pandas"] and doc["versions"]["duckdb"]
    # Ports and paths are where a server ran, not how: left out of the settings.
    assert "http.net.bind.to" not in doc["versions"]["questdb_settings"]
    assert doc["versions"]["questdb_settings"]["shared.worker.sleep.timeout"] == "1"
    assert len(doc["variants"]) == len(summary)
    first = summary.iloc[0]
    v = next(v for v in doc["variants"] if v["variant"] == first["variant"]
             and v["dataset"] == first["dataset"])  # fmt: skip
    assert v["rows_per_s"]["median"] == pytest.approx(first["rows_per_s_median"])
    assert v["phases_s"]["send"]["max"] == pytest.approx(first["send_s_max"])
    assert v["client_cpu_s_per_1m_rows"] == pytest.approx(
        first["client_cpu_s_median"] / first["rows"] * 1e6
    )
    assert v["validated"] is True


def test_written_documents_read_back_and_name_machine_date_and_commit(tmp_path, doc):
    path = write_document(RESULTS, tmp_path, "reference")
    assert path.name == f"{doc['id']}.json"
    assert read_document(path) == json.loads(json.dumps(doc))
    assert [d["id"] for d in read_archive(tmp_path)] == [doc["id"]]


def test_a_document_that_fails_the_schema_is_refused_in_one_sentence(tmp_path, doc):
    bad = copy.deepcopy(doc)
    bad["variants"][0]["rows_per_s"]["median"] = "fast"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ArchiveError, match=r"the archive document .*bad.json does not match "
                       r"archive.schema.json \(at variants/0/rows_per_s/median: 'fast' is not of "
                       r"type 'number', 'null'\); fix or remove it\.$"):  # fmt: skip
        read_document(path)
    with pytest.raises(ArchiveError, match=r"at the top level: 'variants' is a required property"):
        check({k: v for k, v in doc.items() if k != "variants"}, "x.json")


def test_a_broken_document_is_skipped_with_a_warning_and_the_others_are_read(tmp_path, doc, caplog):
    good = write_document(RESULTS, tmp_path, "reference")
    (tmp_path / "truncated.json").write_text(good.read_text()[:200])
    (tmp_path / "hostile.json").write_text(json.dumps({**doc, "machine": "<script>"}))
    (tmp_path / "listed.json").write_text("[1, 2]")
    with caplog.at_level("WARNING", logger="ingestbench.publish.archive"):
        docs = read_archive(tmp_path)
    assert [d["id"] for d in docs] == [doc["id"]]
    warnings = sorted(r.getMessage() for r in caplog.records)
    assert len(warnings) == 3
    hostile, listed = tmp_path / "hostile.json", tmp_path / "listed.json"
    truncated = tmp_path / "truncated.json"
    assert f"the archive document {hostile} does not match archive.schema.json" in warnings[0]
    assert warnings[0].endswith("fix or remove it.")
    assert warnings[1].endswith(f"the archive document {listed} holds a JSON list, not an object; "
                                f"restore it (git checkout -- {listed}) or remove it (git rm "
                                f"{listed}).")  # fmt: skip
    assert warnings[2].startswith(f"skipped an archive document: the archive document {truncated} "
                                  f"is not valid JSON (")  # fmt: skip
    assert warnings[2].endswith(f"restore it (git checkout -- {truncated}) or remove it (git rm "
                                f"{truncated}).")  # fmt: skip


@pytest.mark.parametrize(("version", "advice"), [(2, "update ingestbench"), (0, "rebuild it")])
def test_other_schema_versions_are_named(doc, version, advice):
    with pytest.raises(ArchiveError, match=rf"has schema_version {version}, but this ingestbench "
                       rf"reads 1; {advice}"):  # fmt: skip
        check({**doc, "schema_version": version}, "old.json")


def test_a_results_folder_without_summary_is_named(tmp_path, capsys):
    shutil.copy(RESULTS / "environment.json", tmp_path / "environment.json")
    code = main(["archive", str(tmp_path), "--archive", str(tmp_path / "a")])
    assert code == EXIT_USER_ERROR
    err = capsys.readouterr().err
    assert f"{tmp_path / 'summary.csv'} does not exist" in err and "make run" in err
    assert not (tmp_path / "a").exists()


def _run(doc, commit: str, date: str, factor: float) -> dict:
    out = copy.deepcopy(doc)
    out["workflow"]["git_commit"] = commit * 40
    out["date_utc"] = date
    out["id"] = f"{date[:10]}_{out['machine']['id']}_{commit * 7}_reference"
    for v in out["variants"]:
        v["rows_per_s"] = {k: (x * factor if x is not None else None)
                           for k, x in v["rows_per_s"].items()}  # fmt: skip
    return out


def test_history_orders_by_commit_and_flags_steps_beyond_the_noise(doc):
    # Commit order differs from date order: b came before a in the history.
    runs = [
        _run(doc, "a", "2026-01-01T00:00:00Z", 1.0),
        _run(doc, "b", "2026-01-02T00:00:00Z", 1.0),
        _run(doc, "c", "2026-01-03T00:00:00Z", 0.5),
    ]
    order = {"b" * 40: 0, "a" * 40: 1, "c" * 40: 2}
    found = series(runs, order)
    measured = [v for v in doc["variants"] if v.get("status", "measured") == "measured"]
    assert len(found) == len(measured)  # an unsupported variant has no rate to follow
    for s in found:
        assert [p.commit for p in s.points] == ["bbbbbbb", "aaaaaaa", "ccccccc"]
        assert [p.step for p in s.points] == ["", "within noise", "slower"]
    text = report(found)
    assert "bbbbbbb → aaaaaaa → ccccccc" in text and "▼0.50x" in text
    assert f"{len(found)} step(s) beyond the noise" in text


def test_history_needs_two_runs_of_one_machine_and_config(doc):
    other = _run(doc, "b", "2026-01-02T00:00:00Z", 1.0)
    other["workflow"]["config_hash"] = "another"
    assert series([doc, other], {}) == []
    assert report([]).startswith("No machine and config has two archived runs yet")


def test_own_data_is_named_and_an_unsupported_variant_kept_with_its_reason(tmp_path):
    shutil.copytree(RESULTS, tmp_path / "r")
    with_own_data(tmp_path / "r")
    doc = build_document(tmp_path / "r", "own")  # checked against the schema
    own = {d["name"]: d for d in doc["datasets"]}[OWN["dataset"]]
    assert (own["label"], own["rows"], own["columns"], own["bytes"]) == (
        "mine", 500, 4, 9 * 2**20)  # fmt: skip
    key = (OWN["dataset"], OWN["unsupported"])
    gone = next(v for v in doc["variants"] if (v["dataset"], v["variant"]) == key)
    assert (gone["status"], gone["reason"]) == ("unsupported", OWN["reason"])
    assert gone["rows_per_s"]["median"] is None and gone["validated"] is None
    assert all("status" not in v for v in doc["variants"] if v is not gone)
    with pytest.raises(ArchiveError, match="status"):
        check({**doc, "variants": [{**gone, "status": "maybe"}]}, "x.json")


def test_a_run_with_experiment_rows_archives_its_backfill_variants_only(tmp_path):
    """Paced rows in summary.csv (status "paced", no format) are no backfill variant: archived,
    they would fail the schema. Neither is a row another experiment adds with a status of its
    own, nor does the delivery section of summary.md reach the archive."""
    import pandas as pd

    from ingestbench.paced.summary import PACED_STATUS

    shutil.copytree(RESULTS, tmp_path / "r")
    with_own_data(tmp_path / "r")  # unsupported rows too: those stay
    summary = tmp_path / "r" / "summary.csv"
    backfill = pd.read_csv(summary)
    paced = pd.DataFrame([
        {"dataset": "cpu-s100-e200-seed42", "variant": f"pandas-dataframe-parquet-http-f{flush}",
         "status": PACED_STATUS, "library": "pandas", "method": "dataframe", "transport": "http",
         "flush": flush, "paced_sustained_rows_per_s": 1000.0, "validated": True}
        for flush in ("arrival", "rows", "interval")
    ])  # fmt: skip
    other = pd.DataFrame([{"dataset": "cpu-s100-e1000-seed42", "variant": "dataframe-http",
                           "status": "delivery", "validated": False}])  # fmt: skip
    pd.concat([backfill, paced, other], ignore_index=True).to_csv(summary, index=False)
    with (tmp_path / "r" / "summary.md").open("a") as md:
        md.write("\n## Delivery under faults\n\n| path | kill |\n| --- | --- |\n| x | lost |\n")
    doc = read_document(write_document(tmp_path / "r", tmp_path / "archive", "paced"))
    kept = sorted((v["dataset"], v["variant"]) for v in doc["variants"])
    assert kept == sorted(zip(backfill["dataset"], backfill["variant"], strict=True))
    assert len(read_summary(summary, unsupported=True)) == len(backfill)
    assert len(read_summary(summary)) == (backfill["status"] != "unsupported").sum()


def test_a_datasets_profile_is_archived_with_its_recommendation_as_sentences(tmp_path):
    shutil.copytree(RESULTS, tmp_path / "r")
    with_own_data(tmp_path / "r")
    (tmp_path / "r" / "profiles.json").write_text(json.dumps({OWN["dataset"]: OWN_PROFILE}))
    doc = read_document(write_document(tmp_path / "r", tmp_path / "archive", "own"))
    own = next(d for d in doc["datasets"] if d["name"] == OWN["dataset"])
    assert own["profile"]["tables"] == OWN_PROFILE["tables"]
    assert own["profile"]["text"].endswith("use server_parquet: 1.6× the best client path.")
    assert all("profile" not in d for d in doc["datasets"] if d["name"] != OWN["dataset"])
    broken = copy.deepcopy(doc)
    del broken["datasets"][-1]["profile"]["tables"][0]["late_rows"]
    with pytest.raises(ArchiveError, match="late_rows"):
        check(broken, "broken.json")


def test_a_run_with_readers_keeps_its_figures_per_count_and_its_series():
    from tests.helpers import REPO

    [doc] = [d for d in read_archive(REPO / "archive") if d.get("series")]
    with_readers = [v for v in doc["variants"] if "readers" in v]
    assert with_readers and {v["readers"]["lag_basis"] for v in with_readers} <= {
        "txn", "gap", "n/a"}  # fmt: skip
    for v in with_readers:
        counts = [c["readers"] for c in v["readers"]["by_count"]]
        assert counts == [0, 2, 8]
        assert all("query_ms" in c and "errors" in c for c in v["readers"]["by_count"][1:])
    for s in doc["series"]:
        assert len(s["t_s"]) == len(s["rows_accepted"]) == len(s["rows_visible"]) > 1
        assert s["t_s"] == sorted(s["t_s"])
        assert all(v <= a for v, a in zip(s["rows_visible"], s["rows_accepted"], strict=True))
    # A run without readers has neither.
    plain = [d for d in read_archive(REPO / "archive") if not d.get("series")]
    assert plain and not any("readers" in v for d in plain for v in d["variants"])


def test_a_run_with_paced_and_delivery_archives_each_experiments_part(tmp_path):
    """The parts the page's sections show, from the files the summary read: paced's paths with
    their sustained rates and advice, delivery's matrix per server; and only for an experiment
    the run's config had."""
    from tests.helpers import results_with_every_part

    results = results_with_every_part(tmp_path / "r", experiments=False)
    assert "experiments" not in build_document(results, "none")  # not in the run's config
    results_with_every_part(results)
    parts = read_document(write_document(results, tmp_path / "archive", "both"))["experiments"]
    (path,) = parts["paced"]["paths"]
    assert (path["server"], path["flush"], path["paced_sustained_rows_per_s"]) == (
        "9.3.4",
        "arrival",
        1000.0,
    )
    assert "up to 1,000 rows/s" in parts["paced"]["recommendations"][0]["text"]
    (matrix,) = parts["delivery"]["servers"]
    assert matrix["server"] == "9.3.4" and matrix["faults"] == ["none", "kill"]
    tcp_kill = matrix["cells"]["dataframe-tcp"]["kill"]
    assert (tcp_kill["text"], tcp_kill["class"]) == ("lost 7 unknown (silent)", "lost")
    assert tcp_kill["cases"] == [{"at_s": 0.25, "verdict": "lost 7 unknown (silent)"}]
    assert matrix["cells"]["dataframe-http"]["kill"]["class"] == "duplicates"
    assert matrix["cells"]["dataframe-http"]["none"]["class"] == "exact"
    assert "`dataframe-http`" in matrix["recommendation"]


def test_a_run_of_several_servers_names_each_variant_by_its_server(tmp_path):
    import pandas as pd

    from tests.helpers import results_with_every_part

    summary = pd.read_csv(RESULTS / "summary.csv")
    doc = build_document(results_with_every_part(tmp_path / "r", older="8.2.0"), "servers")
    names = {(v["dataset"], v["name"]) for v in doc["variants"]}
    assert len(names) == len(doc["variants"]) == 2 * len(summary)
    first = summary.iloc[0]
    assert (first["dataset"], f"{first['variant']} @ 8.2.0") in names
    assert doc["servers"]["baseline"] == "9.3.4"
    ratios = {c["ratio"] for d in doc["servers"]["datasets"] for c in d["cells"]
              if c["server"] == "8.2.0" and c["status"] == "ok"}  # fmt: skip
    assert ratios and all(abs(r - 0.5) < 1e-9 for r in ratios)
