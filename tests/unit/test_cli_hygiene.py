"""The command line as a stranger meets it: every option explained, `--version`, bad values
refused with the option named, and a scenario's `# profile:` / `# game:` headers honoured
by `tablectl replay` (the scenarios' README command prints the expected file as it is)."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest

from controller import __version__
from room.cli import build_parser as room_parser
from tablectl.cli import build_parser, main, trace_headers

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
CONFIG = ROOT / "examples" / "sim-table.toml"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_every_option_of_every_command_has_help() -> None:
    missing = []
    for parser in [*_parsers(build_parser()), *_parsers(room_parser())]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_version() -> None:
    code, out, _err = run("--version")
    assert code == 0 and out.strip() == f"tablectl {__version__}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sim", "--hands", "-1"], "argument --hands: must be 0 or more, not -1"),
        (["sim", "--hands", "many"], "argument --hands: not a whole number: 'many'"),
        (["sim", "--broker-port", "0"], "argument --broker-port: must be 1 to 65535, not 0"),
        (["sim", "--speed", "0"], "argument --speed: must be above 0"),
        (["antennas", "--config", "x", "--seconds", "0"], "must be above 0 seconds"),
        (["register-deck", "--config", "x", "--out", "y", "--deck-id", "A", "--timeout", "-1"],
         "argument --timeout: must be 0 or more seconds"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_naming_the_option(argv: list[str], message: str) -> None:
    code, _out, err = run(*argv)
    assert code == 2 and message in err, err


def test_room_port_is_checked() -> None:
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()) as err:
        room_parser().parse_args(["--config", "x", "--port", "99999"])
    assert "must be 1 to 65535, not 99999" in err.getvalue()


def test_replay_honours_the_profile_header_as_the_readme_says() -> None:
    trace = SCENARIOS / "profile_campione_dead_money_undercall_is_completed.jsonl"
    assert trace_headers(trace) == {"profile": "campione"}
    code, out, err = run("replay", str(trace), "--config", str(CONFIG))
    assert code == 0, err
    expected = trace.with_name(trace.name.replace(".jsonl", ".expected.jsonl"))
    assert out == expected.read_text()
    # the command line wins over a header, and says so
    code, out, err = run("replay", str(trace), "--config", str(CONFIG), "--profile", "tda-2019")
    assert code == 0 and out != expected.read_text()
    assert "--profile tda-2019 instead of the trace's '# profile: campione'" in err


def test_replay_honours_the_game_header() -> None:
    games = [p for p in sorted(SCENARIOS.glob("*.jsonl")) if "game" in trace_headers(p)]
    assert games
    trace = games[0]
    code, out, err = run("replay", str(trace), "--config", str(CONFIG))
    assert code == 0, err
    assert out == trace.with_name(trace.name.replace(".jsonl", ".expected.jsonl")).read_text()


def test_a_header_naming_no_profile_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('# profile: wild-west\n{"t": 0.0, "event": "tick"}\n')
    code, _out, err = run("replay", str(trace), "--config", str(CONFIG))
    assert code == 2 and "'# profile: wild-west' header is not one of" in err
    code, _out, err = run("replay", str(tmp_path / "none.jsonl"), "--config", str(CONFIG))
    assert code == 2 and "no such trace" in err
