"""The reader board's main loop: scan the antennas, report changes, answer the host.

One `step()` reads what the host sent, scans one antenna (the first step after power-up
reads every antenna silently: what lies there is reported by INVENTORY, not as arrivals),
sends the heartbeat and the periodic inventory when due, and moves queued frames to the USB
link without ever blocking. The board repeats it forever (hal_rp2.start, with a watchdog);
the simulator runs it from its own thread. Frames wait in a bounded transmit
FIFO: when the host does not read, new frames are dropped and, once the FIFO has drained,
ERROR 4 says how many (the host also sees the sequence gap and asks for an INVENTORY).
"""

from firmware import protocol
from firmware.hal import Clock, Link
from firmware.scanner import Scanner

FIRMWARE_VERSION = "tablefw-1.0"
CHUNK = 64  # bytes handed to the link at a time
REQUESTS = (protocol.INVENTORY_REQUEST, protocol.HELLO_REQUEST, protocol.ARRIVALS_REQUEST)


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
        self.scan_pause_ms = scan_pause_ms
        self.fifo = fifo if fifo is not None else TxFifo(8192)
        self.writer = protocol.FrameWriter()
        self.reader = protocol.FrameReader(64)  # host frames are small: cut false lengths short
        self.uptime = 0
        self._last_tick = clock.ticks_ms()
        self.booted = False
        self.inventory_wanted = False
        self.arrivals_wanted = False
        self.next_antenna = 0
        self.next_heartbeat = heartbeat_ms
        self.next_inventory = inventory_ms
        self.next_cycle = 0
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
        payload = protocol.inventory_payload(self.scanner.lists(), self.board_ms())
        self.send_frame(protocol.INVENTORY, payload)

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
            return
        crc_before = self.reader.crc_errors
        for _seq, msg_type, payload, _gap in self.reader.feed(data):
            self.handle_request(msg_type, payload)
        if self.reader.crc_errors > crc_before:
            self.send_error(protocol.ERR_RX_CRC, "bad CRC on a host frame")

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
        elif msg_type in REQUESTS:
            self.send_error(protocol.ERR_UNKNOWN_TYPE, "request 0x%02X with a payload" % msg_type)
        else:
            self.send_error(protocol.ERR_UNKNOWN_TYPE, "unexpected 0x%02X" % msg_type)

    # -- scanning ------------------------------------------------------------------------

    def boot_scan(self) -> None:
        """Read every antenna once, as the state at power-up (no TAG_IN for these)."""
        scanner = self.scanner
        for index in range(len(self.names)):
            seen = scanner.read(index)
            self._fault(index)
            for uid in scanner.settle(index, seen if seen is not None else []):
                self._refuse(index, uid)
        self.booted = True
        if self.arrivals_wanted:
            self.arrivals_wanted = False
            self.send_arrivals()
        if self.inventory_wanted:
            self.inventory_wanted = False
            self.send_inventory()

    def scan(self, index: int) -> int:
        """Read antenna `index` and send what changed; the number of reports sent."""
        scanner = self.scanner
        seen = scanner.read(index)
        self._fault(index)
        if seen is None:
            return 0  # a failed read says nothing about the tags: no report
        reports, refused = scanner.update(index, seen, self.now_ms())
        for report in reports:
            payload = protocol.tag_payload(
                report.index, report.uid, report.board_ms & protocol.U32_MAX
            )
            self.send_frame(report.msg_type, payload)
        for uid in refused:
            self._refuse(index, uid)
        return len(reports)

    def _refuse(self, index: int, uid: bytes) -> None:
        text = "tag limit reached on %s: %s" % (self.names[index], protocol.hex_uid(uid))
        self.send_error(protocol.ERR_TAG_LIMIT, text)

    def _fault(self, index: int) -> None:
        fault = self.scanner.faults[index]
        if fault != self.fault_reported[index]:
            self.fault_reported[index] = fault
            if fault is not None:
                self.send_error(protocol.ERR_ANTENNA_FAULT, fault)

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
            self.boot_scan()
        else:
            now = self.now_ms()
            if now >= self.next_cycle:
                self.scan(self.next_antenna)
                self.next_antenna += 1
                if self.next_antenna >= len(self.names):
                    self.next_antenna = 0
                    self.next_cycle = self.now_ms() + self.scan_pause_ms
            wait = max(0, self.next_cycle - self.now_ms())
        wait = min(wait, max(0, self.timers()))
        self.transmit()
        return wait
