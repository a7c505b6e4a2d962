"""Inputs applied in the order they were made: the reorder window, under jittered delivery."""

from __future__ import annotations

import dataclasses
import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.journal import open_journal
from controller.ordering import ReorderWindow
from controller.seal import is_sealed, open_sealed
from kernel.clock import ManualClock
from kernel.inputs import Badge, ButtonPress, Event, TagIn, TagOut, Tick
from kernel.messages import HOLECARDS, HOLEKEYS, RELEASED, Message
from tests.money_judge import judge_completed_hands

ROOT = Path(__file__).resolve().parents[2]
EPOCH = 1_700_000_000.0
JITTER = 0.3  # each source delivers 0-300 ms late, in its own order
WINDOW_MS = 350.0


class Table(Daemon):
    """The daemon's loop on a virtual clock, every message it would publish kept: a sealed
    hole card and its key (random at every run) as the cards they open to; the keys'
    releases apart, without their time (a key goes out once its delay from the read has
    passed on the table's clock, whenever the loop gets to it: not an input's effect)."""

    def __init__(self, config: Config, clock: ManualClock) -> None:
        super().__init__(config, clock=clock)
        self.sent: list[str] = []
        self.released: list[str] = []
        self.sealed: dict[int, dict[str, Any]] = {}

    def publish(self, message: Message) -> None:
        payload = message.payload
        if message.topic == HOLECARDS and is_sealed(payload):
            self.sealed[payload["seq"]] = payload
            payload = {**payload, "sealed": "(sealed)"}
        if message.topic in (HOLEKEYS, RELEASED):
            assert payload["t"] >= payload["read_t"] + payload.get("delay", 0.0) - 1e-9
            if message.topic == HOLEKEYS:
                cards = open_sealed(self.sealed[payload["seq"]], payload["key"])
                payload = {**payload, "key": cards}
            payload = {k: v for k, v in payload.items() if k != "t"}
            self.released.append(dataclasses.replace(message, payload=payload).to_line("p"))
            return
        self.sent.append(dataclasses.replace(message, payload=payload).to_line("p"))

    def played(self) -> tuple[list[str], list[str]]:
        """What it published in order, and the releases of keys (in any order)."""
        return self.sent, sorted(self.released)


def _config(tmp: Path, window_ms: float) -> Config:
    config = load_config(ROOT / "examples" / "sim-table.toml")
    return dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=tmp / "t.journal", fsync="never"),
        inputs=dataclasses.replace(config.inputs, reorder_ms=window_ms),
    )


def _source(event: Event, config: Config) -> str:
    if isinstance(event, TagIn | TagOut):
        return "card_reader" if event.antenna in config.card_reader.antennas else "chip_reader"
    if isinstance(event, ButtonPress):
        return "gpio"
    if isinstance(event, Badge):
        return "badge"
    return "room"


def _hands(config: Config, hands: int, seed: int) -> list[tuple[str, Event]]:
    """The demo's hands as each source makes them: the daemon makes its own ticks; two
    sources never stamp the very same instant (a real clock does not either)."""
    from sim.demo import demo_script

    out: list[tuple[str, Event]] = []
    taken: dict[float, str] = {}
    for event in demo_script(config, hands, seed):
        if isinstance(event, Tick):
            continue
        source = _source(event, config)
        t = event.t
        while taken.setdefault(t, source) != source:
            t = round(t + 0.001, 6)
        out.append((source, dataclasses.replace(event, t=t) if t != event.t else event))
    return out


def _deliveries(
    made: list[tuple[str, Event]], rng: random.Random | None
) -> list[tuple[float, int, str, Event]]:
    """When each input reaches the daemon: at once, or 0-JITTER s late, each source in
    its own order (a serial link, a callback thread and a queue are first in, first out)."""
    last: dict[str, float] = {}
    out = []
    for n, (source, event) in enumerate(made):
        at = event.t + (rng.uniform(0.0, JITTER) if rng is not None else 0.0)
        at = max(at, last.get(source, at))
        last[source] = at
        out.append((round(at, 6), n, source, event))
    return sorted(out, key=lambda d: (d[0], d[1]))


def _play(tmp: Path, window_ms: float, deliveries: list[tuple[float, int, str, Event]]) -> Table:
    """Conduct the virtual clock as `tablectl sim` does: every engine timer and every
    release of the window on the way, each input handed over at its delivery time."""
    config = _config(tmp, window_ms)
    clock = ManualClock(0.0, wall_start=EPOCH)
    table = Table(config, clock)
    table.journal = open_journal(config.journal, config.table.id, now=EPOCH)
    assert table.journal is not None
    table.epoch = table.journal.epoch
    loop = threading.Thread(target=table._loop, daemon=True)
    loop.start()

    def step_to(moment: float) -> None:
        for _ in range(100_000):
            due = table.next_timer()
            if due is None or due > moment or due <= clock.now():
                break
            clock.advance_to(due)
            assert table.wait_idle(10)
        clock.advance_to(moment)
        assert table.wait_idle(10)

    for at, _n, source, event in deliveries:
        step_to(at)
        if isinstance(event, TagIn | TagOut):
            table.intake.submit_reader_event(source, event)
        else:
            table.submit(event)
        assert table.wait_idle(10)
    step_to(deliveries[-1][0] + 5.0)
    table._stopping.set()
    table.queue.put(None)
    loop.join(10)
    assert not loop.is_alive()
    assert table.journal is not None
    table.journal.close()
    return table


