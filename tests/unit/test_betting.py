"""Betting round state machine: order (34), options, min raise (43), re-opening (47), caps (48)."""

from __future__ import annotations

import pytest

from controller.rules import RuleError
from controller.rules.betting import (
    Action,
    BettingRound,
    limit_bet_size,
    limit_raise_cap,
    seats_left_of_button,
    street_order,
    substantial_action,
    substantial_action_out_of_turn,
)

BIG = 1_000_000


def preflop(
    order: list[int],
    blinds: tuple[int, int],
    *,
    sb: int = 1,
    bb: int = 2,
    structure: str = "nl",
    raise_cap: int | None = 3,
    stacks: dict[int, int] | None = None,
) -> BettingRound:
    chips = {s: BIG for s in order} | (stacks or {})
    posted = {sb: min(blinds[0], chips[sb]), bb: min(blinds[1], chips[bb])}
    return BettingRound(
        order=order,
        stacks={s: chips[s] - posted.get(s, 0) for s in order},
        big_blind=blinds[1],
        bets=posted,
        blind_level=blinds[1],
        big_blind_seat=bb,
        structure=structure,  # type: ignore[arg-type]
        raise_cap=raise_cap,
    )


def postflop(order: list[int], big_blind: int, **kw: object) -> BettingRound:
    stacks = {s: BIG for s in order}
    return BettingRound(order=order, stacks=stacks, big_blind=big_blind, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ order (rule 34)


def test_rule_34_heads_up_button_is_small_blind_and_acts_first_preflop() -> None:
    assert street_order([3, 7], button=3, big_blind_seat=7, preflop=True) == [3, 7]


def test_rule_34_heads_up_button_acts_last_after_the_flop() -> None:
    assert street_order([3, 7], button=3) == [7, 3]


def test_preflop_order_starts_left_of_big_blind_and_postflop_left_of_button() -> None:
    seats = [1, 2, 4, 6, 9]
    assert street_order(seats, button=9, big_blind_seat=2, preflop=True) == [4, 6, 9, 1, 2]
    assert street_order(seats, button=9) == [1, 2, 4, 6, 9]


def test_rule_32_dead_button_on_empty_seat_orders_from_next_seat() -> None:
    assert seats_left_of_button([1, 2, 4, 5], button=3) == [4, 5, 1, 2]
    with pytest.raises(RuleError):
        street_order([1, 2], button=1, preflop=True)


# ------------------------------------------------------------------ big blind option


def test_big_blind_option_after_limps_may_check_and_close_the_round() -> None:
    r = preflop([3, 1, 2], (50, 100))
    r.call(3)
    r.call(1)
    assert r.to_act == 2
    assert r.can_check(2)
    r.check(2)
    assert r.round_complete


def test_big_blind_option_raise_reopens_for_limpers() -> None:
    r = preflop([3, 1, 2], (50, 100))
    r.call(3)
    r.call(1)
    r.bet_or_raise_to(2, 300)
    assert r.to_act == 3
    assert r.can_raise(3)
    r.call(3)
    r.fold(1)
    assert r.round_complete
    assert r.bets == {1: 100, 2: 300, 3: 300}


def test_big_blind_walk_ends_hand() -> None:
    r = preflop([3, 1, 2], (50, 100))
    r.fold(3)
    r.fold(1)
    assert r.hand_over and r.round_complete and r.to_act is None


def test_short_all_in_big_blind_still_sets_call_at_full_blind() -> None:
    r = preflop([3, 1, 2], (50, 100), stacks={2: 60})
    assert r.current_bet == 100
    assert r.to_call(3) == 100


def test_no_option_when_nobody_left_to_bet_against() -> None:
    # SB all-in for less than the BB: the BB has nothing to act on.
    r = preflop([1, 2], (50, 100), stacks={1: 80})
    r.all_in(1)
    assert r.round_complete


# ------------------------------------------------------------------ rule 55 and turn


def test_rule_55_cannot_check_facing_a_bet() -> None:
    r = postflop([1, 2], 100)
    r.bet_or_raise_to(1, 300)
    with pytest.raises(RuleError) as err:
        r.check(2)
    assert err.value.rule == "55"


def test_rule_55a_call_facing_no_bet_is_a_check() -> None:
    r = postflop([1, 2], 100)
    action = r.call(1)
    assert (action.kind, action.rule) == ("check", "55-A")


def test_rule_53a_acting_out_of_turn_is_refused_by_the_state_machine() -> None:
    r = postflop([1, 2, 3], 100)
    with pytest.raises(RuleError) as err:
        r.bet_or_raise_to(3, 300)
    assert err.value.rule == "53-A"
    assert not r.can_call(3) and not r.can_check(3) and not r.can_fold(3)
    assert r.can_call(1)  # in turn; facing no bet the call is a check (55-A)


# ------------------------------------------------------------------ rule 43 min raise


def test_rule_43_min_bet_is_big_blind_and_min_raise_the_last_increment() -> None:
    r = postflop([1, 2, 3], 200)
    assert r.min_raise_to(1) == 200
    assert not r.can_bet_or_raise_to(1, 150)
    r.bet_or_raise_to(1, 600)
    assert r.min_raise_to(2) == 1200
    with pytest.raises(RuleError) as err:
        r.bet_or_raise_to(2, 1000)
    assert err.value.rule == "43-A"
    r.bet_or_raise_to(2, 1600)
    assert r.min_raise_to(3) == 2600


def test_rule_43_all_in_for_less_than_min_raise_is_allowed() -> None:
    r = BettingRound(order=[1, 2], stacks={1: BIG, 2: 900}, big_blind=200)
    r.bet_or_raise_to(1, 600)
    action = r.all_in(2)
    assert (action.kind, action.total, action.allin, action.full) == ("raise", 900, True, False)
    assert action.name == "allin"
    assert r.last_full_raise == 600


def test_rule_47_short_all_in_does_not_reopen_for_player_who_acted() -> None:
    r = BettingRound(order=[1, 2, 3], stacks={1: BIG, 2: 150, 3: BIG}, big_blind=100)
    r.bet_or_raise_to(1, 100)
    r.all_in(2)  # 150: a 50 increment
    r.call(3)
    assert r.to_act == 1
    assert r.raise_block(1) == "47-A"
    r.call(1)
    assert r.round_complete


def test_rule_47_example_1_cumulative_all_ins_reopen_via_actions() -> None:
    r = BettingRound(
        order=[1, 2, 3, 4, 5], stacks={1: BIG, 2: 125, 3: BIG, 4: 200, 5: BIG}, big_blind=100
    )
    r.bet_or_raise_to(1, 100)
    r.all_in(2)
    r.call(3)
    r.all_in(4)
    r.call(5)
    assert r.can_raise(1)
    r.call(1)
    assert r.raise_block(3) == "47-A"
    r.call(3)
    assert r.round_complete


def test_rule_47b_limit_half_bet_all_in_reopens() -> None:
    r = BettingRound(
        order=[1, 2, 3], stacks={1: BIG, 2: 150, 3: BIG}, big_blind=100, structure="fl"
    )
    r.bet_or_raise_to(1, 100)
    r.all_in(2)  # 50 more: half a bet
    r.call(3)
    assert r.to_act == 1 and r.can_raise(1)
    r2 = BettingRound(
        order=[1, 2, 3], stacks={1: BIG, 2: 140, 3: BIG}, big_blind=100, structure="fl"
    )
    r2.bet_or_raise_to(1, 100)
    r2.all_in(2)  # 40 more: less than half
    r2.call(3)
    assert r2.raise_block(1) == "47-B"


def test_raise_refused_when_nobody_can_call_it() -> None:
    r = BettingRound(order=[1, 2], stacks={1: 300, 2: BIG}, big_blind=100)
    r.all_in(1)
    assert r.raise_block(2) == "uncalled"
    ruling = r.interpret_push(2, new_chips=[500, 500])
    assert (ruling.kind, ruling.total, ruling.change) == ("call", 300, 700)
    r.apply(2, ruling)
    assert r.round_complete


# ------------------------------------------------------------------ rule 48 limit cap


def test_rule_48_limit_bet_and_three_raises_then_fourth_refused_multiway() -> None:
    r = preflop([3, 4, 5, 1, 2], (50, 100), structure="fl", raise_cap=limit_raise_cap(5))
    r.bet_or_raise_to(3, 200)
    r.bet_or_raise_to(4, 300)
    r.bet_or_raise_to(5, 400)
    assert r.raise_count == 3
    assert r.raise_block(1) == "48"
    assert not r.can_bet_or_raise_to(1, 500)
    ruling = r.interpret_push(1, new_chips=[100, 100, 100, 100, 100])
    assert (ruling.kind, ruling.total, ruling.rule) == ("call", 400, "48")


def test_rule_48_limit_cap_lifted_heads_up() -> None:
    assert limit_raise_cap(2) is None
    r = preflop([1, 2], (50, 100), structure="fl", raise_cap=limit_raise_cap(2))
    for seat, total in ((1, 200), (2, 300), (1, 400), (2, 500), (1, 600)):
        r.bet_or_raise_to(seat, total)
    assert r.raise_count == 5
    assert r.to_act == 2


def test_rule_48_postflop_bet_is_not_a_raise_and_fixed_sizes() -> None:
    assert limit_bet_size("flop", 100) == 100
    assert limit_bet_size("turn", 100) == 200
    r = postflop([1, 2, 3, 4, 5], 100, structure="fl", bet_unit=200)
    assert not r.can_bet_or_raise_to(1, 300)
    r.bet_or_raise_to(1, 200)
    r.bet_or_raise_to(2, 400)
    r.bet_or_raise_to(3, 600)
    r.bet_or_raise_to(4, 800)
    assert r.raise_count == 3
    assert r.raise_block(5) == "48"
    assert r.max_raise_to(5) == 1000


# ------------------------------------------------------------------ pot limit


def test_rule_54_pot_limit_first_raiser_max_is_seven_with_blinds_1_2() -> None:
    r = preflop([3, 4, 1, 2], (1, 2), structure="pl")
    assert r.pot_limit_max(3) == 7
    assert r.max_raise_to(3) == 7
    with pytest.raises(RuleError) as err:
        r.bet_or_raise_to(3, 8)
    assert err.value.rule == "52-B"
    r.bet_or_raise_to(3, 7)
    assert r.pot_limit_max(4) == 24  # call 7 -> pot 17, raise 17 more
    r.bet_or_raise_to(4, 24)
    r.fold(1)
    assert r.pot_limit_max(2) == 80  # pot 34 + call 22 = 56, raise 56 to 80


def test_rule_54_pot_limit_postflop_bet_and_raise() -> None:
    r = postflop([1, 2, 3], 2, structure="pl", pot=20)
    assert r.pot_limit_max(1) == 20
    r.bet_or_raise_to(1, 20)
    assert r.pot_limit_max(2) == 80
    assert r.min_raise_to(2) == 40


def test_rule_54b_short_all_in_blind_does_not_lower_pot_limit() -> None:
    short = preflop([3, 1, 2], (50, 100), structure="pl", stacks={2: 60})
    full = preflop([3, 1, 2], (50, 100), structure="pl")
    assert short.pot_limit_max(3) == full.pot_limit_max(3) == 350


# ------------------------------------------------------------------ completion


def test_round_completes_after_all_check() -> None:
    r = postflop([1, 2, 3], 100)
    for seat in (1, 2, 3):
        assert r.to_act == seat
        r.check(seat)
    assert r.round_complete and not r.hand_over


def test_round_completes_when_bet_is_called_around() -> None:
    r = postflop([1, 2, 3], 100)
    r.check(1)
    r.bet_or_raise_to(2, 300)
    r.call(3)
    assert r.to_act == 1
    r.call(1)
    assert r.round_complete
    assert r.street_total == 900


def test_all_in_players_are_skipped_and_lone_stack_does_not_act() -> None:
    r = BettingRound(order=[1, 2, 3], stacks={1: 0, 2: 0, 3: 5000}, big_blind=100)
    assert r.round_complete


def test_rule_58_fold_facing_no_bet_is_accepted_and_binding() -> None:
    r = postflop([1, 2, 3], 100)
    r.fold(1)
    assert r.live == (2, 3)
    assert r.to_act == 2


# ------------------------------------------------------------------ rule 36 and 53


def test_rule_36_substantial_action_two_actions_with_chips_or_any_three() -> None:
    assert not substantial_action(["check", "check"])
    assert not substantial_action(["fold", "fold"])
    assert substantial_action(["fold", "call"])
    assert substantial_action(["check", "bet"])
    assert substantial_action(["check", "check", "fold"])
    assert not substantial_action(["raise"])
    assert substantial_action([Action(3, "call", 100, allin=True), Action(4, "fold", 0)])


def _rule_53_example_1() -> BettingRound:
    r = postflop([3, 4, 5, 6], 100)
    r.bet_or_raise_to(3, 300)
    r.fold(4)
    assert r.to_act == 5
    return r


def test_rule_53a_example_1_oot_raise_binding_when_action_unchanged() -> None:
    r = _rule_53_example_1()
    held = r.hold_out_of_turn(6, "raise", 800)
    r.call(5)
    resolution = r.resolve_out_of_turn(held)
    assert (resolution.binding, resolution.rule) == (True, "53-A")
    r.bet_or_raise_to(6, 800)


def test_rule_53a_example_1_oot_raise_returned_when_seat_5_raises() -> None:
    r = _rule_53_example_1()
    held = r.hold_out_of_turn(6, "raise", 800)
    r.bet_or_raise_to(5, 600)
    assert not r.resolve_out_of_turn(held).binding
    assert r.min_raise_to(6) == 900


def test_rule_53a_example_2_oot_check_binding_unless_a_bet_intervenes() -> None:
    r = postflop([3, 4, 5, 6], 100)
    r.check(3)
    r.check(4)
    held = r.hold_out_of_turn(6, "check")
    r.check(5)
    assert r.resolve_out_of_turn(held).binding
    r2 = postflop([3, 4, 5, 6], 100)
    r2.check(3)
    r2.check(4)
    held2 = r2.hold_out_of_turn(6, "check")
    r2.bet_or_raise_to(5, 300)
    assert not r2.resolve_out_of_turn(held2).binding


def test_rule_53a_oot_fold_is_binding_even_if_action_changed() -> None:
    r = _rule_53_example_1()
    held = r.hold_out_of_turn(6, "fold")
    r.bet_or_raise_to(5, 600)
    assert r.resolve_out_of_turn(held).binding


def test_rule_53a_resolution_only_when_turn_reaches_the_seat() -> None:
    r = _rule_53_example_1()
    held = r.hold_out_of_turn(6, "call")
    with pytest.raises(RuleError):
        r.resolve_out_of_turn(held)
    with pytest.raises(RuleError):
        r.hold_out_of_turn(5, "call")  # seat 5 is in turn


def test_rule_53b_example_1_call_and_fold_after_skipped_seat_are_binding() -> None:
    assert substantial_action_out_of_turn(["call", "fold"])


def test_rule_53b_example_2_check_and_call_after_skipped_seat_are_binding() -> None:
    assert substantial_action_out_of_turn(["check", "call"])
    assert not substantial_action_out_of_turn(["check"])


def test_rule_43_47_seeded_random_rounds_keep_chips_and_terminate() -> None:
    import random

    rng = random.Random(47)
    for structure in ("nl", "pl", "fl"):
        for _ in range(300):
            n = rng.randint(2, 6)
            order = list(range(1, n + 1))
            stacks = {s: rng.choice([50, 150, 400, 1000, 5000]) for s in order}
            r = preflop(
                order,
                (25, 50),
                sb=order[-2],
                bb=order[-1],
                stacks=stacks,
                structure=structure,
                raise_cap=limit_raise_cap(n),
            )
            before = sum(r.bets.values()) + sum(r.behind.values())
            for _step in range(200):
                seat = r.to_act
                if seat is None:
                    break
                choice = rng.random()
                if choice < 0.15:
                    r.fold(seat)
                elif choice < 0.5 or not r.can_raise(seat):
                    r.call(seat)
                elif choice < 0.7 and r.can_all_in(seat):
                    r.all_in(seat)
                else:
                    total = rng.randint(r.min_raise_to(seat), r.max_raise_to(seat))
                    if r.can_bet_or_raise_to(seat, total):
                        r.bet_or_raise_to(seat, total)
                    else:
                        r.call(seat)
                assert sum(r.bets.values()) + sum(r.behind.values()) == before
                assert all(v >= 0 for v in r.behind.values())
            assert r.round_complete
            live_with_chips = [s for s in r.live if r.behind[s] > 0]
            if not r.hand_over:
                assert all(r.bets[s] == r.current_bet for s in live_with_chips)
