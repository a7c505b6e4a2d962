"""The tournament clock: levels and breaks in order, started, paused, resumed, given more time;
hand-for-hand runs a fixed time off each hand (TDA 2019 RP-8 B-D). Pure: the time is passed in.

A new level starts when the clock reaches zero (TDA 23); the room then pushes it to every
table, which applies it from its next hand. `advance` says which steps were entered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from room.tournament.structure import Step


@dataclass(slots=True)
class Clock:
    """Where the tournament is in its structure, and how much time the step has left."""

    steps: tuple[Step, ...]
    index: int = 0
    remaining: float = 0.0  # seconds left in the step, measured at `anchor`
    anchor: float | None = None  # the time `remaining` was taken; None: the clock is stopped
    started: bool = False
    factor: float = 1.0  # durations from here on (Casinos Austria art. 42: 0.5 heads-up)
    frozen: bool = False  # hand-for-hand: time passes only by hands (RP-8 B), breaks aside

    def __post_init__(self) -> None:
        if not self.remaining:
            self.remaining = self.steps[0].seconds

    @property
    def running(self) -> bool:
        return self.anchor is not None

    @property
    def step(self) -> Step:
        return self.steps[self.index]

    def duration(self, index: int) -> float:
        return self.steps[index].seconds * self.factor

    def _roll(self, index: int, left: float) -> tuple[int, float, list[int]]:
        """Steps entered when `left` seconds remain in step `index` (negative: run past)."""
        entered: list[int] = []
        while left <= 0 and index < len(self.steps) - 1:
            index += 1
            left += self.duration(index)
            entered.append(index)
        return index, max(left, 0.0), entered

    def view(self, now: float) -> tuple[int, float]:
        """(step index, seconds left) at `now`, without changing the clock."""
        if self.anchor is None:
            return self.index, self.remaining
        index, left, _ = self._roll(self.index, self.remaining - (now - self.anchor))
        return index, left

    def advance(self, now: float) -> list[int]:
        """Bring the clock to `now`; the steps entered on the way (TDA 23: a new level on
        the clock reaching zero)."""
        if self.anchor is None:
            return []
        index, left, entered = self._roll(self.index, self.remaining - (now - self.anchor))
        self.index, self.remaining, self.anchor = index, left, now
        if entered and self.frozen and not self.step.is_break:
            self.anchor = None  # hand-for-hand: a break is run by the clock, levels by hands
        return entered

    def start(self, now: float) -> None:
        self.started = True
        if not self.frozen or self.step.is_break:
            self.anchor = now

    def pause(self, now: float) -> list[int]:
        entered = self.advance(now)
        self.anchor = None
        return entered

    def resume(self, now: float) -> None:
        if self.started and self.anchor is None and (not self.frozen or self.step.is_break):
            self.anchor = now

    def add(self, now: float, seconds: float) -> list[int]:
        """More time (or less, negative) on the step in progress; below zero the next step
        begins with what is left over."""
        entered = self.advance(now)
        index, left, more = self._roll(self.index, self.remaining + seconds)
        self.index, self.remaining = index, left
        self.anchor = now if self.anchor is not None else None
        return entered + more

    def goto(self, now: float, index: int) -> list[int]:
        """Jump to step `index` with its full time (a TD's correction)."""
        self.advance(now)
        index = min(max(index, 0), len(self.steps) - 1)
        if index == self.index:
            self.remaining = self.duration(index)
            return []
        self.index, self.remaining = index, self.duration(index)
        return [index]

    def freeze(self, now: float) -> list[int]:
        """Hand-for-hand begins (RP-8 A, B): the clock stops where it is; from now on each hand
        runs a fixed time off it (`run_off`), while a break still runs on the clock."""
        entered = self.advance(now)
        self.frozen = True
        if not self.step.is_break:
            self.anchor = None
        return entered

    def unfreeze(self, now: float) -> None:
        """Hand-for-hand ends: the clock runs again from what it shows."""
        self.frozen = False
        if self.started and self.anchor is None:
            self.anchor = now

    def run_off(self, now: float, seconds: float) -> list[int]:
        """RP-8 B-D: a hand-for-hand hand takes `seconds` off the clock, whatever its real
        length; past zero, the next level begins with the rest (RP-8 D)."""
        entered = self.advance(now)
        if self.step.is_break:
            return entered
        index, left, more = self._roll(self.index, self.remaining - seconds)
        self.index, self.remaining = index, left
        if self.step.is_break and self.started:
            self.anchor = now  # a break reached by hands runs on the clock
        return entered + more

    def speed_up(self, now: float, factor: float) -> None:
        """From now on every step lasts `factor` of its time, the one in progress too
        (Casinos Austria art. 42: levels halved once heads-up)."""
        if factor == self.factor:
            return
        self.advance(now)
        self.remaining *= factor / self.factor
        self.factor = factor

    def next_level_index(self, index: int) -> int | None:
        for i in range(index + 1, len(self.steps)):
            if not self.steps[i].is_break:
                return i
        return None

    def next_break_in(self, now: float) -> float | None:
        """Seconds until the next break starts (None: no break ahead, or on a break)."""
        index, left = self.view(now)
        if self.steps[index].is_break:
            return None
        total = left
        for i in range(index + 1, len(self.steps)):
            if self.steps[i].is_break:
                return total
            total += self.duration(i)
        return None

    def public(self, now: float) -> dict[str, Any]:
        """What the clock page shows (`remaining` at `now`)."""
        index, left = self.view(now)
        step = self.steps[index]
        level = step.level
        nxt = self.next_level_index(index)
        upcoming = self.steps[nxt].level if nxt is not None else None
        return {
            "started": self.started,
            "running": self.anchor is not None,
            "hand_for_hand": self.frozen,
            "step": index,
            "on_break": step.is_break,
            "level": level.number if level else None,
            "after_level": step.after_level,
            "small_blind": level.small_blind if level else None,
            "big_blind": level.big_blind if level else None,
            "ante": level.ante if level else None,
            "bb_ante": level.bb_ante if level else None,
            "remaining": round(left, 3),
            "duration": round(self.duration(index), 3),
            "next": (
                {
                    "level": upcoming.number,
                    "small_blind": upcoming.small_blind,
                    "big_blind": upcoming.big_blind,
                    "ante": upcoming.ante,
                    "bb_ante": upcoming.bb_ante,
                }
                if upcoming
                else None
            ),
            "next_break_in": self.next_break_in(now),
            "factor": self.factor,
            "at": now,
        }
