"""The tournament in the room server: the shell around `Tournament`.

It takes the tables' facts from the ingest (each committed batch, on its own thread so the
ingest never waits), the floor's actions from the API, and the time every second; journals
every input before it has effect; sends the commands each input gives to the tables, one
table at a time in order (`Ingest.command`, the same id again until the table answers: a
table applies an id once); and tells the live pages that something changed.
"""

from __future__ import annotations

import json
import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from room.config import TournamentSettings
from room.ingest import CommandError, Committed, Ingest
from room.tournament import facts
from room.tournament.journal import TournamentJournal
from room.tournament.model import Command
from room.tournament.structure import Structure, load_structure
from room.tournament.tournament import FACT_TYPES, FloorError, Tournament

log = logging.getLogger("tablectl.room.tournament")

#: Seconds between two clock moments (levels, breaks) the service looks at.
TICK = 1.0
#: Seconds to wait before a command a table did not answer is sent again (then doubled).
RETRY = (1.0, 2.0, 4.0, 8.0, 10.0)


def scaled_clock(scale: float) -> Callable[[], float]:
    """Unix time, or with `scale` != 1 a clock that runs `scale` times as fast from now."""
    if scale == 1.0:
        return time.time
    origin = time.time()

    def now() -> float:
        return origin + (time.time() - origin) * scale

    return now


