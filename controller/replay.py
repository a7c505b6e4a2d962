"""`tablectl replay`: a recorded trace through the engine, every message printed as JSON Lines."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from controller.config import Config
from controller.engine import Engine, EngineSpec
from controller.engine.checkpoint import checkpoint, restore
from controller.errors import JournalError
from controller.journal import Segment, read_journal_dir, read_trace_file
from controller.messages import Message
from controller.registry import ChipRegistry, DeckRegistry, load_chips, load_deck
from controller.staff import StaffRegistry, load_staff
from controller.trace import Event, Tick


def build_engine(config: Config, staff: StaffRegistry | None = None) -> Engine:
    """The engine for a configuration, with its registries loaded.

    `staff` defaults to the registry named by [devices.badge_reader] staff, if any.
    """
    deck: DeckRegistry | None = None
    chips: ChipRegistry | None = None
    if config.registries.deck is not None:
        deck = load_deck(config.registries.deck)
    if config.registries.chips is not None:
        chips = load_chips(config.registries.chips)
    if staff is None and config.badge.staff is not None:
        staff = load_staff(config.badge.staff)
    return Engine(EngineSpec.from_config(config), deck=deck, chips=chips, staff=staff)


def drive(engine: Engine, events: Iterable[Event]) -> Iterator[tuple[Event, list[Message]]]:
    """Apply events in order, firing the engine's timers as the live daemon would.

    Before each input, any engine deadline that falls before it is fired as a `tick` (the
    daemon journals such ticks, so a journal already holds them and this adds none).
    """
    for event in events:
        while True:
            due = engine.deadline()
            if due is None or due > event.t or (isinstance(event, Tick) and due == event.t):
                break
            tick = Tick(t=due)
            yield tick, engine.apply(tick)
        yield event, engine.apply(event)


def replay(config: Config, events: Iterable[Event], out: TextIO) -> int:
    """Print every message for the trace; return the number of messages."""
    engine = build_engine(config)
    prefix = config.broker.prefix
    count = 0
    for _event, messages in drive(engine, events):
        for message in messages:
            out.write(message.to_line(prefix) + "\n")
            count += 1
    return count


log = logging.getLogger("tablectl.replay")


def drive_segments(
    engine: Engine, segments: Iterable[Segment]
) -> Iterator[tuple[Event, list[Message]]]:
    """Drive the engine through journal segments in order.

    The first segment that opens with a checkpoint restores the engine from it (its older
    segments were deleted); a later segment's checkpoint must equal the state replayed from
    the segments before it (checked: a difference means a damaged or foreign segment), unless
    a segment is missing in between, where replay starts again from the checkpoint.
    """
    previous: int | None = None
    for segment in segments:
        if segment.checkpoint is not None:
            contiguous = (
                previous is not None
                and segment.number is not None
                and segment.number == previous + 1
            )
            if not contiguous:
                if previous is not None:
                    log.warning(
                        "%s: segments missing before it; replay restarts from its checkpoint",
                        segment.path,
                    )
                restore(engine, segment.checkpoint)
            elif json.loads(json.dumps(checkpoint(engine))) != segment.checkpoint:
                raise JournalError(
                    f"{segment.path}: its checkpoint differs from the state replayed from the "
                    "segments before it (replay this segment alone to start from it)"
                )
        previous = segment.number
        yield from drive(engine, segment.events)


def replay_path(config: Config, path: Path, out: TextIO) -> int:
    """`replay` of a trace file, a journal file or segment, or a journal directory (all its
    retained segments in order); print every message, return how many."""
    segments = read_journal_dir(path) if path.is_dir() else [read_trace_file(path)]
    engine = build_engine(config)
    prefix = config.broker.prefix
    count = 0
    for _event, messages in drive_segments(engine, segments):
        for message in messages:
            out.write(message.to_line(prefix) + "\n")
            count += 1
    return count
