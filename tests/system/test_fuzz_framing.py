"""Fuzz of the reader protocol decoder and of the driver on a real pty (hypothesis, seeded).

What "recovered" promises. The decoder resynchronises on the 2-byte sync A5 5A and trusts a
frame only after its header check byte and its CRC-16; a candidate that fails either is
skipped one byte at a time, so it can never hide a real frame that starts after it.
Hence:

- noise that contains no sync pair (A5 5A), between valid frames: EVERY frame is recovered,
  in order, at its exact offset; the bad-byte counter equals the noise length; no CRC error.
- arbitrary noise (syncs included) and mutated frames (bit flips, inserted, deleted and
  truncated bytes): every frame whose own bytes were not touched is recovered; nothing
  else is ever reported as a good frame unless a false candidate passes both the header
  check (1/256) and the CRC (1/65536), i.e. about once per 16.7 million false syncs.
  The derandomized examples below contain none.
- always: no exception, and the counters account for every byte
  (bad bytes + bytes of frames + bytes still buffered = bytes fed).
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.reader import messages as m
from drivers.reader.driver import ReaderDriver
from drivers.reader.framing import (
    CRC_LEN,
    HEADER_LEN,
    SYNC,
    Frame,
    FrameDecoder,
    crc16,
    decode,
    encode,
    header_check,
)
from kernel.inputs import TagIn as TagInEvent
from kernel.inputs import TagOut as TagOutEvent

pytestmark = pytest.mark.timeout(120)

# Reproducible in CI: the same examples every run, no example database.
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MIN_TOTAL_BYTES = 1_000_000
ANTENNAS = tuple([*(f"seat{n}" for n in range(1, 10)), "board", "burn", "muck"])


# ------------------------------------------------------------------ stream building


def random_message(rng: random.Random) -> m.Message:
    """A valid board message of any kind, with random content."""
    kind = rng.randrange(8)
    if kind <= 2:
        uid = rng.randbytes(rng.choice(m.UID_LENGTHS))
        cls = m.TagIn if kind < 2 else m.TagOut
        return cls(rng.randrange(len(ANTENNAS)), uid)
    if kind == 3:
        return m.Heartbeat(rng.randrange(2**32))
    if kind == 4:
        lists = tuple(
            tuple(rng.randbytes(rng.choice(m.UID_LENGTHS)) for _ in range(rng.randrange(4)))
            for _ in range(rng.randrange(1, 13))
        )
        return m.Inventory(lists)
    if kind == 5:
        names = tuple(f"a{i}" for i in range(rng.randrange(1, 33)))
        return m.Hello(f"fw-{rng.randrange(100)}", rng.choice(m.BOARD_KINDS), names)
    if kind == 6:
        text = "".join(rng.choice("abc ±é→") for _ in range(rng.randrange(60)))
        return m.BoardError(rng.randrange(256), text)
    return rng.choice([m.InventoryRequest(), m.HelloRequest()])


def sync_free_noise(rng: random.Random, size: int) -> bytes:
    """Random bytes with every A5 5A pair broken (the first byte of a sync may remain)."""
    data = bytearray(rng.randbytes(size))
    for i in range(1, size):
        if data[i - 1] == SYNC[0] and data[i] == SYNC[1]:
            data[i] = rng.choice([b for b in range(256) if b != SYNC[1]])
    return bytes(data)


def hostile_noise(rng: random.Random, size: int) -> bytes:
    """Noise made to trip the decoder: sync-dense bytes, false headers with a correct check
    byte (a long wait for the CRC), and CRC-correct frames whose payloads are garbage."""
    out = bytearray()
    while len(out) < size:
        pick = rng.randrange(5)
        if pick == 0:
            out += rng.randbytes(rng.randrange(1, 64))
        elif pick == 1:
            out += bytes(rng.choice(b"\xa5\x5a\x00\xff\x01") for _ in range(rng.randrange(1, 64)))
        elif pick == 2:  # a header that passes its check, then no valid CRC
            length, seq, typ = rng.randrange(1025), rng.randrange(256), rng.randrange(256)
            out += SYNC + bytes([length >> 8, length & 0xFF, seq, typ])
            out += bytes([header_check(length, seq, typ)])
            out += rng.randbytes(rng.randrange(0, 40))
        else:  # a frame that passes header check and CRC, with a random payload
            payload = rng.randbytes(rng.randrange(0, 48))
            typ = rng.choice([*range(1, 7), 0x81, 0x82, rng.randrange(256)])
            seq, length = rng.randrange(256), len(payload)
            body = bytes([length >> 8, length & 0xFF, seq, typ, header_check(length, seq, typ)])
            body += payload
            crc = crc16(body)
            out += SYNC + body + bytes([crc >> 8, crc & 0xFF])
    return bytes(out[:size])


@dataclass(frozen=True, slots=True)
class Planted:
    """A valid frame placed in a stream: where, its bytes, and whether a mutation hit it."""

    offset: int
    data: bytes
    seq: int
    msg: m.Message
    touched: bool = False


def chunks(rng: random.Random, data: bytes) -> list[bytes]:
    """The stream cut as a serial port delivers it: pieces of 1 byte to 4 KiB."""
    out = []
    pos = 0
    while pos < len(data):
        size = rng.choice([1, 2, 7, 64, 500, 4096, rng.randrange(1, 2000)])
        out.append(data[pos : pos + size])
        pos += size
    return out


@dataclass(slots=True)
class Decoded:
    """Everything the pure decoder reported, in absolute stream offsets."""

    frames: list[tuple[int, Frame]]  # (offset, frame)
    malformed: list[tuple[int, str]]  # (offset, error)
    bad_bytes: int
    crc_errors: int
    frame_bytes: int
    buffered: int


def decode_stream(pieces: list[bytes]) -> Decoded:
    """Feed `pieces` one by one to the pure `decode`, as FrameDecoder does, checking every
    DecodeResult's own accounting on the way."""
    buffer = bytearray()
    base = 0  # stream offset of buffer[0]
    result = Decoded([], [], 0, 0, 0, 0)
    for piece in pieces:
        buffer += piece
        while True:
            r = decode(buffer)
            assert 0 <= r.bad_bytes <= r.consumed <= len(buffer)
            assert 0 <= r.crc_errors <= r.bad_bytes
            result.bad_bytes += r.bad_bytes
            result.crc_errors += r.crc_errors
            if r.seq is None:
                assert r.frame is None and r.consumed == r.bad_bytes
            else:
                size = r.consumed - r.bad_bytes  # the frame's own bytes
                assert size >= HEADER_LEN + CRC_LEN
                offset = base + r.consumed - size
                assert buffer[r.consumed - size : r.consumed - size + 2] == SYNC
                result.frame_bytes += size
                if r.frame is not None:
                    assert r.error is None and r.frame.seq == r.seq
                    result.frames.append((offset, r.frame))
                else:
                    assert r.error
                    result.malformed.append((offset, r.error))
            del buffer[: r.consumed]
            base += r.consumed
            if r.seq is None:
                break
    result.buffered = len(buffer)
    total = sum(len(p) for p in pieces)
    assert result.bad_bytes + result.frame_bytes + result.buffered == total
    assert result.buffered <= HEADER_LEN + 1024 + CRC_LEN
    return result


