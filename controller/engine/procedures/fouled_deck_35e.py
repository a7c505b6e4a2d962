"""A fouled deck, TDA 2019 rule 35-E: a foreign or duplicate card stops play, every bet is
returned, the table is held until the floor releases it."""

from __future__ import annotations

from typing import Any

from controller.engine.effects import CallFloor, TableEffect, alert, say

#: The hold a fouled deck puts on the table, as `state.held` lists it.
FOULED_DECK_HOLD = "fouled_deck"


def stopped(why: str, details: dict[str, Any]) -> list[TableEffect]:
    """The `fouled_deck` event: why play stopped (`foreign_card`, `duplicate_card`)."""
    return [say("fouled_deck", reason=why, rule="35E", **details)]


def floor_called(why: str) -> list[TableEffect]:
    """The floor is called: the deck is replaced, the floor releases the table."""
    return [
        CallFloor(),
        alert(
            "fouled_deck",
            "critical",
            f"fouled deck ({why}): play stops, every bet is returned (rule 35-E); "
            "replace the deck; the floor releases the table",
            rule="35E",
        ),
    ]


def bets_returned(refunds: dict[int, int]) -> list[TableEffect]:
    """Every chip put in goes back to its owner."""
    return [
        say("bets_returned", refunds={str(s): c for s, c in sorted(refunds.items())}, rule="35E")
    ]
