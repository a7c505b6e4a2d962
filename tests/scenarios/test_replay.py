"""`tablectl replay`: scenario traces give their expected output, byte-identical, schema-valid."""

from __future__ import annotations

import contextlib
import io
import json
from functools import cache
from pathlib import Path

import pytest

from controller.schema import validate
from kernel.messages import Message
from tablectl.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
CONFIG = ROOT / "examples" / "sim-table.toml"
TRACES = sorted(p for p in SCENARIOS.glob("*.jsonl") if not p.name.endswith(".expected.jsonl"))


def profile_args(trace: Path) -> list[str]:
    """A `# profile: NAME` line in a trace selects the rule profile it is replayed under, a
    `# game: GAME` line the game (`flhe` for the fixed-limit rules)."""
    args: list[str] = []
    for key in ("profile", "game"):
        named = [
            line.split(":", 1)[1].strip()
            for line in trace.read_text().splitlines()
            if line.startswith(f"# {key}:")
        ]
        args += [f"--{key}", named[0]] if named else []
    return args


def replay(trace: Path, *extra: str) -> tuple[int, str, str]:
    """`tablectl replay TRACE --config CONFIG` in this process: exit code, stdout, stderr.
    (tests/system/test_replay_cli.py runs the command itself, in fresh processes.)"""
    if "--profile" not in extra:
        extra = (*profile_args(trace), *extra)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(trace), "--config", str(CONFIG), *extra])
    return code, out.getvalue(), err.getvalue()


@cache
def output(trace: Path) -> str:
    code, out, err = replay(trace)
    assert code == 0, err
    return out


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_scenario_output_is_expected_and_byte_identical(trace: Path) -> None:
    first = output(trace)
    assert replay(trace)[1] == first
    expected = trace.with_name(trace.stem + ".expected.jsonl")
    assert expected.exists(), f"write {expected.name} from a reviewed replay"
    assert first == expected.read_text()


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_scenario_messages_match_schemas(trace: Path) -> None:
    out = output(trace).splitlines()
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
    code, _out, err = replay(bad)
    assert code == 2
    assert f"{bad}:2: bad card name '1x'" in err


def test_replay_profile_option_is_validated() -> None:
    code, _out, err = replay(TRACES[0], "--profile", "wild-west")
    assert code == 2
    assert "wild-west" in err


def test_replay_profile_adds_the_house_rule_numbers_and_changes_nothing_else() -> None:
    trace = SCENARIOS / "rule16_example2_side_pot.jsonl"
    default = [json.loads(line) for line in replay(trace)[1].splitlines()]
    house = [json.loads(line) for line in replay(trace, "--profile", "tda-2015")[1].splitlines()]
    assert len(default) == len(house)
    cited = 0
    for a, b in zip(default, house, strict=True):
        extra = b["payload"].pop("profile_rule", None)
        cited += extra is not None
        assert a == b
    assert cited >= 3  # rules 23, 16 and RP-1 at least, in 2015 numbering
