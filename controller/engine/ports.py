"""What the engine's parts see of each other: the `Emitter`, the table's read-only view, the
registries; procedures and the hand's flows know the table only through these."""

from __future__ import annotations

from typing import Any, Protocol

from controller.engine.effects import TableEffect
from controller.rules.profiles import Profile


class Emitter(Protocol):
    """Where a flow sends what it decides: `events` and `alerts` messages (the table)."""

    def event(self, kind: str, **fields: Any) -> None: ...

    def alert(self, kind: str, severity: str, message: str, **fields: Any) -> None: ...


class TableView(Protocol):
    """What a procedure may read of the table, and nothing it may change."""

    @property
    def profile(self) -> Profile: ...

    @property
    def hole_reads(self) -> int: ...

    def floor_present(self) -> bool: ...

    def floor_ref(self) -> dict[str, str] | None: ...

    def cards_at(self, antenna: str) -> list[str]: ...

    def table_clear(self) -> bool: ...

    def away(self, seat: int) -> bool: ...

    def penalty(self, seat: int) -> int: ...

    def held(self) -> list[str]: ...


class TableOutputs(Emitter, Protocol):
    """What the hand's dealing flow may ask of the table besides events and alerts."""

    def do(self, effects: list[TableEffect]) -> None: ...

    def call_floor(self) -> None: ...

    def holecards(self, seat: int) -> None: ...

    def mark_dirty(self) -> None: ...


class TablePorts(TableView, TableOutputs, Protocol):
    """The table as the hand's dealing flow sees it: read-only, plus its outputs."""


class CardResolver(Protocol):
    """Deck registry: tag UID to card name."""

    def card_of(self, uid: str) -> str | None: ...


class ChipResolver(Protocol):
    """Chip registry: tag UID to chip value."""

    def value_of(self, uid: str) -> int | None: ...


class StaffSource(Protocol):
    """The staff registry the engine starts from (controller.staff.StaffRegistry)."""

    def members(self) -> list[Any]: ...
