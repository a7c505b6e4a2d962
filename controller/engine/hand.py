"""A hand in progress: its facts (`state.DealtHand`), its chips (`HandBetting`) and its cards
(`HandDealing`)."""

from __future__ import annotations

from dataclasses import dataclass

from controller.engine.betting_flow import HandBetting
from controller.engine.dealing import HandDealing
from controller.engine.state import DealtHand


@dataclass(slots=True)
class Hand(DealtHand):
    """One hand in progress."""

    betting: HandBetting | None = None
    dealing: HandDealing | None = None
