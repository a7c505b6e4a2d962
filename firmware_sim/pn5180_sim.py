"""A simulated NXP PN5180 on a simulated SPI bus, with tags in its antenna's field.

It implements the chip's SPI command protocol as the firmware drives it: the BUSY
handshake, the registers (SYSTEM_CONFIG, IRQ_STATUS/IRQ_CLEAR, RX_STATUS with its collision
bit and position, TX_CONFIG, CRC and timer configuration, RF_STATUS), LOAD_RF_CONFIG,
RF_ON/RF_OFF, SEND_DATA/READ_DATA, READ_EEPROM, and the air side: ISO 15693 tags answering
inventories in their slot (several in one slot collide), ISO 14443A cards running the
REQA / anticollision / SELECT / HLTA state machine over their cascade levels.

Time is modelled, not waited for: a `VirtualClock` advances by the SPI transfer times, the
BUSY times and the air times of each exchange (docs/benchmarks.md lists the figures used),
so the firmware's timeouts run as on the board while a simulated scan costs no real time.
When the firmware polls BUSY or IRQ_STATUS before the chip is done, the clock jumps to the
moment it would be done (the poll would have seen it then).

This file also runs under MicroPython (the WebAssembly check of the firmware), so it keeps
to the subset firmware/protocol.py describes.
"""

from firmware import pn5180 as chip
from firmware.hal import Clock, SpiBus

TICKS_PERIOD = 1 << 30  # MicroPython's ticks wrap at 2**30 on the RP2040
TICKS_MASK = TICKS_PERIOD - 1
TICKS_HALF = TICKS_PERIOD // 2

# -- timings (microseconds) -----------------------------------------------------------
SPI_HZ = 7000000  # the PN5180's fastest SPI clock
NSS_US = 1.0  # NSS set-up and hold around one frame
BUSY_REGISTER_US = 5.0  # register and data commands
BUSY_RF_CONFIG_US = 1000.0  # LOAD_RF_CONFIG copies a configuration from EEPROM
BUSY_EEPROM_US = 20.0
RF_ON_US = 200.0  # field ramp until TX_RFON_IRQ
# ISO 15693 at 26.48 kbit/s (fc = 13.56 MHz): 1-out-of-4 from the reader, one subcarrier back.
V_BYTE_DOWN_US = 302.08
V_SOF_DOWN_US = 75.52
V_EOF_DOWN_US = 37.76
V_BYTE_UP_US = 302.08
V_SOF_UP_US = 56.64
V_EOF_UP_US = 56.64
V_T1_US = 320.9  # the tag's response delay (4352/fc)
# ISO 14443A at 106 kbit/s: 9.44 us a bit, parity after each byte.
A_BIT_US = 9.44
A_FDT_US = 91.15  # frame delay time (1236/fc)

IDLE, READY, ACTIVE, HALT = 0, 1, 2, 3

EEPROM = {0x10: b"\x05\x03", 0x12: b"\x00\x04", 0x14: b"\x00\x99"}


