"""The TSBS cpu dataset's columns: the one list the generator, the table, the readers and the
validation all follow. Light on purpose (no imports), so anything may import it."""

from __future__ import annotations

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
#: The designated timestamp.
TIMESTAMP = "timestamp"
#: Every column in file and table order.
COLUMNS: tuple[str, ...] = (*TAGS, *FIELDS, TIMESTAMP)
