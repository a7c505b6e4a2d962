"""The daemon fires named events and its concerns hang on them: it keeps the loop, the
queue and the order of effects, and stays small."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.journal import open_journal, read_trace_file
from kernel.inputs import Command, Event
from kernel.messages import Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
NOW = 1_700_000_000.0
#: The most methods `Daemon` may have: a new concern registers on an event instead.
MAX_METHODS = 20


def _config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    journal = dataclasses.replace(config.journal, path=tmp_path / "t01.journal", fsync="never")
    return dataclasses.replace(config, journal=journal)


def _offline(config: Config) -> Daemon:
    daemon = Daemon(config, clock=lambda: NOW)
    daemon.journal = open_journal(config.journal, config.table.id, now=NOW)
    return daemon


def test_the_daemon_has_at_most_twenty_methods() -> None:
    """Methods, properties, static and class methods alike: a new concern is a module that
    registers on an event, not another method here."""
    kinds = (property, staticmethod, classmethod)
    own = [n for n, v in vars(Daemon).items() if inspect.isfunction(v) or isinstance(v, kinds)]
    assert "register_event_handler" in own and "send_event" in own
    assert len(own) <= MAX_METHODS, sorted(own)


def test_handlers_run_in_the_order_registered_and_give_back_what_they_return(
    tmp_path: Path,
) -> None:
    daemon = _offline(_config(tmp_path))
    daemon.register_event_handler("probe", lambda x: ("first", x))
    daemon.register_event_handler("probe", lambda x: ("second", x))
    assert daemon.send_event("probe", 7) == [("first", 7), ("second", 7)]
    assert daemon.send_event("nobody listens") == []


def test_after_a_commit_the_batch_effects_run_then_the_committed_handlers_in_order(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    daemon = _offline(config)
    ran: list[str] = []

    def applied(item: Event) -> Any:
        seat = item.args["seat"]  # type: ignore[union-attr]
        ran.append(f"applied {seat}")
        return lambda: ran.append(f"effect {seat}, {len(_events(tmp_path))} inputs journaled")

    def committed(out: list[Message]) -> None:
        ran.append(f"committed {len(out)}")

    daemon.register_event_handler("table:applied", applied)
    daemon.register_event_handler("table:committed", committed)
    seat = {"seat": 1, "player": "Alice", "stack": 20000, "id": "r1"}
    out = daemon.handle(
        [
            Command(0.0, "seat", seat),
            Command(0.0, "seat", {**seat, "seat": 2, "player": "Bruno", "id": "r2"}),
        ]
    )
    # Applied as taken; their effects once the whole batch is journaled, in order.
    assert ran == [
        "applied 1",
        "applied 2",
        "effect 1, 2 inputs journaled",
        "effect 2, 2 inputs journaled",
        f"committed {len(out)}",
    ]


def test_the_concerns_hang_on_the_committed_event_in_the_order_of_their_effects(
    tmp_path: Path,
) -> None:
    daemon = _offline(_config(tmp_path))
    owners = [
        type(getattr(h, "__self__", None)).__name__ if hasattr(h, "__self__") else h.__qualname__
        for h in daemon._handlers["table:committed"]
    ]
    assert owners == ["BoardFocus", "install_lamps.<locals>.show", "Rotation", "HeapTrim"]


def test_the_loops_own_items_are_each_answered_by_one_concern(tmp_path: Path) -> None:
    daemon = _offline(_config(tmp_path))
    takers = {e: len(h) for e, h in daemon._handlers.items() if e.startswith("take:")}
    assert takers == {
        "take:DeviceAlert": 1,
        "take:HoleRequest": 1,
        "take:RefusedCommand": 1,
        "take:ReleaseDue": 1,
        "take:ResendRequest": 1,
    }


def _events(tmp_path: Path) -> list[Any]:
    return list(read_trace_file(tmp_path / "t01.journal").events)


def test_the_reorder_window_says_how_many_inputs_it_holds(tmp_path: Path) -> None:
    """The sim's player steps the clock until the window has let every input go."""
    config = _config(tmp_path)
    daemon = _offline(
        dataclasses.replace(config, inputs=dataclasses.replace(config.inputs, reorder_ms=300.0))
    )
    assert len(daemon.window) == 0
    seat = {"seat": 1, "player": "Alice", "stack": 20000, "id": "r1"}
    daemon.window.reorder([Command(0.0, "seat", seat)], False, daemon.now())
    assert len(daemon.window) == 1
    assert len(_offline(config).window) == 0  # no window at all
