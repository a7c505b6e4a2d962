"""`tablectl antennas`: checking a board antenna by antenna, against the simulated board."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller.config import load_config

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "sim-table.toml"


def test_antennas_shows_live_which_antenna_reads_which_tag() -> None:
    antennas = load_config(CONFIG).card_reader.antennas
    seconds = 0.4 * len(antennas) + 2.5
    done = subprocess.run(
        [sys.executable, "-m", "tablectl.cli", "antennas", "--config", str(CONFIG),
         "--simulate", "--seconds", str(seconds)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = r"card_reader on /dev/pts/\d+: firmware tablesim-1.0, protocol 4, card board"
    assert re.match(header, lines[0]), lines[0]
    moves = [line.split() for line in lines if line[:1] in "+-"]
    # The ace of spades of the registered deck, carried across every antenna in port order.
    assert [(m[0], m[1], m[3]) for m in moves] == [
        (sign, antenna, "As") for antenna in antennas for sign in "+-"
    ]
    stamps = [float(m[-2]) for m in moves]  # "(board 1.234 s)": the board's own clock
    assert stamps == sorted(stamps) and stamps[-1] - stamps[0] > 0.3 * len(antennas)
    assert all(line.split()[1] == "-" for line in lines[-len(antennas):])  # all empty again


def test_antennas_refuses_simulate_on_a_real_board(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    text = CONFIG.read_text().replace(
        '[devices.card_reader]\nbackend = "sim"',
        f'[devices.card_reader]\nbackend = "serial"\nport = "{tmp_path / "none"}"',
    )
    text = text.replace('"decks/', f'"{CONFIG.parent}/decks/').replace(
        '"chips/', f'"{CONFIG.parent}/chips/'
    ).replace('"staff/', f'"{CONFIG.parent}/staff/').replace('"../var/', f'"{tmp_path}/')
    config.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "tablectl.cli", "antennas", "--config", str(config), "--simulate"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "--simulate needs the reader's sim backend" in done.stderr
