"""A journal that fails stops the table visibly: presses refused, the fault lamp lit, an alert.

The daemon runs in this process on its simulated devices (reader boards on real ptys, the
simulated GPIO bank with its control socket) and a real mosquitto. The journal's writes
really fail: its file descriptor is made to point at /dev/full, so the kernel answers
every write with ENOSPC, as a full SD card does.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config
from controller.daemon import Daemon
from drivers.gpio.sim import send_control
from kernel.inputs import ButtonPress
from tests.broker import Mosquitto, Subscriber
from tests.table_rig import poll

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"
SHUFFLER, FAULT_LAMP = 4, 11  # examples/sim-table.toml [pins]


@pytest.fixture
def table(tmp_path: Path, mosquitto: Mosquitto) -> Iterator[tuple[Daemon, Subscriber, Path]]:
    config = load_config(EXAMPLE)
    sock = tmp_path / "gpio.sock"
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal"),
        gpio=dataclasses.replace(config.gpio, sim_socket=sock),
    )
    room = Subscriber(mosquitto, f"{PREFIX}/#")
    daemon = Daemon(config, broker=mosquitto.broker_config(prefix=PREFIX, client_id="tablectl-t01"))
    daemon.start()
    try:
        yield daemon, room, sock
    finally:
        daemon.stop()
        room.close()


def _press(sock: Path, pin: int) -> tuple[str, str]:
    """Press and release a button through the GPIO control socket: both answers."""
    return send_control(sock, f"press {pin}"), send_control(sock, f"release {pin}")


def _alerts(room: Subscriber, kind: str) -> list[dict[str, Any]]:
    alerts = [json.loads(m.payload) for m in room.messages(f"{PREFIX}/alerts")]
    return [a for a in alerts if a["type"] == kind]


def test_presses_are_refused_and_the_fault_lamp_lit_once_the_journal_has_failed(
    table: tuple[Daemon, Subscriber, Path],
) -> None:
    daemon, room, sock = table
    assert send_control(sock, f"level {FAULT_LAMP}") == "0"
    journal = daemon.journal
    assert journal is not None
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        os.dup2(full, journal._fh.fileno())  # type: ignore[attr-defined]
    finally:
        os.close(full)

    # The press the journal cannot take: the GPIO bank took it, the table lost it. (Another
    # device's report may reach the journal first: then the table is stopped before the
    # press, which is refused at once; either way no press is lost without a word.)
    reply = send_control(sock, f"press {SHUFFLER}")
    assert poll(lambda: daemon.failed is not None, 10), "the journal never failed"
    assert poll(lambda: bool(_alerts(room, "journal_failed")), 10)
    [alert] = _alerts(room, "journal_failed")
    assert alert["severity"] == "critical" and alert["stopped"] is True
    assert alert["message"].startswith("the table is stopped: journal ")
    if reply == "ok":
        assert alert["presses_not_taken"] == ["shuffler"], "the lost press is not told"
    else:
        assert reply.startswith("refused: the table is stopped: journal failed"), reply
        assert alert["presses_not_taken"] == []

    # From now on the GPIO layer answers that nothing is taken, and the fault lamp is lit.
    assert send_control(sock, f"release {SHUFFLER}") == "ok"  # a finger may let go
    press, release = _press(sock, SHUFFLER)
    assert press.startswith("refused: the table is stopped: journal failed")
    assert release == "ok"
    queued = list(daemon.queue.queue)  # other devices may still report; no press may wait
    assert not [i for i in queued if isinstance(i, ButtonPress)], "a refused press was queued"
    assert send_control(sock, f"level {FAULT_LAMP}") == "1"
    assert daemon.devices.lamps is not None and daemon.devices.lamps.is_on("fault")
    # Later reader news does not put the lamp out while the table is stopped.
    daemon.devices.note_alert("reader_reconnected", {"reader": "card_reader"})
    assert send_control(sock, f"level {FAULT_LAMP}") == "1"
