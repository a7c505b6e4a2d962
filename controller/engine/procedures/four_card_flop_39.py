"""Four cards on the flop, TDA 2019 rule 39, with the table's random draw (RP-14): the floor is
called, one of the four is drawn as the next burn, the other three are the flop, and the
table is held until the remedy is seen on the antennas with the floor at the table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from controller.engine.effects import CallFloor, Changed, alert, say
from controller.engine.ports import TableView
from controller.engine.procedures.base import (
    Begin,
    CorrectBoard,
    Effect,
    FloorCall,
    PlanBurns,
    Procedure,
    TakeFold,
    update,
    violation,
)
from controller.engine.procedures.stage import Stage
from controller.rules.profiles import Profile

#: The hold a pending four-card flop puts on the table, as `state.held` lists it.
PROCEDURE_HOLD = "four_card_flop"
FLOP_CARDS = 3


@dataclass(slots=True, kw_only=True)
class FourCardFlop(Procedure):
    """The remedy of rule 39: `pending` until the table draws the burn (`drawn`, RP-14), one
    of the four reaches the burn (`burned`), the other three lie as the flop (`resolved`);
    done when the turn comes without another burn."""

    kind: str = "four_card_flop"
    rule: str = "39"
    instruction: str = (
        "Four cards on the flop: floor called. Scramble the four cards face down; "
        "the floor picks one at random as the next burn card; the other three are "
        "the flop (rule 39)."
    )
    street: str | None = "flop"
    needs_floor: bool = True
    draw: int | None = None  # index into `cards` the table drew for the floor (RP-14)

    SHOWS_CARDS: ClassVar[bool] = True
    FLOOR_CLOSES: ClassVar[bool] = True
    PLANS_BURNS: ClassVar[bool] = True

    def drawn(self, pick: int, of: int, table: TableView) -> tuple[str | None, list[Effect]]:
        """The table's random draw (RP-14): an error message if it does not fit, else the
        burn it names."""
        if of != len(self.cards) or not 0 <= pick < of:
            return f"draw must pick one of {len(self.cards)}", []
        if not table.floor_present():
            return "a four-card flop is resolved only with the floor at the table (badge)", []
        chosen = self.cards[pick]
        return None, [
            update(self, draw=pick, stage=Stage.DRAWN),
            say(
                "burn_drawn",
                card=chosen,
                cards=list(self.cards),
                rule="RP-14",
                floor=table.floor_ref(),
            ),
            alert(
                "procedure_step",
                "warning",
                f"the table drew {chosen} as the burn: move {chosen} to the burn, leave the "
                "other three as the flop",
                procedure=self.kind,
                rule="39",
            ),
        ]

    def burned(self, card: str, table: TableView, burns: Sequence[str]) -> list[Effect]:
        """A card reached the burn: one of the four, chosen by the floor, is the remedy."""
        if self.stage == Stage.RESOLVED:
            return violation(
                self,
                "exactly one of the four flop cards goes to the burn (39)",
                f"{card} burned as well",
                "39",
            )
        if card not in self.cards:
            return violation(
                self,
                "one of the four flop cards goes to the burn (39)",
                f"{card}, not one of {self.cards}",
                "39",
            )
        out: list[Effect] = []
        if not table.floor_present():
            out += violation(
                self,
                "the floor selects the burn card (39)",
                f"{card} burned before the floor ruled",
                "39",
            )
        elif self.draw is not None and self.cards[self.draw] != card:
            out.append(
                alert(
                    "draw_not_followed",
                    "warning",
                    f"the floor burned {card}; the table had drawn {self.cards[self.draw]}",
                    rule="39",
                )
            )
        return [*out, update(self, stage=Stage.BURNED), *self.remedy_seen(table, burns, card)]

    def remedy_seen(
        self, table: TableView, burns: Sequence[str], burned: str | None = None
    ) -> list[Effect]:
        """Whether the antennas show the remedy: one of the four at the burn, three on the
        board. `burns` are the hand's burn cards so far (`burned` not yet among them)."""
        on_board = set(table.cards_at("board"))
        left = [c for c in self.cards if c in on_board]
        burn = burned or next((c for c in self.cards if c in table.cards_at("burn")), None)
        if burn is None or len(left) != FLOP_CARDS:
            if burn is not None and len(left) < FLOP_CARDS:
                return violation(
                    self,
                    "exactly one of the four cards to the burn, three stay as the flop (39)",
                    f"board {sorted(left)}",
                    "39",
                )
            return []
        # Resolved on the board; verified until the turn comes without another burn. A burn
        # chosen without the floor (a violation) keeps the table held until the floor is here.
        return [
            update(
                self,
                stage=Stage.RESOLVED,
                needs_floor=not table.floor_present(),
                seats=[],
                draw=self.cards.index(burn),
            ),
            CorrectBoard(tuple(left)),
            alert(
                "procedure_step",
                "info",
                f"{burn} is the burn, {' '.join(left)} the flop: go on with the flop betting; "
                "the turn comes WITHOUT another burn",
                procedure=self.kind,
                rule="39",
            ),
            say("board_dealt", street="flop", cards=list(left), board=list(left), corrected=True),
            # The burn drawn from the four is the turn's burn: the turn comes without another.
            PlanBurns("turn", 0, since=len(burns) + (0 if burn in burns else 1)),
            Changed(),
        ]

    def left_board(
        self, card: str, board: Sequence[str], table: TableView, burns: Sequence[str]
    ) -> list[Effect]:
        """A card left the board while the remedy is under way (or once it was resolved)."""
        if self.stage == Stage.RESOLVED:
            if card in board:
                return violation(
                    self,
                    "the three other cards stay as the flop (39)",
                    f"{card} left the board",
                    "39",
                )
            return []
        return self.remedy_seen(table, burns)

    def new_card(self, card: str) -> list[Effect]:
        """A card reached the board before the remedy was resolved."""
        if card in self.cards:
            return []
        return violation(
            self,
            "one of the four flop cards goes to the burn, the other three stay (39)",
            f"a new card {card} on the board",
            "39",
        )

    def on_street(self, street: str) -> list[Effect]:
        """The turn came (its burns were counted as it came): the remedy is verified."""
        if street != "turn":
            return []
        assert self.draw is not None
        burn = self.cards[self.draw]
        return self.complete(
            outcome="verified", burn=burn, flop=[c for c in self.cards if c != burn]
        )


