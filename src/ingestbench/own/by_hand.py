"""`ingestbench ingest VARIANT --data FILE` on the user's own file: the file described as a
dataset would be (its manifest, and for `ilp_file` its ILP text, beside the run file)."""

from __future__ import annotations

import re
from pathlib import Path

from ingestbench.own.dataset import CsvOptions, OwnDataError, OwnDataset, default_delimiter
from ingestbench.variants import Variant


def label_of(path: Path) -> str:
    """A dataset label from a file name: lower case, letters, digits and underscores."""
    stem = path.name.split(".", 1)[0] if path.is_file() else path.name
    label = re.sub(r"[^a-z0-9_]+", "_", stem.lower()).strip("_")
    return label if label[:1].isalpha() else f"data_{label}"


def describe_by_hand(
    data: Path,
    variant: Variant,
    out: Path,
    timestamp: str | None = None,
    csv: CsvOptions | None = None,
) -> tuple[Path, Path]:
    """(the file the variant reads, the manifest) for the user's file at `data`."""
    from ingestbench.own.ilp import write_ilp
    from ingestbench.own.manifest import spec_of, write_own_manifest
    from ingestbench.own.support import ilp_text_possible

    if not data.exists():
        raise OwnDataError(f"{data} does not exist; point --data at a Parquet or CSV file.")
    csv = csv or CsvOptions(delimiter=default_delimiter(data))
    dataset = OwnDataset(label=label_of(data), path=data, timestamp=timestamp, csv=csv)
    manifest_path = out.with_name(f"{out.name.rsplit('.', 1)[0]}.manifest.json")
    try:
        manifest = write_own_manifest(dataset, manifest_path)
    except OwnDataError as exc:  # by hand, the fix is the command line's
        text = str(exc).replace("datasets[].timestamp", "--timestamp")
        raise OwnDataError(text.replace("datasets[].csv", "--delimiter, --null-value and "
                                        "--timestamp-format")) from None  # fmt: skip
    if variant.format != "ilp":
        return data, manifest_path
    ilp = out.with_name(f"{dataset.name}.ilp")
    write_ilp(
        spec_of(manifest),
        manifest["rows"],
        lines_possible=ilp_text_possible(spec_of(manifest), manifest),
        output=ilp,
    )
    return ilp, manifest_path
