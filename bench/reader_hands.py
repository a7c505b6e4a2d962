"""Whole hands on modelled reader boards: what the dealer does, when each board reports it,
and what the engine makes of it, with the boards reading every antenna in turn (as before
protocol version 4) or where the hand is (the focus the daemon derives from the engine's
state, controller/focus.py).

The hands are random and legal (sim/plans.py), decided once and played in both
modes. The dealer's moves get a human pace (a card pitched every 0.35 s, a player thinking
1.2 to 2.5 s, a stack of chips pushed in 15 ms a chip...) and happen on the simulated
front-ends at that moment, in the middle of a read if it falls there (firmware_sim/
modelled.py). Each board runs the real firmware on modelled time, the interpreter's own
time per SPI transaction added in. A report reaches the engine 1.04 ms after the board sent
it (half a USB frame, and the host's 0.54 ms p50 to a subscriber: docs/benchmarks.md
section 1); a button press at once. Ticks fire at the engine's deadlines, as the daemon's
do. A FOCUS reaches its board 1 ms after the state that made it.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.config import Config, load_config
from controller.focus import FocusTracker
from controller.replay import build_engine
from firmware import protocol
from firmware_sim.modelled import ModelledBoard
from kernel.inputs import ButtonPress, Command, Event, TagIn, TagOut, Tick
from kernel.messages import EVENTS, STATE
from sim.dealer import DealerClock, TableDealer, seat_players
from sim.plans import random_hand

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "sim-table.toml"
DELIVERY_S = (0.5 + 0.54) / 1000  # board to engine: half a USB frame, the host's path
FOCUS_US = 1000.0  # a FOCUS reaches the board a USB frame after the state
CARD_LAYOUT = [*((f"seat{s}", 1) for s in range(1, 10)), ("board", 3), ("burn", 1), ("muck", 1)]
CHIP_LAYOUT = [*((f"bet{s}", 1) for s in range(1, 10)), ("pot", 2)]
CARD_PROTOCOLS = ("iso15693", "iso14443a")
CHIP_PROTOCOLS = ("iso15693",)
CARD_BACKGROUND_MS = 800  # firmware/config.py, the reference boards
CHIP_BACKGROUND_MS = 1000


@dataclass(slots=True)
class Move:
    """A tag the dealer moves, at a modelled moment (seconds)."""

    t: float
    antenna: str
    tag: str  # card name or chip id
    arrive: bool
    role: str  # hole, fold, muck, burn, board, post, push, gather, pot, award, collect
    hand: int
    seat: int | None = None
    value: int | None = None
    focused: bool | None = None  # the antenna was in its board's focus then
    latency: float | None = None  # seconds until the board reported it


@dataclass(slots=True)
class Hands:
    """The hands to play: the setup commands, each hand's moves and presses."""

    setup: list[Event]
    moves: list[Move]
    presses: list[tuple[float, ButtonPress, int]]
    ideal: list[tuple[Any, ...]]  # the engine's events with the dealer's own trace
    end: float
    chip_values: dict[str, int] = field(default_factory=dict)


def _antenna_seat(antenna: str) -> int | None:
    digits = antenna.lstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits) if digits else None


def ruling(payload: dict[str, Any]) -> tuple[Any, ...]:
    """What an event rules, without when it was published."""
    return tuple(sorted((k, repr(v)) for k, v in payload.items() if k not in ("t", "seq")))


def engine_config(settle: float = 1.0) -> Config:
    """The example table, with the settle of a push (`[rules] settle_seconds`)."""
    config = load_config(CONFIG)
    return dataclasses.replace(
        config, rules=dataclasses.replace(config.rules, settle_seconds=settle)
    )


