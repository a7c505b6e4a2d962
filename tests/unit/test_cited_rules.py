"""Rules the table cites, each tested under its own number: a hand mucked at showdown (13-B),
the showdown order (17-A), several chips short of a raise (45-B1, 45-B2), prior chips (46-C1,
46-C2), a short all-in that does not re-open (47-A), penalties (71-A, 71-C), and the table's
random draw (RP-14). The rule index (docs/rules.md) names a test for every rule it lists."""

from __future__ import annotations

from typing import Any

from controller.engine.state import Staffer
from controller.rules.betting import BettingRound
from controller.rules.chips import PushRuling, interpret_push
from kernel.inputs import Badge
from tests.engine_helpers import Table, ev, events_of

HOLE = {1: ["As", "Ad"], 2: ["Kc", "Kd"], 3: ["7c", "2d"]}
FLOOR = Staffer("04F1E2D3C4B5A6", "Giulia Ferrari", "floor")


def facing_1000(**push: Any) -> PushRuling:
    """A push facing a bet of 1000 (a full raise is 1000 more), 10 000 behind."""
    args: dict[str, Any] = {
        "current_bet": 1000,
        "already_in": 0,
        "prior_chips": [],
        "pulled_back": [],
        "new_chips": [],
        "stack_behind": 10_000,
        "min_increment": 1000,
    }
    args.update(push)
    return interpret_push(**args)


def to_the_flop(table: Table) -> Table:
    """Seats 1-3, button 3, blinds 50/100: seat 3 and the small blind call, the big blind
    checks."""
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal(HOLE)
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    return table


def to_the_river() -> Table:
    """Everyone checks the flop and the turn; the river is dealt."""
    table = to_the_flop(Table(button=3))
    for board, burn in ((("2c", "7d", "9h"), "3c"), (("Jc",), "4c")):
        table.board(*board, burn=burn)
        for _ in range(3):
            table.button("check")
    table.board("5s", burn="6c")
    return table


# ---------------------------------------------------------------- showdown (13, 17)


def test_rule_13B_hands_mucked_at_showdown_are_dead_and_the_last_one_wins_uncontested() -> None:
    table = to_the_river()
    for _ in range(3):
        table.button("check")
    assert table.events("showdown")[-1]["order"] == [1, 2, 3]
    table.fold(3)
    table.fold(2)
    mucked = table.events("hand_mucked")
    assert [(m["seat"], m["rule"]) for m in mucked] == [(3, "13-B"), (2, "13-B")]
    award = table.events("pot_awarded")[-1]
    # Two hands gone into the muck: the last live hand wins without the pot being pushed.
    assert (award["winners"], award["amount"], award["reason"]) == ([1], 300, "uncontested")
    assert award["showdown"] == {}  # no hand shown: nothing is made public


def test_rule_17A_the_last_river_raiser_shows_first() -> None:
    table = to_the_river()
    table.push(1, 100)  # seat 1 bets the river
    table.push(2, 100, 100, 100)  # seat 2 raises to 300
    table.fold(3)
    table.push(1, 100, 100)  # seat 1 calls
    show = table.events("showdown")[-1]
    assert show["order"] == [2, 1] and show["rule"] == "17-A"


# ---------------------------------------------------------------- chip pushes (45, 46, 47)


def test_rule_45B1_several_chips_less_than_half_a_raise_over_the_call_are_a_call() -> None:
    ruling = facing_1000(new_chips=[1000, 100, 100, 100])  # 1300: 300 over the call
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 1000, 300, "45-B1")
    assert ruling.rules == ("45-B1",)


def test_rule_45B1_half_a_raise_or_more_is_held_to_a_full_raise() -> None:
    ruling = facing_1000(new_chips=[1000, 500])  # 1500: half a raise over the call
    assert (ruling.kind, ruling.total, ruling.owed, ruling.full) == ("raise", 2000, 500, True)
    assert ruling.rules == ("45-B1", "43-A")


def test_rule_45B2_several_chips_all_in_short_of_a_raise_stand_as_an_all_in() -> None:
    ruling = facing_1000(new_chips=[1000, 500], stack_behind=1500)
    assert (ruling.kind, ruling.total, ruling.allin) == ("raise", 1500, True)
    assert (ruling.full, ruling.owed, ruling.change, ruling.rule) == (False, 0, 0, "45-B2")
    assert ruling.action == "allin"


def test_rule_46C1_prior_chips_short_of_the_call_leave_only_the_new_chips_judged() -> None:
    # The big blind's 200 stays in front; 1500 more faces a bet of 1000.
    ruling = facing_1000(already_in=200, prior_chips=[200], new_chips=[1000, 500])
    assert (ruling.kind, ruling.total, ruling.owed) == ("raise", 2000, 300)
    assert ruling.rule == "46-C1"  # the 46-C situation decides, as the event cites it
    assert ruling.rules == ("46-C1", "45-B1", "43-A")


