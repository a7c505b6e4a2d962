"""Writes the dealing-error scenario traces (TDA 35-39, RP-5, rule 23, house profiles).

Run from the repository root: `python tests/scenarios/build_dealing.py`, then
`python tests/scenarios/build_dealing.py --expected` to replay them into their
`.expected.jsonl` files (read those before committing them). Each scenario is a trace
with the dealing error and its remedy, and a `.clean.jsonl` trace that deals the same
cards without the error; `tests/scenarios/test_dealing_scenarios.py` checks the events and rule
citations named in the `# expect:` lines, and that both traces end in the same state.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

MARIA = "04A1B2C3D4E5F6"  # dealer in examples/staff/sim-staff.toml
NAME = {"name": "Maria Rossi"}
LUCA = "04B2C3D4E5F607"  # dealer
GIULIA = "04F1E2D3C4B5A6"  # floor

HOLE = {1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"], 4: ["7h", "2c"]}
REDEAL = {1: ["As", "Ks"], 2: ["Qc", "Jc"], 3: ["8s", "8c"], 4: ["6h", "3d"]}
FLOP = ["Td", "5s", "4c"]
HOLE6 = {**HOLE, 5: ["5h", "6d"], 6: ["Tc", "Th"]}  # six seats, the button on seat 6
FOREIGN = "04EEEEEEEEEEEE"  # a tag in no registry: a foreign card (35-E)


class Trace:
    """A trace under construction: time moves on by itself, cards are tracked."""

    def __init__(
        self,
        title: str,
        *,
        players: int = 4,
        button: int = 4,
        blinds: tuple[int, int, int] = (50, 100, 0),
        profile: str | None = None,
        game: str | None = None,
    ) -> None:
        self.header = [f"# {title}"]
        if profile:
            self.header.append(f"# profile: {profile}")
        if game:
            self.header.append(f"# game: {game}")
        self.lines: list[dict[str, Any]] = []
        self.t = 0.0
        self.chip = 0
        self.where: dict[str, str] = {}
        self.pushed: dict[int, list[tuple[str, int]]] = {}  # seat -> its last push's chips
        for seat in range(1, players + 1):
            self.cmd("seat", dt=0, seat=seat, player=f"P{seat}", stack=10_000)
        sb, bb, ante = blinds
        self.cmd("level", dt=0, small_blind=sb, big_blind=bb, ante=ante)
        self.cmd("button", dt=0, seat=button)
        self.button_seat = button
        self.players = players

    def expect(self, **fields: Any) -> Trace:
        self.header.append("# expect: " + json.dumps(fields))
        return self

    def add(self, dt: float = 0.1, **event: Any) -> Trace:
        self.t = round(self.t + dt, 3)
        self.lines.append({"t": self.t, **event})
        return self

    def cmd(self, name: str, dt: float = 0.1, **fields: Any) -> Trace:
        return self.add(dt, event="command", name=name, **fields)

    def press(self, name: str, **fields: Any) -> Trace:
        return self.add(event="button", name=name, **fields)

    def badge(self, uid: str) -> Trace:
        return self.add(event="badge", uid=uid)

    def shuffler(self) -> Trace:
        return self.press("shuffler")

    def push(self, seat: int, *values: int) -> Trace:
        self.pushed[seat] = []
        for value in values:
            self.chip += 1
            chip = f"c{self.chip:04d}"
            self.pushed[seat].append((chip, value))
            self.add(0.05, event="tag_in", antenna=f"bet{seat}", chip=chip, value=value)
        return self.add(1.1, event="tick")

    def take_back(self, seat: int) -> Trace:
        """The chips of the seat's last push leave its bet zone."""
        for chip, value in self.pushed.pop(seat):
            self.add(0.05, event="tag_out", antenna=f"bet{seat}", chip=chip, value=value)
        return self

    def blinds(self, sb: int = 1, bb: int = 2) -> Trace:
        return self.push(sb, 25, 25).push(bb, 100)

    def card(self, antenna: str, card: str) -> Trace:
        self.where[card] = antenna
        return self.add(0.05, event="tag_in", antenna=antenna, card=card)

    def off(self, card: str) -> Trace:
        antenna = self.where.pop(card)
        return self.add(0.05, event="tag_out", antenna=antenna, card=card)

    def move(self, card: str, antenna: str) -> Trace:
        return self.off(card).card(antenna, card)

    def deal(
        self, hole: dict[int, list[str]], *, skip: tuple[int, ...] = (), button: int = 0
    ) -> Trace:
        """One card at a time, from the seat left of the button."""
        button = button or self.button_seat
        seats = sorted(hole, key=lambda s: (s <= button, s))
        for i in range(2):
            for seat in seats:
                if seat in skip:
                    continue
                for c in hole[seat][i : i + 1]:
                    self.card(f"seat{seat}", c)
        return self

    def collect(self) -> Trace:
        """Every card on the table goes back to the dealer (a misdeal)."""
        for card, antenna in list(self.where.items()):
            if antenna != "muck":
                self.off(card)
        return self

    def fold(self, seat: int) -> Trace:
        for card, antenna in list(self.where.items()):
            if antenna == f"seat{seat}":
                self.move(card, "muck")
        return self

    def street(self, cards: list[str], burn: str | None) -> Trace:
        if burn is not None:
            self.card("burn", burn)
        for c in cards:
            self.card("board", c)
        return self

    def preflop_calls(self) -> Trace:
        """Seat 3 calls, the button calls, the small blind completes, the big blind checks."""
        return self.push(3, 100).push(4, 100).push(1, 50).press("check")

    def checks(self, n: int = 4) -> Trace:
        for _ in range(n):
            self.press("check")
        return self

    def then(self, steps: Callable[[Trace], Trace]) -> Trace:
        """Shared steps, in the middle of a chain."""
        return steps(self)

    def write(self, name: str) -> None:
        path = HERE / f"{name}.jsonl"
        body = [json.dumps(line) for line in self.lines]
        path.write_text("\n".join([*self.header, *body]) + "\n")


