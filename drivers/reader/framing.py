"""Reader board framing: encode frames and decode a byte stream, resynchronising on garbage."""

from __future__ import annotations

import binascii
from dataclasses import dataclass, replace

from controller.errors import ProtocolError
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

__all__ = [
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

SYNC = b"\xa5\x5a"
HEADER_LEN = 7  # sync(2) + length(2) + seq(1) + type(1) + header check(1)
CRC_LEN = 2
MAX_PAYLOAD = 1024


def crc16(data: bytes | bytearray | memoryview) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout)."""
    return binascii.crc_hqx(data, 0xFFFF)


def header_check(length: int, seq: int, msg_type: int) -> int:
    """The header check byte: XOR of the length, seq and type bytes, inverted."""
    return (length >> 8) ^ (length & 0xFF) ^ seq ^ msg_type ^ 0xFF


def encode(msg: Message, seq: int) -> bytes:
    """One complete frame carrying `msg` with sequence number `seq` (0..255)."""
    if not 0 <= seq <= 0xFF:
        raise ProtocolError(f"sequence number must be 0..255, got {seq}")
    payload = msg.payload()
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    length = len(payload)
    body = bytes([length >> 8, length & 0xFF, seq, msg.TYPE, header_check(length, seq, msg.TYPE)])
    body += payload
    crc = crc16(body)
    return SYNC + body + bytes([crc >> 8, crc & 0xFF])


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


def decode(buffer: bytes | bytearray, max_payload: int = MAX_PAYLOAD) -> DecodeResult:
    """Find the first frame in `buffer`: pure, no state, never raises on bad input."""
    n = len(buffer)
    pos = bad = crc_errors = 0
    while True:
        start = buffer.find(SYNC, pos)
        if start < 0:
            keep = 1 if n > pos and buffer[n - 1] == SYNC[0] else 0
            return DecodeResult(n - keep, None, bad + n - keep - pos, crc_errors)
        bad += start - pos
        pos = start
        if n - pos < HEADER_LEN:
            return DecodeResult(pos, None, bad, crc_errors)
        length = buffer[pos + 2] << 8 | buffer[pos + 3]
        seq, msg_type, check = buffer[pos + 4], buffer[pos + 5], buffer[pos + 6]
        if check != header_check(length, seq, msg_type) or length > max_payload:
            bad, pos = bad + 1, pos + 1  # a false sync: rescan from the next byte
            continue
        end = pos + HEADER_LEN + length + CRC_LEN
        if n < end:
            return DecodeResult(pos, None, bad, crc_errors)
        if crc16(buffer[pos + 2 : end - CRC_LEN]) != (buffer[end - 2] << 8 | buffer[end - 1]):
            # Never trust the length of a frame that failed its CRC: advance one byte only.
            bad, pos, crc_errors = bad + 1, pos + 1, crc_errors + 1
            continue
        payload = bytes(buffer[pos + HEADER_LEN : end - CRC_LEN])
        try:
            msg = parse_message(msg_type, payload)
        except ProtocolError as exc:
            return DecodeResult(end, None, bad, crc_errors, seq, msg_type, str(exc))
        return DecodeResult(end, Frame(seq, msg), bad, crc_errors, seq, msg_type)


class FrameEncoder:
    """Numbers outgoing frames: 8-bit sequence per direction, wrapping 255 -> 0."""

    def __init__(self, first_seq: int = 0) -> None:
        self.next_seq = first_seq & 0xFF

    def encode(self, msg: Message) -> bytes:
        frame = encode(msg, self.next_seq)
        self.next_seq = (self.next_seq + 1) & 0xFF
        return frame

    def skip(self) -> int:
        """Consume a sequence number without producing a frame (a frame lost on the wire)."""
        seq = self.next_seq
        self.next_seq = (seq + 1) & 0xFF
        return seq


class FrameDecoder:
    """Stateful wrapper over `decode`: buffers bytes, counts faults, detects sequence gaps.

    A HELLO restarts sequence tracking (the board may have rebooted), as does `reset()`.
    """

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()
        self._last_seq: int | None = None
        self.frames = 0
        self.bad_bytes = 0
        self.crc_errors = 0
        self.seq_gaps = 0
        self.lost_frames = 0
        self.malformed = 0
        self.last_error: str | None = None

    def reset(self) -> None:
        """Forget buffered bytes and the expected sequence (e.g. after reopening the port)."""
        self._buffer.clear()
        self._last_seq = None

    @property
    def buffered(self) -> int:
        return len(self._buffer)

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
        self._buffer += data
        out: list[Frame] = []
        while True:
            result = decode(self._buffer, self.max_payload)
            del self._buffer[: result.consumed]
            self.bad_bytes += result.bad_bytes
            self.crc_errors += result.crc_errors
            if result.seq is None:
                return out
            gap = self._track(result.seq, result.msg_type == Hello.TYPE)
            if result.frame is None:
                self.malformed += 1
                self.last_error = result.error
            else:
                self.frames += 1
                out.append(replace(result.frame, gap=gap) if gap else result.frame)

    def _track(self, seq: int, restart: bool) -> int:
        expected = None if self._last_seq is None else (self._last_seq + 1) & 0xFF
        self._last_seq = seq
        if restart or expected is None or seq == expected:
            return 0
        gap = (seq - expected) & 0xFF
        self.seq_gaps += 1
        self.lost_frames += gap
        return gap