def build(
    rng: random.Random, frames: int, noise: Callable[[random.Random, int], bytes], max_gap: int
) -> tuple[bytes, list[Planted], int]:
    """Frames (consecutive seq) with noise before each and after the last; the noise total."""
    out = bytearray()
    planted = []
    noise_total = 0
    seq = rng.randrange(256)
    for _ in range(frames):
        gap = noise(rng, rng.randrange(max_gap + 1))
        out += gap
        noise_total += len(gap)
        msg = random_message(rng)
        data = encode(msg, seq)
        planted.append(Planted(len(out), data, seq, msg))
        out += data
        seq = (seq + 1) & 0xFF
    tail = noise(rng, rng.randrange(max_gap + 1))
    out += tail
    return bytes(out), planted, noise_total + len(tail)


# ------------------------------------------------------------------ the pure decoder


def test_every_frame_is_recovered_from_sync_free_noise() -> None:
    total = [0]

    @settings(FUZZ, max_examples=90)
    @given(
        seed=st.integers(0, 2**64 - 1),
        frames=st.integers(100, 400),
        max_gap=st.sampled_from([0, 3, 40, 200]),
        extra=st.lists(st.binary(max_size=30), max_size=8),
    )
    def run(seed: int, frames: int, max_gap: int, extra: list[bytes]) -> None:
        rng = random.Random(seed)
        stream, planted, noise = build(rng, frames, sync_free_noise, max_gap)
        # hypothesis' own bytes, sync pairs broken, as leading noise too
        lead = b"".join(extra).replace(SYNC, SYNC[:1] + b"\x00")
        stream = lead + stream
        planted = [Planted(p.offset + len(lead), p.data, p.seq, p.msg) for p in planted]
        noise += len(lead)
        total[0] += len(stream)
        pieces = chunks(rng, stream)

        got = decode_stream(pieces)
        assert [(o, f.seq, f.msg) for o, f in got.frames] == [
            (p.offset, p.seq, p.msg) for p in planted
        ]
        assert got.malformed == [] and got.crc_errors == 0
        assert got.bad_bytes + got.buffered == noise

        decoder = FrameDecoder()
        frames_out = [f for piece in pieces for f in decoder.feed(piece)]
        assert [(f.seq, f.msg, f.gap) for f in frames_out] == [(p.seq, p.msg, 0) for p in planted]
        counters = decoder.counters()
        assert counters == {
            "frames": len(planted),
            "bad_bytes": got.bad_bytes,
            "crc_errors": 0,
            "seq_gaps": 0,
            "lost_frames": 0,
            "malformed": 0,
        }
        assert decoder.buffered == got.buffered

    run()
    print(f"sync-free streams: {total[0]} bytes")
    assert total[0] >= 600_000  # with the two tests below: >= 1,200,000 bytes in all