class VirtualClock(Clock):
    """Modelled microseconds, with MicroPython's wrapping ticks; sleeping just advances it."""

    def __init__(self, start_us: int = 0) -> None:
        self.now = float(start_us)

    def advance(self, us: float) -> None:
        self.now += us

    def until(self, at: float) -> None:
        if at > self.now:
            self.now = at

    def ticks_us(self) -> int:
        return int(self.now) & TICKS_MASK

    def ticks_ms(self) -> int:
        return int(self.now // 1000) & TICKS_MASK

    def ticks_diff(self, new: int, old: int) -> int:
        return ((new - old + TICKS_HALF) & TICKS_MASK) - TICKS_HALF

    def sleep_us(self, us: int) -> None:
        self.now += us

    def sleep_ms(self, ms: int) -> None:
        self.now += ms * 1000


class VicinityTag:
    """An ISO 15693 tag (an ICODE SLIX chip or card inlay): 8-byte UID, MSB (E0) first."""

    def __init__(self, uid: bytes) -> None:
        self.uid = bytes(uid)
        value = 0
        for byte in self.uid:
            value = value << 8 | byte
        self.value = value  # bit 0 is the first UID bit on air

    def answer(self) -> bytes:
        """Inventory response: flags, DSFID, UID least significant byte first."""
        return bytes([0x00, 0x00]) + bytes(reversed(self.uid))


class ProximityTag:
    """An ISO 14443A card (NTAG, MIFARE): 4, 7 or 10-byte UID and its cascade levels."""

    def __init__(self, uid: bytes) -> None:
        self.uid = bytes(uid)
        self.state = IDLE
        self.level = 0
        parts = []
        if len(uid) == 4:
            parts.append(self.uid)
        elif len(uid) == 7:
            parts.append(bytes([chip.CASCADE_TAG]) + self.uid[0:3])
            parts.append(self.uid[3:7])
        else:
            parts.append(bytes([chip.CASCADE_TAG]) + self.uid[0:3])
            parts.append(bytes([chip.CASCADE_TAG]) + self.uid[3:6])
            parts.append(self.uid[6:10])
        self.levels = []
        for part in parts:
            bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
            value = 0
            for i, byte in enumerate(part + bytes([bcc])):
                value |= byte << (8 * i)
            self.levels.append((part + bytes([bcc]), value))

    def atqa(self) -> bytes:
        size = {4: 0x00, 7: 0x40, 10: 0x80}[len(self.uid)]
        return bytes([size | 0x04, 0x00])


def make_tag(uid: bytes) -> VicinityTag | ProximityTag:
    """The simulated tag a UID stands for: 8 bytes ISO 15693, else ISO 14443A."""
    if len(uid) == 8:
        return VicinityTag(uid)
    return ProximityTag(uid)


def _bits_of(data: bytes) -> int:
    """Bytes as an integer, first byte lowest (the order bits go on air)."""
    return int.from_bytes(data, "little")


def _wake(cards: list[ProximityTag], *, wupa: bool) -> list[bytes]:
    """REQA wakes the idle cards, WUPA the halted ones too: each answers its ATQA."""
    woken = [c for c in cards if c.state == IDLE or (wupa and c.state == HALT)]
    for card in woken:
        card.state = READY
        card.level = 0
    return [card.atqa() for card in woken]


def _select(ready: list[ProximityTag], level: int, uid_part: bytes) -> list[bytes]:
    """SELECT at a cascade level: the card with that part of the UID answers its SAK (cascade:
    on to the next level; else active)."""
    answers = []
    for card in [c for c in ready if c.levels[level][0] == uid_part]:
        if level + 1 < len(card.levels):
            card.level = level + 1
            answers.append(bytes([chip.SAK_CASCADE]))
        else:
            card.state = ACTIVE
            answers.append(b"\x00")
    return answers


class SimPN5180:
    """One simulated PN5180 with the tags in its antenna's field (`tags`)."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.tags: list[VicinityTag | ProximityTag] = []
        self.dead = False  # a broken or missing front-end: BUSY never falls
        self.frames = 0
        self.violations = 0  # frames clocked in while BUSY was high (the chip ignores them)
        self.exchanges = 0
        self.air_us = 0.0
        self.reset()

    def reset(self) -> None:
        self.registers: dict[int, int] = {}
        for address in range(0x30):
            self.registers[address] = 0
        self.registers[chip.TX_CONFIG] = chip.TX_DATA_ENABLE | 1 << 6
        self.rf = False
        self.protocol = ""
        self.busy_until = 0.0
        self.response = b""
        self.event_at = -1.0  # pending end of an exchange
        self.event_irq = 0
        self.event_status = 0
        self.event_data = b""
        self.rx_data = b""
        self.receiving = False  # timed out: waits to receive until set idle
        self.slot = -1
        self.slots = 0
        self.slot_groups: list[list[VicinityTag]] = []
        self._power_off_tags()

    def _power_off_tags(self) -> None:
        for tag in self.tags:
            if isinstance(tag, ProximityTag):
                tag.state = IDLE
                tag.level = 0

    # -- field ---------------------------------------------------------------------------

    def place(self, uid: bytes) -> None:
        tag = make_tag(uid)
        self.tags.append(tag)

    def remove(self, uid: bytes) -> None:
        self.tags = [tag for tag in self.tags if tag.uid != bytes(uid)]

    # -- SPI -----------------------------------------------------------------------------

    def busy(self) -> bool:
        """The BUSY line; a poll while busy finds it high, and time moves on to its fall."""
        clock = self.clock
        if self.dead:
            clock.advance(1000.0)
            return True
        if clock.now < self.busy_until:
            clock.until(self.busy_until)
            return True
        return False

    def _spi_time(self, count: int) -> None:
        self.clock.advance(NSS_US + count * 8 * 1000000.0 / SPI_HZ)
        self.frames += 1

    def read(self, count: int) -> bytes:
        """The answer frame after READ_REGISTER / READ_DATA / READ_EEPROM."""
        if self.clock.now < self.busy_until:
            self.violations += 1
            self._spi_time(count)
            return b"\xff" * count
        self._spi_time(count)
        if self.dead:
            return b"\xff" * count
        data = self.response[:count]
        self.response = b""
        self.busy_until = self.clock.now + BUSY_REGISTER_US
        return data + b"\xff" * (count - len(data))

    def write(self, frame: bytes) -> None:
        """A command frame (ignored if the host did not wait for BUSY to fall)."""
        if self.clock.now < self.busy_until:
            self.violations += 1
            self._spi_time(len(frame))
            return
        self._spi_time(len(frame))
        if self.dead or not frame:
            return
        self._settle()
        command = frame[0]
        busy = BUSY_REGISTER_US
        if command <= chip.WRITE_REGISTER_AND_MASK:
            if len(frame) == 6:
                self._write_register(command, frame[1], _bits_of(frame[2:6]))
        elif command == chip.READ_REGISTER and len(frame) == 2:
            value = self._read_register(frame[1])
            self.response = bytes([(value >> (8 * i)) & 0xFF for i in range(4)])
        elif command == chip.READ_EEPROM and len(frame) == 3:
            data = EEPROM.get(frame[1], b"")
            self.response = (data + b"\x00" * frame[2])[: frame[2]]
            busy = BUSY_EEPROM_US
        elif command == chip.READ_DATA:
            self.response = self.rx_data
        elif command == chip.LOAD_RF_CONFIG and len(frame) == 3:
            self._load_rf_config(frame[1], frame[2])
            busy = BUSY_RF_CONFIG_US
        elif command == chip.RF_ON:
            self.rf = True
            self._power_off_tags()
            self._raise(chip.IRQ_TX_RFON, self.clock.now + RF_ON_US)
        elif command == chip.RF_OFF:
            self.rf = False
            self.receiving = False
            self._power_off_tags()
            self.event_at = -1.0
            self.registers[chip.IRQ_STATUS] |= chip.IRQ_TX_RFOFF
        elif command == chip.SEND_DATA and len(frame) >= 2:
            self._send(frame[2:], frame[1])
        else:
            self.registers[chip.IRQ_STATUS] |= chip.IRQ_GENERAL_ERROR
        self.busy_until = self.clock.now + busy

    # -- registers -------------------------------------------------------------------------

    def _write_register(self, command: int, address: int, value: int) -> None:
        if address == chip.IRQ_CLEAR:
            self.registers[chip.IRQ_STATUS] &= 0xFFFFFFFF ^ value
            return
        old = self.registers.get(address, 0)
        if command == chip.WRITE_REGISTER_OR_MASK:
            value = old | value
        elif command == chip.WRITE_REGISTER_AND_MASK:
            value = old & value
        self.registers[address] = value & 0xFFFFFFFF
        idle = value & chip.COMMAND_MASK != chip.COMMAND_TRANSCEIVE
        if address == chip.SYSTEM_CONFIG and idle:
            self.event_at = -1.0  # idle aborts an exchange in progress
            self.receiving = False

    def _read_register(self, address: int) -> int:
        if address == chip.IRQ_STATUS and 0 <= self.clock.now < self.event_at:
            status = self.registers[chip.IRQ_STATUS]
            self.clock.until(self.event_at)  # the next poll sees the exchange done
            return status
        if address == chip.RF_STATUS:
            state = self._state()
            return (1 << 0 if self.rf else 0) | state << chip.TRANSCEIVE_STATE_SHIFT
        return self.registers.get(address, 0)

    def _state(self) -> int:
        if self.registers[chip.SYSTEM_CONFIG] & chip.COMMAND_MASK != chip.COMMAND_TRANSCEIVE:
            return 0
        return chip.STATE_WAIT_TRANSMIT if self.event_at < 0 and not self.receiving else 3

    def _settle(self) -> None:
        """Apply an exchange whose end time has come."""
        if 0 <= self.event_at <= self.clock.now:
            self.registers[chip.IRQ_STATUS] |= self.event_irq
            self.receiving = bool(self.event_irq & chip.IRQ_TIMER1)
            if self.event_irq & chip.IRQ_RX:
                self.registers[chip.RX_STATUS] = self.event_status
                self.rx_data = self.event_data
            self.event_at = -1.0

    def _raise(self, irq: int, at: float) -> None:
        self.event_irq = irq
        self.event_at = at
        self.event_status = 0
        self.event_data = b""

    def _load_rf_config(self, tx: int, rx: int) -> None:
        if (tx, rx) == chip.RF_ISO15693_26:
            self.protocol = chip.ISO15693
            self.registers[chip.CRC_TX_CONFIG] |= chip.CRC_ENABLE
            self.registers[chip.CRC_RX_CONFIG] |= chip.CRC_ENABLE
        elif (tx, rx) == chip.RF_ISO14443A_106:
            self.protocol = chip.ISO14443A
        else:
            self.protocol = "unsupported"
        self.registers[chip.TX_CONFIG] = chip.TX_DATA_ENABLE | 1 << 6

    # -- the air -------------------------------------------------------------------------

    def _crc(self, register: int) -> bool:
        return bool(self.registers[register] & chip.CRC_ENABLE)

    def _send(self, data: bytes, last_bits: int) -> None:
        if self._state() != chip.STATE_WAIT_TRANSMIT or not self.rf:
            self.registers[chip.IRQ_STATUS] |= chip.IRQ_GENERAL_ERROR
            return
        self.exchanges += 1
        self.registers[chip.RX_STATUS] = 0
        self.rx_data = b""
        if self.protocol == chip.ISO15693:
            tx_us, answers = self._vicinity(data)
            up = len(answers[0]) + 2 if answers else 0  # data and CRC
            fdt = V_T1_US
            rx_us = V_SOF_UP_US + up * V_BYTE_UP_US + V_EOF_UP_US
        elif self.protocol == chip.ISO14443A:
            tx_us, answers = self._proximity(data, last_bits)
            fdt = A_FDT_US
            rx_us = 0.0
            if answers:
                extra = 2 if self._crc(chip.CRC_RX_CONFIG) else 0
                rx_us = (2 + 9 * (len(answers[0]) + extra)) * A_BIT_US
        else:
            tx_us, answers, fdt, rx_us = 100.0, [], 0.0, 0.0
        tx_end = self.clock.now + tx_us
        self.registers[chip.IRQ_STATUS] |= chip.IRQ_TX  # (set at tx_end; nobody polls for it)
        if answers:
            at = tx_end + fdt + rx_us
            self.air_us += at - self.clock.now
            self.event_irq = chip.IRQ_RX
            self.event_at = at
            self.event_data, self.event_status = self._merge(answers)
        else:
            reload = self.registers[chip.TIMER1_RELOAD]
            at = tx_end + reload * 1000.0 / chip.T1_TICKS_PER_MS
            self.air_us += at - self.clock.now
            self._raise(chip.IRQ_TIMER1, at)

    def _merge(self, answers: list[bytes]) -> tuple[bytes, int]:
        """What the receiver makes of one or more simultaneous answers."""
        data = answers[0]
        if len(answers) == 1:
            return data, len(data)
        if self.protocol == chip.ISO15693:
            # Several tags in one slot: Manchester coding shows the collision at once.
            return b"", chip.RX_COLLISION | chip.RX_INTEGRITY_ERROR
        return self._proximity_collision(answers)

    # ISO 15693 --------------------------------------------------------------------------

    def _vicinity(self, data: bytes) -> tuple[float, list[bytes]]:
        eof_only = not self.registers[chip.TX_CONFIG] & chip.TX_DATA_ENABLE
        tags = [tag for tag in self.tags if isinstance(tag, VicinityTag)]
        if eof_only:
            self.slot += 1
            answers: list[bytes] = []
            if 0 <= self.slot < self.slots:
                answers = [tag.answer() for tag in self.slot_groups[self.slot]]
            return V_EOF_DOWN_US, answers
        tx_us = V_SOF_DOWN_US + (len(data) + 2) * V_BYTE_DOWN_US + V_EOF_DOWN_US
        self.slots = 0
        if len(data) < 3 or not data[0] & chip.FLAG_INVENTORY or data[1] != chip.CMD_INVENTORY:
            return tx_us, []
        mask_len = data[2]
        mask = _bits_of(data[3 : 3 + (mask_len + 7) // 8]) & ((1 << mask_len) - 1)
        matching = [tag for tag in tags if tag.value & ((1 << mask_len) - 1) == mask]
        one_slot = bool(data[0] & chip.FLAG_ONE_SLOT)
        self.slots = 1 if one_slot else 16
        self.slot_groups = [[] for _ in range(self.slots)]
        for tag in matching:
            slot = 0 if one_slot else (tag.value >> mask_len) & 0xF
            self.slot_groups[slot].append(tag)
        self.slot = 0
        return tx_us, [tag.answer() for tag in self.slot_groups[0]]

    # ISO 14443A -------------------------------------------------------------------------

    def _proximity(self, data: bytes, last_bits: int) -> tuple[float, list[bytes]]:
        nbits = len(data) * 8 if not last_bits else (len(data) - 1) * 8 + last_bits
        crc = self._crc(chip.CRC_TX_CONFIG)
        tx_us = (2 + nbits + nbits // 8 + (18 if crc else 0)) * A_BIT_US
        cards = [tag for tag in self.tags if isinstance(tag, ProximityTag)]
        if not data:
            return tx_us, []
        if nbits == 7 and data[0] in (chip.REQA, 0x52):
            return tx_us, _wake(cards, wupa=data[0] == 0x52)
        if data[0] == chip.HLTA and crc:
            for card in cards:
                if card.state == ACTIVE:
                    card.state = HALT
                elif card.state == READY:
                    card.state = IDLE
            return tx_us, []
        if data[0] in chip.SEL_LEVELS and len(data) >= 2:
            level = chip.SEL_LEVELS.index(data[0])
            ready = [c for c in cards if c.state == READY and c.level == level]
            if data[1] == 0x70 and len(data) == 7 and crc:
                return tx_us, _select(ready, level, data[2:7])
            if crc:
                return tx_us, []
            return tx_us, self._anticollision(ready, level, data)
        for card in cards:  # anything else: a card that was not selected goes back to idle
            if card.state in (READY, ACTIVE):
                card.state = IDLE
        return tx_us, []

    def _anticollision(self, ready: list[ProximityTag], level: int, data: bytes) -> list[bytes]:
        """ANTICOLLISION at a cascade level: the rest of the UID of each card that matches
        the bits sent, aligned as RX_BIT_ALIGN says."""
        known_bits = ((data[1] >> 4) - 2) * 8 + (data[1] & 0x0F)
        if not 0 <= known_bits < 40:
            return []
        known = _bits_of(data[2:]) & ((1 << known_bits) - 1)
        align = (self.registers[chip.CRC_RX_CONFIG] & chip.RX_BIT_ALIGN_MASK) >> 6
        answers = []
        for card in ready:
            value = card.levels[level][1]
            if value & ((1 << known_bits) - 1) == known:
                rest = value >> known_bits << align
                count = (align + 40 - known_bits + 7) // 8
                answers.append(bytes([(rest >> (8 * i)) & 0xFF for i in range(count)]))
        return answers

    def _proximity_collision(self, answers: list[bytes]) -> tuple[bytes, int]:
        """Bitwise: the first bit where the cards differ is the collision position."""
        size = max(len(answer) for answer in answers)
        values = [_bits_of(answer) for answer in answers]
        both = 0
        for value in values:
            both |= value
        common = values[0]
        for value in values[1:]:
            common &= value
        differ = both ^ common
        if not differ:
            return answers[0], size
        position = 0
        while not differ >> position & 1:
            position += 1
        kept = common & ((1 << position) - 1)  # bits after a collision read as 0
        data = bytes([(kept >> (8 * i)) & 0xFF for i in range(size)])
        where = (position & chip.RX_COLL_POS_MASK) << chip.RX_COLL_POS_SHIFT
        return data, size | chip.RX_COLLISION | where


class SimBus(SpiBus):
    """The shared SPI bus: chip selects and BUSY lines of the simulated front-ends."""

    def __init__(self, frontends: list[SimPN5180]) -> None:
        self.frontends = frontends
        self.selected = -1

    def select(self, channel: int) -> None:
        self.selected = channel

    def deselect(self) -> None:
        self.selected = -1

    def busy(self, channel: int) -> bool:
        if not 0 <= channel < len(self.frontends):
            return True
        return self.frontends[channel].busy()

    def write(self, data: bytes) -> None:
        if 0 <= self.selected < len(self.frontends):
            self.frontends[self.selected].write(bytes(data))

    def read(self, count: int) -> bytes:
        if 0 <= self.selected < len(self.frontends):
            return self.frontends[self.selected].read(count)
        return b"\xff" * count

    def reset(self) -> None:
        for frontend in self.frontends:
            frontend.reset()
