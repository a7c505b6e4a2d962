"""Reader board framing on the host: typed frames over the shared codec in firmware/protocol.py.

The pure decoder (`decode`), the CRC, the header check and the sequence tracking are the
board's own code (`firmware.protocol`), imported here so host and board cannot drift apart;
this module adds typed messages, the project's ProtocolError and the host's counters.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.reader.messages import (
    BoardError,
    Heartbeat,
    Hello,
    HelloRequest,
    Inventory,
    InventoryRequest,
    Message,
    TagIn,
    TagOut,
    parse_message,
)
from firmware import protocol as wire
from kernel.errors import ProtocolError

__all__ = [
    "CRC_LEN",
    "HEADER_LEN",
    "MAX_PAYLOAD",
    "SYNC",
    "BoardError",
    "DecodeResult",
    "Frame",
    "FrameDecoder",
    "FrameEncoder",
    "Heartbeat",
    "Hello",
    "HelloRequest",
    "Inventory",
    "InventoryRequest",
    "Message",
    "TagIn",
    "TagOut",
    "crc16",
    "decode",
    "encode",
    "header_check",
]

SYNC = wire.SYNC
HEADER_LEN = wire.HEADER_LEN  # sync(2) + length(2) + seq(1) + type(1) + header check(1)
CRC_LEN = wire.CRC_LEN
MAX_PAYLOAD = wire.MAX_PAYLOAD
crc16 = wire.crc16
header_check = wire.header_check


def encode(msg: Message, seq: int) -> bytes:
    """One complete frame carrying `msg` with sequence number `seq` (0..255)."""
    try:
        return wire.encode_frame(seq, msg.TYPE, msg.payload())
    except wire.WireError as exc:
        raise ProtocolError(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class Frame:
    """A decoded frame; `gap` is how many frames were missed before it (set by FrameDecoder)."""

    seq: int
    msg: Message
    gap: int = 0


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """What one `decode` call found.

    `consumed` bytes may be dropped from the front of the buffer. `frame` is the first good
    frame, if any. `seq`/`msg_type` are set for every frame whose CRC was good, including one
    whose payload was malformed (then `frame` is None and `error` says why). When `seq` is None
    the buffer holds no complete frame: feed more bytes.
    """

    consumed: int
    frame: Frame | None
    bad_bytes: int
    crc_errors: int
    seq: int | None = None
    msg_type: int | None = None
    error: str | None = None


def _parse(msg_type: int, payload: bytes) -> tuple[Message | None, str | None]:
    try:
        return parse_message(msg_type, payload), None
    except ProtocolError as exc:
        return None, str(exc)


def decode(buffer: bytes | bytearray, max_payload: int = MAX_PAYLOAD) -> DecodeResult:
    """Find the first frame in `buffer`: pure, no state, never raises on bad input."""
    consumed, bad, crc_errors, seq, msg_type, payload = wire.decode_frame(buffer, max_payload)
    if seq < 0 or payload is None:
        return DecodeResult(consumed, None, bad, crc_errors)
    msg, error = _parse(msg_type, payload)
    frame = Frame(seq, msg) if msg is not None else None
    return DecodeResult(consumed, frame, bad, crc_errors, seq, msg_type, error)


class FrameEncoder:
    """Numbers outgoing frames: 8-bit sequence per direction, wrapping 255 -> 0."""

    def __init__(self, first_seq: int = 0) -> None:
        self._writer = wire.FrameWriter(first_seq)

    @property
    def next_seq(self) -> int:
        return self._writer.next_seq

    def encode(self, msg: Message) -> bytes:
        frame = encode(msg, self._writer.next_seq)
        self._writer.skip()
        return frame

    def skip(self) -> int:
        """Consume a sequence number without producing a frame (a frame lost on the wire)."""
        return self._writer.skip()


class FrameDecoder:
    """Stateful decoding: buffers bytes, counts faults, detects sequence gaps (the shared
    `FrameReader`), and parses payloads into typed messages.

    A HELLO restarts sequence tracking (the board may have rebooted), as does `reset()`.
    """

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self._reader = wire.FrameReader(max_payload)
        self.frames = 0
        self.malformed = 0
        self.last_error: str | None = None

    @property
    def max_payload(self) -> int:
        return self._reader.max_payload

    def reset(self) -> None:
        """Forget buffered bytes and the expected sequence (e.g. after reopening the port)."""
        self._reader.reset()

    @property
    def buffered(self) -> int:
        return len(self._reader.buffer)

    @property
    def bad_bytes(self) -> int:
        return self._reader.bad_bytes

    @property
    def crc_errors(self) -> int:
        return self._reader.crc_errors

    @property
    def seq_gaps(self) -> int:
        return self._reader.seq_gaps

    @property
    def lost_frames(self) -> int:
        return self._reader.lost_frames

    def counters(self) -> dict[str, int]:
        return {
            "frames": self.frames,
            "bad_bytes": self.bad_bytes,
            "crc_errors": self.crc_errors,
            "seq_gaps": self.seq_gaps,
            "lost_frames": self.lost_frames,
            "malformed": self.malformed,
        }

    def feed(self, data: bytes | bytearray) -> list[Frame]:
        """Add received bytes; return the complete frames they finished, in order."""
        out: list[Frame] = []
        for seq, msg_type, payload, gap in self._reader.feed(data):
            msg, error = _parse(msg_type, payload)
            if msg is None:
                self.malformed += 1
                self.last_error = error
            else:
                self.frames += 1
                out.append(Frame(seq, msg, gap) if gap else Frame(seq, msg))
        return out


