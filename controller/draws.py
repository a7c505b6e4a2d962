"""TDA RP-14: a random choice the engine needs (the four-card flop's) enters as an input."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from controller.hooks import Effect, Table
from kernel.inputs import Command, Event


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


def install_draws(table: Table, draws: DrawRequests | None = None) -> DrawRequests:
    """RP-14: a draw the engine wants enters as a journaled `draw` command, asked after
    every applied input (once the batch is committed) and once at start (a four-card
    flop's draw a stop left unasked)."""
    requests = draws or DrawRequests()

    def request() -> None:
        command = requests.command(table.engine.wants_draw(), table.now)
        if command is not None:
            table.submit(command)

    def applied(item: Event) -> Effect:
        return request

    table.register_event_handler("table:applied", applied)
    table.register_event_handler("table:ready", request)
    return requests