def deal(count: int, seed: int, players: int = 9, settle: float = 1.0) -> Hands:
    """`count` random hands at a table of `players`, paced as a dealer deals them."""
    rng = random.Random(seed)
    engine = build_engine(engine_config(settle))
    dealer = TableDealer(DealerClock())
    setup = seat_players(
        [(s, f"P{s}", 20000) for s in range(1, players + 1)], (100, 200, 0), players
    )
    ideal: list[tuple[Any, ...]] = []
    for event in setup:
        engine.apply(event)
    traces = []
    for _ in range(count):
        events = random_hand(engine, dealer, rng)
        for event in events:
            ideal += [ruling(m.payload) for m in engine.apply(event) if m.topic == EVENTS]
        traces.append(events)
    hands = Hands(setup, [], [], ideal, 0.0)
    clock = 1.0
    for number, events in enumerate(traces, start=1):
        clock = _pace(events, number, clock + 3.0, rng, hands)
    hands.end = clock + 3.0
    return hands


def _pace(events: list[Event], hand: int, clock: float, rng: random.Random, out: Hands) -> float:
    """A hand's dealer trace as physical moves at a human pace; the clock after it.

    A player thinks 1.2 to 2.5 s before acting; a stack of chips goes into a bet zone a
    chip every 15 ms, 0.4 s after a raise or all-in button; hole cards are pitched 0.35 s
    apart, board cards 0.35 s apart after a burn 1 s after the round; a fold's cards reach
    the muck 0.4 s after leaving the seat, a bet zone's chips the pot 0.3 s after leaving
    it, once the last push settled (1.5 s after its last chip); the pot goes to the winner
    2 s after the last action, all at once; then the dealer clears the table.
    """

    def think() -> float:
        return rng.uniform(1.2, 2.5)

    tags = [e for e in events if isinstance(e, TagIn | TagOut)]
    award = next(
        (i for i, e in enumerate(tags) if isinstance(e, TagOut) and e.antenna == "pot"), None
    )
    moved_at: dict[str, tuple[float, int | None]] = {}  # tag -> (left when, from which seat)
    dealt = False
    last: Event | None = None
    index = -1
    for event in events:
        if isinstance(event, Tick | Command):
            continue
        if isinstance(event, ButtonPress):
            if event.name != "shuffler":
                clock += think()
            out.presses.append((clock, event, hand))
            last = event
            continue
        assert isinstance(event, TagIn | TagOut)
        index += 1
        name = event.card or event.chip
        assert name is not None
        if event.chip is not None and event.value is not None:
            out.chip_values[event.chip] = event.value
        antenna = event.antenna
        seat = _antenna_seat(antenna)
        prev, last = last, event
        clearing = award is not None and index >= award
        if isinstance(event, TagIn) and name in moved_at:  # the end of a move
            last = prev  # (the move's start stays the last thing the dealer did)
            left, source = moved_at.pop(name)
            if antenna == "muck" and not clearing:  # a fold: `seat` is the folding seat
                out.moves.append(Move(left + 0.4, antenna, name, True, "muck", hand, source))
            else:
                out.moves.append(Move(left + 0.3, antenna, name, True, "moved", hand, seat))
            continue
        if isinstance(event, TagIn):
            if antenna.startswith("bet"):
                if isinstance(prev, ButtonPress) and prev.name in ("raise", "allin"):
                    clock += 0.4
                elif isinstance(prev, TagIn) and prev.antenna == antenna:
                    clock += 0.015
                else:
                    clock += think() if dealt else 0.8
                role = "push" if dealt else "post"
            elif antenna.startswith("seat"):
                clock += 0.35
                dealt = True
                role = "hole"
            elif antenna == "burn":
                clock += 1.0
                role = "burn"
            elif antenna == "board":
                clock += 0.35
                role = "board"
            else:
                clock += 0.3
                role = "moved"
            out.moves.append(Move(clock, antenna, name, True, role, hand, seat, event.value))
            continue
        # a departure
        following = tags[index + 1] if index + 1 < len(tags) else None
        moving = isinstance(following, TagIn) and (following.card or following.chip) == name
        if isinstance(prev, TagOut) and prev.antenna == antenna:
            clock += 0.003 if antenna == "pot" else 0.02
        elif antenna == "muck" and clearing:
            clock += 1.5  # the muck into the shuffler once the table is cleared
        elif antenna == "pot":
            clock += 2.0
        elif antenna.startswith("seat") and not clearing:
            clock += think()
        elif antenna.startswith("bet") and moving and not clearing:
            # the bets into the pot: once the last push has settled (at most 1 s after its
            # last chip, docs/trace-format.md), then a zone every half second
            gathering = isinstance(prev, TagOut) and prev.antenna.startswith("bet")
            clock += 0.5 if gathering else 1.5
        elif clearing and isinstance(prev, TagOut) and prev.antenna == "pot":
            clock += 1.0  # the table cleared once the pot is pushed
        else:
            clock += 0.5 if not clearing else 0.05
        if antenna.startswith("seat") and not clearing:
            role = "fold"
        elif antenna.startswith("bet") and moving:
            role = "gather"
        elif antenna == "pot" and index == award:
            role = "award"
        else:
            role = "collect"
        if moving:
            moved_at[name] = (clock, seat)
        out.moves.append(Move(clock, antenna, name, False, role, hand, seat, event.value))
    return clock


