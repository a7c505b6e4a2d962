"""`tablectl tv --config FILE`: the strict TOML file, and the command with a real broker."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from broadcast.config import load_tv_config
from kernel.errors import ConfigError
from tests.broker import Mosquitto, free_port
from tests.tv_rig import wait_until

pytestmark = pytest.mark.timeout(90)
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tv.toml"

BASE = """
[tv]
delay = 12.5

[broker]
host = "127.0.0.1"

[[tables]]
id = "t01"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tv.toml"
    path.write_text(text)
    return path


def test_the_example_file_loads(tmp_path: Path) -> None:
    (tmp_path / "mosquitto" / "certs").mkdir(parents=True)
    (tmp_path / "mosquitto" / "certs" / "ca.crt").write_text("not read here\n")
    (tmp_path / "tv-credentials.toml").write_text('username = "tv"\npassword = "tv-secret"\n')
    (tmp_path / "tv-credentials.toml").chmod(0o600)
    config = load_tv_config(write(tmp_path, EXAMPLE.read_text()))
    assert config.delay == 30.0 and config.port == 8088 and config.true_outs is True
    assert config.broker.tls and config.broker.username == "tv"
    assert config.broker.client_id == "tv"  # its identity: the broker kit binds the two
    assert [(t.id, t.prefix, t.label) for t in config.tables] == [
        ("t01", "poker/sim/t01", "Feature table")
    ]


def test_defaults(tmp_path: Path) -> None:
    config = load_tv_config(write(tmp_path, BASE))
    assert config.delay == 12.5 and config.listen == "127.0.0.1"
    assert config.broker.port == 1883 and config.broker.client_id == "tablectl-tv"
    assert config.control_token is None
    assert config.tables[0].prefix == "poker/main/t01"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("delay = 12.5", "dealy = 12.5"),
            r"unknown key 'dealy' in \[tv\] \(did you mean 'delay'\?\)",
        ),
        (("delay = 12.5", "delay = -1"), r"\[tv\] delay: -1 is out of range"),
        (("delay = 12.5", "delay = 7200"), r"\[tv\] delay: 7200 is out of range"),
        (("delay = 12.5", 'delay = "30"'), r"\[tv\] delay: expected a number, got a string"),
        (("delay = 12.5", 'listen = "my laptop"'), r"\[tv\] listen: 'my laptop' is not an IP"),
        (("delay = 12.5", "port = 0"), r"\[tv\] port: 0 is out of range"),
        (("delay = 12.5", "true_outs = 1"), r"\[tv\] true_outs: expected a boolean"),
        (
            ('host = "127.0.0.1"', 'host = "x"\npassword = "y"'),
            r"unknown key 'password' in \[broker\]",
        ),
        (('host = "127.0.0.1"', "port = 1883"), r"\[broker\] host: missing \(required\)"),
        (
            ('host = "127.0.0.1"', 'host = "x"\nca_file = "tv.toml"'),
            r"\[broker\] ca_file: given but tls = false",
        ),
        (('id = "t01"', 'id = "t 01"'), r"\[tables #1\] id: 't 01': only letters"),
        (
            ('id = "t01"', 'id = "t01"\n[[tables]]\nid = "t01"'),
            r"\[tables #2\] id: table 't01' is listed twice",
        ),
        (
            ('id = "t01"', 'id = "t01"\nprefix = "poker/+/t01"'),
            r"\[tables #1\] prefix: .* no wildcard",
        ),
        (('id = "t01"', 'id = "t01"\nseats = 9'), r"unknown key 'seats' in \[tables #1\]"),
        (('[[tables]]\nid = "t01"', ""), r"\[\[tables\]\]: at least one table is required"),
        (("[tv]", "[television]"), r"unknown section \[television\]"),
    ],
)
def test_bad_files_are_refused_naming_the_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_tv_config(write(tmp_path, BASE.replace(*change)))


def test_a_short_control_token_is_refused(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("short\n")
    text = BASE.replace("delay = 12.5", 'control_token_file = "token"')
    with pytest.raises(ConfigError, match=r"control_token_file: .* 16 characters"):
        load_tv_config(write(tmp_path, text))
    (tmp_path / "token").write_text("0123456789abcdef0123\n")
    assert load_tv_config(write(tmp_path, text)).control_token == "0123456789abcdef0123"


def tablectl(*args: str) -> list[str]:
    return [sys.executable, "-m", "tablectl.cli", *args]


def test_tablectl_tv_refuses_a_bad_file(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("delay = 12.5", "delay = -5"))
    done = subprocess.run(
        tablectl("tv", "--config", str(path)), capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 2
    assert re.search(r"tv\.toml: \[tv\] delay: -5 is out of range", done.stderr)


def test_tablectl_tv_serves_the_pages_as_tv_over_tls(
    tmp_path: Path, mosquitto_room: Mosquitto
) -> None:
    assert mosquitto_room.tls is not None
    (tmp_path / "cred.toml").write_text('username = "tv"\npassword = "tv-secret"\n')
    (tmp_path / "cred.toml").chmod(0o600)
    port = free_port()
    path = write(
        tmp_path,
        f"""
[tv]
delay = 30
port = {port}

[broker]
host = "localhost"
port = {mosquitto_room.port}
tls = true
ca_file = "{mosquitto_room.tls.ca_file}"
credentials_file = "cred.toml"

[[tables]]
id = "t01"
label = "Feature table"
""",
    )
    proc = subprocess.Popen(
        tablectl("tv", "--config", str(path)),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def status() -> dict[str, object] | None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/status", timeout=2)
            except httpx.HTTPError:
                return None
            data: dict[str, object] = answer.json()
            return data

        assert wait_until(
            lambda: (s := status()) is not None and s["broker_connected"] is True, timeout=30
        ), proc.stdout.read() if proc.poll() is not None else ""
        page = httpx.get(f"http://127.0.0.1:{port}/overlay/t01", timeout=5)
        assert page.status_code == 200 and "Feature table" in page.text
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, output
    assert "overlay http://127.0.0.1" in output and "secure delay 30 s" in output


def test_tablectl_tv_says_its_port_is_taken_and_never_moves(tmp_path: Path) -> None:
    import socket

    port = free_port()
    path = write(tmp_path, BASE.replace("[tv]\n", f"[tv]\nport = {port}\n", 1))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = subprocess.run(
            tablectl("tv", "--config", str(path)),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    assert done.returncode == 2
    assert f"the TV pages cannot listen on 127.0.0.1:{port}" in done.stderr
