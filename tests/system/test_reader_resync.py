"""Reader boards re-read after a gap (a board unplugged, the daemon killed) while the dealer
went on: the table ends with the events of an uninterrupted run.

The boards are simulated on real ptys (firmware_sim), the daemon is `tablectl run` in a
subprocess on a real mosquitto; a USB unplug removes the board's device and pty, the
replugged board boots again with the tags that lie on its antennas.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from drivers.reader.driver import ReaderDriver
from firmware_sim.reader_board import ReaderBoardSim
from kernel.inputs import Timed
from tests.broker import Subscriber
from tests.table_rig import (
    PREFIX,
    Expectation,
    Player,
    Step,
    TableRig,
    dedup,
    events_of,
    poll,
    session,
    top_seq,
    without_t,
)

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]


def _alert_types(room: Subscriber) -> list[str]:
    return [json.loads(m.payload)["type"] for m in room.messages(f"{PREFIX}/alerts")]


def _pushes_onto_chips(steps: list[Step]) -> list[int]:
    """Steps that push chips into a bet zone which already holds chips (a blind, a bet)."""
    held: dict[str, int] = {}
    found = []
    for k, step in enumerate(steps):
        zones = {m.antenna for m in step.moves if m.op == "in" and m.antenna.startswith("bet")}
        pushed = len(zones) == 1 and all(m.op == "in" for m in step.moves)
        if pushed and held.get(next(iter(zones)), 0):
            found.append(k)
        for move in step.moves:
            if move.antenna.startswith("bet"):
                held[move.antenna] = held.get(move.antenna, 0) + (1 if move.op == "in" else -1)
    return found


def _finish(player: Player, room: Subscriber, expect: Expectation, start: int) -> None:
    player.play(range(start, len(player.steps)))
    final = expect.seq_after[-1]
    assert poll(lambda: top_seq(room) >= final, 30)
    got = [without_t(e) for _, e in sorted(dedup(events_of(room.messages())).items())]
    assert got == [without_t(e) for e in expect.events]


def test_rule_51B_not_applied_to_a_raise_cut_by_a_chip_board_unplug(
    table: tuple[TableRig, Subscriber],
) -> None:
    """The big blind raises: the first chip onto its blind is read, the chip board is
    unplugged, the second chip goes in while it is away. Re-read on replug, the push is
    read whole (a raise, `rule` null, `owed` 0), not as an undercall then more chips
    (51-B / 43-A with chips owed): chips the catch-up adds to a cut push are dated to the
    moment the board went away."""
    rig, room = table
    steps = session(rig.config, 1, 7)
    expect = Expectation(rig.config, steps)
    player = Player(rig, room, steps, expect)
    player.start()
    k = _pushes_onto_chips(steps)[0]  # the big blind's seat raises: chips onto its blind
    first, *rest = steps[k].moves
    assert first.antenna == "bet2" and rest, steps[k]
    player.play(range(k))

    rig.move(first)
    rig.chips_board.unplug()
    assert poll(lambda: "reader_offline" in _alert_types(room), 30), _alert_types(room)
    for move in rest:  # while nobody reads the chips
        rig.move(move)
    player.made.add(k)
    rig.chips_board.plug()
    assert poll(lambda: "reader_online" in _alert_types(room), 30), _alert_types(room)
    _finish(player, room, expect, k)
    raises = [e for e in events_of(room.messages()) if e.get("action") == "raise"]
    assert {(e["rule"], e["owed"]) for e in raises} == {(None, 0)}


DOWNTIME = 2.5  # systemd's RestartSec=2 plus a start
HAND_GAP = 0.05  # between two motions of the dealer's hands


def _call_then_flop(rig: TableRig) -> tuple[list[Step], int, list[int]]:
    """The session with the flop dealt before the preflop bets are gathered (as a dealer
    may): the steps, the index of the last step before the gap, and the steps of the gap:
    the last preflop call (chip board), then the burn and the three flop cards (card
    board)."""
    steps = session(rig.config, 1, 7)
    gather = next(
        k for k, s in enumerate(steps) if any(m.antenna == "pot" and m.op == "in" for m in s.moves)
    )
    burn = gather + 1
    assert [m.antenna for m in steps[burn].moves] == ["burn"]
    flop = [burn + 1, burn + 2, burn + 3]
    assert all([m.antenna for m in steps[k].moves] == ["board"] for k in flop)
    order = [*range(gather), burn, *flop, gather, *range(flop[-1] + 1, len(steps))]
    return (
        [steps[k] for k in order],
        gather - 2,
        [gather - 1, gather, gather + 1, gather + 2, gather + 3],
    )


def _deal(rig: TableRig, steps: list[Step], gap: list[int]) -> None:
    """The dealer's motions of `gap`, a hand's pace apart (the boards see them in order)."""
    for k in gap:
        for move in steps[k].moves:
            rig.move(move)
            time.sleep(HAND_GAP)


def test_moves_on_both_boards_while_the_daemon_was_killed_are_read_in_the_order_made(
    table: tuple[TableRig, Subscriber],
) -> None:
    """SIGKILL, then the last preflop call (chips), the burn and the flop (cards) while the
    daemon is down: read in that order, not board by board nor antenna by antenna (no
    premature card procedure, no burn_count warning)."""
    rig, room = table
    steps, last, gap = _call_then_flop(rig)
    assert [m.antenna for k in gap for m in steps[k].moves][-4:] == ["burn", *["board"] * 3]
    expect = Expectation(rig.config, steps)
    player = Player(rig, room, steps, expect)
    player.start()
    player.play(range(last + 1))
    rig.kill()
    _deal(rig, steps, gap)
    player.made.update(gap)
    time.sleep(DOWNTIME)
    player.start()
    _finish(player, room, expect, gap[0])
    assert "burn_count" not in _alert_types(room)


def test_a_call_made_while_the_chip_board_was_unplugged_is_read_before_the_flop(
    table: tuple[TableRig, Subscriber],
) -> None:
    """The chip board unplugged, the last preflop call made on it, then the burn and the
    flop dealt on the card board, which reads them live: the card board's moves wait for
    the chip board's catch-up, so the call is read first (no premature card)."""
    rig, room = table
    steps, last, gap = _call_then_flop(rig)
    expect = Expectation(rig.config, steps)
    player = Player(rig, room, steps, expect)
    player.start()
    player.play(range(last + 1))
    seq = top_seq(room)
    rig.chips_board.unplug()
    assert poll(lambda: "reader_offline" in _alert_types(room), 30), _alert_types(room)
    _deal(rig, steps, gap)
    player.made.update(gap)
    time.sleep(1.0)
    assert top_seq(room) == seq, "a card was read while the chip board could not say the call"
    rig.chips_board.plug()
    assert poll(lambda: "reader_online" in _alert_types(room), 30), _alert_types(room)
    _finish(player, room, expect, gap[0])
    assert "burn_count" not in _alert_types(room)


