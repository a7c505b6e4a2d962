"""The tournament run against real table engines (tests/tournament_rig.py): what the floor is
proposed and what the tables are sent, named after the rules they follow (TDA 2019 rules 8,
10, 11, 23, RP-8; the Venezia and Casinos Austria articles where theirs differ)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from room.tournament.tournament import FloorError, Tournament
from tests.tournament_rig import PureRoom, Script, basic


def seated_once(room: PureRoom) -> None:
    """No player sits at two tables at once (the tables' own seats, not the room's map)."""
    where = Counter(
        s.player for rig in room.tables.values() for s in rig.engine.seats.values() if s.player
    )
    assert [p for p, n in where.items() if n > 1] == []


def chips_kept(room: PureRoom, total: int) -> bool:
    """Every chip of every entry is on a table, or was taken out of play (looked at while no
    table is in a hand: then every chip is in a stack); False if it could not look."""
    if any(rig.engine.hand is not None for rig in room.tables.values()):
        return False
    assert room.chips_on_tables() + room.tournament.removed_chips == total
    return True


def field(room: PureRoom) -> int:
    return room.tournament.entries * room.structure.starting_stack


PAYOUT_8 = "percent = [30, 20, 15, 11, 9, 7, 5, 3]"
#: A seed per house whose event goes through every procedure (moves, breaks, the bubble
#: hand-for-hand with an all-in kept face down, the final table).
SEEDS = {"tda-2019": 7, "venezia": 7, "casinos-austria": 7}


class Record:
    """One whole event run to a winner, and what was seen on the way."""

    def __init__(self, tmp_path: Path, profile: str) -> None:
        self.structure = basic(
            tmp_path,
            players=20,
            tables=4,
            seats=6,
            profile=profile,
            payout=PAYOUT_8,
            stack=1500,
            minutes=6,
        )
        self.room = PureRoom(self.structure, seed=SEEDS[profile], profile=profile, latency=True)
        self.violations: list[str] = []
        self.chip_checks = 0
        self.done: Counter[str] = Counter()
        self.h4h = False
        self.face_down: set[str] = set()
        self.room.watchers.append(self.watch)
        self.room.floor("start")
        self.room.run(limit=12 * 3600, until=self.invariant)

    def invariant(self, r: PureRoom) -> bool:
        seated_once(r)
        self.chip_checks += chips_kept(r, field(r))
        return False

    def watch(self, r: PureRoom, table: str, m: dict[str, Any]) -> None:
        """RP-8: a table in hand-for-hand begins a hand only once every other table finished
        the last one; RP-8 F: no board card while a hand is kept face down."""
        on = r.tournament.h4h.active
        if on and not self.h4h:
            self.done.clear()
            for name, tb in r.tournament.tables.items():
                if tb.active and tb.h4h == "done":
                    self.done[name] += 1  # held at the announcement: its hand is done
        self.h4h = on
        kind = m.get("type")
        if kind == "hands_face_down":
            self.face_down.add(table)
        elif kind == "board_dealt" and table in self.face_down:
            self.violations.append(f"{table} dealt a board before the instruction (RP-8 F)")
        elif kind in ("hands_tabled", "hand_completed"):
            self.face_down.discard(table)
        if not on:
            return
        if kind == "hand_completed":
            self.done[table] += 1
        elif kind == "hand_started":
            others = [
                n
                for n, tb in r.tournament.tables.items()
                if tb.active and n != table and len(tb.seats) >= 2
            ]
            behind = [n for n in others if self.done[n] < self.done[table]]
            if behind:
                self.violations.append(f"{table} began a hand before {behind} finished")


@pytest.fixture(scope="module", params=list(SEEDS))
def record(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Record:
    return Record(tmp_path_factory.mktemp(request.param), request.param)


def test_a_whole_tournament_to_a_winner(record: Record) -> None:
    room, t = record.room, record.room.tournament
    assert t.finished
    results = t.results()
    assert results[0]["place"] == 1 and results[0]["prize"] > 0
    assert {p for r in results for p in range(r["place"], r["place_to"] + 1)} == set(range(1, 21))
    assert sum(r["prize"] for r in results) <= t.summary()["prize_pool"]
    assert room.refused == []  # every command was one the table could apply
    assert record.chip_checks > 5
    kinds = Counter(e.kind for e in t.log)
    assert kinds["break"] >= 1 and kinds["final"] == 1 and kinds["winner"] == 1


def test_rule_RP8_hand_for_hand_every_table_waits_for_the_others(record: Record) -> None:
    notes = [e for e in record.room.tournament.log if e.kind == "hand_for_hand"]
    assert len(notes) == 2  # on at the bubble, off in the money
    assert record.violations == []
    holds = record.room.events("room_hold")
    assert any(e["rule"] == "RP-8" and e["hand"] is None for _t, e in holds)


def test_rule_RP8F_all_in_and_called_stays_face_down_until_the_floor_instructs(
    record: Record,
) -> None:
    room = record.room
    face_down = room.events("hands_face_down")
    assert face_down, "an all-in and call during hand-for-hand"
    for table, event in face_down:
        hand = event["hand"]
        at = [i for i, (t, m) in enumerate(room.published) if t == table]
        mark = next(
            i
            for i in at
            if room.published[i][1].payload.get("type") == "hands_face_down"
            and room.published[i][1].payload.get("hand") == hand
        )
        release = next(
            i
            for i in at
            if i > mark
            and room.published[i][1].payload.get("type") == "room_release"
            and room.published[i][1].payload.get("instructed")
        )
        shown = [
            i
            for i in at
            if mark < i
            and room.published[i][1].payload.get("hand") == hand
            and room.published[i][1].payload.get("type") in ("hands_tabled", "board_dealt")
        ]
        assert all(i >= release - 1 for i in shown)  # tabled by the instruction, not before
        states = [
            room.published[i][1].payload
            for i in at
            if mark < i < release - 1 and room.published[i][1].topic == "state"
        ]
        assert not any("shown" in seat for st in states for seat in st["seats"].values())
    assert record.violations == []


def test_rule_23_every_hand_is_played_at_the_level_the_table_had_when_it_began(
    tmp_path: Path,
) -> None:
    s = basic(tmp_path, players=18, tables=2, minutes=3, stack=20000)
    room = PureRoom(s, seed=2, latency=True)
    room.floor("start")
    room.run(limit=40 * 60)
    levels = {lv.number: (lv.small_blind, lv.big_blind) for lv in s.levels}
    seen = 0
    for name in room.tables:
        current: tuple[int, int] | None = None
        for table, m in room.published:
            if table != name:
                continue
            p = m.payload
            if m.topic == "replies" and p["command"] == "level" and p["ok"]:
                sent = next(c for c in room.sent if c.id == p["id"])
                current = levels[sent.args["level"]]
            elif m.topic == "events" and p["type"] == "hand_started":
                assert (p["small_blind"], p["big_blind"]) == current  # rule 23: the next hand
                seen += 1
    assert seen > 20
    assert len({c.args["level"] for c in room.sent if c.name == "level"}) >= 5


def test_breaks_hold_every_table_after_its_hand(tmp_path: Path) -> None:
    s = basic(
        tmp_path,
        players=18,
        tables=2,
        minutes=4,
        stack=20000,
        breaks="[[break]]\nafter_level = 1\nminutes = 5\n",
    )
    room = PureRoom(s, seed=3)
    room.floor("start")
    starts: list[float] = []
    room.watchers.append(
        lambda r, t, m: starts.append(r.t) if m.get("type") == "hand_started" else None
    )
    room.run(limit=15 * 60)
    begin = 1_800_000_000.0 + 4 * 60 + 1
    inside = [t for t in starts if begin + 60 < t < begin + 5 * 60 - 1]
    assert inside == []  # no hand begins during the break (one in progress may end)
    assert any(t > begin + 5 * 60 for t in starts)  # play resumes after it


def out_now(room: PureRoom) -> list[Any]:
    return [p for p in room.tournament.open_proposals() if p.kind == "out"]


def two_small_tables(tmp_path: Path, profile: str = "tda-2019", players: int = 6) -> PureRoom:
    s = basic(
        tmp_path,
        players=players,
        tables=2,
        seats=3,
        profile=profile,
        stack=5000,
        payout="percent = [70, 30]",
    )
    room = PureRoom(s, seed=1, auto_floor=False, profile=profile)
    room.floor("start")
    room.run(limit=120)  # a few hands: positions known everywhere
    return room


def script_bust(room: PureRoom, table: str) -> tuple[str, int]:
    """The next hand at `table`: its shortest stack all in against its biggest, and out."""
    engine = room.tables[table].engine
    seats = {n: s.stack for n, s in engine.seats.items() if s.player and s.stack > 0}
    short = min(seats, key=lambda n: (seats[n], n))
    big = max(seats, key=lambda n: (seats[n], n))
    assert short != big
    room.tables[table].script = Script(allin=short, caller=big, winner=big)
    pid = room.tournament.tables[table].seats[short]
    return pid, seats[short]


def test_a_player_out_is_proposed_placed_and_the_seat_freed_once_confirmed(
    tmp_path: Path,
) -> None:
    room = two_small_tables(tmp_path)
    pid, _chips = script_bust(room, "t01")
    room.run(limit=300, until=lambda r: bool(out_now(r)))
    [proposal] = out_now(room)
    player = room.tournament.players[pid]
    assert proposal.details["player"] == pid and player.status == "out"
    assert player.place == (6, 6)
    assert room.tournament.players_left == 5
    assert pid not in [row["id"] for row in room.tournament.leaderboard()]
    seat = player.seat
    assert room.tables["t01"].engine.seats[seat].player == player.name  # still seated, 0 chips
    room.floor("confirm", proposal=proposal.id, by="Anna")
    room.step()
    assert room.tables["t01"].engine.seats[seat].player is None
    assert player.out_confirmed and player.table is None


def test_a_player_out_the_floor_takes_back_keeps_his_count_and_places_move(
    tmp_path: Path,
) -> None:
    room = two_small_tables(tmp_path)
    pid, _chips = script_bust(room, "t01")
    room.run(limit=300, until=lambda r: bool(out_now(r)))
    [proposal] = out_now(room)
    with pytest.raises(FloorError, match="chips"):
        room.floor("reject", proposal=proposal.id, by="Anna")
    room.floor("reject", proposal=proposal.id, by="Anna", reason="chips behind", chips=700)
    player = room.tournament.players[pid]
    assert player.status == "seated" and player.place is None and player.stack == 700
    assert room.tables["t01"].engine.seats[player.seat].stack == 700  # `stack` sent
    assert room.tournament.players_left == 6


def test_places_same_hand_same_table_ranked_by_chips_at_its_start(tmp_path: Path) -> None:
    room = two_small_tables(tmp_path, players=6)
    t = room.tournament
    engine = room.tables["t02"].engine
    seats = sorted(n for n, s in engine.seats.items() if s.player and s.stack > 0)
    assert len(seats) == 3
    # Two players all in against the third who wins: both out in the same hand.
    stacks = {n: engine.seats[n].stack for n in seats}
    big = max(seats, key=lambda n: stacks[n])
    others = [n for n in seats if n != big]
    # All three in: a scripted hand with the big stack winning against both.
    room.tables["t02"].script = Script(allin=others[0], caller=big, winner=big)
    room.run(limit=300, until=lambda r: bool(out_now(r)))
    outs = [t.players[p.details["player"]] for p in out_now(room)]
    assert outs and all(p.place is not None for p in outs)
    if len(outs) == 2:
        a, b = sorted(outs, key=lambda p: -p.hand_start)
        assert a.place is not None and b.place is not None
        assert a.place[0] < b.place[0] or a.hand_start == b.hand_start


def test_rule_8A_late_registration_a_full_stack_and_a_seat_at_the_fewest_table(
    tmp_path: Path,
) -> None:
    s = basic(
        tmp_path, players=5, tables=2, seats=3, stack=5000, extra="late_registration_levels = 2"
    )
    room = PureRoom(s, seed=4, auto_floor=False)
    room.floor("start")
    room.run(limit=60)
    counts = {n: len(tb.seats) for n, tb in room.tournament.tables.items() if tb.active}
    fewest = min(counts, key=lambda n: counts[n])
    room.floor("register", name="Late Comer", player_id="L1")
    late = room.tournament.players["L1"]
    assert late.table == fewest and late.stack == 5000
    room.step()
    seat = room.tables[fewest].engine.seats[late.seat or 0]
    assert (seat.player, seat.stack) == ("Late Comer", 5000)
    assert room.tournament.entries == 6


def test_rule_8A_late_registration_closes_after_its_last_level(tmp_path: Path) -> None:
    s = basic(
        tmp_path, players=4, tables=2, seats=3, minutes=1, extra="late_registration_levels = 1"
    )
    room = PureRoom(s, seed=4, auto_floor=False)
    room.floor("start")
    room.run(limit=90)
    with pytest.raises(FloorError, match="late registration closed at the end of level 1"):
        room.floor("register", name="Too Late")


def test_rule_8B_a_reentry_with_chips_left_takes_them_out_of_play(tmp_path: Path) -> None:
    s = basic(
        tmp_path,
        players=4,
        tables=2,
        seats=3,
        stack=5000,
        extra="late_registration_levels = 3\nreentries = 1",
    )
    room = PureRoom(s, seed=6, auto_floor=False)
    room.floor("start")
    room.run(limit=60)
    t = room.tournament
    pid = next(iter(t.players))
    with pytest.raises(FloorError, match="forfeit"):
        room.floor("reenter", player_id=pid)
    room.floor("reenter", player_id=pid, forfeit=True)
    room.run(limit=300, until=lambda r: r.tournament.players[pid].entries == 2)
    player = t.players[pid]
    assert player.entries == 2 and player.stack == 5000 and player.status == "seated"
    assert t.removed_chips > 0 and t.entries == 5
    assert any(e.rule == "8-B" and "out of play" in e.text for e in t.log)
    seated_once(room)
    room.run(limit=300, until=lambda r: chips_kept(r, 5 * 5000))
    with pytest.raises(FloorError, match="every re-entry"):
        room.floor("reenter", player_id=pid, forfeit=True)


def test_rule_11D_a_short_table_holds_until_a_player_is_moved_to_it(tmp_path: Path) -> None:
    s = basic(tmp_path, players=12, tables=2, seats=6, stack=5000, payout="percent = [100]")
    room = PureRoom(s, seed=8, auto_floor=False)
    room.floor("start")
    room.run(limit=60)
    t = room.tournament
    # Three players of t02 go out in one hand each until it is 3 short of t01.
    for _ in range(3):
        pid, _c = script_bust(room, "t02")
        room.run(limit=400, until=lambda r, p=pid: r.tournament.players[p].status == "out")
        for p in out_now(room):
            room.floor("confirm", proposal=p.id, by="Anna")
        room.run(limit=30)
        if t.tables["t02"].reasons.get("halt"):
            break
    assert "halt" in t.tables["t02"].reasons
    room.run(limit=20)
    assert room.tables["t02"].engine.holds.get("room")  # the table holds (11-D)
    started = room.tables["t02"].engine.hand_number
    move = next(p for p in t.open_proposals() if p.kind == "move")
    assert (move.details["source"], move.details["target"], move.rule) == ("t01", "t02", "11-A")
    room.run(limit=30)
    assert room.tables["t02"].engine.hand_number == started  # still halted, not confirmed
    room.floor("confirm", proposal=move.id, by="Anna")
    room.run(limit=120, until=lambda r: r.tables["t02"].engine.hand_number > started)
    assert room.tables["t02"].engine.hand_number > started
    seated_once(room)


def test_rule_1_a_move_with_the_wrong_chip_count_waits_for_the_floor(tmp_path: Path) -> None:
    s = basic(tmp_path, players=12, tables=2, seats=6, stack=5000, payout="percent = [100]")
    room = PureRoom(s, seed=8, auto_floor=False)
    room.floor("start")
    room.run(limit=60)
    t = room.tournament
    for _ in range(3):
        pid, _c = script_bust(room, "t02")
        room.run(limit=400, until=lambda r, p=pid: r.tournament.players[p].status == "out")
        for p in out_now(room):
            room.floor("confirm", proposal=p.id, by="Anna")
        room.run(limit=30)
        if any(p.kind == "move" for p in t.open_proposals()):
            break
    move = next(p for p in t.open_proposals() if p.kind == "move")
    room.floor("confirm", proposal=move.id, by="Anna", chips=1)
    room.run(limit=120, until=lambda r: move.status == "open")
    assert move.status == "open" and "counted 1" in (move.note or "")
    mover = t.players[move.details["player"]] if move.details.get("player") else None
    room.floor("confirm", proposal=move.id, by="Anna", chips=1234, accept_count=True)
    room.run(limit=120, until=lambda r: move.status == "done")
    moved = [p for p in t.players.values() if p.moves and p.table == "t02" and p.stack == 1234]
    assert moved, mover
    assert room.tables["t02"].engine.seats[moved[0].seat or 0].stack == 1234


def test_the_journal_replays_to_the_same_tournament(record: Record) -> None:
    room, s = record.room, record.structure
    again = Tournament(s, SEEDS[s.house.name])
    for inp in room.inputs:
        again.apply(json.loads(json.dumps(inp)))
    a, b = room.tournament, again
    assert b.leaderboard() == a.leaderboard()
    assert b.results() == a.results()
    assert [e.text for e in b.log] == [e.text for e in a.log]
    assert b.summary() == a.summary()


def test_the_leaderboard_never_names_a_card(record: Record) -> None:
    t = record.room.tournament
    text = json.dumps([t.leaderboard(), t.results(), t.summary(), [e.public() for e in t.log]])
    assert not re.search(r"(?<![0-9A-Za-z])[23456789TJQKA][cdhs](?![0-9A-Za-z])", text)


@pytest.mark.parametrize(
    ("profile", "rule"),
    [
        ("tda-2019", "71-D"),
        ("venezia", "Venezia art. 44"),
        ("casinos-austria", "Casinos Austria art. 45"),
    ],
)
def test_rule_71D_and_venezia_art_44_and_casinos_austria_art_45_disqualified_chips_leave_play(
    tmp_path: Path, profile: str, rule: str
) -> None:
    room = two_small_tables(tmp_path, profile=profile)
    t = room.tournament
    pid = t.tables["t02"].seats[min(t.tables["t02"].seats)]
    room.run(limit=200, until=lambda r: r.tables["t02"].engine.hand is None)
    chips = t.players[pid].stack
    room.floor("disqualify", player_id=pid, by="Anna")
    room.run(limit=200, until=lambda r: not r.tournament.pending())
    assert t.players[pid].status == "disqualified" and t.removed_chips == chips
    assert all(s.player != t.players[pid].name for s in room.tables["t02"].engine.seats.values())
    assert t.log[0].rule == rule or any(e.rule == rule for e in t.log)
    room.run(limit=300, until=lambda r: chips_kept(r, 6 * 5000))


def test_casinos_austria_art_19_reentry_after_a_player_is_out(tmp_path: Path) -> None:
    s = basic(
        tmp_path,
        players=6,
        tables=2,
        seats=3,
        profile="casinos-austria",
        stack=5000,
        extra="late_registration_levels = 3\nreentries = 1",
    )
    room = PureRoom(s, seed=1, auto_floor=False, profile="casinos-austria")
    room.floor("start")
    room.run(limit=120)
    pid, _c = script_bust(room, "t01")
    room.run(limit=300, until=lambda r: bool(out_now(r)))
    with pytest.raises(FloorError, match="confirm"):
        room.floor("reenter", player_id=pid)
    [proposal] = out_now(room)
    room.floor("confirm", proposal=proposal.id, by="Anna")
    room.run(limit=60, until=lambda r: not r.tournament.pending())
    room.floor("reenter", player_id=pid, by="Anna")
    player = room.tournament.players[pid]
    assert (player.entries, player.status, player.stack, player.place) == (2, "seated", 5000, None)
    room.run(limit=60, until=lambda r: not r.tournament.pending())
    seat = room.tables[player.table or ""].engine.seats[player.seat or 0]
    assert (seat.player, seat.stack) == (player.name, 5000)
    assert room.tournament.summary()["prize_pool"] == 7 * 100
