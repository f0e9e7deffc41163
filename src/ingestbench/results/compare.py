"""Compare two results folders: did a change make a variant faster, slower, or stay within noise?

For every dataset and variant with a run on both sides it sets the median end-to-end rows/s and
send rows/s of B against A. The verdict respects the spread of the repeats: "faster" or "slower"
only when the min–max ranges of the two sides' rows/s do not overlap, "within noise" when they do.
With a warm-up every repeat is warm; without one, the cold first repeat is part of the range
(which then tends to say "within noise").

A side's runs come from its run files (RESULTS/runs/<server>/<dataset>/<variant>.json, or
RESULTS/runs/<dataset>/<variant>.json of a run before the server level) or, in a folder
that keeps only the summary (the committed reference run), from summary.csv's median, min and
max rows/s, which are all the verdict reads.

As a gate (`--fail-above PCT`), a variant fails when B is slower beyond the noise (the verdict
above, end to end) and its median end-to-end rate is more than PCT % below A's.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingestbench.errors import UserError
from ingestbench.results.records import RecordError, read_run
from ingestbench.storage.files import write_text_atomic

FASTER, SLOWER, NOISE = "faster", "slower", "within noise"


class CompareError(UserError):
    pass


@dataclass(frozen=True)
class Rates:
    """The per-repeat rows/s of one run file."""

    rows_per_s: tuple[float, ...]  # rows / end_to_end
    send_rows_per_s: tuple[float, ...]  # rows / send


def _rates(path: Path) -> Rates:
    try:
        run = read_run(path)
    except RecordError as exc:
        raise CompareError(str(exc)) from None
    e2e = tuple(run.rows / r.end_to_end for r in run.repeats if r.end_to_end)
    send = tuple(run.rows / r.phases["send"] for r in run.repeats if r.phases.get("send"))
    return Rates(e2e, send)


def spread(row: Any, rate: str) -> tuple[float, ...]:
    """(min, median, max) of a rate in a summary row: the same min, median and max as its
    repeats, for the verdict; empty when the summary has none (NaN)."""
    values = tuple(float(row.get(f"{rate}_{stat}", math.nan)) for stat in ("min", "median", "max"))
    return () if any(math.isnan(v) for v in values) else values


def _summary_rates(path: Path) -> dict[tuple[str, str], Rates]:
    from ingestbench.results.summary import read_summary  # pandas: only for this fallback

    try:
        df = read_summary(path)
    except (OSError, ValueError) as exc:
        raise CompareError(
            f"{path} cannot be read ({exc}); rerun the workflow to rewrite it."
        ) from None
    return {(r["dataset"], r["variant"]): Rates(spread(r, "rows_per_s"),
                                                 spread(r, "send_rows_per_s"))
            for r in df.to_dict("records")}  # fmt: skip


def load_runs(results: Path) -> dict[tuple[str, str], Rates]:
    """{(dataset, variant): rates} of every run file under RESULTS/runs, else of summary.csv."""
    results = Path(results)
    paths = _run_paths(results, "runs/*/*/*.json") or _run_paths(results, "runs/*/*.json")
    if paths:
        # One server: keyed by dataset, so a folder of the layout before the server level
        # compares with one after it; several: the server names the dataset's folder.
        servers = {p.parent.parent.name for p in paths}
        several = len(servers) > 1 and "runs" not in servers
        return {(f"{p.parent.parent.name}/{p.parent.name}" if several else p.parent.name,
                 p.stem): _rates(p) for p in paths}  # fmt: skip
    if (results / "summary.csv").is_file():
        return _summary_rates(results / "summary.csv")
    raise CompareError(
        f"{results} is not a results folder (neither runs/<server>/<dataset>/<variant>.json nor "
        f"summary.csv in it); pass a folder a workflow run wrote, such as results."
    )


def _run_paths(results: Path, pattern: str) -> list[Path]:
    """Run files matching `pattern`, not the jobs' records in the hidden `.settings` folders."""
    return sorted(
        p
        for p in results.glob(pattern)
        if not any(part.startswith(".") for part in p.relative_to(results).parts[:-1])
    )


def verdict(a: tuple[float, ...], b: tuple[float, ...]) -> str:
    """B against A, from the min–max ranges of their repeats' rates (higher is faster)."""
    if not a or not b:
        return "n/a"
    if min(b) > max(a):
        return FASTER
    if max(b) < min(a):
        return SLOWER
    return NOISE


def _median(values: tuple[float, ...]) -> float | None:
    return statistics.median(values) if values else None


