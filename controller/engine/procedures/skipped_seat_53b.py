"""A player skipped by action out of turn, TDA 2019 rule 53-B: once the out-of-turn actions
after the skipped seat amount to substantial action (36) they are binding, the action backs
up to the skipped seat, and the floor is called to rule on the skipped hand."""

from __future__ import annotations

from dataclasses import dataclass

from controller.engine.effects import CallFloor, say
from controller.engine.procedures.base import Begin, Effect, Procedure

#: What the floor may rule for the skipped hand (53-B: "including ruling the hand dead or
#: limiting the player to non-aggressive action"); the event lists them.
FLOOR_OPTIONS = ("hand_dead", "non_aggressive_only", "all_options")


@dataclass(slots=True, kw_only=True)
class SkippedHand(Procedure):
    """The floor rules on a skipped seat's hand; the floor's ruling (`floor`) closes it. To
    kill the hand the dealer mucks its cards."""

    kind: str = "skipped_hand"
    rule: str = "53-B"
    needs_floor: bool = True


def skipped(seat: int, oot_seats: list[int]) -> list[Effect]:
    """Substantial action out of turn after `seat`: the event, the floor called, the procedure."""
    after = ", ".join(str(s) for s in oot_seats)
    return [
        say(
            "skipped_hand",
            seat=seat,
            oot_seats=list(oot_seats),
            options=list(FLOOR_OPTIONS),
            rule="53-B",
        ),
        CallFloor(),
        Begin(
            SkippedHand(
                instruction=(
                    f"Seat {seat} was skipped: seats {after} acted out of turn (substantial "
                    f"action). Their actions stand (rule 53-B); the action backs up to seat "
                    f"{seat}. Floor: rule on seat {seat}'s hand: dead (muck it), limited to "
                    "check, call or fold, or all options."
                ),
                seats=[seat],
            ),
            "critical",
        ),
    ]