# -- the host driver: the board's arrival times on the host's clock ------------------------

CARDS = ("seat1", "seat2", "board", "burn", "muck")
A, B = "04A1B2C3D4E5F6", "0466778899AABB"


def _catch_up_of(board: ReaderBoardSim, link: Path) -> tuple[list[Timed], list[str], ReaderDriver]:
    """Start a host driver (as a restarted daemon does) and take its first catch-up."""
    batches: list[list[Timed]] = []
    alerts: list[str] = []
    driver = ReaderDriver(
        str(link),
        CARDS,
        lambda event: batches.append([(event, None)]),
        lambda kind, _message, _details: alerts.append(kind),
        time.time,
        on_catch_up=batches.append,
    )
    driver.start()
    assert driver.wait_synced(10)
    time.sleep(0.3)  # an ERROR answer, if any, has arrived
    driver.stop()
    return [item for batch in batches for item in batch], alerts, driver


def test_driver_dates_the_moves_it_re_reads_by_the_boards_clock(tmp_path: Path) -> None:
    link = tmp_path / "tablectl-cards"
    with ReaderBoardSim(CARDS, link=link) as board:
        burned = time.time()
        board.place("burn", B)
        time.sleep(0.5)
        dealt = time.time()
        board.place("board", A)
        time.sleep(0.2)
        batch, alerts, driver = _catch_up_of(board, link)
    assert driver.hello is not None and driver.hello.protocol >= 3
    assert [(e.antenna, e.uid) for e, _ in batch] == [("board", A), ("burn", B)]  # port order
    when = {e.antenna: t for e, t in batch}
    assert when["board"] is not None and when["burn"] is not None
    # within the time a busy machine takes to read a tag (measured: 1.2 ms mean, 5.8 max)
    assert abs(when["burn"] - burned) < 0.15 and abs(when["board"] - dealt) < 0.15
    assert when["burn"] < when["board"]  # the order the dealer made them
    assert "reader_error" not in alerts


def test_driver_reading_a_version_2_board_asks_once_and_dates_nothing(tmp_path: Path) -> None:
    link = tmp_path / "tablectl-cards"
    with ReaderBoardSim(CARDS, link=link, legacy=True) as board:
        board.place("burn", B)
        board.place("board", A)
        batch, alerts, driver = _catch_up_of(board, link)
        requests = list(board.requests)
    assert driver.hello is not None and driver.hello.protocol == 2
    assert [(e.antenna, e.uid, t) for e, t in batch] == [("board", A, None), ("burn", B, None)]
    assert alerts == []  # its "unexpected 0x83" is no fault
    assert requests.count("arrivals") == 1 and requests.count("inventory") == 1
