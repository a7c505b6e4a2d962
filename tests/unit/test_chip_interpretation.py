"""Chip pushes read as actions: TDA 2019 rules 43-47 and every Illustration Addendum example."""

from __future__ import annotations

import pytest

from controller.rules import RuleError
from controller.rules.betting import BettingRound
from controller.rules.chips import (
    PushRuling,
    facing_opening_bet,
    interpret_push,
    undercall_ruling,
)
from tests.unit.test_cited_rules import facing_1000

BIG = 1_000_000


def postflop(seats: int, big_blind: int, stacks: dict[int, int] | None = None) -> BettingRound:
    order = list(range(1, seats + 1))
    chips = {s: BIG for s in order} | (stacks or {})
    return BettingRound(order=order, stacks=chips, big_blind=big_blind)


def preflop(
    order: list[int],
    sb: int,
    bb: int,
    blinds: tuple[int, int],
    stacks: dict[int, int] | None = None,
) -> BettingRound:
    chips = {s: BIG for s in order} | (stacks or {})
    return BettingRound(
        order=order,
        stacks=chips,
        big_blind=blinds[1],
        bets={sb: blinds[0], bb: blinds[1]},
        blind_level=blinds[1],
        big_blind_seat=bb,
    )


def push(r: BettingRound, seat: int, *chips: int, **kw: object) -> PushRuling:
    ruling = r.interpret_push(seat, new_chips=list(chips), **kw)  # type: ignore[arg-type]
    return ruling


def act(r: BettingRound, seat: int, *chips: int) -> PushRuling:
    ruling = push(r, seat, *chips)
    r.apply(seat, ruling)
    return ruling


# --------------------------------------------------------------------------- rule 43


def test_rule_43_example_1_min_raise_is_last_increment() -> None:
    r = postflop(4, 200)  # A..D = seats 1..4
    assert act(r, 1, 500, 100).kind == "bet"
    b = act(r, 2, 1000, 500, 100)
    assert (b.kind, b.total, b.increment, b.full) == ("raise", 1600, 1000, True)
    c = act(r, 3, 2000, 1000, 500, 100)
    assert (c.total, c.increment) == (3600, 2000)
    assert r.last_full_raise == 2000
    assert r.min_raise_to(4) == 5600  # not 3600 + 3600
    d = push(r, 4, 5000, 500, 100)
    assert (d.kind, d.total, d.owed, d.change, d.rule) == ("raise", 5600, 0, 0, None)


def test_rule_43_example_1_d_raising_half_a_raise_is_held_to_full_raise() -> None:
    r = postflop(4, 200)
    for seat, chips in ((1, (500, 100)), (2, (1000, 500, 100)), (3, (2000, 1000, 500, 100))):
        act(r, seat, *chips)
    held = push(r, 4, 1000, 1000, 1000, 1000, 500, 100)  # 4600: 1000 over, >= 50% of 2000
    assert (held.kind, held.total, held.owed, held.rule) == ("raise", 5600, 1000, "43-A")
    short = push(r, 4, 1000, 1000, 1000, 1000, 500)  # 4500: 900 over, < 50%
    assert (short.kind, short.total, short.change, short.rule) == ("call", 3600, 900, "45-B1")


def test_rule_43_example_2_short_all_in_does_not_change_min_raise() -> None:
    # Blinds 50-100; seat 3 UTG all-in for 150 (an increase of 50).
    r = preflop([3, 4, 5, 1, 2], sb=1, bb=2, blinds=(50, 100), stacks={3: 150})
    a = act(r, 3, 100, 50)
    assert (a.kind, a.total, a.allin, a.full, a.rule) == ("raise", 150, True, False, "45-B2")
    assert r.last_full_raise == 100
    assert r.min_raise_to(4) == 250


