"""GPIO drivers: simulated pin bank, backend factory, RPi.GPIO wrapper, table buttons and lamps."""

from __future__ import annotations

import itertools
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from controller.backends import create_backend
from drivers.gpio import Lamps, PinPlan, TableButtons
from drivers.gpio.rpi import RpiBackend
from drivers.gpio.sim import ManualClock, SimBackend, send_control
from kernel.errors import ConfigError, DeviceError, TableError
from kernel.inputs import ButtonPress

SHUFFLER, CHECK, MISDEAL, FLOOR_BTN = 17, 27, 22, 23
ALLIN = {1: 5, 4: 13, 9: 26}
LAMP_FLOOR, LAMP_PENDING, LAMP_FAULT = 18, 10, 11
ALLIN_LAMPS = {1: 7, 4: 8}


def table_config(**overrides: Any) -> PinPlan:
    values: dict[str, Any] = {
        "shuffler": SHUFFLER,
        "panel": {"check": CHECK, "misdeal": MISDEAL, "floor": FLOOR_BTN},
        "allin_buttons": dict(ALLIN),
        "allin_lamps": dict(ALLIN_LAMPS),
        "lamps": {"floor": LAMP_FLOOR, "pending": LAMP_PENDING, "fault": LAMP_FAULT},
        "bounce_ms": 50,
    }
    values.update(overrides)
    return PinPlan(**values)


class Table:
    """A simulated table: clock, pin bank, buttons, lamps and the events they produced."""

    def __init__(self, config: PinPlan | None = None) -> None:
        self.clock = ManualClock(100.0)
        self.sim = SimBackend(clock=self.clock)
        self.events: list[ButtonPress] = []
        self.config = config or table_config()
        self.buttons = TableButtons(self.sim, self.config, self.events.append, self.clock)
        self.lamps = Lamps(self.sim, self.config)

    def tap(self, pin: int, hold: float = 0.2) -> None:
        self.sim.press(pin)
        self.clock.advance(hold)
        self.sim.release(pin)


# -- the backends by name (controller/backends.py) ---------------------------------------


def test_backend_sim_passes_keywords() -> None:
    clock = ManualClock(5.0)
    backend = create_backend("gpio", "sim", clock=clock)
    assert isinstance(backend, SimBackend)
    backend.setup_output(4, initial=True)
    assert backend.history(4) == [(5.0, True)]


@pytest.mark.parametrize("name", ["nope", "RPI", ""])
def test_backend_unknown_name_is_a_config_error_naming_it(name: str) -> None:
    with pytest.raises(ConfigError, match=repr(name)) as info:
        create_backend("gpio", name)
    assert "rpi" in str(info.value) and "sim" in str(info.value)


@pytest.mark.skipif("RPi" in sys.modules, reason="RPi.GPIO is importable here")
def test_backend_rpi_off_a_pi_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # Make sure no RPi.GPIO can be found even if some package provides one.
    monkeypatch.setitem(sys.modules, "RPi", None)
    with pytest.raises(DeviceError) as info:
        create_backend("gpio", "rpi")
    message = str(info.value)
    assert "RPi.GPIO" in message and "rpi-lgpio" in message
    assert isinstance(info.value, TableError)


def test_importing_the_package_does_not_import_rpi_gpio() -> None:
    assert "RPi.GPIO" not in sys.modules


# -- the simulated pin bank ---------------------------------------------------------------


def test_sim_inputs_idle_at_their_pull() -> None:
    sim = SimBackend(clock=ManualClock())
    sim.setup_input(4, pull_up=True)
    sim.setup_input(5, pull_up=False)
    assert sim.read(4) is True
    assert sim.read(5) is False
    sim.press(4)
    assert sim.read(4) is False
    sim.release(4)
    assert sim.read(4) is True


def test_sim_output_level_and_history() -> None:
    clock = ManualClock(1.0)
    sim = SimBackend(clock=clock)
    sim.setup_output(18)
    clock.advance(0.5)
    sim.write(18, True)
    clock.advance(0.5)
    sim.write(18, True)  # no change, no history entry
    sim.write(18, False)
    assert sim.level(18) is False
    assert sim.history(18) == [(1.0, False), (1.5, True), (2.0, False)]


