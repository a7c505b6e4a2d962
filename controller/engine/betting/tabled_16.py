"""Rule 16: hands face up once a player is all-in and betting is complete (RP-8 F: face down
during hand-for-hand until the floor instructs the dealer)."""

from __future__ import annotations

from controller.engine.betting.changes import Change, FaceDownNow, Mark, Tabled
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import say
from controller.engine.state import FaceDown


def maybe_table(
    hb: HandChips, *, betting_over: bool = False, face_down: FaceDown | None = None
) -> list[Change]:
    """Rule 16: once a player is all-in and all betting is complete, every hand face up
    (`face_down`: where RP-8 F stands, if not the hand's own)."""
    if hb.tabled or len(hb.live) < 2:
        return []
    with_chips = [s for s in hb.live if hb.seats[s].stack > 0]
    if len(with_chips) > 1 and not betting_over:
        return []
    wait = hb.face_down if face_down is None else face_down
    if wait:  # RP-8 F: during hand-for-hand the cards stay face down
        if wait == FaceDown.WAIT:
            return [
                FaceDownNow(FaceDown.SAID),
                say("hands_face_down", seats=sorted(hb.live), rule="RP-8F"),
            ]
        return []
    return [
        Tabled(),
        *(Mark("shown", s) for s in sorted(hb.live)),
        say(
            "hands_tabled",
            seats=sorted(hb.live),
            showdown={str(s): hb.hole(s) for s in sorted(hb.live)},
            rule="16",
        ),
    ]


def instruct(hb: HandChips) -> list[Change] | None:
    """RP-8 F: the floor instructs the dealer; hands kept face down are tabled now (16).
    None when no hand was waiting face down."""
    if hb.face_down != FaceDown.SAID:
        return None
    return [
        FaceDownNow(FaceDown.OFF),
        *maybe_table(hb, betting_over=True, face_down=FaceDown.OFF),
    ]
