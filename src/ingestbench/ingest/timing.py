"""The timed phases of one repeat, their order, and the clock that laps them.

`end_to_end` is the sum of END_TO_END_PHASES in whole-file mode and the wall time in streamed mode
(see Clock); `serialize` is a separate pass after them (for the ILP byte count and the client's
serialization cost) and never part of `end_to_end`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ingestbench.results.records import END_TO_END_PHASES, PHASES


@dataclass
class Clock:
    """Laps of perf_counter() attributed to phases.

    Whole-file mode laps phases one after the other; end to end is their sum. Streamed mode
    overlaps them: threads `add` each phase's busy time, and end to end is the wall time from
    `start_wall()` to the last lap.
    """

    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    current: str = "read"  # the phase under way, for progress reports
    _t: float = field(default_factory=time.perf_counter)
    wall_start: float | None = None  # set in streamed mode
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def restart(self) -> None:
        self._t = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.add(phase, now - self._t)
        self._t = now
        self.current = _NEXT_PHASE.get(phase, phase)

    def add(self, phase: str, seconds: float) -> None:
        with self._lock:  # the reader thread and the senders add concurrently
            self.phases[phase] += seconds

    def start_wall(self) -> None:
        self.restart()
        self.wall_start = self._t

    @property
    def wall(self) -> float | None:
        """Streamed mode: seconds from start_wall() to the last lap; None in whole-file mode."""
        return None if self.wall_start is None else self._t - self.wall_start


_NEXT_PHASE = {"read": "convert", "convert": "send", "send": "visible"}


def whole_file_end_to_end(phases: dict[str, float], elapsed: float) -> float:
    """End to end of a whole-file repeat: the sum of its phases, which are laps of one clock and
    so cannot add up to more than the `elapsed` wall time around them; if they do, a phase was
    timed twice (a busy time added on top of its lap, say), and no figure is recorded."""
    busy = sum(phases[p] for p in END_TO_END_PHASES)
    if busy > elapsed + 1e-5:  # the phases are rounded to 1 µs each
        raise RuntimeError(
            f"the phases {phases} add up to {busy:.6f} s, but only {elapsed:.6f} s passed: a "
            f"phase was timed twice; this is a bug in the method's timing, not in the data."
        )
    return busy
