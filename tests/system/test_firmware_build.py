"""Every firmware file is MicroPython: mpy-cross compiles it for the RP2040 and the RP2350,
and the board image (compiled modules, main.py, board.json) is complete."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_sim.build import FIRMWARE, build, compile_module, modules

pytestmark = pytest.mark.timeout(120)
ROOT = FIRMWARE.parent


def test_every_firmware_file_compiles_with_mpy_cross(tmp_path: Path) -> None:
    sources = sorted(FIRMWARE.glob("*.py"))
    # The simulated PN5180 and the WebAssembly harness run under MicroPython too.
    sources += [ROOT / "firmware_sim" / "pn5180_sim.py", ROOT / "firmware_sim/wasm/harness.py"]
    assert {p.name for p in sources} >= {"protocol.py", "pn5180.py", "board.py", "hal_rp2.py"}
    for arch in ("armv6m", "armv7emsp"):
        for source in sources:
            target = tmp_path / arch / (source.stem + ".mpy")
            compile_module(source, target, arch)
            header = target.read_bytes()[:2]
            assert header[0] == ord("M") and header[1] == 6, (source, header)  # .mpy version 6


def test_mpy_cross_refuses_what_micropython_cannot_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n    pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "mpy_cross", str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "SyntaxError" in done.stderr + done.stdout


def test_the_board_image(tmp_path: Path) -> None:
    files = build(tmp_path, "armv6m", "chip")
    names = {p.relative_to(tmp_path).as_posix() for p in files}
    assert names == {f"firmware/{p.stem}.mpy" for p in modules()} | {"main.py", "board.json"}
    assert "firmware/board_main.mpy" not in names
    assert (tmp_path / "main.py").read_text().strip().endswith("start()")
    settings = json.loads((tmp_path / "board.json").read_text())
    assert settings["kind"] == "chip" and settings["antennas"][-1] == ["pot", [9, 10]]
