"""Reader protocol framing: encoding, resynchronisation, CRC, sequence gaps, payload checks."""

from __future__ import annotations

import random

import pytest

from drivers.reader import messages as m
from drivers.reader.framing import (
    MAX_PAYLOAD,
    SYNC,
    Frame,
    FrameDecoder,
    FrameEncoder,
    crc16,
    decode,
    encode,
    header_check,
)
from drivers.reader.view import TagView
from kernel.errors import ProtocolError

UID4 = bytes.fromhex("04A1B2C3")
UID7 = bytes.fromhex("04A1B2C3D4E5F6")
UID10 = bytes.fromhex("0102030405060708090A")

ALL_MESSAGES: list[m.Message] = [
    m.Hello("tablesim-1.0", "card", ("seat1", "seat2", "board", "burn", "muck", "register")),
    m.Hello("chips-2.3", "chip", ("bet1", "pot")),
    m.TagIn(0, UID4),
    m.TagIn(11, UID7),
    m.TagOut(3, UID10),
    m.Inventory(((UID4, UID7), (), (UID10,))),
    m.Inventory(()),
    m.Heartbeat(0),
    m.Heartbeat(0xFFFFFFFF),
    m.BoardError(m.ERR_ANTENNA_FAULT, "antenna burn: open circuit ±"),
    m.InventoryRequest(),
    m.HelloRequest(),
]


def frames_of(msgs: list[m.Message], first_seq: int = 0) -> list[bytes]:
    encoder = FrameEncoder(first_seq)
    return [encoder.encode(msg) for msg in msgs]


def feed_all(decoder: FrameDecoder, chunks: list[bytes]) -> list[Frame]:
    out: list[Frame] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out


def test_crc_is_ccitt_false() -> None:
    assert crc16(b"123456789") == 0x29B1


def test_worked_example_from_the_docs() -> None:
    frame = encode(m.TagIn(2, UID7), seq=7)
    assert frame.hex(" ").upper() == "A5 5A 00 09 07 02 F3 02 07 04 A1 B2 C3 D4 E5 F6 3A EF"
    result = decode(frame)
    assert result.consumed == len(frame)
    assert result.frame == Frame(7, m.TagIn(2, UID7))
    assert result.frame.msg.uid_hex == "04A1B2C3D4E5F6"  # type: ignore[union-attr]


@pytest.mark.parametrize("msg", ALL_MESSAGES, ids=lambda msg: type(msg).__name__)
def test_every_message_round_trips(msg: m.Message) -> None:
    frame = encode(msg, seq=200)
    result = decode(frame)
    assert (result.consumed, result.bad_bytes, result.crc_errors) == (len(frame), 0, 0)
    assert result.frame == Frame(200, msg)


def test_whole_stream_decodes_in_order() -> None:
    decoder = FrameDecoder()
    got = decoder.feed(b"".join(frames_of(ALL_MESSAGES)))
    assert [f.msg for f in got] == ALL_MESSAGES
    assert [f.seq for f in got] == list(range(len(ALL_MESSAGES)))
    assert decoder.counters() == {
        "frames": len(ALL_MESSAGES),
        "bad_bytes": 0,
        "crc_errors": 0,
        "seq_gaps": 0,
        "lost_frames": 0,
        "malformed": 0,
    }


def test_split_at_every_byte_boundary() -> None:
    stream = b"".join(frames_of(ALL_MESSAGES[:6]))
    for cut in range(len(stream) + 1):
        decoder = FrameDecoder()
        got = feed_all(decoder, [stream[:cut], stream[cut:]])
        assert [f.msg for f in got] == ALL_MESSAGES[:6], f"cut at {cut}"
        assert decoder.bad_bytes == 0
        assert decoder.buffered == 0


def test_byte_by_byte() -> None:
    stream = b"".join(frames_of(ALL_MESSAGES))
    decoder = FrameDecoder()
    got = feed_all(decoder, [stream[i : i + 1] for i in range(len(stream))])
    assert [f.msg for f in got] == ALL_MESSAGES
    assert decoder.bad_bytes == 0


def test_incomplete_frame_waits_for_more_bytes() -> None:
    frame = encode(m.Heartbeat(5), 0)
    result = decode(frame[:-1])
    assert (result.consumed, result.frame, result.seq) == (0, None, None)


def test_garbage_before_between_and_after() -> None:
    a, b, c = frames_of([m.TagIn(0, UID4), m.TagOut(0, UID4), m.Heartbeat(9)])
    noise = [b"\x00\xff\xa5", b"\xa5\x5a", b"\x5a\xa5\xa5", b"zz\xa5"]
    stream = noise[0] + a + noise[1] + b + noise[2] + c + noise[3]
    for chunks in ([stream], [stream[i : i + 1] for i in range(len(stream))]):
        decoder = FrameDecoder()
        got = feed_all(decoder, chunks)
        assert [f.msg for f in got] == [m.TagIn(0, UID4), m.TagOut(0, UID4), m.Heartbeat(9)]
        # the trailing 0xA5 could start a frame: it is kept, not yet counted as bad
        assert decoder.bad_bytes == sum(map(len, noise)) - 1
        assert decoder.buffered == 1
        assert decoder.crc_errors == 0