def test_rule_43_example_3_two_500_chips_raise_by_700() -> None:
    r = postflop(3, 200)
    act(r, 1, 100, 100, 100)
    b = act(r, 2, 500, 500)
    assert (b.kind, b.total, b.increment, b.full, b.rule) == ("raise", 1000, 700, True, None)
    assert r.min_raise_to(3) == 1700


def test_rule_43_example_4a_largest_raise_of_the_round_sets_min() -> None:
    # Blinds 25-50: A raises 75 to 125, B to 200, C to 500; D must make it 800.
    r = preflop([3, 4, 5, 6, 1, 2], sb=1, bb=2, blinds=(25, 50))
    a = act(r, 3, 100, 25)
    assert (a.kind, a.total, a.increment) == ("raise", 125, 75)
    b = act(r, 4, 100, 50, 50)
    assert (b.kind, b.total, b.increment) == ("raise", 200, 75)
    c = act(r, 5, 100, 100, 100, 100, 100)
    assert (c.kind, c.total, c.increment) == ("raise", 500, 300)
    assert r.last_full_raise == 300
    assert r.min_raise_to(6) == 800


def test_rule_43_example_4b_single_raise_of_450_sets_min() -> None:
    r = preflop([3, 4, 5, 6, 1, 2], sb=1, bb=2, blinds=(25, 50))
    act(r, 3, 100, 100, 100, 100, 100)
    act(r, 4, 100, 100, 100, 100, 100)
    act(r, 5, 100, 100, 100, 100, 100)
    assert r.to_act == 6
    assert r.to_call(6) == 500
    assert r.min_raise_to(6) == 950


def test_rule_43b_declared_raise_with_too_few_chips_owes_full_raise() -> None:
    r = postflop(2, 100)
    act(r, 1, 1000)
    ruling = push(r, 2, 1000, 100, declared="raise")
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("raise", 2000, 900, "43-A")


def test_rule_43a_fourteen_hundred_facing_1000_is_a_call() -> None:
    r = postflop(2, 100)
    act(r, 1, 1000)
    ruling = push(r, 2, 1000, 100, 100, 100, 100)
    assert (ruling.kind, ruling.total, ruling.change) == ("call", 1000, 400)


# --------------------------------------------------------------------------- rule 44


def test_rule_44_overchip_facing_bet_is_call() -> None:
    r = postflop(2, 100)
    act(r, 1, 100, 100, 100)
    ruling = push(r, 2, 5000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 300, 4700, "44")


def test_rule_44_overchip_facing_a_blind_is_call() -> None:
    r = preflop([3, 1, 2], sb=1, bb=2, blinds=(50, 100))
    ruling = push(r, 3, 1000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 100, 900, "44")


def test_rule_44_last_chip_overchip_is_a_call_not_all_in() -> None:
    r = postflop(2, 100, stacks={2: 1000})
    act(r, 1, 100, 100, 100)
    ruling = push(r, 2, 1000)
    assert (ruling.kind, ruling.allin, ruling.total, ruling.change) == ("call", False, 300, 700)


def test_rule_44_overchip_with_raise_declared_is_raise_for_chip_value() -> None:
    r = postflop(2, 100)
    act(r, 1, 100, 100, 100)
    ruling = push(r, 2, 1000, declared="raise")
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("raise", 1000, 0, None)


