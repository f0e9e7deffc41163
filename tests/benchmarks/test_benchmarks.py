"""The benchmarks (benchmarks/README.md) run on tiny inputs, print their tables and keep their
findings."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers import REPO


def bench(script: str, *args: str) -> str:
    cmd = [sys.executable, str(REPO / "benchmarks" / script), *args]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_bench_generate_prints_a_row_per_size_and_format():
    out = bench("bench_generate.py", "--rows", "2000", "--formats", "parquet", "csv",
                "--scale", "40", "--repeats", "1")  # fmt: skip
    rows = [line for line in out.splitlines() if re.match(r"\|\s+2,000 \|", line)]
    assert [r.split("|")[2].strip() for r in rows] == ["parquet", "csv"]


def test_a_benchmark_run_through_make_keeps_its_findings_with_where_and_when(tmp_path):
    env = {**os.environ, "FINDINGS_ROOT": str(tmp_path)}
    cmd = [sys.executable, str(REPO / "benchmarks" / "findings.py"), "generate", "--rows", "2000",
           "--formats", "csv", "--scale", "40", "--repeats", "1"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    (folder,) = tmp_path.iterdir()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d-generate", folder.name)
    assert sorted(p.name for p in folder.iterdir()) == ["generate.json", "meta.json", "output.txt"]
    meta = json.loads((folder / "meta.json").read_text())
    assert re.fullmatch(r"[0-9a-f]{40}", meta["git_commit"])
    assert meta["machine"]["cores_logical"] >= 1 and meta["host"]["hostname"]
    assert meta["started_utc"].endswith("Z") and meta["packages"]["pandas"]
    assert meta["command"][:2] == ["make", "bench-generate"]
    assert "2,000 | csv" in (folder / "output.txt").read_text()
    figures = json.loads((folder / "generate.json").read_text())
    assert figures, "the benchmark's own figures are in the folder"


def test_a_failed_benchmark_leaves_no_findings(tmp_path):
    env = {**os.environ, "FINDINGS_ROOT": str(tmp_path)}
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "findings.py"),
        "interleaved",
        "no-such-variant",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode != 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.server
def test_bench_ceiling_measures_every_case_against_a_real_server():
    out = bench("bench_ceiling.py", "--scale", "40", "--epochs", "50", "--loop-rows", "500",
                "--repeats", "1")  # fmt: skip
    rates = dict(re.findall(r"^(.+?)\s{2,}([\d,]+)\s+[\d.]+x", out, re.MULTILINE))
    assert set(rates) == {
        "rows loop (itertuples + row()), HTTP",
        "dataframe(), HTTP",
        *(
            f"ceiling: pre-serialized {version}, {pair}"
            for version in ("v1 text", "v2 binary")
            for pair in ("HTTP x1", "HTTP x2", "TCP x1", "TCP x2")
        ),
        "ilp_file: ILP text file, TCP x1",
        "ilp_file: ILP text file, TCP x2",
        "ilp_file: ILP text file, HTTP x1",
    }
    assert all(int(rate.replace(",", "")) > 0 for rate in rates.values())
    assert "the 25x target needs dataframe() at" in out
    side_by_side = re.findall(r"^(\w+ x\d): ilp_file\s+[\d,]+\s+pre-serialized v1 text\s+[\d,]+"
                              r"\s+[\d.]+%\s+pre-serialized v2 binary\s+[\d,]+\s+[\d.]+%$",
                              out, re.MULTILINE)  # fmt: skip
    assert side_by_side == ["HTTP x1", "TCP x1", "TCP x2"]


@pytest.mark.server
def test_bench_interleaved_runs_the_named_variants_interleaved():
    out = bench("bench_interleaved.py", "pandas-dataframe-csv-http", "polars-rows-parquet-tcp",
                "--scale", "40", "--epochs", "50", "--repeats", "2")  # fmt: skip
    rows = re.findall(r"^(\S+-\S+)\s+([\d.]+)\s+([\d.]+)", out, re.MULTILINE)
    assert [(name, ratio) for name, _, ratio in rows][0] == ("pandas-dataframe-csv-http", "1.00")
    assert [name for name, *_ in rows] == ["pandas-dataframe-csv-http", "polars-rows-parquet-tcp"]


def test_bench_interleaved_refuses_a_bad_variant_name():
    script = str(REPO / "benchmarks" / "bench_interleaved.py")
    result = subprocess.run([sys.executable, script, "pandas-teleport-csv-http"],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2
    assert "not a valid variant name: 'pandas-teleport-csv-http'" in result.stderr


def test_bench_scale_measures_each_size_and_validation(tmp_path):
    out = tmp_path / "out" / "scale.csv"
    printed = bench("bench_scale.py", "2000", "3000", "--scale", "40", "--variants",
                    "pandas-dataframe-parquet-tcp", "pandas-processes-parquet-http-w2",
                    "--data-dir", str(tmp_path / "data"), "--out", str(out))  # fmt: skip
    rows = list(csv.DictReader(out.open()))
    assert {(r["rows"], r["variant"]) for r in rows} >= {
        ("2000", "pandas-dataframe-parquet-tcp"),
        ("2000", "pandas-processes-parquet-http-w2"),
        ("2000", "validation"),
        ("3000", "pandas-dataframe-parquet-tcp"),
        ("3000", "validation"),
    }
    assert all(float(r["client_rss_mib"]) > 0 for r in rows)
    assert all(int(r["rows_per_s"]) > 0 for r in rows if r["variant"] != "validation")
    assert [r["passed"] for r in rows if r["variant"] == "validation"] == ["True", "True"]
    runs = [r for r in rows if r["variant"] != "validation"]
    assert all(float(r["server_cpu_s_per_1m"]) > 0 for r in runs)
    assert all(float(r["cpu_busy"]) > 0 for r in runs)
    assert "client_rss_mib" in printed and f"wrote {out}" in printed
    assert sorted(p.name for p in (tmp_path / "data").glob("*.parquet")) == [
        "cpu-s40-e50-seed42.parquet", "cpu-s40-e75-seed42.parquet"]  # fmt: skip


def test_bench_scale_rounds_alternate_the_modes_and_give_the_median_ratio(tmp_path):
    out = tmp_path / "scale.csv"
    printed = bench("bench_scale.py", "2000", "--scale", "40", "--rounds", "2", "--variants",
                    "pandas-dataframe-parquet-tcp", "--data-dir", str(tmp_path / "data"),
                    "--out", str(out))  # fmt: skip
    rows = [r for r in csv.DictReader(out.open()) if r["round"]]  # validation has no round
    runs = [(r["round"], r["mode"]) for r in rows]
    assert runs == [("1", "streamed"), ("1", "whole-file"), ("2", "whole-file"), ("2", "streamed")]
    assert printed.count("warming the server up: 2,000 rows with each of 2 variants") == 1
    rates = {(r["round"], r["mode"]): int(r["rows_per_s"]) for r in rows}
    ratios = [rates[(k, "streamed")] / rates[(k, "whole-file")] for k in ("1", "2")]
    line = re.search(r"pandas-dataframe-parquet-tcp: streamed / whole-file = ([\d.]+)x median "
                     r"\(rounds: ([\d.]+), ([\d.]+)\)", printed)  # fmt: skip
    assert line, printed
    assert [float(x) for x in line.groups()[1:]] == [round(r, 2) for r in ratios]
    assert float(line.group(1)) == round((ratios[0] + ratios[1]) / 2, 2)


def test_bench_client_cpu_takes_the_serializer_apart_on_both_field_types():
    out = bench("bench_client_cpu.py", "--scale", "40", "--epochs", "50", "--repeats", "1",
                "--e2e-repeats", "1")  # fmt: skip
    sections = re.split(r"^(double|long) fields", out, flags=re.MULTILINE)[1:]
    steps_of = {kind: text for kind, text in zip(sections[::2], sections[1::2], strict=True)
                if not text.startswith(" end to end")}  # fmt: skip
    assert set(steps_of) == {"double", "long"}
    for kind, text in steps_of.items():
        steps = re.findall(r"^(pandas|polars)\s+(.+?)\s+([\d.]+)\s*(\d*)$", text, re.MULTILINE)
        cpu = {(lib, step): float(c) for lib, step, c, _ in steps}
        size = {step: int(b) for lib, step, _, b in steps if b and lib == "pandas"}
        assert set(cpu) == {
            (lib, step)
            for lib in ("pandas", "polars")
            for step in (
                "read + convert",
                "serialize, all columns",
                "serialize, 10 tags (symbols)",
                "serialize, 10 fields",
                "vectorized: read + → Arrow",
                "vectorized: encode, all columns",
            )  # fmt: skip
        }, kind
        assert all(c >= 0 for c in cpu.values())
        # The vectorized encoder writes the very bytes the client does.
        assert size["vectorized: encode, all columns"] == size["serialize, all columns"]
        # The parts share the table name and the timestamp: more than the whole together.
        tags, fields = size["serialize, 10 tags (symbols)"], size["serialize, 10 fields"]
        assert max(tags, fields) < size["serialize, all columns"] < tags + fields
    # End to end against a real server: every path, with its ratio to the ceiling (first, 1.00).
    for kind in ("double", "long"):
        table = out.split(f"{kind} fields end to end")[1]
        found = re.findall(r"^(\S+-\S+)\s+([\d,]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$",
                           table, re.MULTILINE)  # fmt: skip
        assert [f[0] for f in found][:4] == [
            "none-ilp_file-ilp-tcp-w2", "pandas-vectorized-parquet-tcp-w2",
            "polars-vectorized-parquet-tcp-w2", "pandas-dataframe-parquet-tcp",
        ]  # fmt: skip
        assert found[0][2] == "1.00" and all(float(f[3]) > 0 for f in found)


def test_bench_overhead_splits_a_runs_wall_time(tmp_path):
    log = tmp_path / "run.snakemake.log"
    log.write_text(
        "[Wed Nov 25 04:00:00 2026]\nlocalrule generate:\n    jobid: 1\n"
        "[Wed Nov 25 04:00:10 2026]\nFinished jobid: 1 (Rule: generate)\n"
        "[Wed Nov 25 04:00:10 2026]\nrule ingest:\n    jobid: 2\n"
        "[Wed Nov 25 04:01:10 2026]\nFinished jobid: 2 (Rule: ingest)\n"
    )
    runs = tmp_path / "results" / "runs" / "9.3.4" / "ds"  # runs/<server>/<dataset>/
    runs.mkdir(parents=True)
    repeats = [{"end_to_end": 10.0, "phases": {"serialize": 2.0}} for _ in range(3)]
    (runs / "v.json").write_text(json.dumps({"repeats": repeats, "warmup": {"seconds": 5.0}}))
    out = bench("bench_overhead.py", "--log", str(log), "--results", str(tmp_path / "results"))
    lines = {line[:66].strip(): line[66:].split() for line in out.splitlines()[3:]}
    assert lines["Snakemake wall time"] == ["70", "100%"]
    assert lines["rule ingest (1 jobs)"] == ["60", "86%"]
    assert lines["ingest: timed repeats (end to end)"] == ["30", "43%"]
    assert lines["ingest: serialize passes"] == ["6", "9%"]
    assert lines["ingest: warm-ups"] == ["5", "7%"]
    assert lines["ingest: the rest (server start/stop, imports, tables, waits)"][0] == "19"


def test_bench_run_adds_up_the_sittings_of_one_label(tmp_path):
    from ingestbench.dev.workflow_copy import copy_workflow

    workdir = copy_workflow(tmp_path)
    for _ in range(2):
        out = bench("bench_run.py", "--workdir", str(workdir), "--label", "dry", "--", "-n")
    rows = list(csv.DictReader((workdir / "results/benchmarks/bench_run.csv").open()))
    assert [(r["label"], r["exit"]) for r in rows] == [("dry", "0"), ("dry", "0")]
    assert all(float(r["client_rss_gib"]) > 0 for r in rows)  # Snakemake itself, at least
    total = sum(float(r["wall_s"]) for r in rows) / 60
    assert f"2 sitting(s): {total:.1f} min in all" in out


def test_bench_run_passes_snakemake_s_failure_on(tmp_path):
    from ingestbench.dev.workflow_copy import copy_workflow

    workdir = copy_workflow(tmp_path)
    cmd = [sys.executable, str(REPO / "benchmarks/bench_run.py"), "--workdir", str(workdir),
           "--", "-n", "results/no/such/target.json"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    rows = list(csv.DictReader((workdir / "results/benchmarks/bench_run.csv").open()))
    assert [r["exit"] for r in rows] == ["1"]


def _perf_can_sample() -> bool:
    import shutil

    perf = shutil.which("perf")
    if perf is None:
        return False
    probe = subprocess.run([perf, "record", "-q", "-o", os.devnull, "--", "true"],
                           capture_output=True, timeout=60)  # fmt: skip
    return probe.returncode == 0


@pytest.mark.skipif(not _perf_can_sample(), reason="perf is missing or may not sample here")
def test_bench_client_perf_sorts_the_client_s_samples_by_thread_and_work():
    out = bench("bench_client_perf.py", "--scale", "400", "--epochs", "50", "--repeats", "2")
    assert re.search(r"pandas-vectorized-parquet-tcp-w2, double fields: 20,000 rows", out)
    samples = int(re.search(r"(\d+) on-CPU samples of the client process", out).group(1))
    assert samples > 0
    blocks = {b.split()[0]: b for b in out.split("\n\n") if b.strip()}
    row = re.compile(r"^(\S.*?)\s+([\d.]+)%$", re.MULTILINE)
    threads = {name: float(v) for name, v in row.findall(blocks["thread"])}
    kinds = {name: float(v) for name, v in row.findall(blocks["work"])}
    # The workers encode and send; every sample has one thread and one kind of work.
    assert threads["workers"] > 0
    assert sum(threads.values()) == pytest.approx(100, abs=0.5)
    assert sum(kinds.values()) == pytest.approx(100, abs=0.5)


def test_bench_server_start_times_starts_with_and_without_the_aot_cache():
    out = bench("bench_server_start.py", "--rounds", "1")
    rows = dict(re.findall(r"^((?:with|without) the AOT cache)\s+([\d.]+)\s+[\d.]+$", out,
                           re.MULTILINE))  # fmt: skip
    assert set(rows) == {"with the AOT cache", "without the AOT cache"}
    assert all(float(s) > 0 for s in rows.values())
    assert re.search(r"overlapping the start: [\d.]+ s", out)


def test_bench_arrow_pool_runs_the_path_on_each_pool_in_turn():
    out = bench("bench_arrow_pool.py", "--scale", "40", "--epochs", "50", "--repeats", "1")
    rows = re.findall(
        r"^(mimalloc|system) \(.+?\)\s+([\d,]+)\s+([\d.]+)\s+(\d+)$", out, re.MULTILINE
    )
    assert [r[0] for r in rows] == ["mimalloc", "system"]
    assert all(int(r[1].replace(",", "")) > 0 and int(r[3]) > 0 for r in rows)


@pytest.mark.parametrize("field_type", ["double", "long"])
def test_a_benchmark_job_creates_the_columns_of_its_field_type(field_type, monkeypatch):
    """`--field-type long` measures a LONG table: the job's table type is the data's."""
    import argparse

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    from _bench import TABLE, warm_job

    from ingestbench.ingest.runner import run_repeat

    args = argparse.Namespace(variant="pandas-dataframe-parquet-http", field_type=field_type,
                              scale=10, epochs=20, repeats=1)  # fmt: skip
    with warm_job(args) as (params, job):
        assert params.field_type == field_type
        assert set(job.parts[0].spec.kinds) == {field_type}  # the table's DDL is the data's
        run_repeat(job, 0)
        types = dict(job.qdb.rows(f"SELECT \"column\", type FROM table_columns('{TABLE}')"))
    assert types["usage_user"] == field_type.upper()
    assert types["hostname"] == "SYMBOL"


def test_bench_own_data_compares_client_memory_with_the_tsbs_path():
    out = bench("bench_own_data.py", "--rows", "4000", "--repeats", "1")
    rows = re.findall(r"^(TSBS cpu|own: trades)\s+([\d,]+)\s+([\d,]+)\s+(\d+)\s+([\d.]+)$", out,
                      re.MULTILINE)  # fmt: skip
    assert [r[0] for r in rows] == ["TSBS cpu", "own: trades"]
    assert all(r[1] == "4,000" and int(r[3]) > 0 for r in rows)
    assert rows[0][4] == "1.00"


def test_bench_strings_compares_vectorized_with_dataframe_on_both_transports():
    out = bench("bench_strings.py", "--rows", "3000", "--repeats", "1", "--only",
                "pandas-dataframe-parquet-tcp", "pandas-vectorized-parquet-tcp-w2",
                "polars-vectorized-parquet-http-w2")  # fmt: skip
    for case in ("client Buffer.dataframe()", "client, device a category",
                 "vectorized (device strings, row by row)",
                 "vectorized (device a dictionary, row by row)",
                 "vectorized (device via prefixes)", "vectorized (device a VARCHAR)"):  # fmt: skip
        assert re.search(rf"^  {re.escape(case)}\s+[\d.]+$", out, re.MULTILINE), case
    for step in ("symbols (reader)", "Arrow → pandas", "polars → Arrow (vectorized)"):
        assert re.search(rf"^  {re.escape(step)}\s+[\d.]+\s+[\d.]+$", out, re.MULTILINE), step
    row = r"^pandas-vectorized-parquet-tcp-w2\s+[\d,]+\s+\([\d,-]+\)\s+[\d.]+\s+([\d.]+)$"
    ratio = re.search(row, out, re.MULTILINE)
    assert ratio and float(ratio.group(1)) > 0
    assert re.search(r"^polars-vectorized-parquet-http-w2\s+[\d,]+", out, re.MULTILINE)
    # Each vectorized variant again with its encoder replayed: every piece found, checked (no
    # polars dataframe() ran here: its ratio is nan).
    for name, ratio in (("pandas-vectorized-parquet-tcp-w2", r"[\d.]+"),
                        ("polars-vectorized-parquet-http-w2", "nan")):  # fmt: skip
        replayed = rf"^{name} \(encoder replayed\)\s+[\d,]+\s+\([\d,-]+\)\s+[\d.]+\s+{ratio}$"
        assert re.search(replayed, out, re.MULTILINE), name
    assert "had not kept" not in out
    floor = r"^pandas `vectorized` floor .*: [\d.]+ CPU-s per 1M rows = [\d.]+ of `pandas-dataf"
    assert re.search(floor, out, re.MULTILINE)


def test_bench_pgwire_measures_the_sql_paths_against_ilp_on_both_tables():
    out = bench("bench_pgwire.py", "--rows", "4000", "--repeats", "1")
    assert re.findall(r"^(TSBS cpu|own: strings), 4,000 rows$", out, re.MULTILINE) == [
        "TSBS cpu",
        "own: strings",
    ]
    row = r"^(\S+-pg-b\d+|\S+-tcp(?:-w\d)?)\s+([\d,]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$"
    rows = re.findall(row, out, re.MULTILINE)
    assert len(rows) == 2 * 7 and all(int(r[1].replace(",", "")) > 0 for r in rows)
    assert [r[4] for r in rows if r[0] == "pandas-to_sql-parquet-pg-b10000"] == ["1.0", "1.0"]


def test_bench_sorted_measures_a_table_and_its_sorted_copy_interleaved():
    out = bench("bench_sorted.py", "--rows", "4000", "--repeats", "1",
                "--variant", "pandas-dataframe-parquet-http")  # fmt: skip
    late = dict(re.findall(r"^(unsorted|sorted): 4,000 rows, ([\d.]+)% behind", out, re.MULTILINE))
    assert float(late["unsorted"]) > 80 and float(late["sorted"]) == 0
    assert re.search(r"^sort by DuckDB \(memory limit 1GB\): [\d.]+ s, apart$", out, re.MULTILINE)
    rows = re.findall(r"^pandas-dataframe-parquet-http\s+(unsorted|sorted)\s+[\d,]+\s+[\d.]+\s+"
                      r"[\d.]+\s+([\d.]+)$", out, re.MULTILINE)  # fmt: skip
    assert [r[0] for r in rows] == ["unsorted", "sorted"] and rows[0][1] == "1.00"


def test_bench_encoder_ab_takes_the_earlier_encoder_out_of_git_and_compares_its_bytes():
    out = bench("bench_encoder_ab.py", "--before", "827cbed", "--scale", "40", "--epochs", "50",
                "--field-types", "double", "--strings-rows", "3000", "--rounds", "1")  # fmt: skip
    rows = re.findall(r"^(double pandas|double polars|strings)\s+encode CPU-s/1M rows, best of 1: "
                      r"before ([\d.]+)\s+after ([\d.]+)\s+ratio [\d.]+\s+\(same bytes\)$",
                      out, re.MULTILINE)  # fmt: skip
    assert [r[0] for r in rows] == ["double pandas", "double polars", "strings"]
    assert all(float(before) > 0 and float(after) > 0 for _, before, after in rows)


def test_bench_sampler_cost_measures_the_server_and_the_sampler_per_sample():
    out = bench("bench_sampler_cost.py", "--samples", "20", "--rounds", "1", "--rows", "1000")
    rows = re.findall(r"^\| 0 \| ([\d.-]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", out, re.M)
    assert len(rows) == 1 and float(rows[0][1]) > 0 and float(rows[0][2]) > 0
    assert re.search(r"^median: server [\d.-]+ ms \+ sampler [\d.]+ ms of CPU per sample; at 10 "
                     r"samples/s [\d.-]+ % of one core$", out, re.M)  # fmt: skip


def test_bench_preflight_times_the_check_on_each_config():
    out = bench("bench_preflight.py", "--rounds", "1", "--rows", "2000")
    assert "`ingestbench check`, wall seconds" in out
    for config in ("config.yaml", "own parquet, 2,000 rows", "own csv, 2,000 rows"):
        assert config in out
