"""Prematurely dealt board cards, TDA 2019 RP-5 (A flop, B turn, C river): the cards go back,
the street is dealt again with the burns the procedure allows; a house with no procedure
calls the floor."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from controller.engine.effects import CallFloor, alert, say
from controller.engine.procedures.base import (
    Begin,
    Effect,
    FloorCall,
    PlanBurns,
    Procedure,
    update,
    violation,
)
from controller.engine.procedures.stage import Stage
from controller.rules.profiles import Profile

PREMATURE_RULES = {"flop": "RP-5A", "turn": "RP-5B", "river": "RP-5C"}
FLOP_CARDS = 3

INSTRUCTIONS = {
    "flop": (
        "Premature flop: leave the burn card as the burn, return the flop cards to the "
        "stub, reshuffle the stub, and after the pre-flop action deal a new flop "
        "WITHOUT another burn (RP-5A)."
    ),
    "turn": (
        "Premature turn: put the card aside. After the flop action burn a card and "
        "deal the turn; after the turn action the set-aside card goes back into the "
        "stub, reshuffle, and the river comes WITHOUT a burn (RP-5B)."
    ),
    "river": (
        "Premature river: put the card back into the stub; its burn stays as the "
        "river burn. After the turn action reshuffle the stub and deal the river "
        "WITHOUT a new burn (RP-5C)."
    ),
}


@dataclass(slots=True, kw_only=True)
class PrematureCard(Procedure):
    """Cards dealt to the board before their time: `pending` while one of them is still on
    the board, `returned` once all left it, done when the street is dealt again (RP-5B:
    `turn_redealt` until the river comes without a burn)."""

    kind: str = "premature_card"
    left: set[str] = field(default_factory=set)  # its cards still to leave the board

    SHOWS_CARDS: ClassVar[bool] = True
    PLANS_BURNS: ClassVar[bool] = True

    def card_left(self, card: str, still_out: set[str]) -> list[Effect]:
        """`card` left the board; `still_out` are every premature card still on it."""
        if card not in self.cards or self.stage != Stage.PENDING or set(self.cards) & still_out:
            return []
        return [
            update(self, stage=Stage.RETURNED),
            alert(
                "procedure_step",
                "info",
                f"premature {self.street} card(s) off the board: continue the betting",
                procedure=self.kind,
                rule=self.rule,
            ),
        ]

    def on_street(self, street: str) -> list[Effect]:
        """The street it was dealt early for (or, RP-5B, the river after it) came."""
        if self.street == street:
            if street == "turn" and self.rule == "RP-5B":
                # the river comes without a burn
                return [update(self, stage=Stage.TURN_REDEALT), PlanBurns("river", 0)]
            return self.complete(outcome="redealt", street=street)
        if self.street == "turn" and street == "river":
            return self.complete(outcome="redealt", street=street)
        return []


@dataclass(slots=True)
class FlopAnnouncement:
    """A premature flop is announced once all its cards are out (RP-5A): its procedure, and
    whether the input being applied added a card to it."""

    procedure: Procedure | None = None
    grew: bool = False

    def opened(self, procedure: Procedure) -> list[Effect]:
        """A premature flop's first card: announced when the flop is complete."""
        return [update(self, procedure=procedure, grew=True)]

    def announce(self, *, complete_only: bool = False) -> list[Effect]:
        """The `premature_card` event naming every card of the flop.

        The flop's cards come one by one: the event waits for the third, or for the first
        input that adds none (`complete_only` leaves an incomplete flop open if this input
        added a card to it).
        """
        proc = self.procedure
        if proc is None:
            return []
        if complete_only and self.grew and len(proc.cards) < FLOP_CARDS:
            return [update(self, grew=False)]
        return [
            update(self, grew=False, procedure=None),
            say("premature_card", street="flop", cards=list(proc.cards), rule=proc.rule),
        ]


