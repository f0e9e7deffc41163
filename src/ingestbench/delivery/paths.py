"""The delivery paths (a method over a transport, with its resend rule or its `-resume` rule, with
or without DEDUP) and the faults done to them; their rules are the method catalogue's."""

from __future__ import annotations

from dataclasses import dataclass

from ingestbench.catalogue import METHODS
from ingestbench.variants import delivery_path_names

#: The faults, in the matrix's column order; `none` and `relay` are the controls (every path
#: exact): without a fault, and through the relay that cuts, which cuts nothing there.
FAULTS = ("none", "relay", "kill", "kill_after_ack", "pause_short", "pause_long", "cut_stream",
          "cut_response")  # fmt: skip
#: The controls: no fault is done, so there is no request to overlap.
CONTROLS = ("none", "relay")
FAULT_TEXT = {
    "none": "no fault: the control",
    "relay": "no fault, through the relay the cuts go through: the relay's control",
    "kill": "the server killed (SIGKILL, a process crash) and started again on the same data "
    "directory and ports",
    "kill_after_ack": "the server killed just after it acknowledged a batch (its WAL apply "
    "possibly pending), then started again",
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
    #: The catalogue's `resume` rule instead of its `resend` rule.
    resume: bool = False

    @property
    def name(self) -> str:
        rule = "-resume" if self.resume else ""
        return f"{self.method}-{self.transport}{rule}" + ("-dedup" if self.dedup else "")

    @property
    def resend(self) -> str:
        return str(METHODS[self.method].resume if self.resume else METHODS[self.method].resend)

    @property
    def acknowledged(self) -> bool:
        """Whether the server answers each batch: ILP/TCP answers nothing."""
        return self.transport != "tcp"

    def not_applicable(self, fault: str) -> str | None:
        """Why `fault` cannot happen on this path, or None."""
        if fault in ("cut_response", "kill_after_ack") and not self.acknowledged:
            return "ILP/TCP answers nothing"
        return None


def all_paths() -> tuple[DeliveryPath, ...]:
    """Every path, as the catalogue names them: in catalogue order, then the DEDUP ones."""
    return tuple(_parsed(name) for name in delivery_path_names())


def _parsed(name: str) -> DeliveryPath:
    method, transport, *rest = name.split("-")  # no method name has a hyphen
    return DeliveryPath(method, transport, "dedup" in rest, "resume" in rest)


def path_names() -> tuple[str, ...]:
    return delivery_path_names()


def by_name(name: str) -> DeliveryPath:
    return {p.name: p for p in all_paths()}[name]
