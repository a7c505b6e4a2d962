"""The engine follows a hand from physical events: TDA 2019 rules, through the engine API."""

from __future__ import annotations

from tests.engine_helpers import Table, ev

HOLE = {1: ["As", "Ad"], 2: ["Kc", "Kd"], 3: ["7c", "2d"]}


def _preflop(**kw: object) -> Table:
    """Seats 1-3, button 3: seat 1 posts SB 50, seat 2 BB 100, seat 3 is first to act."""
    table = Table(button=3, **kw)  # type: ignore[arg-type]
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal(HOLE)
    return table


def test_blinds_post_from_chips_in_bet_zones_after_hand_started() -> None:
    table = _preflop()
    posted = table.events("posted")
    assert [(p["seat"], p["blind"], p["amount"]) for p in posted] == [
        (1, "small", 50),
        (2, "big", 100),
    ]
    assert table.state["to_act"] == 3
    assert table.state["seats"]["2"]["bet"] == 100 and table.state["seats"]["2"]["stack"] == 9900


def test_rule_RP11_big_blind_ante_posted_by_big_blind() -> None:
    table = Table(button=3, blinds=(50, 100, 100), bb_ante=True)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100, 100)
    posted = table.events("posted")
    assert (posted[1]["seat"], posted[1]["amount"], posted[1]["ante"], posted[1]["rule"]) == (
        2,
        100,
        100,
        "RP-11",
    )
    assert table.state["pots"] == [{"amount": 100, "eligible": [1, 2, 3]}]
    assert table.state["to_act"] == 3


def test_short_blind_posted_all_in() -> None:
    table = Table(button=3, stacks={1: 10_000, 2: 60, 3: 10_000})
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 25, 25, 5, 5)
    assert table.events("posted")[1]["allin"] is True
    assert table.state["seats"]["2"]["status"] == "allin"
    assert table.state["to_act"] == 3  # the short big blind does not stop the betting


def test_settle_window_a_push_is_read_after_the_quiet_time() -> None:
    table = _preflop()
    table.push(3, 100, settle=False)
    assert table.state["to_act"] == 3  # not settled yet: more chips may follow
    assert table.engine.deadline() == table.t + 1.0
    table.push(3, 100, settle=False)  # a second chip of the same push
    table.do(ev(t=table.t + 1.0, event="tick"))
    assert table.actions()[-1][:3] == (3, "raise", 200)


def test_rule_44_single_overchip_facing_a_bet_is_a_call_with_change() -> None:
    table = _preflop()
    table.push(3, 1000)
    action = table.events("action")[-1]
    assert (action["action"], action["amount"], action["rule"], action["change"]) == (
        "call",
        100,
        "44",
        900,
    )
    assert table.stacks()[3] == 9900


def test_rule_44_overchip_with_raise_declared_is_a_raise() -> None:
    table = _preflop()
    table.button("raise")
    table.push(3, 1000)
    assert table.actions()[-1][:3] == (3, "raise", 1000)
    assert table.state["to_act"] == 1


def test_rule_45_multiple_chips_meeting_50_percent_are_held_to_a_full_raise() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)  # call 100 + 200: a full raise is 100 more, 50% is met
    action = table.events("action")[-1]
    assert (action["action"], action["amount"]) == ("raise", 300)


def test_rule_45_A_every_chip_needed_for_the_call_is_a_call() -> None:
    table = _preflop()
    table.push(3, 25, 25, 25, 25)
    assert table.actions()[-1][:3] == (3, "call", 100)


def test_check_button_facing_a_bet_is_refused_with_an_alert() -> None:
    table = _preflop()
    table.button("check")
    assert [a["type"] for a in table.alerts()] == ["check_refused"]
    assert table.state["to_act"] == 3 and not table.events("action")


def test_big_blind_option_check_closes_preflop() -> None:
    table = _preflop()
    table.push(3, 100)
    table.push(1, 25, 25)
    assert table.state["to_act"] == 2  # the big blind's option
    table.button("check")
    assert table.state["to_act"] is None
    table.board("Ah", "7h", "3s", burn="9c")
    assert table.state["street"] == "flop" and table.state["to_act"] == 1
    assert table.state["pots"] == [{"amount": 300, "eligible": [1, 2, 3]}]


