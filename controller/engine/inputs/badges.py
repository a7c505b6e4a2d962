"""Staff badges: a dealer's push starts a hand (TDA 2019 rule 23); the floor at the table has
authority to rule (rule 1) while its badge is recent."""

from __future__ import annotations

from controller.engine import hands
from controller.engine.state import Staffer
from controller.engine.table import Table
from kernel.inputs import Badge


def badge(table: Table, read: Badge) -> None:
    """A staff badge presented to the reader (or taken off it)."""
    if read.removed:
        if table.floor is not None and table.floor[0].uid == read.uid:
            table.floor = None  # the floor took the badge away: authority ends
            table.mark_dirty()
        return
    member = table.staff.get(read.uid)
    if member is None:
        table.alert(
            "badge_unknown",
            "warning",
            f"badge {read.uid} is not in the staff registry: refused",
            uid=read.uid,
        )
    elif member.role == "floor":
        table.floor = (member, read.t)
        table.floor_called = False
        table.event("floor_arrived", floor=member.ref())
    else:
        _dealer_push(table, member)


def _dealer_push(table: Table, member: Staffer) -> None:
    """A dealer badges in: the dealer changes, and the push starts a hand (rule 23) unless
    the shuffler started this one already."""
    if table.dealer is not None and table.dealer.uid == member.uid:
        table.alert("badge_repeat", "info", f"{member.name} is already the dealer", uid=member.uid)
        return
    previous = table.dealer
    table.dealer = member
    table.event(
        "dealer_changed",
        dealer=member.ref(),
        previous=previous.ref() if previous else None,
        rule="23",
    )
    if hands.not_dealt_yet(table, "dealer_push"):
        assert table.hand is not None
        table.hand.dealer = member.ref()  # the same hand: started once (rule 23)
        return
    if table.hand is None and "dealer_push" in table.profile.hand_start_triggers:
        hands.start_hand(table, "dealer_push")
