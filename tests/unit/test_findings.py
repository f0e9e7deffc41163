"""findings/ holds what the docs cite, and nothing twice: every folder is cited by a page (the
README, docs/, reference/) or listed in findings/README.md as an earlier run the docs quote as a
contrast, with the folder that replaced it; each command's runs leave one current folder."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from tests.helpers import REPO

FINDINGS = REPO / "findings"
FOLDER = re.compile(r"findings/(\d{4}-\d\d-\d\d-[a-z0-9-]+)")
#: A row of findings/README.md's table: | [old](old/README.md) | [new](new/README.md) |
REPLACED = re.compile(r"^\| \[([^\]]+)\]\([^)]*\) \| \[([^\]]+)\]\([^)]*\) \|$", re.M)


def folders() -> set[str]:
    return {p.name for p in FINDINGS.iterdir() if p.is_dir() and not p.name.startswith(".")}


def pages() -> list[Path]:
    docs = sorted((REPO / "docs").rglob("*.md"))
    reference = sorted(p for ext in ("md", "rst") for p in (REPO / "reference").rglob(f"*.{ext}"))
    return [REPO / "README.md", *docs, *reference]


def cited() -> dict[str, list[str]]:
    """{folder: the pages citing it}, from every link or path naming findings/<folder>."""
    found: dict[str, list[str]] = defaultdict(list)
    for page in pages():
        for folder in FOLDER.findall(page.read_text()):
            found[folder].append(str(page.relative_to(REPO)))
    return found


def replaced() -> dict[str, str]:
    """{earlier run: the folder that replaced it}, from findings/README.md's table."""
    return dict(REPLACED.findall((FINDINGS / "README.md").read_text()))


def command(folder: str) -> str:
    """The topic of a folder: the command in its meta.json, or its name for the older records."""
    meta = FINDINGS / folder / "meta.json"
    return " ".join(json.loads(meta.read_text())["command"]) if meta.exists() else folder


def test_every_folder_is_cited_by_a_page_or_listed_as_a_contrast():
    uncited = sorted(folders() - set(cited()) - set(replaced()))
    assert not uncited, (
        f"findings folders no page cites: {uncited}; cite each where a doc uses its figures, "
        "or remove it (`git rm -r findings/<folder>`) if a newer run replaced it"
    )


def test_every_cited_folder_exists():
    missing = {f: p for f, p in cited().items() if f not in folders()}
    assert not missing, f"pages cite findings folders that are not there: {missing}"


def test_a_listed_contrast_is_quoted_by_a_page_and_names_its_current_replacement():
    table = replaced()
    assert table, "findings/README.md lists no earlier run: is its table's format still parsed?"
    for old, new in table.items():
        assert {old, new} <= folders(), (old, new)
        assert old in cited(), f"{old} is listed as a contrast, but no page quotes it: remove it"
        assert new not in table, f"{old} is replaced by {new}, itself replaced: name the current"
        assert new in cited(), f"{new}, which replaced {old}, is cited by no page"


def test_each_command_leaves_one_current_folder():
    by_command: dict[str, list[str]] = defaultdict(list)
    for folder in folders():
        by_command[command(folder)].append(folder)
    table = replaced()
    twice = {
        c: sorted(f) for c, f in by_command.items() if len([x for x in f if x not in table]) > 1
    }
    assert not twice, (
        f"runs of one command that are all current (keep one, list or remove the rest): {twice}"
    )


def test_the_checks_see_an_uncited_folder_and_a_stale_contrast(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "FINDINGS", tmp_path)
    for name in ("2026-01-01-x", "2026-01-02-x"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.json").write_text(json.dumps({"command": ["make", "bench-x"]}))
    (tmp_path / "README.md").write_text("")
    assert folders() == {"2026-01-01-x", "2026-01-02-x"}
    assert set(folders()) - set(cited()) - set(replaced()) == folders()
    assert {command(f) for f in folders()} == {"make bench-x"}
    (tmp_path / "README.md").write_text(
        "| [2026-01-01-x](2026-01-01-x/README.md) | [2026-01-02-x](2026-01-02-x/README.md) |\n"
    )
    assert replaced() == {"2026-01-01-x": "2026-01-02-x"}


def test_a_new_run_names_the_folder_it_replaces_and_how_to_retire_it(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_findings", REPO / "benchmarks/findings.py")
    findings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(findings)
    command = ["make", "bench-x"]
    for name, cmd, started in (
        ("2026-01-01-x", command, "2026-01-01T10:00:00Z"),
        ("2026-01-02-x", command, "2026-01-02T10:00:00Z"),
        ("2026-01-03-x", [*command, "ARGS=--long"], "2026-01-03T10:00:00Z"),
    ):
        (tmp_path / name).mkdir()
        meta = {"command": cmd, "started_utc": started}
        (tmp_path / name / "meta.json").write_text(json.dumps(meta))
    new = tmp_path / "2026-01-04-x"
    assert findings.replaced_folder(command, tmp_path, new) == tmp_path / "2026-01-02-x"
    assert findings.replaced_folder(["make", "bench-y"], tmp_path, new) is None
    advice = findings.retire_advice(new, tmp_path / "2026-01-02-x")
    assert "git rm -r" in advice and "2026-01-02-x" in advice and "findings/README.md" in advice
    assert "first of its command" in findings.retire_advice(new, None)


def test_no_findings_folder_holds_code():
    code = [str(p.relative_to(FINDINGS)) for p in FINDINGS.rglob("*") if p.suffix in (".py", ".sh")]
    assert not code, f"code in findings/ (move it into benchmarks/, record its command): {code}"
