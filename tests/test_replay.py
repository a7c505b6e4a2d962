"""`tablectl replay`: scenario traces give their expected output, byte-identical, schema-valid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.messages import Message
from controller.schema import validate

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
CONFIG = ROOT / "examples" / "sim-table.toml"
TRACES = sorted(p for p in SCENARIOS.glob("*.jsonl") if not p.name.endswith(".expected.jsonl"))


def replay(trace: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    """Replay a trace; a `# profile: NAME` line in it selects the rule profile."""
    profile = [
        line.split(":", 1)[1].strip()
        for line in trace.read_text().splitlines()
        if line.startswith("# profile:")
    ]
    if profile and "--profile" not in extra:
        extra = ("--profile", profile[0], *extra)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "replay",
            str(trace),
            "--config",
            str(CONFIG),
            *extra,
        ],
        capture_output=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_scenario_output_is_expected_and_byte_identical(trace: Path) -> None:
    first = replay(trace)
    assert first.returncode == 0, first.stderr.decode()
    second = replay(trace)
    assert first.stdout == second.stdout
    expected = trace.with_name(trace.stem + ".expected.jsonl")
    assert expected.exists(), f"write {expected.name} from a reviewed replay"
    assert first.stdout.decode() == expected.read_text()


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_scenario_messages_match_schemas(trace: Path) -> None:
    out = replay(trace).stdout.decode().splitlines()
    assert out
    for line in out:
        message = json.loads(line)
        assert set(message) == {"topic", "qos", "retain", "payload"}
        prefix, kind = message["topic"].rsplit("/", 1)
        assert prefix == "poker/sim/t01"
        # The payload against its topic's schema, and the topic's QoS / retain flags.
        validate(Message(kind, message["payload"], message["qos"], message["retain"]))


def test_replay_refuses_bad_trace_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"t": 0, "event": "tick"}\n{"t": 1, "event": "tag_in", "antenna": "seat1", "card": "1x"}\n'
    )
    result = replay(bad)
    assert result.returncode == 2
    assert f"{bad}:2: bad card name '1x'" in result.stderr.decode()


def test_replay_profile_option_is_validated() -> None:
    result = replay(TRACES[0], "--profile", "wild-west")
    assert result.returncode == 2
    assert "wild-west" in result.stderr.decode()


def test_replay_profile_adds_the_house_rule_numbers_and_changes_nothing_else() -> None:
    trace = SCENARIOS / "rule16_example2_side_pot.jsonl"
    default = [json.loads(line) for line in replay(trace).stdout.decode().splitlines()]
    house = [
        json.loads(line)
        for line in replay(trace, "--profile", "tda-2015").stdout.decode().splitlines()
    ]
    assert len(default) == len(house)
    cited = 0
    for a, b in zip(default, house, strict=True):
        extra = b["payload"].pop("profile_rule", None)
        cited += extra is not None
        assert a == b
    assert cited >= 3  # rules 23, 16 and RP-1 at least, in 2015 numbering
