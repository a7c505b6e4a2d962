"""Build what goes on a board: every firmware module compiled by mpy-cross, plus main.py.

    python -m firmware_sim.build --out build/cards                # Raspberry Pi Pico (RP2040)
    python -m firmware_sim.build --out build/chips --board chip --arch armv7emsp   # Pico 2

The output directory is copied to the board with mpremote (docs/hardware.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from kernel.errors import TableError

FIRMWARE = Path(__file__).resolve().parent.parent / "firmware"
ARCHS = {"armv6m": "Raspberry Pi Pico (RP2040)", "armv7emsp": "Raspberry Pi Pico 2 (RP2350)"}


class BuildError(TableError):
    """mpy-cross refused a firmware file."""


def modules() -> list[Path]:
    """The firmware's modules that go on the board compiled (main.py goes as source)."""
    return sorted(p for p in FIRMWARE.glob("*.py") if p.name != "board_main.py")


def compile_module(source: Path, target: Path, arch: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "mpy_cross", f"-march={arch}", "-o", str(target), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise BuildError(f"mpy-cross {source.name}: {done.stderr.strip() or done.stdout.strip()}")


def build(out: Path, arch: str = "armv6m", board: str = "card") -> list[Path]:
    """Compile the firmware into `out`/firmware/*.mpy, add main.py and board.json."""
    if arch not in ARCHS:
        raise BuildError(f"unknown architecture {arch!r}: one of {', '.join(ARCHS)}")
    written = []
    for source in modules():
        target = out / "firmware" / (source.stem + ".mpy")
        compile_module(source, target, arch)
        written.append(target)
    shutil.copyfile(FIRMWARE / "board_main.py", out / "main.py")
    written.append(out / "main.py")
    settings = _board_settings(board)
    (out / "board.json").write_text(json.dumps(settings, indent=1) + "\n")
    written.append(out / "board.json")
    return written


def _board_settings(board: str) -> dict[str, object]:
    from firmware import config

    if board == "card":
        return dict(config.CARD_BOARD)
    if board == "chip":
        return dict(config.CHIP_BOARD)
    raise BuildError(f"unknown board {board!r}: card or chip")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help="directory to write")
    parser.add_argument("--arch", default="armv6m", choices=sorted(ARCHS))
    parser.add_argument("--board", default="card", choices=["card", "chip"])
    args = parser.parse_args(argv)
    try:
        files = build(args.out, args.arch, args.board)
    except TableError as exc:
        print(f"build: {exc}", file=sys.stderr)
        return 1
    print(f"{len(files)} files for a {ARCHS[args.arch]} {args.board} board in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
