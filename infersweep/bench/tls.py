"""TLS for https base URLs: trust settings, and the handshake on a raw non-blocking socket.

The connection keeps reading its own socket with ``recvmsg`` (so kernel receive stamps stay
the arrival times) and runs TLS in memory: an ``ssl.SSLObject`` between two ``MemoryBIO``\\ s.
Trust: the system CA store by default (OpenSSL's default paths, which honour
``SSL_CERT_FILE`` / ``SSL_CERT_DIR``), a PEM file of CAs with ``--ca-cert``, or no
verification at all with ``--insecure``. The host name of the URL is sent as SNI and checked
against the certificate (an IP address against its IP entries).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from dataclasses import dataclass

from infersweep.bench.failures import Failure, RequestFailure
from infersweep.diagnostics import InputError

try:
    _timeout_at = asyncio.timeout_at  # Python 3.11+
except AttributeError:  # Python 3.10 (an engine container's interpreter)
    _timeout_at = None


@dataclass(frozen=True)
class TLSConfig:
    ca_cert: str | None = None  # PEM file of CA certificates to trust instead of the system's
    insecure: bool = False      # no certificate or host name verification

    def context(self) -> ssl.SSLContext:
        """A client context for these settings; InputError if the CA file is unusable."""
        try:
            ctx = ssl.create_default_context(cafile=self.ca_cert)
        except FileNotFoundError as exc:
            raise InputError(f"--ca-cert {self.ca_cert}: no such file") from exc
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise InputError(f"--ca-cert {self.ca_cert}: not a PEM file of CA certificates "
                             f"({getattr(exc, 'reason', None) or exc})") from exc
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx


@dataclass(slots=True)
class TLSSession:
    """An established TLS session over a socket the caller reads and writes itself."""

    obj: ssl.SSLObject
    incoming: ssl.MemoryBIO
    outgoing: ssl.MemoryBIO


async def handshake(loop: asyncio.AbstractEventLoop, sock: socket.socket, ctx: ssl.SSLContext,
                    server_hostname: str, deadline: float) -> TLSSession:
    """Run the client handshake on a connected non-blocking socket by ``deadline`` (loop
    time). Raises RequestFailure (``tls.verify``, ``tls.error``, ``connection.closed``) or
    TimeoutError."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_side=False, server_hostname=server_hostname)
    steps = _handshake_steps(loop, sock, obj, incoming, outgoing, server_hostname)
    if _timeout_at is not None:
        async with _timeout_at(deadline):
            await steps
    else:  # Python 3.10: wait_for, whose timeout is asyncio's own TimeoutError there
        try:
            await asyncio.wait_for(steps, max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:  # noqa: UP041 - Python 3.10: not the builtin TimeoutError
            raise TimeoutError("TLS handshake timed out") from None
    return TLSSession(obj, incoming, outgoing)


async def _handshake_steps(loop, sock, obj, incoming, outgoing, server_hostname) -> None:
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            if outgoing.pending:
                await loop.sock_sendall(sock, outgoing.read())
            data = await loop.sock_recv(sock, 65536)
            if not data:
                raise RequestFailure(Failure.CONNECTION_CLOSED,
                                     "connection closed by the server during the TLS "
                                     "handshake (is it serving https?)") from None
            incoming.write(data)
        except ssl.SSLCertVerificationError as exc:
            raise RequestFailure(Failure.TLS_VERIFY, verify_message(server_hostname, exc)
                                 ) from exc
        except ssl.SSLError as exc:
            raise RequestFailure(Failure.TLS_ERROR, f"TLS handshake with {server_hostname} "
                                 f"failed: {exc.reason or exc} (is it serving https?)") from exc
    if outgoing.pending:  # the client's last flight
        await loop.sock_sendall(sock, outgoing.read())


def verify_message(host: str, exc: ssl.SSLCertVerificationError) -> str:
    return (f"certificate of {host} not trusted: {exc.verify_message or exc.reason} "
            "(--ca-cert FILE or SSL_CERT_FILE for a private CA; --insecure skips verification)")
