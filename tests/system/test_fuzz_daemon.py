"""Fuzz of the daemon's serial input (hypothesis): bytes on the card reader board's pty,
through the real driver, the queue and the engine, into the journal.

The card reader is the firmware simulator on a real pty, opened by the daemon as a serial
port (backend "serial"), exactly as a USB board. Hypothesis chooses what goes on the wire:
arbitrary bytes (line noise, false syncs and headers included), corrupted copies of real
frames, and real tag moves (TAG_IN / TAG_OUT frames from the board). The promise: no
exception escapes, the daemon never stops taking input, and every real frame embedded in
the noise reaches the engine and the journal, exactly once and in order.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.config import load_config
from controller.daemon import Daemon
from controller.intake import Intake
from controller.journal import read_trace_file
from drivers.reader import messages as m
from drivers.reader.framing import CRC_LEN, HEADER_LEN, MAX_PAYLOAD, FrameDecoder, encode
from firmware_sim.reader_board import ReaderBoardSim
from kernel.inputs import TagIn, TagOut
from tests.broker import Mosquitto

pytestmark = pytest.mark.timeout(900)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
MIN_TOTAL_BYTES = 1_000_000
#: After each example: enough zero bytes to complete any false frame the noise began
#: (a header claiming the longest payload), so nothing waits for the next example.
TRAILER = b"\x00" * (HEADER_LEN + MAX_PAYLOAD + CRC_LEN)
UID_PREFIX = b"\xfe\xed"  # in no registry: the engine raises unknown_tag, as for a stray tag

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Move = tuple[str, str, str]  # ("in" | "out", antenna, uid hex)


class ObservedIntake(Intake):
    """The drivers' intake, noting each tag event its serial input hands to the queue (the
    test waits on it; what counts is checked in the journal)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.taken: list[Move] = []
        self.cond = threading.Condition()

    def submit_reader_event(self, name: str, event: TagIn | TagOut) -> None:
        super().submit_reader_event(name, event)
        with self.cond:
            kind = "in" if isinstance(event, TagIn) else "out"
            self.taken.append((kind, event.antenna, event.uid or ""))
            self.cond.notify_all()


