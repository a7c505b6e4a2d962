"""At-least-once across restarts: the durable `acked` mark and what a replay selects to publish
again (the publisher's PUBACK watermark on a real mosquitto: tests/system/test_publisher.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.delivery import AckedMark, Redelivery, acked_path
from kernel.messages import ALERTS, EVENTS, HOLECARDS, STATE, Message

pytestmark = pytest.mark.timeout(60)

PREFIX = "poker/r1/t01"


def event(seq: int) -> Message:
    return Message(EVENTS, {"type": "action", "seq": seq, "hand": 1, "t": float(seq)})


def state(seq: int) -> Message:
    return Message(STATE, {"seq": seq}, retain=True)


def hole(seat: int) -> Message:
    return Message(HOLECARDS, {"hand": 1, "seat": seat, "cards": ["As"], "t": 1.0})


def alert(n: int) -> Message:
    return Message(ALERTS, {"type": "x", "n": n})


# --------------------------------------------------------------------------- the mark file


def test_mark_file_round_trip_and_never_goes_back(tmp_path: Path) -> None:
    path = acked_path(tmp_path / "t01.journal")
    assert path == tmp_path / "t01.journal.acked"
    mark = AckedMark(path)
    assert mark.load() == 0  # no file yet: everything is sent again
    mark.write(41)
    mark.write(7)  # the mark only grows
    assert path.read_text() == "41\n"
    assert AckedMark(path).load() == 41
    assert not list(tmp_path.glob("*.tmp"))


def test_reset_forgets_the_mark_for_a_new_journal(tmp_path: Path) -> None:
    mark = AckedMark(tmp_path / "acked")
    mark.write(12)
    mark.reset()
    assert mark.written == 0 and AckedMark(tmp_path / "acked").load() == 0
    mark.write(1)  # a new journal counts from 1 again
    assert AckedMark(tmp_path / "acked").load() == 1


def test_a_mark_file_that_is_not_a_number_means_send_everything(tmp_path: Path) -> None:
    path = tmp_path / "acked"
    path.write_text("garbage")
    assert AckedMark(path).load() == 0


def test_mark_writer_follows_its_source_and_writes_the_last_value_at_stop(tmp_path: Path) -> None:
    path = tmp_path / "acked"
    value = [0]
    mark = AckedMark(path, interval=0.02)
    mark.start(lambda: value[0])
    value[0] = 5
    deadline = time.monotonic() + 10
    while mark.written < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert AckedMark(path).load() == 5
    value[0] = 9
    mark.stop()
    assert AckedMark(path).load() == 9


# --------------------------------------------------------------------------- what is re-sent


def _replay(acked: int) -> Redelivery:
    redo = Redelivery(acked)
    redo.add([event(1), hole(1), state(1)])
    redo.add([event(2), alert(1), state(2)])
    redo.add([hole(2)])  # an input that made no event
    redo.add([event(3), event(4), state(4)])
    return redo


def test_everything_after_the_acknowledged_event_is_sent_again_then_the_state() -> None:
    redo = _replay(2)
    assert redo.result() == [alert(1), hole(2), event(3), event(4), state(4)]
    assert not redo.behind and not redo.gap


def test_without_a_mark_the_whole_replay_is_sent_again() -> None:
    assert _replay(0).result() == [
        event(1),
        hole(1),
        event(2),
        alert(1),
        hole(2),
        event(3),
        event(4),
        state(4),
    ]


def test_all_acknowledged_leaves_only_the_state() -> None:
    assert _replay(4).result() == [state(4)]


def test_a_broker_ahead_of_the_journal_is_detected() -> None:
    redo = _replay(6)  # e.g. the journal's tail was lost in a power cut
    assert redo.behind
    assert redo.result() == [state(4)]


def test_a_segment_starting_after_the_mark_is_sent_whole_and_the_gap_reported() -> None:
    redo = Redelivery(2)
    redo.add([event(5), state(5)])  # a checkpoint at seq 4: events 3 and 4 are not here
    assert redo.gap and not redo.behind
    assert redo.result() == [event(5), state(5)]


# ----------------------------------------------------------------- edges (docs/testing.md)


def test_a_replay_starting_at_the_acknowledged_event_sends_only_what_follows_it() -> None:
    """A segment whose first regenerated event is the very one acknowledged."""
    redo = Redelivery(3)
    redo.add([hole(1), event(3), alert(1)])
    redo.add([event(4), state(4)])
    assert redo.result() == [alert(1), event(4), state(4)]
    assert (redo.first_seq, redo.last_seq, redo.gap, redo.behind) == (3, 4, False, False)


def test_without_a_mark_messages_before_the_first_event_are_sent_again_too() -> None:
    redo = Redelivery(0)
    redo.add([alert(1), hole(1)])  # a refused command, a card: no event yet
    redo.add([event(1)])
    assert redo.result() == [alert(1), hole(1), event(1)]


def test_only_events_carry_the_sequence_a_replay_counts() -> None:
    """A `seq` in another topic's payload (the state has one) is not an event's."""
    redo = Redelivery(2)
    redo.add([Message(ALERTS, {"type": "x", "seq": 2}), event(1), event(2), event(3)])
    assert redo.result() == [event(3)]
    assert redo.first_seq == 1


def test_the_mark_is_written_every_tenth_of_a_second_by_default(tmp_path: Path) -> None:
    path = tmp_path / "acked"
    value = [0]
    mark = AckedMark(path)
    mark.start(lambda: value[0])
    try:
        value[0] = 7
        began = time.monotonic()
        while AckedMark(path).load() < 7 and time.monotonic() - began < 5:
            time.sleep(0.005)
        assert AckedMark(path).load() == 7
        assert time.monotonic() - began < 0.5  # documented: at most every 100 ms
        assert path.read_text(encoding="ascii") == "7\n"
        assert not path.with_name("acked.tmp").exists()  # written aside, renamed over
    finally:
        mark.stop()


def test_stop_without_start_writes_nothing_and_a_second_stop_is_harmless(tmp_path: Path) -> None:
    mark = AckedMark(tmp_path / "acked")
    mark.stop()
    assert not (tmp_path / "acked").exists()
    mark.start(lambda: 3)
    mark.stop()
    mark.stop()
    assert AckedMark(tmp_path / "acked").load() == 3
