"""The `tablectl replay` command itself: each scenario trace, replayed in a fresh process with
its own hash seed, prints its expected output byte for byte; a bad trace exits 2."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scenarios.test_replay import CONFIG, ROOT, TRACES, profile_args


def run_replay(trace: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    """`python -m tablectl.cli replay TRACE --config CONFIG`, a new interpreter each time
    (a random PYTHONHASHSEED: set and dict orders that depend on it would show)."""
    env = {**os.environ, "PYTHONHASHSEED": str(random.randrange(1, 2**32))}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tablectl.cli",
            "replay",
            str(trace),
            "--config",
            str(CONFIG),
            *profile_args(trace),
            *extra,
        ],
        capture_output=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_the_command_prints_the_expected_output_byte_for_byte(trace: Path) -> None:
    result = run_replay(trace)
    assert result.returncode == 0, result.stderr.decode()
    expected = trace.with_name(trace.stem + ".expected.jsonl")
    assert result.stdout == expected.read_bytes()


def test_the_command_exits_2_on_a_bad_trace_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t": 0, "event": "tick"}\n{"t": -1, "event": "tick"}\n')
    result = run_replay(bad)
    assert result.returncode == 2
    assert f"{bad}:2: 't' must not be negative" in result.stderr.decode()