def test_rule_44_overchip_not_facing_bet_is_bet_of_full_value() -> None:
    r = postflop(2, 100)
    ruling = push(r, 1, 5000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("bet", 5000, 0, "44")


# --------------------------------------------------------------------------- rule 45


def test_rule_45_text_example_1_500_and_1000_facing_1100_is_call() -> None:
    r = postflop(3, 100)
    act(r, 1, 100, 100, 100, 100)
    act(r, 2, 1000, 100)
    ruling = push(r, 3, 500, 1000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 1100, 400, "45-A")


def test_rule_45_text_example_2_last_two_1000s_facing_1050_is_call() -> None:
    r = postflop(2, 50, stacks={2: 2000})
    act(r, 1, 1000, 25, 25)
    ruling = push(r, 2, 1000, 1000)
    assert (ruling.kind, ruling.allin, ruling.total, ruling.change) == ("call", False, 1050, 950)


def test_rule_45_example_1a_two_1000s_facing_1200_is_call() -> None:
    r = postflop(2, 200)
    act(r, 1, 1000, 100, 100)
    ruling = push(r, 2, 1000, 1000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 1200, 800, "45-A")


def _utg_raises_to_1100() -> BettingRound:
    r = preflop([3, 4, 5, 1, 2], sb=1, bb=2, blinds=(250, 500))
    act(r, 3, 1000, 100)
    assert r.last_full_raise == 600
    return r


def test_rule_45_example_1b_500_and_1000_facing_1100_is_call() -> None:
    ruling = push(_utg_raises_to_1100(), 4, 500, 1000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 1100, 400, "45-A")


def test_rule_45_example_2_1500_facing_1100_must_raise_to_1700() -> None:
    ruling = push(_utg_raises_to_1100(), 4, 1000, 100, 100, 100, 100, 100)
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("raise", 1700, 200, "43-A")
    assert ruling.full


def test_rule_45_example_3_1300_facing_1100_is_call_200_returned() -> None:
    ruling = push(_utg_raises_to_1100(), 4, 1000, 100, 100, 100)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 1100, 200, "45-B1")


def _opens_1400(stack_b: int) -> BettingRound:
    r = postflop(3, 100, stacks={2: stack_b})
    act(r, 1, 1000, 100, 100, 100, 100)
    return r


def test_rule_45_example_4a_reaching_50_percent_with_chips_behind_is_min_raise() -> None:
    ruling = push(_opens_1400(BIG), 2, 1000, 500, 500, 500)
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("raise", 2800, 300, "43-A")


def test_rule_45_example_4a_last_chips_are_all_in() -> None:
    ruling = push(_opens_1400(2500), 2, 1000, 500, 500, 500)
    assert (ruling.kind, ruling.total, ruling.allin, ruling.owed) == ("raise", 2500, True, 0)
    assert (ruling.rule, ruling.full) == ("45-B2", False)


def test_rule_45_example_4b_short_of_50_percent_with_chips_behind_is_call() -> None:
    ruling = push(_opens_1400(BIG), 2, 1000, 500, 500)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 1400, 600, "45-B1")


def test_rule_45_example_4b_last_chips_are_all_in_regardless_of_50_percent() -> None:
    ruling = push(_opens_1400(2000), 2, 1000, 500, 500)
    assert (ruling.kind, ruling.total, ruling.allin, ruling.rule) == ("raise", 2000, True, "45-B2")


def test_rule_45a_declared_all_in_button_before_chips_is_all_in() -> None:
    r = _opens_1400(3000)
    ruling = push(r, 2, 1000, 1000, declared="allin")
    assert (ruling.kind, ruling.total, ruling.allin, ruling.owed) == ("raise", 3000, True, 1000)


def test_rule_61_overbetting_expecting_change_is_a_raise() -> None:
    r = postflop(2, 25)
    act(r, 1, 100, 100, 100, 25)
    ruling = push(r, 2, 500, 25)
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("raise", 650, 125, "43-A")


# --------------------------------------------------------------------------- rule 46


def _bb_two_25s_faces_600() -> BettingRound:
    # THE 25-50: BB (seat 2) posted two 25s; the button (seat 3) raises to 600.
    r = preflop([3, 1, 2], sb=1, bb=2, blinds=(25, 50))
    r.bet_or_raise_to(3, 600)
    r.fold(1)
    assert r.to_act == 2 and r.last_full_raise == 550
    return r


def bb46(*new: int, pulled: tuple[int, ...] = ()) -> PushRuling:
    r = _bb_two_25s_faces_600()
    return r.interpret_push(2, prior_chips=[25, 25], pulled_back=pulled, new_chips=list(new))


