"""The script player's chips: registered UIDs given to a trace's chip ids."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kernel.inputs import TagIn, TagOut
from sim.player import ScriptPlayer

REGISTRY = {f"04C0000050000{i}": 500 for i in range(1, 4)}


class Board:
    """The simulated chip board as the player sees it: tags placed at antennas."""

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}

    def place(self, antenna: str, uid: str) -> bool:
        field = self.fields.setdefault(antenna, [])
        if uid in field:
            return False
        field.append(uid)
        return True

    def remove(self, antenna: str, uid: str) -> bool:
        field = self.fields.get(antenna, [])
        if uid not in field:
            return False
        field.remove(uid)
        return True

    def contents(self) -> dict[str, list[str]]:
        return {name: list(tags) for name, tags in self.fields.items()}


def daemon(board: Board) -> Any:
    return SimpleNamespace(
        config=SimpleNamespace(
            card_reader=SimpleNamespace(antennas=["board", "burn"]),
            gpio=SimpleNamespace(shuffler=None, panel={}, allin_buttons={}),
        ),
        engine=SimpleNamespace(deck=None, chips=REGISTRY),
        devices=SimpleNamespace(sim_boards={"chip_reader": board}, readers=[]),
    )


def test_a_trace_played_in_parts_never_puts_a_chip_of_the_pot_in_a_bet_zone() -> None:
    """Each part of a trace has its own player: the second part's chips are other tags than
    the chips the first part left in the pot (a tag read at two antennas is counted once)."""
    board = Board()
    first = ScriptPlayer(daemon(board))
    for event in (
        TagIn(t=0.0, antenna="bet6", chip="c1", value=500),
        TagOut(t=1.0, antenna="bet6", chip="c1", value=500),
        TagIn(t=1.0, antenna="pot", chip="c1", value=500),
    ):
        first.perform(event)
    second = ScriptPlayer(daemon(board))
    second.perform(TagIn(t=2.0, antenna="bet5", chip="c2", value=500))
    pot, bet = board.fields["pot"], board.fields["bet5"]
    assert len(pot) == len(bet) == 1 and pot != bet
    # Once every tag of the value lies on the board, they are reused in turn (as before).
    second.perform(TagIn(t=2.1, antenna="bet5", chip="c3", value=500))
    second.perform(TagIn(t=2.2, antenna="bet5", chip="c4", value=500))
    assert set(board.fields["bet5"]) | set(pot) == set(REGISTRY)


def test_a_later_part_pushes_the_pot_of_the_chips_lying_there() -> None:
    """A part that starts with the pot pushed moves the tags lying in the pot, whatever
    other tags came before them in the registry."""
    board = Board()
    first = ScriptPlayer(daemon(board))
    first.perform(TagIn(t=0.0, antenna="bet5", chip="c1", value=500))
    first.perform(TagIn(t=0.1, antenna="pot", chip="c2", value=500))
    assert len(board.fields["pot"]) == 1
    last = ScriptPlayer(daemon(board))
    last.perform(TagOut(t=5.0, antenna="pot", chip="c2", value=500))
    assert board.fields["pot"] == [] and len(board.fields["bet5"]) == 1


def test_a_room_of_tables_is_spread_over_worker_processes() -> None:
    from sim.tables import TABLES_PER_WORKER, spread

    assert spread(1) == [[0]]
    assert spread(TABLES_PER_WORKER) == [list(range(TABLES_PER_WORKER))]
    room = spread(100)
    assert len(room) == -(-100 // TABLES_PER_WORKER)  # ceil: 13 workers of 8 tables
    assert sorted(i for worker in room for i in worker) == list(range(100))  # each once
    assert max(map(len, room)) - min(map(len, room)) <= 1  # as even as can be
    assert room[0][0] == 0