def test_false_sync_with_fake_length_does_not_swallow_the_next_frame() -> None:
    real = encode(m.TagIn(1, UID7), 5)
    # A fake header that passes the header check and claims 20 payload bytes: the decoder has
    # to wait for them, the CRC then fails and it must rescan from the next byte.
    fake = SYNC + bytes([0, 20, 4, 2, header_check(20, 4, 2)]) + b"\x01"
    decoder = FrameDecoder()
    assert decoder.feed(fake + real) == []  # 26 bytes < the 29 the fake header claims
    later = encode(m.Heartbeat(3), 6)
    got = decoder.feed(later)
    assert [f.msg for f in got] == [m.TagIn(1, UID7), m.Heartbeat(3)]
    assert decoder.crc_errors == 1
    assert decoder.bad_bytes == len(fake)
    short_fake = SYNC + bytes([0, 10, 4, 2, header_check(10, 4, 2)])
    result = decode(short_fake + real)
    assert result.frame == Frame(5, m.TagIn(1, UID7))
    assert (result.crc_errors, result.bad_bytes) == (1, len(short_fake))


def test_false_sync_with_bad_header_check_is_skipped_at_once() -> None:
    real = encode(m.Heartbeat(1), 0)
    fake = SYNC + b"\x03\xe8\x00\x01\x00"  # claims 1000 bytes, header check wrong
    result = decode(fake + real)
    assert result.frame == Frame(0, m.Heartbeat(1))
    assert (result.bad_bytes, result.crc_errors) == (len(fake), 0)


def test_bad_crc_drops_the_frame_and_the_next_one_still_decodes() -> None:
    first, a, b = frames_of([m.Heartbeat(1), m.TagIn(0, UID4), m.TagIn(0, UID7)])
    corrupt = a[:-1] + bytes([a[-1] ^ 0x01])
    decoder = FrameDecoder()
    got = decoder.feed(first + corrupt + b)
    assert [f.msg for f in got] == [m.Heartbeat(1), m.TagIn(0, UID7)]
    assert decoder.crc_errors == 1
    assert decoder.bad_bytes == len(corrupt)
    assert got[1].gap == 1  # the corrupted frame's seq number is missing
    assert decoder.seq_gaps == 1


def test_flipped_payload_bit_fails_crc() -> None:
    frame = bytearray(encode(m.Heartbeat(1234), 0))
    frame[9] ^= 0x10
    result = decode(bytes(frame))
    assert result.frame is None and result.crc_errors == 1


def test_sequence_gap_reports_its_size() -> None:
    encoder = FrameEncoder(250)
    stream = encoder.encode(m.Heartbeat(1))  # 250
    for _ in range(3):
        encoder.skip()  # 251, 252, 253 lost
    stream += encoder.encode(m.Heartbeat(2))  # 254
    stream += encoder.encode(m.Heartbeat(3))  # 255
    stream += encoder.encode(m.Heartbeat(4))  # 0: wrapping is not a gap
    decoder = FrameDecoder()
    got = decoder.feed(stream)
    assert [(f.seq, f.gap) for f in got] == [(250, 0), (254, 3), (255, 0), (0, 0)]
    assert (decoder.seq_gaps, decoder.lost_frames) == (1, 3)


def test_hello_restarts_sequence_tracking() -> None:
    stream = encode(m.Heartbeat(1), 40) + encode(m.Hello("fw", "card", ("seat1",)), 0)
    stream += encode(m.Heartbeat(2), 1)
    decoder = FrameDecoder()
    got = decoder.feed(stream)
    assert [f.gap for f in got] == [0, 0, 0]
    assert decoder.seq_gaps == 0


def test_reset_forgets_partial_bytes_and_sequence() -> None:
    decoder = FrameDecoder()
    decoder.feed(encode(m.Heartbeat(1), 10) + encode(m.Heartbeat(2), 11)[:5])
    decoder.reset()
    got = decoder.feed(encode(m.Heartbeat(3), 90))
    assert [(f.seq, f.gap) for f in got] == [(90, 0)]


def test_oversize_length_is_rejected() -> None:
    oversize = SYNC + bytes([0x04, 0x01, 0, 4, header_check(0x401, 0, 4)])
    good = encode(m.Heartbeat(7), 1)
    result = decode(oversize + good)
    assert result.frame == Frame(1, m.Heartbeat(7))
    assert result.bad_bytes == len(oversize)
    with pytest.raises(ProtocolError):
        encode(m.BoardError(1, "x"), 256)
    small = FrameDecoder(max_payload=4)
    assert small.feed(encode(m.TagIn(0, UID4), 0)) == []  # 6-byte payload > 4
    assert small.bad_bytes > 0


