"""How to get into a secured server: TLS, HTTP basic auth or a token, and the ILP/TCP key.

The config names environment variables, never secrets (`questdb.auth`); `Access.from_settings`
reads them once. A secret is held as a `Secret`, whose str and repr are a mask, so a handle that
ends up in a log line or an error shows `****`; `Access.mask` hides every secret in a text (an
error message, a client string) before it is shown.

ILP/TCP authentication is QuestDB's challenge and response: the client sends its key id (the
user name) and a newline, the server a random challenge ending in a newline, and the client its
ECDSA P-256 SHA-256 signature of the challenge, base64, and a newline. A refused signature only
closes the connection; `check_ilp_tcp` waits for that before a job sends a row.
"""

from __future__ import annotations

import base64
import os
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingestbench.errors import UserError

MASK = "****"
HANDSHAKE_TIMEOUT_S = 10.0
#: How long a signed-in ILP/TCP connection is watched for the server closing it (a refused key).
REFUSAL_WAIT_S = 1.0


class AccessError(UserError):
    """A credential is missing, refused, or a certificate does not verify."""


class Secret:
    """A secret value that never prints: str() and repr() give the mask."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return MASK

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


#: A config's `*_env` key (its full path) naming a variable that is unset or empty.
UNSET_VARIABLE = (
    "{key} names the environment variable {name}, which is not set; export {name} with the "
    "secret before running (the config holds only its name)."
)


def secret_from_env(name: str, key: str) -> Secret:
    """The value of the environment variable `name` that the config's `key` names."""
    value = os.environ.get(name)
    if not value:
        raise AccessError(UNSET_VARIABLE.format(key=f"questdb.{key}", name=name))
    return Secret(value)


def tls_roots_problem(tls_roots: str | None) -> str | None:
    """Why `questdb.tls_roots` cannot be used (it names no file), or None."""
    if tls_roots and not Path(tls_roots).is_file():
        return (
            f"questdb.tls_roots is {tls_roots}, which is not a file; give the PEM file of the CA "
            f"that signed the server's certificate."
        )
    return None


