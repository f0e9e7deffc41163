"""The delivery paths (a method over a transport, with or without DEDUP) and the faults done to
them; their resend rules are the method catalogue's."""

from __future__ import annotations

from dataclasses import dataclass

from ingestbench.catalogue import METHODS, delivery_path_names

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
    """Every path, as the catalogue names them: in catalogue order, then the DEDUP ones."""
    return tuple(_parsed(name) for name in delivery_path_names())


def _parsed(name: str) -> DeliveryPath:
    method, transport, *dedup = name.split("-")  # no method name has a hyphen
    return DeliveryPath(method, transport, bool(dedup))


def path_names() -> tuple[str, ...]:
    return delivery_path_names()


def by_name(name: str) -> DeliveryPath:
    return {p.name: p for p in all_paths()}[name]