def _judged(sent: list[str]) -> list[str]:
    """pokerkit's strict verdicts on every hand completed in a game's published lines
    (tests/money_judge.py): any refused action, unfinished hand or other stacks fails."""
    lines = [json.loads(line) for line in sent]
    return judge_completed_hands([(d["topic"].split("/", 1)[1], d["payload"]) for d in lines])


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Event]]:
    return _hands(_config(tmp_path_factory.mktemp("c"), WINDOW_MS), hands=4, seed=11)


@pytest.fixture(scope="module")
def in_order(
    tmp_path_factory: pytest.TempPathFactory, made: list[tuple[str, Event]]
) -> tuple[list[str], list[str]]:
    return _play(tmp_path_factory.mktemp("o"), WINDOW_MS, _deliveries(made, None)).played()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_jittered_sources_give_exactly_the_events_of_in_order_delivery(
    tmp_path: Path,
    made: list[tuple[str, Event]],
    in_order: tuple[list[str], list[str]],
    seed: int,
) -> None:
    deliveries = _deliveries(made, random.Random(seed))
    arrival = [d[1] for d in deliveries]
    assert arrival != sorted(arrival)  # the jitter did reorder the sources
    got = _play(tmp_path, WINDOW_MS, deliveries).played()
    assert any('"hand_completed"' in line for line in in_order[0])
    assert in_order[1], "hole-card keys were released"
    assert got == in_order


def test_the_window_changes_nothing_for_inputs_delivered_in_order(
    tmp_path: Path, made: list[tuple[str, Event]], in_order: tuple[list[str], list[str]]
) -> None:
    """In order and at once, with the window and without: the same bytes (the window only
    delays what it lets go, and dates nothing anew)."""
    assert _play(tmp_path, 0.0, _deliveries(made, None)).played() == in_order


def test_without_the_window_jitter_changes_the_game(
    tmp_path: Path, made: list[tuple[str, Event]], in_order: tuple[list[str], list[str]]
) -> None:
    """The case the window is for: the same jittered deliveries applied as they arrive
    rule on another game (out-of-turn checks, premature cards, other stacks). Both games'
    hands are exported to PHH and judged strictly by pokerkit."""
    got = _play(tmp_path, 0.0, _deliveries(made, random.Random(1))).sent
    assert got != in_order[0]
    # both games, the one in order and the one jitter made, are whole hands pokerkit judges
    for game in (in_order[0], got):
        verdicts = _judged(game)
        assert len(verdicts) == 4 and all(": judged " in v for v in verdicts), verdicts


def test_the_window_keeps_each_source_in_its_own_order() -> None:
    now = [10.0]
    window: ReorderWindow[str] = ReorderWindow(0.05, lambda: now[0])
    window.hold("out", "card_reader", made=9.99, age=0.01)
    window.hold("in", "card_reader", made=9.98, age=0.02)  # a stamp that jittered back
    window.hold("press", "gpio", made=9.985, age=0.015)
    assert window.due() == []
    assert window.next_release() == pytest.approx(10.035)
    now[0] = 10.05
    assert window.due() == ["press", "out", "in"]  # gpio's 9.985 first; the link's order kept
    assert len(window) == 0 and window.next_release() is None


def test_an_edge_is_dated_when_it_was_made_on_a_real_clock_only(tmp_path: Path) -> None:
    """A GPIO edge stamped at the interrupt (machine monotonic) is put on trace time when
    it is queued: 45 ms ago is 45 ms before now. On a simulated clock, where time stands
    still while an input is in flight, it is now (the sim stays deterministic)."""
    import time

    real = Daemon(_config(tmp_path, WINDOW_MS))
    assert real.intake.real_time()
    real.epoch -= 10.0  # ten seconds into the journal
    edge = time.monotonic() - 0.045
    assert real.now() - real.intake.made_at(edge) == pytest.approx(0.045, abs=0.01)
    virtual = Daemon(_config(tmp_path, WINDOW_MS), clock=ManualClock(0.0, wall_start=EPOCH))
    assert not virtual.intake.real_time()
    assert virtual.intake.made_at(time.monotonic() - 0.045) == virtual.now()
