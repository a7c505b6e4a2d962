"""Liveness, proven by a stateful property test: no reachable state leaves the table unable to
finish the hand by legal dealer, player and floor inputs.

Hypothesis drives random dealing, betting and dealing-error inputs through the engine (the
shuffler, blinds, cards dealt in order or to a wrong seat, skipped seats, extra cards, the
misdeal, boxed, exposed, raise, all-in and floor buttons, four-card flops and premature
cards, cards taken off the board, burns, the cards collected, in-turn and out-of-turn
pushes, folds, chips taken back, the floor's badge, players away, time passing; the table's
random draw is supplied as the daemon does) under every rule profile. After every step the
trace so far is replayed into a fresh engine and `tests/liveness_finisher.py` must finish
the hand with legal inputs. At the end of each run, no text published named a card that was
not public at that moment (`tests/card_leaks.py`), and pokerkit replays every hand the run
completed, and the one it left in progress once finished, to the engine's result
(controller/phh_verdict.py; docs/phh.md).

CI runs `LIVENESS_EXAMPLES` examples (default 200); the nightly run sets the environment
variable `TABLECTL_LIVENESS_EXAMPLES=100000` (docs/testing.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from controller.draws import DrawRequests
from controller.engine import Engine, EngineSpec
from controller.engine.antennas import antenna
from controller.phh_verdict import HandJudge
from controller.rules.profiles import PROFILES
from kernel.inputs import Badge, ButtonPress, Event, TagIn, TagOut, Tick
from tests.card_leaks import leaks
from tests.engine_helpers import ev
from tests.liveness_finisher import FLOOR_UID, complete_hand, finish_with_the_floor, free_card

LIVENESS_EXAMPLES = int(os.environ.get("TABLECTL_LIVENESS_EXAMPLES", "200"))
STEPS = int(os.environ.get("TABLECTL_LIVENESS_STEPS", "40"))
PANEL = ("misdeal", "boxed", "exposed", "floor", "check", "raise")
KINDS = ("check", "call", "raise", "allin", "fold", "small")


def _spec(profile: str) -> EngineSpec:
    return EngineSpec(table="t01", room="test", seats=9, profile=profile)


def pokerkit_disagrees(profile: str, trace: Sequence[Event]) -> list[str]:
    """pokerkit's verdict on every hand the trace completes, the hand it leaves in progress
    finished first (tests/liveness_finisher.py), each from the state just before it: the
    hands pokerkit does not replay to the engine's result."""
    engine = Engine(_spec(profile))
    messages = [m for event in trace for m in engine.apply(event)]
    if engine.hand is not None:
        messages += finish_with_the_floor(engine, trace) or []  # stuck: the invariant says so
    judge = HandJudge()
    for m in messages:
        judge.see("t01", m.topic, m.payload)
    return [f"hand {hand}: {why}" for _t, hand, why in judge.disagreed]


