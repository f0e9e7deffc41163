"""The server's TLS certificate judged before a job sends a row, as the QuestDB client (rustls)
will judge it, so that a refusal says which certificate and why, not "Could not flush buffer".

Two setups fail there in the first hour: a self-signed certificate the configured CAs cannot
vouch for, and a self-signed one given as its own CA (`openssl req -x509` marks it CA:TRUE, and
rustls refuses a CA certificate as a server's own, CaUsedAsEndEntity, where OpenSSL takes it).
"""

from __future__ import annotations

import logging
import socket
import ssl

from ingestbench.server.access import HANDSHAKE_TIMEOUT_S, Access, AccessError

log = logging.getLogger(__name__)

#: The certificate signs itself and no configured CA holds it.
SELF_SIGNED = (
    "the TLS certificate of QuestDB at {where} ({subject}) is self-signed and does not verify "
    "against {roots}: set questdb.tls_roots to the PEM file of the CA that signed it (for a "
    "self-signed certificate, the certificate itself, made without CA:TRUE), or, for a test "
    "server only, set questdb.tls_verify: false."
)
#: The certificate verifies, but is a CA's: the ILP client refuses it as a server's own.
CA_AS_SERVER = (
    "the TLS certificate of QuestDB at {where} ({subject}) is a CA certificate "
    "(basicConstraints CA:TRUE, as openssl req -x509 makes by default), which the QuestDB "
    "client refuses as a server's own (CaUsedAsEndEntity): give the server a certificate "
    "without CA:TRUE, signed by the CA in questdb.tls_roots, or, for a test server only, set "
    "questdb.tls_verify: false."
)
#: Said at the start of every job (and once by the workflow) while verification is off.
UNVERIFIED = (
    "questdb.tls_verify is false: the TLS certificate of QuestDB at {host} is not verified, so "
    "anyone between here and the server could read the rows and credentials; use it for a test "
    "server only."
)


def check_certificate(host: str, port: int, access: Access) -> None:
    """Raise AccessError (one sentence) when the ILP client would refuse the server's
    certificate on `port`; nothing to check without TLS or with verification off."""
    if not access.tls or not access.tls_verify:
        return
    where = f"{host}:{port}"
    der = _peer_certificate(host, port)
    if der is None:  # no TLS handshake at all: the connection's own check says why
        return
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    subject = cert.subject.rfc4514_string()
    self_signed = cert.issuer == cert.subject
    try:
        with socket.create_connection((host, port), timeout=HANDSHAKE_TIMEOUT_S) as sock:
            access.ssl_context().wrap_socket(sock, server_hostname=host).close()
    except ssl.SSLCertVerificationError:
        if self_signed:
            roots = f"the CA in {access.tls_roots}" if access.tls_roots else "the system's CAs"
            raise AccessError(
                SELF_SIGNED.format(where=where, subject=subject, roots=roots)
            ) from None
        raise AccessError(f"{access.tls_failed(where)} (its certificate: {subject}, issued by "
                          f"{cert.issuer.rfc4514_string()}).") from None  # fmt: skip
    except OSError:
        return  # unreachable: the connection's own check says so
    if _is_ca(cert):
        raise AccessError(CA_AS_SERVER.format(where=where, subject=subject))


def _peer_certificate(host: str, port: int) -> bytes | None:
    """The certificate the server presents, unverified (DER); None when no TLS is spoken."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        sock = socket.create_connection((host, port), timeout=HANDSHAKE_TIMEOUT_S)
        with sock, context.wrap_socket(sock, server_hostname=host) as tls:
            return tls.getpeercert(binary_form=True)
    except (OSError, ssl.SSLError):
        return None


def _is_ca(cert) -> bool:
    from cryptography import x509

    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False