def left_on_board(procedures: Iterable[Procedure]) -> set[str]:
    """Premature cards still to leave the board, whatever became of their procedures."""
    out: set[str] = set()
    for proc in procedures:
        if isinstance(proc, PrematureCard):
            out |= proc.left
    return out


def forget_left(procedures: Iterable[Procedure]) -> list[Effect]:
    """The board is taken as read (a misdeal, the floor's ruling): nothing must leave it."""
    return [update(p, left=set()) for p in procedures if isinstance(p, PrematureCard)]


def dealt_early(
    profile: Profile,
    street: str,
    card: str,
    pending: list[Procedure],
    burns: int,
    announcement: FlopAnnouncement,
) -> list[Effect]:
    """`card` dealt to the board for `street` before the betting before it was complete.

    `burns` counts the burn cards read so far: the remedy's burns count from there.
    """
    mode = profile.premature_card
    rule = PREMATURE_RULES[street]
    if mode == "unspecified":
        open_call = next(
            (p for p in pending if p.kind == "floor_call" and p.street == street), None
        )
        if open_call is not None:
            return [
                update(open_call, cards=[*open_call.cards, card]),
                update(announcement, grew=True),
            ]
    out: list[Effect] = []
    if street != "flop":
        out.append(say("premature_card", street=street, cards=[card], rule=rule))
    if mode == "unspecified":
        call = FloorCall(
            rule=rule,
            instruction=f"Premature {street}: wait for the floor's ruling.",
            street=street,
            cards=[card],
        )
        out += [
            CallFloor(),
            alert(
                "premature_card",
                "critical",
                # A premature flop's cards are named together by its event, once complete.
                f"premature {street} card{'' if street == 'flop' else ' ' + card}: the house "
                "rules give no procedure; floor called",
                street=street,
                rule=rule,
            ),
            Begin(call, "critical"),
        ]
        if street == "flop":
            out += announcement.opened(call)
        return out
    proc = PrematureCard(
        rule=rule, instruction=INSTRUCTIONS[street], street=street, cards=[card], left={card}
    )
    out.append(Begin(proc, "critical"))
    if street == "flop":
        out += announcement.opened(proc)
        out.append(PlanBurns("flop", 0, since=burns))  # the flop burn stays; none for the new
    elif street == "turn":
        out.append(PlanBurns("turn", 1, since=burns))  # another burn before the new turn
    else:
        out.append(PlanBurns("river", 0, since=burns))  # the river's burn stays
    return out


def flop_grows(premature: PrematureCard, card: str, announcement: FlopAnnouncement) -> list[Effect]:
    """Another card of a premature flop (RP-5A): part of the same procedure."""
    return [
        update(premature, cards=[*premature.cards, card], left={*premature.left, card}),
        update(announcement, grew=True),
    ]


def still_on_board(
    procedures: list[Procedure],
    premature: Procedure | None,
    on_board: Iterable[str],
    street: str,
    card: str,
) -> list[Effect]:
    """`card` dealt for `street` while premature cards are still on the board: a violation."""
    left = left_on_board(procedures)
    if not left & set(on_board):
        return []
    out = violation(
        premature,
        "the premature card(s) go back to the stub before the street is dealt again",
        f"{sorted(left)} still on the board, {card} dealt",
        premature.rule if premature is not None else PREMATURE_RULES[street],
    )
    return [*forget_left(procedures), *out]  # the board is taken as read


def card_left_board(procedures: list[Procedure], card: str) -> list[Effect] | None:
    """A card left the board: the steps of the procedure it was premature for, or None when
    it was no premature card still out."""
    if card not in left_on_board(procedures):
        return None
    out: list[Effect] = [
        update(p, left=p.left - {card})
        for p in procedures
        if isinstance(p, PrematureCard) and card in p.left
    ]
    still_out = left_on_board(procedures) - {card}
    for proc in procedures:
        if proc.pending and isinstance(proc, PrematureCard):
            out += proc.card_left(card, still_out)
    return out
