"""What each rule depends on: the config slices its params carry and the code it imports."""

from __future__ import annotations

import copy

import pytest

from ingestbench.config import QuestDBSettings, Settings, load_config
from ingestbench.datasets import plan
from ingestbench.workflow.result_keys import job_config
from ingestbench.workflow.rule_inputs import (
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
    assert "startup_timeout_s" not in settings["questdb"] and settings["rows_cap"] is None
    assert ingest_settings(CONFIG, "pandas-rows-parquet-http")["rows_cap"] == CONFIG["rows_cap"]
    assert settings["validation"]["rel_tolerance"] == CONFIG["validation"]["rel_tolerance"]


def every_variant(*configs: str) -> list[tuple[dict, str]]:
    out = []
    for name in configs:
        config = load_config(REPO / name)
        out += [(config, v.name) for _, vs in plan(config).values() for v in vs]
    return out


def test_an_ingestion_reads_only_its_params_and_keys_without_effect():
    """The job's typed settings are built from its params and the keys declared without effect,
    and from nothing else: every key they read exists there, for every variant of the configs."""
    for config, variant in every_variant("config.yaml", "configs/full.yaml", "configs/iot.yaml"):
        given = job_config(ingest_settings(config, variant), config)
        settings = Settings.from_config(given)
        assert settings.repeats == config["repeats"]
        assert settings.questdb == QuestDBSettings.from_config(config)  # the whole block
        assert settings.guards.exclusive == config["guards"]["exclusive"]
        assert not {"datasets", "variants"} & set(given)


def test_a_key_the_job_reads_that_is_neither_a_param_nor_without_effect_fails(monkeypatch):
    """What the test above catches: a new setting read by the job but left out of its params
    (so an edit of it would rerun nothing) is missing from the job's config."""
    config = copy.deepcopy(CONFIG)
    config["new_setting"] = 1
    original = Settings.from_config.__func__

    def reads_new_setting(cls, given):
        given["new_setting"]  # a read the params do not carry
        return original(cls, given)

    monkeypatch.setattr(Settings, "from_config", classmethod(reads_new_setting))
    with pytest.raises(KeyError, match="new_setting"):
        Settings.from_config(
            job_config(ingest_settings(config, "pandas-rows-parquet-http"), config)
        )


def test_validation_and_chart_settings_are_their_own_sections():
    assert validate_settings(CONFIG)["rel_tolerance"] == CONFIG["validation"]["rel_tolerance"]
    assert not {"keep_export", "export_piece_rows"} & set(validate_settings(CONFIG))
    assert validate_settings(CONFIG)["memory_limit"] == CONFIG["validation"]["memory_limit"]
    assert chart_settings(CONFIG) == {"dpi": CONFIG["charts"]["dpi"]}


def test_differences_name_the_dotted_keys():
    edited = copy.deepcopy(ingest_settings(CONFIG, "pandas-rows-parquet-http"))
    edited["repeats"] += 1
    edited["questdb"]["worker_idle"] = "spin"
    edited["rows_cap"] = None
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
    assert {"charts/draw.py", "results/summary/__init__.py", "results/summary/rows.py"} <= plot
    # server.versions (light, no imports) names the servers every rule's settings are of
    light = {"server/__init__.py", "server/versions.py"}
    assert not any(p.startswith(("ingest/", "server/")) and p not in light for p in plot)


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


def test_every_script_has_one_shape():
    """A rule's script is `main(sm)` and a guard that hands it to run_rule (which logs, turns a
    UserError into its sentence and writes the job's record), nothing at module level besides."""
    scripts = [p for p in (REPO / "scripts").glob("*.py") if not p.name.startswith("_")]
    assert len(scripts) >= 10
    guard = 'if __name__ == "__main__":\n    run_rule(snakemake, main)'
    texts = {p.name: p.read_text() for p in scripts}
    odd = [n for n, t in texts.items() if t.count("\ndef main(sm) -> None:") != 1 or guard not in t]
    assert not odd, f"scripts not of the one shape (docs/development.md): {odd}"