def test_rule_46_situation_1_1_overchip_on_prior_chips_is_call() -> None:
    ruling = bb46(1000)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 600, 450, "46-C1")
    assert "44" in ruling.rules


def test_rule_46_situation_1_2a_two_500s_on_prior_chips_is_call() -> None:
    ruling = bb46(500, 500)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 600, 450, "46-C1")
    assert "45-A" in ruling.rules


def test_rule_46_situation_1_2b_100_and_500_on_prior_chips_is_call() -> None:
    ruling = bb46(100, 500)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 600, 50, "46-C1")


def test_rule_46_situation_1_3_1000_and_500_on_prior_chips_is_raise_to_1550() -> None:
    ruling = bb46(1000, 500)
    assert (ruling.kind, ruling.total, ruling.full, ruling.change) == ("raise", 1550, True, 0)
    assert "46-C1" in ruling.rules


def _bb_1k_chip_faces_700() -> BettingRound:
    # THE 50-100: BB (seat 2) posted one 1k chip; pre-flop raise to 700.
    r = preflop([3, 1, 2], sb=1, bb=2, blinds=(50, 100))
    r.bet_or_raise_to(3, 700)
    r.fold(1)
    return r


def test_rule_46_situation_2_prior_chip_covers_call_new_chip_is_rule_45_bet() -> None:
    r = _bb_1k_chip_faces_700()
    small = r.interpret_push(2, prior_chips=[1000], new_chips=[100])
    assert (small.kind, small.total, small.owed, small.rule) == ("raise", 1300, 200, "46-C2")
    big = r.interpret_push(2, prior_chips=[1000], new_chips=[500])
    assert (big.kind, big.total, big.owed) == ("raise", 1500, 0)
    assert "46-C2" in big.rules


def test_rule_46_situation_3_1_prior_pulled_back_overchip_is_call() -> None:
    ruling = bb46(1000, pulled=(25, 25))
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 600, 400, "46-C1")


def test_rule_46_situation_3_2_prior_pulled_back_multiple_chips_is_rule_45_bet() -> None:
    ruling = bb46(500, 500, 100, pulled=(25, 25))
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("raise", 1150, 50, "46-C1")
    assert "43-A" in ruling.rules
    exact = bb46(500, 100, pulled=(25, 25))
    assert (exact.kind, exact.total, exact.change) == ("call", 600, 0)


def test_rule_46_situation_4_prior_partly_pulled_back_is_50_percent_standard() -> None:
    raise_ = bb46(1000, pulled=(25,))
    assert (raise_.kind, raise_.total, raise_.owed, raise_.rule) == ("raise", 1150, 125, "46-C2")
    call = bb46(500, 100, pulled=(25,))
    assert (call.kind, call.total, call.change, call.rule) == ("call", 600, 25, "46-C2")


def test_rule_46b_pulling_back_prior_chips_alone_is_an_undercall() -> None:
    ruling = bb46(pulled=(25,))
    assert (ruling.kind, ruling.rule) == ("undercall", "46-B")


# --------------------------------------------------------------------------- rule 47


def _rule_47_example_1() -> BettingRound:
    # NLHE 50-100 post-flop: A opens 100, B all-in 125, C calls, D all-in 200, E calls.
    r = postflop(5, 100, stacks={2: 125, 4: 200})
    act(r, 1, 100)
    b = act(r, 2, 100, 25)
    assert (b.kind, b.allin, b.full) == ("raise", True, False)
    act(r, 3, 100, 25)
    d = r.interpret_push(4, new_chips=[100, 100], declared="allin")
    assert (d.kind, d.total, d.allin, d.full) == ("raise", 200, True, False)
    r.apply(4, d)
    act(r, 5, 100, 100)
    return r


def test_rule_47_example_1_cumulative_short_all_ins_reopen_betting() -> None:
    r = _rule_47_example_1()
    assert r.to_act == 1
    assert r.can_raise(1)
    assert r.min_raise_to(1) == 300


