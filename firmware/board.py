"""The reader board's main loop: scan the antennas, report changes, answer the host.

One `step()` reads what the host sent, makes a few steps of an antenna's read (the reads
after power-up take every antenna silently: what lies there is reported by INVENTORY, not
as arrivals), sends the heartbeat and the periodic inventory when due, and moves queued
frames to the USB link without ever blocking. The board repeats it forever (hal_rp2.start,
with a watchdog); the simulator runs it from its own thread. Frames wait in a bounded
transmit FIFO: when the host does not read, new frames are dropped and, once the FIFO has
drained, ERROR 4 says how many (the host also sees the sequence gap and asks for an
INVENTORY).

Which antenna is read next (docs/reader-protocol.md, *The schedule*): with no focus from the
host, every antenna in turn, as boards before protocol version 4 do. With a focus (FOCUS),
the focused antennas in turn, each read whole, and between them slices (`slice_ms`) of the
background antennas' reads, in the share of the time those reads need to come round within
`background_ms`, the one whose next read is due soonest first. A tag missed by a read is
looked for again `confirm_ms` later, whatever the antenna, so a departure is confirmed
without waiting for the antenna's turn.
"""

from firmware import protocol
from firmware.hal import Clock, HardwareError, Link
from firmware.scanner import Scanner, air_protocol

FIRMWARE_VERSION = "tablefw-1.1"
CHUNK = 64  # bytes handed to the link at a time
REQUESTS = (
    protocol.INVENTORY_REQUEST,
    protocol.HELLO_REQUEST,
    protocol.ARRIVALS_REQUEST,
    protocol.FOCUS,
)
#: Defaults of the schedule (firmware/config.py; docs/hardware.md).
BACKGROUND_MS = 1000
SLICE_MS = 12
STACK_PERIODS = 4  # a tall stack in the background is read every four times its read
MAX_SHARE = 0.5  # the most of the board's time the background antennas take
FOCUS_SLICES = 6  # a focused read longer than six slices waits for its next turn
BURST_MS = 250  # the background waits this long after a focused read found a tag
RX_TIMEOUT_MS = 50


class TxFifo:
    """Frames waiting for the host, at most `limit` bytes; a full FIFO drops new frames."""

    def __init__(self, limit: int, chunk: int = CHUNK) -> None:
        self.limit = limit
        self.chunk = chunk  # the most bytes handed to the link in one write
        self.chunks: list[bytes] = []
        self.head = 0  # bytes of chunks[0] already written
        self.size = 0
        self.frames_sent = 0
        self.frames_dropped = 0
        self.overflowed = 0  # frames dropped since the last ERROR 4

    def push_frame(self, frame: bytes) -> bool:
        """Queue an encoded frame (its sequence number is used up either way)."""
        if not self.push_raw(frame):
            self.frames_dropped += 1
            self.overflowed += 1
            return False
        self.frames_sent += 1
        return True

    def push_raw(self, data: bytes) -> bool:
        if not data:
            return True  # nothing to send (an empty chunk would stall the drain)
        if self.size + len(data) > self.limit:
            return False
        self.chunks.append(data)
        self.size += len(data)
        return True

    def drain(self, link: Link) -> int:
        """Write what the link takes now; the number of bytes written."""
        written = 0
        while self.chunks:
            chunk = self.chunks[0]
            if self.head >= len(chunk):
                self.chunks.pop(0)
                self.head = 0
                continue
            end = min(len(chunk), self.head + self.chunk)
            count = link.write(chunk[self.head : end])
            if count <= 0:
                break
            written += count
            self.head += count
            self.size -= count
            if self.head >= len(chunk):
                self.chunks.pop(0)
                self.head = 0
        return written