def test_rule_58_out_of_turn_fold_is_binding() -> None:
    table = _preflop()
    table.fold(1)  # seat 3 is to act
    oot = table.events("out_of_turn")
    assert (oot[0]["seat"], oot[0]["action"], oot[0]["status"], oot[0]["rule"]) == (
        1,
        "fold",
        "binding",
        "58",
    )
    table.push(3, 100)
    assert table.state["to_act"] == 2  # seat 1 is skipped
    assert table.state["seats"]["1"]["status"] == "folded"


def test_rule_53A_out_of_turn_call_binding_when_action_unchanged() -> None:
    table = _preflop()
    table.push(1, 50)  # seat 1 calls out of turn: seat 3 is to act
    assert table.events("out_of_turn")[-1]["status"] == "held"
    table.push(3, 100)  # seat 3 calls: the action to seat 1 did not change
    resolved = table.events("out_of_turn")[-1]
    assert (resolved["seat"], resolved["status"]) == (1, "binding")
    assert table.actions()[-1][:3] == (1, "call", 100)
    assert table.state["to_act"] == 2


def test_rule_53A_out_of_turn_call_returnable_when_action_changes() -> None:
    table = _preflop()
    table.push(1, 50)
    table.button("raise")
    table.push(3, 100, 100, 100)  # seat 3 raises: seat 1's action changed
    resolved = table.events("out_of_turn")[-1]
    assert (resolved["seat"], resolved["status"], resolved["rule"]) == (1, "returnable", "53-A")
    assert table.state["to_act"] == 1  # seat 1 has all its options again


def test_rule_36_substantial_action_counted_in_state() -> None:
    table = _preflop()
    assert table.state["substantial_action"] is False
    table.push(3, 100)
    assert table.state["substantial_action"] is False  # one action
    table.fold(1)
    assert table.state["substantial_action"] is True  # two actions, one with chips


def test_rule_RP1_allin_button_lights_the_seat_lamp() -> None:
    table = _preflop()
    table.button("allin", 3)
    declared = table.events("declared")[-1]
    assert (declared["seat"], declared["declaration"], declared["rule"]) == (3, "allin", "RP-1")
    table.push(3, 5000, 1000, 1000, 1000, 1000, 1000)
    assert table.actions()[-1][:3] == (3, "allin", 10_000)
    assert table.engine.lamps()["allin3"] is True
    assert table.engine.lamps()["allin1"] is False


def _all_in_hand() -> Table:
    table = Table(button=3, stacks={1: 700, 2: 5000, 3: 5000})
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal({1: ["Qs", "Qd"], 2: ["Kc", "Kd"], 3: ["As", "Ah"]})
    table.hole = {1: ["Qs", "Qd"], 2: ["Kc", "Kd"], 3: ["As", "Ah"]}
    return table


def test_rule_16_example_2_face_up_only_when_no_more_betting_is_possible() -> None:
    table = _all_in_hand()
    table.push(3, 100)  # C calls
    table.button("allin", 1)
    table.push(1, 500, 100, 25, 25)  # A all-in for 700
    table.push(2, 500, 100)  # B calls
    table.push(3, 500, 100)  # C calls
    assert not table.events("hands_tabled")  # B and C have chips: betting still possible
    table.board("2c", "7d", "9h", burn="3c")
    table.button("check")
    table.button("check")
    assert not table.events("hands_tabled")
    table.board("Jc", burn="4c")
    table.button("allin", 2)
    table.push(2, 1000, 1000, 1000, 1000, 100, 100, 100)  # B all-in for the rest (4300)
    table.push(3, 1000, 1000, 1000, 1000, 100, 100, 100)  # C calls
    tabled = table.events("hands_tabled")
    assert len(tabled) == 1 and tabled[0]["rule"] == "16"
    assert tabled[0]["showdown"] == {"1": ["Qs", "Qd"], "2": ["Kc", "Kd"], "3": ["As", "Ah"]}
    assert table.state["seats"]["1"]["shown"] == ["Qs", "Qd"]
    table.board("5s", burn="6c")
    table.push_pot()
    awards = table.events("pot_awarded")
    # Rule 16 addendum: the side pot between B and C first, then the main pot.
    assert [(a["pot"], a["amount"], a["winners"]) for a in awards] == [
        (1, 8600, [3]),
        (0, 2100, [3]),
    ]
    assert table.stacks() == {1: 0, 2: 0, 3: 10_700}