def pair(
    name: str,
    title: str,
    error: Callable[[Trace], Trace],
    clean: Callable[[Trace], Trace] | None,
    muck_differs: list[str] | None = None,
    **kw: Any,
) -> None:
    """Write NAME.jsonl (the error and its remedy) and NAME.clean.jsonl (a clean deal).

    `muck_differs` names the cards that are in only one of the two mucks at the end,
    because the error itself put them there or kept them in the stub (rules 37, 38: a
    dead hand's missing or extra card); every other card must end in the same place.
    """
    trace = Trace(title, **kw)
    error(trace)
    if clean is not None:
        trace.header.append(f"# clean: {name}.clean.jsonl")
    if muck_differs is not None:
        trace.header.append(f"# clean-muck-differs: {json.dumps(sorted(muck_differs))}")
    trace.write(name)
    if clean is None:
        return
    reference = Trace(f"Clean deal of the same cards as {name}.jsonl", **kw)
    clean(reference)
    reference.write(f"{name}.clean")


def _clean_redeal(t: Trace) -> Trace:
    return t.shuffler().blinds().deal(REDEAL).preflop_calls().street(FLOP, "2d")


def _clean(t: Trace) -> Trace:
    return t.shuffler().blinds().deal(HOLE).preflop_calls().street(FLOP, "2d")


def _four_card_flop_floor_here(t: Trace) -> Trace:
    """A hand to the flop, dealt with a fourth card (39); the floor's badge read."""
    t.shuffler().blinds().deal(HOLE).preflop_calls()
    return t.street([*FLOP, "Kc"], "2d").badge(GIULIA)


def _redeal_after(t: Trace) -> Trace:
    return t.collect().deal(REDEAL).preflop_calls().street(FLOP, "2d")


def _35e_next_hand(t: Trace) -> Trace:
    """Hand 2 after the fouled (or abandoned) hand 1: button on seat 1."""
    hole = {2: HOLE[1], 3: HOLE[2], 4: HOLE[3], 1: HOLE[4]}
    return t.shuffler().blinds(2, 3).deal(hole, button=1)


def _35c_next_hand(t: Trace) -> Trace:
    """Rule 35-C's hand 1 checked down to the showdown, then hand 2 dealt (100-200)."""
    t.street(FLOP, "2d").checks(3).street(["Qh"], "3h").checks(3).street(["8d"], "4h").checks(3)
    t.collect().shuffler()
    t.button_seat = 1
    return t.push(2, 100).push(3, 200).deal(
        {2: ["Ac", "Kc"], 3: ["Qs", "Js"], 4: ["Tc", "Ts"], 5: ["9h", "9d"], 1: ["7d", "2s"]},
        button=1,
    )


