"""The tournament's journal: one JSON line per input the tournament took (the tables' facts,
the floor's actions, the clock's moments that changed something), after a header with the
event file and the seed. Replayed at start, it rebuilds the tournament exactly; read by a
person, it is the record of who confirmed what and when."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from kernel.errors import JournalError

VERSION = 1


class TournamentJournal:
    """Append-only JSON Lines; every append is flushed and synced before it has effect."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None

    def read(self) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The header and the inputs of an existing journal ((None, []) if there is none).
        A last line cut short by a crash is dropped; any other bad line is an error."""
        if not self.path.exists():
            return None, []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read the tournament journal: {exc}") from exc
        records: list[dict[str, Any]] = []
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except ValueError:
                if number == len(lines):
                    break  # the write a crash cut short: never took effect
                raise JournalError(f"{self.path}: line {number} is not JSON") from None
            if not isinstance(record, dict):
                raise JournalError(f"{self.path}: line {number} is not a JSON object")
            records.append(record)
        if not records:
            return None, []
        header = records[0]
        if header.get("kind") != "header" or header.get("version") != VERSION:
            raise JournalError(f"{self.path}: not a tournament journal (version {VERSION})")
        return header, records[1:]

    def open(self, header: dict[str, Any] | None = None) -> None:
        """Open for appending; a new journal starts with `header`."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self._file = self.path.open("a", encoding="utf-8")
        if fresh:
            if header is None:
                raise JournalError(f"{self.path}: a new journal needs its header")
            self.append([{"kind": "header", "version": VERSION, **header}])

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Write records and sync them (one fdatasync for the lot)."""
        if self._file is None:
            raise JournalError("the tournament journal is not open")
        text = "".join(
            json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records
        )
        if not text:
            return
        try:
            self._file.write(text)
            self._file.flush()
            os.fdatasync(self._file.fileno())
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot write the tournament journal: {exc}") from exc

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
