"""The tournament as a state machine: every input (a table's fact, a floor action, the time)
gives the commands the tables are sent. Pure: no I/O, the time and the seed come in, so the
tournament's journal replays to the same state (room/tournament/journal.py).

What it does with the tables' facts:
- `hand_started` / `hand_completed`: who is in the hand with how many chips, every stack after
  every hand (the chip counts), who went out (a proposal to the floor), where the button and
  blinds are (who is big blind next, TDA 11-A);
- `room_hold` / `room_release` / `hands_face_down`: whether a table is held, and hand-for-hand's
  progress (RP-8).

What it proposes to the floor (confirmed on the monitor with the floor token): a player out,
a balancing move (11-A, 11-C; the houses' variants), a table to break (10), the final table
(RP-9; Casinos Austria art. 37, 40), hand-for-hand on and off (RP-8). What it does on its own:
the levels (23), breaks, halting short tables (11-D), the places (RP-8 A; Casinos Austria
art. 40).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.engine.positions import Positions
from kernel.errors import TableError
from room.tournament import seating
from room.tournament.clock import Clock
from room.tournament.house import BustSharing
from room.tournament.model import (
    DISQUALIFIED,
    OUT,
    REGISTERED,
    SEATED,
    Command,
    LogEntry,
    Op,
    Player,
    Proposal,
    Table,
)
from room.tournament.places import Out, Placed, place_group, prize_of, prize_pool, prizes
from room.tournament.structure import Structure

#: What a table's refusal says when the seat is in the hand (controller/engine/inputs).
IN_HAND = "is in the hand"
#: Facts a table's events give the tournament (the rest it does not need).
FACT_TYPES = frozenset(
    {"hand_started", "hand_completed", "room_hold", "room_release", "hands_face_down"}
)


class FloorError(TableError):
    """A floor action the tournament refuses (the message says why); nothing changed."""


@dataclass(slots=True)
class Group:
    """Players out together: one table's hand, or one hand-for-hand hand (all tables)."""

    key: str
    outs: list[Out] = field(default_factory=list)
    sharing: BustSharing | None = None
    left_before: int = 0
    closed: bool = False


@dataclass(slots=True)
class HandForHand:
    """RP-8: on, which hand-for-hand hand it is, when it was announced."""

    active: bool = False
    hand: int = 0
    announced: float | None = None
    ending: bool = False
    ran_off: bool = False  # the hand's run-off is taken (RP-8 B), its release not yet sent
    keep_going: bool = False  # the floor declined to end it at the money


