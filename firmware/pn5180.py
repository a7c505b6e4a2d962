"""NXP PN5180 front-end driver: SPI with the BUSY handshake, registers, RF, and reads of every
tag in the field (ISO 15693 inventory with 16 slots and collision splitting; ISO 14443A
anticollision over the cascade levels).

Written from the command set of the PN5180 datasheet (host interface commands, register map,
IRQ_STATUS / RX_STATUS bits) and the air protocols of ISO/IEC 15693-3 and 14443-3. Runs under
MicroPython on the board and CPython in the simulator.
"""

from firmware.hal import Clock, HardwareError, SpiBus

# -- host interface commands (first byte of an SPI frame) --------------------------------
WRITE_REGISTER = 0x00
WRITE_REGISTER_OR_MASK = 0x01
WRITE_REGISTER_AND_MASK = 0x02
READ_REGISTER = 0x04
READ_EEPROM = 0x07
SEND_DATA = 0x09
READ_DATA = 0x0A
LOAD_RF_CONFIG = 0x11
RF_ON = 0x16
RF_OFF = 0x17

# -- registers -------------------------------------------------------------------------
SYSTEM_CONFIG = 0x00
IRQ_ENABLE = 0x01
IRQ_STATUS = 0x02
IRQ_CLEAR = 0x03
TIMER1_RELOAD = 0x0C
TIMER1_CONFIG = 0x0F
CRC_RX_CONFIG = 0x12
RX_STATUS = 0x13
TX_CONFIG = 0x18
CRC_TX_CONFIG = 0x19
RF_STATUS = 0x1D

# IRQ_STATUS / IRQ_CLEAR bits
IRQ_RX = 1 << 0
IRQ_TX = 1 << 1
IRQ_IDLE = 1 << 2
IRQ_TX_RFOFF = 1 << 8
IRQ_TX_RFON = 1 << 9
IRQ_TIMER1 = 1 << 12
IRQ_GENERAL_ERROR = 1 << 17
IRQ_ALL = 0x000FFFFF

# RX_STATUS fields
RX_BYTES_MASK = 0x1FF
RX_INTEGRITY_ERROR = 1 << 16
RX_PROTOCOL_ERROR = 1 << 17
RX_COLLISION = 1 << 18
RX_COLL_POS_SHIFT = 19
RX_COLL_POS_MASK = 0x7F

# SYSTEM_CONFIG: bits 2..0 select the command the transceiver runs.
COMMAND_MASK = 0x07
COMMAND_IDLE = 0x00
COMMAND_TRANSCEIVE = 0x03

# TX_CONFIG: data enable and start symbol; clearing both sends an EOF alone (ISO 15693 slots).
TX_DATA_ENABLE = 1 << 10
TX_START_SYMBOL_MASK = 0x3 << 6

# CRC_TX_CONFIG / CRC_RX_CONFIG bit 0 enables the CRC; CRC_RX_CONFIG bits 8..6 are RX_BIT_ALIGN.
CRC_ENABLE = 1
RX_BIT_ALIGN_SHIFT = 6
RX_BIT_ALIGN_MASK = 0x7 << RX_BIT_ALIGN_SHIFT

# TIMER1_CONFIG: the response timeout, started when the transmission ends, stopped by a reply.
T1_ENABLE = 1 << 0
T1_MODE_SEL = 1 << 2  # prescaler on
T1_PRESCALE_848KHZ = 3 << 3
T1_START_ON_TX_ENDED = 1 << 11
T1_STOP_ON_RX_STARTED = 1 << 20
T1_TICKS_PER_MS = 848  # 13.56 MHz / 16

# RF_STATUS bits 26..24: transceive state
TRANSCEIVE_STATE_SHIFT = 24
STATE_WAIT_TRANSMIT = 1

# EEPROM addresses
EEPROM_PRODUCT_VERSION = 0x10
EEPROM_FIRMWARE_VERSION = 0x12

# LOAD_RF_CONFIG (transmitter, receiver) pairs
RF_ISO14443A_106 = (0x00, 0x80)
RF_ISO15693_26 = (0x0D, 0x8D)

ISO15693 = "iso15693"
ISO14443A = "iso14443a"
PROTOCOLS = (ISO15693, ISO14443A)

