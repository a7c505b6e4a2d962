"""Reader board figures: the inventory cycle per antenna and per board, the tag-to-daemon
latency it implies, and how many stacked chips one inventory resolves.

The firmware's own code (PN5180 driver, antenna scan) runs against simulated PN5180s whose
clock advances by the PN5180's SPI and command timings and the air timings of ISO 15693 and
ISO 14443A (firmware_sim/pn5180_sim.py lists them): the modelled time is what the RF and the
chip take on a board, without the microcontroller's own interpreter time, which is
measured separately: the same scan under MicroPython (WebAssembly port, this machine) and
under CPython, per SPI transaction. Beside them, as the baseline, the floor set by the air
protocol alone (request and answer frames, no chip or bus overhead).

Usage: python -m bench.reader_cycle [--json bench/results/reader_cycle.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import reader_hands
from bench.machine import machine
from firmware import pn5180 as chip
from firmware.pn5180 import PN5180
from firmware.scanner import Antenna
from firmware_sim import pn5180_sim as sim
from firmware_sim.modelled import ModelledBoard
from firmware_sim.pn5180_sim import SimBus, SimPN5180, VirtualClock

ROOT = Path(__file__).resolve().parent.parent
CARD_PROTOCOLS = (chip.ISO15693, chip.ISO14443A)  # the card board's default (config.py)
CHIP_PROTOCOLS = (chip.ISO15693,)
USB_MS = 1.0  # a USB full-speed CDC frame is polled once per 1 ms frame
PICO_US = 50.0  # the interpreter's time per SPI transaction assumed for an RP2040
HOST_MS = 0.54  # frame on the pty to the subscriber, p50 (docs/benchmarks.md section 1)


def chips(rng: random.Random, count: int) -> list[bytes]:
    """ICODE-like ISO 15693 UIDs (E0 04 01 + 5 random bytes)."""
    return [bytes([0xE0, 4, 1, *(rng.randrange(256) for _ in range(5))]) for _ in range(count)]


def cards(count: int, first: int = 1) -> list[bytes]:
    return [bytes.fromhex(f"04A000000000{i:02X}") for i in range(first, first + count)]


class Rig:
    """Front-ends on one simulated bus, driven by the firmware's PN5180 driver."""

    def __init__(self, count: int) -> None:
        self.clock = VirtualClock()
        self.sims = [SimPN5180(self.clock) for _ in range(count)]
        bus = SimBus(self.sims)
        self.drivers = [PN5180(bus, i, self.clock) for i in range(count)]
        for driver in self.drivers:
            driver.begin()

    def read(self, antenna: Antenna) -> dict[str, float]:
        """Read one antenna; modelled ms, SPI transactions, CPython ms for the firmware code."""
        frames = sum(d.spi_frames for d in antenna.frontends)
        start_us, wall = self.clock.now, time.perf_counter()
        got = antenna.read()
        return {
            "ms": (self.clock.now - start_us) / 1000,
            "tags": len(got),
            "spi": sum(d.spi_frames for d in antenna.frontends) - frames,
            "cpython_ms": (time.perf_counter() - wall) * 1000,
        }


def per_antenna(protocols: tuple[str, ...], uids: list[bytes], repeat: int = 5) -> dict[str, Any]:
    rig = Rig(1)
    for uid in uids:
        rig.sims[0].place(uid)
    antenna = Antenna("a", rig.drivers, protocols)
    runs = [rig.read(antenna) for _ in range(repeat)]
    assert all(r["tags"] == len(uids) for r in runs), "a read missed tags"
    return {
        "tags": len(uids),
        "ms": statistics.median(r["ms"] for r in runs),
        "spi": statistics.median(r["spi"] for r in runs),
        "cpython_ms": statistics.median(r["cpython_ms"] for r in runs),
    }


