"""The fault injector: a thread on its own clock, independent of the loader. At its point (seconds
into the load) it does the fault to the server (kill and restart, pause and resume) or arms the
relay (the cuts: the relay cuts at the next bytes its mode matches).

`kill_after_ack` is the one targeted through the loader: armed at its time, it kills the server
just after the next batch the server acknowledged (`Load.on_ack`), its WAL apply possibly
pending. A point that comes after the load (and, over ILP/TCP, after the table showed every row)
is never done: the case is then `not measured`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ingestbench.delivery.relay import Relay
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.server.restartable import RestartableServer

#: The relay's mode of each fault done through it (the `relay` control cuts nothing).
CUTS = {"cut_stream": "stream", "cut_response": "response"}
RELAYED = (*CUTS, "relay")


@dataclass(frozen=True)
class Point:
    """When the fault goes: `seconds` after the load started."""

    seconds: float


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
        self._cancelled = threading.Event()
        self._acked = threading.Event()
        self._armed = False
        self.started = 0.0
        self.at: float | None = None  # time.monotonic() when the fault was done
        self.ended: float | None = None  # when it was over (a pause's resumption)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"inject-{fault}", daemon=True)

    def on_ack(self) -> None:
        """The loader's hook, just after the server acknowledged a batch."""
        if self._armed:
            self._acked.set()

    def start(self) -> None:
        self.started = time.monotonic()
        self._thread.start()

    def under_way(self) -> bool:
        """Whether the fault is being done (a restart, a pause): the server may not answer."""
        return self.at is not None and self.ended is None

    def _run(self) -> None:
        try:
            if self.fault in ("none", "relay"):
                return
            if self._cancelled.wait(self.point.seconds):
                return
            if self.fault in CUTS:
                assert self.relay is not None
                self.relay.arm()  # its cut time is the fault's
                return
            if self.fault == "kill_after_ack":
                self._armed = True
                while not self._acked.wait(0.005):
                    if self._cancelled.is_set():
                        return
            self.at = time.monotonic()
            if self.fault.startswith("kill"):
                self.server.kill()
                self.server.start()
            else:
                s = self.settings
                self.server.pause()
                time.sleep(s.pause_short_s if self.fault == "pause_short" else s.pause_long_s)
                self.server.resume()
            self.ended = time.monotonic()
        except BaseException as exc:  # noqa: BLE001 (the case records it)
            self.error = exc

    def finish(self) -> None:
        """After the load: a fault not yet due is never done; one under way ends (the restart
        done, the pause over)."""
        self._cancelled.set()
        self._thread.join()
        if self.server.paused:  # never leave it stopped, whatever happened
            self.server.resume()
