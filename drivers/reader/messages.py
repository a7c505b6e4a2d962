"""Reader board messages: typed dataclasses and their payload encodings (no framing, no I/O)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from controller.errors import ProtocolError

PROTOCOL_VERSION = 1
UID_LENGTHS = (4, 7, 10)
MAX_NAME_LEN = 32
MAX_TEXT_LEN = 200
MAX_ANTENNAS = 32
BOARD_KINDS = ("card", "chip")

# BoardError codes (documented in docs/reader-protocol.md).
ERR_ANTENNA_FAULT = 1
ERR_RX_CRC = 2
ERR_UNKNOWN_TYPE = 3
ERR_TX_OVERFLOW = 4
ERR_TAG_LIMIT = 5


def uid_hex(uid: bytes) -> str:
    """The host's spelling of a tag UID: uppercase hex, no separators."""
    return uid.hex().upper()


def uid_from_hex(text: str) -> bytes:
    """Parse a UID written as hex (any case); raise ProtocolError unless 4, 7 or 10 bytes."""
    try:
        uid = bytes.fromhex(text)
    except ValueError as exc:
        raise ProtocolError(f"tag UID {text!r} is not hex") from exc
    check_uid(uid)
    return uid


def check_uid(uid: bytes) -> None:
    """Raise ProtocolError unless `uid` is 4, 7 or 10 bytes (ISO 14443 single/double/triple)."""
    if len(uid) not in UID_LENGTHS:
        raise ProtocolError(f"tag UID must be 4, 7 or 10 bytes, got {len(uid)}")


def _ascii(text: str, what: str) -> bytes:
    raw = text.encode("ascii", errors="replace")
    if not 1 <= len(raw) <= MAX_NAME_LEN or not text.isascii() or not text.isprintable():
        raise ProtocolError(f"{what} {text!r} must be 1..{MAX_NAME_LEN} printable ASCII characters")
    return raw


def _u8(value: int, what: str) -> None:
    if not 0 <= value <= 0xFF:
        raise ProtocolError(f"{what} must be 0..255, got {value}")


class _Cursor:
    """Reads fields off a payload; running short or leaving bytes over is a ProtocolError."""

    def __init__(self, payload: bytes, what: str) -> None:
        self._data = payload
        self._pos = 0
        self._what = what

    def take(self, count: int) -> bytes:
        end = self._pos + count
        if end > len(self._data):
            raise ProtocolError(f"{self._what} payload truncated at byte {self._pos}")
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def rest(self) -> bytes:
        return self.take(len(self._data) - self._pos)

    def text(self, what: str) -> str:
        raw = self.take(self.u8())
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"{self._what}: {what} is not ASCII") from exc

    def uid(self) -> bytes:
        uid = self.take(self.u8())
        check_uid(uid)
        return uid

    def end(self) -> None:
        extra = len(self._data) - self._pos
        if extra:
            raise ProtocolError(f"{self._what} payload has {extra} unexpected trailing bytes")


@dataclass(frozen=True, slots=True)
class Hello:
    """Board to host: firmware, board kind and antenna names in port order."""

    TYPE: ClassVar[int] = 0x01
    firmware: str
    kind: str
    antennas: tuple[str, ...]
    protocol: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        _ascii(self.firmware, "firmware version")
        if self.kind not in BOARD_KINDS:
            raise ProtocolError(f"board kind must be one of {BOARD_KINDS}, got {self.kind!r}")
        if not 1 <= len(self.antennas) <= MAX_ANTENNAS:
            raise ProtocolError(f"a board has 1..{MAX_ANTENNAS} antennas, got {len(self.antennas)}")
        for name in self.antennas:
            _ascii(name, "antenna name")
        _u8(self.protocol, "protocol version")

    def payload(self) -> bytes:
        out = bytearray([self.protocol, BOARD_KINDS.index(self.kind)])
        fw = _ascii(self.firmware, "firmware version")
        out += bytes([len(fw)]) + fw + bytes([len(self.antennas)])
        for name in self.antennas:
            raw = _ascii(name, "antenna name")
            out += bytes([len(raw)]) + raw
        return bytes(out)

    @classmethod
    def parse(cls, payload: bytes) -> Hello:
        cur = _Cursor(payload, "HELLO")
        protocol, kind_code = cur.u8(), cur.u8()
        if kind_code >= len(BOARD_KINDS):
            raise ProtocolError(f"HELLO: unknown board kind code {kind_code}")
        firmware = cur.text("firmware version")
        names = tuple(cur.text("antenna name") for _ in range(cur.u8()))
        cur.end()
        return cls(firmware, BOARD_KINDS[kind_code], names, protocol)


@dataclass(frozen=True, slots=True)
class _TagMessage:
    """Common shape of TAG_IN and TAG_OUT: antenna index and tag UID."""

    antenna: int
    uid: bytes

    def __post_init__(self) -> None:
        _u8(self.antenna, "antenna index")
        check_uid(self.uid)

    @property
    def uid_hex(self) -> str:
        return uid_hex(self.uid)

    def payload(self) -> bytes:
        return bytes([self.antenna, len(self.uid)]) + self.uid


def _parse_tag(payload: bytes, what: str) -> tuple[int, bytes]:
    cur = _Cursor(payload, what)
    antenna, uid = cur.u8(), cur.uid()
    cur.end()
    return antenna, uid


