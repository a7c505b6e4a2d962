"""Odd chips (TDA 2019 rule 20-A) and side pots (rule 21), checked against the rules directly
with the button on every seat.

Rule 20-A: "Board games with 2 or more high or low hands: the odd chip goes to the first
seat left of the button" (one chip each, in turn, when there are several); rule 21: "Each
side pot will be split separately". The pokerkit comparison (tests/unit/test_oracle.py) cannot
see where odd chips go: its button is always on the highest seat, and pokerkit gives a
split's remainder to its lowest player index. Here every player goes all-in before the
flop with stacks chosen to leave odd chips in every pot, on a board where several hands tie
exactly; the engine's `pot_awarded` events must be the pots, winners and shares computed in
this file from the rules (contributions, levels, pokerkit's hand ranking, the button's
position), for buttons on each of the nine seats, heads-up and up to eight players. Every
hand is also exported to PHH and judged strictly by pokerkit (tests/money_judge.py), its
odd chips the judge's one named allowance.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from pokerkit import StandardHighHand

from controller.engine import Engine, EngineSpec
from kernel.inputs import ButtonPress, Command, Event
from kernel.messages import Message
from sim.dealer import Decision, HandPlan, TableDealer
from tests.money_judge import judge_completed_hands, pairs

BOARD = ["Kd", "9s", "8h", "3d", "2c"]  # no straight, no flush, nothing paired by the holes
BURNS = ["2d", "3c", "4d"]
#: Hole cards that tie exactly (ace-queen high, four suits) and ones that lose to them
#: (no pair, straight or flush with the board; distinct from each other).
TIED = [["As", "Qc"], ["Ah", "Qd"], ["Ac", "Qh"], ["Ad", "Qs"]]
BEATEN = [["Jc", "Th"], ["Js", "7c"], ["Tc", "7h"], ["6c", "5h"], ["4h", "5s"], ["Jh", "6d"]]
BLINDS = (50, 100)


def left_of_button(seats: Sequence[int], button: int) -> list[int]:
    """The seats clockwise (increasing numbers, wrapping) from the first one left of the
    button: 20-A's order, the button last."""
    ordered = sorted(seats)
    after = [s for s in ordered if s > button]
    return after + [s for s in ordered if s <= button]


def split_20a(
    amount: int, winners: Sequence[int], seats: Sequence[int], button: int
) -> dict[int, int]:
    """Rule 20-A with single chips: equal shares, then the odd chips one each to the
    winners in turn from the first seat left of the button."""
    order = [s for s in left_of_button(seats, button) if s in winners]
    each, odd = divmod(amount, len(order))
    return {seat: each + (1 if i < odd else 0) for i, seat in enumerate(order)}


@dataclass(frozen=True)
class Pot:
    index: int
    amount: int
    winners: tuple[int, ...]
    shares: dict[int, int]


def expected_pots(stacks: dict[int, int], hole: dict[int, list[str]], button: int) -> list[Pot]:
    """Everyone all-in: the uncalled excess of the biggest stack goes back (15-B), a pot
    per all-in level (21), each to its best hand(s) among those in it (pokerkit's ranking),
    split by 20-A."""
    levels = sorted(set(stacks.values()))
    if len(levels) > 1 and sorted(stacks.values())[-2] < levels[-1]:
        levels = levels[:-1]  # the biggest stack's excess is not called
    rank = {s: StandardHighHand.from_game("".join(hole[s]), "".join(BOARD)) for s in stacks}
    pots: list[Pot] = []
    previous = 0
    for index, level in enumerate(levels):
        amount = sum(min(c, level) - min(c, previous) for c in stacks.values())
        eligible = [s for s, c in stacks.items() if c >= level]
        best = max(rank[s] for s in eligible)
        winners = tuple(s for s in left_of_button(eligible, button) if rank[s] == best)
        pots.append(Pot(index, amount, winners, split_20a(amount, winners, list(stacks), button)))
        previous = level
    return pots


def positions(seats: Sequence[int], button: int) -> tuple[int, int]:
    """(small blind, big blind) seats for a button on `button` (heads-up: the button posts
    the small blind, rule 34)."""
    order = left_of_button(seats, button)
    if len(seats) == 2:
        return button, order[0]
    return order[0], order[1]


