"""A simulated dealer who deals hand after hand at a table the room runs: it deals when the
table may start a hand (seated players, not held), plans each hand once the table has started
it (who is dealt in, button, blinds, stacks, as the table says), plays it on the simulated
hardware, and in hand-for-hand waits with an all-in kept face down until the floor instructs
(TDA 2019 RP-8 F). Seats, levels and holds come from the room, over the broker, never from
here: the dealer only looks at its own table, as a dealer does.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from controller.engine import Engine
from controller.rules.betting import BettingRound
from kernel.inputs import ButtonPress, Event, TagIn, TagOut
from sim.dealer import Decision, HandPlan, TableDealer
from sim.finisher import HandFinisher, finish_live, floor_badge
from sim.plans import _decide, first_card_seat, plan_started

log = logging.getLogger("tablectl.sim.dealer")

#: Below this many big blinds a player pushes or folds (a tournament's short stacks).
SHORT_STACK_BB = 12


def tournament_decision(rng: random.Random, rnd: BettingRound, seat: int, street: int) -> Decision:
    """A plausible tournament decision: short stacks push or fold, deep stacks play as the
    demo's players do; an all-in is called now and then."""
    behind = rnd.behind[seat]
    bb = max(rnd.big_blind, 1)
    to_call = rnd.to_call(seat)
    depth = behind / bb
    if to_call > 0 and to_call * 2 >= behind:  # a call for half the stack or more
        calls = 0.5 if depth < SHORT_STACK_BB else 0.3 if depth < 2 * SHORT_STACK_BB else 0.12
        return Decision(seat, "call" if rng.random() < calls else "fold")
    if street == 0 and depth < SHORT_STACK_BB:
        if rng.random() < 0.3 and rnd.can_raise(seat):
            return Decision(seat, "allin")
        return Decision(seat, "fold" if to_call else "check")
    decision = _decide(rng, rnd, seat, street)
    if decision.kind == "allin" and depth >= 2 * SHORT_STACK_BB and rnd.can_raise(seat):
        # deep stacks rarely move in: a raise instead
        target = min(rnd.min_raise_to(seat), rnd.allin_total(seat) - 1)
        if target > rnd.current_bet:
            return Decision(seat, "raise" if rnd.current_bet else "bet", target)
    return decision


def plan_started_hand(
    engine: Engine, rng: random.Random, lifted: tuple[int, str] | None = None
) -> HandPlan | None:
    """The plan of the hand `engine` has just started (its `hand_started` is out): cards
    from a shuffled deck (`lifted`: the seat and card that started it, already dealt),
    every decision legal by the rules' own BettingRound."""
    return plan_started(engine, rng, lifted, tournament_decision)


def rest_of_hand(
    engine: Engine, dealer: TableDealer, rng: random.Random, lifted: tuple[int, str] | None = None
) -> list[Event]:
    """The physical events of the hand `engine` has just started, after the shuffler press
    (or after the first card, `lifted`, under a house that starts the hand so)."""
    plan = plan_started_hand(engine, rng, lifted)
    if plan is None:
        return []
    events = dealer.play(plan)
    dealer.events.clear()
    rest = events[1:]  # the first is the shuffler press that started the hand
    if lifted is not None:
        seat, card = lifted
        rest = [
            e
            for e in rest
            if not (isinstance(e, TagIn) and e.antenna == f"seat{seat}" and e.card == card)
        ]
    return rest


def first_card(engine: Engine, rng: random.Random) -> tuple[int, str] | None:
    """Under a house whose hand starts when the dealer lifts the cards (no shuffler button,
    e.g. casinos-austria): the seat the first card goes to, and a card for it."""
    return first_card_seat(engine, rng)


def shuffler_starts(engine: Engine) -> bool:
    """The house starts a hand on the shuffler's button (else when the cards are lifted)."""
    return "shuffler" in engine.profile.hand_start_triggers


def can_start(engine: Engine) -> bool:
    """The table may start a hand: nothing holds it and two players with chips sit."""
    return not engine.holds and engine.hand is None and len(engine.eligible()) >= 2


def waits_for_the_floor(engine: Engine, event: Event) -> bool:
    """RP-8 F: all-in and called in hand-for-hand, the dealer deals no further card (a burn
    or a board card), nor turns the hands over to push the pot, until the floor instructs."""
    betting = engine.betting
    if betting is None or betting.face_down != "said":
        return False
    return (isinstance(event, TagIn) and event.antenna in ("burn", "board")) or (
        isinstance(event, TagOut) and event.antenna == "pot"
    )


