"""A whole tournament in this process, fast: the room's `Tournament` drives real table engines
(controller.engine, the very code of a table) with its commands, a simulated dealer deals at
each table (sim.live_dealer: the sim's planner), and the engines' events go back to
the tournament as the room server would pass them. No broker and no hardware: the tests of the
tournament's procedures see exactly the messages a table publishes."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from controller.engine import Engine, EngineSpec
from controller.engine.cards import FULL_DECK
from controller.rules.betting import street_order
from kernel.inputs import ButtonPress, Command, Event, TagIn, TagOut
from kernel.messages import Message
from room.tournament import facts
from room.tournament.model import Command as RoomCommand
from room.tournament.structure import Structure, load_structure
from room.tournament.tournament import Tournament
from sim.dealer import Decision, HandPlan, TableDealer
from sim.live_dealer import (
    can_start,
    first_card,
    rest_of_hand,
    shuffler_starts,
    waits_for_the_floor,
)

START = 1_800_000_000.0  # the room's clock (unix time) when the rig starts


def structure(tmp_path: Path, text: str, name: str = "event.toml") -> Structure:
    """A tournament file written and loaded."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_structure(path)


def basic(
    tmp_path: Path,
    *,
    players: int = 18,
    tables: int = 3,
    seats: int = 9,
    profile: str = "tda-2019",
    stack: int = 2000,
    minutes: float = 10,
    extra: str = "",
    payout: str = "percent = [50, 30, 20]",
    levels: list[tuple[int, int, int]] | None = None,
    breaks: str = "",
) -> Structure:
    """A small turbo: `players` registered, `tables` tables of `seats`."""
    names = ", ".join(f'"t{i + 1:02d}"' for i in range(tables))
    levels = levels or [
        (25, 50, 0),
        (50, 100, 0),
        (100, 200, 25),
        (150, 300, 50),
        (200, 400, 50),
        (300, 600, 75),
        (500, 1000, 100),
        (1000, 2000, 200),
        (2000, 4000, 400),
        (5000, 10000, 1000),
    ]
    text = (
        f'[tournament]\nname = "Rig event"\nprofile = "{profile}"\nstarting_stack = {stack}\n'
        f"seats_per_table = {seats}\ntables = [{names}]\n{extra}\n"
        f"[payouts]\nbuy_in = 100\n{payout}\n"
    )
    for sb, bb, ante in levels:
        text += (
            f"[[level]]\nsmall_blind = {sb}\nbig_blind = {bb}\nante = {ante}\nminutes = {minutes}\n"
        )
    text += breaks
    for i in range(players):
        text += f'[[player]]\nname = "Player {i + 1:02d}"\nid = "P{i + 1:03d}"\n'
    return structure(tmp_path, text)


@dataclasses.dataclass(frozen=True)
class Script:
    """The next hand at a table, dealt to order: `allin` moves in preflop (the first of the
    two to act, the other calls), everyone else folds; `winner` holds aces."""

    allin: int
    caller: int
    winner: int


SPECIAL = ("As", "Ah", "7c", "2d", "3s", "8h", "9d", "Tc", "Kh")


def lift_card(script: Script, seat: int, rng: random.Random) -> str:
    """The card a scripted hand's first card is (under a house whose hand starts so)."""
    loser = script.caller if script.winner == script.allin else script.allin
    if seat == script.winner:
        return "As"
    if seat == loser:
        return "7c"
    return rng.choice([c for c in FULL_DECK if c not in SPECIAL])


def scripted_plan(
    engine: Engine, script: Script, lifted: tuple[int, str] | None = None
) -> HandPlan:
    """The plan of the hand the engine has just started, as `script` says (`lifted`: the
    card already dealt that started it)."""
    hand = engine.hand
    assert hand is not None
    pos, level = hand.positions, hand.level
    dealt = list(hand.dealt_in)
    order = street_order(dealt, button=pos.button, big_blind_seat=pos.big_blind, preflop=True)
    first = min((script.allin, script.caller), key=order.index)
    decisions = []
    for seat in order:
        if seat == first:
            decisions.append(Decision(seat, "allin"))
        elif seat in (script.allin, script.caller):
            decisions.append(Decision(seat, "call"))
        else:
            decisions.append(Decision(seat, "fold"))
    loser = script.caller if script.winner == script.allin else script.allin
    deck = [c for c in FULL_DECK if c not in SPECIAL and (lifted is None or c != lifted[1])]
    hole = {s: [deck.pop(), deck.pop()] for s in dealt}
    hole[script.winner] = ["As", "Ah"]
    hole[loser] = ["7c", "2d"]
    if lifted is not None and lifted[0] not in (script.winner, loser):
        hole[lifted[0]][0] = lifted[1]
    return HandPlan(
        dealt_in=dealt,
        button=pos.button,
        small_blind_seat=pos.small_blind,
        big_blind_seat=pos.big_blind,
        blinds=(level.small_blind, level.big_blind, level.ante),
        stacks={s: engine.seats[s].stack for s in dealt},
        hole=hole,
        board=["3s", "8h", "9d", "Tc", "Kh"],
        burns=[deck.pop(), deck.pop(), deck.pop()],
        streets=[decisions],
        bb_ante=level.bb_ante,
    )


