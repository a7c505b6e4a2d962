"""The tournament file and [tournament] of the room server's file: refused, with the file and
the key named, when they are wrong; and the API and pages of a room server with and without a
tournament (the real application, in this process, no broker)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kernel.errors import ConfigError
from room.api import RoomContext, create_app
from room.config import TournamentSettings, load_room_config
from room.store import open_store
from room.tournament.router import install
from room.tournament.service import TournamentService
from room.tournament.structure import load_structure


@contextlib.contextmanager
def _client(application: Any) -> Iterator[Any]:
    """Starlette's test client (no port, no thread) on the application; this Starlette
    version announces its use of httpx as deprecated, which is not this test's business."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient

        with TestClient(application) as client:
            yield client


GOOD = """[tournament]
name = "Test"
starting_stack = 1000
seats_per_table = 4
tables = ["t01", "t02"]
late_registration_levels = 1
[payouts]
buy_in = 10
percent = [70, 30]
[[level]]
small_blind = 10
big_blind = 20
minutes = 10
[[player]]
name = "Anna"
[[player]]
name = "Beppe"
[[player]]
name = "Carla"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "event.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            ("starting_stack = 1000", "starting_stak = 1000"),
            r"unknown key 'starting_stak' in \[tournament\] \(did you mean 'starting_stack'\?\)",
        ),
        (
            ("small_blind = 10", "small_blind = 30"),
            r"\[level.1\] small_blind: 30 is above the big blind 20",
        ),
        (
            ("percent = [70, 30]", "percent = [70, 20]"),
            r"\[payouts\] percent: the percentages add up to 90, not 100",
        ),
        (("percent = [70, 30]", "percent = [30, 70]"), r"never paid more than the one above it"),
        (
            ('tables = ["t01", "t02"]', 'tables = ["t01", "t01"]'),
            r"\[tournament\] tables: a table is listed twice",
        ),
        (
            ('tables = ["t01", "t02"]', 'tables = ["t01", "t02"]\nbreak_order = ["t01"]'),
            r"break_order: must list exactly the tables",
        ),
        (
            ('tables = ["t01", "t02"]', 'tables = ["t01", "t02"]\nfinal_table = "t09"'),
            r"final_table: 't09' is not one of `tables`",
        ),
        (
            ('name = "Test"', 'name = "Test"\nprofile = "campione"'),
            r"profile: 'campione' is not one of tda-2019, venezia, casinos-austria",
        ),
        (
            ("minutes = 10", "minutes = 0"),
            r"\[level.1\] minutes: must be in \(0, 1440\] minutes, got 0",
        ),
        (
            (
                GOOD.split("[[level]]")[0],
                GOOD.split("[[level]]")[0] + "[[break]]\nafter_level = 3\nminutes = 5\n",
            ),
            r"\[break.1\] after_level: 3 is out of range 1..1",
        ),
        (
            (
                '[[player]]\nname = "Anna"',
                '[[player]]\nname = "Anna"\nid = "X"\n[[player]]\nname = "Bis"\nid = "X"',
            ),
            r"\[player.2\] id: 'X' is given twice",
        ),
        (("[payouts]", "[payout]"), r"\[\[payout\]\] must be an array of tables"),
    ],
)
def test_a_wrong_tournament_file_is_refused_naming_the_key(
    tmp_path: Path, change: tuple[str, str], error: str
) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(ConfigError, match=error):
        load_structure(write(tmp_path, GOOD.replace(old, new, 1)))


def test_a_tournament_file_and_the_rooms_section(tmp_path: Path) -> None:
    s = load_structure(write(tmp_path, GOOD))
    assert (s.name, s.house.name, s.final_table, s.break_order) == (
        "Test",
        "tda-2019",
        "t01",
        ("t02", "t01"),
    )
    assert s.final_table_size == 4 and [p.player_id for p in s.players] == [
        "P0001",
        "P0002",
        "P0003",
    ]
    room = tmp_path / "room.toml"
    room.write_text('[room]\nname = "r"\n[tournament]\nfile = "event.toml"\ntime_scale = 2\n')
    settings = load_room_config(room).tournament
    assert settings is not None and settings.file == tmp_path / "event.toml"
    assert settings.journal == tmp_path / "event.journal.jsonl" and settings.time_scale == 2.0
    room.write_text('[room]\nname = "r"\n[tournament]\njournal = "x.jsonl"\n')
    with pytest.raises(ConfigError, match=r"\[tournament\] file: missing"):
        load_room_config(room)
    room.write_text('[room]\nname = "r"\n[tournament]\nfile = "nope.toml"\n')
    with pytest.raises(ConfigError, match=r"\[tournament\] file"):
        load_room_config(room)


TOKEN = "floor-token-0123456789"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[Any, TournamentService]]:
    (tmp_path / "token").write_text(TOKEN)
    (tmp_path / "token").chmod(0o600)
    write(tmp_path, GOOD)
    room = tmp_path / "room.toml"
    room.write_text(
        f'[room]\nname = "r"\n[database]\npath = "{tmp_path / "room.db"}"\n'
        f'[http]\ntoken_file = "{tmp_path / "token"}"\n'
    )
    config = load_room_config(room)
    store = open_store(config.database, config.name)
    store.migrate()
    service = TournamentService(
        TournamentSettings(tmp_path / "event.toml", tmp_path / "event.jsonl", seed=3), None
    )
    application = create_app(RoomContext(config, store))
    install(application, service)
    service.start()
    with _client(application) as client:
        yield client, service
    service.stop()
    store.close()


def test_the_api_reads_openly_and_the_floor_needs_the_token(
    app: tuple[Any, TournamentService],
) -> None:
    client, service = app
    summary = client.get("/api/tournament")
    assert summary.status_code == 200 and summary.headers["access-control-allow-origin"] == "*"
    assert summary.json()["players_left"] == 3
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/tournament/start", json={"by": "Anna"}).status_code == 401
    reply = client.post("/api/tournament/clock", json={"action": "pause"}, headers=auth)
    assert reply.status_code == 409 and reply.json()["detail"] == "the clock has not started"
    assert (
        client.post("/api/tournament/clock", json={"action": "x"}, headers=auth).status_code == 422
    )
    assert client.post("/api/tournament/start", json={"by": "Anna"}, headers=auth).json()["ok"]
    board = client.get("/api/tournament/leaderboard").json()
    assert [p["chips"] for p in board["players"]] == [1000, 1000, 1000]
    late = client.post("/api/tournament/players", json={"name": "Dino", "by": "Anna"}, headers=auth)
    assert late.status_code == 200 and service.core.players_left == 4
    again = client.post(
        "/api/tournament/players", json={"name": "D", "player_id": "P0004"}, headers=auth
    )
    assert again.status_code == 409 and "registered already" in again.json()["detail"]
    bad = client.post("/api/tournament/players", json={"name": "", "by": "Anna"}, headers=auth)
    assert bad.status_code == 422
    journal = service.settings.journal.read_text().splitlines()
    assert '"kind":"start"' in journal[1] and '"by":"Anna"' in journal[1]
    for page, text in (
        ("/tournament/clock", 'data-field="time"'),
        ("/tournament/leaderboard", 'id="leaderboard"'),
        ("/tournament/floor", 'id="proposals"'),
        ("/tournament/static/tournament.js", "EventSource"),
    ):
        got = client.get(page)
        assert got.status_code == 200 and text in got.text


def test_without_a_tournament_the_pages_say_so_and_the_api_is_404(tmp_path: Path) -> None:
    room = tmp_path / "room.toml"
    room.write_text(f'[room]\nname = "r"\n[database]\npath = "{tmp_path / "room.db"}"\n')
    config = load_room_config(room)
    store = open_store(config.database, config.name)
    application = create_app(RoomContext(config, store))
    install(application, None)
    with _client(application) as client:
        assert client.get("/api/tournament").status_code == 404
        page = client.get("/tournament/floor")
        assert page.status_code == 200 and "no tournament on this room server" in page.text
    store.close()