def test_sim_edges_fire_callbacks_by_direction() -> None:
    sim = SimBackend(clock=ManualClock())
    seen: dict[str, list[int]] = {"falling": [], "rising": [], "both": []}
    for pin, edge in ((4, "falling"), (5, "rising"), (6, "both")):
        sim.setup_input(pin)
        sim.add_edge_callback(pin, edge, seen[edge].append)  # type: ignore[arg-type]
    for pin in (4, 5, 6):
        sim.press(pin)
        sim.press(pin)  # same level again: no edge
        sim.release(pin)
    assert seen == {"falling": [4], "rising": [5], "both": [6, 6]}


def test_sim_bounce_ms_drops_edges_close_to_the_last_reported_one() -> None:
    clock = ManualClock()
    sim = SimBackend(clock=clock)
    sim.setup_input(4)
    fired: list[float] = []
    sim.add_edge_callback(4, "both", lambda pin: fired.append(clock()), bounce_ms=10)
    sim.bounce(4, 3, spacing_ms=1.0)  # 7 edges over 6 ms
    assert fired == [0.0]
    assert sim.read(4) is False
    clock.advance(0.1)
    sim.release(4)
    assert fired == [0.0, pytest.approx(0.106)]


def test_sim_bounce_settles_and_takes_time() -> None:
    clock = ManualClock()
    sim = SimBackend(clock=clock)
    sim.setup_input(4)
    sim.bounce(4, 2, spacing_ms=2.0)
    levels = [level for _, level in sim.history(4)]
    assert levels == [True, False, True, False, True, False]
    assert clock() == pytest.approx(0.008)
    sim.bounce(4, 1, settle=False)  # a glitch: away and back
    assert sim.read(4) is False
    assert [level for _, level in sim.history(4)][-2:] == [True, False]


def test_sim_misuse_raises_device_error() -> None:
    sim = SimBackend(clock=ManualClock())
    sim.setup_input(4)
    sim.setup_output(18)
    with pytest.raises(DeviceError, match="GPIO5 is not configured"):
        sim.read(5)
    with pytest.raises(DeviceError, match="GPIO4 is an input"):
        sim.write(4, True)
    with pytest.raises(DeviceError, match="already an input"):
        sim.setup_output(4)
    with pytest.raises(DeviceError, match="already an output"):
        sim.setup_input(18)
    with pytest.raises(DeviceError, match="output"):
        sim.add_edge_callback(18, "both", lambda pin: None)
    with pytest.raises(DeviceError, match="output"):
        sim.press(18)
    with pytest.raises(DeviceError, match="edge"):
        sim.add_edge_callback(4, "sideways", lambda pin: None)  # type: ignore[arg-type]
    sim.add_edge_callback(4, "falling", lambda pin: None)
    with pytest.raises(DeviceError, match="already has edge detection"):
        sim.add_edge_callback(4, "rising", lambda pin: None)
    with pytest.raises(DeviceError, match="does not exist"):
        sim.setup_input(40)
    with pytest.raises(DeviceError, match="BCM number"):
        sim.setup_input(-1)


def test_sim_same_mode_twice_is_allowed() -> None:
    sim = SimBackend(clock=ManualClock())
    sim.setup_input(4)
    sim.setup_input(4)
    sim.setup_output(18, initial=False)
    sim.setup_output(18, initial=True)
    assert sim.read(18) is True
    assert sim.configured() == {4: "in", 18: "out"}


def test_sim_close_releases_everything() -> None:
    with SimBackend(clock=ManualClock()) as sim:
        sim.setup_output(18)
    with pytest.raises(DeviceError, match="closed"):
        sim.read(18)
    with pytest.raises(DeviceError, match="closed"):
        sim.setup_input(4)
    sim.close()  # idempotent