def mutate(
    rng: random.Random, stream: bytes, planted: list[Planted], count: int
) -> tuple[bytes, list[Planted]]:
    """Flip, insert, delete or overwrite bytes at `count` random places; mark hit frames."""
    data = bytearray(stream)
    starts = [p.offset for p in planted]
    hit: set[int] = set()
    # From the end backwards: a change only moves the frames after it.
    for pos in sorted((rng.randrange(len(data)) for _ in range(count)), reverse=True):
        op = rng.randrange(4)
        width = min(1 if op == 0 else rng.randrange(1, 40), len(data) - pos)
        for i, start in enumerate(starts):
            end = start + len(planted[i].data)
            inside = start < pos < end if op == 1 else pos < end and pos + width > start
            if inside:
                hit.add(i)
            if op == 1 and start >= pos:
                starts[i] += width
            elif op == 2 and start >= pos + width:
                starts[i] -= width
        if op == 0:
            data[pos] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[pos:pos] = rng.randbytes(width)
        elif op == 2:
            del data[pos : pos + width]
        else:
            data[pos : pos + width] = rng.randbytes(width)
    moved = [
        Planted(starts[i], p.data, p.seq, p.msg, touched=i in hit) for i, p in enumerate(planted)
    ]
    return bytes(data), moved


def test_untouched_frames_survive_hostile_noise_and_mutations() -> None:
    total = [0]

    @settings(FUZZ, max_examples=70)
    @given(
        seed=st.integers(0, 2**64 - 1),
        frames=st.integers(50, 300),
        mutations=st.integers(0, 60),
        hostile=st.booleans(),
    )
    def run(seed: int, frames: int, mutations: int, hostile: bool) -> None:
        rng = random.Random(seed)
        noise = hostile_noise if hostile else sync_free_noise
        stream, planted, _ = build(rng, frames, noise, 120)
        stream, planted = mutate(rng, stream, planted, mutations)
        # A false header near the end makes the decoder wait for up to 1,033 more bytes
        # before it can reject it: on a live port they always come; here, sync-free padding.
        stream += sync_free_noise(rng, HEADER_LEN + 1024 + CRC_LEN)
        total[0] += len(stream)
        for p in planted:
            if not p.touched:
                assert stream[p.offset : p.offset + len(p.data)] == p.data
        pieces = chunks(rng, stream)
        got = decode_stream(pieces)
        found = {offset: frame for offset, frame in got.frames}
        # Every untouched frame is recovered where it is.
        for p in planted:
            if not p.touched:
                assert found.get(p.offset) == Frame(p.seq, p.msg), p
        # Nothing else passes as a good frame but planted ones (touched frames whose damage
        # left them intact from their sync on, e.g. a flip in the noise before them).
        planted_at = {p.offset: p for p in planted}
        for offset, frame in got.frames:
            p = planted_at.get(offset)
            if p is None:  # a CRC-valid frame of the hostile noise itself
                assert hostile
                continue
            assert frame == Frame(p.seq, p.msg)
        decoder = FrameDecoder()
        out = [f for piece in pieces for f in decoder.feed(piece)]
        assert [(f.seq, f.msg) for f in out] == [(f.seq, f.msg) for _, f in got.frames]
        c = decoder.counters()
        assert (c["frames"], c["malformed"]) == (len(got.frames), len(got.malformed))
        assert (c["bad_bytes"], c["crc_errors"]) == (got.bad_bytes, got.crc_errors)
        assert c["lost_frames"] >= 0 and c["seq_gaps"] <= len(out) + len(got.malformed)

    run()
    print(f"mutated streams: {total[0]} bytes")
    assert total[0] >= 300_000


def test_pure_noise_never_raises() -> None:
    total = [0]

    @settings(FUZZ, max_examples=150)
    @given(
        seed=st.integers(0, 2**64 - 1), size=st.integers(1000, 6000), head=st.binary(max_size=64)
    )
    def run(seed: int, size: int, head: bytes) -> None:
        rng = random.Random(seed)
        stream = head + hostile_noise(rng, size)
        total[0] += len(stream)
        decode_stream(chunks(rng, stream))
        decode_stream([stream])

    run()
    print(f"pure noise: {total[0]} bytes")
    assert total[0] >= 300_000


