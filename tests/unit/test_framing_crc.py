"""The reader frame CRC, all 16 bits of it: CRC-16/CCITT-FALSE values, and every corruption
of the CRC field refused (a decoder that compared one byte only would pass the rest of the
framing tests, which corrupt the low byte)."""

from __future__ import annotations

import random

import pytest

from drivers.reader import messages as m
from drivers.reader.framing import CRC_LEN, FrameDecoder, crc16, decode, encode

UID7 = bytes.fromhex("04A1B2C3D4E5F6")
FRAMES = [
    encode(m.Heartbeat(1234), 0),
    encode(m.TagIn(2, UID7), 7),
    encode(m.Inventory(((UID7,), (), (bytes.fromhex("04A1B2C3"),))), 255),
    encode(m.BoardError(m.ERR_ANTENNA_FAULT, "antenna burn: open circuit"), 99),
]


def reference_crc(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit: poly 0x1021, init 0xFFFF, MSB first, no xor out."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


@pytest.mark.parametrize(
    ("data", "crc"),
    [
        (b"123456789", 0x29B1),  # the catalogue's check value
        (b"", 0xFFFF),  # the initial value
        (b"A", 0xB915),
        (b"\x00", 0xE1F0),
        (b"\xff\xff\xff\xff", 0x1D0F),
    ],
)
def test_crc16_is_ccitt_false(data: bytes, crc: int) -> None:
    assert crc16(data) == crc


def test_crc16_agrees_with_a_bitwise_reference_on_random_data() -> None:
    rng = random.Random(16)
    for size in [*range(0, 40), 255, 1024, 1031]:
        data = rng.randbytes(size)
        assert crc16(data) == reference_crc(data), data.hex()


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f[:8].hex())
def test_the_crc_field_is_the_crc_of_the_frame_big_endian(frame: bytes) -> None:
    crc = reference_crc(frame[2:-CRC_LEN])
    assert frame[-2:] == bytes([crc >> 8, crc & 0xFF])


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f[:8].hex())
def test_every_single_bit_flip_in_the_crc_field_is_refused(frame: bytes) -> None:
    assert decode(frame).frame is not None
    for bit in range(16):
        bad = bytearray(frame)
        bad[len(frame) - 2 + bit // 8] ^= 0x80 >> (bit % 8)
        result = decode(bytes(bad))
        assert result.frame is None and result.crc_errors == 1, f"bit {bit} flipped: accepted"
        decoder = FrameDecoder()
        assert decoder.feed(bytes(bad) + frame) == [decode(frame).frame]
        assert decoder.crc_errors == 1


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f[:8].hex())
def test_a_crc_right_in_one_byte_only_is_refused(frame: bytes) -> None:
    """Every other value of the high byte with the low byte right, and the other way round,
    and the two bytes swapped."""
    high, low = frame[-2], frame[-1]
    for other in range(256):
        for crc in ((other, low), (high, other)):
            if crc == (high, low):
                continue
            result = decode(frame[:-2] + bytes(crc))
            assert result.frame is None and result.crc_errors == 1, f"CRC {bytes(crc).hex()}"
    if high != low:
        assert decode(frame[:-2] + bytes([low, high])).frame is None
