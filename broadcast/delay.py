"""The secure delay: every input waits D seconds before the on-air view may see it.

Each input is stamped with the time it arrived at the TV service (which is after the
reader saw it) and released at `arrival + D` at the earliest, in arrival order. D is
fixed for a hand when the hand's first input arrives; a larger D set later applies at
once to everything still held (holding longer is always safe), a smaller one only to
hands that start after it was set: a hand on air never jumps ahead, and no input of a
hand is released sooner than the D that was in force when the hand began.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

from kernel.errors import TableError

#: The largest secure delay accepted, in seconds.
MAX_DELAY = 3600.0


class DelayError(TableError):
    """An impossible secure delay (negative, not a number, too long)."""


def check_delay(seconds: float) -> float:
    """`seconds` as a valid delay, else DelayError."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise DelayError(f"the delay must be a number of seconds, got {seconds!r}")
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_DELAY:
        raise DelayError(f"the delay must be between 0 and {MAX_DELAY:g} seconds, got {seconds}")
    return float(seconds)


@dataclass(frozen=True, slots=True)
class Held:
    """One input in the delay line."""

    arrived: float
    hand: int | None
    kind: str  # "state", "events", "holecards", "status"
    payload: dict[str, Any]


class DelayLine:
    """Inputs of one table, in arrival order, each released once its time has come."""

    def __init__(self, delay: float) -> None:
        self._delay = check_delay(delay)
        self._hand_delay: dict[int, float] = {}
        self._queue: deque[tuple[float, Held]] = deque()
        self._last_release = -math.inf
        self._current_hand: int | None = None
        self._floor = 0.0  # the table's own release delay: never less than that

    @property
    def configured(self) -> float:
        """The delay set last (for hands that start from now on)."""
        return self._delay

    @property
    def floor(self) -> float:
        """The table's release delay (its hole-card keys come no sooner): D is never less."""
        return self._floor

    def set_floor(self, seconds: float) -> None:
        """The table announced it releases hole-card keys `seconds` after the read: hold
        everything at least that long, so that the picture and the cards stay together.
        Only ever raised (at once, like a larger D)."""
        seconds = min(check_delay(seconds), MAX_DELAY)
        if seconds > self._floor:
            self._floor = seconds
            self._retime()

    @property
    def in_force(self) -> float:
        """The delay the hand arriving now is held by."""
        return self._delay_for(self._current_hand)

    def set_delay(self, seconds: float) -> None:
        """Change D: a larger one applies at once, a smaller one from the next hand."""
        self._delay = check_delay(seconds)
        self._retime()

    def _retime(self) -> None:
        """Re-time what is held: nothing may leave earlier than it would have."""
        retimed: deque[tuple[float, Held]] = deque()
        last = self._last_release
        for release, held in self._queue:
            last = max(release, held.arrived + self._delay_for(held.hand), last)
            retimed.append((last, held))
        self._queue = retimed

    def _delay_for(self, hand: int | None) -> float:
        fixed = self._hand_delay.get(hand, self._delay) if hand is not None else self._delay
        return max(fixed, self._delay, self._floor)

    def push(self, held: Held) -> float:
        """Hold an input; return the time it will be released."""
        if held.hand is not None:
            if held.hand not in self._hand_delay:
                self._hand_delay[held.hand] = self._delay
                # Hands long gone need no entry (keep the last few only).
                for old in sorted(self._hand_delay)[:-256]:
                    del self._hand_delay[old]
            self._current_hand = held.hand
        # A hand's delay may be larger than a later input's: order is kept all the same.
        previous = self._queue[-1][0] if self._queue else self._last_release
        release = max(held.arrived + self._delay_for(held.hand), previous)
        self._queue.append((release, held))
        return release

    def next_release(self) -> float | None:
        """When the oldest held input is due (None when nothing is held)."""
        return self._queue[0][0] if self._queue else None

    def release(self, now: float) -> list[Held]:
        """Every input due at `now`, oldest first."""
        out: list[Held] = []
        while self._queue and self._queue[0][0] <= now:
            release, held = self._queue.popleft()
            self._last_release = release
            out.append(held)
        return out

    def __len__(self) -> int:
        return len(self._queue)
