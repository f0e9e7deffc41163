"""`ingestbench ingest VARIANT --data FILE`: one variant run by hand, outside Snakemake, on a
generated dataset or on the user's own file (described beside the run file first)."""

from __future__ import annotations

from pathlib import Path

from ingestbench.config import Settings, load_config
from ingestbench.errors import UserError
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.results.records import RunFile
from ingestbench.variants import parse_variant_name
from ingestbench.workflow.rule_inputs import ingest_settings


def ingest_by_hand(
    config_path: str,
    variant_name: str,
    data: Path,
    out: Path,
    *,
    repeats: int | None = None,
    timestamp: str | None = None,
    delimiter: str | None = None,
    null_values: list[str] | None = None,
    timestamp_format: str | None = None,
) -> RunFile:
    """The run file `ingest_job` writes to `out` (`repeats`: the config's unless given). A file
    with no manifest beside it is the user's own, described as a dataset would be: `timestamp`
    its designated timestamp, the others how its CSV reads (None: the defaults)."""
    config = load_config(config_path)
    if repeats:
        config["repeats"] = repeats
    settings = Settings.from_config(config)
    try:
        variant = parse_variant_name(variant_name)
    except ValueError:
        raise UserError(
            f"{variant_name!r} is not a variant name; list valid ones with `ingestbench variants`."
        ) from None
    if not data.exists():
        raise UserError(
            f"the data file {data} given to --data does not exist; check the path, or write the "
            f"dataset with `ingestbench generate` first."
        )
    manifest = data.with_name(data.name.rsplit(".", 1)[0] + ".manifest.json")
    if not manifest.is_file():  # not a generated file: the user's own, described beside --out
        from ingestbench.own.by_hand import describe_by_hand
        from ingestbench.own.dataset import CsvOptions, default_delimiter

        csv = CsvOptions(
            delimiter=delimiter or default_delimiter(data),
            null_values=tuple(null_values or [""]),
            timestamp_format=timestamp_format,
        )
        data, manifest = describe_by_hand(data, variant, out, timestamp, csv)
    # Kept where the workflow keeps its server logs, so a failed start can name a file that exists.
    server_log = Path(config["results_dir"]) / "logs" / "questdb" / f"{variant.name}.log"
    return ingest_job(
        settings,
        variant,
        IngestFiles(data, manifest, out),
        server_log=server_log,
        recorded_settings=ingest_settings(config, variant.name),
    )
