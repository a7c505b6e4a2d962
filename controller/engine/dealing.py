"""A hand's cards from the readers: the initial deal, the board and the burns, and the dealing
procedures they start (TDA 2019 rules 30, 35-39, 71-C, RP-5, RP-14; each procedure has its
module in `procedures/`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.engine.betting.records import Opening
from controller.engine.betting_flow import STREETS, HandBetting
from controller.engine.cards import BOARD_SIZE, street_cards
from controller.engine.effects import CallFloor, Changed
from controller.engine.ports import TablePorts
from controller.engine.procedures import (
    away_30_penalty_71c,
    button_short_37,
    dead_hand_38,
    exposed_card_35a5,
    four_card_flop_39,
    misdeal_35,
    premature_card_rp5,
    skipped_seat_53b,
)
from controller.engine.procedures.base import (
    Begin,
    CorrectBoard,
    Effect,
    Kill,
    PlanBurns,
    Procedure,
    TakeFold,
    Update,
    violation,
)
from controller.engine.procedures.button_short_37 import ButtonShort
from controller.engine.procedures.dead_hand_38 import DeadHand
from controller.engine.procedures.exposed_card_35a5 import ExposedCard
from controller.engine.procedures.four_card_flop_39 import FlopHold, FourCardFlop
from controller.engine.procedures.misdeal_35 import Misdeal
from controller.engine.procedures.premature_card_rp5 import FlopAnnouncement, PrematureCard
from controller.engine.state import DONE as _DONE  # a module global: state.py's aliases
from controller.engine.state import DealtHand, Phase, Stage

HOLE_CARDS = {"plo": 4, "plo8": 4}  # every other game here deals two hole cards
NEXT_STREET = {0: "flop", 1: "flop", 2: "flop", 3: "turn", 4: "river"}


@dataclass(slots=True)
class DealState:
    """The initial deal as the readers saw it (reset by a misdeal's re-deal)."""

    order: list[int]
    dealt: list[tuple[int, str]] = field(default_factory=list)
    over: bool = False
    collecting: bool = False  # after a misdeal: waiting for every card to leave the table
    exposed: list[str] = field(default_factory=list)
    extra: int = 0  # cards beyond the hole cards, over the whole table
    checked: set[int] = field(default_factory=set)  # seats whose short deal was reported
    absent: set[int] = field(default_factory=set)  # away when the original deal began (30)
    warned: set[int] = field(default_factory=set)  # too few after substantial action (38)
    aside: dict[int, set[str]] = field(default_factory=dict)  # chips pushed before a re-deal


@dataclass(kw_only=True)
class DealingRecord:
    """A hand's dealing state: every field of `HandDealing` that changes during the hand
    (the cards themselves are the hand's facts, `DealtHand`)."""

    deal: DealState
    procedures: list[Procedure] = field(default_factory=list)
    burn_plan: dict[str, int] = field(default_factory=dict)  # street -> burns the remedy allows
    burns_before: int = 0  # burns read when the last street was completed
    street_actions: int = 0  # betting actions when the current street was dealt
    killed: set[int] = field(default_factory=set)
    killed_cards: set[str] = field(default_factory=set)
    posted_snapshot: Opening | None = None  # the first round as it opened (35-C)
    seen: int = 0  # betting actions already looked at for the end of the deal
    checked_at: tuple[int, int, bool, int, int] | None = None
    transit: list[str] = field(default_factory=list)  # board reads during the deal
    announcement: FlopAnnouncement = field(default_factory=FlopAnnouncement)  # RP-5 A
    hold: FlopHold = field(default_factory=FlopHold)  # a four-card flop holds the table (39)


class HandDealing(DealingRecord):
    """One hand's cards: detects dealing errors, runs their procedures, checks the remedies.

    Its state is the `DealingRecord` it is; the table's ports, the hand's facts and its
    betting are its wiring.

    It sees the table through `TablePorts` only, and owns the hand's card facts (hole
    cards, board, burns in `hand`) and the hand's procedures.
    """

    # One hand's object, compared and hashed by identity (its record compares by value).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, table: TablePorts, hand: DealtHand, betting: HandBetting, game: str) -> None:
        self.table = table
        self.hand = hand
        self.betting = betting
        self.profile = table.profile
        self.hole_count = HOLE_CARDS.get(game, 2)
        DealingRecord.__init__(self, deal=DealState(order=self._deal_order()))
        betting.on_open = self.snapshot_opening
        if betting.phase != Phase.POSTING:
            self.snapshot_opening()  # nothing to post: the round opened at once

    # ------------------------------------------------------------------ helpers

    def _deal_order(self) -> list[int]:
        pos = self.hand.positions
        seats = sorted(self.hand.dealt_in)
        return [s for s in seats if s > pos.button] + [s for s in seats if s <= pos.button]

    def _sa(self) -> bool:
        return self.betting.substantial_action

    def pending(self) -> list[Procedure]:
        """Procedures not yet resolved."""
        return [p for p in self.procedures if p.stage != _DONE]

    def _do(self, t: float, effects: Iterable[Effect]) -> None:
        """Carry out what a procedure asked, in order."""
        for effect in effects:
            match effect:
                case Begin(procedure, severity):
                    self.procedures.append(procedure)
                    self._do(t, procedure.announce(severity))
                case Kill(seat, rule, reason):
                    self._kill(t, seat, rule, reason)
                case TakeFold(seat):
                    self.mucked(t, seat)
                case CorrectBoard(cards):
                    self.hand.board[:] = cards
                case PlanBurns(street, allowed, since):
                    self.burn_plan[street] = allowed
                    if since is not None:
                        self.burns_before = since
                case Update(target, fields):
                    for name, value in fields.items():
                        setattr(target, name, value)
                case _:
                    self.table.do([effect])  # events, alerts, the floor called, ...

    def _kill(self, t: float, seat: int, rule: str, why: str) -> None:
        betting = self.betting
        if seat not in betting.live:
            return
        self.killed.add(seat)
        self.killed_cards |= set(self.hand.hole.get(seat, ()))
        self.table.event("hand_killed", seat=seat, reason=why, rule=rule)
        betting.kill(t, seat, rule)

    # ------------------------------------------------------------------ after each input

    def before_input(self, *, board_card: bool) -> None:
        """An input arrives: a premature flop still open is complete unless it is a board card."""
        if not board_card and self.announcement.procedure is not None:
            self._do(0.0, self.announcement.announce())

    def after_apply(self, t: float) -> None:
        """Checks that follow any input: rule 37/38 kills, the deal's end."""
        if self.announcement.procedure is not None:
            self._do(t, self.announcement.announce(complete_only=True))
        betting = self.betting
        found, betting.skipped_found = betting.skipped_found, []
        for seat, oot_seats in found:
            # 53-B: the floor rules on the skipped hand (or on an action it changed).
            self._do(t, skipped_seat_53b.skipped(seat, oot_seats) if oot_seats else [CallFloor()])
        # Everything below depends only on these: skip the work when none moved.
        key = (
            len(betting.actions),
            self.table.hole_reads,
            self.deal.over,
            len(self.procedures),
            len(betting.live),
        )
        if key == self.checked_at:
            return
        self.checked_at = key
        if not self.deal.over and betting.actions and len(betting.actions) != self.seen:
            self.seen = len(betting.actions)
            last = betting.actions[-1].seat
            self.end_of_deal(t, upto=None if self._sa() else last)
        button = self.hand.positions.button
        for proc in self.pending():
            if isinstance(proc, ButtonShort):
                self._do(t, proc.acted(button, betting.actions))
        if self.deal.over and self._sa():
            self._after_substantial_action(t, button)

    def _after_substantial_action(self, t: float, button: int) -> None:
        """Rule 38: a live hand with the wrong number of cards once substantial action came."""
        for seat in sorted(self.betting.live):
            have = len(self.hand.hole.get(seat, ()))
            if have == self.hole_count or seat in self.killed:
                continue
            if have > self.hole_count:
                # A reader cannot invent a card: too many is certain (38, example 1-B).
                self.kill_dead_hand(t, seat, f"seat {seat} has {have} cards")
            elif seat not in self.deal.warned and not (
                seat == button and any(isinstance(p, ButtonShort) for p in self.pending())
            ):
                self.deal.warned.add(seat)
                self._do(t, dead_hand_38.too_few(seat, have))

    def sync_hold(self, t: float) -> None:
        """After each input: the four-card flop's hold on the table (39), set or released."""
        pending = self.pending()
        if pending or self.hold.held:  # else nothing holds the table, nor did
            self._do(t, self.hold.sync(pending, self.table, self.hand.hole))

    def refuse(self, t: float, action: str, seat: int | None = None) -> bool:
        """A betting action while the table is held for a four-card flop: True if refused."""
        if self.hold.reason is None:
            return False
        refused, effects = self.hold.refuse(action, seat, self.table)
        self._do(t, effects)
        return refused

    def is_short(self, seat: int) -> bool:
        """The seat's hand has too few cards after substantial action (rule 38)."""
        return seat in self.deal.warned and len(self.hand.hole.get(seat, ())) < self.hole_count

    def kill_dead_hand(self, t: float, seat: int, why: str) -> None:
        """Rule 38: the hand is dead; one and only one burn for each later street."""
        self._do(t, dead_hand_38.dead(seat, why))

    def mucked(self, t: float, seat: int) -> None:
        """A seat's cards reached the muck: a fold, or a short hand killed (rule 38)."""
        self.end_of_deal(t, upto=seat)
        if self.is_short(seat):
            self.kill_dead_hand(t, seat, f"seat {seat} had too few cards")
        else:
            self.betting.fold(t, seat)

    # ------------------------------------------------------------------ posting snapshot

    def snapshot_opening(self) -> None:
        """Keep the betting as the first round opens (blinds, antes, a straddle in)."""
        self.posted_snapshot = self.betting.opening()

    def restore_posted(self) -> None:
        """Undo every action since the blinds and antes were posted (35-C exact re-play)."""
        betting = self.betting
        if self.posted_snapshot is None:
            # Still posting: only folds can have happened; everyone is dealt in again.
            betting.live = set(betting.dealt_in)
            return
        betting.return_to(self.posted_snapshot)

    # ------------------------------------------------------------------ hole cards

    def hole_card(self, t: float, seat: int, card: str) -> bool:
        """A card reached a seat antenna; False if it is not (or no longer) a hole card."""
        deal = self.deal
        hand = self.hand
        if deal.collecting:
            self._do(t, misdeal_35.not_collected(seat))
            return False
        if seat not in hand.dealt_in:
            if not deal.over and not self._sa():
                self.misdeal(t, "card_to_seat_not_entitled", seat=seat)
            else:
                self.table.alert(
                    "card_to_seat_not_dealt_in",
                    "warning",
                    f"a card arrived at seat {seat}, which is not dealt in",
                    seat=seat,
                )
            return False
        hole = hand.hole.setdefault(seat, [])
        if card in hole:
            return True
        if not deal.over:
            if not deal.dealt and hand.redeals == 0:
                deal.absent = away_30_penalty_71c.absent_at_deal(deal.order, self.table)
            if not deal.dealt and seat != deal.order[0]:
                deal.dealt.append((seat, card))
                hole.append(card)
                self.misdeal(t, "first_card_wrong_seat", seat=seat, expected=deal.order[0])
                return True
            deal.dealt.append((seat, card))
        if len(hole) >= self.hole_count:
            return self._extra_card(t, seat, card)
        hole.append(card)
        self._replacement(t, seat)
        if not deal.over and all(len(hand.hole.get(s, ())) >= self.hole_count for s in deal.order):
            self._deal_complete(t)
        return True

    def _extra_card(self, t: float, seat: int, card: str) -> bool:
        hand = self.hand
        if self._sa():
            hand.hole[seat].append(card)  # after this input the hand is dead (38, ex. 1-B)
            return True
        self.deal.extra += 1
        if self.deal.extra >= self.profile.misdeal_extra_cards:
            hand.hole[seat].append(card)
            self.misdeal(t, "too_many_cards", seat=seat, extra=self.deal.extra)
            return True
        self._do(t, misdeal_35.extra_card_floor_call(self.profile, seat))
        hand.extras.add(card)
        return False

    def _replacement(self, t: float, seat: int) -> None:
        """A card that completes a short button (37) or replaces an exposed card."""
        have = len(self.hand.hole.get(seat, ()))
        for proc in self.pending():
            if isinstance(proc, ButtonShort):
                self._do(t, proc.replaced(seat, have, self.hole_count))
            elif isinstance(proc, ExposedCard):
                self._do(t, proc.replaced(seat))

    def _deal_complete(self, t: float) -> None:
        self.deal.over = True
        for proc in self.pending():
            if isinstance(proc, Misdeal):
                self._do(t, proc.redealt())
        self._kill_absent(t)
        self._flush_transit(t)

    def _kill_absent(self, t: float) -> None:
        """Rules 30 and 71-C: seats away or on penalty were dealt in; their hands die now."""
        self._do(t, away_30_penalty_71c.kills(self.deal.order, self.table, self.deal.absent))

    def end_of_deal(self, t: float, upto: int | None = None) -> None:
        """An action, a board or burn card: the initial deal is over, complete or not.

        An action by a seat (`upto`) ends the deal only for the seats dealt before it and
        itself: the dealer may still be pitching the later seats' second cards.
        """
        deal = self.deal
        if deal.over or deal.collecting or not deal.dealt:
            return
        hand = self.hand
        seats = deal.order
        if upto is not None and upto in deal.order:
            seats = deal.order[: deal.order.index(upto) + 1]
        dealt_out = [s for s in seats if not hand.hole.get(s) and s in self.betting.live]
        if dealt_out:
            if self.misdeal(t, "seat_dealt_out", seats=dealt_out):
                return
            # Refused past the limit (35-D): a cardless hand is dead (38) and play goes on;
            # the button's missing cards may still be replaced until it acts (37).
            button = hand.positions.button
            for seat in dealt_out:
                if seat != button:
                    self._do(t, dead_hand_38.dealt_out(seat))
        button = hand.positions.button
        if len(seats) == len(deal.order):
            deal.over = True
        for seat in seats:
            have = len(hand.hole.get(seat, ()))
            if have >= self.hole_count or seat in deal.checked or seat not in self.betting.live:
                continue
            deal.checked.add(seat)
            if seat == button:
                self._do(t, button_short_37.short(seat, have))
            else:
                self._do(t, misdeal_35.short_seat(seat, have))
        if deal.over:
            self._kill_absent(t)
            self._flush_transit(t)

    def _flush_transit(self, t: float) -> None:
        """Board reads made during the deal that are still on the board: board cards now."""
        waiting, self.transit = self.transit, []
        on_board = self.table.cards_at("board")
        for card in waiting:
            if card in on_board and card not in self.hand.board:
                self.board_card(t, card)

    def hand_over(self, t: float) -> None:
        """The hand ended (pot awarded): whatever was still open closes with it."""
        self._do(t, self.announcement.announce())
        for proc in self.pending():
            self._do(t, proc.complete(outcome="hand_over"))

    def awaiting_redeal(self) -> bool:
        """A misdeal was declared and the re-deal has not begun (35-C: the same hand)."""
        return not self.deal.dealt and any(isinstance(p, Misdeal) for p in self.pending())

    # ------------------------------------------------------------------ misdeal (35)

    def misdeal_pressed(self, t: float) -> None:
        """The dealer pressed `misdeal`: declared, or ruled by the floor past the limit."""
        reason, by_floor = misdeal_35.panel_reason(
            self.profile, list(self.betting.actions), self.table.floor_present()
        )
        if by_floor:
            self.misdeal(t, reason, floor=True, by=self.table.floor_ref())
        else:
            self.misdeal(t, reason)

    def misdeal(self, t: float, reason: str, *, floor: bool = False, **details: Any) -> bool:
        """Declare a misdeal if the rules still allow one (35-D, 36); True if declared."""
        actions = list(self.betting.actions)
        self._do(t, self.announcement.announce())
        if self.deal.collecting:
            self._do(t, misdeal_35.repeated())
            return False
        if not floor:
            refusal = misdeal_35.refused(self.profile, actions, reason)
            if refusal:
                self._do(t, refusal)
                return False
        self._do(t, misdeal_35.declared(reason, details))
        for proc in self.pending():
            self._do(t, proc.complete(outcome="misdeal"))
        self._redeal()
        self._do(t, [Begin(Misdeal()), Changed()])
        self.collected()
        return True

    def _redeal(self) -> None:
        """Back to the blinds and antes, no card dealt (35-C: an exact re-play)."""
        self.restore_posted()
        hand = self.hand
        hand.hole.clear()
        hand.board.clear()
        hand.street = "preflop"
        hand.extras.clear()
        self.burn_plan.clear()
        self.killed.clear()
        self.killed_cards.clear()
        self._do(0.0, premature_card_rp5.forget_left(self.procedures))
        self.deal = DealState(
            order=self._deal_order(),
            collecting=True,
            absent=set(self.deal.absent),
            aside={s: set(c) for s, c in self.deal.aside.items()},
        )
        self.burns_before = 0
        self.street_actions = 0
        self.seen = 0
        hand.redeals += 1

    def chips_set_aside(self, t: float, seat: int, chip: str, *, arrived: bool) -> bool:
        """35-C: chips pushed after a misdeal, before the re-deal's first card, are no action:
        they stay the player's and the re-deal starts from the blinds. True if the chip is
        one of those (the betting never sees it)."""
        aside = self.deal.aside
        if not arrived:
            if chip in aside.get(seat, ()):
                aside[seat].discard(chip)
                return True
            return False
        if not self.awaiting_redeal() or self.betting.owed.get(seat, 0) > 0:
            return False  # a blind still owed is posted as usual
        if not aside.get(seat):
            self._do(t, misdeal_35.chips_before_redeal(seat))
        aside.setdefault(seat, set()).add(chip)
        return True

    def collected(self) -> None:
        """After a misdeal: the re-deal may start once no card is read on the table."""
        if not self.deal.collecting or not self.table.table_clear():
            return
        self.deal.collecting = False
        self.hand.burns.clear()
        for proc in self.pending():
            if isinstance(proc, Misdeal):
                self._do(0.0, proc.table_cleared())

    # ------------------------------------------------------------------ dealer panel

    def boxed(self, t: float) -> None:
        """The dealer declares two or more boxed cards on the initial deal (35A-1)."""
        self.misdeal(t, "boxed_cards")

    def exposed(self, t: float) -> None:
        """The dealer declares the last card dealt exposed by dealer error (35A-5)."""
        deal = self.deal
        exposure = exposed_card_35a5.pressed(self.profile, deal.dealt, deal.exposed)
        if exposure.card is not None:
            deal.exposed.append(exposure.card)
        if exposure.misdeal is not None:
            self.misdeal(t, "exposed_card", **exposure.misdeal)
        self._do(t, exposure.effects)

    # ------------------------------------------------------------------ floor and draw

    def floor_ruled(self) -> list[str]:
        """The floor ruled at the table: the kinds of procedure it closed.

        The four-card flop's hold goes at once; the ruling stands as the cards now lie: the
        board is what the board antenna reads.
        """
        self._do(0.0, self.hold.released_by_floor())
        closed = []
        for proc in self.pending():
            ruled = proc.floor_ruled()
            if ruled:
                closed.append(proc.kind)
                self._do(0.0, ruled)
        if closed:
            on_board = self.table.cards_at("board")
            # Never fewer cards than the streets already bet on: the hand could not go on.
            played = (0, 3, 4, 5)[self.betting.street_i]
            fits = len(on_board) in (0, 3, 4, 5) and len(on_board) >= played
            fits = fits and self.deal.over and not self.deal.collecting  # not a misdeal's cards
            if on_board != self.hand.board and fits:
                self.hand.board[:] = on_board
                self._do(0.0, premature_card_rp5.forget_left(self.procedures))
                self._streets_as_ruled()
        return closed

    def _streets_as_ruled(self) -> None:
        """The board the floor let stand (rule 1) reaches a street the betting has not: it
        goes on there, and each street's cards are announced as the ruling deals them
        (`board_dealt` citing rule 1), so the room, TV and a hand history see the street."""
        betting = self.betting
        board = list(self.hand.board)
        reached = {0: 0, 3: 1, 4: 2, 5: 3}[len(board)]
        for index in range(betting.street_i + 1, reached + 1):
            if betting.phase != Phase.WAITING:
                return
            street = STREETS[index]
            self.hand.street = street
            self.burns_before = len(self.hand.burns)
            self.street_actions = len(betting.actions)
            self.table.event(
                "board_dealt",
                street=street,
                cards=street_cards(board, street),
                board=board[: BOARD_SIZE[street]],
                rule="1",
            )
            betting.board_street(street)

    def wants_draw(self) -> tuple[str, int] | None:
        """A random draw the table must supply as an input (RP-14), once the floor is here."""
        return four_card_flop_39.wants_draw(self.pending(), self.table)

    def draw(self, t: float, purpose: str, pick: int, of: int) -> str | None:
        """Apply the table's random draw; an error message if it does not fit."""
        error, effects = four_card_flop_39.draw(self.pending(), purpose, pick, of, self.table)
        self._do(t, effects)
        return error

    # ------------------------------------------------------------------ burns and board

    def burn_card(self, t: float, card: str) -> None:
        """A card reached the burn antenna."""
        self.end_of_deal(t)
        hand = self.hand
        if card in self.killed_cards:
            dead = next((p for p in self.pending() if isinstance(p, DeadHand)), None)
            self._do(t, dead_hand_38.killed_card_burned(dead))
        for proc in self.pending():
            if isinstance(proc, ExposedCard):
                self._do(t, proc.burned(card))
            elif isinstance(proc, FourCardFlop):
                self._do(t, proc.burned(card, self.table, hand.burns))
        for seat, cards in hand.hole.items():
            if card in cards and seat not in self.killed:
                # Taken from the seat as the burn (a replaced exposed card): no longer its card.
                cards.remove(card)
                self.table.holecards(seat)
        if card not in hand.burns:
            hand.burns.append(card)

    def _ready(self, street: str) -> bool:
        betting = self.betting
        if betting.phase == Phase.COMPLETE:
            return True
        if betting.phase == Phase.WAITING:
            return bool(STREETS.index(street) == betting.street_i + 1)
        return False

    def board_card(self, t: float, card: str) -> None:
        """A card reached the board antenna."""
        deal = self.deal
        if deal.dealt and not deal.over and not deal.collecting:
            # While hole cards are still being pitched, a card read at the board may be one
            # sliding across it to its seat: judged once the deal is over.
            self.transit.append(card)
            return
        self.end_of_deal(t)
        hand = self.hand
        flop_proc = next(
            (
                p
                for p in self.pending()
                if isinstance(p, FourCardFlop) and p.stage != Stage.RESOLVED
            ),
            None,
        )
        if flop_proc is not None:
            self._do(t, flop_proc.new_card(card))
            return
        n = len(hand.board)
        street = NEXT_STREET.get(n)
        if street is None:
            self.table.alert(
                "sixth_board_card", "critical", "a sixth card on the board: floor called"
            )
            self.table.call_floor()
            return
        premature = next((p for p in self.pending() if isinstance(p, PrematureCard)), None)
        if street == "turn" and four_card_flop_39.is_four_card_flop(
            hand.board,
            hand.street,
            len(hand.burns),
            self.burns_before,
            len(self.betting.actions),
            self.street_actions,
            self.pending(),
        ):
            self._do(t, four_card_flop_39.detected(self.profile, [*hand.board, card]))
            return
        if not self._ready(street):
            if premature is not None and premature.street == street and street == "flop":
                self._do(t, premature_card_rp5.flop_grows(premature, card, self.announcement))
                return
            self._do(
                t,
                premature_card_rp5.dealt_early(
                    self.profile, street, card, self.pending(), len(hand.burns), self.announcement
                ),
            )
            return
        self._do(
            t,
            premature_card_rp5.still_on_board(
                self.procedures, premature, self.table.cards_at("board"), street, card
            ),
        )
        if n in (0, 3, 4):
            self._check_burns(t, street)
        hand.board.append(card)
        self.table.mark_dirty()
        if len(hand.board) == BOARD_SIZE[street]:
            self._street_dealt(t, street)

    def _street_dealt(self, t: float, street: str) -> None:
        hand = self.hand
        hand.street = street
        self.burns_before = len(hand.burns)
        self.street_actions = len(self.betting.actions)
        self.table.event(
            "board_dealt",
            street=street,
            cards=street_cards(hand.board, street),
            board=list(hand.board),
        )
        for proc in self.pending():
            self._do(t, proc.on_street(street))
        self.betting.board_street(street)

    def _check_burns(self, t: float, street: str) -> None:
        """One and only one burn before each street (38), or what a remedy allows."""
        allowed = self.burn_plan.pop(street, 1)
        burned = len(self.hand.burns) - self.burns_before
        if burned == allowed:
            return
        proc = next((p for p in self.pending() if p.PLANS_BURNS), None)
        if proc is None:
            self.table.alert(
                "burn_count",
                "warning",
                f"the {street} was dealt after {burned} burn card(s), not {allowed}",
                street=street,
                burns=burned,
            )
            return
        what = "no burn" if allowed == 0 else "one and only one burn"
        self._do(
            t,
            violation(proc, f"the {street} comes with {what}", f"{burned} burn card(s)", proc.rule),
        )

    def board_left(self, t: float, card: str) -> None:
        """A card left the board antenna (a remedy, or a card being straightened)."""
        steps = premature_card_rp5.card_left_board(self.procedures, card)
        if steps is not None:
            self._do(t, steps)
            return
        flop_proc = next((p for p in self.pending() if isinstance(p, FourCardFlop)), None)
        if flop_proc is not None:
            self._do(t, flop_proc.left_board(card, self.hand.board, self.table, self.hand.burns))