def test_rule_16_example_3_face_up_when_betting_is_over_at_the_river() -> None:
    table = _all_in_hand()
    table.push(3, 100)
    table.button("allin", 1)
    table.push(1, 500, 100, 25, 25)
    table.push(2, 500, 100)
    table.push(3, 500, 100)
    for board, burn in ((("2c", "7d", "9h"), "3c"), (("Jc",), "4c")):
        table.board(*board, burn=burn)
        table.button("check")
        table.button("check")
        assert not table.events("hands_tabled")
    table.board("5s", burn="6c")
    table.button("check")
    table.button("check")
    assert table.events("hands_tabled")[0]["seats"] == [1, 2, 3]
    assert table.events("showdown")[-1]["order"] == [1, 2, 3]


def test_rule_16_example_1_heads_up_all_in_on_the_turn_turns_both_up() -> None:
    table = Table(button=2, seats=(1, 2), stacks={1: 3000, 2: 9000})
    table.shuffle()  # heads-up: seat 2 (button) posts the small blind
    table.push(2, 25, 25)
    table.push(1, 100)
    table.deal({1: ["9s", "9d"], 2: ["Ac", "Kc"]})
    table.hole = {1: ["9s", "9d"], 2: ["Ac", "Kc"]}
    table.push(2, 25, 25)  # button completes
    table.button("check")
    table.board("2c", "7d", "Th", burn="3c")
    table.button("check")
    table.button("check")
    table.board("Jc", burn="4c")
    assert not table.events("hands_tabled")
    table.button("allin", 1)
    table.push(1, 1000, 1000, 500, 100, 100, 100, 100)  # all-in for 2900
    table.push(2, 1000, 1000, 500, 100, 100, 100, 100)
    assert table.events("hands_tabled")[0]["showdown"] == {"1": ["9s", "9d"], "2": ["Ac", "Kc"]}


def test_rule_20A_odd_chip_to_first_seat_left_of_the_button() -> None:
    table = Table(button=3, seats=(1, 2, 3), stacks=10_000, blinds=(25, 50, 0))
    table.shuffle()
    table.push(1, 25)
    table.push(2, 25, 25)
    table.deal({1: ["As", "2c"], 2: ["Ad", "2d"], 3: ["7c", "3h"]})
    table.push(3, 25, 25)
    table.push(1, 25)
    table.button("check")
    table.board("Kh", "Qh", "Jd", burn="4c")
    table.button("check")
    table.button("check")
    table.push(3, 25, 25, 25)  # seat 3 bets 75
    table.push(1, 25, 25, 25)
    table.push(2, 25, 25, 25)
    table.board("Td", burn="5c")
    for _ in range(3):
        table.button("check")
    table.board("9s", burn="6c")
    for _ in range(3):
        table.button("check")
    table.push_pot()
    award = table.events("pot_awarded")[-1]
    # 375 split between seats 1 and 2 (both ace-high straights): 188 / 187, the odd chip
    # to seat 1, first left of the button.
    assert award["winners"] == [1, 2] and award["rule"] == "20-A"
    assert award["shares"] == {"1": 188, "2": 187}


