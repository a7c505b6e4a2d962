"""Reader board protocol: frames, CRC and payloads, one module for the board and the host.

This file runs unchanged under MicroPython (on the board, and in the simulator's WebAssembly
check) and under CPython (the host driver imports it through drivers/reader). It therefore
keeps to the subset both run: no `from __future__`, no dataclasses, no `typing` at run time
(annotations are never evaluated by MicroPython and only name built-in types here), no
`del buffer[:n]` (MicroPython has slice assignment instead). The layout is documented in
docs/reader-protocol.md.
"""

import struct

try:
    # CPython's C implementation of the same CRC (MicroPython's binascii has none).
    from binascii import crc_hqx as _crc_hqx  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # MicroPython: the table below
    _crc_hqx = None  # type: ignore[assignment,unused-ignore]

SYNC = b"\xa5\x5a"
HEADER_LEN = 7  # sync(2) + length(2) + seq(1) + type(1) + header check(1)
CRC_LEN = 2
OVERHEAD = HEADER_LEN + CRC_LEN
MAX_PAYLOAD = 1024

#: Version 2 added the board's own time (`board_ms`) to TAG_IN, TAG_OUT and INVENTORY;
#: version 3 the ARRIVALS report (each tag's arrival time) and its request; version 4 the
#: host's FOCUS (the antennas that matter now, read first), inventories paged across frames
#: (INVENTORY_PAGE) and cut host frames dropped after an inter-byte timeout (ERROR 6).
PROTOCOL_VERSION = 4

# Message types: 0x01-0x7F board -> host, 0x80-0xFF host -> board.
HELLO = 0x01
TAG_IN = 0x02
TAG_OUT = 0x03
INVENTORY = 0x04
HEARTBEAT = 0x05
ERROR = 0x06
ARRIVALS = 0x07
INVENTORY_PAGE = 0x08
INVENTORY_REQUEST = 0x81
HELLO_REQUEST = 0x82
ARRIVALS_REQUEST = 0x83
FOCUS = 0x84

# ERROR codes.
ERR_ANTENNA_FAULT = 1
ERR_RX_CRC = 2
ERR_UNKNOWN_TYPE = 3
ERR_TX_OVERFLOW = 4
ERR_TAG_LIMIT = 5
ERR_RX_CUT = 6

#: ISO 14443 UIDs are 4, 7 or 10 bytes (single, double, triple size); ISO 15693 UIDs are 8.
UID_LENGTHS = (4, 7, 8, 10)
MAX_NAME_LEN = 32
MAX_TEXT_LEN = 200
MAX_ANTENNAS = 32
MAX_PAGES = 255
#: INVENTORY_PAGE: page, pages, board time, antenna count (then a count byte per antenna).
PAGE_HEADER = 7
BOARD_KINDS = ("card", "chip")
U32_MAX = 0xFFFFFFFF


class WireError(ValueError):
    """A value the protocol cannot carry, or a payload it does not allow."""


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table.append(crc)
    return table


_TABLE = _make_table()