def test_sim_is_thread_safe() -> None:
    sim = SimBackend()  # real clock
    sim.setup_input(4)
    count: list[int] = []
    lock = threading.Lock()

    def on_edge(pin: int) -> None:
        with lock:
            count.append(pin)

    sim.add_edge_callback(4, "both", on_edge)

    def toggle() -> None:
        for _ in range(500):
            sim.set_input(4, False)
            sim.set_input(4, True)

    threads = [threading.Thread(target=toggle) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    history = sim.history(4)
    # Every recorded change alternates, and each one fired exactly one callback.
    assert all(a[1] != b[1] for a, b in itertools.pairwise(history))
    assert len(count) == len(history) - 1
    assert sim.read(4) is True


# -- table buttons ------------------------------------------------------------------------


def test_presses_become_button_events_in_order_with_the_clock() -> None:
    table = Table()
    for pin in (SHUFFLER, CHECK, ALLIN[4], MISDEAL, ALLIN[9]):
        table.tap(pin, hold=0.25)
        table.clock.advance(0.5)
    assert table.events == [
        ButtonPress(t=100.0, name="shuffler"),
        ButtonPress(t=100.75, name="check"),
        ButtonPress(t=101.5, name="allin", seat=4),
        ButtonPress(t=102.25, name="misdeal"),
        ButtonPress(t=103.0, name="allin", seat=9),
    ]


def test_buttons_are_pulled_up_inputs() -> None:
    table = Table()
    for pin in (SHUFFLER, CHECK, MISDEAL, FLOOR_BTN, *ALLIN.values()):
        assert table.sim.configured()[pin] == "in"
        assert table.sim.read(pin) is True
    assert table.buttons.pins()[ALLIN[1]] == ("allin", 1)
    assert table.buttons.pins()[FLOOR_BTN] == ("floor", None)


def test_contact_bounce_on_press_and_release_gives_one_press() -> None:
    table = Table()
    table.sim.bounce(SHUFFLER, 4)  # press, chattering over 8 ms
    table.clock.advance(3.0)  # held well past the bounce window
    table.sim.bounce(SHUFFLER, 4)  # release, chattering again
    table.clock.advance(1.0)
    table.sim.bounce(SHUFFLER, 2)
    assert [(e.name, e.t) for e in table.events] == [
        ("shuffler", 100.0),
        ("shuffler", pytest.approx(104.016)),  # 8 ms of press bounce + 3 s + 8 ms + 1 s
    ]


def test_a_glitch_while_held_is_not_a_second_press() -> None:
    table = Table()
    table.sim.press(CHECK)
    table.clock.advance(1.0)
    table.sim.bounce(CHECK, 2, settle=False)  # contact opens briefly under the finger
    table.clock.advance(1.0)
    table.sim.release(CHECK)
    assert [e.name for e in table.events] == ["check"]


def test_a_held_button_produces_one_press() -> None:
    table = Table()
    table.sim.press(ALLIN[1])
    for _ in range(30):
        table.clock.advance(1.0)
        table.sim.press(ALLIN[1])  # still low: no new edge
    table.sim.release(ALLIN[1])
    assert table.events == [ButtonPress(t=100.0, name="allin", seat=1)]


def test_quick_taps_count_when_the_release_was_steady() -> None:
    table = Table()
    for _ in range(3):
        table.tap(CHECK, hold=0.03)  # shorter than the bounce window
        table.clock.advance(0.06)  # released longer than the window
    table.tap(CHECK, hold=0.03)
    table.clock.advance(0.01)  # re-pressed 10 ms after release: bounce, not a press
    table.tap(CHECK, hold=0.03)
    assert len(table.events) == 4


def test_button_held_at_startup_does_not_press_until_released() -> None:
    clock = ManualClock()
    sim = SimBackend(clock=clock)
    sim.setup_input(SHUFFLER)
    sim.press(SHUFFLER)  # someone leans on it while the daemon starts
    events: list[ButtonPress] = []
    buttons = TableButtons(sim, PinPlan(shuffler=SHUFFLER), events.append, clock)
    clock.advance(1.0)
    sim.release(SHUFFLER)
    assert events == []
    clock.advance(1.0)
    sim.press(SHUFFLER)
    assert events == [ButtonPress(t=2.0, name="shuffler")]
    assert buttons.stuck() == []


def test_a_release_edge_never_reported_is_caught_from_the_pin_level() -> None:
    # The pin's level (physical) and the button's pressed/released state (logical) are kept
    # apart: a lost edge interrupt leaves them out of step, and the poll the daemon runs
    # every second (`stuck()`) puts the logical state back from the level.
    table = Table()
    table.sim.press(CHECK)
    table.clock.advance(0.2)
    table.sim.lose_next_edge(CHECK)
    table.sim.release(CHECK)  # the finger is off, but no callback said so
    table.clock.advance(0.5)
    assert table.sim.read(CHECK) is True
    table.tap(CHECK)  # taken for the same, still held, press: not counted
    assert [e.name for e in table.events] == ["check"]

    table.clock.advance(0.5)
    table.sim.press(CHECK)  # a real press again (its release edge came with the tap)
    table.clock.advance(0.2)
    table.sim.lose_next_edge(CHECK)
    table.sim.release(CHECK)
    table.clock.advance(0.5)
    assert table.buttons.stuck() == []  # the poll reads the level: released
    table.clock.advance(0.5)
    table.tap(CHECK)
    assert [e.name for e in table.events] == ["check", "check", "check"]


def test_stuck_button_is_reported_after_the_limit() -> None:
    table = Table()
    table.sim.press(MISDEAL)
    table.clock.advance(9.0)
    assert table.buttons.stuck() == []
    table.clock.advance(2.0)
    assert table.buttons.stuck() == [("misdeal", None)]
    table.sim.release(MISDEAL)
    assert table.buttons.stuck() == []


def test_buttons_only_config_sets_up_only_those_pins() -> None:
    clock = ManualClock()
    sim = SimBackend(clock=clock)
    TableButtons(sim, PinPlan(panel={"boxed": 6}), lambda e: None, clock)
    assert sim.configured() == {6: "in"}


def test_button_pin_used_twice_is_a_config_error() -> None:
    config = table_config(panel={"check": SHUFFLER})
    with pytest.raises(ConfigError, match="GPIO17 is used twice"):
        TableButtons(SimBackend(), config, lambda e: None, ManualClock())


def test_unknown_panel_button_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"pins\.panel\.coffee"):
        TableButtons(SimBackend(), PinPlan(panel={"coffee": 6}), lambda e: None, ManualClock())


