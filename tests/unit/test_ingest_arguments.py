"""`ingestbench ingest` refuses arguments it cannot use in one sentence, before a server starts."""

from __future__ import annotations

from ingestbench.cli import EXIT_USER_ERROR, main
from tests.helpers import REPO


def test_a_data_file_that_does_not_exist_is_named_as_such(tmp_path, capsys):
    missing = tmp_path / "nosuch.parquet"
    out = tmp_path / "run.json"
    code = main(["ingest", "pandas-dataframe-parquet-http", "--data", str(missing),
                 "--config", str(REPO / "config.yaml"), "--out", str(out)])  # fmt: skip
    assert code == EXIT_USER_ERROR
    err = capsys.readouterr().err
    assert err == (
        f"ERROR: the data file {missing} given to --data does not exist; check the path, or "
        f"write the dataset with `ingestbench generate` first.\n"
    )
    assert "manifest" not in err
    assert not out.exists()
