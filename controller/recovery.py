"""Recovery at start: the engine rebuilt from the journal, and what to publish again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from controller.config import JournalConfig
from controller.delivery import AckedMark, Redelivery, acked_path
from controller.engine import Engine
from controller.engine.checkpoint import restore
from controller.journal import InputJournal
from controller.replay import Step, flag_last, journal_steps
from controller.seal import TableSeal
from kernel.inputs import Device, TagIn, TagOut
from kernel.messages import STATE, Message

log = logging.getLogger("tablectl.recovery")

AlertMaker = Callable[[str, str], Message]
"""`alert(kind, text)`: a critical alert about the recovery, as the daemon publishes it."""


def delivery_mark(journal: JournalConfig) -> AckedMark | None:
    """The mark of acknowledged events next to the journal, loaded (None without a journal)."""
    if journal.directory is not None:
        path = Path(journal.directory) / "acked"
    elif journal.path is not None:
        path = acked_path(journal.path)
    else:
        return None
    mark = AckedMark(path)
    mark.load()
    return mark


@dataclass(slots=True)
class Recovered:
    """What the journal gave back besides the engine's state."""

    messages: list[Message] = field(default_factory=list)  # to publish again, in order
    last_t: float = 0.0  # the last journaled input's t
    device_states: dict[str, str] = field(default_factory=dict)  # name -> offline / online
    tag_view: dict[str, list[str]] = field(default_factory=dict)  # antenna -> tag uids


def recover(
    engine: Engine,
    journal: InputJournal,
    acked: AckedMark | None,
    alert: AlertMaker,
    seal: TableSeal | None = None,
) -> Recovered:
    """Re-apply the journal to `engine`; return what to publish again (at-least-once).

    A segment that starts with a checkpoint restores the engine from it first (rotation
    happens between hands, so the hand in progress is all in the segment). Everything
    published after the last events `seq` the broker acknowledged (the `acked` mark) is
    published again, in order, then the latest state (docs/operations.md, Delivery
    guarantees): the engine's messages as it regenerates them (checked against the
    journal's `out` records: a difference raises `journal_mismatch`), the shell's own
    as recorded. Also rebuilt: the journaled device states and antenna contents, and
    (`seal`) the shell's hole-card seq, events chain and the key releases still owed.
    """
    if seal is not None:
        seal.restore(journal.seal, [o for k in sorted(journal.outputs) for o in journal.outputs[k]])
    if acked is not None and not journal.events and journal.checkpoint is None:
        if acked.written:
            log.warning("new journal: old delivery mark %d dropped", acked.written)
        acked.reset()
    redo = Redelivery(acked.written if acked is not None else 0)
    found = Recovered()
    if journal.checkpoint is not None:
        restore(engine, journal.checkpoint)
        found.last_t = engine.t
        redo.last_seq = engine.seq
        redo.add([Message(STATE, engine.snapshot(), qos=1, retain=True)])
        _seed_view_from_checkpoint(engine, found.tag_view)
    mismatches: list[str] = []
    for step, last in flag_last(journal_steps(engine, journal.events, journal.outputs)):
        event = step.event
        if event is None:
            redo.add(step.published)
            continue
        found.last_t = event.t
        problem = step.mismatch(last=last)
        tail: list[Message] = []
        if problem is not None:
            mismatches.append(f"t={event.t}: {problem}")
        elif last:
            tail = _complete_torn_tail(journal, step, event.t, seal)
        redo.add([*step.recorded_messages, *tail] if step.recorded is not None else step.produced)
        _follow_devices(found, event)
    if journal.events:
        log.info("recovered %d journaled events, seq=%d", len(journal.events), engine.seq)
    found.messages = redo.result()
    found.messages += _problems(redo, mismatches, alert)
    return found


def _follow_devices(found: Recovered, event: object) -> None:
    """Keep the journaled device states and antenna contents up to date with `event`."""
    if isinstance(event, Device):
        found.device_states[event.name] = event.state
    elif isinstance(event, TagIn | TagOut) and event.uid is not None:
        uids = found.tag_view.setdefault(event.antenna, [])
        if isinstance(event, TagIn) and event.uid not in uids:
            uids.append(event.uid)
        elif isinstance(event, TagOut) and event.uid in uids:
            uids.remove(event.uid)


def _problems(redo: Redelivery, mismatches: list[str], alert: AlertMaker) -> list[Message]:
    """The critical alerts a recovery may end with: the journal replays differently, or
    the broker's mark is beyond the journal, or events between them are lost."""
    out: list[Message] = []
    if mismatches:
        text = (
            f"{len(mismatches)} journaled input(s) now give other messages than were "
            f"published (another software version or configuration?); first: "
            f"{mismatches[0]}"
        )
        log.error("%s", text)
        out.append(alert("journal_mismatch", text))
    if redo.behind:
        text = (
            f"the broker acknowledged events up to seq {redo.acked} but the journal only "
            f"regenerates up to {redo.last_seq} (journal tail lost, e.g. a power cut with "
            "fsync = interval): those seq numbers will be reused"
        )
        log.error("%s", text)
        out.append(alert("journal_behind_broker", text))
    elif redo.gap:
        text = (
            f"events {redo.acked + 1}..{(redo.first_seq or 1) - 1} were not acknowledged and "
            "are not in the active journal segment: not published again"
        )
        log.error("%s", text)
        out.append(alert("delivery_gap", text))
    return out


def _complete_torn_tail(
    journal: InputJournal, step: Step, t: float, seal: TableSeal | None
) -> list[Message]:
    """The process died while journaling the last input's messages (none of which was
    published: that comes after the commit): journal the rest now (sealed and chained as
    the shell sends them), so that the record is whole before anything follows it; return
    them as they are to be published."""
    if step.recorded is None:
        return []
    done = sum(1 for o in step.recorded if o.src == "engine")
    missing = step.produced[done:]
    if not missing:
        return []
    records = seal.outgoing("engine", missing, t) if seal is not None else None
    out: list[Message] = []
    if records is None:
        for message in missing:
            journal.record(t, "engine", message)
        out = list(missing)
    else:
        for r in records:
            journal.record(t, r.src, r.message, r.key)
            if r.sign:
                journal.sign("hand")
            out.append(r.message)
    journal.commit()
    log.warning("journal: %d message(s) of the last input recorded now", len(missing))
    return out


def _seed_view_from_checkpoint(engine: Engine, view: dict[str, list[str]]) -> None:
    """Cards and chips a checkpoint says are on the table, as tag UIDs.

    The chips matter as much as the cards: a segment opens between hands, often with a
    pot still to push to its winners. Were they left out, a restart right after a
    rotation would open the readers without them, and chips that left meanwhile (or whose
    departure was still in the reorder window at the crash) would never be journaled as
    gone: the board's inventory would show no difference to catch up."""
    uid_of = getattr(engine.deck, "uid_of", None)
    if uid_of is not None:
        for antenna, cards in engine.cards.contents.items():
            for card in cards:
                try:
                    view.setdefault(antenna, []).append(str(uid_of(card)).upper())
                except Exception:  # a card without a registered tag: nothing to seed
                    continue
    value_of = getattr(engine.chips, "value_of", None)
    if value_of is None:
        return
    for chip, places in engine.chip_spots.at.items():
        if value_of(chip) is None:
            continue  # a chip named in a trace, not a registered tag
        for place in places:
            uids = view.setdefault(place, [])
            if chip.upper() not in uids:
                uids.append(chip.upper())