class LiveDealer:
    """Deals at one simulated table (a started `controller.daemon.Daemon` on a virtual
    clock, played by a `sim.player.ScriptPlayer`) until stopped.

    Between hands the dealer waits, in real time, until the table may start a hand; while
    it waits the table's time moves on (`idle_step` of table time per `poll` of real time),
    as a held table's does. It presses the shuffler, reads the hand the table started, and
    plays the rest; before a card that RP-8 F holds back it waits for the floor.
    """

    def __init__(
        self,
        daemon: Any,
        player: Any,
        seed: int,
        *,
        poll: float = 0.05,
        idle_step: float = 1.0,
        between_hands: float = 3.0,
        stop: threading.Event | None = None,
    ) -> None:
        self.daemon = daemon
        self.player = player
        self.rng = random.Random(seed)
        self.poll = poll
        self.idle_step = idle_step
        self.between_hands = between_hands
        self.stop = stop or threading.Event()
        self.dealer = TableDealer(settle=daemon.config.rules.settle_seconds)
        self.finisher = HandFinisher(
            random.Random(f"finisher {seed}"),
            floor_badge=floor_badge(daemon.engine),
            settle=daemon.config.rules.settle_seconds,
        )
        self.hands = 0
        self.thread: threading.Thread | None = None

    @property
    def engine(self) -> Engine:
        engine: Engine = self.daemon.engine
        return engine

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self.run, name=f"dealer-{self.daemon.config.table.id}", daemon=True
        )
        self.thread.start()

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    def _idle(self) -> None:
        """Nothing to deal: real time passes, and table time with it."""
        self.stop.wait(self.poll)
        self.player.advance(round(self.daemon.now() + self.idle_step, 6))

    def run(self) -> None:
        """Deal until stopped."""
        while not self.stop.is_set():
            self.daemon.wait_idle(5.0)
            if not can_start(self.engine):
                self._idle()
                continue
            before = self.engine.hand_number
            try:
                if shuffler_starts(self.engine):
                    self.player.play([ButtonPress(0.0, "shuffler")], self.stop)
                    self.player.flush()
                    engine = self.engine
                    if engine.hand is None or engine.hand_number == before:
                        self._idle()  # a hold or a seat change came first: no hand
                        continue
                    events = rest_of_hand(engine, self.dealer, self.rng)
                else:
                    lifted = first_card(self.engine, self.rng)
                    if lifted is None:
                        self._idle()
                        continue
                    self.player.play([TagIn(0.0, f"seat{lifted[0]}", card=lifted[1])], self.stop)
                    self.player.flush()
                    engine = self.engine
                    if engine.hand is None or engine.hand_number == before:
                        self._clear(*lifted)
                        self._idle()
                        continue
                    events = rest_of_hand(engine, self.dealer, self.rng, lifted)
            except Exception:  # the table changed under the planner: try the next hand
                log.exception("could not plan hand %s", before + 1)
                self._idle()
                continue
            self.player.play(self._paced(events), self.stop)
            engine = self.engine
            if not self.stop.is_set() and engine.hand is not None:
                # The table read the hand otherwise than planned: follow the table to the
                # end of it (sim/finisher.py), RP-8 F waits included.
                log.info("hand %s: the table read the dealing otherwise; following it", before + 1)
                self.finisher.t = 0.0
                following = finish_live(lambda: self.engine, self.finisher)
                self.player.play(self._paced(following), self.stop)
            self.hands += 1
            self.player.advance(round(self.daemon.now() + self.between_hands, 6))

    def _clear(self, seat: int, card: str) -> None:
        """A card that started no hand (the table was held): into the muck, and away."""
        self.player.play(
            [
                TagOut(0.0, f"seat{seat}", card=card),
                TagIn(0.05, "muck", card=card),
                TagOut(0.1, "muck", card=card),
            ],
            self.stop,
        )

    def _paced(self, events: Iterable[Event]) -> Iterator[Event]:
        """The hand's events; before one RP-8 F holds back, wait until the floor instructs."""
        for event in events:
            while waits_for_the_floor(self.engine, event) and not self.stop.is_set():
                time.sleep(self.poll)
                self.player.flush()  # the floor's command waits in the reorder window
            yield event
