"""Seats dealt in but not playing: away from the table at the deal (TDA 2019 rule 30) or on
penalty (71-C); their hands are killed once the deal is over."""

from __future__ import annotations

from collections.abc import Iterable

from controller.engine.ports import TableView
from controller.engine.procedures.base import Effect, Kill


def absent_at_deal(order: Iterable[int], table: TableView) -> set[int]:
    """The seats away when the original deal began (a re-deal keeps them: rule 30)."""
    return {s for s in order if table.away(s)}


def kills(order: Iterable[int], table: TableView, absent: set[int]) -> list[Effect]:
    """The deal is over: every seat on penalty, or not at the table for the deal, is dead."""
    out: list[Effect] = []
    for seat in order:
        if table.penalty(seat):
            out.append(
                Kill(
                    seat,
                    rule="71C",
                    reason=f"seat {seat} is on penalty: hand killed after the deal",
                )
            )
        elif table.away(seat) or seat in absent:
            out.append(
                Kill(seat, rule="30", reason=f"seat {seat} was not at the table for the deal")
            )
    return out