@dataclass(slots=True)
class Run:
    """What one mode made of the hands."""

    mode: str
    moves: list[Move]
    events: list[tuple[float, dict[str, Any]]]
    rulings: list[tuple[Any, ...]]
    alerts: dict[str, int]
    focus_changes: int
    boards: dict[str, ModelledBoard]
    uids: dict[str, bytes]
    start_us: float


class _Uids:
    """Each card and chip its own tag: an NTAG-like card (04 and six random bytes), an
    ICODE-like chip (E0 04 01 and five random bytes)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.uid: dict[str, bytes] = {}
        self.name: dict[bytes, str] = {}

    def of(self, name: str, chip: bool) -> bytes:
        uid = self.uid.get(name)
        if uid is None:
            head = bytes([0xE0, 4, 1]) if chip else bytes([4])
            size = 8 if chip else 7
            while uid is None or uid in self.name:
                uid = head + bytes(self.rng.randrange(256) for _ in range(size - len(head)))
            self.uid[name] = uid
            self.name[uid] = name
        return uid


def play(hands: Hands, mode: str, cpu_us: float, seed: int = 11, settle: float = 1.0) -> Run:
    """Play the hands on two modelled boards; `mode` "cycle" (every antenna in turn, as
    before protocol version 4) or "focus" (the schedule, the focus from the engine)."""
    cycle = mode == "cycle"
    boards = {
        "card": ModelledBoard(
            CARD_LAYOUT, "card", CARD_PROTOCOLS, cpu_us, cycle=cycle,
            background_ms=CARD_BACKGROUND_MS,
        ),
        "chip": ModelledBoard(
            CHIP_LAYOUT, "chip", CHIP_PROTOCOLS, cpu_us, cycle=cycle,
            background_ms=CHIP_BACKGROUND_MS,
        ),
    }
    for board in boards.values():
        board.boot()
    start_us = max(board.now_us() for board in boards.values())
    which = {name: kind for kind, b in boards.items() for name in b.names}
    uids = _Uids(seed)
    moves = [copy.copy(move) for move in hands.moves]
    for move in moves:
        chip = move.tag in hands.chip_values
        uid = uids.of(move.tag, chip)
        boards[which[move.antenna]].move(start_us + move.t * 1e6, move.antenna, uid, move.arrive)
    engine = build_engine(engine_config(settle))
    for event in hands.setup:
        engine.apply(event)
    tracker = FocusTracker()
    focus_log: dict[str, list[tuple[float, frozenset[str]]]] = {
        kind: [(0.0, frozenset())] for kind in boards
    }
    events: list[tuple[float, dict[str, Any]]] = []
    rulings: list[tuple[Any, ...]] = []
    alerts: dict[str, int] = {}
    presses = sorted(hands.presses, key=lambda p: p[0])
    seen = {kind: 0 for kind in boards}
    pending: list[tuple[float, int, Event]] = []  # (when it reaches the engine, order, input)
    order = 0
    last_t = 0.0
    changes = 0
    t = 0.0
    end = hands.end
    while t < end or pending:
        deadline = engine.deadline()
        step = min(
            t + 0.005,
            presses[0][0] if presses else end,
            pending[0][0] if pending else end,
            deadline if deadline is not None and deadline > t else t + 0.005,
        )
        step = max(step, t + 1e-6)
        for kind, board in boards.items():
            board.run_until(start_us + step * 1e6)
            frames = board.wire.frames
            for at_us, msg_type, payload in frames[seen[kind] :]:
                if msg_type not in (protocol.TAG_IN, protocol.TAG_OUT):
                    continue
                antenna, uid, _ms = protocol.parse_tag(payload)
                name = uids.name[uid]
                where = board.names[antenna]
                when = (at_us - start_us) / 1e6 + DELIVERY_S
                value = hands.chip_values.get(name)
                cls = TagIn if msg_type == protocol.TAG_IN else TagOut
                report: Event = (
                    cls(when, where, chip=name, value=value)
                    if value is not None
                    else cls(when, where, card=name)
                )
                order += 1
                pending.append((when, order, report))
            seen[kind] = len(frames)
        pending.sort(key=lambda item: (item[0], item[1]))
        inputs: list[Event] = []
        while pending and pending[0][0] <= step:
            inputs.append(pending.pop(0)[2])
        while presses and presses[0][0] <= step:
            when, press, _hand = presses.pop(0)
            inputs.append(ButtonPress(when, press.name, press.seat))
        inputs.sort(key=lambda e: e.t)
        if not inputs and deadline is not None and deadline <= step:
            inputs.append(Tick(deadline))
        for item in inputs:
            item_t = max(item.t, last_t)
            last_t = item_t
            if item_t != item.t:
                item = dataclasses.replace(item, t=item_t)
            for message in engine.apply(item):
                if message.topic == EVENTS:
                    events.append((item_t, message.payload))
                    rulings.append(ruling(message.payload))
                elif message.topic == "alerts":
                    kind = str(message.payload.get("kind", message.payload.get("type", "?")))
                    alerts[kind] = alerts.get(kind, 0) + 1
                elif message.topic == STATE and not cycle:
                    focus = tracker.update(message.payload).antennas
                    for kind, board in boards.items():
                        mine = frozenset(a for a in focus if a in board.names)
                        if mine != focus_log[kind][-1][1]:
                            board.focus(sorted(mine), FOCUS_US)
                            focus_log[kind].append((item_t + FOCUS_US / 1e6, mine))
                            changes += 1
        t = step
    _measure(moves, boards, which, uids, focus_log, start_us, cycle)
    return Run(mode, moves, events, rulings, alerts, changes, boards, uids.uid, start_us)


def _measure(
    moves: list[Move],
    boards: dict[str, ModelledBoard],
    which: dict[str, str],
    uids: _Uids,
    focus_log: dict[str, list[tuple[float, frozenset[str]]]],
    start_us: float,
    cycle: bool,
) -> None:
    """Each move's latency: until the first report of it at or after it was made."""
    reports: dict[tuple[str, bytes, bool], list[float]] = {}
    for board in boards.values():
        for at_us, msg_type, antenna, uid in board.reports():
            key = (antenna, uid, msg_type == protocol.TAG_IN)
            reports.setdefault(key, []).append((at_us - start_us) / 1e6)
    for move in moves:
        uid = uids.uid[move.tag]
        times = reports.get((move.antenna, uid, move.arrive), [])
        later = [x for x in times if x >= move.t - 1e-9]
        move.latency = later[0] - move.t + DELIVERY_S if later else None
        if not cycle:
            log = focus_log[which[move.antenna]]
            current = [names for when, names in log if when <= move.t][-1]
            move.focused = (move.antenna in current) if current else None  # None: no focus


