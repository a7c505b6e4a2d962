"""The one clock (kernel/clock.py): a virtual clock moves only when stepped, and wakes."""

from __future__ import annotations

import argparse
import math

import pytest

from kernel.clock import FunctionClock, ManualClock, SystemClock
from sim.tables import speed_arg


def test_manual_clock_moves_only_when_stepped_and_wall_follows() -> None:
    clock = ManualClock(0.0, wall_start=1_700_000_000.0)
    assert (clock.now(), clock.wall()) == (0.0, 1_700_000_000.0)
    assert clock.advance(1.5) == 1.5
    assert clock.wall() == 1_700_000_001.5
    assert clock.advance_to(1.0) == 1.5, "never backwards"
    assert clock.advance_to(4.0) == 4.0
    with pytest.raises(ValueError):
        clock.advance(-1.0)


def test_manual_clock_wakes_waiters_on_every_step_and_never_waits_for_real_time() -> None:
    clock = ManualClock()
    woken: list[float] = []
    clock.on_jump(lambda: woken.append(clock.now()))
    clock.advance(0.25)
    clock.advance_to(2000.0)
    clock.advance_to(10.0)  # already past: no step, no wake
    assert woken == [1000.25, 2000.0]
    assert clock.real_wait(3.0) is None, "a virtual second passes only by a step"
    assert clock.real_wait(0.0) == 0.0 and clock.real_wait(-1.0) == 0.0


def test_system_and_function_clocks_wait_real_seconds() -> None:
    assert SystemClock().real_wait(0.3) == 0.3
    assert SystemClock().real_wait(-2.0) == 0.0
    pinned = FunctionClock(lambda: 42.0)
    assert pinned.wall() == 42.0 and pinned.real_wait(1.0) == 1.0


def test_speed_option_takes_a_positive_scale_or_max() -> None:
    assert speed_arg("10") == 10.0
    assert speed_arg("max") == math.inf
    for bad in ("0", "-2", "nan", "fast"):
        with pytest.raises(argparse.ArgumentTypeError):
            speed_arg(bad)


def test_sim_table_ids_topics_and_identities_count_on_from_the_first() -> None:
    from pathlib import Path

    from controller.config import load_config
    from sim.tables import table_config, table_id

    assert [table_id("t01", i) for i in range(3)] == ["t01", "t02", "t03"]
    assert table_id("t9", 1) == "t10" and table_id("bar", 2) == "bar-3"
    base = load_config(Path(__file__).parents[2] / "examples" / "sim-table.toml")
    third = table_config(base, 2, Path("/tmp/t03.journal"))
    assert third.table.id == "t03" and third.table.room == base.table.room
    assert third.broker.prefix == base.broker.prefix.rpartition("/")[0] + "/t03"
    assert third.broker.client_id == base.broker.client_id.replace("t01", "t03")
    assert third.journal.path == Path("/tmp/t03.journal")
    assert table_config(base, 0, None) == base
