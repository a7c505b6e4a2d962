"""The table's devices on their simulated backends (controller/devices.py): reader boards on
real ptys, the simulated GPIO bank and badge reader, their inputs delivered to the sink."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.config import ReaderConfig, load_config
from controller.devices import Devices, open_board, reader_driver
from kernel.inputs import Badge, ButtonPress, Event, TagIn, TagOut

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
ANTENNAS = ("seat1", "seat2", "board", "burn", "muck")


class Sink:
    """Collects what the devices submit, as the daemon's queue would take it."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.items: list[tuple[str, Any]] = []

    def now(self) -> float:
        return 12.5

    def made_at(self, monotonic: float) -> float:
        return 12.5

    def real_time(self) -> bool:
        return False

    def _add(self, kind: str, item: Any) -> None:
        with self.cond:
            self.items.append((kind, item))
            self.cond.notify_all()

    def submit(self, event: Event) -> None:
        self._add("event", event)

    def submit_alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        self._add("alert", kind)

    def submit_device(self, name: str, state: str) -> None:
        self._add("device", (name, state))

    def submit_reader_event(self, name: str, event: TagIn | TagOut) -> None:
        self._add("tag", (name, event))

    def submit_catch_up(self, name: str, batch: list[tuple[TagIn | TagOut, float | None]]) -> None:
        for event, _when in batch:
            self._add("tag", (name, event))

    def wait(self, predicate: Callable[[list[tuple[str, Any]]], bool], timeout: float = 10) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.items), timeout)


def test_devices_open_on_their_backends_and_feed_the_sink() -> None:
    config = load_config(EXAMPLE)
    sink = Sink()
    devices = Devices(config, sink)
    devices.open({"seat1": ["04A1B2C3"], "bet1": ["05A1B2C3"]})
    try:
        assert sorted(devices.sim_boards) == ["card_reader", "chip_reader"]
        assert all(reader.wait_synced(10.0) for reader in devices.readers)
        # Each reader says it is online once it has read its board; the journal's tags are
        # on the simulated boards already, so nothing arrives for them.
        assert sink.wait(
            lambda items: (
                {i for k, i in items if k == "device"}
                == {("card_reader", "online"), ("chip_reader", "online")}
            )
        )
        assert not [i for k, i in sink.items if k == "tag"]
        devices.sim_boards["card_reader"].place("seat2", "04B2C3D4")
        assert sink.wait(
            lambda items: ("tag", ("card_reader", TagIn(12.5, "seat2", uid="04B2C3D4"))) in items
        )
        shuffler = config.gpio.shuffler
        assert shuffler is not None
        devices.gpio.press(shuffler)  # type: ignore[union-attr]
        devices.gpio.release(shuffler)  # type: ignore[union-attr]
        assert sink.wait(lambda items: ("event", ButtonPress(12.5, "shuffler")) in items)
        devices.sim_badge.tap("04A1B2C3D4E5F6")
        assert sink.wait(lambda items: ("event", Badge(12.5, "04A1B2C3D4E5F6", True)) in items)
    finally:
        devices.stop_inputs()
        devices.close()


def test_the_fault_lamp_shows_a_reader_that_is_not_answering() -> None:
    config = load_config(EXAMPLE)
    config = dataclasses.replace(config, badge=dataclasses.replace(config.badge, backend="none"))
    devices = Devices(config, Sink())
    devices.open({})
    gpio = devices.gpio
    lamps = config.gpio.lamps
    try:
        devices.note_alert("reader_silent", {"reader": "chip_reader"})
        devices.note_alert("reader_disconnected", {"reader": "card_reader"})
        assert gpio.level(lamps["fault"]) and devices.faulty == {"card_reader", "chip_reader"}  # type: ignore[union-attr]
        devices.note_alert("reader_recovered", {"reader": "chip_reader"})
        assert gpio.level(lamps["fault"])  # type: ignore[union-attr]
        devices.note_alert("reader_reconnected", {"reader": "card_reader"})
        assert not gpio.level(lamps["fault"]) and devices.faulty == set()  # type: ignore[union-attr]
        devices.show({"floor": True, "pending": False})
        assert gpio.level(lamps["floor"]) and not gpio.level(lamps["pending"])  # type: ignore[union-attr]
    finally:
        devices.stop_inputs()
        devices.close()
    assert devices.sim_badge is None and devices.badge_reader is None
    assert devices.lamps is not None and not devices.lamps.is_on("floor")  # all off


def test_the_simulated_reader_backend_is_a_board_on_a_pty_with_the_tags_given() -> None:
    """What the journal says is on the antennas is on the simulated board at start, and the
    driver reads it there (the firmware simulator, pyserial, a real pty)."""
    cfg = ReaderConfig("sim", None, 115200, ANTENNAS)
    link = open_board(
        "card_reader",
        cfg,
        kind="card",
        tags={"seat2": ["04A1B2C3", "04B2C3D4"], "pot": ["05000000"]},
    )
    seen: list[TagIn | TagOut] = []
    driver = reader_driver(
        link,
        cfg,
        on_event=seen.append,
        on_alert=lambda *_: None,
        clock=lambda: 0.0,
        name="card_reader",
    )
    try:
        assert os.path.exists(link.path)
        driver.start()
        assert driver.wait_synced(10.0)
        # The board's first inventory is the baseline: what lies there is reported as arrived.
        assert sorted((e.antenna, e.uid) for e in seen if isinstance(e, TagIn)) == [
            ("seat2", "04A1B2C3"),
            ("seat2", "04B2C3D4"),
        ]
    finally:
        driver.stop()
        link.stop()
