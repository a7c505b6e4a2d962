"""Reader framing at its edges: the limits, the header byte of long frames, what a malformed
frame still tells, sequence counters (each test kills mutants that survived the others:
docs/testing.md)."""

from __future__ import annotations

import itertools

import pytest

from drivers.reader import messages as m
from drivers.reader.framing import (
    CRC_LEN,
    HEADER_LEN,
    MAX_PAYLOAD,
    SYNC,
    FrameDecoder,
    FrameEncoder,
    crc16,
    decode,
    encode,
    header_check,
)
from kernel.errors import ProtocolError


def inventory_of_size(size: int) -> m.Inventory:
    """An INVENTORY whose payload is exactly `size` bytes (UIDs of 4, 7 and 10 bytes, each
    with its length byte)."""
    base = len(m.Inventory(((),)).payload())
    for n4, n10 in itertools.product(range(8), range(8)):
        rest = size - base - 5 * n4 - 11 * n10
        if rest >= 0 and rest % 8 == 0:
            lengths = [7] * (rest // 8) + [4] * n4 + [10] * n10
            uids = tuple(
                bytes([4, i % 256, i // 256]) + bytes(n - 3) for i, n in enumerate(lengths)
            )
            inventory = m.Inventory((uids,))
            assert len(inventory.payload()) == size
            return inventory
    raise AssertionError(f"no inventory of {size} bytes")


def frame_of(payload: bytes, msg_type: int, seq: int) -> bytes:
    """A frame built by hand from the protocol's definition (docs/reader-protocol.md)."""
    n = len(payload)
    check = (n >> 8) ^ (n & 0xFF) ^ seq ^ msg_type ^ 0xFF
    body = bytes([n >> 8, n & 0xFF, seq, msg_type, check]) + payload
    crc = crc16(body)
    return SYNC + body + bytes([crc >> 8, crc & 0xFF])


def test_the_header_check_covers_both_length_bytes() -> None:
    assert header_check(0x0123, 7, 2) == 0x01 ^ 0x23 ^ 7 ^ 2 ^ 0xFF
    assert header_check(0x0300, 0, 0) == 0x03 ^ 0xFF
    long = inventory_of_size(0x2F1)
    assert encode(long, 9) == frame_of(long.payload(), m.Inventory.TYPE, 9)


def test_a_payload_of_exactly_the_maximum_goes_through_and_one_byte_more_does_not() -> None:
    largest = inventory_of_size(MAX_PAYLOAD)
    frame = encode(largest, 3)
    assert len(frame) == HEADER_LEN + MAX_PAYLOAD + CRC_LEN
    assert decode(frame).frame is not None
    assert decode(frame, max_payload=MAX_PAYLOAD - 1).frame is None  # a false sync there
    with pytest.raises(ProtocolError, match=f"{MAX_PAYLOAD + 1} bytes exceeds {MAX_PAYLOAD}"):
        encode(inventory_of_size(MAX_PAYLOAD + 1), 3)


def test_encode_refuses_a_sequence_number_outside_a_byte_saying_which() -> None:
    with pytest.raises(ProtocolError, match="got 256"):
        encode(m.Heartbeat(1), 256)
    with pytest.raises(ProtocolError, match="got -1"):
        encode(m.Heartbeat(1), -1)


def test_a_malformed_payload_still_reports_its_sequence_number_and_type() -> None:
    frame = frame_of(b"\x00", m.TagIn.TYPE, 9)  # a TAG_IN far too short
    result = decode(frame)
    assert result.frame is None and result.consumed == len(frame)
    assert (result.seq, result.msg_type) == (9, m.TagIn.TYPE) and result.error
    decoder = FrameDecoder()
    assert decoder.last_error is None
    decoder.feed(frame)
    assert decoder.malformed == 1 and decoder.last_error == result.error


def test_an_encoder_numbers_from_zero_and_wraps() -> None:
    encoder = FrameEncoder()
    assert decode(encoder.encode(m.Heartbeat(1))).seq == 0
    encoder = FrameEncoder(255)
    assert [decode(encoder.encode(m.Heartbeat(1))).seq for _ in range(2)] == [255, 0]


def test_sequence_gaps_add_up() -> None:
    frames = [encode(m.Heartbeat(i), seq) for i, seq in enumerate([0, 2, 5, 6])]
    decoder = FrameDecoder()
    got = decoder.feed(b"".join(frames))
    assert [f.gap for f in got] == [0, 1, 2, 0]
    assert (decoder.seq_gaps, decoder.lost_frames) == (2, 3)
