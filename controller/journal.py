"""The input journal: every event is appended (trace format) before it has any effect."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from controller.errors import JournalError, TraceError
from controller.trace import Event, event_to_json, iter_trace

HEADER_RE = re.compile(r"^# tablectl-journal v1 epoch=(?P<epoch>[0-9.]+) table=(?P<table>\S+)$")


class Journal:
    """An append-only JSON Lines file of input events, with the wall-clock epoch of t=0.

    The first line is a header comment `# tablectl-journal v1 epoch=<unix time> table=<id>`,
    so `t` in the file stays "seconds since the trace began" across daemon restarts and the
    journal is itself a trace that `tablectl replay` accepts.
    """

    def __init__(
        self,
        path: Path,
        table: str,
        *,
        now: float,
        fsync: str = "always",
        fsync_interval: float = 0.1,
    ) -> None:
        self.path = path
        self.fsync = fsync
        self.events: list[Event] = []
        self._dirty = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.stat().st_size > 0:
                self.epoch = self._read_existing(table)
            else:
                self.epoch = now
                with path.open("w", encoding="utf-8") as fh:
                    fh.write(f"# tablectl-journal v1 epoch={now:.6f} table={table}\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            self._fh: TextIO = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise JournalError(f"journal {path}: {exc.strerror or exc}") from exc
        self._syncer: threading.Thread | None = None
        if fsync == "interval":
            self._syncer = threading.Thread(
                target=self._sync_loop, args=(fsync_interval,), name="journal-sync", daemon=True
            )
            self._syncer.start()

    def _sync_loop(self, interval: float) -> None:
        """Group commit: fdatasync at most every `interval` seconds while there are writes."""
        while not self._closed.is_set():
            if not self._dirty.wait(0.5):
                continue
            self._closed.wait(interval)
            self._dirty.clear()
            with self._lock:
                if not self._fh.closed:
                    os.fdatasync(self._fh.fileno())

    def _read_existing(self, table: str) -> float:
        with self.path.open(encoding="utf-8") as fh:
            lines = fh.readlines()
            match = HEADER_RE.match(lines[0].strip())
            if not match:
                raise JournalError(f"journal {self.path}: first line is not a journal header")
            if match["table"] != table:
                raise JournalError(
                    f"journal {self.path} belongs to table {match['table']}, not {table}"
                )
        if lines and not lines[-1].endswith("\n"):
            lines = lines[:-1]  # a line torn by a power cut was never applied
        try:
            self.events = list(iter_trace(lines, source=str(self.path)))
        except TraceError as exc:
            raise JournalError(f"journal unreadable: {exc}") from exc
        return float(match["epoch"])

    def append(self, event: Event) -> None:
        """Write one event before the caller applies it.

        It always reaches the operating system (a daemon crash loses nothing); with
        fsync "always" it is on the storage too, with "interval" within fsync_interval.
        """
        try:
            with self._lock:
                self._fh.write(event_to_json(event) + "\n")
                self._fh.flush()
                if self.fsync == "always":
                    os.fdatasync(self._fh.fileno())
            self._dirty.set()
        except OSError as exc:
            raise JournalError(f"journal {self.path}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        """Make everything durable and close the file."""
        self._closed.set()
        if self._syncer is not None:
            self._syncer.join(timeout=5)
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                os.fdatasync(self._fh.fileno())
                self._fh.close()

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)
