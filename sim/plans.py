"""Random but legal hands for the demo and tests: a shadow engine knows stacks and positions."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from controller.engine import Engine, hands
from controller.engine.cards import FULL_DECK
from controller.rules.betting import (
    BettingRound,
    house_raise_cap,
    limit_bet_size,
    street_order,
)
from kernel.inputs import ButtonPress, Event, TagIn
from sim.dealer import Decision, HandPlan, TableDealer


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


def legal(rnd: BettingRound, d: Decision) -> Decision:
    """The decision as the game allows it: a bet or raise held to the pot limit or the
    fixed-limit size (52-B: a push over the limit is read as the limit), an all-in past
    the limit made the largest raise the game allows."""
    seat = d.seat
    if d.kind in ("fold", "check", "call"):
        return d
    if d.kind == "allin" and rnd.can_all_in(seat):
        return d
    if not rnd.can_raise(seat):
        return Decision(seat, "call" if rnd.to_call(seat) else "check")
    top = rnd.max_raise_to(seat)
    total = top if d.kind == "allin" else max(min(d.total, top), rnd.min_raise_to(seat))
    if rnd.structure == "fl":
        total = rnd.min_raise_to(seat)  # fixed limit: one size only
    if total >= rnd.allin_total(seat):
        return Decision(seat, "allin")
    return Decision(seat, "raise" if rnd.current_bet else "bet", total)


#: The betting structure of each game (as the engine plays it), and the streets' names.
STRUCTURES = {"nlhe": "nl", "plhe": "pl", "flhe": "fl"}
STREETS = ("preflop", "flop", "turn", "river")

Decide = Callable[[random.Random, BettingRound, int, int], Decision]


def plan_betting(
    engine: Engine, stacks: dict[int, int], rng: random.Random, decide: Decide
) -> list[list[Decision]]:
    """Every decision of the hand `engine` has just started, street by street, each legal
    under the table's game and profile (the rules' own BettingRound, as the engine builds
    it: pot limit, fixed-limit sizes and cap)."""
    hand = engine.hand
    if hand is None:
        return []
    pos = hand.positions
    level = hand.level
    dealt = list(hand.dealt_in)
    structure = STRUCTURES.get(engine.spec.game, "nl")
    bb = max(level.big_blind, 1)
    behind = dict(stacks)
    posted: dict[int, int] = {}
    pot = 0
    for s in dealt:
        owed = (level.small_blind if s == pos.small_blind else 0) + (
            level.big_blind if s == pos.big_blind else 0
        )
        ante = level.ante if not level.bb_ante else (level.ante if s == pos.big_blind else 0)
        pay = min(owed + ante, behind[s])
        behind[s] -= pay
        posted[s] = max(0, pay - ante)
        pot += pay - posted[s]
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
            big_blind=bb,
            bets={s: posted[s] for s in order} if street == 0 else None,
            structure=structure,  # type: ignore[arg-type]
            pot=pot,
            blind_level=level.big_blind if street == 0 else 0,
            big_blind_seat=pos.big_blind if street == 0 else None,
            bet_unit=limit_bet_size(STREETS[street], bb) if structure == "fl" else None,  # type: ignore[arg-type]
            raise_cap=house_raise_cap(
                house_cap=engine.profile.limit_raise_cap, event_heads_up=level.event_heads_up
            ),
            cap_lifted_heads_up=engine.profile.limit_cap_lifted_heads_up_in_hand,
        )
        decisions: list[Decision] = []
        while rnd.to_act is not None:
            seat = rnd.to_act
            d = legal(rnd, decide(rng, rnd, seat, street))
            _apply(rnd, d)
            decisions.append(d)
        streets.append(decisions)
        pot += rnd.street_total
        posted = dict.fromkeys(dealt, 0)
        behind.update({s: rnd.behind[s] for s in order})
        live = [s for s in live if s not in rnd.folded]
    return streets


def plan_started(
    engine: Engine, rng: random.Random, lifted: tuple[int, str] | None, decide: Decide
) -> HandPlan | None:
    """The plan of the hand `engine` has just started (None: it started none): cards from a
    shuffled deck (`lifted`: the seat and card that started it, its first card), and every
    decision `decide` makes, each legal by the rules' own BettingRound."""
    hand = engine.hand
    if hand is None:
        return None
    pos = hand.positions
    level = hand.level
    dealt = list(hand.dealt_in)
    stacks = {s: engine.seats[s].stack for s in dealt}
    deck = [c for c in FULL_DECK if lifted is None or c != lifted[1]]
    rng.shuffle(deck)
    hole = {s: [deck.pop(), deck.pop()] for s in dealt}
    if lifted is not None and lifted[0] in hole:  # the card that started the hand is its first
        deck.append(hole[lifted[0]][0])
        hole[lifted[0]][0] = lifted[1]
    board = [deck.pop() for _ in range(5)]
    burns = [deck.pop() for _ in range(3)]
    return HandPlan(
        dealt_in=dealt,
        button=pos.button,
        small_blind_seat=pos.small_blind,
        big_blind_seat=pos.big_blind,
        blinds=(level.small_blind, level.big_blind, level.ante),
        stacks=stacks,
        hole=hole,
        board=board,
        burns=burns,
        streets=plan_betting(engine, stacks, rng, decide),
        bb_ante=level.bb_ante,
    )


def random_hand(engine: Engine, dealer: TableDealer, rng: random.Random) -> list[Event]:
    """The physical events of one random hand at the engine's table (not applied)."""
    shadow = copy.deepcopy(engine, {id(engine.profile): engine.profile})  # profiles are read-only
    lifted: tuple[int, str] | None = None
    if "shuffler" in engine.profile.hand_start_triggers:
        shadow.apply(ButtonPress(dealer.clock.t, "shuffler"))
    else:  # the house starts the hand as the cards are lifted: the first card at a seat
        lifted = first_card_seat(shadow, rng)
        if lifted is None:
            return []
        shadow.apply(TagIn(dealer.clock.t, f"seat{lifted[0]}", card=lifted[1]))
    plan = plan_started(shadow, rng, lifted, _decide)
    if plan is None:
        return []
    events = dealer.play(plan)
    if lifted is None:
        return events
    # No shuffler button: the lifted card starts the hand, then the blinds, then the rest.
    seat, card = lifted
    first = TagIn(events[0].t, f"seat{seat}", card=card)
    rest = [
        e
        for e in events[1:]
        if not (isinstance(e, TagIn) and e.antenna == f"seat{seat}" and e.card == card)
    ]
    return [first, *rest]


def first_card_seat(engine: Engine, rng: random.Random) -> tuple[int, str] | None:
    """Under a house whose hand starts when the dealer lifts the cards (no shuffler button,
    e.g. casinos-austria): the seat the first card goes to (the first dealt in left of the
    button, as the table will start the hand; heads-up the big blind, rule 34), and a card."""
    shadow = copy.deepcopy(engine, {id(engine.profile): engine.profile})
    hands.start_hand(shadow, "first_card")
    hand = shadow.hand
    if hand is None:
        return None
    dealt = sorted(hand.dealt_in)
    button = hand.positions.button
    seat = next((s for s in dealt if s > button), dealt[0])
    if len(dealt) == 2:
        seat = hand.positions.big_blind
    return seat, rng.choice(FULL_DECK)