class Tournament:
    """One event: its players, its tables as the room sees them, the clock, the floor's
    proposals, the operations under way. `apply(input)` returns the commands to send."""

    def __init__(self, structure: Structure, seed: int, *, ids: str = "trn") -> None:
        self.s = structure
        self.rules = structure.house
        self.rng = random.Random(seed)
        self.clock = Clock(structure.steps)
        self.players: dict[str, Player] = {}
        self.tables: dict[str, Table] = {n: Table(n) for n in structure.tables}
        self.proposals: dict[int, Proposal] = {}
        self.ops: dict[int, Op] = {}
        self.groups: list[Group] = []
        self.h4h = HandForHand()
        self.log: deque[LogEntry] = deque(maxlen=2000)
        self.t = 0.0
        self.version = 0
        self.seated = False  # the starting draw is made
        self.finished = False
        self.heads_up = False
        self.removed_chips = 0  # chips taken out of play (re-entry forfeits 8-B, disqualified)
        self.ids = ids
        self._serial = 0
        self._out: list[Command] = []
        self._by_id: dict[str, Command] = {}
        self._unknown_seats: set[tuple[str, int]] = set()
        for reg in structure.players:
            self.players[reg.player_id] = Player(reg.player_id, reg.name)

    # ------------------------------------------------------------------ inputs

    def apply(self, inp: dict[str, Any]) -> list[Command]:
        """Apply one input (journal record); the commands to send, in order. A floor action
        the tournament refuses raises FloorError and changes nothing."""
        kind = str(inp.get("kind"))
        handler = self._handlers().get(kind)
        if handler is None:
            raise FloorError(f"unknown input {kind!r}")
        self.t = max(self.t, float(inp.get("t", self.t)))
        handler(inp)
        self._settle()
        self.version += 1
        out, self._out = self._out, []
        return out

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], None]]:
        return {
            "tick": lambda _i: None,
            "event": self._on_event,
            "state": self._on_state,
            "reply": self._on_reply,
            "register": self._on_register,
            "reenter": self._on_reenter,
            "draw": self._on_draw,
            "start": self._on_start,
            "clock": self._on_clock,
            "confirm": self._on_confirm,
            "reject": self._on_reject,
            "hand_for_hand": self._on_hand_for_hand,
            "disqualify": self._on_disqualify,
            "retry": self._on_retry,
        }

    # ------------------------------------------------------------------ helpers

    def note(self, kind: str, text: str, rule: str | None = None, severity: str = "info") -> None:
        self.log.appendleft(LogEntry(self.t, kind, text, rule, severity))

    def _id(self) -> int:
        self._serial += 1
        return self._serial

    def send(self, table: str, name: str, op: int | None = None, **args: Any) -> Command:
        cmd = Command(table, name, args, f"{self.ids}-{self._id()}", op)
        self._out.append(cmd)
        self._by_id[cmd.id] = cmd
        if op is not None:
            self.ops[op].sent.add(cmd.id)
        return cmd

    def begin_after(self, seqs: dict[str, int]) -> None:
        """The tables' events up to these seqs came before the tournament: never its facts."""
        for name, seq in seqs.items():
            table = self.tables.get(name)
            if table is not None:
                table.floor = table.seq = max(table.floor, int(seq))

    def pending(self) -> list[Command]:
        """Commands sent and not answered yet (sent again after a restart: same ids)."""
        return list(self._by_id.values())

    def expects(self, request_id: str) -> bool:
        """Whether a reply with this id answers a command the tournament waits for."""
        return request_id in self._by_id

    @property
    def in_play(self) -> list[Player]:
        return [p for p in self.players.values() if p.in_play]

    @property
    def players_left(self) -> int:
        return len(self.in_play)

    @property
    def entries(self) -> int:
        return sum(p.entries for p in self.players.values())

    @property
    def active(self) -> list[Table]:
        return [t for t in self.tables.values() if t.active]

    def places_paid(self) -> int:
        return len(prizes(self.s.payouts, self.entries))

    def level_number(self) -> int:
        """The level in play, or during a break the level after it."""
        index, _ = self.clock.view(self.t)
        step = self.clock.steps[index]
        if step.level is not None:
            return step.level.number
        nxt = self.clock.next_level_index(index)
        level = self.clock.steps[nxt].level if nxt is not None else None
        return level.number if level is not None else step.after_level

    def late_open(self) -> bool:
        """Late registration and re-entries are open (TDA 8): before the start, and up to
        the end of level `late_registration_levels`."""
        if not self.clock.started:
            return True
        index, _ = self.clock.view(self.t)
        step = self.clock.steps[index]
        if step.is_break:  # a break after the last level of late registration closes it
            return step.after_level < self.s.late_registration_levels
        return step.after_level <= self.s.late_registration_levels

    def seats_of(self, table: Table) -> seating.TableSeats:
        """The table for the seat rules: players still in, positions, seats used, seats
        still taken by players out of play (until the table has unseated them)."""
        seats = {s: pid for s, pid in table.seats.items() if self.players[pid].status == SEATED}
        blocked = frozenset(s for s in table.seats if s not in seats)
        return seating.TableSeats(
            table.id, seats, table.positions, self._n_seats(table), table.button, blocked
        )

    def _n_seats(self, table: Table) -> int:
        if table.id == self.s.final_table and self.is_final():
            return max(self.s.final_table_size, self.s.seats_per_table)
        return self.s.seats_per_table

    def is_final(self) -> bool:
        return len(self.active) == 1 and self.seated

    # ------------------------------------------------------------------ table facts

    def _on_event(self, inp: dict[str, Any]) -> None:
        table = self.tables.get(str(inp.get("table")))
        if table is None:
            return
        seq = inp.get("seq")
        if isinstance(seq, int):
            if seq <= table.floor or seq in table.seen:
                return  # taken already (a copy sent again)
            table.seen.add(seq)
            if len(table.seen) > 4096:
                table.seen = {s for s in table.seen if s > seq - 2048}
            table.seq = max(table.seq, seq)
        kind = inp.get("type")
        if kind == "hand_started":
            self._hand_started(table, inp)
        elif kind == "hand_completed":
            self._hand_completed(table, inp)
        elif kind == "room_hold":
            table.hold_set = True
            if table.asked == "hold":
                table.asked = None
            if (
                inp.get("hand_for_hand")
                and self.h4h.active
                and inp.get("hand") is None
                and table.h4h in ("", "playing", "released")
            ):
                table.h4h = "done"
        elif kind == "room_release":
            table.hold_set = False
            if table.asked == "release":
                table.asked = None
            if inp.get("instructed") and table.h4h == "face_down":
                table.h4h = "playing"
        elif kind == "hands_face_down" and self.h4h.active:
            table.h4h = "face_down"
            self.note(
                "face_down",
                f"table {table.id}: all-in and called, cards face down until the floor instructs",
                "RP-8F",
            )

    def _hand_started(self, table: Table, inp: dict[str, Any]) -> None:
        hand = int(inp.get("hand") or 0)
        button = int(inp.get("button") or 0)
        sb = inp.get("small_blind_seat")
        bb = int(inp.get("big_blind_seat") or 0)
        prev = table.positions
        # A dead small blind sits where the last big blind was (rule 32).
        dead_sb = prev.big_blind if prev is not None else button
        sb_position = int(sb) if sb is not None else dead_sb
        table.positions = Positions(
            button=button,
            sb_position=sb_position,
            small_blind=int(sb) if sb is not None else None,
            big_blind=bb,
            heads_up=sb is not None and int(sb) == button,
        )
        table.hand = hand
        for seat in inp.get("seats") or []:
            pid = table.seats.get(int(seat))
            if pid is not None:
                self.players[pid].hand_start = self.players[pid].stack
        if self.h4h.active and table.h4h in ("released", "done", ""):
            table.h4h = "playing"

    def _hand_completed(self, table: Table, inp: dict[str, Any]) -> None:
        hand = int(inp.get("hand") or 0)
        stacks = inp.get("stacks") or {}
        if hand < table.last_hand:
            return  # an old hand's copy, received late: its stacks are history
        if table.hand == hand:
            table.hand = None
        table.last_hand = hand
        outs: list[Out] = []
        for key, chips in sorted(stacks.items(), key=lambda kv: int(kv[0])):
            seat = int(key)
            pid = table.seats.get(seat)
            if pid is None:
                if (table.id, seat) not in self._unknown_seats:
                    self._unknown_seats.add((table.id, seat))
                    self.note(
                        "unknown_seat",
                        f"table {table.id} seat {seat} has a player the tournament did not "
                        "seat: seat players through the tournament",
                        severity="warning",
                    )
                continue
            player = self.players[pid]
            player.stack = int(chips)
            if player.stack == 0 and player.status == SEATED:
                outs.append(Out(pid, table.id, hand, player.hand_start))
        for o in outs:
            self._went_out(self.players[o.player], table, hand)
        if self.h4h.active and table.active:
            table.h4h = "done"
            table.reasons["h4h"] = "hand for hand"
            self._group(f"h4h-{self.h4h.hand}", self.rules.bust_sharing).outs.extend(outs)
        elif outs:
            group = self._group(f"{table.id}-{hand}", None)
            group.outs.extend(outs)
            self._close_group(group)
        waiting, table.waiting = table.waiting, []
        for cmd in waiting:  # refused while the seat was in the hand: now again
            if cmd.op is not None and cmd.op in self.ops:
                self.ops[cmd.op].sent.discard(f"wait:{cmd.id}")
            self.send(cmd.table, cmd.name, cmd.op, **cmd.args)

    def _went_out(self, player: Player, table: Table, hand: int) -> None:
        player.status = OUT
        player.out_hand = (table.id, hand)
        player.out_at = self.t
        self._propose(
            "out",
            f"out:{player.id}",
            f"{player.name} is out: no chips after hand {hand} at table {table.id} "
            f"(seat {player.seat}); confirm to free the seat",
            self.rules.bust_sharing_rule if self.h4h.active else "",
            player=player.id,
            table=table.id,
            seat=player.seat,
            hand=hand,
            start_chips=player.hand_start,
        )

    def _on_state(self, inp: dict[str, Any]) -> None:
        """The retained `state`: heals a missed `hand_completed` or hold event."""
        table = self.tables.get(str(inp.get("table")))
        if table is None:
            return
        seq = inp.get("seq")
        if not isinstance(seq, int) or seq < table.seq:
            return  # older than an event taken already
        if inp.get("hand") is None and table.hand is not None:
            table.hand = None
        held = bool(inp.get("held_by_room"))
        if held != table.hold_set and table.asked is None:
            table.hold_set = held

    def _on_reply(self, inp: dict[str, Any]) -> None:
        cmd = self._by_id.pop(str(inp.get("id")), None)
        if cmd is None:
            return
        table = self.tables[cmd.table]
        ok = bool(inp.get("ok"))
        error = str(inp.get("error") or "")
        op = self.ops.get(cmd.op) if cmd.op is not None else None
        if op is not None:
            op.sent.discard(cmd.id)
        if table.asked == cmd.name:
            table.asked = None
        if cmd.name == "hold" and ok and table.asked is None:
            table.hold_set = True
        elif cmd.name == "release" and (ok or "not held" in error) and table.asked is None:
            table.hold_set = False
        elif cmd.name == "level":
            table.level_asked = 0
        if not ok and cmd.name == "unseat" and error.endswith("is empty"):
            ok = True  # unseated already (a player out, then a table broken): as wanted
        if ok:
            self._applied(cmd)
            return
        if IN_HAND in error and cmd.name in ("unseat", "stack"):
            table.waiting.append(cmd)  # sent again once the hand is over
            if op is not None:
                op.sent.add(f"wait:{cmd.id}")
            return
        if cmd.name == "release" and "not held" in error:
            return
        self.note(
            "refused",
            f"table {cmd.table} refused {cmd.name} {cmd.args}: {error}",
            severity="critical",
        )
        if op is not None:
            op.error = f"table {cmd.table} refused {cmd.name}: {error}"

    def _applied(self, cmd: Command) -> None:
        """A command the table applied. Seats taken and left by moves, breaks and draws are
        the room's at once (it sent them in order); the seat of a player out of play is
        freed only once the table has unseated him."""
        table = self.tables[cmd.table]
        if cmd.name == "unseat":
            seat = int(cmd.args["seat"])
            pid = table.seats.get(seat)
            if pid is None or pid != cmd.args.get("_player"):
                return
            player = self.players[pid]
            if cmd.args.get("_forfeit") and player.status == SEATED:
                del table.seats[seat]
                self.removed_chips += player.stack
                self.note("forfeit", f"{player.stack} chips of {player.name} out of play", "8-B")
                player.table, player.seat, player.stack = None, None, 0
                self._reentry(player)
                return
            if player.status == SEATED and (player.table, player.seat) == (table.id, seat):
                return
            del table.seats[seat]
            if (player.table, player.seat) == (table.id, seat):
                player.table, player.seat = None, None
        elif cmd.name == "level":
            table.level_sent = int(cmd.args.get("level", 0))

    # ------------------------------------------------------------------ the floor

    def _on_register(self, inp: dict[str, Any]) -> None:
        name = str(inp.get("name") or "").strip()
        if not name:
            raise FloorError("a player needs a name")
        pid = str(inp.get("player_id") or f"P{len(self.players) + 1:04d}")
        if pid in self.players:
            raise FloorError(f"player id {pid!r} is registered already (re-entry: reenter)")
        if not self.late_open():
            if not self.s.late_registration_levels:
                raise FloorError("this event has no late registration (late_registration_levels)")
            raise FloorError(
                f"late registration closed at the end of level {self.s.late_registration_levels}"
                f" ({self.rules.late_rule})"
            )
        self.players[pid] = Player(pid, name)
        self.note("registered", f"{name} ({pid}) registered", self.rules.late_rule)
        if self.seated:
            self._seat_late(self.players[pid])

    def _on_reenter(self, inp: dict[str, Any]) -> None:
        pid = str(inp.get("player_id"))
        player = self.players.get(pid)
        if player is None:
            raise FloorError(f"no player {pid!r}")
        if not self.late_open():
            raise FloorError("re-entries closed with late registration (TDA 8)")
        if player.entries > self.s.reentries:
            raise FloorError(f"{player.name} has used every re-entry ({self.s.reentries} allowed)")
        forfeit = bool(inp.get("forfeit"))
        if player.status == SEATED and not forfeit:
            raise FloorError(
                f"{player.name} still has chips: a re-entry forfeits them (forfeit: true, 8-B)"
            )
        if player.status == OUT and not player.out_confirmed:
            raise FloorError(f"confirm {player.name} out first")
        if player.status == DISQUALIFIED:
            raise FloorError(f"{player.name} is disqualified")
        if player.status == SEATED and player.table is not None and player.seat is not None:
            # 8-B: the chips leave play when the table unseats the player (after a hand in
            # progress); the new entry is seated then.
            self.note(
                "forfeit",
                f"{player.name} re-enters: the chips left are removed from play once the "
                f"table unseats him",
                "8-B",
            )
            self.send(player.table, "unseat", seat=player.seat, _player=pid, _forfeit=True)
            return
        self._reentry(player)

    def _reentry(self, player: Player) -> None:
        player.entries += 1
        player.status = REGISTERED
        player.place = None
        player.out_hand = None
        player.out_confirmed = False
        self._close_proposal(f"out:{player.id}", "done")
        self.note("reentry", f"{player.name} re-enters (entry {player.entries})", "8-A")
        if self.seated:
            self._seat_late(player)

    def _seat_late(self, player: Player) -> None:
        """TDA 8-A: a full stack, a seat drawn from the seats then open for new players (the
        tables with the fewest players), dealt in except between the button and the small
        blind (the table sees to that)."""
        tables = [self.seats_of(t) for t in self.active]
        open_tables = [t for t in tables if t.empty()]
        if not open_tables:
            spare = next((t for t in self.tables.values() if not t.active), None)
            if spare is None:
                raise FloorError("no seat left at any of the event's tables")
            spare.active = True
            self.note("table_opened", f"table {spare.id} opened for new players")
            open_tables = [self.seats_of(spare)]
        fewest = min(t.count for t in open_tables)
        pool = [(t.table, s) for t in open_tables if t.count == fewest for s in t.empty()]
        table, seat = self.rng.choice(pool)
        self._seat(player, table, seat, self.s.starting_stack, None, fresh=True)
        self.note(
            "seat_drawn",
            f"{player.name} draws table {table} seat {seat}",
            self.rules.late_rule,
        )

    def _seat(
        self, player: Player, table: str, seat: int, stack: int, op: int | None, *, fresh: bool
    ) -> None:
        """Seat a player (`fresh`: a new stack, so no change since the level began)."""
        player.status = SEATED
        player.stack = stack
        if fresh:
            player.level_stack = stack
            player.hand_start = stack
        player.table, player.seat = table, seat
        self.tables[table].seats[seat] = player.id  # the seat is taken from now on
        self.send(
            table, "seat", op, seat=seat, player=player.name, stack=stack, player_id=player.id
        )

    def _on_draw(self, _inp: dict[str, Any]) -> None:
        """The starting seat draw (rule 7): tables held until the clock starts."""
        if self.seated:
            raise FloorError("the seats are drawn already")
        players = [p for p in self.players.values() if p.status == REGISTERED]
        if len(players) < 2:
            raise FloorError("a tournament needs at least two registered players")
        names = seating.initial_tables(len(players), self.s.tables, self.s.seats_per_table)
        if len(names) * self.s.seats_per_table < len(players):
            raise FloorError(
                f"{len(players)} players do not fit at the event's {len(self.s.tables)} tables"
            )
        for name in names:  # held first: no hand before the clock starts
            table = self.tables[name]
            table.active = True
            table.reasons["start"] = "not started"
            self.send(name, "hold", reason="not started")
            table.asked = "hold"
        tables = [self.seats_of(self.tables[n]) for n in names]
        order = [p.id for p in players]
        self.rng.shuffle(order)
        draw = seating.draw_seats(
            order, tables, self.rules, self.rng, two_step=False, rule=self.rules.button_rule
        )
        for pid, (name, seat) in sorted(draw.seats.items()):
            self._seat(self.players[pid], name, seat, self.s.starting_stack, None, fresh=True)
        for name, seat in seating.button_draws(
            [self.seats_of(self.tables[n]) for n in names], self.rules, self.rng
        ).items():
            self.tables[name].button = seat
            self.send(name, "button", seat=seat)
        self.seated = True
        self.note(
            "seats_drawn",
            f"{len(players)} players drawn to {len(names)} tables",
            self.rules.button_rule,
        )

    def _on_start(self, inp: dict[str, Any]) -> None:
        if self.clock.started:
            raise FloorError("the clock is running already (pause / resume)")
        if not self.seated:
            self._on_draw(inp)
        self.clock.start(self.t)
        for table in self.tables.values():
            table.reasons.pop("start", None)
        for p in self.in_play:
            p.level_stack = p.stack
        self.note("started", f"{self.s.name}: shuffle up and deal", "23")

    def _on_clock(self, inp: dict[str, Any]) -> None:
        action = inp.get("action")
        if not self.clock.started and action != "level":
            raise FloorError("the clock has not started")
        if action == "pause":
            self._entered(self.clock.pause(self.t))
            self.note("clock", "clock paused")
        elif action == "resume":
            self.clock.resume(self.t)
            self.note("clock", "clock running")
        elif action == "add":
            seconds = float(inp.get("seconds") or 0)
            if not -3600 <= seconds <= 3600:
                raise FloorError("add between -3600 and 3600 seconds at once")
            self._entered(self.clock.add(self.t, seconds))
            self.note("clock", f"clock {'+' if seconds >= 0 else ''}{seconds:g} s")
        elif action == "level":
            number = int(inp.get("level") or 0)
            steps = self.clock.steps
            index = next(
                (i for i, st in enumerate(steps) if st.level and st.level.number == number), None
            )
            if index is None:
                raise FloorError(f"no level {number}")
            self._entered(self.clock.goto(self.t, index))
            self.note("clock", f"clock set to level {number}")
        else:
            raise FloorError("clock action: pause, resume, add or level")

    def _on_hand_for_hand(self, inp: dict[str, Any]) -> None:
        on = bool(inp.get("on", True))
        if on:
            self._start_h4h()
        else:
            self._end_h4h()

    def _on_disqualify(self, inp: dict[str, Any]) -> None:
        pid = str(inp.get("player_id"))
        player = self.players.get(pid)
        if player is None or player.status != SEATED:
            raise FloorError(f"no player {pid!r} in play")
        self.removed_chips += player.stack
        if player.table is not None and player.seat is not None:
            self.send(player.table, "unseat", seat=player.seat, _player=pid)
        player.status = DISQUALIFIED
        self.note(
            "disqualified",
            f"{player.name} disqualified; {player.stack} chips removed from play",
            self.rules.disqualify_rule,
            "warning",
        )
        player.stack = 0

    def _on_retry(self, inp: dict[str, Any]) -> None:
        op = self.ops.get(int(inp.get("op") or 0))
        if op is None or op.error is None:
            raise FloorError("no failed operation with that id")
        op.error = None
        op.stage = "hold"
        op.sent.clear()

    # ------------------------------------------------------------------ proposals

    def _propose(self, kind: str, key: str, text: str, rule: str, **details: Any) -> Proposal:
        for p in self.proposals.values():
            if p.key == key and p.status == "open":
                p.text, p.details, p.rule = text, details, rule
                return p
        proposal = Proposal(self._id(), kind, key, text, rule, self.t, dict(details))
        self.proposals[proposal.id] = proposal
        self.note("proposed", text, rule)
        return proposal

    def _close_proposal(self, key: str, status: str) -> None:
        for p in self.proposals.values():
            if p.key == key and p.status == "open":
                p.status, p.decided_at = status, self.t

    def open_proposals(self) -> list[Proposal]:
        return [p for p in self.proposals.values() if p.status == "open"]

    def _on_confirm(self, inp: dict[str, Any]) -> None:
        proposal = self.proposals.get(int(inp.get("proposal") or 0))
        if proposal is None or proposal.status != "open":
            raise FloorError("no open proposal with that id")
        by = str(inp.get("by") or "floor")
        chips = inp.get("chips")
        if chips is not None and (isinstance(chips, bool) or not isinstance(chips, int)):
            raise FloorError("chips: the chips the floor counted, an integer")
        proposal.status, proposal.by, proposal.decided_at = "confirmed", by, self.t
        d = proposal.details
        if proposal.kind == "out":
            self._confirm_out(self.players[d["player"]], by)
            proposal.status = "done"
        elif proposal.kind == "move":
            self._new_op(
                "move",
                proposal,
                [d["source"]],
                source=d["source"],
                target=d["target"],
                chips=chips,
                accept_count=bool(inp.get("accept_count")),
            )
        elif proposal.kind == "break":
            self._new_op("break", proposal, [d["table"]], table=d["table"])
        elif proposal.kind == "final":
            self._new_op("final", proposal, [t.id for t in self.active])
        elif proposal.kind == "hand_for_hand":
            self._start_h4h()
            proposal.status = "done"
        elif proposal.kind == "end_hand_for_hand":
            self._end_h4h()
            proposal.status = "done"
        self.note("confirmed", f"{by} confirmed: {proposal.text}", proposal.rule)

    def _on_reject(self, inp: dict[str, Any]) -> None:
        proposal = self.proposals.get(int(inp.get("proposal") or 0))
        if proposal is None or proposal.status != "open":
            raise FloorError("no open proposal with that id")
        by = str(inp.get("by") or "floor")
        reason = str(inp.get("reason") or "")
        if proposal.kind == "out":
            chips = inp.get("chips")
            if isinstance(chips, bool) or not isinstance(chips, int) or chips <= 0:
                raise FloorError(
                    "a player is kept in only with the chips the floor counted (chips > 0)"
                )
            self._not_out(self.players[proposal.details["player"]], chips)
        if proposal.kind == "end_hand_for_hand":
            self.h4h.keep_going = True  # the floor ends it (hand_for_hand off) when it will
        proposal.status, proposal.by, proposal.decided_at = "rejected", by, self.t
        proposal.note = reason or None
        self.note(
            "rejected", f"{by} rejected: {proposal.text}" + (f" ({reason})" if reason else "")
        )

    def _confirm_out(self, player: Player, by: str) -> None:
        player.out_confirmed = True
        table = self.tables.get(player.table or "")
        if (
            table is not None
            and player.seat is not None
            and table.seats.get(player.seat) == player.id
        ):
            self.send(table.id, "unseat", seat=player.seat, _player=player.id)
        self.note("out_confirmed", f"{player.name} out, confirmed by {by}")

    def _not_out(self, player: Player, chips: int) -> None:
        """The floor found chips: the player is still in, with the count as the stack."""
        group = next((g for g in self.groups if any(o.player == player.id for o in g.outs)), None)
        if group is not None:
            group.outs = [o for o in group.outs if o.player != player.id]
            later = False
            for g in self.groups:
                if later:
                    g.left_before += 1
                later = later or g is group
        player.status = SEATED
        player.place = None
        player.out_hand = None
        player.stack = chips
        if player.table is not None and player.seat is not None:
            self.send(player.table, "stack", seat=player.seat, stack=chips)
        self._replace()

    def _new_op(self, kind: str, proposal: Proposal | None, tables: list[str], **d: Any) -> Op:
        op = Op(self._id(), kind, proposal.id if proposal else None, tables, details=dict(d))
        self.ops[op.id] = op
        return op

    # ------------------------------------------------------------------ places

    def _group(self, key: str, sharing: BustSharing | None) -> Group:
        for g in self.groups:
            if g.key == key:
                return g
        group = Group(key, sharing=sharing)
        self.groups.append(group)
        return group

    def _close_group(self, group: Group) -> None:
        """The players out together get their places (left before them: those in now and
        them)."""
        if group.closed:
            return
        group.closed = True
        group.left_before = self.players_left + len(group.outs)
        self._replace()
        if group.outs:
            names = ", ".join(
                f"{self.players[p.player].name} {self.place_text(self.players[p.player])}"
                for p in place_group(group.outs, group.left_before, group.sharing)
            )
            rule = self.rules.bust_sharing_rule if group.sharing else None
            self.note("places", f"out: {names}", rule)
        self._winner()

    def _replace(self) -> None:
        """Every closed group's places again (a bust the floor took back moves the others);
        a player who re-entered has no place for the entry before."""
        for g in self.groups:
            if not g.closed:
                continue
            for placed in place_group(g.outs, g.left_before, g.sharing):
                player = self.players[placed.player]
                if player.status == OUT:
                    player.place = (placed.best, placed.worst)

    def place_text(self, player: Player) -> str:
        if player.place is None:
            return ""
        best, worst = player.place
        return f"{best}" if best == worst else f"{best}-{worst} (shared)"

    def prize(self, player: Player) -> int:
        if player.place is None:
            return 0
        best, worst = player.place
        sharing = sum(1 for p in self.players.values() if p.place == player.place)
        paid = prizes(self.s.payouts, self.entries)
        return prize_of(paid, Placed(player.id, best, worst), sharing, self.s.payouts.unit)

    def _winner(self) -> None:
        left = self.in_play
        if self.finished or not self.clock.started or len(left) != 1:
            return
        winner = left[0]
        winner.place = (1, 1)
        self.finished = True
        self.clock.pause(self.t)
        self.note("winner", f"{winner.name} wins {self.s.name}")

    # ------------------------------------------------------------------ hand-for-hand

    def _start_h4h(self) -> None:
        if self.h4h.active:
            raise FloorError("hand-for-hand is on already")
        if len(self.active) < 2:
            raise FloorError("hand-for-hand needs two tables or more")
        self.h4h = HandForHand(active=True, hand=1, announced=self.t)
        self._entered(self.clock.freeze(self.t))
        for table in self.active:
            table.h4h = "playing" if table.hand is not None else "done"
            table.reasons["h4h"] = "hand for hand"
            table.h4h_mode = True
            self.send(table.id, "hold", reason="hand for hand", hand_for_hand=True)
            table.asked = "hold"
        self._close_proposal("h4h", "done")
        self.note(
            "hand_for_hand",
            "hand-for-hand: finish the current hand, then hold up; the clock runs "
            f"{self.s.hand_for_hand_seconds / 60:g} min off each hand",
            "RP-8",
        )

    def _end_h4h(self) -> None:
        if not self.h4h.active:
            raise FloorError("hand-for-hand is not on")
        self._close_h4h_hand()
        self.h4h.active = False
        self.clock.unfreeze(self.t)
        for table in self.tables.values():
            table.reasons.pop("h4h", None)
            table.h4h = ""
            if table.h4h_mode:
                table.h4h_mode = False
                if table.reasons:
                    self.send(table.id, "hold", reason=self._why(table), hand_for_hand=False)
                    table.asked = "hold"
                else:
                    self.send(table.id, "release", hand_for_hand=False)
                    table.asked = "release"
        self._close_proposal("h4h-end", "done")
        self.note("hand_for_hand", "hand-for-hand over: the clock runs again", "RP-8")

    def _close_h4h_hand(self) -> None:
        group = self._group(f"h4h-{self.h4h.hand}", self.rules.bust_sharing)
        self._close_group(group)

    def _h4h_progress(self) -> None:
        if not self.h4h.active:
            return
        playing = [t for t in self.active if len(self.seats_of(t).seats) >= 2]
        if len(playing) < 2 or self.finished:
            if not self.h4h.ending:
                self.h4h.ending = True
                self._end_h4h()
            return
        states = {t.h4h for t in playing}
        if states <= {"done", "face_down"} and "face_down" in states:
            # RP-8 F: every other table is done: the floor instructs the waiting ones.
            for t in playing:
                if t.h4h == "face_down":
                    self.send(t.id, "release")
                    t.h4h = "instructed"
                    self.note("instructed", f"table {t.id}: table the cards, deal on", "RP-8F")
            return
        if states != {"done"} or any(t.asked for t in playing):
            return
        if any(op.stage != "done" and op.error is None for op in self.ops.values()):
            return  # moves and breaks first, while every table is held
        self._close_h4h_hand()
        if self.finished:
            return
        if self.players_left <= self.places_paid() and not self.h4h.keep_going:
            self._propose(
                "end_hand_for_hand",
                "h4h-end",
                f"the money is reached ({self.players_left} left, {self.places_paid()} paid): "
                "end hand-for-hand",
                "RP-8",
            )
        if any(p.key == "h4h-end" and p.status == "open" for p in self.proposals.values()):
            return
        if not self.h4h.ran_off:  # RP-8 B, C: each hand runs the same time off the clock
            self._entered(self.clock.run_off(self.t, self.s.hand_for_hand_seconds))
            self.h4h.ran_off = True
        if self.clock.step.is_break:
            return  # the break holds the tables; hands resume after it
        self.h4h.hand += 1
        self.h4h.ran_off = False
        for t in playing:
            t.reasons.pop("h4h", None)
            t.h4h = "released"

    # ------------------------------------------------------------------ operations

    def _involves(self, op: Op) -> set[str]:
        """The tables an operation holds or seats players at."""
        return {*op.tables, *(t for t in [op.details.get("target")] if isinstance(t, str))}

    def _cancel(self, op: Op, why: str) -> None:
        """A confirmed operation the tables no longer need: dropped, its proposal withdrawn
        (the floor gets a new one if one is still needed)."""
        op.stage = "done"
        op.error = None
        for name in op.tables:
            self.tables[name].reasons.pop(f"op{op.id}", None)
        if op.proposal is not None:
            proposal = self.proposals[op.proposal]
            proposal.status, proposal.note = "withdrawn", why
        self.note("cancelled", why, severity="warning")

    def _run_ops(self) -> None:
        for op in list(self.ops.values()):
            if op.stage == "done" or op.error is not None:
                continue
            if op.stage == "hold":
                for name in op.tables:
                    self.tables[name].reasons[f"op{op.id}"] = op.kind
                if all(self.tables[n].held_now for n in op.tables):
                    self._carry_out(op)
            elif op.stage == "sent" and not op.sent:
                self._finish(op)

    def _carry_out(self, op: Op) -> None:
        if op.kind == "move":
            self._do_move(op)
        elif op.kind == "break":
            self._do_break(op)
        elif op.kind == "final":
            self._do_final(op)
        if op.stage == "hold" and op.error is None:
            op.stage = "sent"
            if not op.sent:
                self._finish(op)

    def _finish(self, op: Op) -> None:
        op.stage = "done"
        for name in op.tables:
            self.tables[name].reasons.pop(f"op{op.id}", None)
        if op.proposal is not None:
            self.proposals[op.proposal].status = "done"
        if op.kind in ("break", "final"):
            for name in op.details.get("closed", []):
                table = self.tables[name]
                table.active = False
                table.reasons.clear()
                table.h4h = ""
        self.note("done", f"{op.kind} done", op.details.get("rule"))

    def _fail(self, op: Op, why: str) -> None:
        op.error = why
        for name in op.tables:
            self.tables[name].reasons.pop(f"op{op.id}", None)
        if op.proposal is not None:
            proposal = self.proposals[op.proposal]
            proposal.status, proposal.note = "open", why
        self.note("blocked", why, severity="critical")

    def _do_move(self, op: Op) -> None:
        d = op.details
        source, target = self.tables[d["source"]], self.tables[d["target"]]
        have, need = self.seats_of(source).count, self.seats_of(target).count
        if not (source.active and target.active) or have - need < 2:
            self._cancel(op, f"move from {source.id} to {target.id} no longer balances the tables")
            return
        seat = seating.mover(self.seats_of(source), self.rules)
        if seat is None:
            self._fail(op, f"table {source.id}: no player to move")
            return
        player = self.players[source.seats[seat]]
        chips = d.get("chips")
        if chips is not None and chips != player.stack and not d.get("accept_count"):
            self._fail(
                op,
                f"{player.name}'s chips counted {chips} but table {source.id} has "
                f"{player.stack}: recount, or confirm the count (accept_count)",
            )
            return
        if chips is not None and chips != player.stack:
            self.note(
                "recount",
                f"{player.name}: the floor's count {chips} replaces the table's {player.stack}",
                "1",
                "warning",
            )
            player.stack = int(chips)
        where = seating.worst_seat(self.seats_of(target), self.rng)
        if where is None:  # seats still taken by players out: proposed again once free
            self._cancel(op, f"table {target.id} has no empty seat yet")
            return
        self.send(source.id, "unseat", op.id, seat=seat, _player=player.id)
        del source.seats[seat]
        player.moves += 1
        self._seat(player, target.id, where, player.stack, op.id, fresh=False)
        d.update(player=player.id, seat_from=seat, seat_to=where, moved_chips=player.stack)
        d["rule"] = self.rules.mover_rule
        self.note(
            "move",
            f"{player.name} moves from table {source.id} seat {seat} to table {target.id} "
            f"seat {where} with {player.stack} chips",
            self.rules.mover_rule,
        )

    def _do_break(self, op: Op) -> None:
        table = self.tables[op.details["table"]]
        broken = self.seats_of(table)
        others = [
            self.seats_of(self.tables[n])
            for n in reversed(self.s.break_order)
            if self.tables[n].active and n != table.id
        ]
        players = [broken.seats[s] for s in sorted(broken.seats)]
        draw = seating.draw_seats(
            players, others, self.rules, self.rng, two_step=True, rule=self.rules.break_rule
        )
        if len(draw.seats) < len(players):  # seats of players out still taken: later
            self._cancel(op, f"not enough empty seats yet for table {table.id}'s players")
            return
        for seat, pid in sorted(broken.seats.items()):
            self.send(table.id, "unseat", op.id, seat=seat, _player=pid)
            del table.seats[seat]
        for pid in players:
            name, seat = draw.seats[pid]
            player = self.players[pid]
            player.moves += 1
            self._seat(player, name, seat, player.stack, op.id, fresh=False)
        op.details.update(draw=draw.public(), closed=[table.id], rule=self.rules.break_rule)
        self.note(
            "break",
            f"table {table.id} broken: "
            + ", ".join(
                f"{self.players[p].name} to {t} seat {s}" for p, (t, s) in draw.seats.items()
            ),
            self.rules.break_rule,
        )

    def _do_final(self, op: Op) -> None:
        host = self.tables[self.s.final_table]
        order = [n for n in self.s.break_order if self.tables[n].active]
        tables = [self.seats_of(self.tables[n]) for n in order]
        draw, button = seating.final_table_draw(
            tables, self.s.final_table_size, host.id, self.rules, self.rng
        )
        players = [p for t in tables for p in t.seats.values()]
        if len(draw.seats) < len(players):
            self._fail(op, f"{len(players)} players do not fit the final table")
            return
        for t in tables:
            table = self.tables[t.table]
            for seat, pid in sorted(table.seats.items()):
                self.send(table.id, "unseat", op.id, seat=seat, _player=pid)
            table.seats.clear()
        host.active = True
        host.positions = None
        for pid in players:
            name, seat = draw.seats[pid]
            self.players[pid].moves += 1
            self._seat(self.players[pid], name, seat, self.players[pid].stack, op.id, fresh=False)
        host.button = button
        self.send(host.id, "button", op.id, seat=button)
        op.tables = sorted({*op.tables, host.id})
        op.details.update(
            draw=draw.public(),
            button=button,
            closed=[n for n in order if n != host.id],
            rule=self.rules.final_draw_rule,
        )
        self.note(
            "final",
            f"final table at {host.id}: "
            + ", ".join(f"seat {s} {self.players[p].name}" for p, (_t, s) in draw.seats.items())
            + f"; button on seat {button}",
            self.rules.final_draw_rule,
        )

    # ------------------------------------------------------------------ settling

    def _settle(self) -> None:
        for _ in range(8):
            before = (len(self._out), self._shape())
            self._entered(self.clock.advance(self.t) if self.clock.started else [])
            self._heads_up_time()
            self._h4h_progress()
            self._run_ops()
            self._proposals()
            self._halts()
            self._holds_and_levels()
            if (len(self._out), self._shape()) == before:
                break

    def _shape(self) -> tuple[Any, ...]:
        return (
            tuple((t.id, t.active, tuple(sorted(t.reasons)), t.h4h) for t in self.tables.values()),
            tuple((o.id, o.stage) for o in self.ops.values()),
            tuple((p.id, p.status) for p in self.proposals.values()),
        )

    def _entered(self, steps: list[int]) -> None:
        """Steps the clock entered: a level (pushed by `_holds_and_levels`), a break (every
        table held after its hand), the end of a break."""
        for index in steps:
            step = self.clock.steps[index]
            if step.is_break:
                for t in self.active:
                    t.reasons["break"] = "break"
                self.note("break", f"break after level {step.after_level}: tables hold")
            else:
                assert step.level is not None
                for t in self.tables.values():
                    t.reasons.pop("break", None)
                for p in self.in_play:
                    p.level_stack = p.stack
                lv = step.level
                ante = f", ante {lv.ante}" if lv.ante else ""
                text = f"level {lv.number}: {lv.small_blind}/{lv.big_blind}{ante}"
                self.note("level", text, "23")

    def _heads_up_time(self) -> None:
        if self.heads_up or not self.clock.started or self.players_left != 2:
            return
        self.heads_up = True
        if self.rules.heads_up_time_factor != 1.0:
            self.clock.speed_up(self.t, self.rules.heads_up_time_factor)
            self.note("clock", "heads-up: each level lasts half as long", self.rules.heads_up_rule)

    def _proposals(self) -> None:
        """What the floor is asked to confirm now; proposals no longer wanted are withdrawn."""
        wanted: set[str] = {p.key for p in self.proposals.values() if p.kind == "out"}
        if self.h4h.active:
            wanted.add("h4h-end")
        if self.clock.started and not self.finished:
            busy = {
                n
                for op in self.ops.values()
                if op.stage != "done" and op.error is None
                for n in self._involves(op)
            }
            tables = [self.seats_of(t) for t in self.active]
            left = self.players_left
            final = self.s.final_table_size
            if left <= final and len(self.active) >= 2:
                if not busy:
                    self._propose(
                        "final",
                        "final",
                        f"{left} players left: the final table at {self.s.final_table}",
                        self.rules.final_table_rule,
                    )
                wanted.add("final")
            elif (
                name := seating.table_to_break(
                    tables, self.s.break_order, self.s.final_table, self.s.seats_per_table
                )
            ) is not None:
                room = sum(len(t.empty()) for t in tables if t.table != name)
                moving = next(t.count for t in tables if t.table == name)
                if name not in busy and room >= moving:  # seats of players out freed first
                    self._propose(
                        "break",
                        f"break:{name}",
                        f"{left} players fit at {len(self.active) - 1} tables: break table {name}",
                        self.rules.break_order_rule,
                        table=name,
                    )
                wanted.add(f"break:{name}")
            else:
                move = seating.balance_move(
                    tables,
                    self.rules,
                    seats_per_table=self.s.seats_per_table,
                    difference=self.s.balance_difference,
                    order=self.s.break_order,
                )
                target = next((t for t in tables if move and t.table == move[1]), None)
                if move is not None and target is not None and not target.empty():
                    move = None  # its seats are still taken by players out: first those
                if move is not None and not ({*move} & busy):
                    src, dst = move
                    source = next(t for t in tables if t.table == src)
                    seat = seating.mover(source, self.rules) or 0
                    who = self.players[source.seats[seat]].name if seat in source.seats else "?"
                    role = "big blind next" if self.rules.mover == "next_big_blind" else "big blind"
                    self._propose(
                        "move",
                        f"move:{src}:{dst}",
                        f"balance: {who} ({src} seat {seat}, {role}) moves to table {dst}'s "
                        "worst position",
                        self.rules.mover_rule,
                        source=src,
                        target=dst,
                        player=source.seats.get(seat),
                        seat=seat,
                    )
                    wanted.add(f"move:{src}:{dst}")
            paid = self.places_paid()
            if (
                not self.h4h.active
                and paid
                and paid < left <= paid + self.s.hand_for_hand_at
                and len(self.active) >= 2
            ):
                self._propose(
                    "hand_for_hand",
                    "h4h",
                    f"{left} players left, {paid} paid: start hand-for-hand",
                    "RP-8",
                )
                wanted.add("h4h")
        for p in self.proposals.values():
            if p.status == "open" and p.key not in wanted:
                p.status, p.decided_at = "withdrawn", self.t

    def _halts(self) -> None:
        """TDA 11-D: a table three or more short of the fullest holds until balanced."""
        if not self.clock.started:
            return
        tables = [self.seats_of(t) for t in self.active]
        short = set(seating.halted(tables, self.rules))
        for t in self.active:
            if t.id in short and "halt" not in t.reasons:
                t.reasons["halt"] = "short table (11-D)"
                self.note("halt", f"table {t.id} halts: 3 or more players short", "11-D")
            elif t.id not in short:
                t.reasons.pop("halt", None)

    def _why(self, table: Table) -> str:
        return ", ".join(sorted(set(table.reasons.values())))

    def _holds_and_levels(self) -> None:
        level = self.s.level(self.level_number())
        for t in self.tables.values():
            if (
                t.active
                and self.seated
                and t.level_sent != level.number
                and t.level_asked != level.number
            ):
                args: dict[str, Any] = {
                    "small_blind": level.small_blind,
                    "big_blind": level.big_blind,
                    "ante": level.ante,
                    "level": level.number,
                }
                if level.bb_ante:
                    args["bb_ante"] = True
                if self.players_left == 2:
                    args["event_heads_up"] = True
                self.send(t.id, "level", **args)
                t.level_asked = level.number
            if not t.reasons and not t.active and not t.hold_set:
                continue
            want = bool(t.reasons)
            if t.asked is not None:
                continue
            if want and not t.hold_set:
                self.send(t.id, "hold", reason=self._why(t))
                t.asked = "hold"
            elif not want and t.hold_set:
                self.send(t.id, "release")
                t.asked = "release"

    # ------------------------------------------------------------------ views

    def average(self) -> int:
        left = self.in_play
        return sum(p.stack for p in left) // len(left) if left else 0

    def leaderboard(self) -> list[dict[str, Any]]:
        """Every player still in by chips: count, big blinds, table and seat, change since
        the level began. Never a card."""
        bb = self.s.level(self.level_number()).big_blind
        rows = sorted(self.in_play, key=lambda p: (-p.stack, p.name))
        return [
            {
                "rank": i + 1,
                "id": p.id,
                "name": p.name,
                "chips": p.stack,
                "big_blinds": round(p.stack / bb, 1) if bb else None,
                "table": p.table,
                "seat": p.seat,
                "change": p.stack - p.level_stack,
            }
            for i, p in enumerate(rows)
        ]

    def results(self) -> list[dict[str, Any]]:
        """The players out, best place first, with prizes."""
        out = [p for p in self.players.values() if p.place is not None]
        out.sort(key=lambda p: (p.place or (0, 0), p.name))
        return [
            {
                "id": p.id,
                "name": p.name,
                "place": p.place[0] if p.place else None,
                "place_to": p.place[1] if p.place else None,
                "shared": bool(p.place and p.place[0] != p.place[1]),
                "prize": self.prize(p),
                "confirmed": p.out_confirmed or p.place == (1, 1),
                "entries": p.entries,
            }
            for p in out
        ]

    def summary(self) -> dict[str, Any]:
        paid = prizes(self.s.payouts, self.entries)
        left = self.players_left
        return {
            "name": self.s.name,
            "profile": self.rules.name,
            "house": self.rules.document,
            "version": self.version,
            "started": self.clock.started,
            "seated": self.seated,
            "finished": self.finished,
            "players_left": left,
            "entries": self.entries,
            "average": self.average(),
            "chips_in_play": sum(p.stack for p in self.in_play),
            "prize_pool": prize_pool(self.s.payouts, self.entries),
            "currency": self.s.payouts.currency,
            "places_paid": len(paid),
            "in_the_money": bool(paid) and left <= len(paid),
            "bubble": bool(paid) and left == len(paid) + 1,
            "late_registration": self.late_open(),
            "hand_for_hand": {"active": self.h4h.active, "hand": self.h4h.hand},
            "final_table": self.is_final(),
            "tables": len(self.active),
            "clock": self.clock.public(self.t),
        }
