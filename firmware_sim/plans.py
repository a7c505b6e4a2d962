"""Random but legal hands for the demo and tests: a shadow engine knows stacks and positions."""

from __future__ import annotations

import copy
import random

from controller.engine import Engine
from controller.engine.cards import FULL_DECK
from controller.inputs import ButtonPress, Event
from controller.rules.betting import BettingRound, street_order
from firmware_sim.dealer import Decision, HandPlan, TableDealer


def _decide(rng: random.Random, rnd: BettingRound, seat: int, street: int) -> Decision:
    """A plausible decision: mostly check/call, sometimes fold, bet, raise or all-in."""
    roll = rng.random()
    to_call = rnd.to_call(seat)
    if to_call == 0:
        if roll < 0.25 and rnd.can_raise(seat) and rnd.behind[seat] > 0:
            total = rnd.min_raise_to(seat) if rnd.current_bet else rnd.big_blind * rng.randint(1, 3)
            total = min(total, rnd.allin_total(seat))
            if total == rnd.allin_total(seat):
                return Decision(seat, "allin")
            return Decision(seat, "raise" if rnd.current_bet else "bet", total)
        return Decision(seat, "check")
    expensive = to_call * 3 > rnd.behind[seat]  # a third of the stack or more to call
    if roll < (0.7 if expensive else 0.2 + 0.05 * street):
        return Decision(seat, "fold")
    if roll > 0.93 and rnd.can_raise(seat):
        target = rnd.min_raise_to(seat)
        if target >= rnd.allin_total(seat) or roll > 0.985:
            return Decision(seat, "allin")
        return Decision(seat, "raise", target)
    return Decision(seat, "call")


def _apply(rnd: BettingRound, d: Decision) -> None:
    if d.kind == "fold":
        rnd.fold(d.seat)
    elif d.kind == "check":
        rnd.check(d.seat)
    elif d.kind == "call":
        rnd.call(d.seat)
    elif d.kind == "allin":
        rnd.all_in(d.seat)
    else:
        rnd.bet_or_raise_to(d.seat, d.total)


def random_hand(engine: Engine, dealer: TableDealer, rng: random.Random) -> list[Event]:
    """The physical events of one random hand at the engine's table (not applied)."""
    shadow = copy.deepcopy(engine, {id(engine.profile): engine.profile})  # profiles are read-only
    shadow.apply(ButtonPress(dealer.clock.t, "shuffler"))
    hand = shadow.hand
    if hand is None:
        return []
    pos = hand.positions
    level = hand.level
    dealt = list(hand.dealt_in)
    stacks = {s: shadow.seats[s].stack for s in dealt}
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole = {s: [deck.pop(), deck.pop()] for s in dealt}
    board = [deck.pop() for _ in range(5)]
    burns = [deck.pop() for _ in range(3)]
    # Decide the betting with the rules' own BettingRound, so every decision is legal.
    behind = dict(stacks)
    posted: dict[int, int] = {}
    for s in dealt:
        owed = (level.small_blind if s == pos.small_blind else 0) + (
            level.big_blind if s == pos.big_blind else 0
        )
        ante = level.ante if not level.bb_ante else (level.ante if s == pos.big_blind else 0)
        pay = min(owed + ante, behind[s])
        behind[s] -= pay
        posted[s] = max(0, pay - ante)
    live = list(dealt)
    streets: list[list[Decision]] = []
    for street in range(4):
        with_chips = [s for s in live if behind[s] > 0]
        if len(live) < 2 or (street > 0 and len(with_chips) < 2):
            break
        order = street_order(
            live, button=pos.button, big_blind_seat=pos.big_blind, preflop=street == 0
        )
        rnd = BettingRound(
            order=order,
            stacks={s: behind[s] for s in order},
            big_blind=max(level.big_blind, 1),
            bets={s: posted[s] for s in order} if street == 0 else None,
            blind_level=level.big_blind if street == 0 else 0,
            big_blind_seat=pos.big_blind if street == 0 else None,
        )
        decisions: list[Decision] = []
        while rnd.to_act is not None:
            seat = rnd.to_act
            d = _decide(rng, rnd, seat, street)
            _apply(rnd, d)
            decisions.append(d)
        streets.append(decisions)
        behind.update({s: rnd.behind[s] for s in order})
        live = [s for s in live if s not in rnd.folded]
    plan = HandPlan(
        dealt_in=dealt,
        button=pos.button,
        small_blind_seat=pos.small_blind,
        big_blind_seat=pos.big_blind,
        blinds=(level.small_blind, level.big_blind, level.ante),
        stacks=stacks,
        hole=hole,
        board=board,
        burns=burns,
        streets=streets,
        bb_ante=level.bb_ante,
    )
    return dealer.play(plan)
