"""The systemd notify protocol (sd_notify) written directly: one datagram to $NOTIFY_SOCKET."""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger("tablectl.sdnotify")


def _address() -> str | None:
    """The notify socket's address, with '@' (abstract namespace) turned into a NUL byte."""
    path = os.environ.get("NOTIFY_SOCKET", "")
    if path.startswith("@"):
        return "\0" + path[1:]
    if path.startswith("/"):
        return path
    return None  # unset, empty, or a transport this daemon does not speak (vsock:)


def notify(state: str) -> bool:
    """Send `state` (e.g. "READY=1", "WATCHDOG=1", "STATUS=...") to the service manager.

    Newline-separated assignments may be sent at once. Returns False without a socket
    (not started by systemd with Type=notify) or when the datagram could not be sent;
    it never raises, so the daemon runs the same with or without systemd.
    """
    address = _address()
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode("utf-8", errors="replace"))
    except OSError as exc:
        log.debug("sd_notify %r failed: %s", state, exc)
        return False
    return True


def watchdog_interval() -> float | None:
    """The watchdog timeout in seconds ($WATCHDOG_USEC), or None when there is none.

    None too when $WATCHDOG_PID names another process (the variables were inherited).
    Pings are due at least every half of it.
    """
    usec = os.environ.get("WATCHDOG_USEC", "")
    try:
        value = int(usec)
    except ValueError:
        return None
    if value <= 0:
        return None
    pid = os.environ.get("WATCHDOG_PID", "")
    if pid:
        try:
            if int(pid) != os.getpid():
                return None
        except ValueError:
            return None
    return value / 1_000_000
