"""Cards read at the card antennas: hole cards at a seat, the board, the burn, the muck; the
same card in two places (TDA 2019 rule 35-E); the first card lifted as a hand start (23)."""

from __future__ import annotations

from controller.engine import hands
from controller.engine.antennas import Antenna, antenna
from controller.engine.hand import Hand
from controller.engine.table import Table
from kernel.inputs import TagIn, TagOut


def card_arrived(table: Table, tag: TagIn, where: Antenna, card: str) -> None:
    """A card tag arrived at an antenna."""
    if where.reads_chips:
        table.alert(
            "card_on_chip_antenna",
            "warning",
            f"card read at {where.name}",
            antenna=where.name,
        )
        return
    others = table.cards.add(where.name, card)
    if _read_twice(table, where, others):
        return
    if where.kind == "seat":
        _at_seat(table, tag, where, card, others)
    elif where.kind == "board":
        _on_board(table, tag, card, others)
    elif where.kind == "burn":
        dealing = table.dealing
        if dealing is not None:
            dealing.burn_card(tag.t, card)
    elif where.kind == "muck":
        _at_muck(table, tag, card)


def _read_twice(table: Table, where: Antenna, others: list[str]) -> bool:
    """The card is still read at other antennas too: crossing from one to the next, or, on
    the table at two places at once, two cards alike (a fouled deck, 35-E: True)."""
    if not others:
        return False
    said = f"a card is read at {where.name} and at {', '.join(others)} at once"
    table_spots = [a for a in others if antenna(a).on_table]
    if table.hand is not None and where.on_table and table_spots:
        table.alert("card_at_two_antennas", "critical", said, antennas=[*others, where.name])
        hands.fouled_deck(table, "duplicate_card", antennas=[*table_spots, where.name])
        return True
    table.alert("card_at_two_antennas", "warning", said, antennas=[*others, where.name])
    return False


def _at_seat(table: Table, tag: TagIn, where: Antenna, card: str, others: list[str]) -> None:
    """A hole card (or, between hands under a house that starts the hand so, the lift)."""
    seat = where.seat
    assert seat is not None
    if (
        table.hand is None
        and "first_card" in table.profile.hand_start_triggers
        and card not in table.last_hand_cards
    ):
        table.lifted = where.name
        hands.start_hand(table, "first_card")  # e.g. Casinos Austria: the dealer lifts
        if table.holds:
            return  # refused with a `table_held` alert
    hand = table.hand
    if hand is None or hand.dealing is None:
        table.alert(
            "card_outside_hand",
            "warning",
            f"a card arrived at seat {seat} with no hand in progress",
            seat=seat,
        )
        return
    if others or card in hand.extras:
        return
    _moved_from_another_seat(table, hand, seat, card)
    if hand.betting is not None:
        hand.betting.cards_dealt = True
    if hand.dealing.hole_card(tag.t, seat, card) and hand.hole.get(seat):
        table.publish_holecards(seat, hand.hole[seat])


def _moved_from_another_seat(table: Table, hand: Hand, seat: int, card: str) -> None:
    """A card pitched to the wrong seat and slid on: it is this seat's card now."""
    for owner, cards in hand.hole.items():
        if owner != seat and card in cards:
            cards.remove(card)
            table.publish_holecards(owner, cards)
            table.alert(
                "card_moved_between_seats",
                "warning",
                f"a card moved from seat {owner} to seat {seat}",
                seats=[owner, seat],
            )
            return


def _on_board(table: Table, tag: TagIn, card: str, others: list[str]) -> None:
    hand = table.hand
    if hand is None or hand.dealing is None:
        table.alert(
            "card_outside_hand",
            "warning",
            "a card arrived on the board with no hand in progress",
        )
        return
    if others or card in hand.board:
        return
    hand.dealing.board_card(tag.t, card)


def _at_muck(table: Table, tag: TagIn, card: str) -> None:
    """A seat's card at the muck: its fold (kept, while a four-card flop holds the table)."""
    hand = table.hand
    if hand is None or hand.betting is None or hand.dealing is None:
        return
    for seat, cards in hand.hole.items():
        if card in cards:
            live = seat in hand.betting.live
            if not (live and hand.dealing.refuse(tag.t, "fold", seat)):
                hand.dealing.mucked(tag.t, seat)
            return


def card_left(table: Table, tag: TagOut, where: Antenna, card: str) -> None:
    """A card tag left an antenna."""
    if not table.cards.remove(where.name, card):
        table.alert(
            "tag_out_unexpected",
            "info",
            f"a card left {where.name} where it was not read",
            antenna=where.name,
        )
        return
    if (
        table.hand is None
        and table.last_hand_cards
        and not any(cards for a, cards in table.cards.contents.items() if antenna(a).on_table)
    ):
        table.last_hand_cards = set()  # the table is cleared: any card now is a new deal
    dealing = table.dealing
    if dealing is None:
        return
    if where.kind == "board":
        dealing.board_left(tag.t, card)
    dealing.collected()