def build() -> None:
    # ---------------------------------------------------------------- rule 35 A
    pair(
        "rule_35A1_boxed_cards",
        "Rule 35-A-1: the dealer declares two boxed cards on the initial deal: misdeal, re-deal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="boxed_cards", rule="35A-1")
            .expect(type="procedure_completed", procedure="misdeal", rule="35C")
            .shuffler()
            .blinds()
            .deal({1: ["Ah"], 2: ["Qd"], 3: ["9s"]})
            .press("boxed")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35A2_first_card_wrong_seat",
        "Rule 35-A-2: the first card goes to seat 2, not seat 1 (left of the button): misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="first_card_wrong_seat", rule="35A-2", seat=2)
            .expect(type="procedure_completed", procedure="misdeal")
            .shuffler()
            .blinds()
            .card("seat2", "Ah")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35A3_card_to_seat_not_entitled",
        "Rule 35-A-3: a card is dealt to empty seat 6: misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="card_to_seat_not_entitled", rule="35A-3", seat=6)
            .shuffler()
            .blinds()
            .card("seat1", "Ah")
            .card("seat6", "Kh")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35A4_seat_dealt_out",
        "Rule 35-A-4: seat 3 is dealt no card; found at the first action: misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="seat_dealt_out", rule="35A-4", seats=[3])
            .shuffler()
            .blinds()
            .deal(HOLE, skip=(3,))
            .push(3, 100)
        ),
        _clean_redeal,
    )
    pair(
        "rule_35A5_first_card_exposed",
        "Rule 35-A-5: one of the first two cards off the deck is exposed: misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="exposed_card", rule="35A-5", card_index=1)
            .shuffler()
            .blinds()
            .card("seat1", "Ah")
            .press("exposed")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35A5_two_downcards_exposed",
        "Rule 35-A-5: two downcards (neither of the first two) exposed: misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="exposed_card", rule="35A-5", exposed=2)
            .shuffler()
            .blinds()
            .card("seat1", "Ah")
            .card("seat2", "Qd")
            .card("seat3", "9s")
            .press("exposed")
            .card("seat4", "7h")
            .press("exposed")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35A_too_many_cards",
        "Rule 35-A: seat 2 is dealt a third card on the initial deal: misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="too_many_cards", rule="35A", seat=2)
            .shuffler()
            .blinds()
            .deal(HOLE)
            .card("seat2", "3h")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35B_two_consecutive_cards_to_the_button",
        "Rule 35-B: the button is skipped in the first round and gets two cards in a row.",
        lambda t: (
            t.expect(type="board_dealt", street="flop")
            .shuffler()
            .blinds()
            .card("seat1", "Ah")
            .card("seat2", "Qd")
            .card("seat3", "9s")
            .card("seat1", "Kh")
            .card("seat2", "Jd")
            .card("seat3", "9c")
            .card("seat4", "7h")
            .card("seat4", "2c")
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        _clean,
    )
    pair(
        "rule_35C_redeal_is_an_exact_replay",
        "Rule 35-C: after a misdeal the button stays, the announced level waits, the player "
        "seated meanwhile is not dealt in, the player on penalty is dealt in and killed (71-C) "
        "and the misdeal and re-deal are one hand: hand 1 is played out, and the penalty of "
        "two hands still kills seat 4 in hand 2 (a misdeal counted as a hand would have "
        "ended it).",
        lambda t: _35c_next_hand(
            t.expect(type="misdeal", reason="declared", hand=1)
            .expect(type="procedure_completed", procedure="misdeal", hand=1)
            .expect(type="hand_killed", seat=4, rule="71C", hand=1)
            .expect(type="hand_completed", hand=1)
            .expect(type="hand_started", hand=2, big_blind=200, button=1)
            .expect(type="hand_killed", seat=4, rule="71C", hand=2)
            .cmd("penalty", seat=4, hands=2)
            .shuffler()
            .blinds()
            .deal({1: ["Ah"], 2: ["Qd"]})
            .cmd("level", small_blind=100, big_blind=200, ante=0)
            .cmd("seat", seat=5, player="Late", stack=10_000)
            .press("misdeal")
            .collect()
            .deal(REDEAL)
            .push(3, 100)
            .push(1, 50)
            .press("check")
        ),
        lambda t: _35c_next_hand(
            t.expect(type="hand_killed", seat=4, rule="71C")
            .cmd("penalty", seat=4, hands=2)
            .shuffler()
            .blinds()
            .cmd("level", small_blind=100, big_blind=200, ante=0)
            .cmd("seat", seat=5, player="Late", stack=10_000)
            .deal(REDEAL)
            .push(3, 100)
            .push(1, 50)
            .press("check")
        ),
    )
    pair(
        "rule_35C_absent_player_dealt_in_and_killed_on_the_redeal",
        "Rules 35-C and 30: seat 3 is away for the original deal; a misdeal; the player is "
        "back before the re-deal, but cards are dealt to the seat and the hand is killed.",
        lambda t: (
            t.expect(type="misdeal", reason="declared")
            .expect(type="procedure_completed", procedure="misdeal", outcome="redealt")
            .expect(type="hand_killed", seat=3, rule="30")
            .expect(type="action", seat=4, action="call")
            .cmd("away", seat=3)
            .shuffler()
            .blinds()
            .deal({1: ["Ah"], 2: ["Qd"], 3: ["9s"]})
            .press("misdeal")
            .cmd("away", seat=3, away=False)
            .collect()
            .deal(REDEAL)
            .push(4, 100)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.cmd("away", seat=3)
            .shuffler()
            .blinds()
            .deal(REDEAL)
            .cmd("away", seat=3, away=False)
            .push(4, 100)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
    )
    pair(
        "rule_35C_chips_pushed_before_the_redeal_are_no_action",
        "Rule 35-C: after a misdeal, while the cards are collected, seat 3 pushes 300 and seat "
        "4 pushes 300: no action, the chips stay theirs (handed back, seat 4's only after the "
        "re-deal began); the re-deal starts from the blinds exactly as before.",
        lambda t: (
            t.expect(type="misdeal", reason="declared")
            .expect(type="chips_before_redeal", seat=3, rule="35C")
            .expect(type="chips_before_redeal", seat=4, rule="35C")
            .expect(type="procedure_completed", procedure="misdeal", outcome="redealt")
            .expect(type="action", seat=3, action="call", amount=100)
            .expect(type="board_dealt", street="flop")
            .shuffler()
            .blinds()
            .deal({1: ["Ah"], 2: ["Qd"], 3: ["9s"]})
            .press("misdeal")
            .push(3, 300)
            .push(4, 300)
            .take_back(3)
            .collect()
            .deal({1: ["As"], 2: ["Qc"]})
            .take_back(4)
            .deal({3: ["8s"], 4: ["6h"]})
            .deal({1: ["Ks"], 2: ["Jc"], 3: ["8c"], 4: ["3d"]})
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35D_no_misdeal_after_substantial_action",
        "Rule 35-D: a misdeal declared after substantial action (rule 36) is refused.",
        lambda t: (
            t.expect(type="misdeal_refused", rule="35D")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .push(3, 100)
            .push(4, 100)
            .press("misdeal")
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        _clean,
    )
    pair(
        "rule_35D_floor_overrides_after_substantial_action",
        "Rule 35-D: after substantial action only the floor, badge read, can rule a misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal_refused", rule="35D")
            .expect(type="floor_arrived")
            .expect(type="misdeal", reason="floor_ruling", rule="35D")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .push(3, 100)
            .push(4, 100)
            .press("misdeal")
            .badge(GIULIA)
            .press("misdeal")
        ),
        _clean_redeal,
    )
    pair(
        "rule_35E_fouled_deck_returns_every_bet",
        "Rule 35-E: after substantial action a foreign card comes on the flop: play stops, "
        "every bet goes back (regardless of SA), the next hand waits until the floor releases "
        "the table. The clean twin plays hand 1 the same way with a real card and abandons it "
        "(rule 1: every chip goes back); both then deal hand 2: equal states show that 35-E "
        "returned every chip and the table goes on as after a hand with no result.",
        lambda t: _35e_next_hand(
            t.expect(type="fouled_deck", reason="foreign_card", rule="35E")
            .expect(
                type="bets_returned", rule="35E", refunds={"1": 100, "2": 100, "3": 100, "4": 100}
            )
            .expect(type="hand_completed", hand=1)
            .expect(type="table_held", held=["fouled_deck"])
            .expect(type="floor_ruling", released=["fouled_deck"])
            .expect(type="hand_started", hand=2, button=1)
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP[:2], "2d")
            .add(event="tag_in", antenna="board", uid=FOREIGN)
            .collect()
            .add(event="tag_out", antenna="board", uid=FOREIGN)
            .shuffler()
            .badge(GIULIA)
            .press("floor")
        ),
        lambda t: _35e_next_hand(
            t.shuffler().blinds().deal(HOLE).preflop_calls().street(FLOP, "2d").collect()
        ),
    )
    # ---------------------------------------------------------------- rules 37, 38
    pair(
        "rule_37_button_short_card_replaced",
        "Rule 37: the button (seat 6) is dealt one card; seats 3 and 4 call (substantial "
        "action, the deal is over): the button is short; it gets the missing card from the "
        "stub before it acts: the hand is live.",
        lambda t: (
            t.expect(type="procedure_required", procedure="button_short", rule="37", floor=False)
            .expect(
                type="procedure_completed",
                procedure="button_short",
                rule="37",
                outcome="replaced",
                seat=6,
            )
            .expect(type="action", seat=6, action="call", amount=100)
            .expect(type="board_dealt", street="flop")
            .shuffler()
            .blinds()
            .deal({**HOLE6, 6: ["Tc"]})
            .push(3, 100)
            .push(4, 100)
            .card("seat6", "Th")
            .fold(5)
            .push(6, 100)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.shuffler()
            .blinds()
            .deal(HOLE6)
            .push(3, 100)
            .push(4, 100)
            .fold(5)
            .push(6, 100)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        players=6,
        button=6,
    )
    pair(
        "rule_37_button_acted_with_too_few_cards",
        "Rule 37: the button acts with one card: its hand is dead.",
        lambda t: (
            t.expect(type="hand_killed", seat=4, rule="37")
            .shuffler()
            .blinds()
            .deal(HOLE, skip=(4,))
            .card("seat4", "7h")
            .push(3, 100)
            .push(4, 100)
            .fold(4)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.shuffler()
            .blinds()
            .deal(HOLE)
            .push(3, 100)
            .push(4, 100)
            .fold(4)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        muck_differs=["2c"],  # the button was never dealt its second card
    )
    pair(
        "rule_38_example_1A_one_card_hand_dead_one_burn",
        "Rule 38, addendum example 1-A (50-100, SB/BB seats 1-2): seat 3 folds, seat 4 calls, "
        "seat 5 has one card: dead; one burn, then the flop.",
        lambda t: (
            t.expect(type="hand_killed", seat=5, rule="38")
            .expect(type="procedure_completed", procedure="dead_hand", rule="38")
            .shuffler()
            .blinds()
            .deal({**HOLE, 5: ["5h"], 6: ["Tc", "Th"]})
            .fold(3)
            .push(4, 100)
            .fold(5)
            .fold(6)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.shuffler()
            .blinds()
            .deal({**HOLE, 5: ["5h", "6d"], 6: ["Tc", "Th"]})
            .fold(3)
            .push(4, 100)
            .fold(5)
            .fold(6)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        players=6,
        muck_differs=["6d"],  # seat 5 was never dealt its second card
        button=6,
    )
    pair(
        "rule_38_example_1B_three_cards_hand_dead_one_burn",
        "Rule 38, addendum example 1-B: seat 5 has three cards after substantial action: dead; "
        "the third card is not the burn: one burn off the stub, then the flop.",
        lambda t: (
            t.expect(type="hand_killed", seat=5, rule="38")
            .expect(type="procedure_completed", procedure="dead_hand", rule="38")
            .shuffler()
            .blinds()
            .deal({**HOLE, 5: ["5h", "6d"], 6: ["Tc", "Th"]})
            .fold(3)
            .push(4, 100)
            .card("seat5", "3h")
            .fold(5)
            .fold(6)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.shuffler()
            .blinds()
            .deal({**HOLE, 5: ["5h", "6d"], 6: ["Tc", "Th"]})
            .fold(3)
            .push(4, 100)
            .fold(5)
            .fold(6)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        players=6,
        muck_differs=["3h"],  # seat 5's third card, mucked with its dead hand
        button=6,
    )
    pair(
        "rule_38_example_1A_two_burns_is_a_violation",
        "Rule 38, addendum example 1-A: seat 5's one-card hand is dead; the dealer burns two "
        "cards before the flop: 'one and only one card is burned': procedure violation.",
        lambda t: (
            t.expect(type="hand_killed", seat=5, rule="38")
            .expect(
                type="procedure_violation",
                procedure="dead_hand",
                rule="38",
                expected="the flop comes with one and only one burn",
            )
            .shuffler()
            .blinds()
            .deal({**HOLE, 5: ["5h"], 6: ["Tc", "Th"]})
            .fold(3)
            .push(4, 100)
            .fold(5)
            .fold(6)
            .push(1, 50)
            .press("check")
            .card("burn", "3d")
            .street(FLOP, "2d")
        ),
        None,
        players=6,
        button=6,
    )
    pair(
        "rule_38_example_1B_third_card_burned_is_a_violation",
        "Rule 38, addendum example 1-B: seat 5's three-card hand is dead; the dealer takes its "
        "third card as the burn ('will not consider Seat 5's third card as the burn'): "
        "procedure violation.",
        lambda t: (
            t.expect(type="hand_killed", seat=5, rule="38")
            .expect(
                type="procedure_violation",
                procedure="dead_hand",
                rule="38",
                expected="the killed hand's cards go to the muck, not to the burn (rule 38)",
            )
            .shuffler()
            .blinds()
            .deal(HOLE6)
            .fold(3)
            .push(4, 100)
            .card("seat5", "3h")
            .move("3h", "burn")
            .fold(5)
            .fold(6)
            .push(1, 50)
            .press("check")
            .street(FLOP, None)
        ),
        None,
        players=6,
        button=6,
    )
    pair(
        "rule_38_seat_dealt_out_after_substantial_action_hand_dead",
        "Rules 35-D and 38: seat 4 (not the button) is dealt no card; seat 3 calls and seat 4 "
        "puts in a call: substantial action, so no misdeal (35-D); the cardless hand is dead "
        "(38), its 100 stays in the pot, the action passes it, the flop comes with one burn.",
        lambda t: (
            t.expect(type="misdeal_refused", reason="seat_dealt_out", rule="35D")
            .expect(type="hand_killed", seat=4, rule="38")
            .expect(type="procedure_required", procedure="dead_hand", rule="38")
            .expect(type="action", seat=5, action="call", amount=100)
            .expect(type="board_dealt", street="flop")
            .expect(type="procedure_completed", procedure="dead_hand", rule="38")
            .shuffler()
            .blinds()
            .deal({s: c for s, c in HOLE6.items() if s != 4})
            .push(3, 100)
            .push(4, 100)
            .push(5, 100)
            .push(6, 100)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        None,
        players=6,
        button=6,
    )
    pair(
        "rule_53B_skipped_seat_floor_rules_on_the_hand",
        "Rule 53-B, addendum example 1 (100-200): seat 3 makes it 600; seat 4 is skipped when "
        "seat 5 calls 600 out of turn and seat 6 folds: substantial action out of turn, so both "
        "bind; the action backs up to seat 4 and the floor is called to rule on its hand "
        "(dead, non-aggressive action only, or all options); seat 4 calls, seat 5's call "
        "stands; the floor comes and rules.",
        lambda t: (
            t.expect(type="out_of_turn", seat=5, status="held", rule="53-A")
            .expect(type="out_of_turn", seat=6, action="fold", status="binding", rule="58")
            .expect(
                type="skipped_hand",
                seat=4,
                oot_seats=[5, 6],
                options=["hand_dead", "non_aggressive_only", "all_options"],
                rule="53-B",
            )
            .expect(type="procedure_required", procedure="skipped_hand", rule="53-B", floor=True)
            .expect(type="action", seat=4, action="call", amount=600)
            .expect(type="out_of_turn", seat=5, status="binding", rule="53-B")
            .expect(type="action", seat=5, action="call", amount=600)
            .expect(type="floor_ruling", closed=["skipped_hand"])
            .shuffler()
            .push(1, 100)
            .push(2, 200)
            .deal(HOLE6)
            .push(3, 200, 200, 200)
            .push(5, 200, 200, 200)
            .fold(6)
            .push(4, 200, 200, 200)
            .badge(GIULIA)
            .press("floor")
            .fold(1)
            .fold(2)
            .street(FLOP, "2d")
        ),
        None,
        players=6,
        button=6,
        blinds=(100, 200, 0),
    )
    # ---------------------------------------------------------------- rule 39
    pair(
        "rule_39_four_card_flop_floor_draws_the_burn",
        "Rule 39 with RP-14: four cards on the flop; floor called; the table holds (a check "
        "and a bet are refused, the chips are taken back); the table draws one at random for "
        "the floor; it goes to the burn; the three others are the flop; the table is "
        "released; the turn comes without another burn.",
        lambda t: (
            t.expect(type="four_card_flop", rule="39", cards=["Td", "5s", "4c", "Kc"])
            .expect(type="procedure_required", procedure="four_card_flop", rule="39", floor=True)
            .expect(type="action_refused", action="check", seat=1, rule="39")
            .expect(type="action_refused", action="push", seat=1, rule="39")
            .expect(type="floor_arrived")
            .expect(type="burn_drawn", card="Kc", rule="RP-14")
            .expect(type="board_dealt", street="flop", cards=["Td", "5s", "4c"], corrected=True)
            .expect(type="table_released", rule="39")
            .expect(type="action", seat=1, action="check")
            .expect(type="board_dealt", street="turn", cards=["Qh"])
            .expect(type="procedure_completed", procedure="four_card_flop", burn="Kc")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street([*FLOP, "Kc"], "2d")
            .press("check")
            .push(1, 100)
            .take_back(1)
            .badge(GIULIA)
            .cmd("draw", purpose="four_card_flop", pick=3, of=4)
            .move("Kc", "burn")
            .checks(4)
            .street(["Qh"], None)
        ),
        lambda t: _clean(t).checks(4).street(["Qh"], "Kc"),
    )
    pair(
        "rule_39_four_card_flop_two_burned_is_a_violation",
        "Rule 39: two of the four cards go to the burn: procedure violation.",
        lambda t: (
            t.expect(type="four_card_flop", rule="39")
            .expect(type="procedure_violation", procedure="four_card_flop", rule="39")
            .then(_four_card_flop_floor_here)
            .cmd("draw", purpose="four_card_flop", pick=3, of=4)
            .move("Kc", "burn")
            .move("4c", "burn")
        ),
        None,
    )
    pair(
        "rule_39_stub_card_burned_is_a_violation_not_named",
        "Rule 39: during a four-card flop a card from the stub (8d, never seen) goes to the "
        "burn: procedure violation; the texts say 'a card', never the stub card's name.",
        lambda t: (
            t.expect(type="four_card_flop", rule="39")
            .expect(
                type="procedure_violation",
                procedure="four_card_flop",
                got="a card, not one of ['Td', '5s', '4c', 'Kc']",
                rule="39",
            )
            .then(_four_card_flop_floor_here)
            .card("burn", "8d")
        ),
        None,
    )
    # ---------------------------------------------------------------- RP-5
    pair(
        "rule_RP5A_premature_flop",
        "RP-5-A: the flop is dealt before the pre-flop betting ends; the burn stays, the flop "
        "goes back, the stub is reshuffled, a new flop comes without a burn.",
        lambda t: (
            t.expect(
                type="premature_card", street="flop", rule="RP-5A", cards=["Ks", "Kd", "3s"]
            )
            .expect(type="procedure_completed", procedure="premature_card", rule="RP-5A")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .push(3, 100)
            .push(4, 100)
            .street(["Ks", "Kd", "3s"], "2d")
            .off("Ks")
            .off("Kd")
            .off("3s")
            .push(1, 50)
            .press("check")
            .street(FLOP, None)
        ),
        _clean,
    )
    pair(
        "rule_RP5A_new_flop_burned_again_is_a_violation",
        "RP-5-A: the new flop is dealt with another burn: procedure violation.",
        lambda t: (
            t.expect(type="premature_card", street="flop", rule="RP-5A")
            .expect(type="procedure_violation", procedure="premature_card", rule="RP-5A")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .push(3, 100)
            .push(4, 100)
            .street(["Ks", "Kd", "3s"], "2d")
            .off("Ks")
            .off("Kd")
            .off("3s")
            .push(1, 50)
            .press("check")
            .street(FLOP, "3h")
        ),
        None,
    )
    pair(
        "rule_RP5B_premature_turn",
        "RP-5-B: the turn is dealt before the flop betting ends; it is set aside, another card "
        "is burned and the next card is the turn; the river comes without a burn.",
        lambda t: (
            t.expect(type="premature_card", street="turn", rule="RP-5B")
            .expect(type="board_dealt", street="turn", cards=["Qh"])
            .expect(type="procedure_completed", procedure="premature_card", rule="RP-5B")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
            .press("check")
            .street(["Jh"], "3h")
            .off("Jh")
            .checks(3)
            .street(["Qh"], "4h")
            .checks(4)
            .street(["8d"], None)
        ),
        lambda t: _clean(t).checks(4).street(["Qh"], "3h").checks(4).street(["8d"], "4h"),
    )
    pair(
        "rule_RP5C_premature_river",
        "RP-5-C: the river is dealt before the turn betting ends; it goes back to the stub, "
        "its burn stays; after the turn action the river comes without a new burn.",
        lambda t: (
            t.expect(type="premature_card", street="river", rule="RP-5C")
            .expect(type="procedure_completed", procedure="premature_card", rule="RP-5C")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
            .checks(4)
            .street(["Qh"], "3h")
            .press("check")
            .street(["Jh"], "4h")
            .off("Jh")
            .checks(3)
            .street(["8d"], None)
        ),
        lambda t: _clean(t).checks(4).street(["Qh"], "3h").checks(4).street(["8d"], "4h"),
    )
    pair(
        "rule_RP5B_river_burned_is_a_violation",
        "RP-5-B: after the premature turn and the new turn, the river is dealt after a burn: "
        "procedure violation (the river comes without a burn).",
        lambda t: (
            t.expect(type="premature_card", street="turn", rule="RP-5B", cards=["Jh"])
            .expect(type="board_dealt", street="turn", cards=["Qh"])
            .expect(
                type="procedure_violation",
                procedure="premature_card",
                rule="RP-5B",
                expected="the river comes with no burn",
            )
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
            .press("check")
            .street(["Jh"], "3h")
            .off("Jh")
            .checks(3)
            .street(["Qh"], "4h")
            .checks(4)
            .street(["8d"], "5h")
        ),
        None,
    )
    pair(
        "rule_RP5B_premature_card_left_on_the_board_is_a_violation",
        "RP-5-B: the premature turn is not set aside; the new turn is dealt beside it: "
        "procedure violation.",
        lambda t: (
            t.expect(type="premature_card", street="turn", rule="RP-5B")
            .expect(
                type="procedure_violation",
                procedure="premature_card",
                rule="RP-5B",
                expected="the premature card(s) go back to the stub before the street is "
                "dealt again",
            )
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
            .press("check")
            .street(["Jh"], "3h")
            .checks(3)
            .street(["Qh"], "4h")
        ),
        None,
    )
    pair(
        "rule_RP5C_river_burned_again_is_a_violation",
        "RP-5-C: the premature river goes back, but the river is dealt after a new burn: "
        "procedure violation (its burn stays as the river burn).",
        lambda t: (
            t.expect(type="premature_card", street="river", rule="RP-5C", cards=["Jh"])
            .expect(
                type="procedure_violation",
                procedure="premature_card",
                rule="RP-5C",
                expected="the river comes with no burn",
            )
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
            .checks(4)
            .street(["Qh"], "3h")
            .press("check")
            .street(["Jh"], "4h")
            .off("Jh")
            .checks(3)
            .street(["8d"], "5h")
        ),
        None,
    )
    # ---------------------------------------------------------------- rule 23
    pair(
        "rule_23_hand_started_at_prior_level_corrected",
        "Rule 23: the level changed before this hand started but reached the table after; "
        "no substantial action yet: the hand is corrected to the new level.",
        lambda t: (
            t.expect(type="level_corrected", big_blind=200, rule="23")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .cmd("level", small_blind=100, big_blind=200, ante=0, announced=0.05)
            .push(1, 50)
            .push(2, 100)
            .push(3, 200)
            .push(4, 200)
            .push(1, 100)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.cmd("level", small_blind=100, big_blind=200, ante=0)
            .shuffler()
            .push(1, 50, 50)
            .push(2, 100, 100)
            .deal(HOLE)
            .push(3, 200)
            .push(4, 200)
            .push(1, 100)
            .press("check")
            .street(FLOP, "2d")
        ),
    )
    pair(
        "rule_23_prior_level_kept_after_substantial_action",
        "Rule 23: the same late level, after substantial action: the hand goes on at the "
        "prior level; the new level applies from the next hand.",
        lambda t: (
            t.expect(type="level_kept", big_blind=100, rule="23")
            .shuffler()
            .blinds()
            .deal(HOLE)
            .push(3, 100)
            .push(4, 100)
            .cmd("level", small_blind=100, big_blind=200, ante=0, announced=0.05)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: _clean(t).cmd("level", small_blind=100, big_blind=200, ante=0),
    )
    # ---------------------------------------------------------------- house profiles
    pair(
        "profile_campione_single_exposed_card_becomes_the_burn",
        "Casinò di Campione, house rules, section 'Forme di misdeal': one exposed hole card (not "
        "one of the first two) is no misdeal: after the deal it is replaced by the top card and "
        "is the flop's burn.",
        lambda t: (
            t.expect(type="procedure_completed", procedure="exposed_card")
            .shuffler()
            .blinds()
            .card("seat1", "Ah")
            .card("seat2", "Qd")
            .card("seat3", "5d")
            .press("exposed")
            .card("seat4", "7h")
            .card("seat1", "Kh")
            .card("seat2", "Jd")
            .card("seat3", "9c")
            .card("seat4", "2c")
            .move("5d", "burn")
            .card("seat3", "9s")
            .preflop_calls()
            .street(FLOP, None)
        ),
        lambda t: (
            t.shuffler()
            .blinds()
            .deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"], 4: ["7h", "2c"]})
            .preflop_calls()
            .street(FLOP, "5d")
        ),
        profile="campione",
    )
    pair(
        "profile_campione_one_extra_card_is_not_a_misdeal",
        "Casinò di Campione, house rules, section 'Forme di misdeal': only two or more extra "
        "cards are a misdeal. One extra card is no misdeal; the text says no more, so the floor "
        "is called and rules (rule 1).",
        lambda t: t.expect(type="procedure_required", procedure="floor_call", rule="35A")
        .expect(type="floor_ruling", closed=["floor_call"])
        .expect(type="board_dealt", street="flop")
        .shuffler()
        .blinds()
        .deal(HOLE)
        .card("seat2", "3h")
        .badge(GIULIA)
        .press("floor")
        .move("3h", "muck")
        .preflop_calls()
        .street(FLOP, "2d"),
        _clean,
        muck_differs=["3h"],  # the extra card, taken back to the muck
        profile="campione",
    )
    pair(
        "profile_campione_two_extra_cards_misdeal",
        "Casinò di Campione, house rules, section 'Forme di misdeal': two cards in excess of the "
        "hole cards: misdeal.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", reason="too_many_cards", extra=2)
            .shuffler()
            .blinds()
            .deal(HOLE)
            .card("seat2", "3h")
            .card("seat3", "3c")
        ),
        _clean_redeal,
        profile="campione",
    )
    pair(
        "profile_campione_straddle_acts_last_preflop",
        "Casinò di Campione, house rules, section 'Puntate aggiuntive': the seat left of the big "
        "blind straddles twice the big blind before the cards and acts last pre-flop, with the "
        "option to raise.",
        lambda t: t.expect(type="posted", seat=3, blind="straddle", amount=200)
        .expect(type="action", seat=4, action="call", amount=200)
        .expect(type="action", seat=3, action="check", amount=200)
        .expect(type="board_dealt", street="flop")
        .shuffler().blinds().push(3, 100, 100).deal(HOLE)
        .push(4, 100, 100).push(1, 100, 50).push(2, 100).press("check").street(FLOP, "2d"),
        None,
        profile="campione",
    )
    # Under casinos-austria the lift (the first card at a seat) starts the hand and the
    # shuffler button starts nothing; it is pressed all the same, so that the trace replays
    # under tda-2019 as the same hand and only the rule under test tells the two apart.
    pair(
        "profile_casinos_austria_two_actions_stand",
        "Casinos Austria, tournament rules, art. 24: once two moves were made the hand stands, "
        "even two folds (TDA 2019 would still allow the misdeal).",
        lambda t: (
            t.expect(type="misdeal_refused", rule="35D", profile_rule="art. 24")
            .shuffler()
            .card("seat1", "Ah")
            .deal({1: ["Kh"], 2: HOLE[2], 3: HOLE[3], 4: HOLE[4]})
            .push(1, 25, 25)
            .push(2, 100)
            .fold(3)
            .fold(4)
            .press("misdeal")
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.shuffler()
            .card("seat1", "Ah")
            .deal({1: ["Kh"], 2: HOLE[2], 3: HOLE[3], 4: HOLE[4]})
            .push(1, 25, 25)
            .push(2, 100)
            .fold(3)
            .fold(4)
            .push(1, 50)
            .press("check")
            .street(FLOP, "2d")
        ),
        profile="casinos-austria",
    )
    pair(
        "profile_casinos_austria_two_later_exposed_cards_no_misdeal",
        "Casinos Austria, tournament rules, art. 24: only the first or second card exposed is a "
        "misdeal; two later exposed cards are not (TDA 2019 35-A-5 would be).",
        lambda t: (
            t.expect(type="exposed_card", seat=3, rule="35A-5", profile_rule="art. 24")
            .expect(type="exposed_card", seat=4, rule="35A-5", profile_rule="art. 24")
            .expect(type="board_dealt", street="flop")
            .shuffler()
            .card("seat1", "Ah")
            .card("seat2", "Qd")
            .card("seat3", "9s")
            .press("exposed")
            .card("seat4", "7h")
            .press("exposed")
            .deal({1: ["Kh"], 2: ["Jd"], 3: ["9c"], 4: ["2c"]})
            .push(1, 25, 25)
            .push(2, 100)
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        lambda t: (
            t.shuffler()
            .card("seat1", "Ah")
            .card("seat2", "Qd")
            .card("seat3", "9s")
            .card("seat4", "7h")
            .deal({1: ["Kh"], 2: ["Jd"], 3: ["9c"], 4: ["2c"]})
            .push(1, 25, 25)
            .push(2, 100)
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        profile="casinos-austria",
    )
    pair(
        "profile_venezia_dealer_push_does_not_start_the_hand",
        "Casinò di Venezia, tournament rules, art. 17: only the shuffler's (green) button starts "
        "a hand; a dealer's badge changes the dealer and starts nothing.",
        lambda t: (
            t.expect(type="dealer_changed", dealer={"uid": MARIA, **NAME})
            .expect(type="hand_started", trigger="shuffler", dealer={"uid": MARIA, **NAME})
            .badge(MARIA)
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        lambda t: t.badge(MARIA).shuffler().blinds().deal(HOLE).preflop_calls().street(FLOP, "2d"),
        profile="venezia",
    )
    pair(
        "profile_campione_exposed_button_card_gets_two_consecutive_cards",
        "Casinò di Campione, house rules, section 'Forme di misdeal': the button's card is "
        "exposed (the last card of the deal): 'il giocatore riceverà due carte consecutive': the "
        "exposed card goes to the burn, the button gets the next card, and the exposed card is "
        "the flop's burn.",
        lambda t: (
            t.expect(type="procedure_required", procedure="exposed_card", rule="35A-5")
            .expect(type="procedure_step", procedure="exposed_card", rule="35A-5")
            .expect(
                type="procedure_completed",
                procedure="exposed_card",
                outcome="street_dealt",
                street="flop",
            )
            .shuffler()
            .blinds()
            .card("seat1", "Ah")
            .card("seat2", "Qd")
            .card("seat3", "9s")
            .card("seat4", "7h")
            .card("seat1", "Kh")
            .card("seat2", "Jd")
            .card("seat3", "9c")
            .card("seat4", "5d")
            .press("exposed")
            .move("5d", "burn")
            .card("seat4", "2c")
            .preflop_calls()
            .street(FLOP, None)
        ),
        lambda t: t.shuffler().blinds().deal(HOLE).preflop_calls().street(FLOP, "5d"),
        profile="campione",
    )
    pair(
        "profile_casinos_austria_one_extra_card_floor_two_misdeal",
        "Casinos Austria, tournament rules, art. 24: 'ulteriori due o più carte': one extra card "
        "is no misdeal (the floor is called), a second one is (TDA 2019: the first one is).",
        lambda t: (
            t.expect(type="procedure_required", procedure="floor_call", rule="35A")
            .expect(type="misdeal", reason="too_many_cards", extra=2, profile_rule="art. 24")
            .expect(type="procedure_completed", procedure="misdeal", outcome="redealt")
            .shuffler()
            .card("seat1", "Ah")
            .deal({1: ["Kh"], 2: HOLE[2], 3: HOLE[3], 4: HOLE[4]})
            .card("seat2", "3h")
            .card("seat3", "3c")
            .collect()
            .deal(REDEAL)
            .blinds()
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        lambda t: t.shuffler().deal(REDEAL).blinds().preflop_calls().street(FLOP, "2d"),
        profile="casinos-austria",
    )
    pair(
        "profile_casinos_austria_four_card_flop_calls_the_floor",
        "Casinos Austria, tournament rules (no four-card-flop procedure; art. 1 defers to the "
        "floor): four cards on the flop: the floor is called, the table holds, the floor's ruling"
        " (Kc to the burn) releases it.",
        lambda t: (
            t.expect(type="four_card_flop", rule="39", cards=["Td", "5s", "4c", "Kc"])
            .expect(type="procedure_required", procedure="floor_call", rule="39", floor=True)
            .expect(type="action_refused", action="check", rule="39")
            .expect(type="floor_ruling", closed=["floor_call"], released=["four_card_flop"])
            .expect(type="board_dealt", street="turn", cards=["Qh"])
            .shuffler()
            .deal(HOLE)
            .blinds()
            .preflop_calls()
            .street([*FLOP, "Kc"], "2d")
            .press("check")
            .badge(GIULIA)
            .move("Kc", "burn")
            .press("floor")
            .checks(4)
            .street(["Qh"], None)
        ),
        lambda t: (
            t.shuffler()
            .deal(HOLE)
            .blinds()
            .preflop_calls()
            .street(FLOP, "2d")
            .checks(4)
            .street(["Qh"], "Kc")
        ),
        profile="casinos-austria",
    )
    pair(
        "profile_casinos_austria_premature_card_calls_the_floor",
        "Casinos Austria, tournament rules (no premature-card procedure): a premature turn calls "
        "the floor; the floor rules (the card back to the stub, its burn stays) and the turn "
        "comes without a new burn.",
        lambda t: (
            t.expect(type="premature_card", street="turn", rule="RP-5B", cards=["Jh"])
            .expect(type="premature_card", rule="RP-5B", severity="critical")
            .expect(type="procedure_required", procedure="floor_call", rule="RP-5B", floor=True)
            .expect(type="floor_ruling", closed=["floor_call"])
            .expect(type="board_dealt", street="turn", cards=["Qh"])
            .shuffler()
            .deal(HOLE)
            .blinds()
            .preflop_calls()
            .street(FLOP, "2d")
            .press("check")
            .street(["Jh"], "3h")
            .badge(GIULIA)
            .off("Jh")
            .press("floor")
            .checks(3)
            .street(["Qh"], None)
        ),
        lambda t: _clean(t).checks(4).street(["Qh"], "3h"),
        profile="casinos-austria",
    )
    pair(
        "profile_tda2015_misdeal_cites_rule_34",
        "TDA 2015, rule 34-A-2: the first card to the wrong seat is 2015's rule 34-A-2.",
        lambda t: _redeal_after(
            t.expect(type="misdeal", rule="35A-2", profile_rule="34A-2")
            .shuffler()
            .blinds()
            .card("seat2", "Ah")
        ),
        _clean_redeal,
        profile="tda-2015",
    )
    pair(
        "rule_23_dealer_push_starts_the_hand_once",
        "Rule 23: a new dealer's badge (the dealer push) starts the hand; the shuffler button "
        "pressed for the same hand does not start a second one.",
        lambda t: (
            t.expect(type="dealer_changed")
            .expect(type="hand_started", trigger="dealer_push")
            .badge(LUCA)
            .shuffler()
            .blinds()
            .deal(HOLE)
            .preflop_calls()
            .street(FLOP, "2d")
        ),
        lambda t: t.badge(LUCA).blinds().deal(HOLE).preflop_calls().street(FLOP, "2d"),
    )


def expected() -> None:
    """Replay every scenario of this builder into its .expected.jsonl."""
    for trace in sorted(HERE.glob("*.jsonl")):
        if trace.name.endswith(".expected.jsonl"):
            continue
        if not (trace.name.startswith(("rule_", "profile_"))):
            continue
        head = trace.read_text().splitlines()
        profile = [h.split(":", 1)[1].strip() for h in head if h.startswith("# profile:")]
        args = [
            sys.executable,
            "-m",
            "tablectl.cli",
            "replay",
            str(trace),
            "--config",
            str(ROOT / "examples" / "sim-table.toml"),
        ]
        if profile:
            args += ["--profile", profile[0]]
        game = [h.split(":", 1)[1].strip() for h in head if h.startswith("# game:")]
        if game:
            args += ["--game", game[0]]
        out = subprocess.run(args, capture_output=True, check=True, cwd=ROOT).stdout
        trace.with_name(trace.name[: -len(".jsonl")] + ".expected.jsonl").write_bytes(out)


if __name__ == "__main__":
    if "--expected" in sys.argv:
        expected()
    else:
        build()
