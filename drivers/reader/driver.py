"""Host driver for an RFID reader board: pyserial reader thread, resync by inventory, alerts."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

import serial

from drivers.reader import messages as msgs
from drivers.reader.alerts import AlertLimiter
from drivers.reader.board_clock import BoardClock
from drivers.reader.framing import Frame, FrameDecoder, FrameEncoder
from drivers.reader.port import PollSerial
from drivers.reader.view import Change, TagView
from kernel.errors import ProtocolError
from kernel.inputs import TagIn, TagOut, Timed

log = logging.getLogger(__name__)

EventSink = Callable[[TagIn | TagOut], None]
AlertSink = Callable[[str, str, dict[str, object]], None]
DeviceSink = Callable[[str], None]  # "offline" | "online"
FrameSink = Callable[[Frame], None]
CatchUpSink = Callable[[list[Timed]], None]


class ReaderDriver:
    """Reads one reader board and reports tag arrivals/departures by configured antenna name.

    The view of which UID sits at which antenna is only ever changed by the board's own
    reports: TAG_IN/TAG_OUT, or an INVENTORY (requested after a sequence gap, a reconnect or an
    unsolicited HELLO) whose difference from the view is emitted as TagOut/TagIn events.
    Callbacks run on the driver thread.

    Availability goes to `on_device`: "offline" once when the port cannot be opened, is
    lost, or the board goes silent; "online" once the port is open again AND a full
    INVENTORY was applied, i.e. after the diff events it produced (same thread, so they
    reach the caller first). The first successful sync reports "online" too. A board that
    restarts without going away (an unasked HELLO after the sync, or its uptime going
    backwards) is resynchronised the same way: `reader_restarted` alert, "offline" (what it
    reported around its reboot may be lost), a full INVENTORY, "online".
    A lost port is reopened with capped exponential backoff (`reconnect_delay` doubling
    up to `reconnect_max_delay`). `initial` seeds the view (what the journal says is on
    the antennas), so a restarted daemon emits only what changed while it was away.
    `clock` stamps events; `monotonic` times the driver's own timeouts. `on_frame`, if
    given, sees every decoded frame first (e.g. the board's own time, `board_ms`, of a
    TAG_IN/TAG_OUT/INVENTORY from a protocol version 2 board).

    With `on_catch_up`, the difference an INVENTORY makes goes there as one list instead
    of event by event, each event with the time the board saw the move, mapped onto
    `clock` (docs/reader-protocol.md, *Board time on the host*): every INVENTORY request
    is preceded by an ARRIVALS_REQUEST (protocol version 3), whose answer says when each
    tag arrived; a departure has the time of the same tag's arrival elsewhere, else None.

    `set_focus` names the antennas that matter now (docs/reader-protocol.md, *The
    schedule*): a board of protocol version 4 reads them first; the focus goes to it at
    once, again after it restarted or lost a host frame, and is renewed well within its
    lease (`focus_lease`, seconds), so a board whose host went away reads every antenna in
    turn again. An older board is never sent one: it keeps its full cycle. An inventory
    too large for one frame arrives as INVENTORY_PAGEs, joined here into one.
    """

    def __init__(
        self,
        port: str,
        antennas: Sequence[str],
        on_event: EventSink,
        on_alert: AlertSink,
        clock: Callable[[], float],
        baudrate: int = 115200,
        name: str = "card_reader",
        reconnect_delay: float = 0.25,
        silent_after: float = 3.0,
        alert_interval: float = 1.0,
        request_timeout: float = 1.0,
        *,
        on_device: DeviceSink | None = None,
        reconnect_max_delay: float = 4.0,
        monotonic: Callable[[], float] = time.monotonic,
        initial: Mapping[str, Sequence[str]] | None = None,
        on_frame: FrameSink | None = None,
        on_catch_up: CatchUpSink | None = None,
        board_time: bool = False,
        focus_lease: float = 5.0,
    ) -> None:
        self.port = port
        self.antennas = tuple(antennas)
        self.baudrate = baudrate
        self.name = name
        self.reconnect_delay = reconnect_delay
        self.reconnect_max_delay = max(reconnect_max_delay, reconnect_delay)
        self.silent_after = silent_after
        self.request_timeout = request_timeout
        self._on_event = on_event
        self._on_alert = on_alert
        self._on_device = on_device
        self._on_frame = on_frame
        self._on_catch_up = on_catch_up
        self._arrived: dict[tuple[int, str], float] = {}  # from the last ARRIVALS, in clock time
        self._arrivals_supported: bool | None = None  # None: not known yet (no HELLO)
        self._clock = clock
        self._mono = monotonic
        # With `board_time`, a live TAG_IN / TAG_OUT is dated when the board read it (its
        # board_ms on the host's clock, board_clock.py), not when it was decoded here.
        self._board_time = board_time
        self._board_clock = BoardClock()
        self._alerts = AlertLimiter(self._alert, alert_interval)
        self._view = TagView(self.antennas)
        for antenna, uids in (initial or {}).items():
            if antenna in self.antennas:
                for uid in uids:
                    self._view.add(antenna, uid.upper())
        self._decoder = FrameDecoder()
        self._encoder = FrameEncoder()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._want_inventory = threading.Event()
        self._thread: threading.Thread | None = None
        self._serial: serial.Serial | None = None
        self._was_connected = False
        self._down_alerted = False
        self._awaiting: dict[int, float] = {}  # request type -> when to ask again
        self._silent_alerted = False
        self._last_frame = 0.0
        self._device_state: str | None = None  # last state given to on_device
        self._delay = reconnect_delay  # the next reconnect wait (backoff)
        self._restarts = 0
        self._open_failures = 0
        self.focus_lease = focus_lease
        self._focus_wanted: frozenset[int] = frozenset()
        self._focus_sent: frozenset[int] | None = None  # None: the board's focus is unknown
        self._focus_renew = 0.0  # when to renew the lease (monotonic)
        self._focus_frames = 0
        self._pages: list[msgs.InventoryPage] = []  # an inventory arriving page by page
        self.hello: msgs.Hello | None = None
        self.uptime_ms: int | None = None
        self._dropped_events = 0
        self._reconnects = 0
        self._inventories = 0

    # -- public ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread (it opens the port, and keeps reopening it if lost)."""
        if self._thread is not None:
            raise RuntimeError(f"{self.name} already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"reader {self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and close the port."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join(timeout=5.0)

    def request_inventory(self) -> None:
        """Ask the board for a full INVENTORY (sent from the driver thread within ~50 ms)."""
        self._want_inventory.set()

    def set_focus(self, antennas: Iterable[str]) -> None:
        """The antennas to read first (names of this board's antennas; others are ignored;
        none: every antenna in turn). Thread-safe; sent from the driver thread at once."""
        names = set(antennas)
        wanted = frozenset(i for i, name in enumerate(self.antennas) if name in names)
        with self._lock:
            if wanted == self._focus_wanted:
                return
            self._focus_wanted = wanted
        port = self._serial
        if port is not None:
            with contextlib.suppress(Exception):  # wake the driver thread's read
                port.cancel_read()

    @property
    def focus(self) -> tuple[str, ...]:
        """The antennas the board was last told to read first (none: every one in turn, or
        a board older than protocol version 4)."""
        sent = self._focus_sent or frozenset()
        return tuple(name for i, name in enumerate(self.antennas) if i in sent)

    def wait_synced(self, timeout: float) -> bool:
        """Block until an INVENTORY has been applied since the port was (re)opened."""
        return self._synced.wait(timeout)

    def positions(self) -> dict[str, list[str]]:
        """The driver's view: antenna name -> UIDs present (uppercase hex)."""
        with self._lock:
            return self._view.snapshot()

    def counters(self) -> dict[str, int]:
        with self._lock:
            dec = self._decoder.counters()
            return {
                "frames": dec["frames"],
                "bad_bytes": dec["bad_bytes"],
                "crc_errors": dec["crc_errors"],
                "seq_gaps": dec["seq_gaps"],
                "lost_frames": dec["lost_frames"],
                "malformed": dec["malformed"],
                "dropped_events": self._dropped_events,
                "reconnects": self._reconnects,
                "inventories": self._inventories,
                "restarts": self._restarts,
                "open_failures": self._open_failures,
                "focus_frames": self._focus_frames,
                "awaiting": len(self._awaiting),  # requests sent, their answer not yet in
            }

    # -- thread ----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            port = self._open()
            if port is None:
                self._alerts.flush(self._mono())
                self._stop.wait(self._delay)
                self._delay = min(self._delay * 2, self.reconnect_max_delay)
                continue
            self._delay = self.reconnect_delay
            try:
                self._serve(port)
            except (serial.SerialException, OSError) as exc:
                self._lost(str(exc))
            except Exception:  # a bug must not kill the reader thread
                log.exception("%s: unexpected error, reopening the port", self.name)
                self._lost("internal error")
                self._stop.wait(self.reconnect_delay)
            finally:
                self._serial = None
                with contextlib.suppress(serial.SerialException, OSError):
                    port.close()

    def _open(self) -> serial.Serial | None:
        self._board_clock.reset()  # a board found again may have restarted meanwhile
        try:
            port = PollSerial(self.port, self.baudrate, timeout=0.05)  # poll, any fd number
        except (serial.SerialException, OSError, ValueError) as exc:
            with self._lock:
                self._open_failures += 1
            if not self._down_alerted:
                self._down_alerted = True
                self._alert(
                    "reader_disconnected",
                    f"{self.name}: cannot open {self.port}",
                    {"reader": self.name, "port": self.port, "error": str(exc)},
                )
            self._device("offline")
            return None
        if self._was_connected:
            with self._lock:
                self._reconnects += 1
            self._alert(
                "reader_reconnected",
                f"{self.name}: {self.port} is back",
                {"reader": self.name, "port": self.port},
            )
        self._was_connected = True
        self._down_alerted = False
        self._silent_alerted = False
        self._synced.clear()
        with self._lock:
            self._decoder.reset()
        self._serial = port
        self._last_frame = self._mono()
        self.uptime_ms = None
        self._focus_sent = None  # a board newly reached: its focus is unknown
        self._pages = []
        return port

    def _lost(self, error: str) -> None:
        self._down_alerted = True
        self._alert(
            "reader_disconnected",
            f"{self.name}: lost {self.port}",
            {"reader": self.name, "port": self.port, "error": error},
        )
        self._device("offline")

    def _serve(self, port: serial.Serial) -> None:
        self._awaiting.clear()
        self._ask(msgs.HelloRequest())
        self._ask(msgs.InventoryRequest())
        while not self._stop.is_set():
            if self._want_inventory.is_set():
                self._want_inventory.clear()
                self._ask(msgs.InventoryRequest())
            self._ask_again()
            self._send_focus()
            data = port.read(1)
            if data:
                data += port.read(port.in_waiting)
            now = self._mono()
            if data:
                self._receive(data, now)
            if now - self._last_frame >= self.silent_after and not self._silent_alerted:
                self._silent_alerted = True
                self._alert(
                    "reader_silent",
                    f"{self.name}: no frame for {now - self._last_frame:.1f} s",
                    {"reader": self.name, "port": self.port, "silent_s": now - self._last_frame},
                )
                self._device("offline")
            self._alerts.flush(now)

    def _ask(self, request: msgs.HelloRequest | msgs.InventoryRequest) -> None:
        """Send a request; ask again every `request_timeout` s until its answer arrives.

        An INVENTORY request is preceded by an ARRIVALS_REQUEST (unless the board is known
        to predate protocol version 3), so the board's arrival times reach the host first.
        """
        self._awaiting[request.TYPE] = self._mono() + self.request_timeout
        if isinstance(request, msgs.InventoryRequest) and self._arrivals_supported is not False:
            self._send(msgs.ArrivalsRequest())
        self._send(request)

    def _ask_again(self) -> None:
        now = self._mono()
        for request in (msgs.HelloRequest(), msgs.InventoryRequest()):
            due = self._awaiting.get(request.TYPE)
            if due is not None and now >= due:  # the answer was lost (e.g. board FIFO overflow)
                self._ask(request)

    def _send(self, msg: msgs.Message) -> None:
        if self._serial is not None:
            self._serial.write(self._encoder.encode(msg))

    def _send_focus(self) -> None:
        """Tell a board of protocol version 4 what to read first: when it changes, when the
        board's focus is unknown, and before its lease runs out."""
        hello = self.hello
        if hello is None or hello.protocol < 4 or not self._synced.is_set():
            return
        with self._lock:
            wanted = self._focus_wanted
        now = self._mono()
        if wanted == self._focus_sent and (not wanted or now < self._focus_renew):
            return
        lease_ms = min(0xFFFF, round(self.focus_lease * 1000))
        self._send(msgs.Focus(wanted, lease_ms if wanted else 0))
        self._focus_sent = wanted
        self._focus_renew = now + self.focus_lease / 3
        with self._lock:
            self._focus_frames += 1

    # -- decoding --------------------------------------------------------------------------

    def _receive(self, data: bytes, now: float) -> None:
        with self._lock:
            before = self._decoder.counters()
            frames = self._decoder.feed(data)
            after = self._decoder.counters()
        delta = {key: after[key] - before[key] for key in after}
        details: dict[str, object] = {"reader": self.name}
        if delta["crc_errors"]:
            self._alerts.offer(
                "reader_crc_error",
                f"{self.name}: frame(s) failed CRC",
                {**details, "total": after["crc_errors"]},
                now,
                count=delta["crc_errors"],
            )
        elif delta["bad_bytes"]:
            self._alerts.offer(
                "reader_bad_bytes",
                f"{self.name}: bytes outside any frame",
                {**details, "total": after["bad_bytes"]},
                now,
                count=delta["bad_bytes"],
            )
        if delta["malformed"]:
            self._alerts.offer(
                "reader_protocol_error",
                f"{self.name}: {self._decoder.last_error}",
                details,
                now,
                count=delta["malformed"],
            )
        if frames:
            self._last_frame = now
            if self._silent_alerted:
                self._silent_alerted = False
                self._alert("reader_recovered", f"{self.name}: frames again", details)
                self._ask(msgs.InventoryRequest())  # online again only once re-read
        for frame in frames:
            self._handle(frame, now)

    def _handle(self, frame: Frame, now: float) -> None:
        msg = frame.msg
        if self._on_frame is not None:
            try:
                self._on_frame(frame)
            except Exception:
                log.exception("%s: on_frame callback failed", self.name)
        if frame.gap:
            self._alerts.offer(
                "reader_seq_gap",
                f"{self.name}: {frame.gap} frame(s) lost before seq {frame.seq}",
                {"reader": self.name, "lost": frame.gap, "seq": frame.seq},
                now,
            )
            self._ask(msgs.InventoryRequest())
        if frame.gap:
            self._pages = []  # a page may be lost: the inventory asked for comes whole
        if isinstance(msg, msgs.TagIn | msgs.TagOut):
            self._tag(msg)
        elif isinstance(msg, msgs.Inventory):
            self._inventory(msg, now)
        elif isinstance(msg, msgs.InventoryPage):
            self._page(msg, now)
        elif isinstance(msg, msgs.Hello):
            self._hello(msg)
        elif isinstance(msg, msgs.Heartbeat):
            self._heartbeat(msg)
        elif isinstance(msg, msgs.Arrivals):
            wall = self._clock()
            self._arrived = {key: wall - age / 1000 for key, age in msg.ages().items()}
        elif isinstance(msg, msgs.BoardError):
            self._board_error(msg, now)
        else:
            self._alerts.offer(
                "reader_protocol_error",
                f"{self.name}: host-only message 0x{msg.TYPE:02X} from the board",
                {"reader": self.name},
                now,
            )

    def _heartbeat(self, msg: msgs.Heartbeat) -> None:
        """The board's uptime: its clock against ours, and a reboot whose HELLO was lost."""
        if self._board_time:
            self._board_clock.host_time(msg.uptime_ms, self._clock())
        previous, self.uptime_ms = self.uptime_ms, msg.uptime_ms
        # Uptime going back (not a 49.7-day wrap) is a reboot whose HELLO was lost.
        if previous is not None and msg.uptime_ms < previous and previous < 0xF0000000:
            self._restarted("its uptime went back")

    def _board_error(self, msg: msgs.BoardError, now: float) -> None:
        """An error the board reports, alerted under its code."""
        if self._no_arrivals(msg):
            return
        if msg.code in (msgs.ERR_RX_CRC, msgs.ERR_UNKNOWN_TYPE, msgs.ERR_RX_CUT):
            self._focus_sent = None  # the frame it lost may have been our FOCUS
        self._alerts.offer(
            "reader_error",
            f"{self.name}: board error {msg.code}: {msg.text}",
            {"reader": self.name, "code": msg.code, "text": msg.text},
            now,
            key=str(msg.code),
        )

    def _no_arrivals(self, msg: msgs.BoardError) -> bool:
        """An older board refusing our ARRIVALS_REQUEST: not asked again, not alerted."""
        asked = f"0x{msgs.ArrivalsRequest.TYPE:02X}"
        refused = msg.code == msgs.ERR_UNKNOWN_TYPE and asked in msg.text
        if refused and (self.hello is None or self.hello.protocol < 3):
            self._arrivals_supported = False
            return True
        return False

    def _page(self, msg: msgs.InventoryPage, now: float) -> None:
        """A page of an inventory: the inventory once its last page is in."""
        if msg.page == 0:
            self._pages = []
        pages = self._pages
        if len(pages) != msg.page or (pages and pages[0].board_ms != msg.board_ms):
            self._pages = []  # out of order (a page lost): wait for a whole one
            return
        pages.append(msg)
        if len(pages) < msg.pages:
            return
        self._pages = []
        try:
            inventory = msgs.InventoryPage.join(pages)
        except ProtocolError as exc:
            self._alerts.offer(
                "reader_protocol_error", f"{self.name}: {exc}", {"reader": self.name}, now
            )
            return
        self._inventory(inventory, now)

    def _hello(self, msg: msgs.Hello) -> None:
        self.hello = msg
        self._focus_sent = None  # a HELLO may be a reboot: the board's focus is unknown
        self._arrivals_supported = msg.protocol >= 3
        if msg.antennas != self.antennas:
            self._alert(
                "antenna_mismatch",
                f"{self.name}: board antennas differ from the configuration",
                {
                    "reader": self.name,
                    "configured": list(self.antennas),
                    "board": list(msg.antennas),
                },
            )
        solicited = self._awaiting.pop(msgs.HelloRequest.TYPE, None) is not None
        if solicited or not self._synced.is_set():
            # start-up chatter: the power-on HELLO and the answer to our request
            if not solicited and msgs.InventoryRequest.TYPE not in self._awaiting:
                self._ask(msgs.InventoryRequest())
            return
        self._restarted("it said HELLO unasked")

    def _restarted(self, why: str) -> None:
        """The board rebooted on the same port: offline until everything it sees is re-read
        (tags that came or went while it rebooted were never reported)."""
        with self._lock:
            self._restarts += 1
        self.uptime_ms = None
        self._board_clock.reset()
        self._alert(
            "reader_restarted",
            f"{self.name}: the board restarted ({why}); re-reading its antennas",
            {"reader": self.name, "port": self.port},
        )
        self._synced.clear()
        self._device("offline")
        if msgs.InventoryRequest.TYPE not in self._awaiting:
            self._ask(msgs.InventoryRequest())

    def _tag(self, msg: msgs.TagIn | msgs.TagOut) -> None:
        uid = msg.uid_hex
        if msg.antenna >= len(self.antennas):
            with self._lock:
                self._dropped_events += 1
            self._alerts.offer(
                "reader_protocol_error",
                f"{self.name}: antenna index {msg.antenna} out of range",
                {"reader": self.name, "antenna": msg.antenna, "uid": uid},
                self._mono(),
            )
            return
        antenna = self.antennas[msg.antenna]
        arriving = isinstance(msg, msgs.TagIn)
        with self._lock:
            changed = (self._view.add if arriving else self._view.discard)(antenna, uid)
            if not changed:
                self._dropped_events += 1
        if changed:
            self._emit("in" if arriving else "out", antenna, uid, msg.board_ms)

    def _inventory(self, msg: msgs.Inventory, now: float) -> None:
        if len(msg.antennas) != len(self.antennas):
            self._alerts.offer(
                "reader_protocol_error",
                f"{self.name}: inventory lists {len(msg.antennas)} antennas, "
                f"configured {len(self.antennas)}",
                {"reader": self.name},
                now,
            )
            return
        self._awaiting.pop(msgs.InventoryRequest.TYPE, None)
        with self._lock:
            changes = self._view.reconcile(msg.hex_lists())
            self._inventories += 1
        arrived, self._arrived = self._arrived, {}
        if self._on_catch_up is not None and changes:
            self._catch_up(changes, arrived)
        else:
            for direction, antenna, uid in changes:
                self._emit(direction, antenna, uid)
        self._synced.set()
        if not self._silent_alerted:
            self._device("online")

    def _catch_up(self, changes: list[Change], arrived: dict[tuple[int, str], float]) -> None:
        """An inventory's difference as one timed list: an arrival at the time the board
        says, a departure at the time of the same tag's arrival elsewhere (a move)."""
        index = {name: i for i, name in enumerate(self.antennas)}
        came = {
            uid: arrived.get((index[antenna], uid))
            for direction, antenna, uid in changes
            if direction == "in"
        }
        now = self._clock()
        batch: list[Timed] = []
        for direction, antenna, uid in changes:
            if direction == "in":
                batch.append((TagIn(t=now, antenna=antenna, uid=uid), came[uid]))
            else:
                batch.append((TagOut(t=now, antenna=antenna, uid=uid), came.get(uid)))
        assert self._on_catch_up is not None
        try:
            self._on_catch_up(batch)
        except Exception:
            log.exception("%s: on_catch_up callback failed", self.name)

    # -- callbacks -------------------------------------------------------------------------

    def _emit(self, direction: str, antenna: str, uid: str, board_ms: int | None = None) -> None:
        cls = TagIn if direction == "in" else TagOut
        t = self._clock()
        if self._board_time and board_ms is not None:
            t = round(self._board_clock.host_time(board_ms, t), 6)
        try:
            self._on_event(cls(t=t, antenna=antenna, uid=uid))
        except Exception:
            log.exception("%s: on_event callback failed", self.name)

    def _device(self, state: str) -> None:
        """Report availability once per change."""
        if state == self._device_state:
            return
        self._device_state = state
        if self._on_device is None:
            return
        try:
            self._on_device(state)
        except Exception:
            log.exception("%s: on_device callback failed", self.name)

    def _alert(self, kind: str, message: str, details: dict[str, object]) -> None:
        try:
            self._on_alert(kind, message, details)
        except Exception:
            log.exception("%s: on_alert callback failed", self.name)
