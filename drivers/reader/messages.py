"""Reader board messages: typed dataclasses over the shared payload codec (no framing, no I/O).

The byte layout lives once, in `firmware/protocol.py`, which the board runs too; this module
gives the host typed messages and turns the codec's errors into ProtocolError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Self, TypeVar

from firmware import protocol as wire
from kernel.errors import ProtocolError

PROTOCOL_VERSION = wire.PROTOCOL_VERSION
UID_LENGTHS = wire.UID_LENGTHS
MAX_NAME_LEN = wire.MAX_NAME_LEN
MAX_TEXT_LEN = wire.MAX_TEXT_LEN
MAX_ANTENNAS = wire.MAX_ANTENNAS
BOARD_KINDS = wire.BOARD_KINDS

# BoardError codes (documented in docs/reader-protocol.md).
ERR_ANTENNA_FAULT = wire.ERR_ANTENNA_FAULT
ERR_RX_CRC = wire.ERR_RX_CRC
ERR_UNKNOWN_TYPE = wire.ERR_UNKNOWN_TYPE
ERR_TX_OVERFLOW = wire.ERR_TX_OVERFLOW
ERR_TAG_LIMIT = wire.ERR_TAG_LIMIT
ERR_RX_CUT = wire.ERR_RX_CUT

T = TypeVar("T")


def _checked(call: Callable[[], T]) -> T:
    """Run a codec call, raising the project's ProtocolError for what the wire refuses."""
    try:
        return call()
    except wire.WireError as exc:
        raise ProtocolError(str(exc)) from exc


def uid_hex(uid: bytes) -> str:
    """The host's spelling of a tag UID: uppercase hex, no separators."""
    return wire.hex_uid(uid)


def uid_from_hex(text: str) -> bytes:
    """Parse a UID written as hex (any case); raise ProtocolError unless 4, 7, 8 or 10 bytes."""
    try:
        uid = bytes.fromhex(text)
    except ValueError as exc:
        raise ProtocolError(f"tag UID {text!r} is not hex") from exc
    check_uid(uid)
    return uid


def check_uid(uid: bytes) -> None:
    """Raise ProtocolError unless `uid` is 4, 7 or 10 bytes (ISO 14443) or 8 (ISO 15693)."""
    _checked(lambda: wire.check_uid(uid))


@dataclass(frozen=True, slots=True)
class Hello:
    """Board to host: firmware, board kind and antenna names in port order."""

    TYPE: ClassVar[int] = wire.HELLO
    firmware: str
    kind: str
    antennas: tuple[str, ...]
    protocol: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        self.payload()  # validates every field

    def payload(self) -> bytes:
        return _checked(
            lambda: wire.hello_payload(self.firmware, self.kind, self.antennas, self.protocol)
        )

    @classmethod
    def parse(cls, payload: bytes) -> Hello:
        protocol, kind, firmware, names = _checked(lambda: wire.parse_hello(payload))
        return cls(firmware, kind, names, protocol)


@dataclass(frozen=True, slots=True)
class _TagMessage:
    """Common shape of TAG_IN and TAG_OUT: antenna index, tag UID and the board's time.

    `board_ms` is the board's monotonic milliseconds (since it booted, modulo 2**32) of the
    read; None from a protocol version 1 board, which does not send it.
    """

    antenna: int
    uid: bytes
    board_ms: int | None = None

    def __post_init__(self) -> None:
        self.payload()

    @property
    def uid_hex(self) -> str:
        return uid_hex(self.uid)

    def payload(self) -> bytes:
        return _checked(lambda: wire.tag_payload(self.antenna, self.uid, self.board_ms))


@dataclass(frozen=True, slots=True)
class TagIn(_TagMessage):
    """Board to host: a tag entered an antenna's field."""

    TYPE: ClassVar[int] = wire.TAG_IN

    @classmethod
    def parse(cls, payload: bytes) -> TagIn:
        return cls(*_checked(lambda: wire.parse_tag(payload, "TAG_IN")))


@dataclass(frozen=True, slots=True)
class TagOut(_TagMessage):
    """Board to host: a tag left an antenna's field."""

    TYPE: ClassVar[int] = wire.TAG_OUT

    @classmethod
    def parse(cls, payload: bytes) -> TagOut:
        return cls(*_checked(lambda: wire.parse_tag(payload, "TAG_OUT")))


