"""Fetching the QuestDB jar: cached, SHA-1 checked, and clear when it cannot be had."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from ingestbench.config import Settings, load_config
from ingestbench.errors import UserError
from ingestbench.server import jar
from tests.helpers import QUESTDB_VERSION, REPO


def test_the_cached_jar_matches_maven_centrals_sha1(questdb_jar):
    published = (
        jar._get(jar.MAVEN.format(v=QUESTDB_VERSION) + ".sha1", timeout=30).decode().split()[0]
    )
    assert hashlib.sha1(questdb_jar.read_bytes()).hexdigest() == published  # noqa: S324


def test_a_failed_download_says_how_to_use_a_jar_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(jar, "MAVEN", "http://127.0.0.1:1/questdb-{v}.jar")
    with pytest.raises(
        UserError, match=f"could not download QuestDB {QUESTDB_VERSION}.*set questdb.jar"
    ):
        jar.fetch_jar(QUESTDB_VERSION, tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_sha1_mismatch_keeps_nothing(tmp_path, monkeypatch):
    def fake_get(url, timeout=120):
        return b"0" * 40 if url.endswith(".sha1") else b"not the jar"

    monkeypatch.setattr(jar, "_get", fake_get)
    with pytest.raises(UserError, match="SHA-1 is .* but Maven Central publishes"):
        jar.fetch_jar(QUESTDB_VERSION, tmp_path)
    assert not (tmp_path / f"questdb-{QUESTDB_VERSION}.jar").exists()


def test_a_configured_jar_is_used_as_is_and_a_missing_one_is_named(tmp_path, questdb_jar):
    default = Settings.from_config(load_config(REPO / "config.yaml")).questdb
    assert jar.resolve_jar(replace(default, jar=str(questdb_jar))) == questdb_jar
    with pytest.raises(UserError, match="points to .*missing.jar, which does not exist"):
        jar.resolve_jar(replace(default, jar=str(tmp_path / "missing.jar")))


@pytest.fixture
def cached_copy(questdb_jar, tmp_path):
    """A private cache holding a verified copy of the jar (the user's cache is never touched)."""
    jar.fetch_jar(QUESTDB_VERSION, questdb_jar.parent)  # records size and SHA-1 beside it
    for source in (questdb_jar, jar.record_path(questdb_jar)):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    return tmp_path / questdb_jar.name


def test_a_verified_cached_jar_is_never_rewritten(cached_copy):
    before = cached_copy.stat()
    assert jar.fetch_jar(QUESTDB_VERSION, cached_copy.parent) == cached_copy
    after = cached_copy.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_corrupted_cached_jar_names_the_file_to_delete(cached_copy, damage):
    data = bytearray(cached_copy.read_bytes())
    if damage == "flip":
        data[len(data) // 2 : len(data) // 2 + 16] = bytes(b ^ 0xFF for b in data[:16])
    else:
        del data[-1000:]
    cached_copy.write_bytes(bytes(data))
    with pytest.raises(
        UserError, match=f"cached QuestDB jar {cached_copy} is corrupted .*; delete"
    ):
        jar.fetch_jar(QUESTDB_VERSION, cached_copy.parent)
    assert cached_copy.read_bytes() == bytes(data), "a corrupted jar is named, not rewritten"
    cached_copy.unlink()
    assert (
        jar.verify_jar(jar.fetch_jar(QUESTDB_VERSION, cached_copy.parent), QUESTDB_VERSION)["size"]
        > 0
    )


def test_a_jar_cached_before_records_existed_gets_its_record(cached_copy):
    jar.record_path(cached_copy).unlink()
    record = jar.verify_jar(cached_copy, QUESTDB_VERSION)
    assert json.loads(jar.record_path(cached_copy).read_text()) == record
    assert record["size"] == cached_copy.stat().st_size


def test_the_java_its_classes_target_is_read_from_their_class_files(questdb_jar, tmp_path):
    """Java 17 for 9.3.4, whose manifest says it was built by JDK 24 (docs/server.md)."""
    assert jar.class_java(questdb_jar) == 17
    assert jar.class_java(tmp_path / "none.jar") is None