@dataclasses.dataclass
class TableRig:
    """One table: its engine, its dealer, the rest of the hand in progress."""

    engine: Engine
    dealer: TableDealer
    rng: random.Random
    pending: list[Event] = dataclasses.field(default_factory=list)
    script: Script | None = None  # the next hand, dealt to order
    clock: float = 0.0  # the table's own trace time
    offset: float = 0.0  # pending events' time shift onto the table clock

    def now(self) -> float:
        return self.clock


class PureRoom:
    """The tournament and its tables; `run()` plays until a winner (or a step limit)."""

    def __init__(
        self,
        structure: Structure,
        seed: int = 1,
        *,
        confirm_after: float = 3.0,
        n_seats: int = 10,
        auto_floor: bool = True,
        profile: str | None = None,
        latency: bool = False,
    ) -> None:
        self.structure = structure
        self.t = START
        self.tournament = Tournament(structure, seed)
        self.tables: dict[str, TableRig] = {}
        for i, name in enumerate(structure.tables):
            spec = EngineSpec(table=name, room="rig", seats=n_seats, profile=profile or "tda-2019")
            self.tables[name] = TableRig(
                Engine(spec),
                TableDealer(settle=1.0, chip_prefix=f"{name}c"),
                random.Random(seed * 100 + i),
            )
        self.confirm_after = confirm_after
        self.auto_floor = auto_floor
        self.inputs: list[dict[str, Any]] = []  # every input the tournament took (a journal)
        self.sent: list[RoomCommand] = []
        self.published: list[tuple[str, Message]] = []
        self.watchers: list[Callable[[PureRoom, str, dict[str, Any]], None]] = []
        self.refused: list[tuple[RoomCommand, dict[str, Any]]] = []
        self.hands = 0
        self.latency = latency
        self.outbox: list[RoomCommand] = []
        self.rng = random.Random(seed)

    # ------------------------------------------------------------------ plumbing

    def apply(self, inp: dict[str, Any]) -> list[RoomCommand]:
        """An input to the tournament; its commands reach the tables, and what the tables
        publish comes back, in order, as a broker would pass it, until all is quiet (with
        `latency`, commands wait for the next step: tables deal on meanwhile)."""
        out = self._take({**inp, "t": self.t})
        self._pump(out)
        return out

    def floor(self, kind: str, **fields: Any) -> list[RoomCommand]:
        return self.apply({"kind": kind, **fields})

    def _take(self, inp: dict[str, Any]) -> list[RoomCommand]:
        out = self.tournament.apply(inp)
        self.inputs.append(inp)
        return out

    def _pump(
        self, commands: list[RoomCommand], published: Sequence[tuple[str, Message]] = ()
    ) -> None:
        """Commands to the tables and messages to the room, one at a time, first in first
        out (every table's messages in the order it published them)."""
        queue: list[tuple[str, RoomCommand | Message]] = list(published)
        if self.latency:
            self.outbox += commands
        else:
            queue = [(c.table, c) for c in commands] + queue
        while queue:
            table, item = queue.pop(0)
            if isinstance(item, RoomCommand) and self.latency:
                self.outbox.append(item)
            elif isinstance(item, RoomCommand):
                self.sent.append(item)
                rig = self.tables[table]
                event = Command(rig.now(), item.name, item.payload())
                queue += [(table, m) for m in rig.engine.apply(event)]
            else:
                queue += [(c.table, c) for c in self._route(table, item)]

    def _route(self, table: str, message: Message) -> list[RoomCommand]:
        self.published.append((table, message))
        payload = message.payload
        for watch in self.watchers:
            watch(self, table, {"topic": message.topic, **payload})
        if message.topic == "events":
            fact = facts.from_event(table, payload, self.t)
        elif message.topic == "replies":
            fact = facts.from_reply(table, payload, self.t)
            if not payload.get("ok"):
                cmd = next((c for c in self.sent if c.id == payload.get("id")), None)
                if cmd is not None:
                    self.refused.append((cmd, payload))
        elif message.topic == "state":
            fact = facts.from_state(table, payload, self.t)
        else:
            fact = None
        if fact is None:
            return []
        return self._take(fact)

    def play_event(self, name: str, event: Event) -> None:
        rig = self.tables[name]
        self._pump([], [(name, m) for m in rig.engine.apply(event)])

    # ------------------------------------------------------------------ dealing

    def deal_step(self, name: str, dt: float) -> None:
        """The table's dealer: `dt` seconds of the table's time."""
        rig = self.tables[name]
        until = rig.clock + dt
        while True:
            engine = rig.engine
            if not rig.pending:
                if not can_start(engine):
                    rig.clock = until
                    return
                before = engine.hand_number
                if shuffler_starts(engine):
                    self.play_event(name, ButtonPress(round(rig.clock, 6), "shuffler"))
                    if engine.hand is None or engine.hand_number == before:
                        rig.clock = until
                        return
                    if rig.script is not None:
                        rig.pending = rig.dealer.play(scripted_plan(engine, rig.script))[1:]
                        rig.dealer.events.clear()
                        rig.script = None
                    else:
                        rig.pending = rest_of_hand(engine, rig.dealer, rig.rng)
                else:  # the first card lifted starts the hand (casinos-austria)
                    lifted = first_card(engine, rig.rng)
                    if lifted is None:
                        rig.clock = until
                        return
                    seat, card = lifted
                    if rig.script is not None:
                        card = lift_card(rig.script, seat, rig.rng)
                    self.play_event(name, TagIn(round(rig.clock, 6), f"seat{seat}", card=card))
                    if engine.hand is None or engine.hand_number == before:
                        for e in (
                            TagOut(rig.clock, f"seat{seat}", card=card),
                            TagIn(rig.clock, "muck", card=card),
                            TagOut(rig.clock, "muck", card=card),
                        ):
                            self.play_event(name, e)
                        rig.clock = until
                        return
                    if rig.script is not None:
                        plan = scripted_plan(engine, rig.script, (seat, card))
                        rig.pending = [
                            e
                            for e in rig.dealer.play(plan)[1:]
                            if not (
                                isinstance(e, TagIn)
                                and e.card == card
                                and e.antenna == f"seat{seat}"
                            )
                        ]
                        rig.dealer.events.clear()
                        rig.script = None
                    else:
                        rig.pending = rest_of_hand(engine, rig.dealer, rig.rng, (seat, card))
                if rig.pending:
                    rig.offset = rig.clock - rig.pending[0].t + 0.1
                self.hands += 1
                continue
            event = rig.pending[0]
            due = round(event.t + rig.offset, 6)
            if due > until:
                rig.clock = until
                return
            if waits_for_the_floor(engine, event):
                rig.clock = until
                rig.offset += dt  # the dealer waits: the hand's later events move on
                return
            rig.pending.pop(0)
            rig.clock = max(rig.clock, due)
            self.play_event(name, dataclasses.replace(event, t=rig.clock))
            if not rig.pending:  # the hand is over: the dealer gathers, shuffles
                rig.clock += 2.0

    def _flush(self) -> None:
        """With latency: the commands waiting reach their tables now, one table at a time
        (the tables' answers come back at once; their commands wait for the next step)."""
        waiting, self.outbox = self.outbox, []
        for cmd in waiting:
            self.sent.append(cmd)
            rig = self.tables[cmd.table]
            event = Command(rig.now(), cmd.name, cmd.payload())
            self._pump([], [(cmd.table, m) for m in rig.engine.apply(event)])

    def step(self, dt: float = 1.0) -> None:
        self.t += dt
        self.apply({"kind": "tick"})
        order = list(self.tables)
        self.rng.shuffle(order)
        for name in order:
            self.deal_step(name, dt)
            if self.latency and self.rng.random() < 0.5:
                self._flush()
        if self.latency:
            self._flush()
        if self.auto_floor:
            for p in self.tournament.open_proposals():
                if p.status == "open" and self.t - p.t >= self.confirm_after:
                    self.apply({"kind": "confirm", "proposal": p.id, "by": "Floor Bot"})

    def run(
        self, limit: float = 60 * 60 * 12, until: Callable[[PureRoom], bool] | None = None
    ) -> None:
        """Step until the tournament has a winner (or `until`), at most `limit` seconds."""
        end = self.t + limit
        while self.t < end and not self.tournament.finished:
            self.step()
            if until is not None and until(self):
                return

    # ------------------------------------------------------------------ checks

    def chips_on_tables(self) -> int:
        return sum(
            s.stack for r in self.tables.values() for s in r.engine.seats.values() if s.player
        )

    def events(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        return [
            (t, m.payload)
            for t, m in self.published
            if m.topic == "events" and m.payload.get("type") == kind
        ]

    def public_text(self) -> str:
        return "\n".join(
            json.dumps(m.payload) for _t, m in self.published if m.topic != "holecards"
        )
