"""A TLS terminator in front of a real QuestDB, for the tests of certificates: a thread per
connection unwraps TLS with the certificate it was given and relays the bytes to the server.
Certificates are made here as a user makes them (a self-signed one as `openssl req -x509` does)."""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path


def self_signed(directory: Path, name: str, ca: bool) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost and its key: (cert PEM, key PEM).
    `ca`: basicConstraints CA:TRUE, as `openssl req -x509` writes by default."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    san = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .sign(key, hashes.SHA256())
    )
    paths = directory / f"{name}.pem", directory / f"{name}.key"
    paths[0].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return paths


def _relay(a: socket.socket, b: socket.socket) -> None:
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def tls_terminator(target_port: int, cert: Path, key: Path) -> Iterator[int]:
    """A port on 127.0.0.1 that speaks TLS with `cert` and relays to `target_port`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # No TLS 1.3 session tickets: an ILP/TCP client never reads, so tickets left unread make its
    # close a reset, and a reset drops whatever rows this relay had not read yet.
    context.num_tickets = 0
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        try:
            inner = context.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):  # a client that refused the certificate
            conn.close()
            return
        upstream = socket.create_connection(("127.0.0.1", target_port))
        threading.Thread(target=_relay, args=(upstream, inner), daemon=True).start()
        _relay(inner, upstream)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        # On Linux close() alone leaves a thread blocked in accept() asleep: shutdown wakes it,
        # else the join waits its whole timeout at every teardown.
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(10)
