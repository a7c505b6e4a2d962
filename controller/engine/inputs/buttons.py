"""Buttons: the shuffler's hand start (TDA 2019 rule 23), the dealer panel (misdeal, boxed,
exposed: rule 35; floor: rule 1), check, the all-in buttons (RP-1) and the raise declaration
(44)."""

from __future__ import annotations

from controller.engine import hands
from controller.engine.betting_flow import HandBetting
from controller.engine.dealing import HandDealing
from controller.engine.procedures import misdeal_35
from controller.engine.procedures.fouled_deck_35e import FOULED_DECK_HOLD
from controller.engine.procedures.four_card_flop_39 import PROCEDURE_HOLD
from controller.engine.table import Table
from kernel.inputs import ButtonPress

PANEL = ("misdeal", "boxed", "exposed")


def pressed(table: Table, press: ButtonPress) -> None:
    """A button was pressed."""
    if press.name == "shuffler":
        _shuffler(table)
        return
    if press.name == "floor":
        _floor(table)
        return
    betting, dealing = table.betting, table.dealing
    if betting is None or dealing is None:
        table.alert(
            "button_out_of_hand",
            "warning",
            f"{press.name} pressed with no hand in progress",
            button=press.name,
        )
        return
    if press.name in PANEL:
        _panel(press, dealing)
        return
    _betting_button(table, press, betting, dealing)


def _shuffler(table: Table) -> None:
    """The shuffler's button starts a hand (23), once; or the re-deal of a misdealt one (35-C)."""
    if "shuffler" not in table.profile.hand_start_triggers:
        table.alert(
            "shuffler_not_a_trigger",
            "info",
            f"under profile {table.profile.name} the hand starts when the dealer "
            "lifts the cards (the first card read), not on the shuffler button",
        )
        return
    dealing = table.dealing
    if dealing is not None and dealing.awaiting_redeal():
        table.do([misdeal_35.redeal_same_hand()])
        return
    if hands.not_dealt_yet(table, "shuffler"):
        table.alert(
            "hand_already_started",
            "info",
            f"hand {table.hand.number if table.hand else ''} was already started "
            "(rule 23: one hand, one start); no card dealt yet",
        )
        return
    hands.start_hand(table, "shuffler")


def _panel(press: ButtonPress, dealing: HandDealing) -> None:
    """The dealer panel's declarations: misdeal, boxed, exposed (35)."""
    if press.name == "boxed":
        dealing.boxed(press.t)
    elif press.name == "exposed":
        dealing.exposed(press.t)
    else:
        dealing.misdeal_pressed(press.t)


def _floor(table: Table) -> None:
    """`floor`: a call for the floor, or, with the floor's badge read, the floor's ruling."""
    if not table.floor_present():
        table.call_floor()
        table.alert("floor_called", "warning", "dealer pressed floor: floor called", button="floor")
        return
    # The floor rules (rule 1): holds released, open calls settled, the board as it lies.
    released = [k for k in table.held() if k in (FOULED_DECK_HOLD, PROCEDURE_HOLD)]
    table.holds.pop(FOULED_DECK_HOLD, None)
    dealing = table.dealing
    closed = dealing.floor_ruled() if dealing is not None else []
    table.floor_called = False
    table.event(
        "floor_ruling",
        floor=table.floor_ref(),
        released=released,
        closed=closed,
        rule="1",
    )


def _betting_button(
    table: Table, press: ButtonPress, betting: HandBetting, dealing: HandDealing
) -> None:
    """check, all-in (RP-1), raise (44): refused while a four-card flop holds the table."""
    seat = press.seat if press.name == "allin" else betting.to_act
    if press.name in ("check", "allin", "raise") and dealing.refuse(press.t, press.name, seat):
        return
    if press.name == "check":
        if betting.to_act is not None:
            dealing.end_of_deal(press.t, upto=betting.to_act)
        betting.check(press.t)
    elif press.name == "allin" and press.seat is not None:
        if press.seat not in betting.contrib:
            table.alert(
                "button_out_of_sequence",
                "warning",
                f"all-in button of seat {press.seat}, not in the hand",
                seat=press.seat,
            )
        else:
            betting.declare(press.seat, "allin")
    elif press.name == "raise":
        if betting.to_act is None:
            table.alert("button_out_of_sequence", "warning", "raise pressed with no one to act")
        else:
            betting.declare(betting.to_act, "raise")
