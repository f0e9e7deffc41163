"""The timed phases of one repeat, their order, and the clock that laps them.

`end_to_end` is the sum of END_TO_END_PHASES; `serialize` is a separate pass after them (for the
ILP byte count and the client's serialization cost) and never part of `end_to_end`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

PHASES = ("read", "convert", "serialize", "send", "visible")
END_TO_END_PHASES = ("read", "convert", "send", "visible")


@dataclass
class Clock:
    """Laps of perf_counter() attributed to phases."""

    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    current: str = "read"  # the phase under way, for progress reports
    _t: float = field(default_factory=time.perf_counter)

    def restart(self) -> None:
        self._t = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] += now - self._t
        self._t = now
        self.current = _NEXT_PHASE.get(phase, phase)


_NEXT_PHASE = {"read": "convert", "convert": "send", "send": "visible"}
