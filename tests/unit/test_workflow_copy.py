"""What a copy of the workflow holds: what a fresh clone would, nothing a run made."""

from __future__ import annotations

from ingestbench.dev.workflow_copy import clone_files, copy_workflow


def test_outside_git_a_copy_leaves_out_only_what_a_clone_never_has(tmp_path):
    src = tmp_path / "src"
    made = ("Snakefile", "src/pkg/results/summary.py", "results/runs/x.json",
            ".snakemake/log/a.log", "src/pkg/__pycache__/m.pyc", "site/index.html")  # fmt: skip
    for rel in made:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(rel)
    kept = sorted(str(p) for p in clone_files(src))
    assert kept == ["Snakefile", "src/pkg/results/summary.py"]  # a package named results stays
    out = tmp_path / "out"
    out.mkdir()
    copy_workflow(out, repo=src)
    assert (out / "src/pkg/results/summary.py").read_text() == "src/pkg/results/summary.py"
    assert not (out / "results").exists()
