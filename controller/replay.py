"""`tablectl replay`: a recorded trace through the engine, every message printed as JSON Lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

from controller.config import Config
from controller.engine import Engine, EngineSpec
from controller.messages import Message
from controller.registry import ChipRegistry, DeckRegistry, load_chips, load_deck
from controller.trace import Event, Tick


def build_engine(config: Config) -> Engine:
    """The engine for a configuration, with its registries loaded."""
    deck: DeckRegistry | None = None
    chips: ChipRegistry | None = None
    if config.registries.deck is not None:
        deck = load_deck(config.registries.deck)
    if config.registries.chips is not None:
        chips = load_chips(config.registries.chips)
    return Engine(EngineSpec.from_config(config), deck=deck, chips=chips)


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
