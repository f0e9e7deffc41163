"""The TSBS tables' columns: the one list the generators, the tables, the readers and the
validation all follow, as `TableSpec`s (ingestbench.tables.spec). Light on purpose (the standard
library only), so anything may import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ingestbench.tables.spec import TIMESTAMP, TableSpec

#: Tags (QuestDB SYMBOL), hostname first, in TSBS order.
TAGS: tuple[str, ...] = (
    "hostname",
    "region",
    "datacenter",
    "rack",
    "os",
    "arch",
    "team",
    "service",
    "service_version",
    "service_environment",
)
#: Fields (DOUBLE or LONG), in TSBS order.
FIELDS: tuple[str, ...] = (
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
)
#: Every column in file and table order.
COLUMNS: tuple[str, ...] = (*TAGS, *FIELDS, TIMESTAMP)


#: The cpu use case's one table, as its dataset and records name it (on a server it may be named
#: otherwise: the config's `table`).
CPU_TABLE = "cpu"


def cpu_spec(field_type: str = "double", table: str = CPU_TABLE) -> TableSpec:
    """The TSBS cpu table; `field_type` is the kind of every field."""
    return TableSpec(table, TAGS, FIELDS, (field_type,) * len(FIELDS))


#: The TSBS iot use case: trucks, each with these tags in both tables (TSBS's iot/truck.go).
IOT_TAGS: tuple[str, ...] = (
    "name",
    "fleet",
    "driver",
    "model",
    "device_version",
    "load_capacity",
    "fuel_capacity",
    "nominal_fuel_consumption",
)
#: Where each truck is and how it moves (TSBS's iot/readings.go).
READINGS = TableSpec(
    "readings",
    IOT_TAGS,
    ("latitude", "longitude", "elevation", "velocity", "heading", "grade", "fuel_consumption"),
    ("double",) * 7,
    nullable=True,
)
#: Its state (TSBS's iot/diagnostics.go): status is an integer.
DIAGNOSTICS = TableSpec(
    "diagnostics",
    IOT_TAGS,
    ("fuel_state", "current_load", "status"),
    ("double", "double", "long"),
    nullable=True,
)
#: iot's tables, in the order TSBS emits them within an epoch.
IOT_TABLES: tuple[TableSpec, ...] = (READINGS, DIAGNOSTICS)


@dataclass(frozen=True)
class UseCase:
    """What sets one TSBS use case apart, in one record: the generator, the parameters and the
    tables read it here instead of asking which use case they have."""

    tables: Callable[[str, str], tuple[TableSpec, ...]]  # (field_type, cpu table name) → tables
    points_per_host: int  # rows simulated per host and epoch
    #: Its fields have TSBS's own types and its late rows TSBS's own chances: it takes no
    #: field_type, out_of_order or dedup.
    fixed_fields: bool
    #: Named in a dataset's parameters: cpu is not, so manifests from before use cases stay valid.
    recorded: bool


#: The use cases, cpu (the default) first.
USE_CASES: dict[str, UseCase] = {
    "cpu": UseCase(lambda field_type, table: (cpu_spec(field_type, table),), 1,
                   fixed_fields=False, recorded=False),
    "iot": UseCase(lambda field_type, table: IOT_TABLES, 2, fixed_fields=True, recorded=True),
}  # fmt: skip


def use_case_tables(
    use_case: str = "cpu", field_type: str = "double", table: str = CPU_TABLE
) -> tuple[TableSpec, ...]:
    """The tables of a dataset: iot's two, or the one cpu table (named `table`)."""
    return USE_CASES[use_case].tables(field_type, table)


def table_file(dataset_path: Path | str, spec: TableSpec) -> Path:
    """One table's file in a dataset of several tables: ``<name>.<fmt>/<table>.<fmt>``."""
    return Path(dataset_path) / f"{spec.table}{Path(dataset_path).suffix}"


def table_files(dataset_path: Path | str, specs: tuple[TableSpec, ...]) -> tuple[Path, ...]:
    """Each table's file of a dataset, as the generator lays it out: a dataset of one table (cpu)
    is that table's file, one of several (iot) a directory of a file per table."""
    if len(specs) == 1:
        return (Path(dataset_path),)
    return tuple(table_file(dataset_path, spec) for spec in specs)