def test_rule_12_cards_speak_and_rule_17_showdown_order_last_aggressor_first() -> None:
    table = _preflop()
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    for board, burn in ((("2c", "7d", "9h"), "3c"), (("Jc",), "4c")):
        table.board(*board, burn=burn)
        for _ in range(3):
            table.button("check")
    table.board("5s", burn="6c")
    table.button("check")
    table.push(2, 100)  # seat 2 bets the river
    table.push(3, 100)
    table.push(1, 100)
    show = table.events("showdown")[-1]
    assert show["order"] == [2, 3, 1] and show["rule"] == "17-A"
    table.push_pot()
    award = table.events("pot_awarded")[-1]
    # Cards speak: seat 3's 7-2 made two pair on this board and beats the aces.
    assert award["winners"] == [3] and award["amount"] == 600
    assert award["showdown"]["3"]["rank"] == "two pair, sevens and twos"
    # The winner's hand is tabled and public; a losing hand not shown stays private.
    assert set(award["showdown"]) == {"3"}


def test_rule_17_no_river_bet_first_seat_left_of_button_shows_first() -> None:
    table = _preflop()
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    for board, burn in ((("2c", "7d", "9h"), "3c"), (("Jc",), "4c"), (("5s",), "6c")):
        table.board(*board, burn=burn)
        for _ in range(3):
            table.button("check")
    assert table.events("showdown")[-1]["order"] == [1, 2, 3]


def test_rule_13_hand_mucked_at_showdown_before_it_is_read_forfeits() -> None:
    table = _preflop()
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    for board, burn in ((("2c", "7d", "9h"), "3c"), (("Jc",), "4c"), (("5s",), "6c")):
        table.board(*board, burn=burn)
        for _ in range(3):
            table.button("check")
    table.fold(3)  # the best hand (two pair) goes into the muck untabled
    mucked = table.events("hand_mucked")[-1]
    assert (mucked["seat"], mucked["rule"]) == (3, "13-B")
    table.push_pot()
    award = table.events("pot_awarded")[-1]
    assert award["winners"] == [1] and "3" not in award["showdown"]


def test_rule_15B_uncalled_bet_returned_and_pot_to_last_player() -> None:
    table = _preflop()
    table.button("raise")
    table.push(3, 500)
    table.fold(1)
    table.fold(2)
    returned = table.events("uncalled_bet_returned")
    assert [(r["seat"], r["amount"]) for r in returned] == [(3, 400)]
    award = table.events("pot_awarded")[-1]
    assert (award["amount"], award["winners"], award["showdown"]) == (250, [3], {})
    assert table.stacks() == {1: 9950, 2: 9900, 3: 10_150}
    assert table.events()[-1]["type"] == "hand_completed"


def test_rule_21_each_side_pot_split_separately() -> None:
    table = Table(button=3, stacks={1: 300, 2: 600, 3: 5000})
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal({1: ["As", "Ah"], 2: ["Ks", "Kh"], 3: ["Qs", "Qh"]})
    table.hole = {1: ["As", "Ah"], 2: ["Ks", "Kh"], 3: ["Qs", "Qh"]}
    table.button("allin", 3)
    table.push(3, 1000, 1000, 1000, 1000, 1000)
    table.button("allin", 1)
    table.push(1, 100, 100, 25, 25)
    table.button("allin", 2)
    table.push(2, 100, 100, 100, 100, 100)
    table.board("2c", "7d", "9h", burn="3c")
    table.board("Jc", burn="4c")
    table.board("5d", burn="6c")
    table.push_pot()
    awards = [(a["pot"], a["amount"], a["winners"]) for a in table.events("pot_awarded")]
    assert awards == [(1, 600, [2]), (0, 900, [1])]
    assert table.events("uncalled_bet_returned")[0]["amount"] == 4400
    assert table.stacks() == {1: 900, 2: 600, 3: 4400}


def test_unregistered_chip_raises_a_counterfeit_alert_and_is_not_counted() -> None:
    from kernel.inputs import TagIn

    table = _preflop()
    table.engine.chips = type("Reg", (), {"value_of": staticmethod(lambda uid: None)})()
    table.do(TagIn(t=table.step(), antenna="bet3", uid="04C0FFEE000001"))
    table.do(TagIn(t=table.step(2.0), antenna="bet3", uid="04C0FFEE000001"))
    alerts = [a for a in table.alerts() if a["type"] == "unknown_tag"]
    assert alerts and alerts[0]["severity"] == "critical"
    assert table.state["to_act"] == 3 and not table.events("action")


