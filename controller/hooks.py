"""What a concern of the table loop sees of the daemon: its named events and its parts.

The daemon (controller/daemon.py) owns the loop, the queue and the order of effects; every
other concern (lamps, draws, the staff file, journal rotation, heap trimming, hole-card
release, the boards' focus, room commands) registers a handler on a named event, as
Klipper's `Printer.register_event_handler` / `send_event` do:

- ``table:starting`` ()                  first thing at start, before the journal opens;
- ``table:recovered`` ()                 the journal is replayed, before any new input;
- ``table:ready`` ()                     recovered, broker connected, devices open;
- ``take:<item class>`` (item, effects)  an item that is not an engine input (a refused
  command, a resend or hole-card request, a device alert, the keys due): its handler
  returns the messages it produced, journaled; `effects` takes what must wait for the
  commit;
- ``table:applied`` (input)              an input was applied: a handler may return an
  effect (a callable) to run once the batch is committed;
- ``table:committed`` (messages)         a batch is committed and published: each handler
  runs in the order registered, guarded (what one raises is told to the room and the
  next still runs);
- ``table:stopping`` (journal)           a clean stop, the loop ended, before the journal
  is closed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from controller.config import Config
from controller.delivery import AckedMark
from controller.devices import Devices
from controller.engine import Engine
from controller.items import Inbox
from controller.journal import InputJournal
from controller.notices import Notices
from controller.publisher import Publisher
from controller.seal import Record, TableSeal
from kernel.errors import JournalError
from kernel.inputs import Event
from kernel.messages import Message

Effect = Callable[[], None]
"""Something to do once the batch is committed (a PUBACK, a lamp, the staff file)."""


class Table(Protocol):
    """The daemon as its concerns see it (thread: the loop's, unless said otherwise)."""

    @property
    def config(self) -> Config: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def devices(self) -> Devices: ...

    @property
    def journal(self) -> InputJournal | None: ...

    @property
    def acked(self) -> AckedMark | None: ...

    @property
    def publisher(self) -> Publisher | None: ...

    @property
    def seal(self) -> TableSeal: ...

    @property
    def notices(self) -> Notices: ...

    @property
    def queue(self) -> Inbox: ...

    @property
    def failed(self) -> JournalError | None: ...

    def register_event_handler(self, event: str, callback: Callable[..., Any]) -> None:
        """Call `callback` each time `event` is sent (in the order registered)."""
        ...

    def now(self) -> float:
        """Trace time: seconds since the journal began (thread-safe)."""
        ...

    def submit(self, event: Event) -> None:
        """Queue an input event (thread-safe)."""
        ...

    def record(self, src: str, messages: list[Message]) -> list[Message]:
        """Journal messages about to be published (sealed, chained); return them."""
        ...

    def keep(self, records: list[Record]) -> list[Message]:
        """Journal records already sealed; return their messages."""
        ...

    def emit(self, message: Message) -> None:
        """Journal, commit and publish a message made outside a batch."""
        ...
