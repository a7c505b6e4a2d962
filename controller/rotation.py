"""Journal rotation: a new segment, opening with a checkpoint, between hands."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from controller import heap
from controller.engine.checkpoint import checkpoint
from controller.hooks import Table
from controller.journal import InputJournal, SegmentedJournal
from kernel.errors import JournalError, RetentionError, TableError
from kernel.messages import Message

log = logging.getLogger("tablectl.daemon")


class Rotation:
    """When a segment closes: between hands, every event it holds acknowledged."""

    def __init__(self, table: Table) -> None:
        self.table = table
        table.register_event_handler("table:committed", self.if_due)
        table.register_event_handler("table:stopping", self.at_stop)

    def if_due(self, out: Sequence[Message]) -> None:
        """Between hands, start a new journal segment (opening with a checkpoint) when due."""
        table = self.table
        journal = table.journal
        if journal is None or not journal.rotation_due() or not self.allowed():
            return
        try:
            journal.rotate(checkpoint(table.engine), table.engine.t)
        except RetentionError as exc:  # rotated; old segments stay until the next rotation
            log.error("%s", exc)
            table.emit(table.notices.alert("journal_error", str(exc), {}, "warning"))
        except JournalError as exc:  # the current segment stays in use; retried next time
            log.error("journal rotation failed: %s", exc)
            text = f"journal rotation failed: {exc}"
            table.emit(table.notices.alert("journal_error", text, {}, "warning"))
        heap.trim()  # between hands: what the gzip and the checkpoint freed goes back

    def at_stop(self, journal: InputJournal) -> None:
        """A clean stop between hands, every event acknowledged, starts a new segment from a
        checkpoint: the next start (maybe of another version) replays nothing of this run."""
        table = self.table
        if (
            table.failed is not None
            or not isinstance(journal, SegmentedJournal)
            or not journal.has_inputs
            or not self.allowed()
        ):
            return
        try:
            journal.rotate(checkpoint(table.engine), table.engine.t)
        except JournalError as exc:  # the journal is whole as it is: recovery replays it
            log.error("journal rotation at stop failed: %s", exc)

    def allowed(self) -> bool:
        """A segment closes between hands only, and only once the broker acknowledged every
        event it produced (recovery re-sends from the active segment alone). The durable
        mark of what it acknowledged is written every 0.1 s; a rotation that waits only
        for it writes it at once (between hands can be short: a few inputs)."""
        table = self.table
        engine = table.engine
        if engine.hand is not None:
            return False
        acked = table.acked
        if acked is None or acked.written >= engine.seq:
            return True
        publisher = table.publisher
        if publisher is not None and publisher.acked_seq >= engine.seq:
            try:
                acked.write(engine.seq)
            except (OSError, TableError) as exc:  # the mark's own thread will say it again
                log.warning("delivery mark not written: %s", exc)
        return acked.written >= engine.seq
