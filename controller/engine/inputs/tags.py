"""Tag events from the reader boards: a card or a chip arriving at or leaving an antenna,
resolved through the registries; a tag in no registry is a foreign card (TDA 2019 rule 35-E)
or a counterfeit chip."""

from __future__ import annotations

from controller.engine import hands
from controller.engine.antennas import Antenna, antenna
from controller.engine.inputs.cards import card_arrived, card_left
from controller.engine.inputs.chips import chip_moved
from controller.engine.table import Table
from kernel.inputs import TagIn, TagOut


def tag_in(table: Table, tag: TagIn) -> None:
    """A tag arrived at an antenna."""
    where = antenna(tag.antenna)
    card, value, chip = _resolve(table, tag, where)
    if chip is not None:
        if not where.reads_chips:
            table.alert(
                "chip_on_card_antenna",
                "info",
                f"a chip was read at {where.name}",
                antenna=where.name,
            )
            return
        chip_moved(table, tag, where, value, chip)
    elif card is not None:
        card_arrived(table, tag, where, card)


def tag_out(table: Table, tag: TagOut) -> None:
    """A tag left an antenna."""
    where = antenna(tag.antenna)
    card, value, chip = _resolve(table, tag, where)
    if chip is not None:
        if where.reads_chips:
            chip_moved(table, tag, where, value, chip)
    elif card is not None:
        card_left(table, tag, where, card)


def _resolve(
    table: Table, tag: TagIn | TagOut, where: Antenna
) -> tuple[str | None, int | None, str | None]:
    """Card name, chip value, chip id of a tag event; alert when the UID is unknown."""
    if tag.card is not None:
        return tag.card, None, None
    if tag.chip is not None:
        return None, tag.value, tag.chip
    uid = tag.uid or ""
    card = table.deck.card_of(uid) if table.deck else None
    if card is not None:
        return card, None, None
    value = table.chips.value_of(uid) if table.chips else None
    if value is not None:
        return None, value, uid
    table.alert(
        "unknown_tag",
        "critical" if table.hand is not None or where.kind == "bet" else "warning",
        f"tag {uid} at {where.name} is in no registry (foreign card or counterfeit chip?)",
        uid=uid,
        antenna=where.name,
    )
    card_antenna = where.kind not in ("bet", "pot", "register")
    if isinstance(tag, TagIn) and card_antenna and table.hand is not None:
        hands.fouled_deck(table, "foreign_card", uid=uid, antenna=where.name)
    return None, None, None
