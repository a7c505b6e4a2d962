"""What the engine is told of its table: identity, size and rules (`EngineSpec`)."""

from __future__ import annotations

from dataclasses import dataclass

from controller.config import Config


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """What the engine needs to know of the table: identity, size, rules."""

    table: str
    room: str
    seats: int
    profile: str = "tda-2019"
    game: str = "nlhe"
    settle_seconds: float = 1.0
    odd_chip_unit: int = 1  # rule 20: odd chips are broken into the smallest chip in play

    @classmethod
    def from_config(cls, config: Config) -> EngineSpec:
        """The engine's view of a table configuration."""
        return cls(
            table=config.table.id,
            room=config.table.room,
            seats=config.table.seats,
            profile=config.rules.profile,
            game=config.rules.game,
            settle_seconds=config.rules.settle_seconds,
        )