class DealingMachine(RuleBasedStateMachine):
    """One table, hands dealt with errors; every state must still be finishable."""

    def __init__(self) -> None:
        super().__init__()
        self.profile = "tda-2019"
        self.engine = Engine(_spec(self.profile))
        self.trace: list[Event] = []
        self.t = 0.0
        self.chip = 0
        self.players = 2
        self.draws = DrawRequests(randbelow=lambda of: of - 1)
        self.zones: dict[int, list[tuple[str, int]]] = {}
        self.published: list[tuple[str, dict[str, Any]]] = []

    # ------------------------------------------------------------------ plumbing

    def tick(self, dt: float = 0.1) -> float:
        self.t = round(self.t + dt, 3)
        return self.t

    def feed(self, event: Event) -> None:
        self.trace.append(event)
        self.published += [(m.topic, m.payload) for m in self.engine.apply(event)]
        draw = self.draws.command(self.engine.wants_draw(), lambda: self.tick())
        if draw is not None:
            self.trace.append(draw)
            self.published += [(m.topic, m.payload) for m in self.engine.apply(draw)]

    def card(self, where: str, pick: int) -> None:
        found = free_card(self.engine, pick)
        if found is None:
            return  # every card is on the table already
        card, mucked = found
        if mucked:
            self.feed(TagOut(self.tick(0.01), "muck", card=card))
        self.feed(TagIn(self.tick(0.05), where, card=card))

    def push(self, seat: int, amount: int, settle: bool = True) -> None:
        if amount <= 0:
            return
        self.chip += 1
        chip = f"k{self.chip:05d}"
        self.zones.setdefault(seat, []).append((chip, amount))
        self.feed(TagIn(self.tick(0.05), f"bet{seat}", chip=chip, value=amount))
        if settle:
            self.feed(Tick(self.tick(1.1)))

    def amount(self, seat: int, kind: str) -> int:
        snap = self.engine.snapshot()
        seats = snap["seats"]
        me = seats.get(str(seat), {"bet": 0, "stack": 0})
        level = max(int(v["bet"]) for v in seats.values())
        owe = level - int(me["bet"])
        stack = int(me["stack"])
        want = {
            "call": owe,
            "raise": owe + max(level, 100) * 2,
            "allin": stack,
            "small": max(1, owe // 2),
        }.get(kind, 0)
        return min(want, stack)

    # ------------------------------------------------------------------ the table

    @initialize(
        players=st.integers(2, 6),
        button=st.integers(1, 6),
        profile=st.sampled_from(sorted(PROFILES)),
        short=st.booleans(),
    )
    def setup(self, players: int, button: int, profile: str, short: bool) -> None:
        self.profile = profile
        self.engine = Engine(_spec(profile))
        self.players = players
        for seat in range(1, players + 1):
            stack = 400 if short and seat % 2 else 10_000
            self.feed(ev(event="command", name="seat", seat=seat, player=f"P{seat}", stack=stack))
        self.feed(ev(event="command", name="level", small_blind=50, big_blind=100, ante=0))
        self.feed(ev(event="command", name="button", seat=min(button, players)))
        self.feed(ev(event="command", name="staff", uid=FLOOR_UID, person="Floor", role="floor"))

    @rule()
    def shuffler(self) -> None:
        self.feed(ButtonPress(self.tick(), "shuffler"))

    @precondition(lambda self: self.engine.betting is not None)
    @rule()
    def post_blinds(self) -> None:
        betting = self.engine.betting
        assert betting is not None
        for seat, owed in sorted(betting.owed.items()):
            if owed > 0 and betting.phase == "posting":
                self.push(seat, owed)

    @rule(pick=st.integers(0, 51))
    def deal_next(self, pick: int) -> None:
        """The next hole card in dealing order (or the lift that starts a hand)."""
        dealing = self.engine.dealing
        hand = self.engine.hand
        if dealing is None or hand is None:
            self.card("seat1", pick)
            return
        for _ in range(dealing.hole_count):
            for seat in dealing.deal.order:
                if len(hand.hole.get(seat, ())) < dealing.hole_count:
                    self.card(f"seat{seat}", pick)
                    return

    @rule(seat=st.integers(1, 7), pick=st.integers(0, 51))
    def deal_to(self, seat: int, pick: int) -> None:
        """A card to any seat: a wrong seat, an extra card, a seat not dealt in."""
        self.card(f"seat{seat}", pick)

    @rule(kind=st.sampled_from(KINDS), settle=st.booleans())
    def act(self, kind: str, settle: bool) -> None:
        seat = self.engine.snapshot()["to_act"]
        if seat is None:
            return
        self._act(seat, kind, settle)

    @rule(seat=st.integers(1, 6), kind=st.sampled_from(KINDS))
    def act_out_of_turn(self, seat: int, kind: str) -> None:
        self._act(seat, kind, True)

    def _act(self, seat: int, kind: str, settle: bool) -> None:
        if kind == "check":
            self.feed(ButtonPress(self.tick(), "check"))
        elif kind == "fold":
            for card in list(self.engine.cards_at(f"seat{seat}")):
                self.feed(TagOut(self.tick(0.05), f"seat{seat}", card=card))
                self.feed(TagIn(self.t, "muck", card=card))
        else:
            self.push(seat, self.amount(seat, kind), settle)

    @rule(seat=st.integers(1, 6))
    def take_back(self, seat: int) -> None:
        for chip, value in self.zones.pop(seat, []):
            self.feed(TagOut(self.tick(0.05), f"bet{seat}", chip=chip, value=value))

    @rule(name=st.sampled_from(PANEL))
    def press(self, name: str) -> None:
        self.feed(ButtonPress(self.tick(), name))

    @rule(seat=st.integers(1, 6))
    def allin_button(self, seat: int) -> None:
        self.feed(ButtonPress(self.tick(), "allin", seat=seat))

    @rule(count=st.integers(1, 4), burn=st.booleans(), pick=st.integers(0, 51))
    def board(self, count: int, burn: bool, pick: int) -> None:
        """Board cards: a street, a four-card flop, a premature card, with or without a burn."""
        if burn:
            self.card("burn", pick)
        for i in range(count):
            self.card("board", pick + i)

    @rule(pick=st.integers(0, 4))
    def off_the_board(self, pick: int) -> None:
        cards = self.engine.cards_at("board")
        if cards:
            self.feed(TagOut(self.tick(), "board", card=cards[pick % len(cards)]))

    @rule()
    def collect(self) -> None:
        """Every card on the table back to the dealer."""
        for name, cards in sorted(self.engine.cards.contents.items()):
            if antenna(name).kind in ("seat", "board", "burn"):
                for card in list(cards):
                    self.feed(TagOut(self.tick(0.01), name, card=card))

    @rule()
    def floor_badge(self) -> None:
        self.feed(Badge(t=self.tick(), uid=FLOOR_UID))

    @rule(seat=st.integers(1, 6), away=st.booleans())
    def away(self, seat: int, away: bool) -> None:
        if seat <= self.players:
            self.feed(ev(t=self.tick(), event="command", name="away", seat=seat, away=away))

    @rule()
    def time_passes(self) -> None:
        self.feed(Tick(self.tick(1.5)))

    # ------------------------------------------------------------------ the properties

    def teardown(self) -> None:
        """No text of the run named a card that was not public (hole cards were dealt)."""
        assert leaks(self.published) == []
        assert pokerkit_disagrees(self.profile, self.trace) == []

    @invariant()
    def the_hand_can_be_finished(self) -> None:
        if self.engine.hand is None:
            return
        engine = Engine(_spec(self.profile))
        for event in self.trace:
            engine.apply(event)
        stuck = complete_hand(engine, self.trace)
        assert stuck is None, stuck


DealingMachine.TestCase.settings = settings(
    max_examples=LIVENESS_EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=LIVENESS_EXAMPLES <= 1000,
    database=None,
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_liveness_every_reachable_state_can_finish_the_hand = DealingMachine.TestCase
