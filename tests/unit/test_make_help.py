"""`make help` says every target and benchmark in a whole sentence: the Makefile prints a
target's `## ` lines and a benchmark's first docstring line, so a docstring whose first sentence
runs onto its second line would be cut mid-sentence."""

from __future__ import annotations

import ast
import subprocess

from tests.helpers import REPO


def test_every_make_help_line_is_a_whole_sentence():
    result = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("  ")]
    names = {line.split()[0] for line in lines}
    assert {"run", "paced", "delivery", "bench-overhead", "bench-paced"} <= names
    cut = [line for line in lines if not line.rstrip().endswith(".")]
    assert not cut, f"make help lines cut mid-sentence: {cut}"


def test_every_benchmarks_first_docstring_line_is_its_first_paragraph():
    """The line `make help` prints is the whole first paragraph, so it reads as said."""
    for path in sorted((REPO / "benchmarks").glob("bench_*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""
        first_paragraph = doc.split("\n\n")[0]
        assert "\n" not in first_paragraph.strip(), f"{path.name}: {first_paragraph!r}"
        assert first_paragraph.strip().endswith("."), path.name
