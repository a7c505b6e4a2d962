"""One table's sealed hole cards at the TV service: opened only with their keys, holes healed.

The table publishes every hole card sealed (`holecards`, with a per-table hole-card `seq`)
and releases each key on `holekeys` once the broadcast may show the cards
(controller/seal.py). Here a sealed message is kept until its key comes; only then are its
cards known to anything in the service (the on-air view, the lookahead that queues the
equity): nothing is shown, computed or counted from a card before its key.

A missing `seq` is noticed (a later `seq`, a key for a message never received, the
table's `status` naming its last hole-card seq) and asked for again on
`<prefix>/tvreq/holecards`; a key that did not come while later ones did, on
`tvreq/holekeys`. A request is repeated every `retry` seconds while the hole stays, up to
`tries` times.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.seal import open_sealed
from kernel.errors import TableError

log = logging.getLogger(__name__)

#: Sealed messages and keys kept at most (older ones are dropped, oldest seq first).
KEEP = 4096

Requester = Callable[[str, int, int], None]
"""request(kind, first, last): ask the table for hole-card seqs first..last again."""


@dataclass(slots=True)
class _Ask:
    found: float
    asked: float | None = None
    tries: int = 0


class HoleCards:
    """Sealed messages, keys and opened cards of one table, by hole-card seq."""

    def __init__(self, *, grace: float = 0.5, retry: float = 3.0, tries: int = 10) -> None:
        self.grace = grace
        self.retry = retry
        self.tries = tries
        self.sealed: dict[int, dict[str, Any]] = {}
        self.keys: dict[int, str] = {}
        self.opened: dict[int, dict[str, Any]] = {}  # seq -> the clear holecards payload
        self.high = 0  # the highest seq known to exist
        self._last_key = 0  # the highest seq whose key came
        self.base: int | None = None  # the first seq this service cares about
        self._missing: dict[int, _Ask] = {}  # sealed messages to ask for
        self._keyless: dict[int, _Ask] = {}  # keys to ask for
        self.requests = 0
        self.healed = 0
        self.failed = 0  # keys that did not open their message (never shown)

    # ------------------------------------------------------------------ input

    def sealed_in(self, payload: dict[str, Any], now: float) -> dict[str, Any] | None:
        """A sealed `holecards` message; its clear payload if its key is already here."""
        seq = int(payload["seq"])
        if self.base is None:
            first = payload.get("first")
            self.base = int(first) if isinstance(first, int) and 0 < first <= seq else seq
        self._saw(seq, now)
        if seq in self._missing:
            del self._missing[seq]
            self.healed += 1
        if seq in self.sealed or seq < (self.base or 0):
            return self.opened.get(seq)
        self.sealed[seq] = payload
        self._trim()
        return self._open(seq)

    def key_in(self, payload: dict[str, Any], now: float) -> dict[str, Any] | None:
        """A released key; the clear payload it opens (None: its message is not here yet,
        or it was opened before)."""
        seq = int(payload["seq"])
        if seq in self.keys:
            return None
        self.keys[seq] = str(payload["key"])
        self._keyless.pop(seq, None)
        if self.base is None:
            self.base = seq
        if seq not in self.sealed and seq >= self.base:
            self._saw(seq, now)
            self._missing.setdefault(seq, _Ask(now))
        # Keys are released in seq order: an earlier sealed message still without its key
        # lost its release on the way.
        for earlier in range(max(self._last_key + 1, self.base), seq):
            if earlier in self.sealed and earlier not in self.keys:
                self._keyless.setdefault(earlier, _Ask(now))
        self._last_key = max(self._last_key, seq)
        return self._open(seq)

    def status_in(self, last_seq: object, first: object, now: float) -> None:
        """The table's `status`: the last hole-card seq it published (a lost tail) and the
        first of the hand in progress (where a service that starts mid-hand begins)."""
        if not isinstance(last_seq, int) or isinstance(last_seq, bool) or last_seq <= 0:
            return
        if self.base is None:
            if isinstance(first, int) and not isinstance(first, bool) and 0 < first <= last_seq:
                self.base = first  # the hand in progress, from its first hole card
            else:
                self.base = last_seq + 1  # only what comes from now on
                return
        self._saw(last_seq, now, inclusive=True)

    def _saw(self, seq: int, now: float, *, inclusive: bool = False) -> None:
        """`seq` exists: every seq between the highest known and it that is not here is
        missing (and `seq` itself, when it is only named)."""
        top = seq if inclusive else seq - 1
        for missing in range(max(self.high + 1, self.base or 1), top + 1):
            if missing not in self.sealed:
                self._missing.setdefault(missing, _Ask(now))
        self.high = max(self.high, seq)

    def _open(self, seq: int) -> dict[str, Any] | None:
        payload, key = self.sealed.get(seq), self.keys.get(seq)
        if payload is None or key is None or seq in self.opened:
            return None
        try:
            cards = open_sealed(payload, key)
        except TableError as exc:
            self.failed += 1
            log.critical("table %s: %s: not shown", payload.get("table"), exc)
            return None
        clear = {
            "table": payload.get("table"),
            "hand": payload["hand"],
            "seat": payload["seat"],
            "seq": seq,
            "cards": cards,
            "t": payload.get("t"),
        }
        self.opened[seq] = clear
        return clear

    def _trim(self) -> None:
        for store in (self.sealed, self.keys, self.opened):
            while len(store) > KEEP:
                del store[min(store)]

    # ------------------------------------------------------------------ healing

    def heal(self, now: float, request: Requester) -> int:
        """Ask for what is missing and due (grace passed, retry elapsed); requests sent."""
        sent = 0
        for kind, holes in (("holecards", self._missing), ("holekeys", self._keyless)):
            due = sorted(
                seq
                for seq, ask in holes.items()
                if now - ask.found >= self.grace
                and (ask.asked is None or now - ask.asked >= self.retry)
            )
            for first, last in _runs(due):
                request(kind, first, last)
                sent += 1
                self.requests += 1
                for seq in range(first, last + 1):
                    ask = holes[seq]
                    ask.asked = now
                    ask.tries += 1
                    if ask.tries >= self.tries:
                        log.error("hole cards seq %d: still missing after %d asks", seq, ask.tries)
                        del holes[seq]
        return sent

    @property
    def missing(self) -> int:
        """Sealed messages and keys still missing."""
        return len(self._missing) + len(self._keyless)


def _runs(seqs: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs
