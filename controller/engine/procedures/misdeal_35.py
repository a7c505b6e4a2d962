"""Misdeals, TDA 2019 rule 35: why one is declared (35-A), until when (35-D and 36, or a
house's count of actions), the re-deal as an exact re-play (35-C), extra cards (35-A)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controller.engine.effects import Alert, CallFloor, alert, say
from controller.engine.procedures.base import Begin, Effect, FloorCall, Procedure, update
from controller.engine.procedures.stage import Stage
from controller.rules.betting import Action
from controller.rules.profiles import Profile, misdeal_allowed

# Why a misdeal was declared, with the TDA 2019 rule it comes from.
MISDEAL_REASONS = {
    "boxed_cards": "35A-1",
    "first_card_wrong_seat": "35A-2",
    "card_to_seat_not_entitled": "35A-3",
    "seat_dealt_out": "35A-4",
    "exposed_card": "35A-5",
    "too_many_cards": "35A",
    "declared": "35A",
    "floor_ruling": "35D",
}


@dataclass(slots=True, kw_only=True)
class Misdeal(Procedure):
    """The re-deal after a misdeal (35-C): `pending` until every card has left the table,
    `redeal` while the same hand is dealt again, done when the re-deal is complete."""

    kind: str = "misdeal"
    rule: str = "35C"
    instruction: str = (
        "Misdeal: collect every card, reshuffle and re-deal. Same button, same "
        "blinds, nobody new dealt in (rule 35-C)."
    )

    def table_cleared(self) -> list[Effect]:
        """No card is read on the table any more: the re-deal may begin."""
        return [update(self, stage=Stage.REDEAL)]

    def redealt(self) -> list[Effect]:
        """Every seat has its cards again."""
        return self.complete(outcome="redealt")


def panel_reason(
    profile: Profile, actions: Iterable[str | Action], floor_present: bool
) -> tuple[str, bool]:
    """The dealer pressed `misdeal`: (reason, whether the floor rules it). Past the limit
    (35-D) only the floor at the table (badge) can rule a misdeal."""
    stands = not misdeal_allowed(profile, actions)
    if stands and floor_present:
        return "floor_ruling", True
    return "declared", False


def refused(profile: Profile, actions: Iterable[str | Action], reason: str) -> list[Effect]:
    """Rule 35-D (or the house's count of actions): past substantial action the hand goes on.

    Empty when the misdeal may still be declared.
    """
    if misdeal_allowed(profile, actions):
        return []
    why = (
        "substantial action has occurred: no misdeal, the hand goes on (rule 35-D)."
        if profile.misdeal_max_actions is None
        else f"{profile.misdeal_max_actions} or more actions were made: under "
        f"{profile.name} the hand stands and play goes on."
    )
    return [
        alert(
            "misdeal_refused",
            "warning",
            why + " Only the floor can rule otherwise.",
            reason=reason,
            rule="35D",
        ),
        CallFloor(),
    ]


def declared(reason: str, details: dict[str, Any]) -> list[Effect]:
    """The `misdeal` event, citing the rule of its reason (35-A 1-5, 35-D)."""
    return [say("misdeal", reason=reason, rule=MISDEAL_REASONS[reason], **details)]


def repeated() -> list[Effect]:
    """A misdeal is declared again before the cards were collected (35-C)."""
    return [
        alert(
            "misdeal_repeat",
            "info",
            "a misdeal is already declared: collect every card and re-deal",
            rule="35C",
        )
    ]


def not_collected(seat: int) -> list[Effect]:
    """A card dealt before every card of the misdealt hand left the table (35-C)."""
    return [
        alert(
            "redeal_before_collection",
            "warning",
            "misdeal: collect every card from the table and reshuffle before the re-deal",
            seat=seat,
            rule="35C",
        )
    ]


def chips_before_redeal(seat: int) -> list[Effect]:
    """Chips pushed between the misdeal and the re-deal: no action of the re-played hand (35-C)."""
    return [
        alert(
            "chips_before_redeal",
            "warning",
            f"misdeal: chips pushed by seat {seat} before the re-deal are no bet; hand them "
            "back: the re-deal starts from the blinds (rule 35-C)",
            seat=seat,
            rule="35C",
        )
    ]


def redeal_same_hand() -> Alert:
    """The shuffler pressed for the re-deal: it starts no new hand (35-C)."""
    return alert(
        "redeal_same_hand",
        "info",
        "shuffler pressed for the re-deal: the same hand, an exact re-play (rule 35-C)",
        rule="35C",
    )


def short_seat(seat: int, have: int) -> list[Effect]:
    """A seat with too few cards at the end of the deal: a misdeal if so (35-A)."""
    return [
        alert(
            "wrong_number_of_cards",
            "critical",
            f"seat {seat} reads {have} card(s): if so, declare a misdeal now; "
            "after substantial action the hand is dead (rule 38)",
            seat=seat,
            rule="35A",
        )
    ]


def extra_card_floor_call(profile: Profile, seat: int) -> list[Effect]:
    """One extra card where the house makes only two or more a misdeal (35-A).

    The house text says nothing of one: the floor rules how it is taken back (rule 1).
    The card is not made public.
    """
    call = FloorCall(
        rule="35A",
        instruction=(
            f"Seat {seat} got an extra card: under {profile.name} only two or more "
            "extra cards are a misdeal. Floor called: the floor rules how it is taken "
            "back."
        ),
        seats=[seat],
    )
    return [CallFloor(), Begin(call)]
