"""Dealing-error procedures watched from the readers: TDA 2019 rules 35-39, RP-5, RP-14."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.engine.betting_flow import STREETS
from controller.rules.profiles import misdeal_allowed

if TYPE_CHECKING:
    from controller.engine.betting_flow import HandBetting, Opening
    from controller.engine.engine import Engine, Hand

HOLE_CARDS = {"plo": 4, "plo8": 4}  # every other game here deals two hole cards
BOARD_SIZE = {"flop": 3, "turn": 4, "river": 5}
NEXT_STREET = {0: "flop", 1: "flop", 2: "flop", 3: "turn", 4: "river"}
FLOOR_AUTHORITY_SECONDS = 300.0  # a floor badge authorises rulings for five minutes
# The hold a pending four-card flop puts on the table (rule 39): its key in `Engine.holds`.
PROCEDURE_HOLD = "four_card_flop"
PREMATURE_RULES = {"flop": "RP-5A", "turn": "RP-5B", "river": "RP-5C"}

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


@dataclass(slots=True)
class Procedure:
    """A remedy in progress: what the dealer must do, and what the readers must see."""

    kind: str  # misdeal | four_card_flop | premature_card | button_short | exposed_card
    #            | dead_hand | floor_call
    rule: str
    instruction: str
    street: str | None = None
    cards: list[str] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    needs_floor: bool = False
    draw: int | None = None  # index into `cards` the table drew for the floor (RP-14)
    stage: str = "pending"

    def public(self) -> dict[str, Any]:
        """The procedure as the public state shows it (cards here are exposed ones)."""
        out: dict[str, Any] = {
            "procedure": self.kind,
            "rule": self.rule,
            "instruction": self.instruction,
            "stage": self.stage,
            "needs_floor": self.needs_floor,
        }
        if self.street is not None:
            out["street"] = self.street
        if self.kind in ("four_card_flop", "premature_card"):
            out["cards"] = list(self.cards)
        if self.seats:
            out["seats"] = list(self.seats)
        return out


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


class DealWatch:
    """One hand's dealing-error watch: detects, prescribes and verifies the remedy."""

    def __init__(self, engine: Engine, hand: Hand) -> None:
        self.engine = engine
        self.hand = hand
        self.profile = engine.profile
        self.hole_count = HOLE_CARDS.get(engine.spec.game, 2)
        self.deal = DealState(order=self._deal_order())
        self.procedures: list[Procedure] = []
        self.burn_plan: dict[str, int] = {}  # street -> burns the remedy allows (default 1)
        self.burns_before: int = 0  # burns read when the last street was completed
        self.street_actions = 0  # betting actions when the current street was dealt
        self.killed: set[int] = set()
        self.killed_cards: set[str] = set()
        self.posted_snapshot: Opening | None = None
        self.premature_left: set[str] = set()  # premature cards still to leave the board
        self._seen = 0  # betting actions already looked at for the end of the deal
        self._checked_at: tuple[int, int, bool, int, int] | None = None
        self.transit: list[str] = []  # board reads during the deal, judged after it
        # A premature flop is announced once all its cards are out (RP-5A): its procedure,
        # and whether the input being applied added a card to it.
        self._unannounced: Procedure | None = None
        self._grew = False
        # While a four-card flop holds the table (39): seats whose pushes were refused, and
        # folds (cards at the muck) taken once the table is released.
        self._held = False
        self.held_pushes: set[int] = set()
        self.held_folds: list[int] = []
        betting = hand.betting
        if betting is not None:
            betting.on_open = self.snapshot_opening
            if betting.phase != "posting":
                self.snapshot_opening()  # nothing to post: the round opened at once

    # ------------------------------------------------------------------ helpers

    def _deal_order(self) -> list[int]:
        pos = self.hand.positions
        seats = sorted(self.hand.dealt_in)
        after = [s for s in seats if s > pos.button] + [s for s in seats if s <= pos.button]
        return after

    @property
    def betting(self) -> HandBetting | None:
        return self.hand.betting

    def _actions(self) -> int:
        betting = self.betting
        return len(betting.actions) if betting is not None else 0

    def _sa(self) -> bool:
        betting = self.betting
        return betting is not None and betting.substantial_action

    def pending(self) -> list[Procedure]:
        """Procedures not yet resolved."""
        return [p for p in self.procedures if p.stage != "done"]

    def needs_floor(self) -> bool:
        """Whether a pending procedure waits for the floor."""
        return any(p.needs_floor for p in self.pending())

    def _start(self, proc: Procedure, *, severity: str = "warning") -> Procedure:
        self.procedures.append(proc)
        self.engine.alert(
            "procedure_required",
            severity,
            proc.instruction,
            procedure=proc.kind,
            rule=proc.rule,
            floor=proc.needs_floor,
        )
        return proc

    def _done(self, proc: Procedure, **fields: Any) -> None:
        proc.stage = "done"
        proc.needs_floor = False
        self.engine.event("procedure_completed", procedure=proc.kind, rule=proc.rule, **fields)

    def _violation(self, proc: Procedure | None, expected: str, got: str, rule: str) -> None:
        self.engine.event(
            "procedure_violation",
            procedure=proc.kind if proc else "dealing",
            expected=expected,
            got=got,
            rule=rule,
        )
        self.engine.alert(
            "procedure_violation",
            "critical",
            f"{expected}; the readers saw: {got}. Floor called.",
            rule=rule,
        )
        self.engine.floor_called = True

    def _hole(self, seat: int) -> list[str]:
        return self.hand.hole.setdefault(seat, [])

    # ------------------------------------------------------------------ posting snapshot

    def after_apply(self, t: float) -> None:
        """Checks that follow any input: snapshot, rule 37/38 kills, the deal's end."""
        self._announce_premature(complete_only=True)
        betting = self.betting
        if betting is None:
            return
        # Everything below depends only on these: skip the work when none moved.
        key = (
            len(betting.actions),
            self.engine.hole_reads,
            self.deal.over,
            len(self.procedures),
            len(betting.live),
        )
        if key == self._checked_at:
            return
        self._checked_at = key
        if not self.deal.over and betting.actions and len(betting.actions) != self._seen:
            self._seen = len(betting.actions)
            last = betting.actions[-1].seat
            self.end_of_deal(t, upto=None if self._sa() else last)
        button = self.hand.positions.button
        for proc in [p for p in self.pending() if p.kind == "button_short"]:
            if any(a.seat == button for a in betting.actions):
                self._done(proc, outcome="hand_dead", seat=button)
                self._kill(t, button, "37", "the button acted with too few cards")
        if not self.deal.over:
            return
        if self._sa():
            for seat in sorted(betting.live):
                have = len(self.hand.hole.get(seat, ()))
                if have == self.hole_count or seat in self.killed:
                    continue
                if have > self.hole_count:
                    # A reader cannot invent a card: too many is certain (38, example 1-B).
                    self.kill_dead_hand(t, seat, f"seat {seat} has {have} cards")
                elif seat not in self.deal.warned and not (
                    seat == button and any(p.kind == "button_short" for p in self.pending())
                ):
                    # Too few may be a card the antenna did not read: the dealer and the floor
                    # check; mucking the hand (or the floor) makes it dead (38, example 1-A).
                    self.deal.warned.add(seat)
                    self.engine.floor_called = True
                    self.engine.alert(
                        "wrong_number_of_cards",
                        "critical",
                        f"seat {seat} reads {have} card(s) after substantial action: if so its "
                        "hand is dead (rule 38): muck it. Otherwise place the cards on the "
                        "antenna again.",
                        seat=seat,
                        rule="38",
                    )

    def is_short(self, seat: int) -> bool:
        """The seat's hand has too few cards after substantial action (rule 38)."""
        return seat in self.deal.warned and len(self.hand.hole.get(seat, ())) < self.hole_count

    def kill_dead_hand(self, t: float, seat: int, why: str) -> None:
        """Rule 38: the hand is dead; one and only one burn for each later street."""
        self._kill(t, seat, "38", f"{why} after substantial action")
        self._start(
            Procedure(
                kind="dead_hand",
                rule="38",
                instruction=(
                    f"Seat {seat}'s hand is dead (rule 38): muck all its cards. "
                    "Burn one and only one card for each coming street."
                ),
                seats=[seat],
            )
        )

    def snapshot_opening(self) -> None:
        """Keep the betting as the first round opens (blinds, antes, a straddle in)."""
        betting = self.betting
        if betting is not None:
            self.posted_snapshot = betting.opening()

    def restore_posted(self) -> None:
        """Undo every action since the blinds and antes were posted (35-C exact re-play)."""
        betting = self.betting
        if betting is None:
            return
        if self.posted_snapshot is None:
            # Still posting: only folds can have happened; everyone is dealt in again.
            betting.live = set(betting.dealt_in)
            return
        betting.return_to(self.posted_snapshot)

    def _kill(self, t: float, seat: int, rule: str, why: str) -> None:
        betting = self.betting
        if betting is None or seat not in betting.live:
            return
        self.killed.add(seat)
        self.killed_cards |= set(self.hand.hole.get(seat, ()))
        self.engine.event("hand_killed", seat=seat, reason=why, rule=rule)
        betting.kill(t, seat, rule)

    # ------------------------------------------------------------------ hole cards

    def hole_card(self, t: float, seat: int, card: str) -> bool:
        """A card reached a seat antenna; False if it is not (or no longer) a hole card."""
        deal = self.deal
        hand = self.hand
        if deal.collecting:
            self.engine.alert(
                "redeal_before_collection",
                "warning",
                "misdeal: collect every card from the table and reshuffle before the re-deal",
                seat=seat,
                rule="35C",
            )
            return False
        entitled = seat in hand.dealt_in
        if not entitled:
            if not deal.over and not self._sa():
                self.misdeal(t, "card_to_seat_not_entitled", seat=seat)
            else:
                self.engine.alert(
                    "card_to_seat_not_dealt_in",
                    "warning",
                    f"a card arrived at seat {seat}, which is not dealt in",
                    seat=seat,
                )
            return False
        hole = self._hole(seat)
        if card in hole:
            return True
        if not deal.over:
            if not deal.dealt and self.hand.redeals == 0:
                deal.absent = {s for s in deal.order if self.engine.seats[s].away}
            if not deal.dealt and seat != deal.order[0]:
                deal.dealt.append((seat, card))
                hole.append(card)
                self.misdeal(t, "first_card_wrong_seat", seat=seat, expected=deal.order[0])
                return True
            deal.dealt.append((seat, card))
        if len(hole) >= self.hole_count:
            return self._extra_card(t, seat, card)
        hole.append(card)
        self._replacement(t, seat, card)
        if not deal.over and all(len(hand.hole.get(s, ())) >= self.hole_count for s in deal.order):
            self._deal_complete(t)
        return True

    def _extra_card(self, t: float, seat: int, card: str) -> bool:
        deal = self.deal
        hand = self.hand
        if self._sa():
            hand.hole[seat].append(card)  # after this input the hand is dead (38, ex. 1-B)
            return True
        deal.extra += 1
        threshold = self.profile.misdeal_extra_cards
        if deal.extra >= threshold:
            hand.hole[seat].append(card)
            self.misdeal(t, "too_many_cards", seat=seat, extra=deal.extra)
            return True
        # The house text makes only two or more extra cards a misdeal and says nothing of
        # one: the floor rules how it is taken back (rule 1). The card is not made public.
        self.engine.floor_called = True
        self._start(
            Procedure(
                kind="floor_call",
                rule="35A",
                instruction=(
                    f"Seat {seat} got an extra card: under {self.profile.name} only two or more "
                    "extra cards are a misdeal. Floor called: the floor rules how it is taken "
                    "back."
                ),
                seats=[seat],
                needs_floor=True,
            )
        )
        hand.extras.add(card)
        return False

    def _replacement(self, t: float, seat: int, card: str) -> None:
        """A card that completes a short button (37) or replaces an exposed card."""
        for proc in self.pending():
            if proc.kind == "button_short" and seat in proc.seats:
                if len(self.hand.hole.get(seat, ())) >= self.hole_count:
                    self._done(proc, outcome="replaced", seat=seat)
            elif proc.kind == "exposed_card" and seat in proc.seats and proc.stage == "burned":
                proc.stage = "replaced"  # done when the flop comes with no other burn
                self.engine.alert(
                    "procedure_step",
                    "info",
                    f"seat {seat}'s exposed card was replaced; it is the flop's burn: deal the "
                    "flop without another burn",
                    procedure=proc.kind,
                    rule=proc.rule,
                )

    def _deal_complete(self, t: float) -> None:
        deal = self.deal
        deal.over = True
        for proc in self.pending():
            if proc.kind == "misdeal":
                self._done(proc, outcome="redealt")
        self._kill_absent(t)
        self._flush_transit(t)

    def _kill_absent(self, t: float) -> None:
        """Rules 30 and 71-C: seats away or on penalty were dealt in; their hands die now."""
        for seat in self.deal.order:
            if self.engine.penalties.get(seat):
                self._kill(t, seat, "71C", f"seat {seat} is on penalty: hand killed after the deal")
            elif self.engine.seats[seat].away or seat in self.deal.absent:
                self._kill(t, seat, "30", f"seat {seat} was not at the table for the deal")

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
        dealt_out = [s for s in seats if not hand.hole.get(s)]
        if dealt_out:
            self.misdeal(t, "seat_dealt_out", seats=dealt_out)
            return
        button = hand.positions.button
        if len(seats) == len(deal.order):
            deal.over = True
        for seat in seats:
            have = len(hand.hole.get(seat, ()))
            if have >= self.hole_count or seat in deal.checked:
                continue
            deal.checked.add(seat)
            if seat == button:
                self._button_short(seat, have)
            else:
                self.engine.alert(
                    "wrong_number_of_cards",
                    "critical",
                    f"seat {seat} reads {have} card(s): if so, declare a misdeal now; "
                    "after substantial action the hand is dead (rule 38)",
                    seat=seat,
                    rule="35A",
                )
        if deal.over:
            self._kill_absent(t)
            self._flush_transit(t)

    def _flush_transit(self, t: float) -> None:
        """Board reads made during the deal that are still on the board: board cards now."""
        waiting, self.transit = self.transit, []
        on_board = self.engine.cards.cards_at("board")
        for card in waiting:
            if card in on_board and card not in self.hand.board:
                self.board_card(t, card)

    def _button_short(self, seat: int, have: int) -> None:
        """Rule 37: the button was dealt too few cards."""
        self._start(
            Procedure(
                kind="button_short",
                rule="37",
                instruction=(
                    f"The button (seat {seat}) has {have} card(s): give it the missing card "
                    "from the stub now. If the button acts first, its hand is dead."
                ),
                seats=[seat],
            )
        )

    def hand_over(self) -> None:
        """The hand ended (pot awarded): whatever was still open closes with it."""
        self._announce_premature()
        for proc in self.pending():
            self._done(proc, outcome="hand_over")

    def awaiting_redeal(self) -> bool:
        """A misdeal was declared and the re-deal has not begun (35-C: the same hand)."""
        return not self.deal.dealt and any(p.kind == "misdeal" for p in self.pending())

    # ------------------------------------------------------------------ misdeal

    def misdeal(self, t: float, reason: str, *, floor: bool = False, **details: Any) -> bool:
        """Declare a misdeal if the rules still allow one (35-D, 36); True if declared."""
        betting = self.betting
        actions = list(betting.actions) if betting is not None else []
        rule = MISDEAL_REASONS[reason]
        self._announce_premature()
        if self.deal.collecting:
            self.engine.alert(
                "misdeal_repeat",
                "info",
                "a misdeal is already declared: collect every card and re-deal",
                rule="35C",
            )
            return False
        if not floor and not misdeal_allowed(self.profile, actions):
            self.engine.alert(
                "misdeal_refused",
                "warning",
                (
                    "substantial action has occurred: no misdeal, the hand goes on (rule 35-D)."
                    if self.profile.misdeal_max_actions is None
                    else f"{self.profile.misdeal_max_actions} or more actions were made: under "
                    f"{self.profile.name} the hand stands and play goes on."
                )
                + " Only the floor can rule otherwise.",
                reason=reason,
                rule="35D",
            )
            self.engine.floor_called = True
            return False
        self.engine.event("misdeal", reason=reason, rule=rule, **details)
        for proc in self.pending():
            self._done(proc, outcome="misdeal")
        self.restore_posted()
        hand = self.hand
        hand.hole.clear()
        hand.board.clear()
        hand.street = "preflop"
        hand.extras.clear()
        self.burn_plan.clear()
        self.killed.clear()
        self.killed_cards.clear()
        self.premature_left.clear()
        self.deal = DealState(
            order=self._deal_order(), collecting=True, absent=set(self.deal.absent)
        )
        self.burns_before = 0
        self.street_actions = 0
        self._seen = 0
        hand.redeals += 1
        self._start(
            Procedure(
                kind="misdeal",
                rule="35C",
                instruction=(
                    "Misdeal: collect every card, reshuffle and re-deal. Same button, same "
                    "blinds, nobody new dealt in (rule 35-C)."
                ),
            )
        )
        self.engine.mark_dirty()
        self.collected()
        return True

    def collected(self) -> None:
        """After a misdeal: the re-deal may start once no card is read on the table."""
        if not self.deal.collecting:
            return
        on_table = [
            a
            for a, cards in self.engine.cards.contents.items()
            if cards and (a.startswith("seat") or a in ("board", "burn"))
        ]
        if not on_table:
            self.deal.collecting = False
            self.hand.burns.clear()
            for proc in self.pending():
                if proc.kind == "misdeal":
                    proc.stage = "redeal"

    # ------------------------------------------------------------------ dealer panel

    def boxed(self, t: float) -> None:
        """The dealer declares two or more boxed cards on the initial deal (35A-1)."""
        self.misdeal(t, "boxed_cards")

    def exposed(self, t: float) -> None:
        """The dealer declares the last card dealt exposed by dealer error (35A-5)."""
        deal = self.deal
        if not deal.dealt:
            self.engine.alert(
                "exposed_without_deal", "warning", "exposed pressed before any card was dealt"
            )
            return
        index = len(deal.dealt) - 1
        seat, card = deal.dealt[index]
        if card in deal.exposed:
            self.engine.alert(
                "exposed_repeat",
                "info",
                "exposed pressed again for the same card: counted once",
                seat=seat,
            )
            return
        deal.exposed.append(card)
        limit = self.profile.misdeal_exposed_downcards
        if index < 2:
            self.misdeal(t, "exposed_card", seat=seat, card_index=index + 1)
            return
        if limit is not None and len(deal.exposed) >= limit:
            self.misdeal(t, "exposed_card", seat=seat, exposed=len(deal.exposed))
            return
        if self.profile.single_exposed_card == "replace_as_burn":
            self._start(
                Procedure(
                    kind="exposed_card",
                    rule="35A-5",
                    instruction=(
                        f"One exposed card at seat {seat}: finish the deal, then put the "
                        "exposed card to the burn and give the seat the top card of the deck. "
                        "The exposed card is the flop's burn."
                    ),
                    cards=[card],
                    seats=[seat],
                )
            )
            return
        self.engine.floor_called = True
        self.engine.alert(
            "exposed_card",
            "warning",
            f"one exposed card at seat {seat}: not a misdeal under {self.profile.name} "
            "(35A-5); the floor decides how it is replaced (rule 1)",
            seat=seat,
            rule="35A-5",
        )

    # ------------------------------------------------------------------ burns and board

    def burn_card(self, t: float, card: str) -> None:
        """A card reached the burn antenna."""
        self.end_of_deal(t)
        hand = self.hand
        if card in self.killed_cards:
            dead = next((p for p in self.pending() if p.kind == "dead_hand"), None)
            self._violation(
                dead,
                "the killed hand's cards go to the muck, not to the burn (rule 38)",
                "a card of the killed hand at the burn",
                "38",
            )
        for proc in self.pending():
            if proc.kind == "exposed_card" and card in proc.cards:
                proc.stage = "burned"  # the seat's hand drops it just below
            elif proc.kind == "four_card_flop":
                self._four_card_burn(t, proc, card)
        for seat, cards in hand.hole.items():
            if card in cards and seat not in self.killed:
                # Taken from the seat as the burn (a replaced exposed card): no longer its card.
                cards.remove(card)
                self.engine.holecards(seat)
        if card not in hand.burns:
            hand.burns.append(card)

    def _ready(self, street: str) -> bool:
        betting = self.betting
        if betting is None or betting.phase == "complete":
            return True
        if betting.phase == "waiting":
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
            (p for p in self.pending() if p.kind == "four_card_flop" and p.stage != "resolved"),
            None,
        )
        if flop_proc is not None:
            if card not in flop_proc.cards:
                self._violation(
                    flop_proc,
                    "one of the four flop cards goes to the burn, the other three stay (39)",
                    f"a new card {card} on the board",
                    "39",
                )
            return
        n = len(hand.board)
        street = NEXT_STREET.get(n)
        if street is None:
            self.engine.alert(
                "sixth_board_card", "critical", "a sixth card on the board: floor called"
            )
            self.engine.floor_called = True
            return
        premature = next((p for p in self.pending() if p.kind == "premature_card"), None)
        if street == "turn" and self._flop_just_dealt():
            self._four_card_flop(t, card)
            return
        if not self._ready(street):
            if premature is not None and premature.street == street and street == "flop":
                premature.cards.append(card)
                self.premature_left.add(card)
                self._grew = True
                return
            self._premature(t, street, card)
            return
        if self.premature_left & set(self.engine.cards.contents.get("board", set())):
            self._violation(
                premature,
                "the premature card(s) go back to the stub before the street is dealt again",
                f"{sorted(self.premature_left)} still on the board, {card} dealt",
                premature.rule if premature is not None else PREMATURE_RULES[street],
            )
            self.premature_left.clear()
        if n in (0, 3, 4):
            self._check_burns(street)
        hand.board.append(card)
        self.engine.mark_dirty()
        if len(hand.board) == BOARD_SIZE[street]:
            self._street_dealt(street)

    def _flop_just_dealt(self) -> bool:
        """Four cards at the flop: no burn since the flop and no flop action yet (39)."""
        return (
            len(self.hand.board) == 3
            and self.hand.street == "flop"
            and len(self.hand.burns) == self.burns_before
            and self._actions() == self.street_actions
            and not any(p.kind == "premature_card" for p in self.pending())
        )

    def _street_dealt(self, street: str) -> None:
        hand = self.hand
        hand.street = street
        self.burns_before = len(hand.burns)
        self.street_actions = self._actions()
        new = hand.board[:3] if street == "flop" else [hand.board[-1]]
        self.engine.event("board_dealt", street=street, cards=new, board=list(hand.board))
        for proc in self.pending():
            if proc.kind == "premature_card" and proc.street == street:
                if street == "turn" and proc.rule == "RP-5B":
                    proc.stage = "turn_redealt"  # the river comes without a burn
                    self.burn_plan["river"] = 0
                    continue
                self._done(proc, outcome="redealt", street=street)
            elif proc.kind == "premature_card" and proc.street == "turn" and street == "river":
                self._done(proc, outcome="redealt", street=street)
            elif proc.kind == "four_card_flop" and street == "turn":
                assert proc.draw is not None
                burn = proc.cards[proc.draw]
                self._done(
                    proc,
                    outcome="verified",
                    burn=burn,
                    flop=[c for c in proc.cards if c != burn],
                )
            elif proc.kind in ("dead_hand", "exposed_card"):
                self._done(proc, outcome="street_dealt", street=street)
        betting = self.betting
        if betting is not None:
            betting.board_street(street)

    def _check_burns(self, street: str) -> None:
        allowed = self.burn_plan.pop(street, 1)
        burned = len(self.hand.burns) - self.burns_before
        if burned == allowed:
            return
        proc = next(
            (
                p
                for p in self.pending()
                if p.kind in ("premature_card", "four_card_flop", "dead_hand", "exposed_card")
            ),
            None,
        )
        rule = proc.rule if proc is not None else "38"
        what = "no burn" if allowed == 0 else "one and only one burn"
        if proc is None:
            self.engine.alert(
                "burn_count",
                "warning",
                f"the {street} was dealt after {burned} burn card(s), not {allowed}",
                street=street,
                burns=burned,
            )
            return
        self._violation(proc, f"the {street} comes with {what}", f"{burned} burn card(s)", rule)

    # ------------------------------------------------------------------ premature cards

    def _premature(self, t: float, street: str, card: str) -> None:
        mode = self.profile.premature_card
        rule = PREMATURE_RULES[street]
        if mode == "unspecified":
            open_call = next(
                (p for p in self.pending() if p.kind == "floor_call" and p.street == street), None
            )
            if open_call is not None:
                open_call.cards.append(card)
                self._grew = True
                return
        if street != "flop":
            self.engine.event("premature_card", street=street, cards=[card], rule=rule)
        if mode == "unspecified":
            self.engine.floor_called = True
            self.engine.alert(
                "premature_card",
                "critical",
                f"premature {street} card {card}: the house rules give no procedure; floor called",
                street=street,
                rule=rule,
            )
            call = self._start(
                Procedure(
                    kind="floor_call",
                    rule=rule,
                    instruction=f"Premature {street}: wait for the floor's ruling.",
                    street=street,
                    cards=[card],
                    needs_floor=True,
                ),
                severity="critical",
            )
            if street == "flop":
                self._unannounced, self._grew = call, True
            return
        words = {
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
        self.premature_left.add(card)
        proc = self._start(
            Procedure(
                kind="premature_card",
                rule=rule,
                instruction=words[street],
                street=street,
                cards=[card],
            ),
            severity="critical",
        )
        if street == "flop":
            self._unannounced, self._grew = proc, True
            # The flop burn stays; the new flop comes without one.
            self.burn_plan["flop"] = 0
            self.burns_before = len(self.hand.burns)
        elif street == "turn":
            # Another burn before the new turn: counted from now.
            self.burns_before = len(self.hand.burns)
            self.burn_plan["turn"] = 1
        else:
            self.burns_before = len(self.hand.burns)
            self.burn_plan["river"] = 0

    def before_input(self, *, board_card: bool) -> None:
        """An input arrives: a premature flop still open is complete unless it is a board card."""
        if not board_card:
            self._announce_premature()

    def _announce_premature(self, *, complete_only: bool = False) -> None:
        """The `premature_card` event of a premature flop, naming every card of it (RP-5A).

        The flop's cards come one by one: the event waits for the third, or for the first
        input that adds none (`complete_only` leaves an incomplete flop open if this input
        added a card to it).
        """
        proc = self._unannounced
        if proc is None:
            return
        grew, self._grew = self._grew, False
        if complete_only and grew and len(proc.cards) < BOARD_SIZE["flop"]:
            return
        self._unannounced = None
        self.engine.event("premature_card", street="flop", cards=list(proc.cards), rule=proc.rule)

    def board_left(self, card: str) -> None:
        """A card left the board antenna (a remedy, or a card being straightened)."""
        if card in self.premature_left:
            self.premature_left.discard(card)
            for proc in self.pending():
                if (
                    proc.kind == "premature_card"
                    and card in proc.cards
                    and proc.stage == "pending"
                    and not set(proc.cards) & self.premature_left
                ):
                    proc.stage = "returned"
                    self.engine.alert(
                        "procedure_step",
                        "info",
                        f"premature {proc.street} card(s) off the board: continue the betting",
                        procedure=proc.kind,
                        rule=proc.rule,
                    )
            return
        flop_proc = next((p for p in self.pending() if p.kind == "four_card_flop"), None)
        if flop_proc is None:
            return
        if flop_proc.stage == "resolved":
            if card in self.hand.board:
                self._violation(
                    flop_proc,
                    "the three other cards stay as the flop (39)",
                    f"{card} left the board",
                    "39",
                )
            return
        self._four_card_check(flop_proc)

    # ------------------------------------------------------------------ four-card flop

    def _four_card_flop(self, t: float, card: str) -> None:
        hand = self.hand
        cards = [*hand.board, card]
        if self.profile.four_card_flop == "unspecified":
            self.engine.event("four_card_flop", cards=cards, rule="39")
            self.engine.floor_called = True
            self._start(
                Procedure(
                    kind="floor_call",
                    rule="39",
                    instruction="Four cards on the flop: the floor rules (no house procedure).",
                    street="flop",
                    cards=cards,
                    needs_floor=True,
                ),
                severity="critical",
            )
            return
        self.engine.event("four_card_flop", cards=cards, rule="39")
        self.engine.floor_called = True
        self._start(
            Procedure(
                kind="four_card_flop",
                rule="39",
                instruction=(
                    "Four cards on the flop: floor called. Scramble the four cards face down; "
                    "the floor picks one at random as the next burn card; the other three are "
                    "the flop (rule 39)."
                ),
                street="flop",
                cards=cards,
                needs_floor=True,
            ),
            severity="critical",
        )

    def wants_draw(self) -> tuple[str, int] | None:
        """A random draw the table must supply as an input (RP-14), once the floor is here."""
        for proc in self.pending():
            if proc.kind == "four_card_flop" and proc.draw is None and self.engine.floor_present():
                return "four_card_flop", len(proc.cards)
        return None

    def draw(self, purpose: str, pick: int, of: int) -> str | None:
        """Apply the table's random draw; an error message if it does not fit."""
        proc = next(
            (p for p in self.pending() if p.kind == "four_card_flop" and p.draw is None), None
        )
        if purpose != "four_card_flop" or proc is None:
            return f"no pending draw for {purpose!r}"
        if of != len(proc.cards) or not 0 <= pick < of:
            return f"draw must pick one of {len(proc.cards)}"
        if not self.engine.floor_present():
            return "a four-card flop is resolved only with the floor at the table (badge)"
        proc.draw = pick
        chosen = proc.cards[pick]
        proc.stage = "drawn"
        floor = self.engine.floor_ref()
        self.engine.event(
            "burn_drawn", card=chosen, cards=list(proc.cards), rule="RP-14", floor=floor
        )
        self.engine.alert(
            "procedure_step",
            "warning",
            f"the table drew {chosen} as the burn: move {chosen} to the burn, leave the other "
            "three as the flop",
            procedure=proc.kind,
            rule="39",
        )
        return None

    def _four_card_burn(self, t: float, proc: Procedure, card: str) -> None:
        if proc.stage == "resolved":
            self._violation(
                proc,
                "exactly one of the four flop cards goes to the burn (39)",
                f"{card} burned as well",
                "39",
            )
            return
        if card not in proc.cards:
            self._violation(
                proc,
                "one of the four flop cards goes to the burn (39)",
                f"{card}, not one of {proc.cards}",
                "39",
            )
            return
        if not self.engine.floor_present():
            self._violation(
                proc,
                "the floor selects the burn card (39)",
                f"{card} burned before the floor ruled",
                "39",
            )
        elif proc.draw is not None and proc.cards[proc.draw] != card:
            self.engine.alert(
                "draw_not_followed",
                "warning",
                f"the floor burned {card}; the table had drawn {proc.cards[proc.draw]}",
                rule="39",
            )
        proc.stage = "burned"
        self._four_card_check(proc, burned=card)

    def _four_card_check(self, proc: Procedure, burned: str | None = None) -> None:
        on_board: set[str] = set(self.engine.cards.contents.get("board", ()))
        left = [c for c in proc.cards if c in on_board]
        burn = burned or next(
            (c for c in proc.cards if c in self.engine.cards.contents.get("burn", set())), None
        )
        if burn is None or len(left) != 3:
            if burn is not None and len(left) < 3:
                self._violation(
                    proc,
                    "exactly one of the four cards to the burn, three stay as the flop (39)",
                    f"board {sorted(left)}",
                    "39",
                )
            return
        hand = self.hand
        hand.board[:] = left
        # Resolved on the board; verified until the turn comes without another burn. A burn
        # chosen without the floor (a violation) keeps the table held until the floor is here.
        proc.stage = "resolved"
        proc.needs_floor = not self.engine.floor_present()
        proc.seats = []
        proc.draw = proc.cards.index(burn)
        self.engine.alert(
            "procedure_step",
            "info",
            f"{burn} is the burn, {' '.join(left)} the flop: go on with the flop betting; "
            "the turn comes WITHOUT another burn",
            procedure=proc.kind,
            rule="39",
        )
        self.engine.event(
            "board_dealt", street="flop", cards=list(left), board=list(left), corrected=True
        )
        # The burn drawn from the four is the turn's burn: the turn comes without another.
        self.burns_before = len(hand.burns) + (0 if burn in hand.burns else 1)
        self.burn_plan["turn"] = 0
        self.engine.mark_dirty()

    # ------------------------------------------------------------------ the hold (39)

    def hold_reason(self) -> str | None:
        """What must happen before any betting while a four-card flop is pending, or None.

        Rule 39: the floor is called and the floor picks the burn; until the remedy is
        verified on the antennas (with the floor at the table) the table holds.
        """
        floor = self.engine.floor_present()
        for proc in self.pending():
            if proc.rule != "39":
                continue
            if proc.kind == "floor_call":
                return (
                    "four cards on the flop; the floor rules first (floor badge, then the "
                    "floor button)"
                )
            if proc.kind != "four_card_flop":
                continue
            if proc.stage == "resolved":
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
            if proc.stage == "drawn" and proc.draw is not None:
                return (
                    f"four cards on the flop; move {proc.cards[proc.draw]} to the burn and "
                    "leave the other three on the board (rule 39)"
                )
            if proc.stage == "burned":
                return "four cards on the flop; leave the other three on the board (rule 39)"
            return "four cards on the flop; the floor picks one of the four as the burn (rule 39)"
        return None

    def sync_hold(self, t: float) -> None:
        """After each input: hold the table while a four-card flop is pending, or release it.

        The hold is `Engine.holds["four_card_flop"]` (listed in `state.held`). On release,
        the folds made during the hold are taken, in the order the cards reached the muck.
        """
        floor = self.engine.floor_present()
        for proc in self.pending():
            if proc.kind == "four_card_flop" and proc.stage == "resolved" and floor:
                proc.needs_floor = False  # the floor is at the table and sees the flop
        reason = self.hold_reason()
        holds = self.engine.holds
        if reason is not None:
            if PROCEDURE_HOLD not in holds:
                self.engine.mark_dirty()
            holds[PROCEDURE_HOLD] = reason
            self._held = True
            return
        if not self._held:
            return
        self._held = False
        holds.pop(PROCEDURE_HOLD, None)
        self.engine.mark_dirty()
        self.held_pushes.clear()
        folds, self.held_folds = self.held_folds, []
        self.engine.alert(
            "table_released",
            "info",
            "the four-card flop is settled: the table is released, the flop betting goes on",
            held=sorted(holds),
            rule="39",
        )
        mucked = self.engine.cards.cards_at("muck")
        for seat in folds:
            if any(c in mucked for c in self.hand.hole.get(seat, ())):
                self.engine.mucked(t, seat)

    def refuse(self, action: str, seat: int | None = None) -> bool:
        """A betting action while the table is held for a four-card flop: True if refused.

        Nothing of it reaches the pot. A push's chips stay unsettled (taken back, nothing
        happened; left in the zone, they are the seat's push once the table is released);
        a fold (cards at the muck) is kept and taken on release; a button press is lost.
        """
        reason = self.engine.holds.get(PROCEDURE_HOLD)
        if reason is None:
            return False
        if action == "push":
            if seat is None or seat in self.held_pushes:
                return True
            self.held_pushes.add(seat)
            what = (
                f"Seat {seat}'s chips are not a bet: take them back (chips left in the zone "
                "are read as the seat's push once the table is released)"
            )
        elif action == "fold":
            if seat is None or seat in self.held_folds:
                return True
            self.held_folds.append(seat)
            what = (
                f"Seat {seat}'s cards reached the muck: the fold stands and is taken once the "
                "table is released"
            )
        else:
            what = f"{action.capitalize()} not taken: press it again once the table is released"
        self.engine.alert(
            "action_refused",
            "warning",
            f"the table is held: {reason}. {what}.",
            action=action,
            seat=seat,
            held=sorted(self.engine.holds),
            rule="39",
        )
        return True