def test_rule_47_example_1a_not_reopened_for_caller_facing_75() -> None:
    r = _rule_47_example_1()
    act(r, 1, 100)  # smooth call to 200
    assert r.to_act == 3
    assert r.raise_block(3) == "47-A"
    ruling = push(r, 3, 100, 100, 100)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("call", 200, 225, "47-A")
    declared = push(r, 3, 100, 100, 100, declared="raise")
    assert (declared.kind, declared.rule) == ("call", "47-A")


def test_rule_47_example_1b_full_raise_reopens_for_c() -> None:
    r = _rule_47_example_1()
    act(r, 1, 100, 100)  # raise the minimum to 300
    assert r.to_act == 3
    assert r.to_call(3) == 175
    assert r.can_raise(3)


def test_rule_47_example_2_min_raise_stays_last_full_bet() -> None:
    r = postflop(6, 100, stacks={2: 500, 3: 650, 4: 800})
    act(r, 1, 100, 100, 100)
    for seat in (2, 3, 4):
        r.apply(seat, r.interpret_push(seat, new_chips=[100] * 2, declared="allin"))
    act(r, 5, 500, 100, 100, 100)
    assert r.last_full_raise == 300
    assert r.to_call(6) == 800
    assert r.min_raise_to(6) == 1100


def _rule_47_example_3() -> BettingRound:
    # Blinds 2000-4000: A (seat 3) calls, B folds, C all-in 7500, SB folds.
    r = preflop([3, 4, 5, 1, 2], sb=1, bb=2, blinds=(2000, 4000), stacks={5: 7500})
    act(r, 3, 1000, 1000, 1000, 1000)
    r.fold(4)
    c = r.interpret_push(5, new_chips=[5000, 1000, 1000, 500], declared="allin")
    assert (c.total, c.allin, c.full) == (7500, True, False)
    r.apply(5, c)
    r.fold(1)
    assert r.to_act == 2
    return r


def test_rule_47_example_3a_bb_calls_and_a_cannot_raise() -> None:
    r = _rule_47_example_3()
    assert r.can_raise(2)
    assert r.min_raise_to(2) == 11500
    act(r, 2, 1000, 1000, 1000, 500)  # smooth call 3500 more
    assert r.to_act == 3
    assert r.to_call(3) == 3500
    assert r.raise_block(3) == "47-A"
    assert not r.can_bet_or_raise_to(3, 11500)


def test_rule_47_example_3b_bb_min_raise_reopens_for_a() -> None:
    r = _rule_47_example_3()
    r.bet_or_raise_to(2, 11500)
    assert r.to_act == 3
    assert r.to_call(3) == 7500
    assert r.can_raise(3)


# --------------------------------------------------------------------------- misc


def test_rule_51b_silent_undercall_is_flagged_for_the_floor() -> None:
    r = postflop(3, 1000)
    act(r, 1, 1000, 1000)
    r.bet_or_raise_to(2, 8000)
    ruling = push(r, 3, 1000, 1000)
    assert (ruling.kind, ruling.total, ruling.rule) == ("undercall", 2000, "51-B")
    with pytest.raises(RuleError):
        r.apply(3, ruling)
    assert undercall_ruling(heads_up=False, facing_opening_bet=False) == "td"
    assert undercall_ruling(heads_up=False, facing_opening_bet=True) == "full_call"
    assert undercall_ruling(heads_up=True, facing_opening_bet=False) == "full_call"


def test_rule_52a_opening_underbet_is_corrected_to_minimum() -> None:
    r = postflop(2, 200)
    ruling = push(r, 1, 100)
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("bet", 200, 100, "52-A")


def test_rule_52b_pot_limit_overbet_reduced_to_pot() -> None:
    r = BettingRound(
        order=[1, 2], stacks={1: BIG, 2: BIG}, big_blind=1000, pot=10500, structure="pl"
    )
    ruling = push(r, 1, 5000, 5000, 1000, 500)
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("bet", 10500, 1000, "52-B")


