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


def test_several_archived_runs_of_a_config_give_what_held_in_every_one(tmp_path):
    """Two runs of one config on one machine in the archive: the block says what held in both."""
    from ingestbench.dev.readme import servers_block
    from ingestbench.publish.archive import write_document
    from tests.helpers import results_with_every_part

    run = results_with_every_part(tmp_path / "versions", older="8.2.0")
    archive = tmp_path / "archive"
    for label in ("first", "second"):
        write_document(run, archive, label)
    (line,) = [x for x in servers_block((run,), archive).splitlines() if x.startswith("- ")]
    assert line.startswith("- In 2 runs against QuestDB 9.3.4's defaults, beyond the noise in "
                           "every run: 8.2.0 `")  # fmt: skip
    assert "0.50× / 0.50×" in line and "its config's 2 runs in `archive/`" in line


def test_the_stream_block_quotes_the_paced_and_the_delivery_runs_own_sentences(tmp_path):
    from ingestbench.delivery.matrix import outcomes, recommendation
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
    rows = read_rows(csv)
    assert delivery.startswith(f"- **Delivery under faults** (QuestDB {csv.parent.name}): "
                               f"{outcomes(rows)} {recommendation(rows)}")  # fmt: skip
    assert "`dataframe-tcp` (kill silently)" in delivery  # the helper's TCP kill lost 7 unknown
    assert f"`{run}/summary.md`, 2 cores" in paced
    assert stream_block(tmp_path / "none", tmp_path / "none").count("\n") == 2  # nothing run


def test_the_delivery_outcomes_name_the_losing_paths_and_the_exact_ones():
    from ingestbench.delivery.matrix import outcomes

    common = {"source_rows": 100, "altered": 0, "duplicated": 0, "overlapped": True,
              "points_wanted": 1, "errors_seen": 0}  # fmt: skip
    rows = [{**common, "path": "a-tcp", "fault": "kill", "lost_unknown": 7, "fault_at_s": 0.1},
            {**common, "path": "a-tcp", "fault": "pause_short", "fault_at_s": 0.2},
            {**common, "path": "b-http", "fault": "kill", "fault_at_s": 0.1},
            {**common, "path": "b-http", "fault": "pause_short", "fault_at_s": 0.3}]  # fmt: skip
    assert outcomes(rows) == ("Rows lost under a fault: `a-tcp` (kill silently). Exact under "
                              "every fault, each measured: `b-http`.")  # fmt: skip
    assert outcomes(rows[2:]).startswith("No path lost a row.")


def test_the_datasets_command_names_a_configs_datasets_first_the_main_one(capsys):
    """What `make site-screenshot` opens the page on: the default config's first dataset."""
    from ingestbench.cli import main
    from tests.helpers import REPO

    assert main(["datasets", "--config", str(REPO / "config.yaml")]) == 0
    names = capsys.readouterr().out.split()
    assert names[0] == "cpu-s4000-e250-seed42" and len(names) == len(set(names)) > 1
