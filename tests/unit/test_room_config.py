"""The room server's TOML file: strict like a table's, every key checked and named."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import pytest

from kernel.errors import ConfigError
from room.config import load_room_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "room.toml"


def _example(tmp_path: Path, text: str | None = None) -> Path:
    """The shipped example next to the files it names (a CA and credentials)."""
    (tmp_path / "mosquitto" / "certs").mkdir(parents=True)
    (tmp_path / "mosquitto" / "certs" / "ca.crt").write_text("-----")
    credentials = Path(shutil.copy(ROOT / "examples" / "room-mqtt.toml.example", tmp_path))
    credentials.chmod(0o600)  # a credentials file readable by others is refused
    path = tmp_path / "room.toml"
    path.write_text(text if text is not None else EXAMPLE.read_text())
    return path


def test_the_shipped_example_loads(tmp_path: Path) -> None:
    config = load_room_config(_example(tmp_path))
    assert config.name == "main" and config.topic_filter == "poker/main/+/#"
    assert config.broker.tls and config.broker.username == "room"
    assert config.broker.client_id == "room"  # its identity: the broker kit binds the two
    assert config.database.url == "sqlite:////var/lib/tablectl/room.db"
    assert not config.database.is_postgres
    assert [s.name for s in config.stats.shifts] == ["night", "day", "evening"]
    assert config.stats.shifts[0].start == datetime.time(2, 0)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("[room]", "[rooms]"), r"unknown section \[rooms\] \(did you mean \[room\]\?\)"),
        (("port = 8080", "port = 8080\nprot = 1"), r"unknown key 'prot' in \[http\]"),
        (('timezone = "Europe/Rome"', 'timezone = "Mars/Base"'), r"\[stats\] timezone"),
        (('day = "10:00"', 'day = "25:00"'), r"\[stats\] shifts.day: '25:00' is not a time"),
        (('name = "main"', 'name = "main room"'), r"\[room\] name: 'main room'"),
        (("grace = 2.0", "grace = -1"), r"\[gaps\] grace: must be in \[0, 3600\]"),
        (("port = 8883", 'port = "8883"'), r"\[broker\] port: expected an integer"),
        (
            ('path = "/var/lib/tablectl/room.db"', 'url = "mysql://x"'),
            r"\[database\] url: 'mysql://x': expected postgresql://",
        ),
    ],
)
def test_a_wrong_key_or_value_is_refused_by_name(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    text = EXAMPLE.read_text()
    assert edit[0] in text
    with pytest.raises(ConfigError, match=message):
        load_room_config(_example(tmp_path, text.replace(edit[0], edit[1], 1)))


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("short\n")
    text = EXAMPLE.read_text().replace(
        '# token_file = "/etc/tablectl/room-token"', f'token_file = "{tmp_path / "token"}"'
    )
    with pytest.raises(ConfigError, match=r"token must be 16\+ characters"):
        load_room_config(_example(tmp_path, text))