class TableSender:
    """Sends one table's commands in order, each until the table answers it."""

    def __init__(self, service: TournamentService, table: str) -> None:
        self.service = service
        self.table = table
        self.queue: queue.Queue[Command | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name=f"trn-{table}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            cmd = self.queue.get()
            if cmd is None:
                return
            reply = self._send(cmd)
            if reply is not None:
                self.service.submit_facts([facts.from_reply(self.table, reply, self.service.now())])

    def _send(self, cmd: Command) -> dict[str, Any] | None:
        ingest = self.service.ingest
        if ingest is None:
            return None
        attempt = 0
        while not self.service.stopping.is_set():
            try:
                timeout = ingest.config.http.command_timeout
                return ingest.command(self.table, cmd.name, cmd.payload(), timeout)
            except CommandError as exc:
                wait = RETRY[min(attempt, len(RETRY) - 1)]
                attempt += 1
                log.warning(
                    "table %s, %s %s: %s; again in %g s", self.table, cmd.name, cmd.id, exc, wait
                )
                if self.service.stopping.wait(wait):
                    return None
        return None


class TournamentService:
    """The room's tournament: the core, its journal, the senders, the live listeners."""

    def __init__(
        self,
        settings: TournamentSettings,
        ingest: Ingest | None,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.settings = settings
        self.ingest = ingest
        self.now = clock or scaled_clock(settings.time_scale)
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.journal = TournamentJournal(settings.journal)
        header, records = self.journal.read()
        if header is None:
            text = settings.file.read_text(encoding="utf-8")
            seed = settings.seed if settings.seed is not None else secrets.randbits(63)
            header = {
                "t": self.now(),
                "seed": seed,
                "file": str(settings.file),
                "structure": text,
                "seqs": self._stored_seqs(),  # the tables' history before the event
            }
        self.header = header
        self.structure: Structure = load_structure(Path(header["file"]), header["structure"])
        if (
            settings.file.exists()
            and settings.file.read_text(encoding="utf-8") != header["structure"]
        ):
            log.warning(
                "%s changed since the event began: the event goes on as its journal began it",
                settings.file,
            )
        self.core = Tournament(self.structure, int(header["seed"]))
        self.core.begin_after({str(k): int(v) for k, v in (header.get("seqs") or {}).items()})
        for record in records:  # replayed: the commands they gave were sent then
            try:
                self.core.apply(record)
            except FloorError as exc:  # never journaled; a journal of another version?
                log.error("tournament journal: %s: %s", record.get("kind"), exc)
        self.journal.open(header)
        self.listeners: list[Callable[[int], None]] = []
        self.senders: dict[str, TableSender] = {}
        self.inbox: queue.Queue[list[dict[str, Any]] | None] = queue.Queue()
        self._last_state: dict[str, tuple[Any, bool]] = {}
        self._cache: dict[str, tuple[int, Any]] = {}
        self.thread = threading.Thread(target=self._loop, name="tournament", daemon=True)

    # ------------------------------------------------------------------ life

    def _stored_seqs(self) -> dict[str, int]:
        """Each table's highest stored event seq (the room's database)."""
        if self.ingest is None:
            return {}
        self.ingest.store.migrate()
        rows = self.ingest.store.query(
            "SELECT table_id, MAX(seq) AS seq FROM events WHERE room = ? GROUP BY table_id",
            (self.ingest.config.name,),
        )
        return {str(r["table_id"]): int(r["seq"]) for r in rows}

    def catch_up(self) -> int:
        """The facts the room stored while the tournament did not take them (it was down, or
        stopping as a batch committed): from the database, after each table's last one."""
        if self.ingest is None:
            return 0
        store, room = self.ingest.store, self.ingest.config.name
        found: list[tuple[float, int, dict[str, Any]]] = []
        kinds = sorted(FACT_TYPES)
        marks = ", ".join("?" for _ in kinds)
        with self.lock:
            after = {name: t.seq for name, t in self.core.tables.items()}
        for name, seq in after.items():
            rows = store.query(
                f"SELECT seq, received_at, payload FROM events WHERE room = ? AND table_id = ? "
                f"AND seq > ? AND type IN ({marks}) ORDER BY seq",
                (room, name, seq, *kinds),
            )
            for row in rows:
                fact = facts.from_event(name, json.loads(row["payload"]), self.now())
                if fact is not None:
                    found.append((float(row["received_at"]), int(row["seq"]), fact))
        found.sort(key=lambda f: (f[0], f[1]))
        if found:
            self.submit_facts([f for _r, _s, f in found])
            log.info("tournament: %d facts taken from the room's database", len(found))
        return len(found)

    def start(self) -> None:
        """Take the tables' facts, run the clock, send what is still unanswered."""
        if self.ingest is not None:
            self.ingest.listeners.append(self._on_batch)
        self.catch_up()
        with self.lock:
            pending = self.core.pending()
        self._dispatch(pending)  # after a restart: the same ids again (applied once)
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        if self.ingest is not None and self._on_batch in self.ingest.listeners:
            self.ingest.listeners.remove(self._on_batch)
        self.inbox.put(None)
        for sender in self.senders.values():
            sender.queue.put(None)
        if self.thread.is_alive():
            self.thread.join(timeout=5)
        self.journal.close()

    # ------------------------------------------------------------------ inputs

    def _on_batch(self, batch: Committed) -> None:
        """An ingest batch (the ingest's writer thread): its facts, queued for our thread."""
        t = self.now()
        found: list[dict[str, Any]] = []
        for payload in batch.events:
            table = payload.get("table")
            if isinstance(table, str) and table in self.core.tables:
                fact = facts.from_event(table, payload, t)
                if fact is not None:
                    found.append(fact)
        for table, topic, payload in batch.messages:
            if table not in self.core.tables:
                continue
            if topic == "state":
                found.append(facts.from_state(table, payload, t))
            elif topic == "replies" and str(payload.get("id", "")).startswith(self.core.ids):
                found.append(facts.from_reply(table, payload, t))
        if found:
            self.inbox.put(found)

    def _loop(self) -> None:
        next_tick = self.now() + TICK
        while not self.stopping.is_set():
            wait = max(0.0, next_tick - self.now())
            try:
                item = self.inbox.get(timeout=wait)
            except queue.Empty:
                item = []
            if item is None:
                return
            if item:
                self.submit_facts(item)
            if self.now() >= next_tick:
                next_tick = self.now() + TICK
                self._tick()

    def _tick(self) -> None:
        with self.lock:
            before = (len(self.core.log), self.core.version)
            out = self.core.apply({"kind": "tick", "t": self.now()})
            if out or len(self.core.log) != before[0]:
                self._journal([{"kind": "tick", "t": self.core.t}])
                self._changed()
            self._dispatch(out)

    def _wanted(self, fact: dict[str, Any]) -> bool:
        """A state is taken only when its hand ended or began, or the room's hold changed;
        a reply only for a command the tournament sent and still waits for."""
        if fact["kind"] == "state":
            key = (fact["hand"] is None, bool(fact["held_by_room"]))
            if self._last_state.get(fact["table"]) == key:
                return False
            self._last_state[fact["table"]] = key
        elif fact["kind"] == "reply":
            return self.core.expects(str(fact.get("id")))
        return True

    def submit_facts(self, found: list[dict[str, Any]]) -> None:
        """The tables' facts, applied and journaled in order."""
        if self.stopping.is_set():
            return  # the journal is closing: taken from the database at the next start
        with self.lock:
            taken: list[dict[str, Any]] = []
            out: list[Command] = []
            for fact in found:
                if not self._wanted(fact):
                    continue
                try:
                    out += self.core.apply(fact)
                except FloorError as exc:
                    log.error("a table's fact was refused: %s", exc)
                    continue
                taken.append(fact)
            if taken:
                self._journal(taken)
                self._changed()
            self._dispatch(out)

    def act(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A floor action (the API, with the floor token): applied, journaled, its commands
        sent; FloorError (nothing changed) if the tournament refuses it."""
        with self.lock:
            inp = {"kind": kind, "t": self.now(), **fields}
            out = self.core.apply(inp)
            self._journal([inp])
            self._changed()
            self._dispatch(out)
            return {"ok": True, "version": self.core.version, "commands": len(out)}

    def _journal(self, records: list[dict[str, Any]]) -> None:
        self.journal.append(records)

    def _dispatch(self, commands: list[Command]) -> None:
        for cmd in commands:
            sender = self.senders.get(cmd.table)
            if sender is None:
                sender = self.senders[cmd.table] = TableSender(self, cmd.table)
            sender.queue.put(cmd)

    def _changed(self) -> None:
        version = self.core.version
        for listener in list(self.listeners):
            try:
                listener(version)
            except Exception:
                log.exception("a tournament listener failed")

    # ------------------------------------------------------------------ views

    def view(self, name: str) -> Any:
        """A JSON view (`summary`, `leaderboard`, `results`, ...), computed once per version."""
        with self.lock:
            version = self.core.version
            cached = self._cache.get(name)
            if cached is not None and cached[0] == version and name != "summary":
                return cached[1]
            core = self.core
            now = self.now()
            if name == "summary":
                value: Any = core.summary()
                value["clock"] = core.clock.public(now)
                value["now"] = now
            elif name == "leaderboard":
                value = {
                    "version": version,
                    "name": core.s.name,
                    "level": core.level_number(),
                    "big_blind": core.s.level(core.level_number()).big_blind,
                    "players_left": core.players_left,
                    "entries": core.entries,
                    "average": core.average(),
                    "players": core.leaderboard(),
                }
            elif name == "results":
                value = {
                    "version": version,
                    "prize_pool": core.summary()["prize_pool"],
                    "places_paid": core.places_paid(),
                    "results": core.results(),
                }
            elif name == "players":
                value = [{**p.public(), "prize": core.prize(p)} for p in core.players.values()]
            elif name == "tables":
                value = [
                    {
                        **t.public(),
                        "players": sum(
                            1 for pid in t.seats.values() if core.players[pid].status == "seated"
                        ),
                        "players_at": {
                            str(seat): {
                                "id": pid,
                                "name": core.players[pid].name,
                                "chips": core.players[pid].stack,
                                "status": core.players[pid].status,
                            }
                            for seat, pid in sorted(t.seats.items())
                        },
                    }
                    for t in core.tables.values()
                ]
            elif name == "proposals":
                value = [p.public() for p in sorted(core.proposals.values(), key=lambda p: -p.id)]
            elif name == "ops":
                value = [
                    {
                        "id": o.id,
                        "kind": o.kind,
                        "stage": o.stage,
                        "error": o.error,
                        "tables": o.tables,
                        "details": o.details,
                    }
                    for o in core.ops.values()
                ]
            elif name == "log":
                value = [e.public() for e in core.log]
            elif name == "payouts":
                from room.tournament.places import prizes

                paid = prizes(core.s.payouts, core.entries)
                value = {
                    "prize_pool": core.summary()["prize_pool"],
                    "currency": core.s.payouts.currency,
                    "places": [{"place": i + 1, "prize": v} for i, v in enumerate(paid)],
                    "in_the_money": core.players_left <= len(paid) if paid else False,
                }
            else:
                raise KeyError(name)
            self._cache[name] = (version, value)
            return value

    def text(self, name: str) -> bytes:
        """A view as JSON bytes."""
        return json.dumps(self.view(name), separators=(",", ":")).encode()