def test_rule_48_fixed_limit_three_raises_cap_multiway() -> None:
    table = Table(button=3, game="flhe", blinds=(50, 100, 0))
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal(HOLE)
    table.button("raise")
    table.push(3, 100, 100)  # raise to 200 (1)
    table.button("raise")
    table.push(1, 100, 100, 50)  # raise to 300 (2)
    table.button("raise")
    table.push(2, 100, 100, 100)  # raise to 400 (3): the cap
    table.button("raise")
    table.push(3, 100, 100, 100)  # a fourth raise is not allowed: read as a call
    action = table.events("action")[-1]
    assert (action["action"], action["amount"]) == ("call", 400)
    assert action["change"] == 100


def test_rule_54_pot_limit_maximum_bet_caps_an_oversized_push() -> None:
    table = Table(button=3, game="plhe", blinds=(50, 100, 0))
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal(HOLE)
    table.button("raise")
    table.push(3, 1000)  # pot is 150 + call 100 = 250: max raise to 350
    action = table.events("action")[-1]
    assert (action["action"], action["amount"]) == ("raise", 350)
    assert action["change"] == 650


def _to_river_heads_up(hole: dict[int, list[str]]) -> Table:
    table = Table(button=2, seats=(1, 2))
    table.shuffle()
    table.push(2, 25, 25)
    table.push(1, 100)
    table.deal(hole)
    table.push(2, 25, 25)
    table.button("check")
    for board, burn in ((("3d", "8s", "Td"), "5c"), (("Qc",), "6c"), (("4s",), "9c")):
        table.board(*board, burn=burn)
        table.button("check")
        table.button("check")
    return table


def test_rule_1_unread_hand_holds_the_pot_until_it_is_read() -> None:
    table = _to_river_heads_up({1: ["As"], 2: ["7h", "2c"]})  # seat 1's second card unread
    table.push_pot()
    assert not table.events("pot_awarded")
    assert table.alerts()[-1]["type"] == "hand_unreadable"
    assert sum(table.stacks().values()) == 19_800  # 200 held in the pot, none paid on a guess
    table.do(ev(t=table.step(), event="tag_in", antenna="seat1", card="Ah"))  # read again
    table.push_pot()
    assert table.events("pot_awarded")[-1]["winners"] == [1]
    assert table.stacks() == {1: 10_100, 2: 9900}


def test_abandoned_hand_refunds_every_chip_including_the_big_blind_ante() -> None:
    table = Table(button=3, blinds=(50, 100, 100), bb_ante=True)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100, 100)
    table.shuffle()  # the next hand starts before this one had a result
    alert = next(a for a in table.alerts() if a["type"] == "hand_abandoned")
    assert alert["refunds"] == {"1": 50, "2": 200}
    assert sum(s for s in table.stacks().values()) == 30_000


def test_rule_58_fold_while_blinds_are_posted_does_not_stall_the_hand() -> None:
    table = Table(button=4, seats=(1, 2, 3, 4))
    table.shuffle()
    table.push(1, 25, 25)
    table.deal({1: ["2c", "3c"], 2: ["4c", "5c"], 3: ["6c", "7c"], 4: ["8c", "9c"]})
    table.fold(3)  # under the gun mucks before the big blind is in
    table.push(2, 100)
    assert table.state["to_act"] == 4
    table.push(4, 100)
    table.push(1, 50)
    table.button("check")
    assert table.state["to_act"] is None and table.state["seats"]["3"]["status"] == "folded"


def test_rule_53A_allin_declaration_lapses_when_the_action_changes() -> None:
    table = _preflop()
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    table.board("2c", "7d", "9h", burn="3c")
    table.button("allin", 3)  # seat 3 declares out of turn; seat 1 is to act
    table.push(1, 500)  # seat 1 bets: the action to seat 3 changed
    table.push(2, 500)
    table.push(3, 500)  # a call of 500, not an all-in
    assert table.actions()[-1][:3] == (3, "call", 500)
    assert table.stacks()[3] == 9400


