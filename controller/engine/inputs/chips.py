"""Chips read in a seat's bet zone or at the pot: pushes to be read as bets once settled, blinds
put out before the hand starts, the pot pushed to its winner."""

from __future__ import annotations

from controller.engine.antennas import Antenna, antenna
from controller.engine.table import Table
from kernel.inputs import Device, Event, TagIn, TagOut, Tick


def settle_before(table: Table, event: Event) -> None:
    """A push is settled when quiet long enough, or by any later input (docs/trace-format.md).

    A device going or coming is no table action: it settles nothing. While a four-card flop
    holds the table no push is taken as a bet (rule 39).
    """
    hand = table.hand
    betting = hand.betting if hand is not None else None
    if betting is None or isinstance(event, Device):
        return
    if hand is not None and hand.dealing is not None and hand.dealing.hold.reason is not None:
        return  # a four-card flop holds the table (39)
    if isinstance(event, Tick):
        betting.settle(event.t, only_due=True)
        return
    where = antenna(event.antenna) if isinstance(event, TagIn | TagOut) else None
    if where is not None and where.kind == "bet":
        # The zone's own push goes on unless it was already quiet long enough; every
        # other zone's push is settled by this later input.
        betting.settle(event.t, only_due=True)
        betting.settle(event.t, only_due=False, except_seat=where.seat)
    else:
        betting.settle(event.t, only_due=False)


def chip_moved(
    table: Table, tag: TagIn | TagOut, where: Antenna, value: int | None, chip: str
) -> None:
    """A chip tag arrived at or left a bet zone or the pot: counted at one place only.

    A chip read at a second place while still read at the first is not counted twice: the
    dealer is told (`chip_at_two_antennas`, naming the chip and both places) and the chip
    stays counted where it was first read until it leaves there; then it counts where it is
    still read. Its reading at the second place leaving first changes nothing.
    """
    spots = table.chip_spots
    if isinstance(tag, TagIn):
        if value is not None:
            table.chip_values[chip] = value
        others = spots.add(where.name, chip)
        if others:
            _read_twice(table, chip, where.name, others)
            return
        _count(table, tag, where, value, chip)
        return
    places = list(spots.at.get(chip, ()))
    spots.remove(where.name, chip)
    if places and places[0] != where.name:
        return  # the reading that was never counted left
    _count(table, tag, where, value, chip)
    still = spots.at.get(chip)
    if not still:
        table.chip_values.pop(chip, None)
        return
    # It left the place it was counted at but is still read at another: it is there now.
    known = table.chip_values.get(chip, value)
    moved = TagIn(t=tag.t, antenna=still[0], chip=chip, value=known)
    _count(table, moved, antenna(still[0]), known, chip)


def _read_twice(table: Table, chip: str, place: str, others: list[str]) -> None:
    """The chip is read at `place` and still at `others`: counted once, at the first."""
    value = table.chip_values.get(chip)
    worth = f" ({value})" if value is not None else ""
    table.alert(
        "chip_at_two_antennas",
        "warning",
        f"chip {chip}{worth} is read at {place} while still read at {', '.join(others)}: "
        f"counted once, at {others[0]}; dealer: leave it in one place",
        chip=chip,
        value=value,
        antennas=[*others, place],
        counted_at=others[0],
    )


def _count(table: Table, tag: TagIn | TagOut, where: Antenna, value: int | None, chip: str) -> None:
    """The chip's move counted: at the pot, or in a seat's bet zone."""
    if where.kind == "pot":
        betting = table.betting
        if isinstance(tag, TagOut) and betting is not None:
            betting.pot_pushed(tag.t)  # at showdown: the dealer is pushing the pot
        return
    assert where.seat is not None
    if table.hand is None:
        _before_the_hand(table, tag, where.seat, value, chip)
    else:
        _in_the_hand(table, tag, where.seat, value, chip)


def _before_the_hand(
    table: Table, tag: TagIn | TagOut, seat: int, value: int | None, chip: str
) -> None:
    """Blinds put out before the hand starts (e.g. before the dealer lifts the cards under
    casinos-austria): kept, and posted when the hand starts."""
    zone = table.early_chips.setdefault(seat, {})
    if isinstance(tag, TagIn) and value is not None:
        zone[chip] = value
    else:
        zone.pop(chip, None)


def _in_the_hand(
    table: Table, tag: TagIn | TagOut, seat: int, value: int | None, chip: str
) -> None:
    hand = table.hand
    assert hand is not None
    betting = hand.betting
    if betting is None or seat not in betting.contrib:
        if isinstance(tag, TagIn) and betting is not None:
            table.alert(
                "chips_outside_hand",
                "warning",
                f"chips arrived in the bet zone of seat {seat}, which is not in the hand",
                seat=seat,
            )
        return
    dealing = hand.dealing
    if dealing is not None and dealing.chips_set_aside(
        tag.t, seat, chip, arrived=isinstance(tag, TagIn)
    ):
        return  # pushed after a misdeal, before the re-deal: no action (35-C)
    if isinstance(tag, TagIn):
        assert value is not None
        betting.chip_in(tag.t, seat, chip, value)
        if hand.dealing is not None:
            hand.dealing.refuse(tag.t, "push", seat)  # held (39): the push waits, unsettled
    else:
        betting.chip_out(tag.t, seat, chip)