@dataclass(frozen=True)
class Access:
    """TLS and credentials of one server; the default is a plain, open server."""

    tls: bool = False
    tls_roots: str | None = None  # a PEM file of the CA; None: the system's roots
    tls_verify: bool = True  # False: any certificate is taken (a test server's; warned of)
    http_user: str | None = None
    http_password: Secret | None = None
    http_token: Secret | None = None
    tcp_user: str | None = None
    tcp_token: Secret | None = None  # the private key (d), base64url
    tcp_token_x: str | None = None
    tcp_token_y: str | None = None
    pg_user: str | None = None  # None: QuestDB's default PGWire user
    pg_password: Secret | None = None

    @classmethod
    def from_settings(
        cls, tls: bool, tls_roots: str | None, auth: Mapping[str, Any], tls_verify: bool = True
    ) -> Access:
        """From the config's questdb.tls, tls_roots, auth and tls_verify, the secrets from the
        environment."""
        http, tcp, pg = auth.get("http") or {}, auth.get("tcp") or {}, auth.get("pg") or {}
        if problem := tls_roots_problem(tls_roots):
            raise AccessError(problem)

        def env(block: Mapping[str, Any], key: str, where: str) -> Secret | None:
            return secret_from_env(block[key], f"auth.{where}.{key}") if key in block else None

        return cls(
            tls=tls,
            tls_roots=tls_roots,
            tls_verify=tls_verify,
            http_user=http.get("username"),
            http_password=env(http, "password_env", "http"),
            http_token=env(http, "token_env", "http"),
            tcp_user=tcp.get("username"),
            tcp_token=env(tcp, "token_env", "tcp"),
            tcp_token_x=tcp.get("token_x"),
            tcp_token_y=tcp.get("token_y"),
            pg_user=pg.get("username"),
            pg_password=env(pg, "password_env", "pg"),
        )

    @property
    def secrets(self) -> tuple[str, ...]:
        held = (self.http_password, self.http_token, self.tcp_token, self.pg_password)
        return tuple(s.reveal() for s in held if s is not None)

    def mask(self, text: str) -> str:
        """`text` with every secret of this access replaced by the mask."""
        for value in self.secrets:  # also as a client string escapes it (';' doubled)
            text = text.replace(value.replace(";", ";;"), MASK).replace(value, MASK)
        return text

    # ------------------------------------------------------------------ HTTP (requests, /exec…)
    def http_kwargs(self) -> dict[str, Any]:
        """requests' keyword arguments: the credentials and the CA to verify against."""
        kwargs: dict[str, Any] = {"verify": (self.tls_roots or True) if self.tls_verify else False}
        if self.http_token is not None:
            kwargs["headers"] = {"Authorization": f"Bearer {self.http_token.reveal()}"}
        elif self.http_password is not None:
            kwargs["auth"] = (self.http_user, self.http_password.reveal())
        return kwargs

    def http_headers(self) -> dict[str, str]:
        """The Authorization header of a raw HTTP connection (none for an open server)."""
        if self.http_token is not None:
            return {"Authorization": f"Bearer {self.http_token.reveal()}"}
        if self.http_password is not None:
            pair = f"{self.http_user}:{self.http_password.reveal()}".encode()
            return {"Authorization": "Basic " + base64.b64encode(pair).decode()}
        return {}

    def http_refused(self, url: str) -> str:
        """Why a server answered 401, and what to fix."""
        if self.http_token is not None:
            return (f"QuestDB at {url} refused the token (HTTP 401); check the token in the "
                    f"variable questdb.auth.http.token_env names")  # fmt: skip
        if self.http_password is not None:
            return (f"QuestDB at {url} refused user {self.http_user!r} (HTTP 401); check the "
                    f"user name and the password in the variable questdb.auth.http.password_env "
                    f"names")  # fmt: skip
        return (f"QuestDB at {url} asks for credentials (HTTP 401); set questdb.auth.http "
                f"(username and password_env, or token_env)")  # fmt: skip

    def tls_failed(self, where: str) -> str:
        """Why a TLS handshake failed, and what to fix."""
        roots = f"the CA in {self.tls_roots}" if self.tls_roots else "the system's CAs"
        return (f"the TLS certificate of QuestDB at {where} does not verify against {roots}; "
                f"set questdb.tls_roots to the PEM file of the CA that signed it")  # fmt: skip

    # ------------------------------------------------------------------ the ILP client's string
    def conf_items(self, transport: str) -> dict[str, str]:
        """The client configuration's keys for `transport` (values escaped: ';' doubled)."""
        items: dict[str, str] = {}
        if transport == "http":
            if self.http_token is not None:
                items["token"] = self.http_token.reveal()
            elif self.http_password is not None:
                items["username"] = str(self.http_user)
                items["password"] = self.http_password.reveal()
        elif self.tcp_token is not None:
            items.update(username=str(self.tcp_user), token=self.tcp_token.reveal(),
                         token_x=str(self.tcp_token_x), token_y=str(self.tcp_token_y))  # fmt: skip
        if self.tls and not self.tls_verify:
            items["tls_verify"] = "unsafe_off"
        elif self.tls:
            items["tls_verify"] = "on"
            if self.tls_roots:
                items["tls_roots"] = str(Path(self.tls_roots).resolve())
        return {k: v.replace(";", ";;") for k, v in items.items()}

    # ------------------------------------------------------------------ raw connections
    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.tls_roots)
        if not self.tls_verify:
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        return context

    def wrap(self, sock: socket.socket, host: str) -> socket.socket:
        """`sock` inside TLS when the server wants it; a certificate that fails says so."""
        if not self.tls:
            return sock
        try:
            return self.ssl_context().wrap_socket(sock, server_hostname=host)
        except ssl.SSLCertVerificationError:
            sock.close()
            raise AccessError(self.tls_failed(host) + ".") from None

    def sign_in(self, sock: socket.socket) -> None:
        """QuestDB's ILP/TCP challenge and response on a fresh connection (when a key is set)."""
        if self.tcp_token is None:
            return
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        sock.sendall(f"{self.tcp_user}\n".encode())
        challenge = b""
        while not challenge.endswith(b"\n"):
            data = sock.recv(512)
            if not data:
                raise AccessError(self.key_refused(f"{sock.getpeername()[0]}"))
            challenge += data
        private = ec.derive_private_key(_b64_int(self.tcp_token.reveal()), ec.SECP256R1())
        signature = private.sign(challenge[:-1], ec.ECDSA(hashes.SHA256()))
        sock.sendall(base64.b64encode(signature) + b"\n")

    def key_refused(self, where: str) -> str:
        return (
            f"QuestDB at {where} refused the ILP/TCP key of user {self.tcp_user!r}; check "
            f"questdb.auth.tcp (username, token_x, token_y and the private key in the "
            f"variable token_env names) against the server's line.tcp.auth.db.path."
        )