def test_rule_55b_declared_raise_facing_no_bet_is_at_least_minimum_bet() -> None:
    r = postflop(2, 200)
    ruling = push(r, 1, 100, declared="raise")
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("bet", 200, 100, "55-B")


def test_fixed_limit_push_over_the_fixed_raise_is_one_raise() -> None:
    r = BettingRound(
        order=[1, 2, 3], stacks={1: BIG, 2: BIG, 3: BIG}, big_blind=100, structure="fl"
    )
    act(r, 1, 100)
    ruling = push(r, 2, 100, 100, 100)
    assert (ruling.kind, ruling.total, ruling.change) == ("raise", 200, 100)


def test_rule_41_pure_function_rejects_impossible_pushes() -> None:
    with pytest.raises(RuleError):
        interpret_push(
            current_bet=100,
            already_in=0,
            prior_chips=[],
            pulled_back=[],
            new_chips=[500],
            stack_behind=100,
            min_increment=100,
        )
    with pytest.raises(RuleError):
        interpret_push(
            current_bet=100,
            already_in=0,
            prior_chips=[],
            pulled_back=[],
            new_chips=[],
            stack_behind=100,
            min_increment=100,
        )
    with pytest.raises(RuleError):
        interpret_push(
            current_bet=100,
            already_in=0,
            prior_chips=[],
            pulled_back=[25],
            new_chips=[100],
            stack_behind=100,
            min_increment=100,
        )


def test_rule_40c_exact_chips_are_the_action_with_no_rule() -> None:
    ruling = interpret_push(
        current_bet=300,
        already_in=0,
        prior_chips=[],
        pulled_back=[],
        new_chips=[100, 100, 100],
        stack_behind=1000,
        min_increment=300,
    )
    assert (ruling.kind, ruling.total, ruling.rule, ruling.action) == ("call", 300, None, "call")
    assert ruling.behind_after == 700


def test_rule_51a_declared_all_in_when_not_reopened_binds_to_call() -> None:
    r = _rule_47_example_1()
    act(r, 1, 100)
    ruling = push(r, 3, 25, declared="allin")
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("call", 200, 50, "47-A")


def test_rule_46_situation_2_big_blind_option_small_chip_is_a_check_with_change() -> None:
    r = preflop([3, 1, 2], sb=1, bb=2, blinds=(50, 100))
    act(r, 3, 100)
    act(r, 1, 50)
    ruling = r.interpret_push(2, prior_chips=[100], new_chips=[25])
    assert (ruling.kind, ruling.total, ruling.change, ruling.rule) == ("check", 100, 25, "46-C2")
    assert r.apply(2, ruling).kind == "check"
    assert r.round_complete


def test_rp_1_all_in_button_before_any_chip_rules_all_in_and_owes_everything() -> None:
    r = _opens_1400(3000)
    ruling = push(r, 2, declared="allin")
    assert (ruling.kind, ruling.total, ruling.allin, ruling.owed) == ("raise", 3000, True, 3000)


def test_rule_44_panel_raise_before_chips_owes_a_full_min_raise() -> None:
    r = _opens_1400(BIG)
    ruling = push(r, 2, declared="raise")
    assert (ruling.kind, ruling.total, ruling.owed, ruling.rule) == ("raise", 2800, 2800, "43-A")


# --------------------------------------------------------------------------- the rule chain
# ``rules`` is the chain the floor reads back (docs/mqtt.md): each rule once, in the order
# applied, and ``rule`` the one that decided.


def facing(current_bet: int = 1000, **kw: object) -> PushRuling:
    """A push facing ``current_bet`` (a full raise is 1000 more), 10 000 behind."""
    return facing_1000(current_bet=current_bet, **kw)