@dataclass(frozen=True, slots=True)
class Inventory:
    """Board to host: every UID present, per antenna in port order (the board's truth).

    `board_ms` is the board's time of the snapshot (None from a protocol version 1 board).
    """

    TYPE: ClassVar[int] = wire.INVENTORY
    antennas: tuple[tuple[bytes, ...], ...]
    board_ms: int | None = None

    def __post_init__(self) -> None:
        self.payload()

    @classmethod
    def whole(cls, antennas: tuple[tuple[bytes, ...], ...], board_ms: int | None) -> Inventory:
        """A snapshot that may be larger than one frame (joined from INVENTORY_PAGEs):
        its UIDs are checked, not its size."""
        if len(antennas) > MAX_ANTENNAS:
            raise ProtocolError(f"an inventory of {len(antennas)} antennas (max {MAX_ANTENNAS})")
        for uids in antennas:
            for uid in uids:
                check_uid(uid)
        inventory = object.__new__(cls)
        object.__setattr__(inventory, "antennas", antennas)
        object.__setattr__(inventory, "board_ms", board_ms)
        return inventory

    def hex_lists(self) -> list[list[str]]:
        """The snapshot with UIDs spelled as the host spells them."""
        return [[uid_hex(uid) for uid in uids] for uids in self.antennas]

    def payload(self) -> bytes:
        return _checked(lambda: wire.inventory_payload(self.antennas, self.board_ms))

    @classmethod
    def parse(cls, payload: bytes) -> Inventory:
        lists, board_ms = _checked(lambda: wire.parse_inventory(payload))
        return cls(lists, board_ms)


@dataclass(frozen=True, slots=True)
class InventoryPage:
    """Board to host (version 4): one page of an inventory too large for one frame.

    `antennas` holds, per antenna in port order, the next UIDs of its list (maybe none);
    the pages of one snapshot (same `board_ms`, `pages` of them) come one after the other,
    and joining each antenna's pieces in page order gives the snapshot (`join`).
    """

    TYPE: ClassVar[int] = wire.INVENTORY_PAGE
    page: int
    pages: int
    board_ms: int
    antennas: tuple[tuple[bytes, ...], ...]

    def __post_init__(self) -> None:
        self.payload()

    def payload(self) -> bytes:
        def build() -> bytes:
            if not 0 <= self.page < self.pages <= wire.MAX_PAGES:
                raise wire.WireError(f"INVENTORY_PAGE: page {self.page} of {self.pages}")
            body = wire.inventory_payload(self.antennas, self.board_ms)
            return bytes([self.page, self.pages]) + body[-4:] + body[:-4]

        return _checked(build)

    @classmethod
    def parse(cls, payload: bytes) -> InventoryPage:
        page, pages, board_ms, lists = _checked(lambda: wire.parse_inventory_page(payload))
        return cls(page, pages, board_ms, lists)

    @staticmethod
    def join(pages: list[InventoryPage]) -> Inventory:
        """The snapshot the pages of one inventory make; ProtocolError if they do not."""
        first = pages[0] if pages else None
        if (
            first is None
            or [p.page for p in pages] != list(range(first.pages))
            or any(
                p.pages != first.pages
                or p.board_ms != first.board_ms
                or len(p.antennas) != len(first.antennas)
                for p in pages
            )
        ):
            raise ProtocolError("the pages of an inventory do not make one snapshot")
        lists = [list(uids) for uids in first.antennas]
        for page in pages[1:]:
            for index, uids in enumerate(page.antennas):
                lists[index].extend(uids)
        return Inventory.whole(tuple(tuple(uids) for uids in lists), first.board_ms)