def is_four_card_flop(
    board: Sequence[str],
    street: str,
    burns: int,
    burns_before: int,
    actions: int,
    street_actions: int,
    pending: Iterable[Procedure],
) -> bool:
    """A fourth board card is part of the flop: no burn since the flop was dealt, no flop
    action yet, and no premature card being remedied."""
    return (
        len(board) == FLOP_CARDS
        and street == "flop"
        and burns == burns_before
        and actions == street_actions
        and not any(p.kind == "premature_card" for p in pending)
    )


def detected(profile: Profile, cards: list[str]) -> list[Effect]:
    """Four cards on the flop: the event, the floor called, the procedure (or, for a house
    with no procedure, the floor's call)."""
    procedure: Procedure
    if profile.four_card_flop == "unspecified":
        procedure = FloorCall(
            rule="39",
            instruction="Four cards on the flop: the floor rules (no house procedure).",
            street="flop",
            cards=cards,
        )
    else:
        procedure = FourCardFlop(cards=cards)
    return [
        say("four_card_flop", cards=cards, rule="39"),
        CallFloor(),
        Begin(procedure, "critical"),
    ]


def wants_draw(pending: Iterable[Procedure], table: TableView) -> tuple[str, int] | None:
    """A random draw the table must supply as an input (RP-14), once the floor is here."""
    for proc in pending:
        if isinstance(proc, FourCardFlop) and proc.draw is None and table.floor_present():
            return "four_card_flop", len(proc.cards)
    return None


def draw(
    pending: Iterable[Procedure], purpose: str, pick: int, of: int, table: TableView
) -> tuple[str | None, list[Effect]]:
    """Apply the table's random draw; an error message if it does not fit."""
    proc = next((p for p in pending if isinstance(p, FourCardFlop) and p.draw is None), None)
    if purpose != "four_card_flop" or proc is None:
        return f"no pending draw for {purpose!r}", []
    return proc.drawn(pick, of, table)


