"""Where a procedure is: its stages (re-exported by `controller.engine.state`)."""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    """Where a procedure is (`Procedure.stage`): its values are those published."""

    PENDING = "pending"  # announced, nothing done yet
    DONE = "done"  # resolved
    REDEAL = "redeal"  # misdeal (35): the cards are being dealt again
    DRAWN = "drawn"  # four-card flop (39): the random card drawn
    BURNED = "burned"  # four-card flop (39) or exposed card (35A-5): a card burned
    RESOLVED = "resolved"  # four-card flop (39): the flop stands as ruled
    REPLACED = "replaced"  # exposed card (35A-5): the card replaced
    RETURNED = "returned"  # premature card (RP-5): the card back in the stub
    TURN_REDEALT = "turn_redealt"  # premature card (RP-5): the river comes without a burn
