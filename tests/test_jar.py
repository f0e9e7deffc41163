"""Fetching the QuestDB jar: cached, SHA-1 checked, and clear when it cannot be had."""

from __future__ import annotations

import hashlib

import pytest

from ingestbench import jar
from ingestbench.errors import UserError


def test_the_cached_jar_matches_maven_centrals_sha1(questdb_jar):
    published = jar._get(jar.MAVEN.format(v="9.3.4") + ".sha1", timeout=30).decode().split()[0]
    assert hashlib.sha1(questdb_jar.read_bytes()).hexdigest() == published  # noqa: S324


def test_a_failed_download_says_how_to_use_a_jar_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(jar, "MAVEN", "http://127.0.0.1:1/questdb-{v}.jar")
    with pytest.raises(UserError, match="could not download QuestDB 9.3.4.*set questdb.jar"):
        jar.fetch_jar("9.3.4", tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_sha1_mismatch_keeps_nothing(tmp_path, monkeypatch):
    def fake_get(url, timeout=120):
        return b"0" * 40 if url.endswith(".sha1") else b"not the jar"

    monkeypatch.setattr(jar, "_get", fake_get)
    with pytest.raises(UserError, match="SHA-1 is .* but Maven Central publishes"):
        jar.fetch_jar("9.3.4", tmp_path)
    assert not (tmp_path / "questdb-9.3.4.jar").exists()


def test_a_configured_jar_is_used_as_is_and_a_missing_one_is_named(tmp_path, questdb_jar):
    assert jar.resolve_jar({"jar": str(questdb_jar)}) == questdb_jar
    with pytest.raises(UserError, match="points to .*missing.jar, which does not exist"):
        jar.resolve_jar({"jar": str(tmp_path / "missing.jar")})