def _ratio(b: float | None, a: float | None) -> float | None:
    return b / a if a and b is not None else None


@dataclass(frozen=True)
class Comparison:
    dataset: str
    variant: str
    a: Rates
    b: Rates

    @property
    def columns(self) -> list[str]:
        ra, rb = _median(self.a.rows_per_s), _median(self.b.rows_per_s)
        sa, sb = _median(self.a.send_rows_per_s), _median(self.b.send_rows_per_s)
        return [
            self.dataset,
            self.variant,
            _fmt(ra),
            _fmt(rb),
            _fmt_ratio(_ratio(rb, ra)),
            verdict(self.a.rows_per_s, self.b.rows_per_s),
            _fmt(sa),
            _fmt(sb),
            _fmt_ratio(_ratio(sb, sa)),
            verdict(self.a.send_rows_per_s, self.b.send_rows_per_s),
        ]

    @property
    def ratio(self) -> float | None:
        """B's median end-to-end rows/s over A's."""
        return _ratio(_median(self.b.rows_per_s), _median(self.a.rows_per_s))

    def regressed(self, fail_above_pct: float) -> bool:
        ratio = self.ratio
        return (
            verdict(self.a.rows_per_s, self.b.rows_per_s) == SLOWER
            and ratio is not None
            and ratio < 1 - fail_above_pct / 100
        )


HEADER = ["dataset", "variant", "A rows/s", "B rows/s", "B/A", "verdict",
          "A send rows/s", "B send rows/s", "send B/A", "send verdict"]  # fmt: skip
NUMERIC = {2, 3, 4, 6, 7, 8}  # right-aligned on the terminal


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


@dataclass(frozen=True)
class Report:
    a: Path
    b: Path
    both: list[Comparison]
    only_a: list[tuple[str, str]]
    only_b: list[tuple[str, str]]

    def terminal(self) -> str:
        rows = [HEADER] + [c.columns for c in self.both]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
        lines = [f"A = {self.a}, B = {self.b}"]
        for r in rows:
            cells = [c.rjust(w) if i in NUMERIC else c.ljust(w)
                     for i, (c, w) in enumerate(zip(r, widths, strict=True))]  # fmt: skip
            lines.append("  ".join(cells).rstrip())
        lines += self._only_lines(lambda ds, v: f"{ds}/{v}")
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        lines = [
            "# Comparison of two runs",
            "",
            f"A = `{self.a}`, B = `{self.b}`. Medians of the repeats; B/A > 1 means B is faster. "
            '"faster"/"slower" only when the min–max ranges of the repeats do not overlap.',
            "",
            "| " + " | ".join(HEADER) + " |",
            "|---|---|" + "---:|" * 3 + ":---|" + "---:|" * 3 + ":---|",
        ]
        lines += ["| " + " | ".join(c.columns) + " |" for c in self.both]
        lines += self._only_lines(lambda ds, v: f"`{ds}/{v}`")
        return "\n".join(lines) + "\n"

    def regressions(self, fail_above_pct: float) -> list[Comparison]:
        """The variants of B slower than A beyond the noise and by more than the percentage."""
        return [c for c in self.both if c.regressed(fail_above_pct)]

    def _only_lines(self, name) -> list[str]:
        out = []
        for side, keys in (("A", self.only_a), ("B", self.only_b)):
            if keys:
                out += ["", f"Only in {side}: " + ", ".join(name(*k) for k in keys) + "."]
        return out


def compare(a: Path, b: Path) -> Report:
    runs_a, runs_b = load_runs(a), load_runs(b)
    datasets_a, datasets_b = {d for d, _ in runs_a}, {d for d, _ in runs_b}
    if not datasets_a & datasets_b:
        raise CompareError(
            f"{a} and {b} share no dataset ({', '.join(sorted(datasets_a))} against "
            f"{', '.join(sorted(datasets_b))}): compare runs of the same dataset."
        )
    both = [Comparison(*key, runs_a[key], runs_b[key]) for key in sorted(runs_a.keys() & runs_b)]
    return Report(
        Path(a),
        Path(b),
        both,
        only_a=sorted(runs_a.keys() - runs_b.keys()),
        only_b=sorted(runs_b.keys() - runs_a.keys()),
    )


def write_compare(a: Path, b: Path, out: Path | None = None) -> Report:
    """Compare A and B, write the markdown (default B/compare.md) atomically, return the report."""
    report = compare(a, b)
    write_text_atomic(out or Path(b) / "compare.md", report.markdown())
    return report
