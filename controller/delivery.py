"""At-least-once across restarts: the durable mark of acknowledged events and what to re-send."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kernel.errors import JournalError
from kernel.messages import EVENTS, Message
from kernel.private import fsync_dir, open_private

log = logging.getLogger(__name__)


def acked_path(journal: Path) -> Path:
    """Where the mark of a journal lives: `<journal>.acked`, next to it."""
    return journal.with_name(journal.name + ".acked")


class AckedMark:
    """The highest events `seq` the broker acknowledged (PUBACK), kept durably in a small file.

    The file holds one decimal number and a newline. It is replaced atomically (written to a
    temporary file, fsync'd, renamed over, directory fsync'd), at most every `interval`
    seconds while the number grows, and once more by `stop`. After a crash it may lag
    behind the broker (more duplicates after the restart), never run ahead of it.
    """

    def __init__(self, path: Path, interval: float = 0.1) -> None:
        self.path = path
        # Made once: a path made at every write would intern its name anew each time, and
        # CPython's table of interned strings grows by half a megabyte after some thousands.
        self._tmp = path.with_name(path.name + ".tmp")
        self.interval = interval
        self.written = 0
        self._source: Callable[[], int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._failing: str | None = None  # why the last write failed (logged once)

    def load(self) -> int:
        """The number in the file; 0 when there is none yet (everything is re-sent)."""
        try:
            text = self.path.read_text(encoding="ascii")
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise JournalError(f"{self.path}: {exc.strerror or exc}") from exc
        try:
            value = int(text.strip())
        except ValueError:
            # A file that is not a number was not written by us (we rename whole files in):
            # re-sending everything is the safe side.
            log.error("%s: not a number (%r); re-sending every event", self.path, text[:40])
            return 0
        self.written = max(value, 0)
        return self.written

    def write(self, seq: int) -> None:
        """Make `seq` the durable mark (a smaller number than the last one is ignored)."""
        with self._lock:
            if seq <= self.written:
                return
            tmp = self._tmp
            try:
                with open_private(tmp) as fh:
                    fh.write(f"{seq}\n".encode("ascii"))
                    fh.flush()
                    os.fsync(fh.fileno())
                tmp.replace(self.path)
                fsync_dir(self.path.parent)
            except OSError as exc:
                # Retried every `interval` while the number grows (e.g. a full disk):
                # said once, and again only if the cause changes or it works again.
                reason = exc.strerror or str(exc)
                if reason != self._failing:
                    self._failing = reason
                    log.error(
                        "%s: cannot write the delivery mark: %s (retrying; a restart now "
                        "would send again the events after %d)",
                        self.path,
                        reason,
                        self.written,
                    )
                return
            self.written = seq
            if self._failing is not None:
                self._failing = None
                log.warning("%s: the delivery mark is written again (%d)", self.path, seq)

    def reset(self) -> None:
        """Forget the mark (a new journal starts at seq 1: an old mark would be stale)."""
        with self._lock:
            try:
                if self.path.exists():
                    self.path.unlink()
                    fsync_dir(self.path.parent)  # or a power cut brings the stale mark back
            except OSError as exc:
                log.error("%s: cannot remove a stale delivery mark: %s", self.path, exc)
            self.written = 0

    def start(self, source: Callable[[], int]) -> None:
        """Write `source()` whenever it grew, at most every `interval` seconds."""
        self._source = source
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="acked-mark", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self._source is not None
        while not self._stop.wait(self.interval):
            self.write(self._source())

    def stop(self) -> None:
        """Stop the writer and write the latest number."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._source is not None:
            self.write(self._source())


@dataclass(slots=True)
class Redelivery:
    """Collects, from the messages a journal replay regenerates, what must be sent again.

    Everything the engine produced after the event with `seq == acked` is kept in order
    (events, hole cards, alerts, replies), except retained messages, of which only each
    topic's last one is kept, to be sent after the rest. With `acked == 0` everything is.
    """

    acked: int
    messages: list[Message] = field(default_factory=list)
    retained: dict[str, Message] = field(default_factory=dict)
    first_seq: int | None = None  # the first events seq regenerated
    last_seq: int = 0
    _collecting: bool = False

    def __post_init__(self) -> None:
        self._collecting = self.acked <= 0

    def add(self, produced: Iterable[Message]) -> None:
        """Feed the messages of one replayed input, in order."""
        for message in produced:
            seq = message.payload.get("seq") if message.topic == EVENTS else None
            if isinstance(seq, int):
                if self.first_seq is None:
                    self.first_seq = seq
                    # The journal starts after the mark (e.g. from a checkpoint): send all.
                    self._collecting = self._collecting or seq > self.acked
                self.last_seq = seq
            if message.retain:
                self.retained.pop(message.topic, None)
                self.retained[message.topic] = message
                continue
            if self._collecting:
                self.messages.append(message)
            elif seq == self.acked:
                self._collecting = True

    @property
    def behind(self) -> bool:
        """The broker acknowledged more events than the journal regenerates (lost journal tail)."""
        return self.acked > self.last_seq

    @property
    def gap(self) -> bool:
        """Events between the mark and the first regenerated one cannot be regenerated."""
        return self.first_seq is not None and self.first_seq > self.acked + 1

    def result(self) -> list[Message]:
        """What to publish again, in order: the kept messages, then the last retained ones."""
        return [*self.messages, *self.retained.values()]
