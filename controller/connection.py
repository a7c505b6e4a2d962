"""The broker connection's health: why it cannot connect, said once per change, and when to retry.

`describe_failure` turns what a connection attempt raised (TLS, TCP, DNS) into a sentence
that names the cause (an unknown CA, a wrong host name, a refused connection);
`ConnectionHealth` logs each cause once while it lasts, and again only when it changes
or the connection comes back; `Backoff` is the short, capped, jittered wait between
attempts (a broker restart is over in seconds, and the room must not stay blind longer).
"""

from __future__ import annotations

import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("tablectl.connection")

#: OpenSSL's X509 verify results (x509_vfy.h) a table meets when it checks the broker.
_VERIFY_REASONS = {
    2: "its issuer is not in ca_file (unknown CA)",
    10: "it has expired",
    9: "it is not valid yet (is the table's clock right?)",
    18: "it is self-signed and not in ca_file (unknown CA)",
    19: "its chain ends in a CA that is not in ca_file (unknown CA)",
    20: "its issuer is not in ca_file (unknown CA)",
    21: "its issuer is not in ca_file (unknown CA)",
    23: "it was revoked",
    62: "it does not name the host the table connects to (wrong host name)",
    64: "it does not name the address the table connects to (wrong host name)",
}


def describe_failure(exc: BaseException | None, host: str, port: int) -> str:
    """Why connecting to `host:port` failed, from the exception the attempt raised."""
    where = f"{host}:{port}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        code = exc.verify_code
        reason = _VERIFY_REASONS.get(code, exc.verify_message or str(exc))
        return f"TLS: the broker's certificate at {where} was refused: {reason} [{code}]"
    if isinstance(exc, ssl.SSLError):
        text = exc.reason or str(exc)
        if "CERTIFICATE_REQUIRED" in text.upper():
            return f"TLS: the broker at {where} requires a client certificate (cert_file)"
        if "UNKNOWN_CA" in text.upper() or "BAD_CERTIFICATE" in text.upper():
            return f"TLS: the broker at {where} refused the table's client certificate ({text})"
        if "WRONG_VERSION_NUMBER" in text.upper() or "RECORD_LAYER" in text.upper():
            return f"TLS: {where} does not speak TLS (a plain MQTT port?) ({text})"
        return f"TLS handshake with {where} failed: {text}"
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused by {where} (no broker listening there?)"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the broker host {host!r}: {exc.strerror or exc}"
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"no answer from {where} (timed out)"
    if isinstance(exc, ConnectionResetError):
        return f"{where} closed the connection during the handshake"
    if isinstance(exc, OSError):
        return f"cannot connect to {where}: {exc.strerror or exc}"
    if exc is None:
        return f"cannot connect to {where}"
    return f"cannot connect to {where}: {type(exc).__name__}: {exc}"


class Backoff:
    """Waits between connection attempts: `first` doubling up to `cap` seconds, each drawn
    at random in [half, all] of that (jitter: tables that lost one broker do not all come
    back in the same instant)."""

    def __init__(
        self,
        first: float = 0.5,
        cap: float = 4.0,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if not 0 < first <= cap:
            raise ValueError(f"backoff needs 0 < first <= cap, got {first}, {cap}")
        self.first = first
        self.cap = cap
        self._rng = rng
        self._failures = 0

    def next(self) -> float:
        """The wait before the next attempt (grows with each call until `reset`)."""
        ceiling = min(self.cap, self.first * float(1 << min(self._failures, 30)))
        self._failures += 1
        return ceiling * (0.5 + 0.5 * self._rng())

    def reset(self) -> None:
        """A connection succeeded: the next outage starts again from `first`."""
        self._failures = 0


@dataclass(frozen=True, slots=True)
class Recovery:
    """How the current connection came about (published in `status`)."""

    last_connect_error: str | None  # the last reason an attempt failed before it
    reconnected_after: float | None  # seconds without a connection before it (None: first)


class ConnectionHealth:
    """The connection's state for the log and the status: up, or down and why.

    Each cause is logged once, when it appears (a failure repeated at every attempt is not
    logged again), then once more when it changes or when the connection is back.
    Thread-safe; `clock` is monotonic seconds.
    """

    def __init__(self, where: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        self._clock = clock
        self._lock = threading.Lock()
        self._up = False
        self._ever_up = False
        self._down_since = clock()
        self._reason: str | None = None  # the cause being reported now
        self.failures = 0  # failed attempts since the connection was last up
        self.total_failures = 0  # failed attempts since the start

    @property
    def reason(self) -> str | None:
        """Why the table is not connected now (None when up or not known)."""
        with self._lock:
            return self._reason

    def failed(self, reason: str) -> None:
        """A connection attempt failed (or the broker refused it) for `reason`."""
        with self._lock:
            self.failures += 1
            self.total_failures += 1
            if reason == self._reason:
                return
            self._reason = reason
        log.error("cannot connect to the broker %s: %s (retrying)", self.where, reason)

    def lost(self, reason: str) -> None:
        """The connection that was up went down."""
        with self._lock:
            if not self._up:
                return
            self._up = False
            self._down_since = self._clock()
            self._reason = None
        log.warning("lost the connection to the broker %s: %s", self.where, reason)

    def connected(self) -> Recovery:
        """The connection is up; returns how it came about, and logs it."""
        with self._lock:
            first = not self._ever_up
            outage = self._clock() - self._down_since
            recovery = Recovery(self._reason, None if first else round(outage, 3))
            self._up = self._ever_up = True
            failures, self.failures = self.failures, 0
            self._reason = None
        if recovery.last_connect_error is not None:
            log.warning(
                "connected to the broker %s after %.1f s and %d failed attempt(s); "
                "last error: %s",
                self.where,
                outage,
                failures,
                recovery.last_connect_error,
            )
        elif first:
            log.info("connected to the broker %s", self.where)
        else:
            log.info("connected to the broker %s again after %.1f s", self.where, outage)
        return recovery
