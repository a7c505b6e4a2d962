"""A virtual contactless badge for pcscd's vpcd reader (vsmartcard): our own vpcd client.

pcscd loads the vpcd driver (`/etc/reader.conf.d/vpcd`), which listens on TCP (port
0x8C7B = 35963 for its first slot "Virtual PCD 00 00", +1 for each further slot). A
virtual card connects to it as a client: connected is "card on the reader", disconnected
is "card gone". Every message either way is a 2-byte big-endian length and its bytes.
From the reader, a 1-byte message is a control code (0x00 power off, 0x01 power on, 0x02
reset, 0x04 send the ATR: the only one that is answered); anything longer is an APDU to
answer with a response APDU. This card answers the PC/SC GET UID command `FF CA 00 00 00`
with its uid and 90 00, and every other APDU with 6D 00 (instruction not supported).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading

from kernel.errors import DeviceError
from kernel.inputs import is_badge_uid

log = logging.getLogger(__name__)

VPCD_HOST = "127.0.0.1"
VPCD_PORT = 0x8C7B  # 35963: the port of slot 0 in the Debian package's /etc/reader.conf.d/vpcd

POWER_OFF, POWER_ON, RESET, GET_ATR = 0x00, 0x01, 0x02, 0x04
# ATR of an ISO 14443-4 contactless card as a PC/SC reader presents it (T=1, one historical
# byte), as a DESFire badge on an ACR122U shows it.
DEFAULT_ATR = bytes.fromhex("3B8180018080")
SW_OK = b"\x90\x00"
SW_INS_NOT_SUPPORTED = b"\x6d\x00"


class VirtualBadge:
    """One virtual card on one vpcd slot. `insert(uid)` lays a badge on the reader,
    `remove()` takes it off, `drop()` cuts the connection abruptly (TCP reset).

    While inserted, a lost connection (pcscd restarted) is made again, as a badge lying on
    a reader is read again when the reader comes back. `uid_status` replaces 90 00 as the
    answer to GET UID (then without the uid), to play a card the reader cannot read.
    """

    def __init__(
        self,
        host: str = VPCD_HOST,
        port: int = VPCD_PORT,
        *,
        atr: bytes = DEFAULT_ATR,
        uid_status: bytes = SW_OK,
        retry_interval: float = 0.1,
    ) -> None:
        self.host = host
        self.port = port
        self.atr = bytes(atr)
        self.uid_status = bytes(uid_status)
        self.retry_interval = retry_interval
        self.uid: str | None = None
        self.powered = False
        self.connections = 0  # how many times the reader accepted this card
        self.apdus: list[bytes] = []  # every APDU received, in order
        self.atr_requests = 0  # vpcd asks for the ATR at each presence poll (~every 0.4 s)
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._abrupt = False
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the card's life -------------------------------------------------------------------

    @property
    def inserted(self) -> bool:
        """True between insert() and remove()/drop()."""
        return self._thread is not None

    @property
    def connected(self) -> bool:
        """True while a TCP connection to vpcd is open."""
        return self._connected.is_set()

    def insert(self, uid: str, timeout: float = 10.0) -> None:
        """Lay the badge `uid` (hex) on the reader: connect to vpcd, then answer it.

        Waits until the connection is made; DeviceError when vpcd is not listening
        within `timeout` seconds.
        """
        if not is_badge_uid(uid):
            raise DeviceError(f"virtual badge: bad uid {uid!r} (2..40 hex digits, whole bytes)")
        if self._thread is not None:
            raise DeviceError(f"virtual badge {self.uid} is still on the reader: remove it first")
        self.uid = uid.upper()
        self._stop.clear()
        self._connected.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"virtual badge {self.uid}", daemon=True
        )
        self._thread.start()
        if not self._connected.wait(timeout):
            self._halt(abrupt=False)
            raise DeviceError(
                f"virtual badge: vpcd is not listening on {self.host}:{self.port} "
                f"(is pcscd running with the vpcd driver?)"
            )

    def remove(self) -> None:
        """Take the badge off the reader (an orderly close of the connection)."""
        self._halt(abrupt=False)

    def drop(self) -> None:
        """The card vanishes abruptly: the connection is reset, not closed."""
        self._halt(abrupt=True)

    def __enter__(self) -> VirtualBadge:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.remove()

    def _halt(self, *, abrupt: bool) -> None:
        thread, self._thread = self._thread, None
        self._abrupt = abrupt
        self._stop.set()
        with self._lock:
            sock = self._sock
        if sock is not None:
            # wakes the serving thread's recv without telling vpcd anything; the thread
            # then closes the connection (orderly, or with a reset)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RD)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
        self._connected.clear()
        self.powered = False

    # -- the connection --------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                sock = socket.create_connection((self.host, self.port), timeout=1.0)
            except OSError:
                self._stop.wait(self.retry_interval)
                continue
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._stop.is_set():
                    sock.close()
                    return
                self._sock = sock
            self.connections += 1
            self._connected.set()
            try:
                self._serve(sock)
            except OSError as exc:
                log.debug("virtual badge %s: connection lost: %s", self.uid, exc)
            finally:
                self._connected.clear()
                self.powered = False
                with self._lock:
                    self._sock = None
                self._close(sock)
            self._stop.wait(self.retry_interval)

    def _close(self, sock: socket.socket) -> None:
        if self._stop.is_set() and self._abrupt:
            # SO_LINGER with a zero timeout: close() sends a TCP reset, as a card torn away
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def _serve(self, sock: socket.socket) -> None:
        while True:
            header = _recv_exactly(sock, 2)
            if header is None:
                return  # vpcd closed the connection (pcscd stopped)
            (length,) = struct.unpack(">H", header)
            message = _recv_exactly(sock, length) if length else b""
            if message is None:
                return
            reply = self.answer(message)
            if reply is not None:
                sock.sendall(struct.pack(">H", len(reply)) + reply)

    def answer(self, message: bytes) -> bytes | None:
        """What the card replies to one vpcd message (None: no reply)."""
        if len(message) == 1:
            code = message[0]
            if code == GET_ATR:
                self.atr_requests += 1
                return self.atr
            if code in (POWER_ON, RESET):
                self.powered = True
            elif code == POWER_OFF:
                self.powered = False
            return None
        self.apdus.append(message)
        if len(message) >= 4 and message[:4] == b"\xff\xca\x00\x00":
            if self.uid_status != SW_OK:
                return self.uid_status
            uid = bytes.fromhex(self.uid or "")
            return uid + SW_OK
        return SW_INS_NOT_SUPPORTED


def _recv_exactly(sock: socket.socket, size: int) -> bytes | None:
    """`size` bytes from the socket, or None at end of stream."""
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
