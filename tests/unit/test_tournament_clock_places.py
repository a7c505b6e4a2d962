"""The clock (TDA 2019 rule 23; RP-8 B, C, D; Casinos Austria art. 42) and the places and
prizes (RP-8 A; Casinos Austria art. 40), against the rule texts, on the pure modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from room.tournament.clock import Clock
from room.tournament.places import Out, place_group, prize_of, prize_pool, prizes
from room.tournament.structure import PayoutBracket, Payouts
from tests.tournament_rig import basic

MIN = 60.0


def clock_of(tmp_path: Path, minutes: float = 20, breaks: str = "") -> Clock:
    return Clock(basic(tmp_path, players=4, minutes=minutes, breaks=breaks).steps)


def test_rule_23_a_new_level_starts_when_the_clock_reaches_zero(tmp_path: Path) -> None:
    c = clock_of(tmp_path)
    c.start(1000.0)
    assert c.advance(1000.0 + 19 * MIN) == []
    assert c.view(1000.0 + 19 * MIN) == (0, pytest.approx(MIN))
    assert c.advance(1000.0 + 20 * MIN) == [1]
    assert c.step.level is not None and c.step.level.number == 2


def test_clock_pause_resume_and_added_time(tmp_path: Path) -> None:
    c = clock_of(tmp_path)
    c.start(0.0)
    c.pause(5 * MIN)
    assert c.view(50 * MIN) == (0, pytest.approx(15 * MIN))  # paused: time stands still
    c.resume(50 * MIN)
    c.add(50 * MIN, 2 * MIN)
    assert c.view(51 * MIN)[1] == pytest.approx(16 * MIN)
    assert c.add(51 * MIN, -17 * MIN) == [1]  # less than none left: the next level, short
    assert c.view(51 * MIN) == (1, pytest.approx(19 * MIN))


def test_clock_breaks_come_after_their_level(tmp_path: Path) -> None:
    c = clock_of(tmp_path, breaks="[[break]]\nafter_level = 1\nminutes = 10\n")
    c.start(0.0)
    assert c.advance(20 * MIN) == [1] and c.step.is_break
    assert c.next_level_index(1) == 2
    assert c.advance(30 * MIN) == [2] and not c.step.is_break
    public = c.public(30 * MIN)
    assert (public["level"], public["on_break"], public["remaining"]) == (2, False, 20 * MIN)


def test_rule_RP8B_each_hand_runs_two_minutes_off_the_clock(tmp_path: Path) -> None:
    # "17:30 remains in the current level when 'finish the current hand…' is announced. At the
    # start of the next hand the clock is set to 15:30. At the start of the following hand it
    # is set to 13:30 and so on."
    c = clock_of(tmp_path)
    c.start(0.0)
    c.freeze(2.5 * MIN)  # 17:30 left
    assert c.view(9 * MIN)[1] == pytest.approx(17.5 * MIN)  # however long the hand takes
    c.run_off(9 * MIN, 2 * MIN)
    assert c.view(9 * MIN)[1] == pytest.approx(15.5 * MIN)
    c.run_off(30 * MIN, 2 * MIN)
    assert c.view(30 * MIN)[1] == pytest.approx(13.5 * MIN)


def test_rule_RP8C_the_clock_is_reduced_every_hand_not_in_batches(tmp_path: Path) -> None:
    c = clock_of(tmp_path)
    c.start(0.0)
    c.freeze(0.0)
    shown = []
    for k in range(1, 5):
        c.run_off(k * 10 * MIN, 2 * MIN)
        shown.append(round(c.view(k * 10 * MIN)[1] / MIN, 3))
    assert shown == [18.0, 16.0, 14.0, 12.0]


def test_rule_RP8D_blinds_go_up_as_hands_run_the_clock_down(tmp_path: Path) -> None:
    c = clock_of(tmp_path)
    c.start(0.0)
    c.freeze(19 * MIN)  # one minute left
    assert c.run_off(19 * MIN, 2 * MIN) == [1]
    assert c.view(19 * MIN) == (1, pytest.approx(19 * MIN))  # the minute over runs on
    c.unfreeze(20 * MIN)
    assert c.view(21 * MIN)[1] == pytest.approx(18 * MIN)


def test_rule_RP8B_a_break_reached_hand_for_hand_runs_on_the_clock(tmp_path: Path) -> None:
    c = clock_of(tmp_path, breaks="[[break]]\nafter_level = 1\nminutes = 10\n")
    c.start(0.0)
    c.freeze(19 * MIN)
    assert c.run_off(19 * MIN, 2 * MIN) == [1] and c.step.is_break
    assert c.running  # a break is ten minutes of the clock, not hands
    assert c.advance(29 * MIN + 60) == [2]
    assert not c.running  # hand-for-hand again: levels go by hands


def test_casinos_austria_art_42_heads_up_levels_last_half_as_long(tmp_path: Path) -> None:
    c = clock_of(tmp_path)
    c.start(0.0)
    c.speed_up(10 * MIN, 0.5)
    assert c.view(10 * MIN)[1] == pytest.approx(5 * MIN)
    c.advance(15 * MIN)
    assert c.index == 1 and c.view(15 * MIN)[1] == pytest.approx(10 * MIN)


def outs(*rows: tuple[str, str, int]) -> list[Out]:
    return [Out(p, t, 7, chips) for p, t, chips in rows]


def test_places_same_hand_ranked_by_chips_at_the_start_of_the_hand() -> None:
    placed = place_group(outs(("a", "t1", 500), ("b", "t1", 2000), ("c", "t1", 900)), 20, None)
    assert {p.player: (p.best, p.worst) for p in placed} == {
        "b": (18, 18),
        "c": (19, 19),
        "a": (20, 20),
    }
    tied = place_group(outs(("a", "t1", 500), ("b", "t1", 500)), 20, None)
    assert {p.player: (p.best, p.worst) for p in tied} == {"a": (19, 20), "b": (19, 20)}


def test_rule_RP8A_busts_in_the_same_hand_for_hand_hand_share_the_places_paid() -> None:
    # "NLHE tournament paying 50 players. 52 players remain when the announcement is made and
    # during the current hand 3 players bust. All 3 players will share in the 50th place payout."
    placed = place_group(
        outs(("a", "t1", 5000), ("b", "t2", 800), ("c", "t1", 300)), 52, "all_share"
    )
    assert {(p.best, p.worst) for p in placed} == {(50, 52)}
    paid = [0] * 49 + [300]  # 50 places paid, the 50th 300
    share = prize_of(paid, placed[0], sharing_with=3)
    assert share == 100


def test_casinos_austria_art_40_different_tables_share_the_same_table_by_chips() -> None:
    # "Se due o più partecipanti escono dal gioco durante la stessa mano, ma in tavoli diversi,
    # la vincita viene suddivisa tra questi giocatori. Se i giocatori si dovessero trovare allo
    # stesso tavolo, occupa il miglior piazzamento quel giocatore che prima dell'inizio della
    # mano aveva la somma maggiore di chip."
    placed = place_group(
        outs(("a1", "t1", 5000), ("a2", "t1", 3000), ("b1", "t2", 4000)), 12, "tables_share"
    )
    got = {p.player: (p.best, p.worst) for p in placed}
    assert got == {"a2": (11, 12), "b1": (11, 12), "a1": (10, 10)}
    same = place_group(outs(("a1", "t1", 5000), ("a2", "t1", 3000)), 12, "tables_share")
    assert {p.player: (p.best, p.worst) for p in same} == {"a1": (11, 11), "a2": (12, 12)}


def test_payouts_bracket_by_entries_and_rounding() -> None:
    payouts = Payouts(
        buy_in=100,
        guarantee=1000,
        unit=5,
        brackets=(
            PayoutBracket(1, (100.0,)),
            PayoutBracket(6, (65.0, 35.0)),
            PayoutBracket(20, (50.0, 30.0, 20.0)),
        ),
    )
    assert prize_pool(payouts, 4) == 1000  # the guarantee
    assert prizes(payouts, 4) == [1000]
    assert prizes(payouts, 7) == [650, 350]
    assert prizes(payouts, 21) == [1050, 630, 420]
    odd = Payouts(buy_in=33, unit=5, brackets=(PayoutBracket(1, (50.0, 30.0, 20.0)),))
    paid = prizes(odd, 10)  # 330: 165, 95 (99 rounded down), 65 (66), the rest to first
    assert paid == [170, 95, 65] and sum(paid) == 330
