"""The input journal: every event is appended (trace format) before it has any effect."""

from __future__ import annotations

import os
import re
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

    def __init__(self, path: Path, table: str, *, now: float, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        self.events: list[Event] = []
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

    def _read_existing(self, table: str) -> float:
        with self.path.open(encoding="utf-8") as fh:
            header = fh.readline().strip()
            match = HEADER_RE.match(header)
            if not match:
                raise JournalError(f"journal {self.path}: first line is not a journal header")
            if match["table"] != table:
                raise JournalError(
                    f"journal {self.path} belongs to table {match['table']}, not {table}"
                )
            lines = fh.readlines()
        if lines and not lines[-1].endswith("\n"):
            lines = lines[:-1]  # a line torn by a power cut was never applied
        try:
            self.events = list(iter_trace(lines, source=str(self.path)))
        except TraceError as exc:
            raise JournalError(f"journal unreadable: {exc}") from exc
        return float(match["epoch"])

    def append(self, event: Event) -> None:
        """Write one event and make it durable before the caller applies it."""
        try:
            self._fh.write(event_to_json(event) + "\n")
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise JournalError(f"journal {self.path}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        """Close the file."""
        self._fh.close()

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)