def test_largest_inventory_fits_in_one_frame() -> None:
    uids = tuple(bytes([i, 1, 2, 3, 4, 5, 6]) for i in range(64))
    inventory = m.Inventory((uids[:9], uids[9:18], uids[18:40], (), uids[40:]))
    frame = encode(inventory, 3)
    assert len(frame) - 9 <= MAX_PAYLOAD
    assert decode(frame).frame == Frame(3, inventory)


def test_malformed_payload_is_counted_and_decoding_goes_on() -> None:
    def raw_frame(seq: int, msg_type: int, payload: bytes) -> bytes:
        body = bytes([0, len(payload), seq, msg_type, header_check(len(payload), seq, msg_type)])
        body += payload
        crc = crc16(body)
        return SYNC + body + bytes([crc >> 8, crc & 0xFF])

    bad = [
        raw_frame(0, m.TagIn.TYPE, b"\x00\x05abcde"),  # 5-byte UID
        raw_frame(1, m.TagOut.TYPE, b"\x00\x04ab"),  # truncated
        raw_frame(2, m.Heartbeat.TYPE, b"\x00\x00\x00\x01\x02"),  # trailing byte
        raw_frame(3, 0x42, b""),  # unknown type
        raw_frame(4, m.Hello.TYPE, b"\x01\x07\x02fw\x00"),  # unknown kind
        raw_frame(5, m.BoardError.TYPE, b"\x01\xff\xfe"),  # not UTF-8
    ]
    good = encode(m.Heartbeat(77), 6)
    decoder = FrameDecoder()
    got = decoder.feed(b"".join(bad) + good)
    assert [f.msg for f in got] == [m.Heartbeat(77)]
    assert got[0].gap == 0  # malformed frames still used up their sequence numbers
    assert decoder.malformed == len(bad)
    assert decoder.last_error is not None and "Hello" not in decoder.last_error
    result = decode(bad[0])
    assert (result.frame, result.seq, result.consumed) == (None, 0, len(bad[0]))
    assert result.error is not None and "4, 7 or 10" in result.error


@pytest.mark.parametrize(
    "build",
    [
        lambda: m.TagIn(0, b"\x01\x02\x03"),
        lambda: m.TagIn(256, UID4),
        lambda: m.Hello("fw", "dice", ("seat1",)),
        lambda: m.Hello("fw", "card", ()),
        lambda: m.Hello("fw", "card", ("seat 1\n",)),
        lambda: m.Heartbeat(-1),
        lambda: m.BoardError(1, "x" * 201),
        lambda: m.uid_from_hex("04zz"),
    ],
)
def test_invalid_messages_are_refused(build: object) -> None:
    with pytest.raises(ProtocolError):
        build()  # type: ignore[operator]


def test_random_garbage_never_crashes_and_real_frames_survive() -> None:
    rng = random.Random(20240517)
    msgs = [
        m.TagIn(rng.randrange(12), bytes(rng.randrange(256) for _ in range(7))) for _ in range(200)
    ]
    encoder = FrameEncoder()
    stream = bytearray()
    for msg in msgs:
        junk = bytes(
            rng.choice([0xA5, 0x5A, 0x00, rng.randrange(256)]) for _ in range(rng.randrange(12))
        )
        stream += junk + encoder.encode(msg)
    decoder = FrameDecoder()
    got: list[Frame] = []
    pos = 0
    while pos < len(stream):
        step = rng.randrange(1, 40)
        got += decoder.feed(bytes(stream[pos : pos + step]))
        pos += step
    # Junk may, rarely, look like a header claiming a long payload; a following heartbeat-sized
    # stream of real frames always flushes it. Every real frame must come out, in order.
    assert [f.msg for f in got] == msgs
    assert decoder.seq_gaps == 0


def test_uid_spelling() -> None:
    assert m.uid_hex(UID7) == "04A1B2C3D4E5F6"
    assert m.uid_from_hex("04a1b2c3d4e5f6") == UID7


def test_view_reconcile_emits_outs_then_ins() -> None:
    view = TagView(["seat1", "seat2", "muck"])
    view.add("seat1", "AA000001")
    view.add("seat2", "BB000002")
    assert not view.add("seat2", "BB000002")
    changes = view.reconcile([[], ["BB000002"], ["AA000001", "CC000003"]])
    assert changes == [
        ("out", "seat1", "AA000001"),
        ("in", "muck", "AA000001"),
        ("in", "muck", "CC000003"),
    ]
    assert view.snapshot() == {"seat1": [], "seat2": ["BB000002"], "muck": ["AA000001", "CC000003"]}
    assert view.reconcile([[], ["BB000002"], ["AA000001", "CC000003"]]) == []
    with pytest.raises(ValueError):
        view.reconcile([[]])