# ISO 15693 inventory request flags (ISO/IEC 15693-3)
FLAG_HIGH_RATE = 0x02
FLAG_INVENTORY = 0x04
FLAG_ONE_SLOT = 0x20
CMD_INVENTORY = 0x01
MAX_MASK_BITS = 60

# ISO 14443A commands (ISO/IEC 14443-3)
REQA = 0x26
HLTA = 0x50
SEL_LEVELS = (0x93, 0x95, 0x97)
CASCADE_TAG = 0x88
SAK_CASCADE = 0x04

BUSY_TIMEOUT_US = 50000
IRQ_TIMEOUT_US = 50000
POLL_US = 50  # pause between IRQ_STATUS polls
RF_GUARD_15693_US = 1000  # tags answer within 1 ms of the field coming on (15693-3)
RF_GUARD_14443A_US = 5000  # PICCs accept a request 5 ms after the field comes on (14443-3)
TIMEOUT_15693_US = 450  # t1 max 323 us + the tag's SOF: a reply has started by then
TIMEOUT_14443A_US = 400
TIMEOUT_HLTA_US = 1000
MAX_ROUNDS = 128  # 16-slot rounds per ISO 15693 inventory (each resolves up to 16 tags)
MAX_PASS_ROUNDS = 4096  # rounds of one read made in steps (a stack of a thousand chips)
MAX_CARDS = 128  # ISO 14443A cards read per scan


def _u32(value: int) -> bytes:
    return bytes([value & 0xFF, (value >> 8) & 0xFF, (value >> 16) & 0xFF, (value >> 24) & 0xFF])


MASK_40 = (1 << 40) - 1


def cascade(uid: bytes) -> list[bytes]:
    """An ISO 14443A UID's cascade levels as sent on air: 5 bytes each, with the cascade
    tag 0x88 before a level that is not the last, and the BCC (XOR of the four) after."""
    if len(uid) == 4:
        parts = [uid]
    elif len(uid) == 7:
        parts = [bytes([CASCADE_TAG]) + uid[0:3], uid[3:7]]
    else:
        parts = [bytes([CASCADE_TAG]) + uid[0:3], bytes([CASCADE_TAG]) + uid[3:6], uid[6:10]]
    return [part + bytes([part[0] ^ part[1] ^ part[2] ^ part[3]]) for part in parts]


def check_plan(known: list[bytes]) -> list[tuple[bytes, list[int]]] | None:
    """How to check that the ISO 14443A cards in a field are still `known` without reading
    them again (PN5180.check_step, a part at a time; None: not possible, read the field).

    After REQA every card is ready and answers each anticollision frame whose known bits
    match its UID: the trie of the known UIDs says, for every node, where the answer's first
    collision must be (or, at a leaf, the whole answer). One frame per node, no SELECT, no
    HLTA: about 2n frames for n cards instead of five to ten each. A card that came shows
    as a collision where none was due or an answer where none was, one that left as a
    missing collision or answer. The first part is the trie of the first cascade levels;
    then, for each first level, its cards' second levels after a SELECT of it (a card that
    came may share a known card's first level). Mixed UID sizes and triple-size UIDs are
    not checked.
    """
    if not known:
        return None
    depth = len(cascade(known[0]))
    if depth > 2 or any(len(cascade(uid)) != depth for uid in known):
        return None
    levels = [cascade(uid) for uid in known]
    firsts: list[int] = []
    groups: list[tuple[bytes, list[int]]] = []
    for level in levels:
        value = bits_of(level[0])
        if value not in firsts:
            firsts.append(value)
        if depth == 1:
            continue
        for first, seconds in groups:
            if first == level[0]:
                seconds.append(bits_of(level[1]))
                break
        else:
            groups.append((level[0], [bits_of(level[1])]))
    plan: list[tuple[bytes, list[int]]] = [(b"", firsts)]
    return plan + groups


def bits_of(data: bytes) -> int:
    """Bytes as the bits go on air: the first byte's lowest bit first (bit 0)."""
    value = 0
    for i in range(len(data)):
        value |= data[i] << (8 * i)
    return value


