"""What each rule depends on: the config slices its params carry and the code it imports."""

from __future__ import annotations

import copy

import pytest

from ingestbench.config import load_config
from ingestbench.rule_inputs import (
    PACKAGE_DIR,
    chart_settings,
    code_digest,
    imported_modules,
    ingest_settings,
    settings_differences,
    validate_settings,
)
from tests.helpers import REPO

CONFIG = load_config(REPO / "config.yaml")


def test_ingest_settings_hold_what_changes_an_ingestion_and_nothing_else():
    settings = ingest_settings(CONFIG, "pandas-dataframe-parquet-http")
    assert settings["repeats"] == CONFIG["repeats"]
    assert settings["questdb"]["worker_idle"] == CONFIG["questdb"]["worker_idle"]
    assert "startup_timeout_s" not in settings["questdb"] and "rows_cap" not in settings
    assert ingest_settings(CONFIG, "pandas-rows-parquet-http")["rows_cap"] == CONFIG["rows_cap"]


def test_validation_and_chart_settings_are_their_own_sections():
    assert validate_settings(CONFIG)["rel_tolerance"] == CONFIG["validation"]["rel_tolerance"]
    assert not {"keep_export", "export_piece_rows"} & set(validate_settings(CONFIG))
    assert validate_settings(CONFIG)["memory_limit"] == CONFIG["validation"]["memory_limit"]
    assert chart_settings(CONFIG) == {"dpi": CONFIG["charts"]["dpi"]}


def test_differences_name_the_dotted_keys():
    edited = copy.deepcopy(ingest_settings(CONFIG, "pandas-rows-parquet-http"))
    edited["repeats"] += 1
    edited["questdb"]["worker_idle"] = "spin"
    del edited["rows_cap"]
    base = ingest_settings(CONFIG, "pandas-rows-parquet-http")
    assert settings_differences(edited, base) == ["questdb.worker_idle", "repeats", "rows_cap"]
    assert settings_differences(base, copy.deepcopy(base)) == []


def test_the_code_of_a_rule_is_found_from_its_imports():
    ingest = {p.relative_to(PACKAGE_DIR).as_posix() for p in imported_modules(
        (REPO / "scripts" / "ingest.py").resolve())}  # fmt: skip
    # imported lazily inside functions, and by name through importlib (the measuring code)
    assert {"ingest/runner.py", "ingest/methods/vectorized.py", "validate/rows.py"} <= ingest
    plot = {p.relative_to(PACKAGE_DIR).as_posix() for p in imported_modules(
        (REPO / "scripts" / "plot.py").resolve())}  # fmt: skip
    assert {"charts/draw.py", "results/summary.py"} <= plot
    assert not any(p.startswith(("ingest/", "server/")) for p in plot)


def test_the_digest_changes_with_any_imported_module(monkeypatch):
    before = code_digest(REPO / "scripts" / "plot.py")
    style = PACKAGE_DIR / "charts" / "style.py"
    real_read = type(style).read_bytes

    def read_bytes(path):
        data = real_read(path)
        return data + b"# changed" if path == style else data

    monkeypatch.setattr(type(style), "read_bytes", read_bytes)
    assert code_digest(REPO / "scripts" / "plot.py") != before


@pytest.mark.parametrize("script", sorted((REPO / "scripts").glob("[a-z]*.py")))
def test_every_script_has_a_digest(script):
    assert len(code_digest(script)) == 16
