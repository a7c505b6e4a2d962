"""The badge reader interface: backend factory, the simulated reader, lazy pyscard import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.backends import backend_names, create_backend
from drivers.badge import BadgeReader
from drivers.badge.sim import SimBadgeReader
from kernel.errors import ConfigError, DeviceError, TableError

ROOT = Path(__file__).resolve().parents[2]
MARIA = "04A1B2C3D4E5F6"
LUCA = "04B2C3D4E5F607"


class Log:
    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def kw(self) -> dict[str, Any]:
        return {
            "on_badge": lambda uid, removed: self.items.append(("badge", uid, removed)),
            "on_device": lambda state: self.items.append(("device", state)),
            "on_alert": lambda kind, msg, details: self.items.append(("alert", kind)),
        }


def sim(log: Log) -> SimBadgeReader:
    reader = create_backend("badge_reader", "sim", **log.kw())
    assert isinstance(reader, SimBadgeReader)
    reader.start()
    return reader


def test_backends_by_name() -> None:
    assert backend_names("badge_reader") == ("sim", "pcsc")
    assert isinstance(create_backend("badge_reader", "sim", **Log().kw()), BadgeReader)
    with pytest.raises(ConfigError, match=r"unknown badge reader backend 'nfc'.*sim, pcsc"):
        create_backend("badge_reader", "nfc", **Log().kw())
    assert issubclass(ConfigError, TableError)


def test_present_and_remove_are_one_arrival_and_one_removal() -> None:
    log = Log()
    reader = sim(log)
    reader.present(MARIA.lower())
    reader.present(MARIA)  # still on the reader: not a second arrival
    reader.remove()
    reader.remove()  # nothing on it any more
    assert log.items == [("badge", MARIA, False), ("badge", MARIA, True)]


def test_another_badge_replaces_the_first() -> None:
    log = Log()
    reader = sim(log)
    reader.present(MARIA)
    reader.present(LUCA)
    reader.tap(MARIA)
    assert log.items == [
        ("badge", MARIA, False),
        ("badge", MARIA, True),
        ("badge", LUCA, False),
        ("badge", LUCA, True),
        ("badge", MARIA, False),
        ("badge", MARIA, True),
    ]


def test_unplug_and_plug_report_the_device_and_read_the_badge_again() -> None:
    log = Log()
    reader = sim(log)
    reader.present(MARIA)
    reader.unplug()
    reader.unplug()  # only changes are reported
    reader.present(LUCA)  # laid on a reader that is away: nothing seen
    reader.plug()
    assert log.items == [
        ("badge", MARIA, False),
        ("badge", MARIA, True),
        ("device", "offline"),
        ("device", "online"),
        ("badge", LUCA, False),
    ]


def test_nothing_is_reported_while_stopped_and_a_lying_badge_is_read_at_start() -> None:
    log = Log()
    reader = create_backend("badge_reader", "sim", **log.kw())
    assert isinstance(reader, SimBadgeReader)
    reader.present(MARIA)
    assert log.items == []
    reader.start()
    assert log.items == [("badge", MARIA, False)]
    reader.stop()
    reader.remove()
    assert log.items == [("badge", MARIA, False)]


@pytest.mark.parametrize("uid", ["", "0", "ABC", "XYZ1", "00" * 21, "04 A1"])
def test_a_bad_uid_is_refused(uid: str) -> None:
    with pytest.raises(DeviceError, match="bad uid"):
        sim(Log()).present(uid)


def test_a_failing_callback_does_not_break_the_reader() -> None:
    seen: list[str] = []

    def on_badge(uid: str, removed: bool) -> None:
        seen.append(uid)
        raise RuntimeError("consumer bug")

    reader = create_backend(
        "badge_reader", "sim", on_badge=on_badge, on_device=print, on_alert=print
    )
    reader.start()
    assert isinstance(reader, SimBadgeReader)
    reader.present(MARIA)
    reader.present(LUCA)
    assert seen == [MARIA, MARIA, LUCA]


def test_the_sim_backend_never_imports_pyscard() -> None:
    code = (
        "import sys\n"
        "from controller.backends import create_backend\n"
        "r = create_backend('badge_reader', 'sim',\n"
        "                   on_badge=print, on_device=print, on_alert=print)\n"
        "r.start(); r.present('0102'); r.remove(); r.stop()\n"
        "assert 'smartcard' not in sys.modules, sorted(sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_pcsc_backend_without_pyscard_says_what_to_install(tmp_path: Path) -> None:
    # A `smartcard` package that fails to import stands for pyscard not being installed.
    (tmp_path / "smartcard").mkdir()
    (tmp_path / "smartcard" / "__init__.py").write_text("raise ImportError('no pyscard')\n")
    code = (
        "from controller.backends import create_backend\n"
        "from kernel.errors import DeviceError\n"
        "try:\n"
        "    create_backend('badge_reader', 'pcsc',\n"
        "                   on_badge=print, on_device=print, on_alert=print)\n"
        "except DeviceError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "needs pyscard" in result.stdout and "pip install" in result.stdout