def hold_reason(pending: Iterable[Procedure], floor: bool) -> str | None:
    """What must happen before any betting while a four-card flop is pending, or None.

    Rule 39: the floor is called and the floor picks the burn; until the remedy is
    verified on the antennas (with the floor at the table) the table holds.
    """
    for proc in pending:
        if proc.rule != "39":
            continue
        if proc.kind == "floor_call":
            return (
                "four cards on the flop; the floor rules first (floor badge, then the floor button)"
            )
        if not isinstance(proc, FourCardFlop):
            continue
        if proc.stage == Stage.RESOLVED:
            if proc.needs_floor and not floor:
                return (
                    "the burn was chosen without the floor: the floor must come to the "
                    "table (badge) and see the flop (rule 39)"
                )
            continue
        if not floor:
            return (
                "four cards on the flop; the floor must come to the table (badge) and "
                "pick the burn card (rule 39)"
            )
        if proc.stage == Stage.DRAWN and proc.draw is not None:
            return (
                f"four cards on the flop; move {proc.cards[proc.draw]} to the burn and "
                "leave the other three on the board (rule 39)"
            )
        if proc.stage == Stage.BURNED:
            return "four cards on the flop; leave the other three on the board (rule 39)"
        return "four cards on the flop; the floor picks one of the four as the burn (rule 39)"
    return None


#: What happens to a push or a fold made while the table is held.
KEPT_WHILE_HELD = {
    "push": (
        "Seat {seat}'s chips are not a bet: take them back (chips left in the zone "
        "are read as the seat's push once the table is released)"
    ),
    "fold": (
        "Seat {seat}'s cards reached the muck: the fold stands and is taken once the "
        "table is released"
    ),
}


@dataclass(slots=True)
class FlopHold:
    """The hold a pending four-card flop puts on the table (rule 39); its only writer.

    `reason` is the hold as the table lists it (`state.held`, `PROCEDURE_HOLD`), set after
    each input; `held` stays True until the release is announced. While held, a push is
    left unsettled, a fold (cards at the muck) is kept and taken on release, a button
    press is lost.
    """

    reason: str | None = None
    held: bool = False
    pushes: list[int] = field(default_factory=list)  # seats whose pushes wait, unsettled
    folds: list[int] = field(default_factory=list)  # folds to take, in muck order

    def sync(
        self,
        pending: list[Procedure],
        table: TableView,
        hole: dict[int, list[str]],
    ) -> list[Effect]:
        """After each input: hold the table while a four-card flop is pending, or release
        it, taking the folds made meanwhile in the order the cards reached the muck."""
        floor = table.floor_present()
        seen: list[Effect] = [  # the floor is at the table and sees the flop
            update(proc, needs_floor=False)
            for proc in pending
            if isinstance(proc, FourCardFlop) and proc.stage == Stage.RESOLVED and floor
        ]
        reason = hold_reason(pending, floor)
        if reason is not None:
            changed: list[Effect] = [Changed()] if self.reason is None else []
            return [*seen, update(self, reason=reason, held=True), *changed]
        if not self.held:
            return seen
        folds = self.folds
        out: list[Effect] = [
            *seen,
            update(self, reason=None, held=False, pushes=[], folds=[]),
            Changed(),
            alert(
                "table_released",
                "info",
                "the four-card flop is settled: the table is released, the flop betting goes on",
                held=[h for h in table.held() if h != PROCEDURE_HOLD],  # released as it says
                rule="39",
            ),
        ]
        mucked = table.cards_at("muck")
        out += [TakeFold(seat) for seat in folds if any(c in mucked for c in hole.get(seat, ()))]
        return out

    def released_by_floor(self) -> list[Effect]:
        """The floor ruled at the table: the hold goes now (its release is announced after
        the input)."""
        return [update(self, reason=None)]

    def refuse(self, action: str, seat: int | None, table: TableView) -> tuple[bool, list[Effect]]:
        """A betting action while the table is held: (True if refused, what to say).

        Nothing of it reaches the pot. A push's chips stay unsettled (taken back, nothing
        happened; left in the zone, they are the seat's push once the table is released);
        a fold (cards at the muck) is kept and taken on release; a button press is lost.
        """
        reason = self.reason
        if reason is None:
            return False, []
        if action in ("push", "fold"):
            kept = self.pushes if action == "push" else self.folds
            if seat is None or seat in kept:
                return True, []
            keep = [update(self, **{"pushes" if action == "push" else "folds": [*kept, seat]})]
            what = KEPT_WHILE_HELD[action].format(seat=seat)
        else:
            keep = []
            what = f"{action.capitalize()} not taken: press it again once the table is released"
        return True, [
            *keep,
            alert(
                "action_refused",
                "warning",
                f"the table is held: {reason}. {what}.",
                action=action,
                seat=seat,
                held=table.held(),
                rule="39",
            ),
        ]