def test_button_on_a_lamp_pin_is_a_device_error() -> None:
    clock = ManualClock()
    sim = SimBackend(clock=clock)
    Lamps(sim, PinPlan(lamps={"fault": 6}))
    with pytest.raises(DeviceError, match="GPIO6"):
        TableButtons(sim, PinPlan(panel={"boxed": 6}), lambda e: None, clock)


# -- lamps --------------------------------------------------------------------------------


def test_lamps_start_off_and_follow_set() -> None:
    table = Table()
    sim, lamps = table.sim, table.lamps
    assert all(sim.level(pin) is False for pin in (LAMP_FLOOR, LAMP_PENDING, LAMP_FAULT))
    lamps.set("floor", True)
    lamps.set("pending", True)
    assert sim.level(LAMP_FLOOR) is True
    assert sim.level(LAMP_PENDING) is True
    assert sim.level(LAMP_FAULT) is False
    assert lamps.is_on("floor") and not lamps.is_on("fault")
    table.clock.advance(2.0)
    lamps.set("floor", False)
    assert sim.history(LAMP_FLOOR) == [(100.0, False), (100.0, True), (102.0, False)]


def test_allin_lamps_and_all_off() -> None:
    table = Table()
    sim, lamps = table.sim, table.lamps
    lamps.set_allin(4, True)
    lamps.set("fault", True)
    assert sim.level(ALLIN_LAMPS[4]) is True
    assert sim.level(ALLIN_LAMPS[1]) is False
    assert lamps.is_on("allin4")
    lamps.all_off()
    assert all(not sim.level(pin) for pin in (*ALLIN_LAMPS.values(), LAMP_FAULT))
    assert not lamps.is_on("allin4")


def test_apply_switches_lamps_by_engine_name() -> None:
    table = Table()
    table.lamps.apply({"allin1": True, "allin4": False, "allin9": True, "pending": True})
    assert table.sim.level(ALLIN_LAMPS[1]) is True
    assert table.sim.level(ALLIN_LAMPS[4]) is False
    assert table.sim.level(LAMP_PENDING) is True
    assert table.lamps.available() == ["floor", "pending", "fault", "allin1", "allin4"]


def test_unconfigured_lamps_are_ignored_and_available_lists_the_others() -> None:
    clock = ManualClock()
    sim = SimBackend(clock=clock)
    lamps = Lamps(sim, PinPlan(lamps={"fault": 11}, allin_lamps={3: 7}))
    assert lamps.available() == ["fault", "allin3"]
    lamps.set("floor", True)  # not wired at this table
    lamps.set_allin(9, True)
    assert sim.configured() == {7: "out", 11: "out"}
    assert sim.level(7) is False and sim.level(11) is False
    assert not lamps.is_on("floor")