def test_rule_53A_held_action_lapses_when_the_street_ends() -> None:
    table = _preflop()
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    table.board("2c", "7d", "9h", burn="3c")
    table.button("check")  # seat 1
    table.push(1, 500)  # seat 1 pushes again, out of turn: held
    table.button("check")  # seat 2
    table.button("check")  # seat 3: the flop is over
    lapsed = table.events("out_of_turn")[-1]
    assert (lapsed["seat"], lapsed["status"]) == (1, "returnable")
    table.board("Jc", burn="4c")
    assert table.state["to_act"] == 1 and table.stacks()[1] == 9900


def test_card_moved_to_another_seat_leaves_the_first_seats_hand() -> None:
    table = Table(button=3)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    # Seat 1's second card is pitched, then slides on to seat 2 before seat 2's second card.
    table.do(
        ev(t=table.step(), event="tag_in", antenna="seat1", card="Ad"),
        ev(t=table.step(), event="tag_in", antenna="seat2", card="Kd"),
        ev(t=table.step(), event="tag_in", antenna="seat3", card="Qd"),
        ev(t=table.step(), event="tag_in", antenna="seat1", card="As"),
        ev(t=table.step(), event="tag_out", antenna="seat1", card="As"),
        ev(t=table.step(), event="tag_in", antenna="seat2", card="As"),
    )
    assert table.engine.hand is not None
    assert table.engine.hand.hole[1] == ["Ad"]
    assert "As" in table.engine.hand.hole[2]
    assert table.alerts()[-1]["type"] == "card_moved_between_seats"
    hole = [m.payload for m in table.out if m.topic == "holecards"]
    assert hole[-2] == hole[-2] | {"seat": 1, "cards": ["Ad"]}  # TV is told at once


def test_rule_18_losing_hand_not_tabled_stays_private() -> None:
    table = _to_river_heads_up({1: ["As", "Ah"], 2: ["7h", "2c"]})
    table.shuffle()  # next hand: the pot is awarded, the loser never tabled
    award = table.events("pot_awarded")[-1]
    assert award["winners"] == [1] and set(award["showdown"]) == {"1"}
    public = "\n".join(str(m.payload) for m in table.out if m.topic != "holecards")
    assert "'7h'" not in public and "'2c'" not in public


def test_rule_14_hand_pushed_forward_but_not_into_the_muck_stays_live() -> None:
    table = _to_river_heads_up({1: ["As", "Ah"], 2: ["7h", "2c"]})
    # Seat 1 discards face down: the cards leave its antenna but never reach the muck.
    table.do(*[ev(t=table.step(), event="tag_out", antenna="seat1", card=c) for c in ("As", "Ah")])
    assert table.state["seats"]["1"]["status"] == "active"
    table.push_pot()
    assert table.events("pot_awarded")[-1]["winners"] == [1]


def test_rule_65_killed_hand_gets_its_uncalled_bet_back() -> None:
    table = Table(button=2, seats=(1, 2))
    table.shuffle()
    table.push(2, 25, 25)
    table.push(1, 100)
    table.deal({1: ["As", "Ah"], 2: ["7h", "2c"]})
    table.push(2, 25, 25)
    table.button("check")
    table.board("3d", "8s", "Td", burn="5c")
    table.push(1, 500)  # seat 1 bets
    table.fold(1)  # the dealer kills seat 1's hand by mistake before seat 2 acts
    returned = table.events("uncalled_bet_returned")
    assert [(r["seat"], r["amount"]) for r in returned] == [(1, 500)]
    assert table.events("pot_awarded")[-1]["winners"] == [2]
    assert table.stacks() == {1: 9900, 2: 10_100}


def test_rule_42_raise_declared_then_the_full_amount_in_one_push() -> None:
    table = _preflop()
    table.button("raise")  # method 3: "raise" declared before the chips
    table.push(3, 100, 100, 25, 25, 25, 25)  # 300 in one motion
    assert table.actions()[-1][:3] == (3, "raise", 300)
    assert table.events("action")[-1]["declared"] == "raise"
