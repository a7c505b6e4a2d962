"""`tablectl replay`: a recorded trace through the engine, every message printed as JSON Lines."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from controller.chain import CHAIN_FIELDS
from controller.config import Config
from controller.engine import Engine, EngineSpec
from controller.engine.checkpoint import checkpoint, restore
from controller.journal import Output, Segment, read_journal_dir, read_trace_file
from controller.registry import ChipRegistry, DeckRegistry, load_chips, load_deck
from controller.seal import SealError, is_sealed, open_sealed
from controller.staff import StaffRegistry, load_staff
from kernel.errors import JournalError
from kernel.inputs import Event, Tick
from kernel.messages import EVENTS, HOLECARDS, Message

log = logging.getLogger("tablectl.replay")


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
    """Apply a hand-written trace's events in order, firing the engine's timers as the live
    daemon would.

    Before each input, any engine deadline that falls before it is fired as a `tick`. A
    journal needs none of this: the daemon journals every tick it applied (`journal_steps`).
    """
    for event in events:
        while True:
            due = engine.deadline()
            if due is None or due > event.t or (isinstance(event, Tick) and due == event.t):
                break
            tick = Tick(t=due)
            yield tick, engine.apply(tick)
        yield event, engine.apply(event)


@dataclass(frozen=True, slots=True)
class Step:
    """One input through the engine: what it produces now, and what the journal recorded
    as published after it (`recorded` is empty for a plain trace)."""

    event: Event | None  # None: before the first input (the shell's own messages only)
    produced: list[Message]
    recorded: list[Output] | None = None  # None: a plain trace, nothing was recorded

    @property
    def published(self) -> list[Message]:
        """What the daemon published for this step, as published: for a journal, its `out`
        records in order (hole cards sealed, events chained, the shell's own messages),
        then whatever the engine produces beyond them (a torn tail: never published);
        for a plain trace, what the engine produces."""
        if self.recorded is None:
            return list(self.produced)
        return [*self.recorded_messages, *self.produced[self._engine_recorded :]]

    @property
    def recorded_messages(self) -> list[Message]:
        """The journal's `out` records of this step, in order (empty for a plain trace)."""
        return [o.message for o in self.recorded or ()]

    @property
    def clear(self) -> list[Message]:
        """`published`, with each sealed hole-card message as the engine made it (its cards
        in the clear): what the table itself knows (PHH export)."""
        if self.recorded is None:
            return list(self.produced)
        out: list[Message] = []
        k = 0
        for o in self.recorded:
            if o.src != "engine":
                out.append(o.message)
                continue
            produced = self.produced[k] if k < len(self.produced) else None
            k += 1
            if o.message.topic == HOLECARDS and produced is not None:
                out.append(produced)
            else:
                out.append(o.message)
        return [*out, *self.produced[k:]]

    @property
    def _engine_recorded(self) -> int:
        return sum(1 for o in self.recorded or () if o.src == "engine")

    def mismatch(self, *, last: bool = False) -> str | None:
        """How the recorded engine output differs from what the engine produces now, or
        None. The table's own additions are taken off first: a sealed hole card is opened
        with its journaled key (a key that does not open it is a difference), an event's
        `chain` and `signature` are set aside (controller/verify.py checks them). On the
        journal's `last` input a recorded prefix is a torn tail, not a difference (the
        process died before it was committed, so nothing was published)."""
        if self.event is None or self.recorded is None:
            return None
        recorded = [_comparable(o) for o in self.recorded if o.src == "engine"]
        produced = [_fingerprint(m) for m in self.produced]
        if recorded == produced or (last and produced[: len(recorded)] == recorded):
            return None
        if len(recorded) == len(produced) and all(map(_only_added, recorded, produced)):
            return None  # written by an earlier release: this one only adds fields
        for k, (was, now) in enumerate(zip(recorded, produced, strict=False)):
            if was != now:
                return f"message {k + 1}: published {was.decode()} but replay gives {now.decode()}"
        return f"published {len(recorded)} message(s) but replay gives {len(produced)}"


def _only_added(was: bytes, now: bytes) -> bool:
    """Whether message `now` is `was` with fields added at the top of its payload, every
    field `was` has unchanged: a journal written by an earlier release replays to the
    messages this release makes (the contract extends messages, never renames or drops a
    field), and that is no difference in what the table did."""
    if was == now:
        return True
    head_was, _, body_was = was.partition(b"{")
    head_now, _, body_now = now.partition(b"{")
    if head_was != head_now or not body_was or not body_now:
        return False
    try:
        old, new = json.loads(b"{" + body_was), json.loads(b"{" + body_now)
    except ValueError:
        return False
    if not isinstance(old, dict) or not isinstance(new, dict) or not old.keys() < new.keys():
        return False
    return all(new[key] == value for key, value in old.items())


def _fingerprint(message: Message) -> bytes:
    head = b"%s %d %d " % (message.topic.encode(), message.qos, message.retain)
    if message.topic == HOLECARDS:  # compared as opened (below): key order aside
        return head + json.dumps(message.payload, sort_keys=True).encode()
    return head + message.payload_bytes()


def _comparable(output: Output) -> bytes:
    """A recorded engine message as the engine made it: sealed hole cards opened with the
    key journaled beside them, the events chain taken off; what cannot be opened stays as
    it is (and so differs)."""
    message = output.message
    payload = message.payload
    if message.topic == EVENTS and any(k in payload for k in CHAIN_FIELDS):
        payload = {k: v for k, v in payload.items() if k not in CHAIN_FIELDS}
    elif message.topic == HOLECARDS and is_sealed(payload) and output.key is not None:
        try:
            cards = open_sealed(payload, output.key)
        except SealError:
            return b"unopenable " + message.payload_bytes()
        payload = {
            "table": payload.get("table"),
            "hand": payload.get("hand"),
            "seat": payload.get("seat"),
            "cards": cards,
            "t": payload.get("t"),
        }
    return _fingerprint(Message(message.topic, payload, message.qos, message.retain))


def journal_steps(
    engine: Engine, events: Sequence[Event], outputs: Mapping[int, list[Output]]
) -> Iterator[Step]:
    """Journaled inputs through the engine exactly as journaled (the daemon journaled every
    tick it applied: none is added), each with the `out` records written after it.

    A journal written before outputs were journaled has no `out` record at all: its steps
    have nothing to be checked against (`recorded` None). An input the engine failed on
    produces nothing, as it did live (the daemon journaled its alert instead).
    """
    journaled = bool(outputs) or not events
    yield Step(None, [], outputs.get(0, []) if journaled else None)
    for position, event in enumerate(events, start=1):
        try:
            produced = engine.apply(event)
        except Exception:
            log.exception("journaled input at t=%s failed in the engine, as it did live", event.t)
            produced = []
        yield Step(event, produced, outputs.get(position, []) if journaled else None)


def segment_steps(engine: Engine, segment: Segment) -> Iterator[Step]:
    """A journal segment's steps; a plain trace's, with timers fired as `drive` does."""
    if segment.is_journal:
        yield from journal_steps(engine, segment.events, segment.outputs)
    else:
        for event, produced in drive(engine, segment.events):
            yield Step(event, produced)


def flag_last(steps: Iterable[Step]) -> Iterator[tuple[Step, bool]]:
    """Each step with whether it is the last one (where a journal's tail may be torn)."""
    it = iter(steps)
    step = next(it, None)
    while step is not None:
        following = next(it, None)
        yield step, following is None
        step = following


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


def same_checkpoint(ours: dict[str, Any], stored: dict[str, Any]) -> bool:
    """The state replayed equals a segment's checkpoint, as far as the checkpoint's
    version records it (an older version lacks some keys)."""
    plain = json.loads(json.dumps(ours))
    kept = {k: v for k, v in plain.items() if k in stored and k != "version"}
    return kept == {k: v for k, v in stored.items() if k != "version"}


def drive_segments(engine: Engine, segments: Iterable[Segment]) -> Iterator[Step]:
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
            elif not same_checkpoint(checkpoint(engine), segment.checkpoint):
                raise JournalError(
                    f"{segment.path}: its checkpoint differs from the state replayed from the "
                    "segments before it (replay this segment alone to start from it)"
                )
        previous = segment.number
        if segment.epoch is not None:  # the hands are dated from the journal's epoch
            engine.epoch = segment.epoch
        yield from segment_steps(engine, segment)


@dataclass(slots=True)
class ReplayResult:
    """What `replay_path` printed, and where the journal's record of what was published
    differs from what the engine produces now (empty for a plain trace)."""

    messages: int = 0
    mismatches: list[str] = field(default_factory=list)


def replay_path(config: Config, path: Path, out: TextIO, *, verify: bool = True) -> ReplayResult:
    """`replay` of a trace file, a journal file or segment, or a journal directory (all its
    retained segments in order); print every message published, and, when `verify`, check
    the engine's against the journal's `out` records."""
    from controller.chain import load_verifier
    from controller.verify import PublishedCheck

    segments = read_journal_dir(path) if path.is_dir() else [read_trace_file(path)]
    engine = build_engine(config)
    prefix = config.broker.prefix
    result = ReplayResult()
    key = config.seal.public_key or config.seal.signing_key
    check = PublishedCheck(load_verifier(key) if key is not None else None)
    for step, last in flag_last(drive_segments(engine, segments)):
        for message in step.published:
            out.write(message.to_line(prefix) + "\n")
            result.messages += 1
        if not verify or step.event is None:
            continue
        problem = step.mismatch(last=last)
        if problem is None and step.recorded is not None:
            problem = check.outputs(f"t={step.event.t}", step.recorded)
        if problem is not None:
            result.mismatches.append(f"input at t={step.event.t}: {problem}")
    return result
