"""The delivery paths (a method over a transport, with or without DEDUP) and the faults done to
them; their resend rules are the method catalogue's."""

from __future__ import annotations

from dataclasses import dataclass

from ingestbench.catalogue import METHODS, delivery_names

#: Transports whose paths are also run on a DEDUP table (the server's /write and /exec answer;
#: what a duplicating retry does there is what DEDUP can undo).
DEDUP_TRANSPORTS = ("http",)

#: The faults, in the matrix's column order; `none` is the control (every path exact).
FAULTS = ("none", "kill", "pause_short", "pause_long", "cut_stream", "cut_response")
FAULT_TEXT = {
    "none": "no fault: the control",
    "kill": "the server killed (SIGKILL) and started again on the same data directory and ports",
    "pause_short": "the server paused (SIGSTOP) for less than the client's retry timeout",
    "pause_long": "the server paused for longer than the client's request and retry timeouts",
    "cut_stream": "the connection reset in the middle of a request (half of it sent)",
    "cut_response": "the connection reset after a request reached the server and before its "
    "success answer reached the client",
}


@dataclass(frozen=True)
class DeliveryPath:
    method: str
    transport: str
    dedup: bool = False

    @property
    def name(self) -> str:
        return f"{self.method}-{self.transport}" + ("-dedup" if self.dedup else "")

    @property
    def resend(self) -> str:
        return str(METHODS[self.method].resend)

    def not_applicable(self, fault: str) -> str | None:
        """Why `fault` cannot happen on this path, or None."""
        if fault == "cut_response" and self.transport == "tcp":
            return "ILP/TCP answers nothing"
        return None


def all_paths() -> tuple[DeliveryPath, ...]:
    """Every path, in catalogue order, then the DEDUP ones."""
    plain = [DeliveryPath(m, t) for m in delivery_names() for t in METHODS[m].delivery_transports]
    dedup = [DeliveryPath(p.method, p.transport, True) for p in plain
             if p.transport in DEDUP_TRANSPORTS]  # fmt: skip
    return (*plain, *dedup)


def path_names() -> tuple[str, ...]:
    return tuple(p.name for p in all_paths())


def by_name(name: str) -> DeliveryPath:
    return {p.name: p for p in all_paths()}[name]
