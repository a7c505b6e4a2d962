"""Wrong number of cards after substantial action, TDA 2019 rule 38: the hand is dead, and one
and only one burn comes for each later street (Illustration Addendum, examples 1-A, 1-B)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from controller.engine.effects import CallFloor, alert
from controller.engine.procedures.base import Begin, Effect, Kill, Procedure, violation


@dataclass(slots=True, kw_only=True)
class DeadHand(Procedure):
    """A hand killed after substantial action: its cards go to the muck, one burn a street."""

    kind: str = "dead_hand"
    rule: str = "38"

    PLANS_BURNS: ClassVar[bool] = True

    def on_street(self, street: str) -> list[Effect]:
        """The next street came (its burns were counted as it came): done."""
        return self.complete(outcome="street_dealt", street=street)


def dead(seat: int, why: str) -> list[Effect]:
    """Kill `seat`'s hand (38) and start the procedure that watches its cards and burns."""
    return [
        Kill(seat, rule="38", reason=f"{why} after substantial action"),
        Begin(
            DeadHand(
                instruction=(
                    f"Seat {seat}'s hand is dead (rule 38): muck all its cards. "
                    "Burn one and only one card for each coming street."
                ),
                seats=[seat],
            )
        ),
    ]


def dealt_out(seat: int) -> list[Effect]:
    """A seat dealt no card, found once a misdeal can no longer be declared (35-D): its hand
    is dead (38); its chips already in stay in the pot and the action passes it."""
    return [
        Kill(seat, rule="38", reason="dealt no card; found after substantial action"),
        Begin(
            DeadHand(
                instruction=(
                    f"Seat {seat} was dealt no card and substantial action has occurred: its "
                    "hand is dead (rule 38), its chips stay in the pot. Burn one and only one "
                    "card for each coming street."
                ),
                seats=[seat],
            )
        ),
    ]


def too_few(seat: int, have: int) -> list[Effect]:
    """Too few cards read after substantial action: maybe a card the antenna did not read.

    The dealer and the floor check; mucking the hand (or the floor) makes it dead
    (example 1-A). Too many is certain (a reader cannot invent a card): see `dead`.
    """
    return [
        CallFloor(),
        alert(
            "wrong_number_of_cards",
            "critical",
            f"seat {seat} reads {have} card(s) after substantial action: if so its "
            "hand is dead (rule 38): muck it. Otherwise place the cards on the "
            "antenna again.",
            seat=seat,
            rule="38",
        ),
    ]


def killed_card_burned(dead_hand: Procedure | None) -> list[Effect]:
    """A card of a killed hand reached the burn instead of the muck."""
    return violation(
        dead_hand,
        "the killed hand's cards go to the muck, not to the burn (rule 38)",
        "a card of the killed hand at the burn",
        "38",
    )