def test_rule_51b_facing_the_opening_bet_is_the_big_blind_preflop_and_the_first_bet_after() -> None:
    assert facing_opening_bet(0, preflop=True)
    assert not facing_opening_bet(1, preflop=True)
    assert facing_opening_bet(0, preflop=False)
    assert facing_opening_bet(1, preflop=False)
    assert not facing_opening_bet(2, preflop=False)


def test_rule_40c_several_chips_opening_the_betting_are_a_bet_with_no_rule() -> None:
    ruling = facing(current_bet=0, new_chips=[100, 100, 100], min_increment=100)
    assert (ruling.kind, ruling.total, ruling.rule, ruling.rules) == ("bet", 300, None, ())


def test_rule_44_single_overchip_facing_a_bet_cites_44_once() -> None:
    ruling = facing(new_chips=[5000])
    assert (ruling.kind, ruling.total, ruling.change) == ("call", 1000, 4000)
    assert (ruling.rule, ruling.rules) == ("44", ("44",))


def test_rule_45a_chips_a_smaller_one_would_not_leave_a_call_cite_45a_once() -> None:
    ruling = facing(current_bet=1100, new_chips=[500, 1000])
    assert (ruling.kind, ruling.total, ruling.change) == ("call", 1100, 400)
    assert (ruling.rule, ruling.rules) == ("45-A", ("45-A",))


def test_rule_45b1_and_43a_chain_when_half_a_raise_is_held_to_a_full_raise() -> None:
    ruling = facing(new_chips=[1000, 500])
    assert (ruling.kind, ruling.total, ruling.owed) == ("raise", 2000, 500)
    assert (ruling.rule, ruling.rules) == ("43-A", ("45-B1", "43-A"))
    short = facing(new_chips=[1000, 100, 100])
    assert (short.kind, short.total, short.change) == ("call", 1000, 200)
    assert (short.rule, short.rules) == ("45-B1", ("45-B1",))


def test_rule_45b2_all_in_reaching_a_full_raise_is_a_plain_raise() -> None:
    exact = facing(new_chips=[1000, 1000], stack_behind=2000)
    assert (exact.kind, exact.total, exact.allin, exact.full) == ("raise", 2000, True, True)
    assert (exact.rule, exact.rules) == (None, ("45-B2",))
    more = facing(new_chips=[1000, 1000, 500], stack_behind=2500)
    assert (more.kind, more.total, more.rule) == ("raise", 2500, None)
    short = facing(new_chips=[1000, 500], stack_behind=1500)
    assert (short.kind, short.total, short.full) == ("raise", 1500, False)
    assert (short.rule, short.rules) == ("45-B2", ("45-B2",))


def test_rule_51b_undercall_cites_51b_once() -> None:
    ruling = facing(new_chips=[500, 100])
    assert (ruling.kind, ruling.total, ruling.rule, ruling.rules) == (
        "undercall",
        600,
        "51-B",
        ("51-B",),
    )


def test_rule_46c2_chips_counted_but_not_in_the_zone_still_cover_the_call() -> None:
    # 1000 counted in (a 500 chip lies in the zone, 500 was taken in), 600 more.
    ruling = facing(already_in=1000, prior_chips=[500], new_chips=[500, 100])
    assert (ruling.kind, ruling.total, ruling.owed) == ("raise", 2000, 400)
    assert (ruling.rule, ruling.rules) == ("46-C2", ("46-C2", "45-B1", "43-A"))


def test_rule_44_overchip_on_the_big_blind_option_is_a_raise_of_its_full_value() -> None:
    # The big blind's 100 is counted (not in the zone); a single 500 chip on its option.
    ruling = facing(current_bet=100, already_in=100, min_increment=100, new_chips=[500])
    assert (ruling.kind, ruling.total, ruling.change, ruling.owed) == ("raise", 600, 0, 0)
    assert ruling.rule is None


def test_rule_47a_raise_push_when_not_reopened_is_a_call_citing_47a_once() -> None:
    ruling = facing(new_chips=[1000, 1000], raise_closed="47-A")
    assert (ruling.kind, ruling.total, ruling.change) == ("call", 1000, 1000)
    assert (ruling.rule, ruling.rules) == ("47-A", ("47-A",))


