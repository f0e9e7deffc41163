"""The fault injector: a thread that waits for the load to reach its fault point, then does the
fault to the server (kill and restart, pause and resume) or arms the relay (the cuts).

A batch path's point is a share of its rows: the loader reports the rows handed over before each
batch goes, so the fault lands while a batch is on its way. A one-statement path (server_parquet)
has no batches: its point is the same share of its fault-free load's time, and a cut is armed
at once (the relay cuts the statement's request or its answer, whenever they pass).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ingestbench.delivery.relay import Relay
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.server.restartable import RestartableServer

CUTS = {"cut_stream": "stream", "cut_response": "response"}


@dataclass(frozen=True)
class Point:
    """Where the fault goes: at `rows` handed over, or `seconds` into the load."""

    rows: int | None = None
    seconds: float | None = None


class Injector:
    def __init__(
        self,
        fault: str,
        point: Point,
        server: RestartableServer,
        relay: Relay | None,
        settings: DeliverySettings,
    ):
        self.fault, self.point, self.server, self.relay = fault, point, server, relay
        self.settings = settings
        self._reached = threading.Event()
        self._load_over = threading.Event()
        self.at: float | None = None  # time.monotonic() when the fault happened
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"inject-{fault}", daemon=True)

    def progress(self, rows: int) -> None:
        """The loader's hook: rows handed over so far (this batch's included)."""
        if self.point.rows is not None and rows >= self.point.rows:
            self._reached.set()

    def start(self) -> None:
        self._thread.start()

    def _wait(self) -> bool:
        """Until the fault point; False if the load ended first."""
        if self.fault in CUTS and self.point.rows is None:
            return True
        if self.point.seconds is not None:
            return not self._load_over.wait(self.point.seconds)
        while not self._reached.wait(0.05):
            if self._load_over.is_set():
                return False
        return True

    def _run(self) -> None:
        try:
            if self.fault == "none" or not self._wait():
                return
            if self.fault in CUTS:
                assert self.relay is not None
                self.relay.arm()  # its cut time is the fault's
                return
            self.at = time.monotonic()
            if self.fault == "kill":
                self.server.kill()
                self.server.start()
            else:
                s = self.settings
                self.server.pause()
                time.sleep(s.pause_short_s if self.fault == "pause_short" else s.pause_long_s)
                self.server.resume()
        except BaseException as exc:  # noqa: BLE001 (the case records it)
            self.error = exc

    def finish(self) -> None:
        """After the load: wait for the fault to be over (restart done, pause ended)."""
        self._load_over.set()
        self._thread.join()
        if self.server.paused:  # never leave it stopped, whatever happened
            self.server.resume()
