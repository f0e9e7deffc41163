"""The README's generated blocks (ingestbench.dev.readme): the servers' answers."""

from __future__ import annotations


def test_the_servers_block_quotes_each_committed_run_of_the_axis(tmp_path):
    from ingestbench.dev.readme import SERVERS_BEGIN, SERVERS_END, servers_block
    from tests.helpers import results_with_every_part

    run = results_with_every_part(tmp_path / "versions", older="8.2.0")
    block = servers_block((run, tmp_path / "settings"))  # the settings run not committed
    assert block.startswith(SERVERS_BEGIN) and block.endswith(SERVERS_END)
    (line,) = [x for x in block.splitlines() if x.startswith("- ")]
    assert line.startswith("- Against QuestDB 9.3.4's defaults, the median of each server's")
    assert "8.2.0 0.50×" in line and f"`{run}/summary.md`, 2 cores" in line
    assert servers_block(()) == "\n".join([*block.splitlines()[:2], SERVERS_END])


def test_the_stream_block_quotes_the_paced_and_the_delivery_runs_own_sentences(tmp_path):
    from ingestbench.delivery.matrix import recommendation
    from ingestbench.delivery.summary import read_rows
    from ingestbench.dev.readme import STREAM_BEGIN, STREAM_END, stream_block
    from tests.helpers import results_with_every_part

    run = results_with_every_part(tmp_path / "r")
    block = stream_block(run, run)
    assert block.startswith(STREAM_BEGIN) and block.endswith(STREAM_END)
    paced, delivery = [x for x in block.splitlines() if x.startswith("- ")]
    assert paced.startswith("- **Streaming** (cpu-x, p99 under 1 s from due to readable): up to "
                            "1,000 rows/s, use pandas-dataframe-parquet-http")  # fmt: skip
    (csv,) = run.glob("delivery/*/delivery.csv")
    assert delivery.startswith(f"- **Delivery under faults** (QuestDB {csv.parent.name}): "
                               f"{recommendation(read_rows(csv))}")  # fmt: skip
    assert f"`{run}/summary.md`, 2 cores" in paced
    assert stream_block(tmp_path / "none", tmp_path / "none").count("\n") == 2  # nothing run
