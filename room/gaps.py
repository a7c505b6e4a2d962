"""Holes in each table's event `seq`: found as events arrive, asked for, healed or lost."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from controller.resend import MAX_RANGE

# A gap's row moves forward only: `open` -> `asked` (again and again) -> one of the closed
# states. Each status names the statuses it may replace; the store writes a change only
# where the row still has one of them (compare-and-set), so a late "asked" from the heal
# loop can never reopen a gap the ingest thread has healed meanwhile.
OPEN_STATUSES = ("open", "asked")
CLOSED_STATUSES = ("healed", "closed", "lost")
GAP_MOVES: dict[str, tuple[str, ...]] = {
    "asked": OPEN_STATUSES,
    "healed": OPEN_STATUSES,
    "closed": OPEN_STATUSES,
    "lost": OPEN_STATUSES,
}


@dataclass(slots=True)
class Hole:
    """Missing seqs found at once (`first`..`last` when found); `missing` is what is still
    missing, as (first, last) runs."""

    table: str
    first: int
    last: int
    found_at: float
    missing: list[tuple[int, int]]
    asked_at: float | None = None
    tries: int = 0
    gap_id: int | None = None  # its row in the gaps table

    @property
    def count(self) -> int:
        """How many seqs are still missing."""
        return sum(b - a + 1 for a, b in self.missing)


def _remove(runs: list[tuple[int, int]], seq: int) -> tuple[list[tuple[int, int]], bool]:
    """`runs` without `seq` (split where needed); whether it was in them."""
    out: list[tuple[int, int]] = []
    hit = False
    for a, b in runs:
        if a <= seq <= b:
            hit = True
            if a < seq:
                out.append((a, seq - 1))
            if seq < b:
                out.append((seq + 1, b))
        else:
            out.append((a, b))
    return out, hit


def _cut(runs: list[tuple[int, int]], first: int, last: int) -> list[tuple[int, int]]:
    """`runs` without the range first..last."""
    out: list[tuple[int, int]] = []
    for a, b in runs:
        if b < first or a > last:
            out.append((a, b))
            continue
        if a < first:
            out.append((a, first - 1))
        if b > last:
            out.append((last + 1, b))
    return out


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Runs `method` under the tracker's lock: the ingest thread and the heal loop share it."""

    @functools.wraps(method)
    def run(self: GapTracker, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]


@dataclass(slots=True)
class TableSeqs:
    """What the room has of one table: the highest seq and the holes below it."""

    max_seq: int = 0
    holes: list[Hole] = field(default_factory=list)


class GapTracker:
    """Finds holes as seqs arrive and says when to ask for them (`grace`, then every `retry`).

    A table seen for the first time with `backfill` has a hole from seq 1 (its history is
    asked for); without, it starts where the room first saw it.
    """

    def __init__(self, *, grace: float, retry: float, backfill: bool) -> None:
        self.grace = grace
        self.retry = retry
        self.backfill = backfill
        self.tables: dict[str, TableSeqs] = {}
        self.lock = threading.RLock()

    @_locked
    def load(
        self,
        known: dict[str, tuple[int, list[tuple[int, int]]]],
        lost: dict[str, list[tuple[int, int]]],
        now: float,
    ) -> list[Hole]:
        """Start from the database: every table's max seq and holes, less what is lost."""
        found: list[Hole] = []
        for table, (high, holes) in known.items():
            seqs = TableSeqs(max_seq=high)
            self.tables[table] = seqs
            for a, b in holes:
                runs = [(a, b)]
                for x, y in lost.get(table, []):
                    runs = _cut(runs, x, y)
                if not self.backfill and a == 1:
                    continue
                if runs:
                    hole = Hole(table, a, b, now, runs)
                    seqs.holes.append(hole)
                    found.append(hole)
        return found

    @_locked
    def saw(self, table: str, seqs: Iterable[int], now: float) -> tuple[list[Hole], list[Hole]]:
        """New seqs stored for `table`: (holes opened, holes healed)."""
        state = self.tables.get(table)
        ordered = sorted(set(seqs))
        opened: list[Hole] = []
        healed: list[Hole] = []
        if not ordered:
            return opened, healed
        if state is None:
            state = TableSeqs(max_seq=0 if self.backfill else ordered[0] - 1)
            self.tables[table] = state
        for seq in ordered:
            if seq > state.max_seq:
                if seq > state.max_seq + 1:
                    hole = Hole(
                        table, state.max_seq + 1, seq - 1, now, [(state.max_seq + 1, seq - 1)]
                    )
                    state.holes.append(hole)
                    opened.append(hole)
                state.max_seq = seq
                continue
            for hole in state.holes:
                hole.missing, hit = _remove(hole.missing, seq)
                if hit:
                    break
        for hole in list(state.holes):
            if not hole.missing:
                state.holes.remove(hole)
                if hole not in opened:
                    healed.append(hole)
                else:
                    opened.remove(hole)
        return opened, healed

    @_locked
    def published_up_to(self, table: str, seq: int, now: float) -> list[Hole]:
        """The table says (state `seq`) it has published up to `seq`: a hole at the end."""
        state = self.tables.get(table)
        if state is None:
            if not self.backfill or seq < 1:
                self.tables[table] = TableSeqs(max_seq=seq)
                return []
            state = TableSeqs()
            self.tables[table] = state
        if seq <= state.max_seq:
            return []
        hole = Hole(table, state.max_seq + 1, seq, now, [(state.max_seq + 1, seq)])
        state.holes.append(hole)
        state.max_seq = seq
        return [hole]

    @_locked
    def lost(self, table: str, first: int, last: int) -> list[Hole]:
        """The table no longer has first..last: stop asking; the holes that are now closed."""
        state = self.tables.get(table)
        closed: list[Hole] = []
        if state is None:
            return closed
        for hole in list(state.holes):
            hole.missing = _cut(hole.missing, first, last)
            if not hole.missing:
                state.holes.remove(hole)
                closed.append(hole)
        return closed

    @_locked
    def due(self, now: float) -> list[tuple[Hole, int, int]]:
        """Requests to send now: (hole, from_seq, to_seq), at most MAX_RANGE each; marks them
        asked."""
        out: list[tuple[Hole, int, int]] = []
        for state in self.tables.values():
            for hole in state.holes:
                if now - hole.found_at < self.grace:
                    continue
                if hole.asked_at is not None and now - hole.asked_at < self.retry:
                    continue
                hole.asked_at = now
                hole.tries += 1
                for a, b in hole.missing:
                    for start in range(a, b + 1, MAX_RANGE):
                        out.append((hole, start, min(b, start + MAX_RANGE - 1)))
        return out

    @_locked
    def open_holes(self) -> list[Hole]:
        """Every hole still open."""
        return [h for s in self.tables.values() for h in s.holes]
