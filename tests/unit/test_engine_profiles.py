"""Rule profiles in the engine: house rule numbers cited beside TDA 2019, hand-start trigger."""

from __future__ import annotations

from tests.engine_helpers import Table, ev


def test_tda_2015_profile_cites_its_own_numbers_beside_tda_2019() -> None:
    table = Table(button=3, profile="tda-2015")
    started = [e for e in (m.payload for m in table.shuffle()) if e.get("type") == "hand_started"]
    assert started[0]["rule"] == "23" and started[0]["profile_rule"] == "22"


def test_default_profile_adds_no_profile_rule() -> None:
    table = Table(button=3)
    table.shuffle()
    assert "profile_rule" not in table.events("hand_started")[0]


def test_casinos_austria_hand_starts_when_the_dealer_lifts_the_cards() -> None:
    table = Table(button=3, profile="casinos-austria")
    table.shuffle()
    assert not table.events("hand_started")
    assert table.alerts()[-1]["type"] == "shuffler_not_a_trigger"
    table.do(ev(t=table.step(), event="tag_in", antenna="seat1", card="As"))
    started = table.events("hand_started")
    assert len(started) == 1 and started[0]["trigger"] == "first_card"
    assert [m.payload["cards"] for m in table.out if m.topic == "holecards"] == [["As"]]


def test_venezia_starts_on_the_shuffler_button() -> None:
    table = Table(button=3, profile="venezia")
    table.shuffle()
    started = table.events("hand_started")[0]
    assert started["trigger"] == "shuffler" and started["profile_rule"] == "art. 17"


def _straddle_hand(profile: str) -> Table:
    """Seat 3 (left of the big blind) puts out 200 before the cards; everyone calls."""
    table = Table(seats=(1, 2, 3, 4), button=4, profile=profile)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.push(3, 100, 100)
    table.deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"], 4: ["7h", "2c"]})
    table.push(4, 100, 100)
    table.push(1, 100, 50)
    table.push(2, 100)
    return table


def test_campione_straddle_is_posted_and_the_straddler_acts_last_preflop() -> None:
    """Casinò di Campione, house rules, section "Puntate aggiuntive": a straddle of twice the
    big blind, before the cards, by the player left of the big blind, who then acts last and
    may raise."""
    table = _straddle_hand("campione")
    posted = [e for e in table.events("posted") if e["blind"] == "straddle"]
    assert [(e["seat"], e["amount"]) for e in posted] == [(3, 200)]
    assert [(s, a) for s, a, *_ in table.actions()] == [(4, "call"), (1, "call"), (2, "call")]
    assert table.state["to_act"] == 3  # the straddler's option
    table.push(3, 100, 100, 100, 100)  # raises to 600: a full raise of the 200 straddle
    assert table.actions()[-1][:3] == (3, "raise", 600)


def test_tda_2019_has_no_straddle_the_early_chips_are_a_raise() -> None:
    table = _straddle_hand("tda-2019")
    assert not [e for e in table.events("posted") if e["blind"] == "straddle"]
    assert table.actions()[0][:3] == (3, "raise", 200)
    assert table.state["to_act"] is None  # everyone called: no option for seat 3