@dataclass(frozen=True, slots=True)
class Arrivals:
    """Board to host (version 3), in answer to ARRIVALS_REQUEST: when each tag present
    arrived on its antenna, newest first. `board_ms` is the board's time as it answered,
    `tags` holds (antenna index, UID, arrival board time); a tag the board found at
    power-up is not listed (its arrival is unknown)."""

    TYPE: ClassVar[int] = wire.ARRIVALS
    board_ms: int
    tags: tuple[tuple[int, bytes, int], ...] = ()

    def __post_init__(self) -> None:
        self.payload()

    def ages(self) -> dict[tuple[int, str], int]:
        """(antenna index, UID in hex) -> how many milliseconds before `board_ms` it
        arrived (board time wraps at 2**32, so the difference is taken modulo 2**32)."""
        return {
            (antenna, uid_hex(uid)): (self.board_ms - arrived) & wire.U32_MAX
            for antenna, uid, arrived in self.tags
        }

    def payload(self) -> bytes:
        return _checked(lambda: wire.arrivals_payload(self.board_ms, list(self.tags)))

    @classmethod
    def parse(cls, payload: bytes) -> Arrivals:
        return cls(*_checked(lambda: wire.parse_arrivals(payload)))


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Board to host: still alive; milliseconds since the board booted (wraps at 2**32)."""

    TYPE: ClassVar[int] = wire.HEARTBEAT
    uptime_ms: int

    def __post_init__(self) -> None:
        self.payload()

    def payload(self) -> bytes:
        return _checked(lambda: wire.heartbeat_payload(self.uptime_ms))

    @classmethod
    def parse(cls, payload: bytes) -> Heartbeat:
        return cls(_checked(lambda: wire.parse_heartbeat(payload)))


@dataclass(frozen=True, slots=True)
class BoardError:
    """Board to host: a fault (error code and human-readable UTF-8 text)."""

    TYPE: ClassVar[int] = wire.ERROR
    code: int
    text: str

    def __post_init__(self) -> None:
        self.payload()

    def payload(self) -> bytes:
        return _checked(lambda: wire.error_payload(self.code, self.text))

    @classmethod
    def parse(cls, payload: bytes) -> BoardError:
        return cls(*_checked(lambda: wire.parse_error(payload)))


@dataclass(frozen=True, slots=True)
class _EmptyMessage:
    """A message with no payload."""

    NAME: ClassVar[str] = "request"

    def payload(self) -> bytes:
        return b""

    @classmethod
    def parse(cls, payload: bytes) -> Self:
        _checked(lambda: wire.parse_empty(payload, cls.NAME))
        return cls()


@dataclass(frozen=True, slots=True)
class InventoryRequest(_EmptyMessage):
    """Host to board: send an INVENTORY now."""

    TYPE: ClassVar[int] = wire.INVENTORY_REQUEST
    NAME: ClassVar[str] = "INVENTORY_REQUEST"


@dataclass(frozen=True, slots=True)
class HelloRequest(_EmptyMessage):
    """Host to board: send a HELLO now."""

    TYPE: ClassVar[int] = wire.HELLO_REQUEST
    NAME: ClassVar[str] = "HELLO_REQUEST"


@dataclass(frozen=True, slots=True)
class Focus:
    """Host to board (version 4): the antennas to read first (indexes in port order; none:
    every antenna in turn), held for `lease_ms` unless renewed (0: until the next FOCUS)."""

    TYPE: ClassVar[int] = wire.FOCUS
    antennas: frozenset[int] = frozenset()
    lease_ms: int = 0

    def __post_init__(self) -> None:
        self.payload()

    @property
    def mask(self) -> int:
        mask = 0
        for index in self.antennas:
            if not 0 <= index < MAX_ANTENNAS:
                raise ProtocolError(f"antenna index {index} outside 0..{MAX_ANTENNAS - 1}")
            mask |= 1 << index
        return mask

    def payload(self) -> bytes:
        return _checked(lambda: wire.focus_payload(self.mask, self.lease_ms))

    @classmethod
    def parse(cls, payload: bytes) -> Focus:
        mask, lease_ms = _checked(lambda: wire.parse_focus(payload))
        return cls(frozenset(i for i in range(MAX_ANTENNAS) if mask >> i & 1), lease_ms)


@dataclass(frozen=True, slots=True)
class ArrivalsRequest(_EmptyMessage):
    """Host to board (version 3): send ARRIVALS now (a board before version 3 answers
    ERROR 3)."""

    TYPE: ClassVar[int] = wire.ARRIVALS_REQUEST
    NAME: ClassVar[str] = "ARRIVALS_REQUEST"


Message = (
    Hello
    | TagIn
    | TagOut
    | Inventory
    | Heartbeat
    | BoardError
    | Arrivals
    | InventoryPage
    | InventoryRequest
    | HelloRequest
    | ArrivalsRequest
    | Focus
)

_PARSERS: dict[int, Callable[[bytes], Message]] = {
    Hello.TYPE: Hello.parse,
    TagIn.TYPE: TagIn.parse,
    TagOut.TYPE: TagOut.parse,
    Inventory.TYPE: Inventory.parse,
    Heartbeat.TYPE: Heartbeat.parse,
    BoardError.TYPE: BoardError.parse,
    Arrivals.TYPE: Arrivals.parse,
    InventoryPage.TYPE: InventoryPage.parse,
    InventoryRequest.TYPE: InventoryRequest.parse,
    HelloRequest.TYPE: HelloRequest.parse,
    ArrivalsRequest.TYPE: ArrivalsRequest.parse,
    Focus.TYPE: Focus.parse,
}


def parse_message(msg_type: int, payload: bytes) -> Message:
    """The typed message for a frame's type byte and payload; raise ProtocolError if malformed."""
    parser = _PARSERS.get(msg_type)
    if parser is None:
        raise ProtocolError(f"unknown message type 0x{msg_type:02X}")
    return parser(payload)
