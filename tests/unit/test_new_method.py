"""A method that also takes part in paced ingestion and delivery is added in the files
docs/development.md's "Adding a method" lists, and nowhere else: in a copy of the tree, a
made-up one reaches the variant matrix, the paced paths and the delivery paths."""

from __future__ import annotations

from ingestbench.dev.workflow_copy import copy_workflow
from tests.helpers import python_in

#: 1. Its module under ingest/methods/ (here the module of its kind): the class, its paced
#: stream and its resending loader, each as that module's methods write theirs.
CODE = '''

class MadeUp(Dataframe):
    """A made-up method: `dataframe()` once more."""


class MadeUpStream(DataframeStream):
    """Paced as `dataframe` is."""


def deliver_made_up(load: ResendLoad) -> None:
    deliver(load)
'''

#: 2. Its record in the catalogue.
RECORD = """
CATALOGUE = (*CATALOGUE, Method(
    "made_up",
    "client",
    "a made-up method: `dataframe()` once more",
    "read, convert, send, visible",
    chunked=True,
    flush_modes=FLUSH_MODES,
    resend="the failed batch sent again from the code's own copy",
    implementation="frames.MadeUp",
    two_tables="its own way with two tables",
    delivery_transports=("http",),
    paced="frames:MadeUpStream",
    deliver="frames:deliver_made_up",
))
METHODS = {m.name: m for m in CATALOGUE}
METHOD_NAMES = tuple(METHODS)
"""

#: 5. The configs and docs: a spec in config.yaml, its resend rule in docs/faults.md (then
#: `make readme`); a paced config that chooses it.
SPEC = (
    "  - {library: pandas, method: made_up, format: parquet, transport: http, datasets: [main]}\n"
)
PACED = """results_dir: results/made_up
datasets:
  - {label: paced, scale: 100, epochs: 200, seed: 42}
variants:
  - {library: pandas, method: dataframe, format: parquet, transport: http}
paced:
  paths:
    - {library: pandas, method: made_up, transport: http}
"""

SHOW = """
from ingestbench.config import load_config
from ingestbench.delivery.loaders import loader
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.paced.paths import stream_of
from ingestbench.paced.settings import paced_paths
from ingestbench.schema import load_schema

paths = paced_paths(load_config("configs/made_up.yaml"))
print("paced", *(p.name for p in paths), stream_of(paths[0]).__name__)
delivery = DeliverySettings.from_config(load_config("configs/delivery.yaml"))
print("enum", *load_schema()["$defs"]["delivery_path"]["enum"])
print("delivery", *delivery.paths, loader("made_up").__name__)
"""


def test_a_paced_and_delivered_method_is_added_in_its_files_alone(tmp_path):
    copy = copy_workflow(tmp_path)
    frames = copy / "src" / "ingestbench" / "ingest" / "methods" / "frames.py"
    frames.write_text(frames.read_text() + CODE)
    catalogue = copy / "src" / "ingestbench" / "catalogue.py"
    text = catalogue.read_text()
    at = text.index("\ndef names(")
    catalogue.write_text(text[:at] + RECORD + text[at:])
    config = copy / "config.yaml"
    text = config.read_text()
    at = text.index("variants:\n") + len("variants:\n")
    config.write_text(text[:at] + SPEC + text[at:])
    faults = copy / "docs" / "faults.md"
    faults.write_text(faults.read_text() + "\n- `made_up`: the failed batch sent again from the "
                      "code's own copy\n")  # fmt: skip
    (copy / "configs" / "made_up.yaml").write_text(PACED)
    python = python_in(copy)

    python("-m", "ingestbench.dev.readme")
    listed = python("-m", "ingestbench.cli", "variants", "--config", "config.yaml")
    assert "pandas-made_up-parquet-http" in listed
    shown = {line.split()[0]: line.split()[1:] for line in python("-c", SHOW).splitlines()}
    assert shown["paced"] == [
        "pandas-made_up-parquet-http-farrival",
        "pandas-made_up-parquet-http-frows",
        "pandas-made_up-parquet-http-finterval",
        "MadeUpStream",
    ]
    assert {"made_up-http", "made_up-http-dedup"} <= set(shown["enum"])
    assert {"made_up-http", "made_up-http-dedup"} <= set(shown["delivery"])
    assert shown["delivery"][-1] == "deliver_made_up"