class Board:
    """A card or chip reader board: antennas in port order, the USB link, the clock."""

    def __init__(
        self,
        scanner: Scanner,
        link: Link,
        clock: Clock,
        kind: str = "card",
        firmware: str = FIRMWARE_VERSION,
        heartbeat_ms: int = 1000,
        inventory_ms: int = 5000,
        scan_pause_ms: int = 0,
        fifo: TxFifo | None = None,
        background_ms: int = BACKGROUND_MS,
        slice_ms: int = SLICE_MS,
        rx_timeout_ms: int = RX_TIMEOUT_MS,
    ) -> None:
        self.scanner = scanner
        self.link = link
        self.clock = clock
        self.kind = kind
        self.firmware = firmware
        self.names = [antenna.name for antenna in scanner.antennas]
        self.hello = protocol.hello_payload(firmware, kind, self.names)  # checks the names
        self.heartbeat_ms = heartbeat_ms
        self.inventory_ms = inventory_ms
        self.scan_pause_ms = scan_pause_ms  # pause after each turn of the scan (the simulator)
        self.background_ms = background_ms
        self.slice_ms = max(1, slice_ms)
        self.rx_timeout_ms = rx_timeout_ms
        self.fifo = fifo if fifo is not None else TxFifo(16384)
        self.writer = protocol.FrameWriter()
        self.reader = protocol.FrameReader(64)  # host frames are small: cut false lengths short
        self.uptime = 0
        self._last_tick = clock.ticks_ms()
        self.rx_at = 0  # board time of the last byte from the host
        self.cut_frames = 0
        self.booted = False
        self.boot_at = 0  # the antenna the power-up read is at
        self.inventory_wanted = False
        self.arrivals_wanted = False
        count = len(self.names)
        self.focus = 0  # focused antennas, one bit each (0: every antenna in turn)
        self.focus_until = -1  # board time the focus lapses unless renewed (-1: never)
        self.current = -1  # the antenna whose read the scan is making
        self.background = False  # ... as a slice of a background antenna's read
        self.credit = 0.0  # ms of the board's time owed to the background antennas
        self._share = MAX_SHARE  # the background's share, as last worked out
        # a focused read found a tag: more are coming (a push of chips, a flop), the
        # background waits until then, BURST_MS at most
        self.burst_until = 0
        self.stack_turn = 0  # ms the focused read under way has had in this turn
        self.next_antenna = 0  # every antenna in turn (no focus)
        self.next_focused = 0
        self.next_scan = 0
        self.started = [0 for _ in range(count)]  # board time the last whole read began
        self.cost = [0 for _ in range(count)]  # how long (ms) that read took, slices summed
        self.work = [0 for _ in range(count)]  # ms spent on the read under way
        self.turns = [0 for _ in range(count)]  # turns of the scan given to each antenna
        self.next_heartbeat = heartbeat_ms
        self.next_inventory = inventory_ms
        self.fault_reported: list[str | None] = [None for _ in self.names]
        self.send_hello()

    # -- time --------------------------------------------------------------------------

    def now_ms(self) -> int:
        """Milliseconds since power-up: ticks_ms wraps (2**30 ms on the RP2040), this does not."""
        tick = self.clock.ticks_ms()
        self.uptime += self.clock.ticks_diff(tick, self._last_tick)
        self._last_tick = tick
        return self.uptime

    def board_ms(self) -> int:
        """The board time on the wire: milliseconds since power-up, modulo 2**32."""
        return self.now_ms() & protocol.U32_MAX

    # -- sending -------------------------------------------------------------------------

    def send_frame(self, msg_type: int, payload: bytes) -> bool:
        return self.fifo.push_frame(self.writer.encode(msg_type, payload))

    def send_hello(self) -> None:
        self.send_frame(protocol.HELLO, self.hello)

    def send_inventory(self) -> None:
        """INVENTORY, or (version 4) INVENTORY_PAGEs when one frame cannot hold it."""
        lists = self.scanner.lists()
        now = self.board_ms()
        size = 5 + len(lists)
        for uids in lists:
            for uid in uids:
                size += 1 + len(uid)
        if size <= protocol.MAX_PAYLOAD and max([len(uids) for uids in lists] + [0]) <= 255:
            self.send_frame(protocol.INVENTORY, protocol.inventory_payload(lists, now))
            return
        for page in protocol.inventory_pages(lists, now):
            self.send_frame(protocol.INVENTORY_PAGE, page)

    def send_arrivals(self) -> None:
        payload = protocol.arrivals_payload(self.board_ms(), self.scanner.arrivals())
        self.send_frame(protocol.ARRIVALS, payload)

    def send_error(self, code: int, text: str) -> None:
        raw = text.encode()[: protocol.MAX_TEXT_LEN]
        self.send_frame(protocol.ERROR, bytes([code]) + raw)

    # -- the host ------------------------------------------------------------------------

    def receive(self) -> None:
        data = self.link.read()
        if not data:
            self._cut()
            return
        self.rx_at = self.now_ms()
        crc_before = self.reader.crc_errors
        for _seq, msg_type, payload, _gap in self.reader.feed(data):
            self.handle_request(msg_type, payload)
        if self.reader.crc_errors > crc_before:
            self.send_error(protocol.ERR_RX_CRC, "bad CRC on a host frame")

    def _cut(self) -> None:
        """A host frame begun and not finished within the inter-byte timeout is dropped
        (ERROR 6): the host writes a frame at once, so the rest is not coming, and waiting
        for it would hold up the requests behind it."""
        held = len(self.reader.buffer)
        if held and self.now_ms() - self.rx_at >= self.rx_timeout_ms:
            self.reader.buffer = bytearray()
            self.cut_frames += 1
            self.send_error(protocol.ERR_RX_CUT, "host frame cut: %d bytes dropped" % held)

    def handle_request(self, msg_type: int, payload: bytes) -> None:
        if msg_type == protocol.INVENTORY_REQUEST and not payload:
            if self.booted:
                self.send_inventory()
            else:
                self.inventory_wanted = True  # answered once the antennas were read
        elif msg_type == protocol.HELLO_REQUEST and not payload:
            self.send_hello()
        elif msg_type == protocol.ARRIVALS_REQUEST and not payload:
            if self.booted:
                self.send_arrivals()
            else:
                self.arrivals_wanted = True  # answered once the antennas were read
        elif msg_type == protocol.FOCUS and len(payload) == 6:
            mask, lease_ms = protocol.parse_focus(payload)
            self.set_focus(mask, lease_ms)
        elif msg_type in REQUESTS:
            self.send_error(protocol.ERR_UNKNOWN_TYPE, "request 0x%02X with a payload" % msg_type)
        else:
            self.send_error(protocol.ERR_UNKNOWN_TYPE, "unexpected 0x%02X" % msg_type)

    def set_focus(self, mask: int, lease_ms: int = 0) -> None:
        """The antennas that matter now (bits past the last antenna are ignored); after
        `lease_ms` without a renewal the board goes back to reading every antenna in turn."""
        self.focus = mask & ((1 << len(self.names)) - 1)
        self.focus_until = self.now_ms() + lease_ms if lease_ms and self.focus else -1

    def focused(self) -> list[int]:
        return [i for i in range(len(self.names)) if self.focus >> i & 1]

    # -- scanning ------------------------------------------------------------------------

    def boot_scan(self) -> None:
        """Read every antenna once, as the state at power-up (no TAG_IN for these)."""
        while not self.booted:
            self._boot_step(1 << 30)

    def _boot_step(self, budget_ms: int) -> None:
        """Part of the power-up read: at most `budget_ms` of it (one step at least)."""
        scanner = self.scanner
        begin = self.now_ms()
        while self.boot_at < len(self.names):
            index = self.boot_at
            read = scanner.passes[index]
            if read is None:
                read = scanner.passes[index] = scanner.antennas[index].start()
                read.started_ms = begin
            failed = False
            try:
                read.step()
            except HardwareError as exc:  # the antenna is reported faulty
                scanner.faults[index] = "antenna %s: %s" % (self.names[index], exc)
                failed = True
            if read.done or failed:
                for uid in read.seen:
                    scanner.heard[air_protocol(uid)] = begin
                scanner.passes[index] = None
                if not failed:
                    scanner.faults[index] = None
                self._fault(index)
                for uid in scanner.settle(index, [] if failed else read.seen):
                    self._refuse(index, uid)
                self.started[index] = read.started_ms
                self.cost[index] = self.now_ms() - read.started_ms
                self.boot_at += 1
            if self.now_ms() - begin >= budget_ms:
                break
        if self.boot_at < len(self.names):
            return
        self.booted = True
        if self.arrivals_wanted:
            self.arrivals_wanted = False
            self.send_arrivals()
        if self.inventory_wanted:
            self.inventory_wanted = False
            self.send_inventory()

    def scan(self, index: int) -> int:
        """Read antenna `index` whole now and send what changed; the number of reports sent.

        A read under way at another antenna stops for it (its field goes off) and goes on
        at the next turn of the scan.
        """
        if self.current >= 0 and self.current != index:
            self.scanner.pause(self.current)
        sent = 0
        begin = self.now_ms()
        fresh = not self.scanner.in_progress(index)
        while True:
            count, done = self._advance(index)
            sent += count
            if done:
                break
        self._spent(index, begin, fresh, True)
        if self.current == index:
            self.current = -1
        return sent

    def _advance(self, index: int) -> tuple[int, bool]:
        """One step of antenna `index`'s read; (reports sent, the read is over)."""
        reports, refused, done = self.scanner.advance(index, self.now_ms())
        for report in reports:
            payload = protocol.tag_payload(
                report.index, report.uid, report.board_ms & protocol.U32_MAX
            )
            self.send_frame(report.msg_type, payload)
        for uid in refused:
            self._refuse(index, uid)
        if done:
            self._fault(index)
        if reports:
            self.transmit()  # a report goes out at once, not at the end of the turn
            if self.focus >> index & 1 and self.current == index and not self.background:
                self.burst_until = self.now_ms() + BURST_MS
        return len(reports), done

    def _spent(self, index: int, begin: int, fresh: bool, done: bool) -> None:
        """Book a turn of antenna `index` (`begin`: when it began; `fresh`: its read began
        with it) for the schedule."""
        now = self.now_ms()
        if fresh:
            self.started[index] = begin
            self.work[index] = 0
        self.work[index] += now - begin
        self.turns[index] += 1
        if done:
            self.cost[index] = self.work[index]
            self.work[index] = 0

    def _refuse(self, index: int, uid: bytes) -> None:
        text = "tag limit reached on %s: %s" % (self.names[index], protocol.hex_uid(uid))
        self.send_error(protocol.ERR_TAG_LIMIT, text)

    def _fault(self, index: int) -> None:
        fault = self.scanner.faults[index]
        if fault != self.fault_reported[index]:
            self.fault_reported[index] = fault
            if fault is not None:
                self.send_error(protocol.ERR_ANTENNA_FAULT, fault)

    # -- the schedule --------------------------------------------------------------------

    def period(self, index: int) -> int:
        """How often antenna `index` is read in the background: every `background_ms`, or
        for a tall stack whose read takes longer than a quarter of that (a pot), every four
        times its read."""
        return max(self.background_ms, STACK_PERIODS * self.cost[index])

    def due(self, index: int) -> int:
        """When antenna `index`'s next read must begin at the latest: its last one began a
        `period` earlier, less twice the time a read of it spans (its cost over the
        background's share: a tag is then reported within the period); sooner when a
        missed tag is to be
        confirmed, at once when a read of it is under way. The background antennas are
        read in this order whenever their share of the time allows (earliest deadline
        first), not only once due: then they all come round within their periods whenever
        their reads fit in their share."""
        if self.scanner.in_progress(index):
            return self.started[index]
        # the read, sliced between the focused ones, spans its cost over the share
        span = self.cost[index] / max(0.05, self._share)
        due = self.started[index] + self.period(index) - int(2 * span)
        missed = self.scanner.missing(index)
        if missed >= 0:
            confirm = missed + self.scanner.confirm_ms
            if confirm < due:
                due = confirm
        return due

    def share(self) -> float:
        """The part of the board's time the background antennas get: what their reads take
        (as last measured) over their periods, with a fifth to spare; 5 % to half (past
        that the focused antennas keep half, and the background comes round later)."""
        focus = self.focus
        share = 0.0
        for index in range(len(self.names)):
            if not focus >> index & 1:
                share += self.cost[index] / max(1, self.period(index))
        return min(MAX_SHARE, max(0.05, share * 1.6))

    def pick(self, now: int) -> tuple[int, bool]:
        """The antenna to read next, and whether as a slice of a background read."""
        count = len(self.names)
        focus = self.focus
        scanner = self.scanner
        confirm = -1  # a missed tag confirmed without waiting for its antenna's turn
        confirm_at = 0
        for index in range(count):
            missed = scanner.missing(index)
            if (
                0 <= missed <= now - scanner.confirm_ms
                and not scanner.in_progress(index)
                and (confirm < 0 or missed < confirm_at)
            ):
                confirm, confirm_at = index, missed
        if confirm >= 0 and (not focus or focus >> confirm & 1 or self.credit > 0):
            return confirm, not (not focus or focus >> confirm & 1)
        if not focus:
            index = self.next_antenna
            if not scanner.in_progress(index):
                self.next_antenna = (index + 1) % count
            return index, False
        if self.credit > 0:  # the background's share is owed
            # In this order: a short read under way, to finish it (each resumption costs
            # the field's start-up again); the antennas due, earliest first; a tall stack
            # (read every four times its read), in the time they leave; the others, ahead
            # of time (no share is wasted).
            best = -1
            best_key = (0, 0)
            for index in range(count):
                if focus >> index & 1:
                    continue
                due = self.due(index)
                if scanner.in_progress(index) and (
                    self.cost[index] - self.work[index] <= 4 * self.slice_ms
                ):
                    tier = 0
                elif self.period(index) > self.background_ms:
                    tier = 2
                else:
                    tier = 1 if due <= now else 3
                if best < 0 or (tier, due) < best_key:
                    best, best_key = index, (tier, due)
            best_due = best_key[1]
            # While a focused read keeps finding tags the background waits, unless a
            # read of it is due already.
            if best >= 0 and (now >= self.burst_until or best_due <= now):
                return best, True
        focused = self.focused()
        index = focused[self.next_focused % len(focused)]
        self.next_focused = (self.next_focused + 1) % len(focused)
        return index, False

    def scan_turn(self) -> None:
        """One turn of the scan: a few steps of the read under way, or of the next one.

        A turn lasts about `slice_ms` (one step at least). A read of any antenna when there
        is no focus goes on at the next turn until it is whole; one of a focused antenna
        for three turns at most, then the next focused antenna's turn comes; a background
        antenna gets one turn, then its read waits, field off, for its next turn.
        """
        begin = self.now_ms()
        if self.focus_until >= 0 and begin >= self.focus_until:
            self.focus = 0  # not renewed: the host is gone, every antenna in turn again
            self.focus_until = -1
        index = self.current
        if index < 0:
            index, self.background = self.pick(begin)
            self.current = index
        fresh = not self.scanner.in_progress(index)
        # A background read with little left is finished in this turn rather than paused.
        budget = self.slice_ms
        if self.background and self.cost[index] - self.work[index] <= 2 * self.slice_ms:
            budget = 2 * self.slice_ms
        done = False
        while True:
            _sent, done = self._advance(index)
            if done or self.now_ms() - begin >= budget:
                break
        self._spent(index, begin, fresh, done)
        spent = self.now_ms() - begin
        if not done and self.focus and not self.background:
            # A tall stack in focus (a pot being pushed) is read in turns too, so the
            # other focused antennas are not held up by it.
            self.stack_turn += spent
            if self.stack_turn >= FOCUS_SLICES * self.slice_ms:
                self.stack_turn = 0
                self.scanner.pause(index)
                self.current = -1
        else:
            self.stack_turn = 0
        if self.focus:  # the background's time is owed in proportion to the focused time
            if self.background:
                self.credit = max(-self.background_ms, self.credit - spent)
            else:  # (unspent credit does not pile up)
                share = self._share = self.share()
                earned = spent * share / (1.0 - share)
                self.credit = min(self.credit + earned, max(earned, 2.0 * self.slice_ms))
        if done:
            self.current = -1
        elif self.background:
            self.scanner.pause(index)  # a slice: back to the focused antennas
            self.current = -1
        self.next_scan = self.now_ms() + self.scan_pause_ms

    # -- the loop ------------------------------------------------------------------------

    def timers(self) -> int:
        """Heartbeat and periodic inventory when due; milliseconds until the next one."""
        now = self.now_ms()
        if now >= self.next_heartbeat:
            beat = protocol.heartbeat_payload(now & protocol.U32_MAX)
            self.send_frame(protocol.HEARTBEAT, beat)
            self.next_heartbeat = now + self.heartbeat_ms
        if now >= self.next_inventory:
            self.send_inventory()
            self.next_inventory = now + self.inventory_ms
        return min(self.next_heartbeat, self.next_inventory) - now

    def transmit(self) -> None:
        fifo = self.fifo
        fifo.drain(self.link)
        if not fifo.chunks and fifo.overflowed:
            lost = fifo.overflowed
            fifo.overflowed = 0
            self.send_error(protocol.ERR_TX_OVERFLOW, "%d frames dropped" % lost)
            fifo.drain(self.link)

    def step(self) -> int:
        """One turn of the loop; how long (ms) the loop may sleep before the next turn."""
        self.receive()
        wait = 0
        if not self.booted:
            self._boot_step(self.slice_ms)
        else:
            now = self.now_ms()
            if now >= self.next_scan:
                self.scan_turn()
            wait = max(0, self.next_scan - self.now_ms())
        wait = min(wait, max(0, self.timers()))
        if self.reader.buffer:
            wait = min(wait, self.rx_timeout_ms)
        self.transmit()
        return wait