def test_lamp_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"pins\.lamps\.disco"):
        Lamps(SimBackend(), PinPlan(lamps={"disco": 4}))
    with pytest.raises(ConfigError, match="GPIO4 is used twice"):
        Lamps(SimBackend(), PinPlan(lamps={"fault": 4}, allin_lamps={1: 4}))


# -- the RPi.GPIO wrapper, against a stand-in for the library ------------------------------


class FakeGpio:
    """Records the RPi.GPIO calls the backend makes (the real library needs a Pi)."""

    BCM, IN, OUT, HIGH, LOW = "BCM", "IN", "OUT", 1, 0
    PUD_UP, PUD_DOWN = "PUD_UP", "PUD_DOWN"
    FALLING, RISING, BOTH = "FALLING", "RISING", "BOTH"

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            if name == "setup" and args[0] == 99:
                raise ValueError("The channel sent is invalid on a Raspberry Pi")
            return 0 if name == "input" else None

        return record


def test_rpi_backend_drives_the_library_with_bcm_numbers() -> None:
    gpio = FakeGpio()
    backend = RpiBackend(gpio=gpio)
    backend.setup_input(17, pull_up=True)
    backend.setup_output(18, initial=False)
    backend.add_edge_callback(17, "both", lambda pin: None, bounce_ms=0)
    backend.setup_input(27)
    backend.add_edge_callback(27, "falling", lambda pin: None, bounce_ms=50)
    backend.write(18, True)
    assert backend.read(17) is False
    backend.close()
    backend.close()
    names = [call[0] for call in gpio.calls]
    assert names[:2] == ["setwarnings", "setmode"] and gpio.calls[1][1] == ("BCM",)
    assert ("setup", (17, "IN"), {"pull_up_down": "PUD_UP"}) in gpio.calls
    assert ("setup", (18, "OUT"), {"initial": 0}) in gpio.calls
    detects = [call for call in gpio.calls if call[0] == "add_event_detect"]
    assert "bouncetime" not in detects[0][2]  # RPi.GPIO refuses bouncetime=0
    assert detects[1][2]["bouncetime"] == 50 and detects[1][1] == (27, "FALLING")
    assert ("output", (18, 1), {}) in gpio.calls
    assert [call for call in gpio.calls if call[0] == "cleanup"] == [
        ("cleanup", ([17, 18, 27],), {})
    ]


def test_rpi_backend_errors_are_device_errors() -> None:
    backend = RpiBackend(gpio=FakeGpio())
    with pytest.raises(DeviceError, match=r"GPIO99.*invalid"):
        backend.setup_input(99)
    with pytest.raises(DeviceError, match="not configured"):
        backend.read(99)
    backend.setup_input(4)
    with pytest.raises(DeviceError, match="input"):
        backend.write(4, True)
    with pytest.raises(DeviceError, match="already an input"):
        backend.setup_output(4)


def test_a_stopped_table_keeps_its_fault_lamp_driven_after_close() -> None:
    """Outputs kept at close are not cleaned up: RPi.GPIO leaves them driven after exit."""
    gpio = FakeGpio()
    backend = RpiBackend(gpio=gpio)
    backend.setup_input(4)
    backend.setup_output(11, initial=True)
    backend.setup_output(9)
    backend.close(keep=[11, 4])  # an input is never kept
    assert [call for call in gpio.calls if call[0] == "cleanup"] == [("cleanup", ([4, 9],), {})]


def test_refused_inputs_drop_presses_and_the_control_socket_says_so(tmp_path: Path) -> None:
    sock = tmp_path / "gpio.sock"
    sim = SimBackend(control_socket=sock)
    presses: list[ButtonPress] = []
    buttons = TableButtons(sim, PinPlan(shuffler=4, bounce_ms=0), presses.append, time.monotonic)
    assert send_control(sock, "press 4") == "ok" and send_control(sock, "release 4") == "ok"
    buttons.refuse("the table is stopped: journal failed")
    assert send_control(sock, "press 4") == "refused: the table is stopped: journal failed"
    assert sim.level(4) is True  # nothing was driven
    sim.press(4)  # a real contact still closes: the driver drops it
    assert send_control(sock, "release 4") == "ok"
    assert [p.name for p in presses] == ["shuffler"]
    sim.close()