def _b64_int(text: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def _b64(value: int) -> str:
    return base64.urlsafe_b64encode(value.to_bytes(32, "big")).decode().rstrip("=")


def open_ilp_tcp(host: str, port: int, access: Access, timeout: float = 60) -> socket.socket:
    """A raw ILP/TCP connection, inside TLS and signed in as the access says."""
    sock = access.wrap(socket.create_connection((host, port), timeout=timeout), host)
    try:
        sock.settimeout(HANDSHAKE_TIMEOUT_S)
        access.sign_in(sock)
        sock.settimeout(timeout)
    except BaseException:
        sock.close()
        raise
    return sock


def check_ilp_tcp(host: str, port: int, access: Access) -> None:
    """Sign in over ILP/TCP and wait for the server to close on a refused key (it says nothing
    else): one sentence before a job sends a row. Nothing to check without a key or TLS."""
    if access.tcp_token is None and not access.tls:
        return
    where = f"{host}:{port}"
    try:
        sock = open_ilp_tcp(host, port, access, timeout=HANDSHAKE_TIMEOUT_S)
    except OSError as exc:
        raise AccessError(
            f"cannot open ILP/TCP at {where} ({exc.strerror or exc}); check questdb.host and "
            f"ilp_port, and that the server is running."
        ) from None
    with sock:
        if access.tcp_token is None:
            return
        sock.settimeout(REFUSAL_WAIT_S)
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False  # still open: the server took the key and waits for rows
        except OSError:
            closed = True
        if closed:
            raise AccessError(access.key_refused(where))


@dataclass(frozen=True)
class IlpKey:
    """An ILP/TCP key pair: the private key d (secret) and the public x, y, base64url."""

    d: Secret
    x: str
    y: str

    @classmethod
    def generate(cls) -> IlpKey:
        from cryptography.hazmat.primitives.asymmetric import ec

        return cls.from_private(_b64(ec.generate_private_key(ec.SECP256R1()).private_numbers()
                                     .private_value))  # fmt: skip

    @classmethod
    def from_private(cls, d: str) -> IlpKey:
        from cryptography.hazmat.primitives.asymmetric import ec

        try:
            public = ec.derive_private_key(_b64_int(d), ec.SECP256R1()).public_key()
        except ValueError:
            raise AccessError("the ILP/TCP private key is not a P-256 key in base64url; give "
                              "the key's d as QuestDB's docs make it.") from None  # fmt: skip
        numbers = public.public_numbers()
        return cls(Secret(d), _b64(numbers.x), _b64(numbers.y))

    def auth_db_line(self, user: str) -> str:
        return auth_db_line(user, self.x, self.y)


def auth_db_line(user: str | None, x: str | None, y: str | None) -> str:
    """A public key as a line of the server's line.tcp.auth.db.path file."""
    return f"{user}\tec-p-256-sha256\t{x}\t{y}\n"
