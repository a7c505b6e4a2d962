"""TDA RP-14: a random choice the engine needs (the four-card flop's) enters as an input."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from controller.inputs import Command


class DrawRequests:
    """Makes the `draw` command for what the engine wants drawn, once per want.

    The draw is made here, with the operating system's randomness, and journaled as a
    `draw` command like any input, so the engine stays pure and a replay makes the same
    choice.
    """

    def __init__(self, randbelow: Callable[[int], int] = secrets.randbelow) -> None:
        self._randbelow = randbelow
        self._asked: tuple[str, int] | None = None

    def command(self, want: tuple[str, int] | None, now: Callable[[], float]) -> Command | None:
        """The `draw` command for `want` (the engine's `(purpose, of)`), or None when the
        engine wants nothing or this want was already answered."""
        if want is None or want == self._asked:
            self._asked = want
            return None
        self._asked = want
        purpose, of = want
        pick = self._randbelow(of)
        return Command(t=now(), name="draw", args={"purpose": purpose, "pick": pick, "of": of})
