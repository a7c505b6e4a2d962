"""The button dealt too few cards, TDA 2019 rule 37: the stub completes it, unless the button
acts first (then its hand is dead)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.engine.procedures.base import Begin, Effect, Kill, Procedure
from controller.rules.betting import Action


@dataclass(slots=True, kw_only=True)
class ButtonShort(Procedure):
    """The button is owed a card from the stub."""

    kind: str = "button_short"
    rule: str = "37"

    def replaced(self, seat: int, have: int, hole_count: int) -> list[Effect]:
        """A card reached `seat`, which now holds `have`: complete once the button has all."""
        if seat in self.seats and have >= hole_count:
            return self.complete(outcome="replaced", seat=seat)
        return []

    def acted(self, button: int, actions: Iterable[Action]) -> list[Effect]:
        """The button acted before its hand was completed: the hand is dead (37)."""
        if not any(a.seat == button for a in actions):
            return []
        return [
            *self.complete(outcome="hand_dead", seat=button),
            Kill(button, rule="37", reason="the button acted with too few cards"),
        ]


def short(seat: int, have: int) -> list[Effect]:
    """The deal is over and the button (`seat`) holds only `have` cards."""
    return [
        Begin(
            ButtonShort(
                instruction=(
                    f"The button (seat {seat}) has {have} card(s): give it the missing card "
                    "from the stub now. If the button acts first, its hand is dead."
                ),
                seats=[seat],
            )
        )
    ]