@dataclass(frozen=True, slots=True)
class TagIn(_TagMessage):
    """Board to host: a tag entered an antenna's field."""

    TYPE: ClassVar[int] = 0x02

    @classmethod
    def parse(cls, payload: bytes) -> TagIn:
        return cls(*_parse_tag(payload, "TAG_IN"))


@dataclass(frozen=True, slots=True)
class TagOut(_TagMessage):
    """Board to host: a tag left an antenna's field."""

    TYPE: ClassVar[int] = 0x03

    @classmethod
    def parse(cls, payload: bytes) -> TagOut:
        return cls(*_parse_tag(payload, "TAG_OUT"))


@dataclass(frozen=True, slots=True)
class Inventory:
    """Board to host: every UID present, per antenna in port order (the board's truth)."""

    TYPE: ClassVar[int] = 0x04
    antennas: tuple[tuple[bytes, ...], ...]

    def __post_init__(self) -> None:
        if len(self.antennas) > MAX_ANTENNAS:
            raise ProtocolError(f"INVENTORY lists {len(self.antennas)} antennas (max 32)")
        for uids in self.antennas:
            _u8(len(uids), "tags per antenna")
            for uid in uids:
                check_uid(uid)

    def hex_lists(self) -> list[list[str]]:
        """The snapshot with UIDs spelled as the host spells them."""
        return [[uid_hex(uid) for uid in uids] for uids in self.antennas]

    def payload(self) -> bytes:
        out = bytearray([len(self.antennas)])
        for uids in self.antennas:
            out.append(len(uids))
            for uid in uids:
                out += bytes([len(uid)]) + uid
        return bytes(out)

    @classmethod
    def parse(cls, payload: bytes) -> Inventory:
        cur = _Cursor(payload, "INVENTORY")
        count = cur.u8()
        lists = tuple(tuple(cur.uid() for _ in range(cur.u8())) for _ in range(count))
        cur.end()
        return cls(lists)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Board to host: still alive; milliseconds since the board booted (wraps at 2**32)."""

    TYPE: ClassVar[int] = 0x05
    uptime_ms: int

    def __post_init__(self) -> None:
        if not 0 <= self.uptime_ms <= 0xFFFFFFFF:
            raise ProtocolError(f"uptime must fit in 32 bits, got {self.uptime_ms}")

    def payload(self) -> bytes:
        return struct.pack(">I", self.uptime_ms)

    @classmethod
    def parse(cls, payload: bytes) -> Heartbeat:
        cur = _Cursor(payload, "HEARTBEAT")
        (uptime,) = struct.unpack(">I", cur.take(4))
        cur.end()
        return cls(int(uptime))


@dataclass(frozen=True, slots=True)
class BoardError:
    """Board to host: a fault (error code and human-readable UTF-8 text)."""

    TYPE: ClassVar[int] = 0x06
    code: int
    text: str

    def __post_init__(self) -> None:
        _u8(self.code, "error code")
        if len(self.text.encode("utf-8")) > MAX_TEXT_LEN:
            raise ProtocolError(f"error text longer than {MAX_TEXT_LEN} bytes")

    def payload(self) -> bytes:
        return bytes([self.code]) + self.text.encode("utf-8")

    @classmethod
    def parse(cls, payload: bytes) -> BoardError:
        cur = _Cursor(payload, "ERROR")
        code = cur.u8()
        try:
            text = cur.rest().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError("ERROR text is not UTF-8") from exc
        return cls(code, text)


@dataclass(frozen=True, slots=True)
class _EmptyMessage:
    """A message with no payload."""

    NAME: ClassVar[str] = "request"

    def payload(self) -> bytes:
        return b""

    @classmethod
    def _check_empty(cls, payload: bytes) -> None:
        _Cursor(payload, cls.NAME).end()


@dataclass(frozen=True, slots=True)
class InventoryRequest(_EmptyMessage):
    """Host to board: send an INVENTORY now."""

    TYPE: ClassVar[int] = 0x81
    NAME: ClassVar[str] = "INVENTORY_REQUEST"

    @classmethod
    def parse(cls, payload: bytes) -> InventoryRequest:
        cls._check_empty(payload)
        return cls()


@dataclass(frozen=True, slots=True)
class HelloRequest(_EmptyMessage):
    """Host to board: send a HELLO now."""

    TYPE: ClassVar[int] = 0x82
    NAME: ClassVar[str] = "HELLO_REQUEST"

    @classmethod
    def parse(cls, payload: bytes) -> HelloRequest:
        cls._check_empty(payload)
        return cls()


Message = (
    Hello | TagIn | TagOut | Inventory | Heartbeat | BoardError | InventoryRequest | HelloRequest
)

_PARSERS: dict[int, Callable[[bytes], Message]] = {
    Hello.TYPE: Hello.parse,
    TagIn.TYPE: TagIn.parse,
    TagOut.TYPE: TagOut.parse,
    Inventory.TYPE: Inventory.parse,
    Heartbeat.TYPE: Heartbeat.parse,
    BoardError.TYPE: BoardError.parse,
    InventoryRequest.TYPE: InventoryRequest.parse,
    HelloRequest.TYPE: HelloRequest.parse,
}


def parse_message(msg_type: int, payload: bytes) -> Message:
    """The typed message for a frame's type byte and payload; raise ProtocolError if malformed."""
    parser = _PARSERS.get(msg_type)
    if parser is None:
        raise ProtocolError(f"unknown message type 0x{msg_type:02X}")
    return parser(payload)
