"""`site/index.html`: one offline page over the archive and the current results.

One HTML file with everything inlined: the run documents as JSON, the page's script and style
(ingestbench/publish/page/), and Vega, Vega-Lite and vega-embed as vl-convert bundles them. The
charts' specs are built with altair (ingestbench.publish.specs) and fed the selected rows in the
browser; the history across commits is computed here, by ingestbench.publish.history, so the
page marks exactly the steps `ingestbench history` flags. Vega-Lite was picked over plotly
because its bundle is a quarter of plotly.js's size (about 0.9 MB against 3.5 MB), it renders
to SVG with no network access, and altair is the same declarative grammar people know from
seaborn-like Python plotting. A Content-Security-Policy in the page forbids any
request, so the page cannot reach the network even by accident.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

from ingestbench.charts.registry import page_specs
from ingestbench.publish.archive import build_document, read_archive
from ingestbench.publish.history import commit_order, group_key, ordered, series
from ingestbench.results.published import MACHINE, PUBLISHED
from ingestbench.storage.files import write_text_atomic

log = logging.getLogger(__name__)
PAGE = Path(__file__).parent / "page"
CURRENT = "current"
#: The page's script, in this order, as one module: shared state and helpers first, then the
#: sections (the servers', then each experiment's page script, workflow.experiments), start last.
CORE_SCRIPTS = ("state.js", "matrix.js", "charts.js", "readers.js", "history.js", "sections.js",
                "servers.js")  # fmt: skip


def scripts() -> tuple[str, ...]:
    from ingestbench.workflow.experiments import EXPERIMENTS

    return (*CORE_SCRIPTS, *(e.page for e in EXPERIMENTS if e.page), "main.js")


def history_groups(
    docs: list[dict[str, Any]], order: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """Per machine and config with two runs or more: its runs in commit order and each variant's
    series with compare's verdict on every step (ingestbench.publish.history)."""
    from dataclasses import asdict

    order = commit_order() if order is None else order
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for s in series(docs, order):
        key = (s.machine, s.config_hash)
        if key not in groups:
            runs = [d for d in docs if group_key(d) == key]
            groups[key] = {
                "machine": s.machine,
                "config_hash": s.config_hash,
                "label": s.label,
                "runs": [d["id"] for d in ordered(runs, order)],
                "series": [],
            }
        groups[key]["series"].append(asdict(s))
    return list(groups.values())


def published_rows() -> list[dict[str, Any]]:
    return [{"label": case.label, "variant": case.variant, "method": case.variant.split("-")[1],
             "rows": case.rows, "send_rows_per_s": case.send_rows_per_s, "machine": MACHINE}
            for case in PUBLISHED]  # fmt: skip


def with_held_verdicts(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run of the server axis with, where an earlier run of its config on its machine is
    there too, what held in all of them up to it (`servers.held`): a cell beyond the noise of
    one run's repeats is no finding on a machine that drifts between jobs."""
    from ingestbench.publish.archive import config_on_machine
    from ingestbench.results.summary.servers import held_verdict

    seen: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for doc in sorted(docs, key=lambda d: d["date_utc"]):
        if not doc.get("servers"):
            continue
        runs = seen.setdefault(config_on_machine(doc), [])
        runs.append(doc["servers"])
        if len(runs) > 1:
            doc["servers"] = {**doc["servers"], "held": held_verdict(list(runs))}
    return docs


def collect(archive: Path, results: Path | None) -> list[dict[str, Any]]:
    """The archived runs, plus the current results unless they are archived already."""
    docs = read_archive(archive) if Path(archive).is_dir() else []
    if results is not None and (Path(results) / "summary.csv").is_file():
        current = build_document(results, CURRENT)
        same = {(d["workflow"]["git_commit"], d["workflow"]["config_hash"], d["date_utc"])
                for d in docs}  # fmt: skip
        key = (current["workflow"]["git_commit"], current["workflow"]["config_hash"],
               current["date_utc"])  # fmt: skip
        if key not in same:
            docs.append(current)
    return with_held_verdicts(docs)


# Documents are untrusted: no "<" (which could end the script element or open a comment in it
# that swallows the rest of the page), ">" or "&" reaches the HTML; JSON's \u escapes read the same.
_INLINE_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                 "\u2028": "\\u2028", "\u2029": "\\u2029"})  # fmt: skip


def inline_json(data: Any) -> str:
    """`data` as JSON safe inside a <script> element, whatever its strings hold."""
    return json.dumps(data, separators=(",", ":")).translate(_INLINE_ESCAPES)


def page(docs: list[dict[str, Any]], built: str | None = None) -> str:
    import vl_convert

    data = {
        "runs": docs,
        "published": published_rows(),
        "history": history_groups(docs),
        "specs": page_specs(),  # each page chart of the registry, by its name
        "built": built or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    inline = inline_json(data)
    html = (PAGE / "page.html").read_text()
    for marker, text in (
        ("/*STYLE*/", (PAGE / "page.css").read_text()),
        ("/*DATA*/", inline),
        ("/*VEGA*/", vl_convert.javascript_bundle()),
        ("/*SCRIPT*/", "\n".join((PAGE / name).read_text() for name in scripts())),
    ):
        before, _, after = html.partition(marker)
        html = before + text + after  # not str.replace: the bundle may hold the next marker
    return html


def write_site(archive: Path, results: Path | None, out: Path) -> Path:
    docs = collect(archive, results)
    if not docs:
        from ingestbench.publish.archive import ArchiveError

        raise ArchiveError(
            f"there is nothing to show: {archive} holds no run document and {results} no "
            f"summary.csv; run the workflow (make run) or archive a run (make archive) first."
        )
    write_text_atomic(out, page(docs))
    log.info("wrote %s (%d runs)", out, len(docs))
    return out