def crc16_table(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE by table, the way the board computes it (check value 0x29B1)."""
    table = _TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


def crc16(data: bytes | bytearray | memoryview) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR)."""
    if _crc_hqx is not None:
        return int(_crc_hqx(data, 0xFFFF))
    return crc16_table(data)


def header_check(length: int, seq: int, msg_type: int) -> int:
    """The header check byte: XOR of the length, seq and type bytes, inverted."""
    return (length >> 8) ^ (length & 0xFF) ^ seq ^ msg_type ^ 0xFF


def encode_frame(seq: int, msg_type: int, payload: bytes) -> bytes:
    """One complete frame: sync, header, payload and CRC."""
    if not 0 <= seq <= 0xFF:
        raise WireError("sequence number must be 0..255, got %d" % seq)
    if not 0 <= msg_type <= 0xFF:
        raise WireError("message type must be 0..255, got %d" % msg_type)
    length = len(payload)
    if length > MAX_PAYLOAD:
        raise WireError("payload of %d bytes exceeds %d" % (length, MAX_PAYLOAD))
    body = bytes([length >> 8, length & 0xFF, seq, msg_type, header_check(length, seq, msg_type)])
    body += payload
    crc = crc16(body)
    return SYNC + body + bytes([crc >> 8, crc & 0xFF])


def decode_frame(
    buffer: bytes | bytearray, max_payload: int = MAX_PAYLOAD
) -> tuple[int, int, int, int, int, bytes | None]:
    """Find the first frame in `buffer`; pure, never raises on bad input.

    Returns (consumed, bad_bytes, crc_errors, seq, msg_type, payload). `consumed` bytes may be
    dropped from the front of the buffer. `seq` is -1 when the buffer holds no complete frame
    (feed more bytes); otherwise seq, msg_type and payload belong to a frame whose CRC was good.
    Receiver rules: skip to SYNC; a wrong header check or a length over `max_payload` is a
    false sync (skip one byte); a bad CRC skips one byte, never the claimed length.
    """
    n = len(buffer)
    pos = bad = crc_errors = 0
    while True:
        start = buffer.find(SYNC, pos)
        if start < 0:
            keep = 1 if n > pos and buffer[n - 1] == SYNC[0] else 0
            return n - keep, bad + n - keep - pos, crc_errors, -1, 0, None
        bad += start - pos
        pos = start
        if n - pos < HEADER_LEN:
            return pos, bad, crc_errors, -1, 0, None
        length = buffer[pos + 2] << 8 | buffer[pos + 3]
        seq = buffer[pos + 4]
        msg_type = buffer[pos + 5]
        if buffer[pos + 6] != header_check(length, seq, msg_type) or length > max_payload:
            bad += 1  # a false sync: rescan from the next byte
            pos += 1
            continue
        end = pos + HEADER_LEN + length + CRC_LEN
        if n < end:
            return pos, bad, crc_errors, -1, 0, None
        if crc16(buffer[pos + 2 : end - CRC_LEN]) != (buffer[end - 2] << 8 | buffer[end - 1]):
            bad += 1  # never trust the length of a frame that failed its CRC
            pos += 1
            crc_errors += 1
            continue
        return end, bad, crc_errors, seq, msg_type, bytes(buffer[pos + HEADER_LEN : end - CRC_LEN])


class FrameReader:
    """Buffers received bytes and cuts them into frames; counts faults and sequence gaps.

    `feed` returns (seq, msg_type, payload, gap) for every frame with a good CRC, in order;
    `gap` is how many frames were lost before it. A HELLO restarts the sequence expectation
    (the board may have rebooted), as does `reset()`. Payloads are not parsed here.
    """

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self.max_payload = max_payload
        self.buffer = bytearray()
        self.last_seq = -1
        self.bad_bytes = 0
        self.crc_errors = 0
        self.seq_gaps = 0
        self.lost_frames = 0

    def reset(self) -> None:
        """Forget buffered bytes and the expected sequence (e.g. after reopening the port)."""
        self.buffer = bytearray()
        self.last_seq = -1

    def feed(self, data: bytes | bytearray) -> list[tuple[int, int, bytes, int]]:
        """Add received bytes; return the complete frames they finished, in order."""
        self.buffer += data
        out: list[tuple[int, int, bytes, int]] = []
        while True:
            consumed, bad, crc_errors, seq, msg_type, payload = decode_frame(
                self.buffer, self.max_payload
            )
            if consumed:
                self.buffer[:consumed] = b""
            self.bad_bytes += bad
            self.crc_errors += crc_errors
            if seq < 0 or payload is None:
                return out
            out.append((seq, msg_type, payload, self.track(seq, msg_type == HELLO)))

    def track(self, seq: int, restart: bool) -> int:
        """Note a received sequence number; return the number of frames lost before it."""
        expected = -1 if self.last_seq < 0 else (self.last_seq + 1) & 0xFF
        self.last_seq = seq
        if restart or expected < 0 or seq == expected:
            return 0
        gap = (seq - expected) & 0xFF
        self.seq_gaps += 1
        self.lost_frames += gap
        return gap


class FrameWriter:
    """Numbers outgoing frames: an 8-bit sequence per direction, wrapping 255 -> 0."""

    def __init__(self, first_seq: int = 0) -> None:
        self.next_seq = first_seq & 0xFF

    def encode(self, msg_type: int, payload: bytes) -> bytes:
        frame = encode_frame(self.next_seq, msg_type, payload)
        self.next_seq = (self.next_seq + 1) & 0xFF
        return frame

    def skip(self) -> int:
        """Use up a sequence number without producing a frame (a frame lost on the wire)."""
        seq = self.next_seq
        self.next_seq = (seq + 1) & 0xFF
        return seq


# -- field checks ------------------------------------------------------------------------


def check_u8(value: int, what: str) -> None:
    if not 0 <= value <= 0xFF:
        raise WireError("%s must be 0..255, got %d" % (what, value))


def check_u32(value: int, what: str) -> None:
    if not 0 <= value <= U32_MAX:
        raise WireError("%s must fit in 32 bits, got %d" % (what, value))


def check_uid(uid: bytes | bytearray) -> None:
    """A tag UID: 4, 7 or 10 bytes (ISO 14443), or 8 bytes (ISO 15693)."""
    if len(uid) not in UID_LENGTHS:
        raise WireError(
            "tag UID must be 4, 7 or 10 bytes (ISO 14443) or 8 bytes (ISO 15693), got %d" % len(uid)
        )


def check_name(raw: bytes | bytearray, what: str) -> None:
    """A name or firmware version: 1..32 printable ASCII characters."""
    if not 1 <= len(raw) <= MAX_NAME_LEN:
        raise WireError("%s must be 1..%d characters, got %d" % (what, MAX_NAME_LEN, len(raw)))
    for byte in raw:
        if byte < 0x20 or byte > 0x7E:
            raise WireError("%s must be printable ASCII" % what)


def name_bytes(text: str, what: str) -> bytes:
    raw = text.encode()
    check_name(raw, what)
    return raw


def hex_uid(uid: bytes | bytearray) -> str:
    """The host's spelling of a tag UID: uppercase hex, no separators."""
    return bytes(uid).hex().upper()


class PayloadReader:
    """Reads fields off a payload; running short or leaving bytes over is a WireError."""

    def __init__(self, payload: bytes, what: str) -> None:
        self.data = payload
        self.pos = 0
        self.what = what

    def take(self, count: int) -> bytes:
        end = self.pos + count
        if end > len(self.data):
            raise WireError("%s payload truncated at byte %d" % (self.what, self.pos))
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def left(self) -> int:
        return len(self.data) - self.pos

    def rest(self) -> bytes:
        return self.take(self.left())

    def name(self, what: str) -> str:
        raw = self.take(self.u8())
        check_name(raw, "%s: %s" % (self.what, what))
        return raw.decode()

    def uid(self) -> bytes:
        uid = self.take(self.u8())
        check_uid(uid)
        return uid

    def board_ms(self) -> int | None:
        """The optional trailing board time of protocol version 2 (absent: version 1)."""
        if self.left() == 0:
            return None
        return self.u32()

    def end(self) -> None:
        extra = self.left()
        if extra:
            raise WireError("%s payload has %d unexpected trailing bytes" % (self.what, extra))


def _u32(value: int) -> bytes:
    return struct.pack(">I", value)


# -- payloads ----------------------------------------------------------------------------


def hello_payload(
    firmware: str, kind: str, antennas: list[str] | tuple[str, ...], proto: int = PROTOCOL_VERSION
) -> bytes:
    """HELLO: protocol version, board kind, firmware version, antenna names in port order."""
    check_u8(proto, "protocol version")
    if kind not in BOARD_KINDS:
        raise WireError("board kind must be card or chip, got %r" % kind)
    if not 1 <= len(antennas) <= MAX_ANTENNAS:
        raise WireError("a board has 1..%d antennas, got %d" % (MAX_ANTENNAS, len(antennas)))
    fw = name_bytes(firmware, "firmware version")
    out = bytearray([proto, BOARD_KINDS.index(kind), len(fw)])
    out += fw
    out.append(len(antennas))
    for name in antennas:
        raw = name_bytes(name, "antenna name")
        out.append(len(raw))
        out += raw
    return bytes(out)


def parse_hello(payload: bytes) -> tuple[int, str, str, tuple[str, ...]]:
    """(protocol version, kind, firmware version, antenna names) of a HELLO payload."""
    cur = PayloadReader(payload, "HELLO")
    proto = cur.u8()
    kind_code = cur.u8()
    if kind_code >= len(BOARD_KINDS):
        raise WireError("HELLO: unknown board kind code %d" % kind_code)
    firmware = cur.name("firmware version")
    count = cur.u8()
    if not 1 <= count <= MAX_ANTENNAS:
        raise WireError("HELLO: a board has 1..%d antennas, got %d" % (MAX_ANTENNAS, count))
    names = tuple(cur.name("antenna name") for _ in range(count))
    cur.end()
    return proto, BOARD_KINDS[kind_code], firmware, names


def tag_payload(antenna: int, uid: bytes | bytearray, board_ms: int | None = None) -> bytes:
    """TAG_IN / TAG_OUT: antenna index, UID, and (version 2) the board's time of the read."""
    check_u8(antenna, "antenna index")
    check_uid(uid)
    out = bytes([antenna, len(uid)]) + bytes(uid)
    if board_ms is not None:
        check_u32(board_ms, "board time")
        out += _u32(board_ms)
    return out


def parse_tag(payload: bytes, what: str = "TAG") -> tuple[int, bytes, int | None]:
    """(antenna index, UID, board time or None for a version 1 board) of a tag report."""
    cur = PayloadReader(payload, what)
    antenna = cur.u8()
    uid = cur.uid()
    board_ms = cur.board_ms()
    cur.end()
    return antenna, uid, board_ms


def inventory_payload(
    antennas: list[list[bytes]] | tuple[tuple[bytes, ...], ...], board_ms: int | None = None
) -> bytes:
    """INVENTORY: per antenna in port order, the UIDs present; (version 2) the board's time."""
    if len(antennas) > MAX_ANTENNAS:
        raise WireError("INVENTORY lists %d antennas (max %d)" % (len(antennas), MAX_ANTENNAS))
    out = bytearray([len(antennas)])
    for uids in antennas:
        check_u8(len(uids), "tags per antenna")
        out.append(len(uids))
        for uid in uids:
            check_uid(uid)
            out.append(len(uid))
            out += uid
    if board_ms is not None:
        check_u32(board_ms, "board time")
        out += _u32(board_ms)
    return bytes(out)


def parse_inventory(payload: bytes) -> tuple[tuple[tuple[bytes, ...], ...], int | None]:
    """(per-antenna UID tuples, board time or None for a version 1 board) of an INVENTORY."""
    cur = PayloadReader(payload, "INVENTORY")
    count = cur.u8()
    if count > MAX_ANTENNAS:
        raise WireError("INVENTORY lists %d antennas (max %d)" % (count, MAX_ANTENNAS))
    lists = tuple(tuple(cur.uid() for _ in range(cur.u8())) for _ in range(count))
    board_ms = cur.board_ms()
    cur.end()
    return lists, board_ms


def arrivals_payload(board_ms: int, tags: list[tuple[int, bytes, int]]) -> bytes:
    """ARRIVALS (version 3): the board's time now, then per tag (antenna index, UID, the
    board time at which it arrived), newest first."""
    check_u32(board_ms, "board time")
    check_u8(len(tags), "arrivals")
    out = bytearray(_u32(board_ms))
    out.append(len(tags))
    for antenna, uid, arrived_ms in tags:
        check_u8(antenna, "antenna index")
        check_uid(uid)
        check_u32(arrived_ms, "arrival time")
        out.append(antenna)
        out.append(len(uid))
        out += uid
        out += _u32(arrived_ms)
    return bytes(out)


def parse_arrivals(payload: bytes) -> tuple[int, tuple[tuple[int, bytes, int], ...]]:
    """(board time now, ((antenna index, UID, arrival board time), ...)) of an ARRIVALS."""
    cur = PayloadReader(payload, "ARRIVALS")
    board_ms = cur.u32()
    tags = tuple((cur.u8(), cur.uid(), cur.u32()) for _ in range(cur.u8()))
    cur.end()
    return board_ms, tags


def heartbeat_payload(uptime_ms: int) -> bytes:
    check_u32(uptime_ms, "uptime")
    return _u32(uptime_ms)


def parse_heartbeat(payload: bytes) -> int:
    cur = PayloadReader(payload, "HEARTBEAT")
    uptime = cur.u32()
    cur.end()
    return uptime


def error_payload(code: int, text: str) -> bytes:
    check_u8(code, "error code")
    raw = text.encode()
    if len(raw) > MAX_TEXT_LEN:
        raise WireError("error text longer than %d bytes" % MAX_TEXT_LEN)
    return bytes([code]) + raw


def parse_error(payload: bytes) -> tuple[int, str]:
    cur = PayloadReader(payload, "ERROR")
    code = cur.u8()
    raw = cur.rest()
    try:
        text = raw.decode()
    except UnicodeError:
        raise WireError("ERROR text is not UTF-8") from None
    if len(raw) > MAX_TEXT_LEN:
        raise WireError("error text longer than %d bytes" % MAX_TEXT_LEN)
    return code, text


def parse_empty(payload: bytes, what: str) -> None:
    PayloadReader(payload, what).end()


def inventory_pages(
    antennas: list[list[bytes]] | tuple[tuple[bytes, ...], ...],
    board_ms: int,
    max_payload: int = MAX_PAYLOAD,
) -> list[bytes]:
    """INVENTORY_PAGE payloads (version 4) of a snapshot too large for one INVENTORY.

    Every page lists every antenna in port order, each with the next UIDs of its list that
    fit (maybe none): the host joins an antenna's pieces in page order. All pages carry the
    snapshot's board time and the number of pages.
    """
    if len(antennas) > MAX_ANTENNAS:
        raise WireError("INVENTORY lists %d antennas (max %d)" % (len(antennas), MAX_ANTENNAS))
    check_u32(board_ms, "board time")
    count = len(antennas)
    base = PAGE_HEADER + count
    if base + 1 + 10 > max_payload:
        raise WireError("a page of %d bytes cannot hold %d antennas" % (max_payload, count))
    pending = [0 for _ in antennas]  # how many UIDs of each antenna are paged already
    bodies: list[bytes] = []
    while True:
        body = bytearray()
        size = base
        for index in range(count):
            uids = antennas[index]
            start = pending[index]
            end = start
            while end < len(uids) and end - start < 255:
                check_uid(uids[end])
                if size + 1 + len(uids[end]) > max_payload:
                    break
                size += 1 + len(uids[end])
                end += 1
            body.append(end - start)
            for uid in uids[start:end]:
                body.append(len(uid))
                body += uid
            pending[index] = end
        bodies.append(bytes(body))
        if all(pending[i] >= len(antennas[i]) for i in range(count)):
            break
        if len(bodies) >= MAX_PAGES:
            raise WireError("an inventory of more than %d pages" % MAX_PAGES)
    pages = len(bodies)
    head = _u32(board_ms) + bytes([count])
    return [bytes([page, pages]) + head + bodies[page] for page in range(pages)]


def parse_inventory_page(
    payload: bytes,
) -> tuple[int, int, int, tuple[tuple[bytes, ...], ...]]:
    """(page, pages, board time, per-antenna UID pieces) of an INVENTORY_PAGE (version 4)."""
    cur = PayloadReader(payload, "INVENTORY_PAGE")
    page = cur.u8()
    pages = cur.u8()
    if pages < 1 or page >= pages:
        raise WireError("INVENTORY_PAGE: page %d of %d" % (page, pages))
    board_ms = cur.u32()
    count = cur.u8()
    if count > MAX_ANTENNAS:
        raise WireError("INVENTORY_PAGE lists %d antennas (max %d)" % (count, MAX_ANTENNAS))
    lists = tuple(tuple(cur.uid() for _ in range(cur.u8())) for _ in range(count))
    cur.end()
    return page, pages, board_ms, lists


def focus_payload(mask: int, lease_ms: int) -> bytes:
    """FOCUS (version 4, host to board): the antennas that matter now, one bit per antenna in
    port order (bit 0: the first; 0: none, every antenna in turn), and how long the focus
    holds without being renewed (ms, 0: until the next FOCUS)."""
    check_u32(mask, "focus mask")
    if not 0 <= lease_ms <= 0xFFFF:
        raise WireError("focus lease must be 0..65535 ms, got %d" % lease_ms)
    return _u32(mask) + bytes([lease_ms >> 8, lease_ms & 0xFF])


def parse_focus(payload: bytes) -> tuple[int, int]:
    """(antenna mask, lease in ms) of a FOCUS."""
    cur = PayloadReader(payload, "FOCUS")
    mask = cur.u32()
    raw = cur.take(2)
    cur.end()
    return mask, raw[0] << 8 | raw[1]