def play(
    seats: Sequence[int], button: int, stacks: dict[int, int], hole: dict[int, list[str]]
) -> list[Message]:
    """The hand through a fresh engine (single chips: `odd_chip_unit` 1), every player
    going all-in in turn before the flop; every message the engine published."""
    engine = Engine(EngineSpec(table="t01", room="test", seats=9, odd_chip_unit=1))
    setup: list[Event] = [
        Command(0.0, "seat", {"seat": s, "player": f"P{s}", "stack": stacks[s]}) for s in seats
    ]
    setup.append(
        Command(0.0, "level", {"small_blind": BLINDS[0], "big_blind": BLINDS[1], "ante": 0})
    )
    setup.append(Command(0.0, "button", {"seat": button}))
    small, big = positions(seats, button)
    first = left_of_button(seats, big)
    preflop = first if len(seats) > 2 else [small, big]
    plan = HandPlan(
        dealt_in=sorted(seats),
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        blinds=(*BLINDS, 0),
        stacks=dict(stacks),
        hole=hole,
        board=BOARD,
        burns=BURNS,
        streets=[[Decision(s, "allin") for s in preflop]],
    )
    out: list[Message] = []
    for event in [*setup, *TableDealer().play(plan)]:
        out.extend(engine.apply(event))
    out.extend(engine.apply(ButtonPress(10_000.0, "check")))  # nothing pending: no effect
    return out


def events(out: list[Message], kind: str) -> list[dict[str, Any]]:
    return [m.payload for m in out if m.topic == "events" and m.payload["type"] == kind]


def random_deal(
    rng: random.Random, players: int, button_seat: int
) -> tuple[list[int], dict[int, int], dict[int, list[str]]]:
    """Seats (the button's among them), stacks with odd amounts, hole cards: 2..4 tied
    hands, the others beaten."""
    others = rng.sample([s for s in range(1, 10) if s != button_seat], players - 1)
    seats = sorted([button_seat, *others])
    tied = rng.randint(2, min(4, players))
    holders = rng.sample(seats, tied)
    tied_cards = iter(rng.sample(TIED, tied))
    beaten_cards = iter(rng.sample(BEATEN, players - tied))
    hole = {s: next(tied_cards) if s in holders else next(beaten_cards) for s in seats}
    stacks = {s: rng.randint(301, 3001) for s in seats}
    return seats, stacks, hole


@pytest.mark.parametrize("button", range(1, 10))
def test_rule_20A_odd_chips_go_left_of_the_button_on_every_seat(button: int) -> None:
    rng = random.Random(2000 + button)
    odd_pots = wrapped = side_pots = judged = 0
    for _ in range(30):
        players = rng.randint(2, 8)
        seats, stacks, hole = random_deal(rng, players, button)
        out = play(seats, button, stacks, hole)
        # pokerkit replays the hand strictly: the same pots and stacks but for where the
        # odd chips go (its own way, not 20-A's: the judge's named allowance)
        (verdict,) = judge_completed_hands(pairs(out))
        judged += ": judged " in verdict
        started = events(out, "hand_started")
        assert [e["button"] for e in started] == [button]
        want = expected_pots(stacks, hole, button)
        got = {
            e["pot"]: Pot(
                e["pot"],
                e["amount"],
                tuple(e["winners"]),
                {int(k): v for k, v in e["shares"].items()},
            )
            for e in events(out, "pot_awarded")
        }
        assert got == {p.index: p for p in want}, (
            f"button {button}, seats {seats}, stacks {stacks}, hole {hole}"
        )
        completed = events(out, "hand_completed")
        assert sum(completed[-1]["stacks"].values()) == sum(stacks.values())
        for pot in want:
            if pot.amount % len(pot.winners):
                odd_pots += 1
                # in seat-number order the odd chip would go elsewhere
                wrapped += pot.winners[0] != min(pot.winners)
            side_pots += pot.index > 0
    # The deals really put odd chips where the button's position decides who gets them
    # (with the button on seat 9, left of it is seat 1: the two orders agree).
    assert odd_pots >= 10 and side_pots >= 10, (odd_pots, side_pots)
    assert wrapped >= (0 if button == 9 else 3), wrapped
    assert judged == 30


def test_rule_21_each_side_pot_is_split_on_its_own_with_its_own_odd_chips() -> None:
    """Button on 5: left of it come 7, 9, 2. Seats 7, 9 and 2 tie; 5 loses."""
    seats, button = [2, 5, 7, 9], 5
    stacks = {2: 1001, 9: 1500, 7: 2002, 5: 2002}
    hole = {2: TIED[0], 9: TIED[1], 7: TIED[2], 5: BEATEN[0]}
    out = play(seats, button, stacks, hole)
    pots = {e["pot"]: (e["amount"], e["winners"], e["shares"]) for e in events(out, "pot_awarded")}
    assert pots == {
        # 4 x 1001 three ways: 1334 each, the two odd chips to 7 then 9
        0: (4004, [7, 9, 2], {"7": 1335, "9": 1335, "2": 1334}),
        # 3 x 499 (5, 7 and 9 are in it) two ways: the odd chip to 7
        1: (1497, [7, 9], {"7": 749, "9": 748}),
        # 2 x 502: 7 alone beats 5
        2: (1004, [7], {"7": 1004}),
    }
    assert events(out, "hand_completed")[-1]["stacks"] == {"2": 1334, "5": 0, "7": 3088, "9": 2083}