def test_rule_46C2_prior_chips_covering_the_call_make_the_whole_push_a_raise() -> None:
    # 2000 in front (a bet of 1000 and the call of a raise to 2000), 500 more.
    ruling = facing_1000(
        current_bet=2000, already_in=1000, prior_chips=[1000, 1000], new_chips=[500]
    )
    assert (ruling.kind, ruling.total, ruling.owed, ruling.full) == ("raise", 3000, 500, True)
    assert ruling.rule == "46-C2"
    assert ruling.rules == ("46-C2", "45-B1", "43-A")


def test_rule_47A_after_a_short_all_in_a_raise_push_is_only_a_call() -> None:
    r = BettingRound(order=[1, 2, 3], stacks={1: 10_000, 2: 150, 3: 10_000}, big_blind=100)
    r.bet_or_raise_to(1, 100)
    r.all_in(2)  # 150: 50 more, not a full raise
    r.call(3)
    assert r.to_act == 1 and r.raise_block(1) == "47-A"
    ruling = r.interpret_push(1, prior_chips=[100], new_chips=[100, 100, 100])
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 150, 250, "47-A")
    assert r.apply(1, ruling).total == 150
    assert r.round_complete


# ---------------------------------------------------------------- penalties (71)


def test_rule_71A_penalties_in_hands_add_up_and_show_in_the_state() -> None:
    table = Table(seats=(1, 2, 3, 4), button=4)
    table.do(ev(t=table.step(), event="command", name="penalty", seat=3, hands=2))
    table.do(ev(t=table.step(), event="command", name="penalty", seat=3, hands=1))
    given = table.events("penalty_given")
    assert [(g["seat"], g["hands"], g["rule"]) for g in given] == [(3, 2, "71A"), (3, 1, "71A")]
    assert table.state["seats"]["3"]["penalty"] == 3
    assert "penalty" not in table.state["seats"]["4"]


def test_rule_71C_the_penalised_seat_is_killed_each_hand_until_the_penalty_is_served() -> None:
    table = Table(seats=(1, 2, 3), button=3)
    table.do(ev(t=table.step(), event="command", name="penalty", seat=3, hands=1))
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal(HOLE)
    killed = table.events("hand_killed")
    assert [(k["seat"], k["rule"]) for k in killed] == [(3, "71C")]
    table.fold(1)  # the big blind wins: the hand is over, one penalised hand served
    assert table.events("hand_completed") and "penalty" not in table.state["seats"]["3"]
    table.shuffle()
    table.push(2, 25, 25)
    table.push(3, 100)
    table.deal({2: ["Qs", "Qd"], 3: ["Js", "Jd"], 1: ["Ts", "Td"]})
    assert len(table.events("hand_killed")) == 1  # seat 3 plays the second hand


# ---------------------------------------------------------------- the random draw (RP-14)


def test_rule_RP14_the_table_draws_the_burn_once_and_only_with_the_floor_present() -> None:
    table = Table(seats=(1, 2, 3), button=3)
    table.engine.staff[FLOOR.uid] = FLOOR
    to_the_flop(table)
    table.board("Td", "5s", "4c", "Kh", burn="3d")  # four cards on the flop (39)

    def draw(pick: int) -> dict[str, Any]:
        out = table.do(
            ev(
                t=table.step(),
                event="command",
                name="draw",
                purpose="four_card_flop",
                pick=pick,
                of=4,
                id=f"d{len(table.out)}",
            )
        )
        return next(m.payload for m in out if m.topic == "replies")

    assert table.engine.wants_draw() is None  # the floor is not at the table
    refused = draw(2)
    assert refused["ok"] is False and "floor at the table" in refused["error"]
    table.do(Badge(t=table.step(), uid=FLOOR.uid))
    assert table.engine.wants_draw() == ("four_card_flop", 4)
    assert draw(2)["ok"] is True
    drawn = events_of(table.out, "burn_drawn")
    assert len(drawn) == 1
    assert (drawn[0]["card"], drawn[0]["rule"]) == ("4c", "RP-14")
    assert drawn[0]["cards"] == ["Td", "5s", "4c", "Kh"]
    assert drawn[0]["floor"] == {"uid": FLOOR.uid, "name": FLOOR.name}
    assert table.engine.wants_draw() is None
    again = draw(0)  # one draw per four-card flop
    assert again["ok"] is False and "no pending draw" in again["error"]
