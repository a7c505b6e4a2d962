"""A table whose every descriptor is numbered above 1023 (`select()` cannot take them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.broker import Mosquitto, Subscriber

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "poker/sim/t01"

#: The table in a process of its own whose descriptors 0..1100 are taken first (as in a
#: process that holds a room of simulated tables: `tablectl sim --tables 64` held 1,411),
#: so everything the table opens is numbered above 1023.
TABLE = """
import dataclasses, json, os, resource, sys, time
from pathlib import Path
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), hard))
while os.open(os.devnull, os.O_RDONLY) < 1100:
    pass
from controller.config import load_config
from controller.daemon import Daemon
from controller.registry import load_deck
from kernel.inputs import ButtonPress, Command
from tests.broker import Mosquitto
config = load_config(Path("examples/sim-table.toml"))
config = dataclasses.replace(
    config, journal=dataclasses.replace(config.journal, path=Path(sys.argv[1]))
)
broker = dataclasses.replace(
    config.broker, host="127.0.0.1", port=int(sys.argv[2]), prefix=sys.argv[3]
)
daemon = Daemon(config, broker=broker)
daemon.start()
reader = daemon.devices.readers[0]
assert reader.wait_synced(15.0), "the card board was never read"
for seat in (1, 2):
    daemon.submit(Command(0.0, "seat", {"seat": seat, "player": f"P{seat}", "stack": 500}))
daemon.submit(Command(0.0, "level", {"small_blind": 5, "big_blind": 10, "ante": 0}))
daemon.submit(ButtonPress(daemon.now(), "shuffler"))
uid = load_deck(config.registries.deck).uid_of("As")
assert daemon.devices.sim_boards["card_reader"].place("seat1", uid)
sock = None
for _ in range(100):
    sock = daemon.publisher._client.socket()
    if sock is not None:
        break
    time.sleep(0.05)
print(json.dumps({"serial": reader._serial.fd, "mqtt": sock.fileno()}), flush=True)
sys.stdin.read()  # until the test has seen the hole card
daemon.stop()
"""


def test_a_table_reads_and_publishes_on_descriptors_above_1023(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    tv = Subscriber(mosquitto, f"{PREFIX}/holecards")
    table = subprocess.Popen(
        [sys.executable, "-c", TABLE, str(tmp_path / "t.journal"), str(mosquitto.port), PREFIX],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert table.stdout is not None and table.stdin is not None
        line = table.stdout.readline()
        assert line, "the table did not start"
        fds = json.loads(line)
        assert fds["serial"] > 1023 and fds["mqtt"] > 1023  # read and published up there
        assert tv.wait_for(lambda ms: len(ms) >= 1, 15), "no hole card reached TV"
        assert json.loads(tv.messages()[0].payload)["seat"] == 1
        table.stdin.close()
        assert table.wait(30) == 0
    finally:
        if table.poll() is None:
            table.kill()
        tv.close()