def pct(values: Iterable[float], q: float) -> float:
    data = sorted(values)
    if not data:
        return float("nan")
    index = min(len(data) - 1, max(0, round(q * (len(data) - 1))))
    return data[index]


def summary(run: Run, ideal: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Latencies (ms) by board, direction and focus; folds; push settles; rulings."""

    def stats(values: list[float]) -> dict[str, Any]:
        ms = [v * 1000 for v in values]
        if not ms:
            return {"n": 0}
        return {
            "n": len(ms),
            "p50_ms": round(statistics.median(ms), 1),
            "p99_ms": round(pct(ms, 0.99), 1),
            "max_ms": round(max(ms), 1),
        }

    out: dict[str, Any] = {"mode": run.mode}
    lost = [m for m in run.moves if m.latency is None]
    out["moves"] = len(run.moves)
    out["not_reported"] = len(lost)
    groups: dict[str, list[float]] = {}
    for move in run.moves:
        if move.latency is None:
            continue
        kind = move.antenna.rstrip("0123456789")
        kind = {"seat": "seats", "bet": "bet zones"}.get(kind, kind)
        where = ", focused" if move.focused else ", background" if move.focused is False else ""
        if move.focused is None and run.mode != "cycle":
            where = ", no focus (between hands)"
        key = f"{kind}: {'arrival' if move.arrive else 'departure'}{where}"
        groups.setdefault(key, []).append(move.latency)
        board = "card board" if move.antenna in dict(CARD_LAYOUT) else "chip board"
        key = f"{board}: {'arrival' if move.arrive else 'departure'}{where}"
        groups.setdefault(key, []).append(move.latency)
    out["latency"] = {key: stats(values) for key, values in sorted(groups.items())}
    # A fold: the seat's cards leave (departure) and land on the muck (the engine's fold).
    folds_out = [m.latency for m in run.moves if m.role == "fold" and m.latency is not None]
    out["fold, cards off the seat"] = stats([x for x in folds_out if x is not None])
    known: list[float] = []
    landed: dict[tuple[int, int], float] = {}  # (hand, seat) -> first card on the muck
    for move in run.moves:
        if move.role == "muck" and move.seat is not None:
            spot = (move.hand, move.seat)
            landed[spot] = min(landed.get(spot, move.t), move.t)
    for t, payload in run.events:
        if payload.get("type") == "action" and payload.get("action") == "fold":
            first = landed.get((int(payload.get("hand") or 0), int(payload["seat"])))
            if first is not None:
                known.append(t - first)
    out["fold, muck to the engine's fold"] = stats(known)
    settles = []
    pushes: dict[tuple[int, int], list[Move]] = {}
    for move in run.moves:
        if move.role == "push" and move.arrive and move.seat is not None:
            pushes.setdefault((move.hand, move.seat), []).append(move)
    actions = [(t, p) for t, p in run.events if p.get("type") == "action"]
    for (_hand, seat), chips in pushes.items():
        chips.sort(key=lambda m: m.t)
        groups_: list[list[Move]] = [[chips[0]]]
        for chip in chips[1:]:
            if chip.t - groups_[-1][-1].t < 0.5:
                groups_[-1].append(chip)
            else:
                groups_.append([chip])
        for group in groups_:
            last = group[-1].t
            after = [t for t, p in actions if p.get("seat") == seat and t >= last]
            if after:
                settles.append(after[0] - last)
    out["push settled after its last chip"] = stats(settles)
    out["rulings"] = "equal" if run.rulings == ideal else _first_difference(run.rulings, ideal)
    out["alerts"] = run.alerts
    out["focus_changes"] = run.focus_changes
    return out


def _first_difference(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> str:
    for i, (a, b) in enumerate(zip(got, want, strict=False)):
        if a != b:
            return f"differ at event {i}: {dict(a)} instead of {dict(b)}"
    return f"{len(got)} events instead of {len(want)}"


def bench(count: int, seed: int, cpu_us: float) -> dict[str, Any]:
    """Both modes on the same hands."""
    hands = deal(count, seed)
    result: dict[str, Any] = {
        "hands": count,
        "moves": len(hands.moves),
        "presses": len(hands.presses),
        "modelled_s": round(hands.end, 1),
        "cpu_us_per_spi": cpu_us,
    }
    for mode in ("cycle", "focus"):
        run = play(hands, mode, cpu_us)
        result[mode] = summary(run, hands.ideal)
    return result