def test_rule_52b_pot_limit_bet_of_exactly_the_pot_stands_without_a_rule() -> None:
    pot = facing(current_bet=0, new_chips=[5000, 1000], max_total=6000, structure="pl")
    assert (pot.kind, pot.total, pot.change, pot.rule, pot.rules) == ("bet", 6000, 0, None, ())
    over = facing(current_bet=0, new_chips=[5000, 1000, 500], max_total=6000, structure="pl")
    assert (over.kind, over.total, over.change) == ("bet", 6000, 500)
    assert (over.rule, over.rules) == ("52-B", ("52-B",))


def test_fixed_limit_push_over_the_fixed_raise_cites_the_fixed_limit() -> None:
    ruling = facing(new_chips=[1000, 1000, 1000], max_total=2000, structure="fl")
    assert (ruling.kind, ruling.total, ruling.change) == ("raise", 2000, 1000)
    assert (ruling.rule, ruling.rules) == ("fixed-limit", ("fixed-limit",))


def test_rule_43a_declared_raise_without_chips_for_more_than_the_call_is_an_all_in_call() -> None:
    short = facing(new_chips=[500], stack_behind=600, declared="raise")
    assert (short.kind, short.total, short.allin, short.owed) == ("call", 600, True, 100)
    assert (short.increment, short.full) == (0, False)
    exact = facing(new_chips=[500], stack_behind=1000, declared="raise")
    assert (exact.kind, exact.total, exact.allin, exact.owed) == ("call", 1000, True, 500)
    assert (exact.increment, exact.full) == (0, False)


def test_rule_43_all_in_call_for_less_raises_nothing_and_a_bet_raises_by_its_total() -> None:
    call = facing(new_chips=[500, 100], stack_behind=600)
    assert (call.kind, call.total, call.allin, call.increment, call.full) == (
        "call",
        600,
        True,
        0,
        False,
    )
    bet = facing(current_bet=0, new_chips=[100, 100, 100], min_increment=300)
    assert (bet.kind, bet.increment, bet.full) == ("bet", 300, True)


def test_rule_51a_declared_all_in_for_exactly_the_call_is_a_plain_call() -> None:
    # Not re-opened (47-A), but all the chips make only the call: nothing was held back.
    ruling = facing(new_chips=[500], stack_behind=1000, declared="allin", raise_closed="47-A")
    assert (ruling.kind, ruling.total, ruling.allin, ruling.owed) == ("call", 1000, True, 500)
    assert (ruling.rule, ruling.rules) == (None, ())


def test_rule_51a_declared_all_in_when_not_reopened_cites_47a_once() -> None:
    ruling = facing(new_chips=[500], declared="allin", raise_closed="47-A")
    assert (ruling.kind, ruling.total, ruling.owed) == ("call", 1000, 500)
    assert (ruling.rule, ruling.rules) == ("47-A", ("47-A",))


def test_rule_46b_exact_call_after_pulling_back_a_prior_chip_is_a_plain_call() -> None:
    # 1000 in front (two 500s) faces 2000: one 500 pulled back, 1500 pushed: exactly 2000.
    ruling = facing(
        current_bet=2000,
        already_in=1000,
        prior_chips=[500, 500],
        pulled_back=[500],
        new_chips=[1000, 500],
    )
    assert (ruling.kind, ruling.total, ruling.change, ruling.owed) == ("call", 2000, 0, 0)
    assert (ruling.rule, ruling.rules) == (None, ())


def test_rule_52a_opening_bet_of_exactly_the_minimum_needs_no_correction() -> None:
    ruling = facing(current_bet=0, new_chips=[100, 100], min_increment=200)
    assert (ruling.kind, ruling.total, ruling.owed, ruling.full) == ("bet", 200, 0, True)
    assert (ruling.rule, ruling.rules) == (None, ())
