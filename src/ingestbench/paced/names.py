"""A paced variant's name, through the catalogue's grammar: the path's `library-method-format-
transport`, then the flush mode's suffix (`pandas-dataframe-parquet-http-farrival`), then the
producers' where there are several (`...-farrival-p4`)."""

from __future__ import annotations

from dataclasses import dataclass

from ingestbench.catalogue import FLUSH_MODES, METHODS, NAME_SUFFIXES, SQL_TRANSPORT, FlushMode

#: The suffix letter of the flush mode, from the grammar (not written here twice).
FLUSH_LETTER = next(letter for letter, key in NAME_SUFFIXES.items() if key == "flush")
PRODUCERS_LETTER = next(letter for letter, key in NAME_SUFFIXES.items() if key == "producers")
#: A paced producer holds its rows as a frame read from the dataset's Parquet.
PACED_FORMAT = "parquet"


class PacedNameError(ValueError):
    pass


@dataclass(frozen=True)
class PacedPath:
    """One path as a streaming user writes it, with one flush mode, and its producers: each on
    a connection of its own, at an equal share of the rate."""

    library: str
    method: str
    transport: str
    flush: FlushMode
    producers: int = 1

    @property
    def name(self) -> str:
        base = f"{self.library}-{self.method}-{PACED_FORMAT}-{self.transport}"
        return f"{base}-{FLUSH_LETTER}{self.flush}{self._producers_suffix}"

    @property
    def path_name(self) -> str:
        """The path and its producers without its flush mode (a line of the chart)."""
        base = f"{self.library}-{self.method}-{PACED_FORMAT}-{self.transport}"
        return base + self._producers_suffix

    @property
    def _producers_suffix(self) -> str:
        return f"-{PRODUCERS_LETTER}{self.producers}" if self.producers > 1 else ""

    @property
    def is_sql(self) -> bool:
        return self.transport == SQL_TRANSPORT


def parse_paced_name(name: str) -> PacedPath:
    """Inverse of PacedPath.name; a name outside the grammar is refused in one sentence."""
    parts = name.split("-")
    producers = parts[5][len(PRODUCERS_LETTER) :] if len(parts) == 6 else "1"
    if (len(parts) not in (5, 6) or not parts[4].startswith(FLUSH_LETTER)
            or not producers.isdigit() or name != _canonical(parts, int(producers))):  # fmt: skip
        raise PacedNameError(
            f"{name!r} is not a paced variant name (library-method-{PACED_FORMAT}-transport-"
            f"{FLUSH_LETTER}MODE[-{PRODUCERS_LETTER}PRODUCERS], e.g. pandas-dataframe-"
            f"{PACED_FORMAT}-http-{FLUSH_LETTER}arrival or ...-{PRODUCERS_LETTER}4)"
        )
    library, method, fmt, transport, flush = parts[:5]
    flush = flush[len(FLUSH_LETTER) :]
    path = PacedPath(library, method, transport, flush, int(producers))  # type: ignore[arg-type]
    problem = path_problem(path)
    if fmt != PACED_FORMAT or problem:
        raise PacedNameError(f"{name!r} is not a paced variant: {problem or 'format ' + fmt}")
    return path


def _canonical(parts: list[str], producers: int) -> str:
    """The name these parts would have (one producer has no suffix; p01 is not p1)."""
    suffix = f"-{PRODUCERS_LETTER}{producers}" if producers > 1 else ""
    return "-".join(parts[:5]) + suffix


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


def expand(entry: dict, producers: tuple[int, ...] = (1,)) -> list[PacedPath]:
    """A config entry (library, method, transport, optional flush_modes) as its paths: every
    flush mode the catalogue gives the method unless the entry names some, each with every
    count of producers."""
    method = METHODS[entry["method"]]
    modes = entry.get("flush_modes") or method.flush_modes
    return [PacedPath(entry["library"], entry["method"], entry["transport"], m, n)
            for m in FLUSH_MODES if m in modes for n in producers]  # fmt: skip
