"""Device backends by name (controller/backends.py): one table for readers, GPIO and badge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.backends import BACKENDS, backend_names, create_backend
from controller.config import ReaderConfig, load_config
from controller.devices import SerialBoard, open_board
from kernel.errors import ConfigError, DeviceError

ROOT = Path(__file__).resolve().parents[2]
ANTENNAS = ("seat1", "seat2", "board", "burn", "muck")


def test_every_backend_in_the_table_names_an_importable_maker() -> None:
    """A typo in the table would only show on the table that chooses that backend."""
    code = (
        "import importlib, sys\n"
        "from controller.backends import BACKENDS\n"
        "for kinds in BACKENDS.values():\n"
        "    for target in kinds.values():\n"
        "        module, attribute = target.split(':')\n"
        "        try:\n"
        "            found = importlib.import_module(module)\n"
        "        except ImportError:\n"
        "            continue\n"
        "        assert callable(getattr(found, attribute)), target\n"
        "print(sorted(BACKENDS))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['badge_reader', 'gpio', 'reader']"
    assert {kind: backend_names(kind) for kind in BACKENDS} == {
        "reader": ("sim", "sim-field", "serial"),
        "gpio": ("sim", "rpi"),
        "badge_reader": ("sim", "pcsc"),
    }


@pytest.mark.parametrize("kind", sorted(BACKENDS))
def test_an_unknown_backend_is_a_config_error_listing_the_known_ones(kind: str) -> None:
    with pytest.raises(ConfigError) as info:
        create_backend(kind, "warp")
    message = str(info.value)
    assert "'warp'" in message and ", ".join(backend_names(kind)) in message


@pytest.mark.parametrize(
    ("section", "kind"),
    [
        ("card_reader", "reader"),
        ("chip_reader", "reader"),
        ("gpio", "gpio"),
        ("badge_reader", "badge_reader"),
    ],
)
def test_the_table_file_accepts_exactly_the_backends_of_the_table(
    tmp_path: Path, section: str, kind: str
) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        f'[table]\nid = "t1"\nroom = "r"\nseats = 6\n\n[devices.{section}]\nbackend = "warp"\n'
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "'warp' is not one of" in str(info.value)
    for name in backend_names(kind):
        assert name in str(info.value)


def test_the_serial_reader_backend_is_the_configured_port() -> None:
    link = open_board(
        "card_reader", ReaderConfig("serial", "/dev/ttyUSB7", 115200, ANTENNAS), kind="card"
    )
    assert link == SerialBoard("/dev/ttyUSB7")
    link.stop()  # nothing to release


def test_the_serial_reader_backend_without_a_port_names_the_reader() -> None:
    with pytest.raises(DeviceError, match="chip_reader: no serial port configured"):
        open_board("chip_reader", ReaderConfig("serial", None, 115200, ANTENNAS), kind="chip")