# ------------------------------------------------------------------ the driver on a real pty


class Board:
    """The board's end of a pty: answers nothing, drains what the host sends, and tells
    when the host has opened the port (its first request arrived)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        self.requests = FrameDecoder()
        self.asked = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if self.requests.feed(data):
                self.asked.set()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.master, view[:4096])
            view = view[written:]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        os.close(self.master)
        os.close(self.slave)


class Sink:
    """The daemon's side of the driver callbacks."""

    def __init__(self) -> None:
        self.events: list[TagInEvent | TagOutEvent] = []
        self.alerts: list[tuple[str, dict[str, object]]] = []
        self.cond = threading.Condition()

    def on_event(self, event: TagInEvent | TagOutEvent) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def on_alert(self, kind: str, _message: str, details: dict[str, object]) -> None:
        with self.cond:
            self.alerts.append((kind, details))

    def wait(self, predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout)


def test_driver_on_a_pty_survives_a_megabyte_of_noise_and_delivers_every_tag() -> None:
    rng = random.Random(20261122)
    board = Board()
    sink = Sink()
    driver = ReaderDriver(
        board.path,
        ANTENNAS,
        sink.on_event,
        sink.on_alert,
        time.monotonic,
        reconnect_delay=0.1,
        silent_after=3600.0,
    )
    driver.start()
    try:
        assert board.asked.wait(10.0), "the driver never opened the port"
        seq = 0

        def frame(msg: m.Message) -> bytes:
            nonlocal seq
            data = encode(msg, seq)
            seq = (seq + 1) & 0xFF
            return data

        board.write(
            frame(m.Hello("fuzz-1", "card", ANTENNAS)) + frame(m.Inventory(((),) * len(ANTENNAS)))
        )
        assert driver.wait_synced(10.0)

        # Phase 1: >= 1 MB of sync-free noise around TAG_IN / TAG_OUT frames.
        expected: list[tuple[str, str, str]] = []
        present: list[tuple[int, bytes]] = []
        stream = bytearray()
        noise_bytes = 0
        number = 0
        while len(stream) < MIN_TOTAL_BYTES:
            gap = sync_free_noise(rng, rng.randrange(60))
            stream += gap
            noise_bytes += len(gap)
            if present and rng.random() < 0.3:
                antenna, uid = present.pop(rng.randrange(len(present)))
                stream += frame(m.TagOut(antenna, uid))
                expected.append(("out", ANTENNAS[antenna], uid.hex().upper()))
            else:
                number += 1
                antenna, uid = rng.randrange(len(ANTENNAS)), number.to_bytes(4, "big")
                present.append((antenna, uid))
                stream += frame(m.TagIn(antenna, uid))
                expected.append(("in", ANTENNAS[antenna], uid.hex().upper()))
        trailer = b"\x00" * 16  # a last gap, so a trailing A5 of the noise is settled
        stream += trailer
        noise_bytes += len(trailer)
        for piece in chunks(rng, bytes(stream)):
            board.write(piece)

        def moves() -> list[tuple[str, str, str]]:
            return [
                ("in" if isinstance(e, TagInEvent) else "out", e.antenna, e.uid or "")
                for e in sink.events
            ]

        assert sink.wait(lambda: len(sink.events) >= len(expected)), (
            f"{len(sink.events)} of {len(expected)} events"
        )
        assert moves() == expected
        counters = driver.counters()
        assert counters["frames"] == len(expected) + 2
        assert counters["bad_bytes"] == noise_bytes
        assert counters["crc_errors"] == counters["seq_gaps"] == counters["malformed"] == 0

        # Phase 2: hostile noise (false syncs, CRC-valid garbage frames), then tags again.
        board.write(hostile_noise(rng, 200_000) + b"\x00" * 2048)
        final = [(rng.randrange(len(ANTENNAS)), (10**9 + i).to_bytes(4, "big")) for i in range(50)]
        tail = bytearray()
        for antenna, uid in final:
            tail += sync_free_noise(rng, rng.randrange(30)) + frame(m.TagIn(antenna, uid))
        board.write(bytes(tail))
        wanted = {("in", ANTENNAS[a], uid.hex().upper()) for a, uid in final}
        assert sink.wait(lambda: wanted <= set(moves())), "tags after the noise were lost"

        # The driver never failed: its thread runs and it never reopened the port.
        assert driver._thread is not None and driver._thread.is_alive()
        assert driver.counters()["reconnects"] == 0
        assert not [a for a in sink.alerts if a[0] == "reader_disconnected"]
        assert len(stream) + 200_000 >= MIN_TOTAL_BYTES
    finally:
        driver.stop()
        board.close()
