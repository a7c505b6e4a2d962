"""Money properties, proven by a stateful property test: whatever players, dealer and floor do
to the chips, every hand the table completes is judged by pokerkit strictly and no chip is
created or lost.

Hypothesis deals real hands (every rule profile, no-limit, pot-limit and fixed-limit, with
antes, big-blind antes and the house straddle) and plays them with the money situations
outside testers keep breaking, each a named rule of the machine:

- `rule_53A_out_of_turn`: a push or a check out of turn, held (53-A), then binding or not
  as the action before it changes;
- `rule_53B_skipped_seat`: substantial action out of turn past a skipped seat (53-B); the
  floor comes, the skipped seat acts (calls, raises or folds), the players who acted out of
  turn act again with their binding chips in;
- `rule_58_fold_out_of_turn`: a binding fold out of turn;
- `rule_65A_raiser_killed`: a raiser's cards go to the muck (killed or mucked): its uncalled
  part comes back, no call is invented, the others play on;
- `rule_15B_bettor_discards`: a bettor throws its cards away before the others act;
- `rule_46_pull_back`: chips pulled back off a bet zone (46, a 51-B undercall), then a fold;
- `rule_55_check_facing_a_bet`: check declared facing a bet, then a call, a fold or a push
  that would be a raise.

The invariant after every step: the chips of the seats, the bets, the pots and the rake add
up to the chips the table started with. At the end of each run the hand in progress is
finished by legal dealer, player and floor inputs (`tests/liveness_finisher.py`: a hand
that can never finish fails). `MoneyMachine` also exports every completed hand to PHH and
has pokerkit judge it (`controller/phh_judge.judge`, named allowances only) from the real
starting stacks; the failures it found are regression tests in
tests/unit/test_money_rules_found.py and tests/unit/test_phh_export_rules.py. A hand
pokerkit still refuses fails the run unless its events show one of the gaps named in
tests/money_known.py (a short all-in big blind called in full, a fixed-limit short all-in
re-opening the betting: the rules and pokerkit differ), each recognised narrowly.

Both machines run in every fast suite: `MONEY_EXAMPLES` examples each (default 600,
derandomized; some 2,000 completed hands; the judged one took 140 s alone on a loaded
two-core machine, 53 s the chip one). The examples drawn inside the whole suite are not the
ones drawn alone: check both. Set `TABLECTL_MONEY_EXAMPLES` for more: above 1,000 they are
drawn anew (`--hypothesis-seed` picks the draw), which is how new hands are found; runs of
1,500 still find two the export does not write right (docs/phh.md).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from controller.draws import DrawRequests
from controller.engine import Engine, EngineSpec
from controller.engine.betting.straddle import utg
from controller.rules.profiles import PROFILES
from kernel.inputs import Badge, ButtonPress, Event, TagIn, TagOut, Tick
from kernel.messages import EVENTS
from tests.engine_helpers import ev
from tests.liveness_finisher import FLOOR_UID, LivenessFinisher, _play_to_the_end, free_card
from tests.money_judge import Messages, judge_completed_hands
from tests.money_known import known_money_gap

MONEY_EXAMPLES = int(os.environ.get("TABLECTL_MONEY_EXAMPLES", "600"))
STEPS = int(os.environ.get("TABLECTL_MONEY_STEPS", "30"))
GAMES = ("nlhe", "plhe", "flhe")
LEVELS = ("plain", "ante", "bb_ante")
KINDS = ("check", "call", "raise", "allin", "fold", "small", "min")


def _spec(profile: str, game: str) -> EngineSpec:
    return EngineSpec(table="t01", room="test", seats=9, profile=profile, game=game)


def chips_in_play(engine: Engine) -> int:
    """Stacks, bets in front, pots in the middle and the house's rake of the hand."""
    snap = engine.snapshot()
    seats = snap["seats"].values()
    return (
        sum(int(s["stack"]) + int(s["bet"]) for s in seats)
        + sum(int(p["amount"]) for p in snap.get("pots") or [])
        + int(snap.get("rake") or 0)
    )


