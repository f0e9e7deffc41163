"""A paced variant's name, through the catalogue's grammar: the path's `library-method-format-
transport`, then the flush mode's suffix (`pandas-dataframe-parquet-http-farrival`)."""

from __future__ import annotations

from dataclasses import dataclass

from ingestbench.catalogue import FLUSH_MODES, METHODS, NAME_SUFFIXES, SQL_TRANSPORT, FlushMode

#: The suffix letter of the flush mode, from the grammar (not written here twice).
FLUSH_LETTER = next(letter for letter, key in NAME_SUFFIXES.items() if key == "flush")
#: A paced producer holds its rows as a frame read from the dataset's Parquet.
PACED_FORMAT = "parquet"


class PacedNameError(ValueError):
    pass


@dataclass(frozen=True)
class PacedPath:
    """One path as a streaming user writes it, with one flush mode."""

    library: str
    method: str
    transport: str
    flush: FlushMode

    @property
    def name(self) -> str:
        base = f"{self.library}-{self.method}-{PACED_FORMAT}-{self.transport}"
        return f"{base}-{FLUSH_LETTER}{self.flush}"

    @property
    def path_name(self) -> str:
        """The path without its flush mode (a line of the chart)."""
        return self.name.rsplit("-", 1)[0]

    @property
    def is_sql(self) -> bool:
        return self.transport == SQL_TRANSPORT


def parse_paced_name(name: str) -> PacedPath:
    """Inverse of PacedPath.name; a name outside the grammar is refused in one sentence."""
    parts = name.split("-")
    if len(parts) != 5 or not parts[4].startswith(FLUSH_LETTER):
        raise PacedNameError(
            f"{name!r} is not a paced variant name (library-method-{PACED_FORMAT}-transport-"
            f"{FLUSH_LETTER}MODE, e.g. pandas-dataframe-{PACED_FORMAT}-http-{FLUSH_LETTER}arrival)"
        )
    library, method, fmt, transport, flush = parts
    flush = flush[len(FLUSH_LETTER) :]
    path = PacedPath(library, method, transport, flush)  # type: ignore[arg-type]
    problem = path_problem(path)
    if fmt != PACED_FORMAT or problem:
        raise PacedNameError(f"{name!r} is not a paced variant: {problem or 'format ' + fmt}")
    return path


def path_problem(path: PacedPath) -> str | None:
    """Why the catalogue cannot pace this path and flush mode; None where it can."""
    method = METHODS.get(path.method)
    if method is None:
        return f"there is no method {path.method!r}"
    if not method.flush_modes:
        return f"{path.method} cannot be paced: {method.unpaced_reason or 'not a paced path'}"
    if path.library not in method.libraries:
        return f"{path.method} takes library {' or '.join(method.libraries)}, not {path.library}"
    if path.transport not in method.transports:
        return f"{path.method} runs over {' or '.join(method.transports)}, not {path.transport}"
    if path.flush not in method.flush_modes:
        modes = ", ".join(method.flush_modes)
        return f"{path.method} flushes by {modes}, not by {path.flush!r}"
    return None


def expand(entry: dict) -> list[PacedPath]:
    """A config entry (library, method, transport, optional flush_modes) as its paths: every
    flush mode the catalogue gives the method unless the entry names some."""
    method = METHODS[entry["method"]]
    modes = entry.get("flush_modes") or method.flush_modes
    return [PacedPath(entry["library"], entry["method"], entry["transport"], m)
            for m in FLUSH_MODES if m in modes]  # fmt: skip
