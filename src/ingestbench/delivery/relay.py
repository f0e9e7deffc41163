"""The connection cut: a relay process between client and server (127.0.0.1 only, the standard
library only, a thread per direction of each connection), which cuts once when told to.

- `stream`: the next bytes from a client are half forwarded, then both sides are reset: a
  request (or an ILP/TCP line) broken in the middle.
- `response`: every request reaches the server whole; the next success answer from the server
  (`HTTP/1.1 2..`, or PGWire's CommandComplete of a COMMIT) is dropped and both sides reset: the
  server did the work and the client never hears it. The deterministic way to make a client's
  retry duplicate rows.
- `swallow` (the tests' fake server): the next HTTP request is kept from the server and answered
  `204` by the relay itself (a batch acknowledged and lost); anything else (ILP/TCP) is dropped
  from then on, never answered (rows whose fate the client cannot know).

`Relay` (the parent's side) starts this file as a process of its own (`python relay.py PORT
MODE`), which prints its port, takes `arm` on stdin and prints `cut <CLOCK_MONOTONIC seconds>`
when it cut. It ends when its stdin closes, when its parent dies (PR_SET_PDEATHSIG), and on
exit of the `with` block (SIGTERM, then SIGKILL): no relay outlives its case.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

LOOPBACK = "127.0.0.1"
MODES = ("stream", "response", "swallow")
#: What the swallowing relay answers a request it kept from the server: ILP/HTTP's success.
FAKE_ACK = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
#: A success answer: ILP/HTTP's 204, /exec's 200, PGWire's CommandComplete("COMMIT").
SUCCESS = (b"HTTP/1.1 2", b"COMMIT\x00")


def _reset(sock: socket.socket) -> None:
    """Close with a reset (SO_LINGER 0), as a broken network does. The shutdown first wakes the
    other direction's thread, blocked in recv() on this socket: until it lets go, close() alone
    would leave the connection open, and a client without a timeout waiting forever."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


class _Cutter:
    def __init__(self, mode: str):
        self.mode = mode
        self.armed = False
        self.done = False
        self.lock = threading.Lock()

    def should_cut(self, data: bytes, upstream: bool) -> bool:
        with self.lock:
            if not self.armed or self.done:
                return False
            hit = upstream if self.mode in ("stream", "swallow") else (
                not upstream and any(p in data for p in SUCCESS))  # fmt: skip
            self.done = hit
            return hit


def _request_end(buffer: bytes) -> int | None:
    """Where the first whole HTTP request in `buffer` ends (Content-Length bodies), or None."""
    head, sep, _ = buffer.partition(b"\r\n\r\n")
    if not sep:
        return None
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    end = len(head) + 4 + length
    return end if len(buffer) >= end else None


def _swallow(src: socket.socket, dst: socket.socket, cutter: _Cutter, data: bytes) -> None:
    """The swallowing mode from its first armed bytes: one HTTP request answered by the relay
    and kept from the server, then the rest forwarded; other bytes dropped until the end."""
    http = data.startswith((b"POST ", b"GET "))
    while http and (end := _request_end(data)) is None:
        more = src.recv(65536)
        if not more:
            return
        data += more
    print(f"cut {time.monotonic():.6f}", flush=True)
    if not http:
        while src.recv(65536):  # never reaches the server, never answered
            pass
        return
    src.sendall(FAKE_ACK)
    if rest := data[end:]:
        dst.sendall(rest)


def _pipe(src: socket.socket, dst: socket.socket, cutter: _Cutter, upstream: bool) -> None:
    try:
        while data := src.recv(65536):
            if upstream and cutter.mode == "swallow" and cutter.should_cut(data, True):
                _swallow(src, dst, cutter, data)
                continue
            if cutter.should_cut(data, upstream):
                if upstream:  # half of it reaches the server
                    dst.sendall(data[: len(data) // 2])
                print(f"cut {time.monotonic():.6f}", flush=True)
                _reset(src)
                _reset(dst)
                return
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


def main(target_port: int, mode: str) -> None:
    with contextlib.suppress(OSError, AttributeError):  # die with the parent, even on SIGKILL
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    cutter = _Cutter(mode)
    listener = socket.create_server((LOOPBACK, 0))

    def accept() -> None:
        while True:
            client = None
            try:
                client, _ = listener.accept()
                server = socket.create_connection((LOOPBACK, target_port))
            except OSError:
                if client is not None:  # the server is down: the client's connection goes
                    _reset(client)
                continue
            for a, b, up in ((client, server, True), (server, client, False)):
                threading.Thread(target=_pipe, args=(a, b, cutter, up), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    print(f"port {listener.getsockname()[1]}", flush=True)
    for line in sys.stdin:  # until the parent closes our stdin
        if line.strip() == "arm":
            with cutter.lock:
                cutter.armed = True


class Relay:
    """The relay process, from the parent's side: `port`, `arm()`, `cut_time()`."""

    def __init__(self, target_port: int, mode: str):
        if mode not in MODES:
            raise ValueError(f"relay mode {mode!r} is not one of {MODES}")
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(target_port), mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            first = self.proc.stdout.readline().split()
            if len(first) != 2 or first[0] != "port":
                raise RuntimeError(f"the relay process did not start (it said {first!r})")
            self.port = int(first[1])
        except BaseException:
            self.close()
            raise
        self._cut: float | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("cut "):
                self._cut = float(line.split()[1])

    def arm(self) -> None:
        self.proc.stdin.write("arm\n")
        self.proc.stdin.flush()

    def cut_time(self) -> float | None:
        """When it cut (time.monotonic() of this machine), or None if it has not."""
        return self._cut

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.join(5)  # its last line (a cut) read before the cut time is asked
        with contextlib.suppress(OSError):
            self.proc.stdout.close()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
