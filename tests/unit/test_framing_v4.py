"""Protocol version 4 on the host: FOCUS and INVENTORY_PAGE encode, decode and refuse what
the wire cannot carry; an inventory's pages join into one snapshot, or not at all."""

from __future__ import annotations

import random

import pytest

from drivers.reader import messages as m
from drivers.reader.framing import FrameDecoder, encode
from firmware import protocol
from kernel.errors import ProtocolError


def chips(count: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [bytes([0xE0, 4, 1, *(rng.randrange(256) for _ in range(5))]) for _ in range(count)]


def test_focus_round_trips_and_refuses_what_the_wire_cannot_carry() -> None:
    focus = m.Focus(frozenset({0, 11, 31}), lease_ms=5000)
    (frame,) = FrameDecoder().feed(encode(focus, 5))
    assert frame.msg == focus and focus.mask == (1 | 1 << 11 | 1 << 31)
    assert m.Focus().payload() == bytes(6)  # none: every antenna in turn, no lease
    with pytest.raises(ProtocolError):
        m.Focus(frozenset({32}))
    with pytest.raises(ProtocolError):
        m.Focus(frozenset({1}), lease_ms=70000)
    with pytest.raises(ProtocolError, match=r"truncated|trailing"):
        m.Focus.parse(b"\x00\x00\x00\x01\x13")


@pytest.mark.parametrize("count", [113, 500, 1000])
def test_a_snapshot_too_large_for_one_frame_is_paged_and_joined_whole(count: int) -> None:
    stack = chips(count)
    lists = [[bytes.fromhex("04A1B2C3D4E5F6")], [], stack]
    with pytest.raises(protocol.WireError):
        protocol.encode_frame(0, protocol.INVENTORY, protocol.inventory_payload(lists, 9))
    payloads = protocol.inventory_pages(lists, 9)
    frames = b"".join(
        protocol.encode_frame(i, protocol.INVENTORY_PAGE, p) for i, p in enumerate(payloads)
    )
    pages = [f.msg for f in FrameDecoder().feed(frames)]
    assert all(isinstance(p, m.InventoryPage) for p in pages)
    assert len(pages) == -(-count * 9 // (protocol.MAX_PAYLOAD - 12))  # full pages
    joined = m.InventoryPage.join(pages)  # type: ignore[arg-type]
    assert joined.antennas == (tuple(lists[0]), (), tuple(stack)) and joined.board_ms == 9
    assert joined.hex_lists()[2] == [uid.hex().upper() for uid in stack]


def test_pages_that_do_not_make_one_snapshot_are_refused() -> None:
    payloads = protocol.inventory_pages([chips(300)], 40)
    pages = [m.InventoryPage.parse(p) for p in payloads]
    assert len(pages) == 3
    for broken in (
        pages[:2],  # one missing
        [pages[0], pages[2], pages[1]],  # out of order
        [pages[0], pages[1], m.InventoryPage(2, 3, 41, pages[2].antennas)],  # another time
    ):
        with pytest.raises(ProtocolError, match="one snapshot"):
            m.InventoryPage.join(broken)
    with pytest.raises(ProtocolError):
        m.InventoryPage.parse(bytes([3, 3]) + payloads[0][2:])  # page 3 of 3


def test_a_version_4_error_code_is_a_board_error_like_the_others() -> None:
    (frame,) = FrameDecoder().feed(encode(m.BoardError(m.ERR_RX_CUT, "host frame cut"), 1))
    assert frame.msg == m.BoardError(6, "host frame cut")