class MoneyMachine(RuleBasedStateMachine):
    """One table, real hands, the money situations testers break; every hand judged."""

    judged = True

    def __init__(self) -> None:
        super().__init__()
        self.profile = "tda-2019"
        self.game = "nlhe"
        self.engine = Engine(_spec(self.profile, self.game))
        self.trace: list[Event] = []
        self.t = 0.0
        self.chip = 0
        self.players = 2
        self.straddle = False
        self.draws = DrawRequests(randbelow=lambda of: of - 1)
        self.messages: Messages = []
        self.total = 0
        self.raked = 0

    # ------------------------------------------------------------------ plumbing

    def tick(self, dt: float = 0.1) -> float:
        self.t = round(self.t + dt, 3)
        return self.t

    def feed(self, event: Event) -> None:
        self.trace.append(event)
        self.messages += [(m.topic, m.payload) for m in self.engine.apply(event)]
        draw = self.draws.command(self.engine.wants_draw(), lambda: self.tick())
        if draw is not None:
            self.trace.append(draw)
            self.messages += [(m.topic, m.payload) for m in self.engine.apply(draw)]

    def card(self, where: str, pick: int = -1) -> None:
        found = free_card(self.engine, pick)
        if found is None:
            return
        card, mucked = found
        if mucked:
            self.feed(TagOut(self.tick(0.01), "muck", card=card))
        self.feed(TagIn(self.tick(0.05), where, card=card))

    def push(self, seat: int, amount: int, settle: bool = True) -> None:
        if amount <= 0:
            return
        self.chip += 1
        chip = f"k{self.chip:05d}"
        self.feed(TagIn(self.tick(0.05), f"bet{seat}", chip=chip, value=amount))
        if settle:
            self.feed(Tick(self.tick(1.1)))

    def fold(self, seat: int) -> None:
        for card in list(self.engine.cards_at(f"seat{seat}")):
            self.feed(TagOut(self.tick(0.05), f"seat{seat}", card=card))
            self.feed(TagIn(self.t, "muck", card=card))

    def check(self) -> None:
        self.feed(ButtonPress(self.tick(), "check"))

    def floor(self) -> None:
        if not self.engine.floor_present():
            self.feed(Badge(t=self.tick(), uid=FLOOR_UID))
        self.feed(ButtonPress(self.tick(), "floor"))

    def seats(self) -> dict[str, Any]:
        seats: dict[str, Any] = self.engine.snapshot()["seats"]
        return seats

    def to_act(self) -> int | None:
        seat = self.engine.snapshot()["to_act"]
        return int(seat) if seat is not None else None

    def live(self) -> list[int]:
        return [int(s) for s, v in self.seats().items() if v["status"] == "active"]

    def amount(self, seat: int, kind: str) -> int:
        """Chips for a push of `kind` by `seat` facing the bet in front of the others."""
        seats = self.seats()
        me = seats.get(str(seat), {"bet": 0, "stack": 0})
        level = max(int(v["bet"]) for v in seats.values())
        owe = level - int(me["bet"])
        stack = int(me["stack"])
        want = {
            "call": owe,
            "raise": owe + max(level, 100) * 2,
            "min": owe + max(level - int(me["bet"]), 100),
            "allin": stack,
            "small": max(1, owe // 2),
        }.get(kind, 0)
        return min(want, stack)

    def act_as(self, seat: int, kind: str, settle: bool = True) -> None:
        if kind == "check":
            self.check()
        elif kind == "fold":
            self.fold(seat)
        else:
            self.push(seat, self.amount(seat, kind), settle)

    def betting(self) -> bool:
        return self.engine.hand is not None and self.to_act() is not None

    # ------------------------------------------------------------------ the table

    @initialize(
        players=st.integers(2, 6),
        button=st.integers(1, 6),
        profile=st.sampled_from(sorted(PROFILES)),
        game=st.sampled_from(GAMES),
        level=st.sampled_from(LEVELS),
        short=st.booleans(),
        straddle=st.booleans(),
    )
    def setup(
        self,
        players: int,
        button: int,
        profile: str,
        game: str,
        level: str,
        short: bool,
        straddle: bool,
    ) -> None:
        self.profile, self.game = profile, game
        self.engine = Engine(_spec(profile, game))
        self.players = players
        self.straddle = straddle
        for seat in range(1, players + 1):
            stack = 450 if short and seat % 2 else 10_000
            self.total += stack
            self.feed(ev(event="command", name="seat", seat=seat, player=f"P{seat}", stack=stack))
        ante = {"plain": 0, "ante": 25, "bb_ante": 100}[level]
        self.feed(
            ev(
                event="command",
                name="level",
                small_blind=50,
                big_blind=100,
                ante=ante,
                bb_ante=level == "bb_ante",
            )
        )
        self.feed(ev(event="command", name="button", seat=min(button, players)))
        self.feed(ev(event="command", name="staff", uid=FLOOR_UID, person="Floor", role="floor"))
        self.start_hand()

    def clear_table(self) -> None:
        """Between hands the dealer takes every card and chip off the antennas."""
        for name, cards in sorted(self.engine.cards.contents.items()):
            for card in list(cards):
                self.feed(TagOut(self.tick(0.01), name, card=card))
        for name, chips in sorted(self.engine.chip_spots.contents.items()):
            for chip in list(chips):
                value = self.engine.chip_values.get(chip, 0)
                self.feed(TagOut(self.tick(0.01), name, chip=chip, value=value))
        self.feed(Tick(self.tick(1.1)))

    def start_hand(self) -> None:
        """Shuffler, forced bets posted (a straddle where the house has one), cards dealt."""
        self.clear_table()
        self.feed(ButtonPress(self.tick(), "shuffler"))
        betting = self.engine.betting
        if betting is None:
            return
        for seat, owed in sorted(betting.owed.items()):
            if owed > 0 and betting.phase == "posting":
                self.push(seat, owed)
        if self.straddle and betting.straddle_multiple and betting.straddle_seat is None:
            seat = utg(betting)
            if seat is not None:
                self.push(seat, betting.straddle_multiple * betting.blinds.big_blind)
        dealing = self.engine.dealing
        hand = self.engine.hand
        if dealing is None or hand is None:
            return
        for _ in range(dealing.hole_count):
            for seat in dealing.deal.order:
                if len(hand.hole.get(seat, ())) < dealing.hole_count:
                    self.card(f"seat{seat}")

    # ------------------------------------------------------------------ in turn

    @precondition(lambda self: self.betting())
    @rule(kind=st.sampled_from(KINDS), settle=st.booleans())
    def act(self, kind: str, settle: bool) -> None:
        seat = self.to_act()
        if seat is not None:
            self.act_as(seat, kind, settle)

    @precondition(lambda self: self.betting())
    @rule(seat=st.integers(1, 6))
    def allin_button(self, seat: int) -> None:
        self.feed(ButtonPress(self.tick(), "allin", seat=seat))

    @precondition(lambda self: self.betting())
    @rule(kind=st.sampled_from(("min", "raise")))
    def declared_raise(self, kind: str) -> None:
        """The raise button, then the chips (2015 rule 42-C two motions where it applies)."""
        seat = self.to_act()
        if seat is None:
            return
        self.feed(ButtonPress(self.tick(), "raise", seat=seat))
        self.push(seat, self.amount(seat, "call"))
        self.push(seat, self.amount(seat, kind))

    # ------------------------------------------------------------------ the money situations

    @precondition(lambda self: self.betting())
    @rule(offset=st.integers(1, 5), kind=st.sampled_from(KINDS), then=st.sampled_from(KINDS))
    def rule_53A_out_of_turn(self, offset: int, kind: str, then: str) -> None:
        """A seat after the one to act acts out of turn (held); the seat to act then acts."""
        seat = self.to_act()
        live = self.live()
        if seat is None or seat not in live or len(live) < 2:
            return
        oot = live[(live.index(seat) + offset) % len(live)]
        if oot == seat:
            return
        self.act_as(oot, kind)
        if self.to_act() == seat:
            self.act_as(seat, then)

    @precondition(lambda self: self.betting())
    @rule(
        kinds=st.lists(st.sampled_from(("call", "raise", "min", "check", "allin")), min_size=2,
                       max_size=3),
        skipped=st.sampled_from(("call", "raise", "min", "fold", "check", "allin")),
        again=st.sampled_from(("call", "raise", "fold", "check")),
    )
    def rule_53B_skipped_seat(self, kinds: list[str], skipped: str, again: str) -> None:
        """Seats after the one to act put chips out in order: substantial action out of turn.
        The floor comes; the skipped seat acts; the out-of-turn seats act again."""
        seat = self.to_act()
        live = self.live()
        if seat is None or seat not in live or len(live) < 3:
            return
        i = live.index(seat)
        after = [live[(i + k) % len(live)] for k in range(1, len(live))][: len(kinds)]
        for oot, kind in zip(after, kinds, strict=False):
            self.act_as(oot, kind)
        self.floor()
        if self.to_act() == seat:
            self.act_as(seat, skipped)
        for oot in after:
            if self.to_act() == oot:
                self.act_as(oot, again)

    @precondition(lambda self: self.betting())
    @rule(offset=st.integers(1, 5))
    def rule_58_fold_out_of_turn(self, offset: int) -> None:
        seat = self.to_act()
        live = self.live()
        if seat is None or seat not in live:
            return
        oot = live[(live.index(seat) + offset) % len(live)]
        if oot != seat:
            self.fold(oot)

    @precondition(lambda self: self.betting())
    @rule(kind=st.sampled_from(("raise", "min", "allin")), callers=st.integers(0, 2))
    def rule_65A_raiser_killed(self, kind: str, callers: int) -> None:
        """The seat to act raises, `callers` seats call, then the raiser's cards reach the muck."""
        seat = self.to_act()
        if seat is None:
            return
        self.push(seat, self.amount(seat, kind))
        for _ in range(callers):
            nxt = self.to_act()
            if nxt is None or nxt == seat:
                break
            self.push(nxt, self.amount(nxt, "call"))
        self.fold(seat)

    @precondition(lambda self: self.betting())
    @rule(kind=st.sampled_from(("raise", "min", "call")))
    def rule_15B_bettor_discards(self, kind: str) -> None:
        """The seat to act bets (or calls) and throws its cards away before the others act."""
        seat = self.to_act()
        if seat is None:
            return
        amount = self.amount(seat, kind)
        if amount <= 0:
            amount = self.amount(seat, "min")
        self.push(seat, amount)
        self.fold(seat)

    @precondition(lambda self: self.engine.hand is not None)
    @rule(seat=st.integers(1, 6), keep=st.integers(0, 2), fold=st.booleans(), oot=st.booleans())
    def rule_46_pull_back(self, seat: int, keep: int, fold: bool, oot: bool) -> None:
        """Chips pulled back off a bet zone (all but `keep` of them), then maybe a fold. With
        `oot` False the seat is the one to act, first pushing an undercall (51-B)."""
        if not oot:
            to_act = self.to_act()
            if to_act is None:
                return
            seat = to_act
            self.push(seat, self.amount(seat, "small"))
            self.push(seat, self.amount(seat, "small"))
        zone = list(self.engine.chip_spots.contents.get(f"bet{seat}", []))
        for chip in zone[keep:]:
            value = self.engine.chip_values.get(chip, 0)
            self.feed(TagOut(self.tick(0.05), f"bet{seat}", chip=chip, value=value))
        self.feed(Tick(self.tick(1.1)))
        if fold:
            self.fold(seat)

    @precondition(lambda self: self.betting())
    @rule(then=st.sampled_from(("call", "fold", "raise", "allin", "check")))
    def rule_55_check_facing_a_bet(self, then: str) -> None:
        seat = self.to_act()
        if seat is None:
            return
        self.check()
        if self.to_act() == seat:
            self.act_as(seat, then)

    # ------------------------------------------------------------------ dealer and floor

    @precondition(lambda self: self.engine.hand is not None and not self.betting())
    @rule()
    def next_street(self) -> None:
        """The bets gathered, a burn and the next board card(s)."""
        snap = self.engine.snapshot()
        board = len(snap.get("board") or [])
        if board >= 5:
            return
        hand = self.engine.hand
        betting = hand.betting if hand is not None else None
        if betting is not None:
            for seat, zone in sorted(betting.zones.items()):
                for chip, value in list(zone.chips.items()):
                    t = self.tick(0.01)
                    self.feed(TagOut(t, f"bet{seat}", chip=chip, value=value))
                    self.feed(TagIn(t, "pot", chip=chip, value=value))
        self.card("burn")
        for _ in range({0: 3}.get(board, 1)):
            self.card("board")

    @rule()
    def floor_rules(self) -> None:
        self.floor()

    @rule()
    def time_passes(self) -> None:
        self.feed(Tick(self.tick(1.5)))

    @rule()
    def next_hand(self) -> None:
        """The hand is finished by the dealer and the next one dealt."""
        self.finish()
        if sum(1 for v in self.seats().values() if int(v["stack"]) > 0) >= 2:
            self.start_hand()

    # ------------------------------------------------------------------ the properties

    def finish(self) -> None:
        """The hand in progress is played to its end by legal inputs (else it never ends)."""
        if self.engine.hand is None:
            return
        finisher = LivenessFinisher(self.engine, self.trace)
        ended = _play_to_the_end(finisher, 300)
        self.messages += [(m.topic, m.payload) for m in finisher.messages]
        self.trace += finisher.events
        assert ended, f"the hand cannot finish: {self.engine.snapshot()}"
        self.t = finisher.t + 1.0

    @invariant()
    def no_chip_is_created_or_lost(self) -> None:
        rake = sum(
            int(p.get("rake") or 0)
            for topic, p in self.messages
            if topic == EVENTS and p.get("type") == "hand_completed"
        )
        live = int(self.engine.snapshot().get("rake") or 0) if self.engine.hand else 0
        assert chips_in_play(self.engine) - live + rake == self.total
        negative = {n: s.stack for n, s in self.engine.seats.items() if s.stack < 0}
        assert not negative, f"a stack below zero: {negative}"

    def teardown(self) -> None:
        self.finish()
        if self.judged:
            judge_completed_hands(self.messages, known_money_gap)


class ChipsMachine(MoneyMachine):
    """The same table and situations, without the judge: every hand finishes, no chip is
    created or lost."""

    judged = False


SETTINGS = settings(
    max_examples=MONEY_EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=MONEY_EXAMPLES <= 1000,
    database=None,
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
MoneyMachine.TestCase.settings = SETTINGS
ChipsMachine.TestCase.settings = SETTINGS
test_money_every_hand_finishes_and_no_chip_is_created_or_lost = ChipsMachine.TestCase

test_money_every_completed_hand_is_judged_by_pokerkit = MoneyMachine.TestCase
