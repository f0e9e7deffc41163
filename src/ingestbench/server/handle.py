"""`QuestDB`: how to reach a running server (address, TLS, credentials) and SQL over its HTTP API.

Every request to the server (SQL, /imp, /exp) goes through `QuestDB.request`, which adds the
credentials and the CA and turns a refused credential, a certificate that does not verify and an
unreachable server into one sentence each. In external mode the benchmark's tables carry a name
of their own (`table_name`: a prefix and the run's id), and the handle remembers the tables it
created, which are the only ones it drops.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import requests

from ingestbench.errors import UserError
from ingestbench.server.access import Access

#: QuestDB's PGWire user out of the box (pg.user, pg.password): no secret, its documented default.
PG_DEFAULT_USER = ("admin", "quest")
PG_DATABASE = "qdb"  # QuestDB has one database; PGWire clients must name one


class QuestDBError(UserError):
    """The server refused a query or could not be reached."""


@dataclass
class QuestDB:
    """How to reach a server, plus SQL over its HTTP endpoint."""

    host: str
    http_port: int
    ilp_port: int
    pg_port: int | None = None
    copy_root: Path | None = None
    pid: int | None = None  # set only for a server this process started
    data_dir: Path | None = None
    access: Access = field(default_factory=Access)
    log_path: Path | None = None  # the server's log, where this process writes it
    table_prefix: str = ""  # before every table name the benchmark uses ("" when embedded)
    created_tables: set[str] = field(default_factory=set)  # the tables this run made (external)

    @property
    def url(self) -> str:
        scheme = "https" if self.access.tls else "http"
        return f"{scheme}://{self.host}:{self.http_port}"

    def table_name(self, name: str) -> str:
        """Where the dataset's table `name` lands on this server."""
        return f"{self.table_prefix}{name}"

    def ilp_conf(self, transport: str, protocol_version: int, **extra: Any) -> str:
        """The ILP client's configuration string, credentials included: never show it
        unmasked (`access.mask`)."""
        port = self.http_port if transport == "http" else self.ilp_port
        items = {"addr": f"{self.host}:{port}", "protocol_version": protocol_version,
                 **self.access.conf_items(transport), **extra}  # fmt: skip
        scheme = f"{transport}s" if self.access.tls else transport
        return f"{scheme}::" + "".join(f"{k}={v};" for k, v in items.items())

    def pg_params(self) -> dict[str, Any]:
        """libpq's connection parameters of the PGWire port (psycopg's keywords), credentials
        included: never show them unmasked."""
        if self.pg_port is None:
            raise QuestDBError(f"QuestDB at {self.host} has no PGWire port; set questdb.pg_port.")
        user, password = PG_DEFAULT_USER
        if self.access.pg_password is not None:
            user, password = str(self.access.pg_user), self.access.pg_password.reveal()
        params = {"host": self.host, "port": self.pg_port, "user": user, "password": password,
                  "dbname": PG_DATABASE}  # fmt: skip
        if self.access.tls:
            params["sslmode"] = "verify-full"
            if self.access.tls_roots:
                params["sslrootcert"] = str(Path(self.access.tls_roots).resolve())
        return params

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One HTTP request with the server's credentials and CA; what fails, in one sentence."""
        for key, value in self.access.http_kwargs().items():
            if key == "headers":
                kwargs["headers"] = {**value, **kwargs.get("headers", {})}
            else:
                kwargs.setdefault(key, value)
        try:
            response = requests.request(method, f"{self.url}{path}", **kwargs)
        except requests.exceptions.SSLError:
            raise QuestDBError(self.access.tls_failed(self.url) + ".") from None
        except requests.RequestException as exc:
            raise QuestDBError(
                f"QuestDB at {self.url} is unreachable ({type(exc).__name__}); check that the "
                f"server is running and questdb.host/http_port are right."
            ) from None
        if response.status_code == 401:
            response.close()
            raise QuestDBError(self.access.http_refused(self.url) + ".")
        return response

    def sql(self, query: str, timeout: float = 600) -> dict[str, Any]:
        """Run one statement via /exec and return the JSON answer; errors name the query."""
        r = self.request("GET", "/exec", params={"query": query}, timeout=timeout)
        body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        if r.status_code != 200 or "error" in body:
            message = self.access.mask(str(body.get("error", r.text[:300])))
            raise QuestDBError(f"QuestDB refused `{query[:120]}`: {message}.")
        return body

    def rows(self, query: str) -> list[list[Any]]:
        return self.sql(query).get("dataset", [])

    def scalar(self, query: str) -> Any:
        return self.rows(query)[0][0]

    def exact_rows(self, query: str) -> list[list[Any]]:
        """`rows`, each DOUBLE exact: a server before 9.0.3 prints one with at most 12 decimals
        (/exec and /exp alike), so there the rows are read over PGWire in binary."""
        if self.text_is_exact:
            return self.rows(query)
        import psycopg

        try:
            with psycopg.connect(**self.pg_params()) as conn, conn.cursor(binary=True) as cur:
                return [list(row) for row in cur.execute(query).fetchall()]
        except psycopg.Error as exc:
            raise QuestDBError(f"QuestDB refused `{query[:120]}` over PGWire: {exc}.") from None

    @functools.cached_property
    def text_is_exact(self) -> bool:
        """Whether the server prints every digit of a DOUBLE (/exec, /exp): 9.0.3 and later.
        Asked once per handle: a server keeps its release."""
        from ingestbench.server import versions

        return versions.has(self.release(), "exact_double_text")

    def cpu_seconds(self) -> float | None:
        """User+system CPU of the server process so far (None for an external server)."""
        if self.pid is None:
            return None
        times = psutil.Process(self.pid).cpu_times()
        return times.user + times.system + times.children_user + times.children_system

    def version(self) -> str:
        return str(self.scalar("SELECT build()")).strip()

    def release(self) -> str:
        """The release it runs ("9.3.4"), read from `version()`'s "... QuestDB 9.3.4, JDK ..."
        (the whole build text where it names none)."""
        build = self.version()
        found = re.search(r"QuestDB\s+([0-9][0-9A-Za-z.\-]*)", build)
        return found.group(1).rstrip(",") if found else build
