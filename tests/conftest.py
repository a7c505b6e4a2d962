"""Shared pytest fixtures (private mosquitto brokers: plain, ACL, TLS; a private PostgreSQL)
and the test markers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Import the project and the helpers (tests.broker) from the checkout, installed or not.
if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.broker import (
    EXAMPLE_ACL,
    USERS,
    Mosquitto,
    RoomPki,
    TlsFiles,
    make_room_certs,
    make_room_passwd,
    make_room_pki,
    make_tls_files,
)
from tests.postgres import PostgresServer

TESTS = Path(__file__).resolve().parent
#: Each directory of tests and its marker (registered in pyproject.toml).
KINDS = ("unit", "scenarios", "system")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by its directory: tests/unit -> unit, tests/scenarios -> scenarios,
    tests/system -> system. A test in tests/unit marked `system` is refused: it belongs in
    tests/system, so the unit folder holds only unit tests. A test module not yet placed in
    one of them counts as system (it may need a broker): `-m "not system"` never runs what it
    cannot know."""
    misplaced: list[str] = []
    for item in items:
        try:
            kind = item.path.relative_to(TESTS).parts[0]
        except ValueError:  # not below tests/
            continue
        if kind not in KINDS:
            kind = "system"
        if kind == "unit" and item.get_closest_marker("system") is not None:
            misplaced.append(item.nodeid)
        item.add_marker(kind)
    if misplaced:
        raise pytest.UsageError(
            "tests marked `system` under tests/unit (move them to tests/system): "
            + ", ".join(misplaced[:5])
        )


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A test CA and server certificate (127.0.0.1, localhost), made once per session."""
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """An anonymous broker on a free loopback port."""
    with Mosquitto(tmp_path / "mosquitto") as broker:
        yield broker


@pytest.fixture
def mosquitto_acl(tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker with the example users (passwords) and the shipped examples/mosquitto/acl."""
    with Mosquitto(tmp_path / "mosquitto-acl", users=USERS, acl_file=EXAMPLE_ACL) as broker:
        yield broker


@pytest.fixture
def mosquitto_tls(tmp_path: Path, tls_files: TlsFiles) -> Iterator[Mosquitto]:
    """A TLS-only broker with the example users and ACL."""
    workdir = tmp_path / "mosquitto-tls"
    with Mosquitto(workdir, users=USERS, acl_file=EXAMPLE_ACL, tls=tls_files) as broker:
        yield broker


@pytest.fixture(scope="session")
def room_certs(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A CA and server certificate made by the shipped make-certs.sh (localhost, 127.0.0.1)."""
    return make_room_certs(tmp_path_factory.mktemp("room-certs"))


@pytest.fixture
def mosquitto_room(tmp_path: Path, room_certs: TlsFiles) -> Iterator[Mosquitto]:
    """The shipped security kit: TLS only, the shipped ACL, make-certs.sh certificates and
    a password file made by make-passwd.sh (the USERS passwords)."""
    workdir = tmp_path / "mosquitto-room"
    workdir.mkdir()
    passwd = make_room_passwd(workdir / "passwd", USERS)
    with Mosquitto(workdir, password_file=passwd, acl_file=EXAMPLE_ACL, tls=room_certs) as broker:
        yield broker


@pytest.fixture(scope="session")
def room_pki(tmp_path_factory: pytest.TempPathFactory) -> RoomPki:
    """make-certs.sh's CA, server certificate and client certificates (CN = identity) for
    table-t01, table-t02, room and tv: the kit's mutual-TLS option."""
    return make_room_pki(tmp_path_factory.mktemp("room-pki"))


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A private PostgreSQL server for the session (initdb + pg_ctl in a temp directory)."""
    with PostgresServer() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh room database: a SQLite file, then a new database on the private PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'room.db'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()
