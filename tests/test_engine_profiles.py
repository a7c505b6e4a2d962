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