class ObservedDaemon(Daemon):
    """The daemon, its devices' inputs going through an `ObservedIntake`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.intake = ObservedIntake(self.queue, self.resync, self.timer, self.now)
        self.devices.sink = self.intake
        self.taken = self.intake.taken
        self.cond = self.intake.cond


def corrupted(frame: bytes, flips: bytes) -> bytes:
    """`frame` with bytes xor-ed by `flips` (spread over it), certainly not a valid frame."""
    data = bytearray(frame)
    for i, flip in enumerate(flips):
        data[(i * 7 + flip) % len(data)] ^= flip or 0x01
    decoder = FrameDecoder()
    while decoder.feed(bytes(data) + TRAILER):  # still valid by chance (about 1 in 2**24)
        data[-1] ^= 0xFF
        decoder = FrameDecoder()
    return bytes(data)


def bulk(seed: int, size: int, dense: bool) -> bytes:
    """Line noise in bulk: uniform bytes, or bytes dense in sync and length bytes (false
    frame starts everywhere)."""
    rng = random.Random(seed)
    if not dense:
        return rng.randbytes(size)
    return bytes(rng.choice(b"\xa5\x5a\x00\x04\xff\x01") for _ in range(size))


SEGMENT = st.one_of(
    st.tuples(st.just("noise"), st.binary(max_size=2000)),
    st.tuples(
        st.just("bulk"),
        st.tuples(st.integers(0, 2**32), st.integers(1000, 16000), st.booleans()),
    ),
    st.tuples(st.just("mutant"), st.binary(min_size=1, max_size=6)),
    st.tuples(st.just("in"), st.integers(min_value=0, max_value=11)),
    st.tuples(st.just("out"), st.integers(min_value=0, max_value=10_000)),
)


def test_hypothesis_bytes_into_the_daemons_serial_input(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    link = tmp_path / "tablectl-cards"
    base = load_config(EXAMPLE)
    antennas = base.card_reader.antennas
    board = ReaderBoardSim(
        antennas, kind="card", link=link, inventory_period=3600.0, heartbeat_period=0.5
    )
    journal = tmp_path / "t01.journal"
    config = dataclasses.replace(
        base,
        card_reader=dataclasses.replace(base.card_reader, backend="serial", port=str(link)),
        journal=dataclasses.replace(base.journal, path=journal, fsync="never"),
    )
    board.start()
    daemon = ObservedDaemon(
        config, broker=mosquitto.broker_config(prefix="poker/fuzz/t01", client_id="fuzz-t01")
    )
    daemon.start()
    expected: list[Move] = []
    present: list[tuple[str, bytes]] = []
    numbers = itertools.count(1)
    fed = [0]
    examples = [0]
    try:
        card_reader = daemon.devices.readers[0]
        assert card_reader.wait_synced(10.0)

        @FUZZ
        @given(st.lists(SEGMENT, min_size=1, max_size=30))
        def feed(segments: list[tuple[str, Any]]) -> None:
            examples[0] += 1
            for kind, value in segments:
                if kind in ("noise", "bulk"):
                    data = value if kind == "noise" else bulk(*value)
                    board.inject_raw(data)
                    fed[0] += len(data)
                elif kind == "mutant":
                    uid = UID_PREFIX + next(numbers).to_bytes(5, "big")
                    frame = encode(m.TagIn(len(uid) % len(antennas), uid), len(value))
                    board.inject_raw(corrupted(frame, value))
                    fed[0] += len(frame)
                elif kind == "in":
                    antenna = antennas[value % len(antennas)]
                    uid = UID_PREFIX + next(numbers).to_bytes(5, "big")
                    assert board.place(antenna, uid)
                    present.append((antenna, uid))
                    expected.append(("in", antenna, uid.hex().upper()))
                    fed[0] += HEADER_LEN + 2 + len(uid) + CRC_LEN
                elif present:
                    antenna, uid = present.pop(value % len(present))
                    assert board.remove(antenna, uid)
                    expected.append(("out", antenna, uid.hex().upper()))
                    fed[0] += HEADER_LEN + 2 + len(uid) + CRC_LEN
            # Each example leaves the board empty: tags heaped up over hundreds of examples
            # would exceed what one antenna's inventory resolves (a limit of the air, not
            # of the daemon's input this test is about).
            while present:
                antenna, uid = present.pop()
                assert board.remove(antenna, uid)
                expected.append(("out", antenna, uid.hex().upper()))
            board.inject_raw(TRAILER)
            fed[0] += len(TRAILER)
            with daemon.cond:
                assert daemon.cond.wait_for(lambda: len(daemon.taken) >= len(expected), 30), (
                    f"{len(daemon.taken)} of {len(expected)} tag events reached the daemon"
                )
                assert daemon.taken == expected

        feed()
        assert fed[0] >= MIN_TOTAL_BYTES, fed[0]
        counters = card_reader.counters()
        assert counters["bad_bytes"] > 0 and counters["crc_errors"] > 0  # the noise got there
        assert daemon._thread is not None and daemon._thread.is_alive()
        assert card_reader._thread is not None and card_reader._thread.is_alive()
        assert counters["reconnects"] == 0  # never lost the port over it
        assert board.frames_dropped == 0  # the host kept up: the board's FIFO never overflowed
    finally:
        daemon.stop()
        board.stop()

    # The journal holds every move, once, in order, and nothing failed on the way.
    journaled = read_trace_file(journal)
    moves = [
        ("in" if isinstance(e, TagIn) else "out", e.antenna, e.uid or "")
        for e in journaled.events
        if isinstance(e, TagIn | TagOut) and (e.uid or "").startswith(UID_PREFIX.hex().upper())
    ]
    assert moves == expected
    published = [o.message.payload for outs in journaled.outputs.values() for o in outs]
    failures = [p for p in published if p.get("type") in ("engine_fault", "input_error")]
    assert failures == []
    print(f"daemon serial input: {examples[0]} examples, {fed[0]} bytes, {len(expected)} moves")