class Exchange:
    """What one transceive brought back: data and the RX_STATUS bits that qualify it."""

    def __init__(self, data: bytes, status: int, timed_out: bool) -> None:
        self.data = data
        self.status = status
        self.timed_out = timed_out

    @property
    def collision(self) -> bool:
        return bool(self.status & RX_COLLISION)

    @property
    def collision_bit(self) -> int:
        return (self.status >> RX_COLL_POS_SHIFT) & RX_COLL_POS_MASK

    @property
    def errors(self) -> bool:
        return bool(self.status & (RX_INTEGRITY_ERROR | RX_PROTOCOL_ERROR))

    @property
    def answered(self) -> bool:
        """Something answered (a clean frame, a damaged one, or several at once)."""
        return not self.timed_out and (len(self.data) > 0 or self.collision or self.errors)


class PN5180:
    """One PN5180 on the shared SPI bus, addressed by its chip-select channel."""

    def __init__(self, bus: SpiBus, channel: int, clock: Clock) -> None:
        self.bus = bus
        self.channel = channel
        self.clock = clock
        self.rf_config = (-1, -1)
        self.timeout_ticks = -1
        self.spi_frames = 0  # SPI transactions so far (figures for docs/benchmarks.md)
        self.ready = False  # begin() succeeded since the last reset
        self.armed = False  # the transceiver waits to transmit (transceive command running)
        self.crc_on = -1  # CRC enable last written (-1: unknown), to skip needless writes
        self.align = -1  # RX_BIT_ALIGN last written
        # where check_14443a last found the field not as known: (levels, bits, value)
        self.mismatch: tuple[bytes, int, int] = (b"", 0, 0)

    # -- SPI with the BUSY handshake ---------------------------------------------------

    def _wait_ready(self) -> None:
        """BUSY high means the PN5180 is still processing the previous frame."""
        clock = self.clock
        start = clock.ticks_us()
        while self.bus.busy(self.channel):
            if clock.ticks_diff(clock.ticks_us(), start) > BUSY_TIMEOUT_US:
                raise HardwareError("front-end %d: BUSY stuck high" % self.channel)

    def _frame(self, data: bytes) -> None:
        """One SPI frame: wait until not BUSY, NSS low, clock the bytes out, NSS high."""
        self._wait_ready()
        self.bus.select(self.channel)
        try:
            self.bus.write(data)
        finally:
            self.bus.deselect()
        self.spi_frames += 1

    def _query(self, command: bytes, count: int) -> bytes:
        """A command frame, then (once BUSY falls) a frame reading `count` response bytes."""
        self._frame(command)
        self._wait_ready()
        self.bus.select(self.channel)
        try:
            answer = self.bus.read(count)
        finally:
            self.bus.deselect()
        self.spi_frames += 1
        return answer

    # -- commands ------------------------------------------------------------------------

    def write_register(self, address: int, value: int) -> None:
        self._frame(bytes([WRITE_REGISTER, address]) + _u32(value))

    def or_register(self, address: int, mask: int) -> None:
        self._frame(bytes([WRITE_REGISTER_OR_MASK, address]) + _u32(mask))

    def and_register(self, address: int, mask: int) -> None:
        self._frame(bytes([WRITE_REGISTER_AND_MASK, address]) + _u32(mask))

    def read_register(self, address: int) -> int:
        raw = self._query(bytes([READ_REGISTER, address]), 4)
        return raw[0] | raw[1] << 8 | raw[2] << 16 | raw[3] << 24

    def read_eeprom(self, address: int, count: int) -> bytes:
        return self._query(bytes([READ_EEPROM, address, count]), count)

    def load_rf_config(self, tx: int, rx: int) -> None:
        if (tx, rx) != self.rf_config:
            self._frame(bytes([LOAD_RF_CONFIG, tx, rx]))
            self.rf_config = (tx, rx)
            self.crc_on = self.align = -1  # the configuration sets both

    def rf_on(self, guard_us: int) -> None:
        """Switch the field on, wait until it is up, then the tags' power-up time."""
        self.write_register(IRQ_CLEAR, IRQ_TX_RFON)
        self._frame(bytes([RF_ON, 0x00]))
        self._wait_irq(IRQ_TX_RFON)
        self.clock.sleep_us(guard_us)

    def rf_off(self) -> None:
        self._frame(bytes([RF_OFF, 0x00]))
        self.armed = False

    def send_data(self, data: bytes, last_bits: int = 0) -> None:
        """SEND_DATA: `last_bits` valid bits in the last byte (0: all eight)."""
        self._frame(bytes([SEND_DATA, last_bits]) + data)

    def read_data(self, count: int) -> bytes:
        return self._query(bytes([READ_DATA, 0x00]), count)

    def _wait_irq(self, mask: int) -> int:
        clock = self.clock
        start = clock.ticks_us()
        while True:
            irq = self.read_register(IRQ_STATUS)
            if irq & mask:
                return irq
            if irq & IRQ_GENERAL_ERROR:
                raise HardwareError("front-end %d: error IRQ 0x%05X" % (self.channel, irq))
            if clock.ticks_diff(clock.ticks_us(), start) > IRQ_TIMEOUT_US:
                raise HardwareError("front-end %d: no interrupt 0x%05X" % (self.channel, mask))
            clock.sleep_us(POLL_US)

    # -- set-up ----------------------------------------------------------------------------

    def begin(self) -> tuple[int, int]:
        """Check that a PN5180 answers; set the response timer. Returns (product, firmware)."""
        product = self.read_eeprom(EEPROM_PRODUCT_VERSION, 2)
        firmware = self.read_eeprom(EEPROM_FIRMWARE_VERSION, 2)
        if product in (b"\x00\x00", b"\xff\xff"):
            raise HardwareError("front-end %d: no PN5180 answers" % self.channel)
        self.write_register(IRQ_ENABLE, 0)  # polled, not wired: the bus has one BUSY line only
        timer = T1_ENABLE | T1_MODE_SEL | T1_PRESCALE_848KHZ
        self.write_register(TIMER1_CONFIG, timer | T1_START_ON_TX_ENDED | T1_STOP_ON_RX_STARTED)
        self.rf_config = (-1, -1)
        self.timeout_ticks = -1
        self.crc_on = self.align = -1
        self.armed = False
        self.ready = True
        return product[1] << 8 | product[0], firmware[1] << 8 | firmware[0]

    def field_on(self, protocol: str) -> None:
        """Load the RF configuration of `protocol` and switch the field on."""
        if protocol == ISO15693:
            self.load_rf_config(RF_ISO15693_26[0], RF_ISO15693_26[1])
            self.rf_on(RF_GUARD_15693_US)
        else:
            self.load_rf_config(RF_ISO14443A_106[0], RF_ISO14443A_106[1])
            self.rf_on(RF_GUARD_14443A_US)

    # -- transceive --------------------------------------------------------------------------

    def transceive(self, data: bytes, timeout_us: int, last_bits: int = 0) -> Exchange:
        """Send a frame and wait for the answer or the response timeout (TIMER1)."""
        ticks = timeout_us * T1_TICKS_PER_MS // 1000
        if ticks != self.timeout_ticks:
            self.write_register(TIMER1_RELOAD, ticks)
            self.timeout_ticks = ticks
        if not self.armed:
            self.and_register(SYSTEM_CONFIG, 0xFFFFFFFF ^ COMMAND_MASK)  # idle
            self.or_register(SYSTEM_CONFIG, COMMAND_TRANSCEIVE)  # now waiting to transmit
            self.armed = True
        self.write_register(IRQ_CLEAR, IRQ_ALL)
        self.send_data(data, last_bits)
        irq = self._wait_irq(IRQ_RX | IRQ_TIMER1)
        if not irq & IRQ_RX:
            # No answer: the transceiver still waits to receive; idle it before the next one.
            self.armed = False
            return Exchange(b"", 0, True)
        # After a reception the transceive command goes back to waiting to transmit.
        status = self.read_register(RX_STATUS)
        count = status & RX_BYTES_MASK
        return Exchange(self.read_data(count) if count else b"", status, False)

    # -- ISO 15693 -------------------------------------------------------------------------

    def inventory_15693(self, rounds: list[int] | None = None) -> list[bytes]:
        """Every ISO 15693 tag in the field (UIDs MSB first, E0 ...), field already on.

        A one-slot inventory first: no answer means an empty field, one clean answer a single
        tag. On a collision, 16-slot rounds: each slot is answered by the tags whose next four
        UID bits (after the mask) are the slot number; a slot where several answered is
        searched again with those four bits added to the mask, until every tag was read alone.
        `rounds`, if given, receives the mask length of every round (for the figures).
        """
        found: list[bytes] = []
        masks = self.inventory_start(found, 0)
        if rounds is not None:
            rounds.append(-1)
        done = 0
        while masks and done < MAX_ROUNDS:
            mask_len, mask = masks.pop()
            done += 1
            if rounds is not None:
                rounds.append(mask_len)
            self.inventory_mask(mask_len, mask, found, masks)
        return found

    def inventory_start(self, found: list[bytes], expect: int) -> list[tuple[int, int]]:
        """The first step of an ISO 15693 inventory; the masks still to search.

        A one-slot request: no answer is an empty field, a clean one a single tag (a stack
        of 2 to 31, `expect`: how many the last read found, skips it: it would only
        collide). On a collision, 16-slot rounds; a tall stack (32 and more) goes straight
        to the 16 rounds under a 4-bit mask (256 and more: the 256 under an 8-bit mask),
        each short (a round cannot be cut, and the board reads other antennas between
        them), skipping the rounds that would only collide.
        """
        if 1 < expect < 32:
            return [(0, 0)]
        one_slot = bytes([FLAG_HIGH_RATE | FLAG_INVENTORY | FLAG_ONE_SLOT, CMD_INVENTORY, 0])
        first = self.transceive(one_slot, TIMEOUT_15693_US)
        if not first.answered:
            return []
        uid = self._inventory_uid(first)
        if uid is not None:
            found.append(uid)
            return []
        if expect >= 256:  # a pot of hundreds: 256 rounds under an 8-bit mask
            return [(8, prefix) for prefix in range(255, -1, -1)]
        if expect >= 32:
            return [(4, slot) for slot in range(15, -1, -1)]
        return [(0, 0)]

    def inventory_mask(
        self, mask_len: int, mask: int, found: list[bytes], masks: list[tuple[int, int]]
    ) -> None:
        """One 16-slot round under a mask; the slots that collided go on `masks`."""
        for slot in self._inventory_round(mask_len, mask, found):
            if mask_len + 4 <= MAX_MASK_BITS:
                masks.append((mask_len + 4, mask | slot << mask_len))

    @staticmethod
    def _inventory_uid(answer: Exchange) -> bytes | None:
        """The UID of a clean inventory answer: flags, DSFID, 8 UID bytes LSB first."""
        data = answer.data
        if answer.collision or answer.errors or len(data) < 10 or data[0] & 0x01:
            return None
        return bytes(reversed(data[2:10]))

    def _inventory_round(self, mask_len: int, mask: int, found: list[bytes]) -> list[int]:
        """One 16-slot inventory; adds clean UIDs to `found`, returns the slots that collided."""
        nbytes = (mask_len + 7) // 8
        request = bytes([FLAG_HIGH_RATE | FLAG_INVENTORY, CMD_INVENTORY, mask_len])
        request += bytes([(mask >> (8 * i)) & 0xFF for i in range(nbytes)])
        collided: list[int] = []
        saved = self.read_register(TX_CONFIG)
        answer = self.transceive(request, TIMEOUT_15693_US)
        eof_only = saved & (0xFFFFFFFF ^ (TX_DATA_ENABLE | TX_START_SYMBOL_MASK))
        self.write_register(TX_CONFIG, eof_only)
        try:
            for slot in range(16):
                if slot:
                    answer = self.transceive(b"", TIMEOUT_15693_US)  # EOF: next slot
                if not answer.answered:
                    continue
                uid = self._inventory_uid(answer)
                if uid is None:
                    collided.append(slot)
                elif uid not in found:
                    found.append(uid)
        finally:
            self.write_register(TX_CONFIG, saved)  # data and start symbol again
        return collided

    # -- ISO 14443A --------------------------------------------------------------------------

    def _crc(self, on: bool) -> None:
        if self.crc_on == int(on):
            return
        self.crc_on = int(on)
        if on:
            self.or_register(CRC_TX_CONFIG, CRC_ENABLE)
            self.or_register(CRC_RX_CONFIG, CRC_ENABLE)
        else:
            self.and_register(CRC_TX_CONFIG, 0xFFFFFFFF ^ CRC_ENABLE)
            self.and_register(CRC_RX_CONFIG, 0xFFFFFFFF ^ CRC_ENABLE)

    def _rx_align(self, bits: int) -> None:
        if self.align == bits:
            return
        self.align = bits
        self.and_register(CRC_RX_CONFIG, 0xFFFFFFFF ^ RX_BIT_ALIGN_MASK)
        if bits:
            self.or_register(CRC_RX_CONFIG, bits << RX_BIT_ALIGN_SHIFT)

    def scan_14443a(self) -> list[bytes]:
        """Every ISO 14443A card in the field (4, 7 or 10-byte UIDs), field already on.

        REQA wakes the idle cards; the anticollision loop reads one UID bit by bit, taking
        the 1 branch at every collision and keeping the 0 branch for later; SELECT completes
        each cascade level; HLTA puts the card to sleep. The next card starts from a kept
        branch: after REQA, the levels already known are selected directly and the
        anticollision resumes at the branch point, so a pile of n cards costs n walks down
        one branch each, not n walks from the root.
        """
        uids: list[bytes] = []
        branches: list[tuple[bytes, int, int]] = []  # (known levels, bits known, their value)
        for _ in range(MAX_CARDS):
            if self.next_card(uids, branches) < 0:
                break
        return uids

    def next_card(self, uids: list[bytes], branches: list[tuple[bytes, int, int]]) -> int:
        """Read one more ISO 14443A card: 1 if it is new to `uids`, 0 if not (or the walk
        found none: its branch was empty, or a card left during it), -1 when no card
        answers REQA any more (the field is read)."""
        self._crc(False)
        self._rx_align(0)
        atqa = self.transceive(bytes([REQA]), TIMEOUT_14443A_US, last_bits=7)
        if not atqa.answered:
            return -1
        start = branches.pop() if branches else (b"", 0, 0)
        uid = self._select_card(start, branches)
        if uid is None:
            # That branch's cards left the field; or, from the root, a card left in the
            # middle of the walk: the others are still to read (the caller bounds retries).
            # HLTA sends the cards the walk left ready back to idle, for the next REQA.
            self.halt()
            return 0
        new = 0
        if uid not in uids:
            uids.append(uid)
            new = 1
        self._crc(True)
        self.transceive(bytes([HLTA, 0x00]), TIMEOUT_HLTA_US)  # no answer: halted
        return new

    def halt(self) -> None:
        """HLTA: the selected card sleeps, the ready ones go back to idle."""
        self._crc(True)
        self.transceive(bytes([HLTA, 0x00]), TIMEOUT_14443A_US)

    def _select(self, sel: int, level: bytes) -> int:
        """SELECT one cascade level (5 bytes with BCC); the SAK, or -1 if nothing answered."""
        self._crc(True)
        self._rx_align(0)
        answer = self.transceive(bytes([sel, 0x70]) + level, TIMEOUT_14443A_US)
        if answer.timed_out or answer.errors or not answer.data:
            return -1
        return answer.data[0]

    def _select_card(
        self, start: tuple[bytes, int, int], branches: list[tuple[bytes, int, int]]
    ) -> bytes | None:
        done, count, known = start
        uid = b""
        for index in range(len(SEL_LEVELS)):
            sel = SEL_LEVELS[index]
            if len(done) >= 5 * (index + 1):
                level = done[5 * index : 5 * index + 5]  # a level the branch already knows
            else:
                self._crc(False)
                found = self._anticollision(sel, done, count, known, branches)
                count = known = 0
                if found is None or found[0] ^ found[1] ^ found[2] ^ found[3] != found[4]:
                    return None
                level = found
                done += level
            sak = self._select(sel, level)
            if sak < 0:
                return None
            if not sak & SAK_CASCADE:
                return uid + level[0:4]
            uid += level[1:4]  # cascade tag 0x88, then three UID bytes
        return None

    def _anticollision(
        self, sel: int, done: bytes, count: int, known: int, branches: list[tuple[bytes, int, int]]
    ) -> bytes | None:
        """The 5 bytes (UID part and BCC) of one card at this cascade level, starting from
        `count` known bits; the 0 side of every collision is kept in `branches`."""
        for _ in range(41):
            received, at, answered = self._probe(sel, count, known)
            if not answered:
                return None
            if at != -1:  # bits before the collision are common
                if at < 0 or count + at >= 40:
                    return None
                known |= (received & ((1 << at) - 1)) << count
                branches.append((done, count + at + 1, known))  # the cards with a 0 there
                known |= 1 << (count + at)  # go on with the cards with a 1 there
                count += at + 1
                continue
            known |= received << count
            known &= (1 << 40) - 1
            return bytes([(known >> (8 * i)) & 0xFF for i in range(5)])
        return None

    def _probe(self, sel: int, count: int, known: int) -> tuple[int, int, bool]:
        """One anticollision frame with the first `count` bits of this cascade level known:
        (the bits received after them, where among those the first collision is (-1: none,
        -2: among the known bits), whether any card answered)."""
        whole, bits = count // 8, count % 8
        frame = bytes([sel, (2 + whole) << 4 | bits])
        frame += bytes([(known >> (8 * i)) & 0xFF for i in range((count + 7) // 8)])
        self._rx_align(bits)
        answer = self.transceive(frame, TIMEOUT_14443A_US, last_bits=bits)
        if not answer.answered:
            return 0, -1, False
        received = 0
        for i, byte in enumerate(answer.data):
            received |= byte << (8 * i)
        received >>= bits  # the first `bits` received positions belong to the known byte
        if not answer.collision:
            return received, -1, True
        at = answer.collision_bit - bits
        return received, at if at >= 0 else -2, True  # -2: a collision in the known bits

    def check_14443a(self, known: list[bytes]) -> bool:
        """Whether the ISO 14443A cards in the field are still `known`, asked without
        reading them again, field already on (check_plan and check_step, in one go)."""
        plan = check_plan(known)
        if plan is None:
            self.mismatch = (b"", 0, 0)
            return False
        return all(self.check_step(plan[index], index == 0) for index in range(len(plan)))

    def check_step(self, part: tuple[bytes, list[int]], fresh: bool) -> bool:
        """One part of a check (check_plan): REQA (after HLTA unless the field just came on),
        then the first level's trie, or a SELECT of a first level and its cards' second
        level trie. False: the field is not as known (`mismatch` says where it showed)."""
        self.mismatch = (b"", 0, 0)
        if not fresh:
            self.halt()  # the last part's cards back to idle
        self._crc(False)
        self._rx_align(0)
        if not self.transceive(bytes([REQA]), TIMEOUT_14443A_US, last_bits=7).answered:
            return False
        first, values = part
        if not first:
            return self._trie(SEL_LEVELS[0], values, b"")
        sak = self._select(SEL_LEVELS[0], first)
        if sak < 0 or not sak & SAK_CASCADE:
            return False
        self._crc(False)
        return self._trie(SEL_LEVELS[1], values, first)

    def _trie(self, sel: int, values: list[int], done: bytes) -> bool:
        """The cards ready at this cascade level answer as the 40-bit `values` would: one
        anticollision frame per node of their trie, walked depth first. On a difference,
        `mismatch` is where it showed: (the levels before, bits known, their value), the
        branch in which to look for a card that came."""
        stack: list[tuple[int, int, list[int]]] = [(0, 0, values)]
        while stack:
            count, known, group = stack.pop()
            self.mismatch = (done, count, known)
            received, at, answered = self._probe(sel, count, known)
            if not answered:
                return False
            if len(group) == 1:
                if at != -1 or (known | received << count) & MASK_40 != group[0]:
                    return False
                continue
            differ = 0
            for value in group:
                differ |= value ^ group[0]
            if not differ >> count:
                return False  # the same UID twice: not a trie
            split = count
            while not differ >> split & 1:
                split += 1
            if at != split - count:
                return False
            common = group[0] & ((1 << split) - 1)
            if received & ((1 << (split - count)) - 1) != common >> count:
                return False
            stack.append((split + 1, common, [v for v in group if not v >> split & 1]))
            stack.append((split + 1, common | 1 << split, [v for v in group if v >> split & 1]))
        return True

    # -- one antenna -------------------------------------------------------------------------

    def read_tags(self, protocols: tuple[str, ...] | list[str]) -> list[bytes]:
        """Field on, every tag of each protocol, field off: the UIDs in this antenna's field.

        A front-end that failed is set up again first (it may have been reset or replaced).
        """
        read = FieldRead(self, protocols)
        while not read.done:
            read.step()
        return read.found


class FieldRead:
    """One read of every tag in a front-end's field, made a step at a time.

    A step is one request of the anticollision: the first ISO 15693 request, one 16-slot
    round, or one ISO 14443A card. Between steps the board may read other antennas: `pause`
    switches the field off, and the next step switches it on again and goes on where the
    read stopped. That is sound because the search is a tree walked depth first: ISO 15693
    tags answer each masked request afresh, and the ISO 14443A branches still kept are
    exactly the cards not read yet (those read are in subtrees already left), so resuming
    at a kept branch after the field was off finds no card twice. A tag that came during
    the read may be found by it or by the next one; one that left may still be listed.
    """

    def __init__(
        self,
        chip: PN5180,
        protocols: tuple[str, ...] | list[str],
        expect: int = 0,
        known: list[bytes] | None = None,
    ) -> None:
        self.chip = chip
        self.protocols = protocols
        self.expect = expect  # tags the last read found (a stack skips useless requests)
        # ISO 14443A cards the last read found: checked for (check_plan) instead of read
        self.known = known
        self.plan: list[tuple[bytes, list[int]]] | None = None  # the check's parts to go
        self.checked = False  # ... and they were all there, and no other
        self.fresh = False  # the field came on for this step
        self.found: list[bytes] = []
        self.done = not protocols
        self.at = 0  # index of the protocol being read
        self.on = False  # our field is on
        self.masks: list[tuple[int, int]] | None = None  # ISO 15693: still to search
        self.branches: list[tuple[bytes, int, int]] | None = None  # ISO 14443A: kept
        self.resumed = False  # the field went off during this protocol's read
        self.steps = 0
        self.rounds = 0

    def pause(self) -> None:
        """Switch the field off: another front-end is read before the next step."""
        if self.on:
            self.on = False
            self.resumed = True
            try:
                self.chip.rf_off()
            except HardwareError:
                self.chip.ready = False

    def step(self) -> list[bytes]:
        """One step; the UIDs it found that the read had not found yet."""
        if self.done:
            return []
        chip = self.chip
        found = self.found
        before = len(found)
        try:
            if not chip.ready:
                chip.begin()
            protocol = self.protocols[self.at]
            self.fresh = not self.on
            if not self.on:
                chip.field_on(protocol)
                self.on = True
            self.steps += 1
            if protocol == ISO15693:
                finished = self._vicinity(chip, found)
            else:
                finished = self._proximity(chip, found)
            if finished:
                self._next_protocol()
        except HardwareError:
            chip.ready = False
            self.on = False
            raise
        return found[before:]

    def _vicinity(self, chip: PN5180, found: list[bytes]) -> bool:
        masks = self.masks
        if masks is None:
            masks = self.masks = chip.inventory_start(found, self.expect)
            return not masks
        if masks and self.rounds < MAX_PASS_ROUNDS:
            mask_len, mask = masks.pop()
            self.rounds += 1
            chip.inventory_mask(mask_len, mask, found, masks)
        return not masks or self.rounds >= MAX_PASS_ROUNDS

    def _proximity(self, chip: PN5180, found: list[bytes]) -> bool:
        branches = self.branches
        if branches is None:
            known = self.known
            if known is not None and self.plan is None and not self.checked:
                self.plan = check_plan(known)
            plan = self.plan
            if plan and known is not None:  # a part of the check of the cards known here
                if chip.check_step(plan.pop(0), self.fresh):
                    if plan:
                        return False
                    for uid in known:
                        if uid not in found:
                            found.append(uid)
                    self.checked = True
                    self.plan = None
                    return True
                # Something changed. HLTA sends the cards the check left ready back to
                # idle; the read then starts in the branch where the difference showed
                # (a card that came is found first), and goes on over the whole field.
                self.plan = None
                self.known = None
                chip.halt()
                # The root stays below as a branch: once that one is walked, the whole
                # field is (the kept branches are always what is still to walk).
                root = (b"", 0, 0)
                self.branches = [root] if chip.mismatch == root else [root, chip.mismatch]
                self.resumed = False  # (a pause during the check is no pause of the read)
                return False
            branches = self.branches = []
            self.resumed = False
        elif self.resumed and not branches:
            # Every branch is walked. Without a pause, REQA would still be asked for a card
            # the walk missed; after one, the cards read before it are awake again and a
            # walk from the root would only find them anew.
            return True
        self.rounds += 1
        return chip.next_card(found, branches) < 0 or self.rounds >= MAX_CARDS

    def _next_protocol(self) -> None:
        self.on = False
        self.chip.rf_off()
        self.at += 1
        self.masks = None
        self.branches = None
        self.resumed = False
        self.rounds = 0
        self.done = self.at >= len(self.protocols)
