"""Rule 16: hands face up once a player is all-in and betting is complete (RP-8 F: face down
during hand-for-hand until the floor instructs the dealer)."""

from __future__ import annotations

from controller.engine.betting.hand_chips import HandChips
from controller.engine.state import FaceDown


def maybe_table(hb: HandChips, *, betting_over: bool = False) -> None:
    """Rule 16: once a player is all-in and all betting is complete, every hand face up."""
    if hb.tabled or len(hb.live) < 2:
        return
    with_chips = [s for s in hb.live if hb.seats[s].stack > 0]
    if len(with_chips) > 1 and not betting_over:
        return
    if hb.face_down:  # RP-8 F: during hand-for-hand the cards stay face down
        if hb.face_down == FaceDown.WAIT:
            hb.face_down = FaceDown.SAID
            hb.emit.event("hands_face_down", seats=sorted(hb.live), rule="RP-8F")
        return
    hb.tabled = True
    hb.shown |= hb.live
    hb.emit.event(
        "hands_tabled",
        seats=sorted(hb.live),
        showdown={str(s): hb.hole(s) for s in sorted(hb.live)},
        rule="16",
    )


def instruct(hb: HandChips) -> bool:
    """RP-8 F: the floor instructs the dealer; hands kept face down are tabled now (16).
    False when no hand was waiting face down."""
    if hb.face_down != FaceDown.SAID:
        return False
    hb.face_down = FaceDown.OFF
    maybe_table(hb, betting_over=True)
    return True
