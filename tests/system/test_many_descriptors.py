"""A table whose every descriptor is numbered above 1023 (`select()` cannot take them)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.registry import load_deck
from controller.trace import ButtonPress, Command
from tests.broker import Mosquitto, Subscriber

pytestmark = pytest.mark.timeout(90)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"


@contextlib.contextmanager
def high_descriptors() -> Iterator[None]:
    """Every descriptor opened from now on is numbered 1024 or more (as in a process that
    holds a room of simulated tables: `tablectl sim --tables 64` held 1,411)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"the hard limit on open files is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    filler: list[int] = []
    try:
        while True:
            fd = os.open(os.devnull, os.O_RDONLY)
            filler.append(fd)
            if fd >= 1100:
                break
        yield
    finally:
        for fd in filler:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_table_reads_and_publishes_on_descriptors_above_1023(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = load_config(EXAMPLE)
    config = dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t.journal")
    )
    tv = Subscriber(mosquitto, f"{PREFIX}/holecards")  # the test's own client: below 1024
    with high_descriptors():
        daemon = Daemon(config, broker=mosquitto.broker_config(prefix=PREFIX))
        daemon.start()
        try:
            _play_one_card(daemon, config, tv)
        finally:
            daemon.stop()
            tv.close()


def _play_one_card(daemon: Daemon, config: Config, tv: Subscriber) -> None:
    """A hand started, a hole card on seat 1's antenna: it reaches TV."""
    reader = daemon.devices.readers[0]
    assert reader.wait_synced(15.0), "the card board was never read"
    serial_port = reader._serial
    assert serial_port is not None and serial_port.fd is not None and serial_port.fd > 1023
    for seat in (1, 2):
        daemon.submit(Command(0.0, "seat", {"seat": seat, "player": f"P{seat}", "stack": 500}))
    daemon.submit(Command(0.0, "level", {"small_blind": 5, "big_blind": 10, "ante": 0}))
    daemon.submit(ButtonPress(daemon.now(), "shuffler"))
    assert config.registries.deck is not None
    uid = load_deck(config.registries.deck).uid_of("As")
    board = daemon.devices.sim_boards["card_reader"]
    assert board.place("seat1", uid)
    assert tv.wait_for(lambda ms: len(ms) >= 1, 15), "no hole card reached TV"
    payload = json.loads(tv.messages()[0].payload)
    assert payload["seat"] == 1
    assert daemon.publisher is not None
    sock = daemon.publisher._client.socket()
    assert sock is not None and sock.fileno() > 1023  # published from a high descriptor
