"""Supervision by systemd (Type=notify): ready, status, watchdog pings from the loop, stopping;
and the signals that stop a service."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterable

from controller import sdnotify


class Supervisor:
    """What systemd is told about the daemon (controller/sdnotify.py speaks the protocol).

    The watchdog is pinged from the loop, every half of WatchdogSec: a wedged loop stops the
    pings and systemd restarts the daemon. Without systemd every call does nothing.
    """

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._period: float | None = None  # half of WatchdogSec, None without a watchdog
        self._next_ping = 0.0
        self._status = ""

    def ready(self, status: str) -> None:
        """Recovered and devices open: READY=1, with the first status; the pings begin."""
        interval = sdnotify.watchdog_interval()
        self._period = interval / 2 if interval else None
        self._next_ping = self._monotonic()
        self._status = status
        sdnotify.notify(f"READY=1\nSTATUS={status}")

    def ping(self) -> None:
        """Ping the watchdog when a ping is due."""
        if self._period is None:
            return
        now = self._monotonic()
        if now >= self._next_ping:
            sdnotify.notify("WATCHDOG=1")
            self._next_ping = now + self._period

    def wait_limit(self, wait: float | None) -> float | None:
        """`wait`, or less when the next ping is due sooner (then the loop wakes to ping)."""
        if self._period is None:
            return wait
        ping_in = max(0.0, self._next_ping - self._monotonic())
        return ping_in if wait is None or ping_in < wait else wait

    def status(self, text: str) -> None:
        """Tell systemd the table's status when it changed (shown by `systemctl status`)."""
        if text != self._status:
            self._status = text
            sdnotify.notify(f"STATUS={text}")

    def stopping(self) -> None:
        """The daemon is stopping (STOPPING=1)."""
        sdnotify.notify("STOPPING=1")


def status_text(table: str, hand: int | None, dealt: int, faulty: Iterable[str]) -> str:
    """The table's one-line status: the hand in progress or how many were dealt, and faults."""
    if hand is not None:
        text = f"table {table}: hand {hand} in progress"
    else:
        text = f"table {table}: between hands, {dealt} dealt"
    faults = sorted(faulty)
    if faults:
        text += f"; device fault: {', '.join(faults)}"
    return text


def stop_on_signals(stop: threading.Event, *, hangup: bool = False) -> None:
    """Set `stop` on SIGINT and SIGTERM (and SIGHUP with `hangup`: the terminal closed,
    stop cleanly all the same). Call it from the main thread."""

    def handler(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    if hangup:
        signal.signal(signal.SIGHUP, handler)
