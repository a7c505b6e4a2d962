"""Random hands for the PHH acceptance: tests/oracle.py's hands plus straddles (campione).

pokerkit plays each hand (seeded cards, seeded decisions legal under both pokerkit and the TDA
rules); the simulated dealer turns it into a physical trace; the engine replays the trace.
Straddle hands run under the `campione` profile (the house straddle: twice the big blind,
posted by the seat left of the big blind before the cards, acting last preflop).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from pokerkit import ChipsPushing, State

from controller.engine import Engine, EngineSpec
from controller.engine.cards import FULL_DECK
from kernel.inputs import Event
from kernel.messages import Message
from sim.dealer import TableDealer
from tests.oracle import (
    AUTOMATIONS,
    LEVELS,
    Chooser,
    OracleAction,
    OracleHand,
    TdaReopening,
    _stack,
    classify,
    drive,
    plan_of,
    positions,
    seat_of,
    setup_events,
)


class _Reopening(TdaReopening):
    """TDA reopening with the straddle as the full bet to raise over on the first round."""

    def _sync(self, state: State) -> None:
        if state.street_index != self.street:
            self.street = state.street_index
            bets = state.blinds_or_straddles
            self.full_raise = max(bets) if not state.street_index else bets[1]
            self.faced = {}


def _chooser(rng: random.Random, aggression: float) -> Chooser:
    """tests/oracle.py's random player, raising only to amounts both rule sets allow."""
    reopening = _Reopening()

    def choose(state: State) -> OracleAction:
        to_call = state.checking_or_calling_amount or 0
        roll = rng.random()
        action: OracleAction
        if to_call and state.can_fold() and roll < 0.22:
            action = classify(state, "fold")
        elif (
            state.can_complete_bet_or_raise_to()
            and roll > 1.0 - aggression
            and reopening.may_raise(state)
        ):
            low = state.min_completion_betting_or_raising_to_amount
            high = state.max_completion_betting_or_raising_to_amount
            assert low is not None and high is not None
            reopening._sync(state)
            low = min(high, max(low, max(state.bets) + reopening.full_raise))
            if low >= high or rng.random() < 0.4:
                total = high
            else:
                top = min(high, low + rng.choice((0, 50, 100, 333, 1000, 5000)))
                total = rng.randint(low, top)
            action = classify(state, "raise", total)
        else:
            action = classify(state, "check_or_call")
        reopening.record(state, action)
        return action

    return choose


@dataclass(frozen=True, slots=True)
class PhhCase:
    """One generated hand: pokerkit's account, the physical trace and the engine's profile."""

    hand: OracleHand
    straddle: int
    profile: str
    trace: list[Event]


def _state(
    n: int, blinds: tuple[int, ...], ante: int, bb_ante: bool, stacks: Sequence[int]
) -> State:
    from pokerkit import NoLimitTexasHoldem

    antes: dict[int, int] | int = {1: ante} if bb_ante else ante
    return NoLimitTexasHoldem.create_state(
        AUTOMATIONS, False, antes, blinds, blinds[1], tuple(stacks), n
    )


def generate_case(rng: random.Random, index: int) -> PhhCase:
    """A random hand: 2-9 players, antes in about 40%, a straddle in about 30% (3+ players)."""
    n = rng.randint(2, 9)
    sb, bb = rng.choice(LEVELS)
    ante, bb_ante = 0, False
    if rng.random() < 0.4:
        bb_ante = rng.random() < 0.3
        ante = bb if bb_ante else rng.choice((bb // 10, bb // 4, bb // 2))
    straddle = 2 * bb if n >= 3 and rng.random() < 0.3 else 0
    blinds: tuple[int, ...] = (sb, bb, straddle) if straddle else (sb, bb)
    floor = bb + ante + straddle
    stacks = [_stack(rng, bb, floor) for _ in range(n)]
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole = tuple((deck.pop(), deck.pop()) for _ in range(n))
    board = tuple(deck.pop() for _ in range(5))
    burns = tuple(deck.pop() for _ in range(3))
    state = _state(n, blinds, ante, bb_ante, stacks)
    actions = drive(state, hole, board, burns, _chooser(rng, rng.choice((0.15, 0.3, 0.5))))
    pushes = [op for op in state.operations if isinstance(op, ChipsPushing) and any(op.amounts)]
    hand = OracleHand(
        index=index,
        blinds=(sb, bb),
        ante=ante,
        bb_ante=bb_ante,
        starting_stacks=tuple(stacks),
        hole=hole,
        board=board,
        burns=burns,
        actions=tuple(actions),
        final_stacks=tuple(state.stacks),
        pots_pushed=len(pushes),
        split_winners=frozenset(
            p
            for op in pushes
            if sum(1 for a in op.amounts if a > 0) > 1
            for p, a in enumerate(op.amounts)
            if a > 0
        ),
    )
    plan = plan_of(hand)
    if straddle:
        plan.straddle_seat = seat_of(2)  # pokerkit's player 2: left of the big blind
        plan.straddle = straddle
    trace = [*setup_events(hand), *TableDealer().play(plan)]
    return PhhCase(hand, straddle, "campione" if straddle else "tda-2019", trace)


def generate_cases(seed: int, count: int) -> list[PhhCase]:
    """`count` cases from one seed (deterministic)."""
    rng = random.Random(seed)
    return [generate_case(rng, i) for i in range(count)]


def run_engine(case: PhhCase) -> tuple[Engine, list[Message]]:
    """The case's trace through a fresh 9-seat engine of its profile."""
    engine = Engine(
        EngineSpec(table="t01", room="test", seats=9, profile=case.profile, odd_chip_unit=1)
    )
    out: list[Message] = []
    for event in case.trace:
        out.extend(engine.apply(event))
    return engine, out


__all__ = ["PhhCase", "generate_case", "generate_cases", "positions", "run_engine"]