def air_floor_15693_ms(tags: int) -> float:
    """A lower bound from the air protocol alone: the field's power-up guard, one request per
    16 tags (a 16-slot round answers at most 16), and every tag's answer once (t1, SOF, 12
    bytes, EOF); no chip, bus, empty-slot or collision cost."""
    request = sim.V_SOF_DOWN_US + 5 * sim.V_BYTE_DOWN_US + sim.V_EOF_DOWN_US
    answer = sim.V_T1_US + sim.V_SOF_UP_US + 12 * sim.V_BYTE_UP_US + sim.V_EOF_UP_US
    rounds = max(1, (tags + 15) // 16)
    empty = chip.TIMEOUT_15693_US if tags == 0 else 0
    return (chip.RF_GUARD_15693_US + rounds * request + tags * answer + empty) / 1000


Layout = list[tuple[str, int, list[bytes]]]  # antenna name, front-ends, tags on it


def board(layout: Layout, protocols: tuple[str, ...]) -> dict[str, Any]:
    """One full cycle of a board: every antenna read once, in port order."""
    count = sum(frontends for _, frontends, _ in layout)
    rig = Rig(count)
    antennas = []
    channel = 0
    for name, frontends, uids in layout:
        drivers = rig.drivers[channel : channel + frontends]
        for i, uid in enumerate(uids):
            rig.sims[channel + i % frontends].place(uid)
        antennas.append(Antenna(name, drivers, protocols))
        channel += frontends
    reads = [rig.read(antenna) for antenna in antennas]
    return {
        "antennas": len(antennas),
        "frontends": count,
        "tags": sum(r["tags"] for r in reads),
        "cycle_ms": sum(r["ms"] for r in reads),
        "slowest_antenna_ms": max(r["ms"] for r in reads),
        "spi": sum(r["spi"] for r in reads),
        "cpython_ms": sum(r["cpython_ms"] for r in reads),
    }


def card_layout(load: str) -> Layout:
    """The reference card board (board zone on 3 front-ends), idle or in the middle of a hand."""
    counts = {"seat": 0, "board": 0, "burn": 0, "muck": 0}
    if load != "idle":
        counts = {"seat": 2, "board": 5, "burn": 3, "muck": 8}
    deck = iter(cards(52))
    layout: Layout = [
        (f"seat{s}", 1, [next(deck) for _ in range(counts["seat"])]) for s in range(1, 10)
    ]
    for name, frontends in (("board", 3), ("burn", 1), ("muck", 1)):
        layout.append((name, frontends, [next(deck) for _ in range(counts[name])]))
    return layout


def chip_layout(load: str, rng: random.Random) -> Layout:
    per_bet, pot = (0, 0) if load == "idle" else (5, 40)
    bets: Layout = [(f"bet{s}", 1, chips(rng, per_bet)) for s in range(1, 10)]
    return [*bets, ("pot", 2, chips(rng, pot))]


MPY_SCRIPT = """
import time
from firmware import pn5180 as chip
from firmware.board import Board
from firmware.hal import Link
from firmware.pn5180 import PN5180
from firmware.scanner import Antenna, Scanner
from firmware_sim.modelled import ModelledBoard
from firmware_sim.pn5180_sim import SimBus, SimPN5180, VirtualClock


class Null(Link):
    def read(self):
        return b''

    def write(self, data):
        return len(data)


class Recording(SimBus):
    def __init__(self, frontends):
        super().__init__(frontends)
        self.log = []

    def select(self, channel):
        self.log.append((0, channel))
        super().select(channel)

    def deselect(self):
        self.log.append((1, 0))
        super().deselect()

    def busy(self, channel):
        self.log.append((2, channel))
        return super().busy(channel)

    def write(self, data):
        self.log.append((3, bytes(data)))
        super().write(data)

    def read(self, count):
        self.log.append((4, count))
        return super().read(count)


def replay(log, bus):
    for op, arg in log:
        if op == 0:
            bus.select(arg)
        elif op == 1:
            bus.deselect()
        elif op == 2:
            bus.busy(arg)
        elif op == 3:
            bus.write(arg)
        else:
            bus.read(arg)


def card(i):
    return bytes([4, (i * 97) % 256, (i * 57) % 256, i, (i * 31) % 256, 7, i])


CASES = (
    ('ISO 15693, 1 chip', (chip.ISO15693,), [bytes.fromhex('E004015012345678')], 0),
    ('ISO 15693, 10 chips', (chip.ISO15693,),
     [bytes([0xE0, 4, 1, 0, 0, i, i * 7 % 256, i * 13 % 256]) for i in range(10)], 0),
    ('ISO 14443A, 2 cards read', (chip.ISO14443A,), [card(1), card(2)], 0),
    ('ISO 14443A, 2 cards checked', (chip.ISO14443A,), [card(1), card(2)], 600000),
    ('ISO 14443A, 8 cards checked', (chip.ISO14443A,), [card(i) for i in range(8)], 600000),
)
for label, protocols, uids, full_ms in CASES:
    best_firmware = best_alone = 1 << 30
    spi = 0
    for repeat in range(REPEATS):
        clock = VirtualClock()
        frontend = SimPN5180(clock)
        bus = Recording([frontend])
        driver = PN5180(bus, 0, clock)
        driver.begin()
        for uid in uids:
            frontend.place(uid)
        scanner = Scanner([Antenna('a', [driver], protocols)], full_ms=full_ms)
        board = Board(scanner, Null(), clock)
        board.boot_scan()
        board.scan(0)
        board.scan(0)
        alone_clock = VirtualClock()
        alone = SimPN5180(alone_clock)
        for uid in uids:
            alone.place(uid)
        alone_bus = SimBus([alone])
        replay(bus.log, alone_bus)  # the chip alone, in the state the firmware left its own
        bus.log = []
        frames = driver.spi_frames
        start = time.ticks_us()
        for _ in range(ROUNDS):
            board.scan(0)
        spent = time.ticks_diff(time.ticks_us(), start)
        spi = (driver.spi_frames - frames) / ROUNDS
        log = bus.log
        start = time.ticks_us()
        replay(log, alone_bus)
        chip_only = time.ticks_diff(time.ticks_us(), start)
        best_firmware = min(best_firmware, spent)
        best_alone = min(best_alone, chip_only)
    print(label, '|', best_firmware / ROUNDS, '|', best_alone / ROUNDS, '|', spi)
"""


def micropython_per_spi(tmp: Path, rounds: int = 40, repeats: int = 7) -> dict[str, Any] | None:
    """The firmware's own interpreter time per SPI transaction under MicroPython (its
    WebAssembly port, this machine): each case scanned by the real firmware (board loop,
    scanner, PN5180 driver) on a simulated chip whose bus calls are recorded, then the same
    calls replayed on the simulated chip alone; the difference is the firmware's time. The
    fastest of `repeats` runs of each (the machine is shared). None if Node is missing."""
    node = shutil.which("node")
    board_js = ROOT / "firmware_sim" / "wasm" / "board.mjs"
    if node is None or not (ROOT / "firmware_sim" / "wasm" / "node_modules").is_dir():
        return None
    script = tmp / "bench.py"
    script.write_text(f"ROUNDS = {rounds}\nREPEATS = {repeats}\n" + MPY_SCRIPT)
    done = subprocess.run(
        [node, str(board_js), str(ROOT), "--run", str(script)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    rows = []
    total_own = total_spi = 0.0
    for line in done.stderr.splitlines():
        label, firmware_us, alone_us, frames = (part.strip() for part in line.split("|"))
        own = float(firmware_us) - float(alone_us)
        total_own += own
        total_spi += float(frames)
        rows.append(
            {
                "case": label,
                "micropython_ms": round(float(firmware_us) / 1000, 3),
                "simulated_chip_ms": round(float(alone_us) / 1000, 3),
                "spi": float(frames),
                "firmware_us_per_spi": round(own / float(frames), 1),
            }
        )
    return {"rows": rows, "us_per_spi": round(total_own / total_spi, 1)}


def big_pot(cpu_us: float, count: int = 500, seed: int = 5) -> dict[str, Any]:
    """A pot of `count` chips on the chip board (two front-ends): its read and the board's
    full cycle (every antenna in turn, as before protocol version 4), and the schedule with
    the pot in the background: a chip pushed into the focused bet zone, one into another
    zone, and how often the pot itself comes round."""
    rng = random.Random(seed)
    stack = chips(rng, count)
    layout: Layout = [*((f"bet{s}", 1, []) for s in range(1, 10)), ("pot", 2, stack)]
    full = board(layout, CHIP_PROTOCOLS)
    full["cycle_with_interpreter_ms"] = full["cycle_ms"] + full["spi"] * cpu_us / 1000
    modelled = ModelledBoard(
        reader_hands.CHIP_LAYOUT,
        "chip",
        CHIP_PROTOCOLS,
        cpu_us,
        background_ms=reader_hands.CHIP_BACKGROUND_MS,
    )
    modelled.lay("pot", stack)
    modelled.boot()
    modelled.focus(["bet5"], delay_us=0)
    pot = modelled.names.index("pot")
    t = modelled.now_us() + 200_000
    starts: list[int] = []
    lat: dict[str, list[float]] = {"bet5": [], "bet3": []}
    for i in range(80):
        zone = "bet3" if i % 4 == 3 else "bet5"
        t = max(t, modelled.now_us()) + rng.uniform(300_000, 700_000)
        uid = bytes([0xE0, 4, 2, 0, 0, 0, i // 256, i % 256])
        modelled.move(t, zone, uid, True)
        while not any(r[3] == uid for r in modelled.reports()):
            modelled.run_until(modelled.now_us() + 2000)
            started = modelled.board.started[pot]
            if not starts or starts[-1] != started:
                starts.append(started)
        sent = next(r[0] for r in modelled.reports() if r[3] == uid)
        lat[zone].append((sent - t) / 1000 + (USB_MS / 2 + HOST_MS))
        modelled.move(modelled.now_us() + 500_000, zone, uid, False)
    periods = [b - a for a, b in itertools.pairwise(starts)]
    return {
        "chips": count,
        "full_cycle": full,
        "scheduled": {
            "focused bet zone arrival": _ms(lat["bet5"]),
            "background bet zone arrival": _ms(lat["bet3"]),
            "pot read every (ms)": {
                "median": statistics.median(periods) if periods else None,
                "max": max(periods) if periods else None,
            },
        },
    }


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p99_ms": round(reader_hands.pct(values, 0.99), 1),
        "max_ms": round(max(values), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--hands", type=int, default=16, help="hands played in each mode")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(2026)
    results: dict[str, Any] = {"machine": machine()}

    results["antenna_15693"] = [
        per_antenna(CHIP_PROTOCOLS, chips(rng, n)) | {"air_floor_ms": air_floor_15693_ms(n)}
        for n in (0, 1, 2, 5, 10, 20, 40, 80, 112)
    ]
    results["antenna_14443a"] = [
        per_antenna((chip.ISO14443A,), cards(n)) for n in (0, 1, 2, 5, 10, 20)
    ]
    results["antenna_both"] = [per_antenna(CARD_PROTOCOLS, cards(n)) for n in (0, 2)]
    card_idle = board(card_layout("idle"), CARD_PROTOCOLS)
    card_hand = board(card_layout("hand"), CARD_PROTOCOLS)
    card_hand_a = board(card_layout("hand"), (chip.ISO14443A,))
    chip_idle = board(chip_layout("idle", rng), CHIP_PROTOCOLS)
    chip_bets = board(chip_layout("bets", rng), CHIP_PROTOCOLS)
    results["boards"] = {
        "card board, idle, both protocols": card_idle,
        "card board, mid-hand (18 hole cards, 5 board, 3 burn, 8 muck)": card_hand,
        "card board, mid-hand, ISO 14443A only (an NTAG deck)": card_hand_a,
        "chip board, idle": chip_idle,
        "chip board, 5 chips in each bet zone, 40 in the pot": chip_bets,
    }
    latency = {}
    for name, cycle in results["boards"].items():
        c = cycle["cycle_ms"]
        latency[name] = {
            "arrival_mean_ms": c / 2 + USB_MS / 2 + HOST_MS,
            "arrival_worst_ms": c + USB_MS + HOST_MS,
            "departure_mean_ms": 1.5 * c + USB_MS / 2 + HOST_MS,  # debounce: one more read
            "departure_worst_ms": 2 * c + USB_MS + HOST_MS,
        }
    results["latency"] = latency
    with tempfile.TemporaryDirectory() as tmp:
        results["micropython"] = micropython_per_spi(Path(tmp))
    measured = results["micropython"]
    cpu_us = measured["us_per_spi"] if measured is not None else PICO_US
    results["interpreter_us_per_spi"] = cpu_us
    # Whole hands, every antenna in turn (today) and scheduled, in the same run.
    hands = reader_hands.deal(args.hands, args.seed)
    results["hands"] = {"count": args.hands, "moves": len(hands.moves), "end_s": hands.end}
    for mode in ("cycle", "focus"):
        run = reader_hands.play(hands, mode, cpu_us)
        results["hands"][mode] = reader_hands.summary(run, hands.ideal)
    # The same, the interpreter as slow as a Pico's might be (an assumption, not measured).
    run = reader_hands.play(hands, "focus", PICO_US)
    results["hands"][f"focus, {PICO_US:g} us per SPI transaction"] = reader_hands.summary(
        run, hands.ideal
    )
    # The settle of a push, shorter: the same hands dealt and read again.
    for settle in (0.6, 0.4):
        short = reader_hands.deal(args.hands, args.seed, settle=settle)
        run = reader_hands.play(short, "focus", cpu_us, settle=settle)
        results["hands"][f"focus, settle {settle:g} s"] = reader_hands.summary(run, short.ideal)
    results["big_pot"] = big_pot(cpu_us)
    text = json.dumps(results, indent=1)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
