"""Deck registration (blank tags read in the printed card order) and simulated registries."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from controller.registry import CARDS, DECK_SIZE, REGISTRY_ID_RE, is_uid, write_deck
from kernel.errors import RegistryError

# Chips per denomination in the simulated chip set (examples/chips/sim-chips.toml): a cash
# table's float at blinds 100/200, sized for the demo of `tablectl sim` (about twice the
# most of each value it had on the table at once in 8,000 measured hands, docs/registries.md).
SIM_CHIP_COUNTS: dict[int, int] = {
    1: 50,
    5: 50,
    25: 60,
    100: 300,
    500: 60,
    1000: 120,
    5000: 80,
    25000: 30,
}
SIM_CHIP_COLOURS: dict[int, str] = {
    1: "white",
    5: "red",
    25: "green",
    100: "black",
    500: "purple",
    1000: "yellow",
    5000: "orange",
    25000: "grey",
}
_HEX_RE = re.compile(r"^[0-9A-F]*$")


@dataclass(frozen=True, slots=True)
class RegistrationResult:
    """What happened to one offered tag."""

    accepted: bool
    uid: str
    card: str | None  # the card assigned; for a refused duplicate, the card it already is
    message: str  # for the dealer: "7h registered, next 7s" / "duplicate tag, ..."
    next_card: str | None  # the card to place next, None when the deck is complete


class DeckRegistration:
    """Registers a deck of blank tags: the order IS the identity.

    The dealer places the cards on the `register` antenna one by one in the printed
    order (registry.CARDS: 2c 2d 2h 2s 3c ... As); each new tag is assigned the next card.
    Pure: no I/O except `save`.
    """

    def __init__(self, deck_id: str) -> None:
        if not REGISTRY_ID_RE.match(deck_id):
            raise RegistryError(
                f"deck id {deck_id!r}: only letters, digits, '_', '.' and '-' are allowed"
            )
        self.deck_id = deck_id
        self._by_uid: dict[str, str] = {}

    @property
    def next_card(self) -> str | None:
        """The card the dealer must place next, None when all 52 are registered."""
        return None if self.complete else CARDS[len(self._by_uid)]

    @property
    def complete(self) -> bool:
        """True once all 52 cards have a tag."""
        return len(self._by_uid) == DECK_SIZE

    @property
    def registered(self) -> dict[str, str]:
        """A copy of uid -> card registered so far, in registration order."""
        return dict(self._by_uid)

    def __len__(self) -> int:
        return len(self._by_uid)

    def offer(self, uid: str) -> RegistrationResult:
        """A tag was read: assign it the next card, or refuse it (state unchanged)."""
        uid = uid.strip().upper()
        if not is_uid(uid):
            return self._refuse(uid, None, f"bad uid {uid!r}: expected 8, 14, 16 or 20 hex digits")
        if uid in self._by_uid:
            known = self._by_uid[uid]
            return self._refuse(uid, known, f"duplicate tag, already registered as {known}")
        card = self.next_card
        if card is None:
            return self._refuse(uid, None, "deck is complete")
        self._by_uid[uid] = card
        following = self.next_card
        tail = "deck complete" if following is None else f"next {following}"
        return RegistrationResult(True, uid, card, f"{card} registered, {tail}", following)

    def undo(self) -> str | None:
        """Forget the last registered card (placed by mistake); returns it, or None."""
        if not self._by_uid:
            return None
        uid = next(reversed(self._by_uid))
        return self._by_uid.pop(uid)

    def save(self, path: Path) -> None:
        """Write the registry file (atomically); refused until the deck is complete."""
        if not self.complete:
            raise RegistryError(
                f"deck {self.deck_id} is incomplete: {len(self)} of {DECK_SIZE} cards "
                f"registered, next {self.next_card}"
            )
        write_deck(path, self.deck_id, self._by_uid)

    def _refuse(self, uid: str, card: str | None, message: str) -> RegistrationResult:
        return RegistrationResult(False, uid, card, message, self.next_card)


def _sim_prefix(seed_prefix: str | None, deck_id: str, width: int) -> str:
    if seed_prefix is None:
        return hashlib.sha256(deck_id.encode("utf-8")).hexdigest()[:4].upper()
    prefix = seed_prefix.upper()
    if not _HEX_RE.match(prefix) or len(prefix) > width:
        raise RegistryError(f"seed prefix {seed_prefix!r}: at most {width} hex digits")
    return prefix


def sim_card_uid(prefix: str, index: int) -> str:
    """The simulated uid of card number `index` (0 = 2c ... 51 = As) in a sim deck.

    14 hex digits (a 7-byte uid): "04" (NXP), the prefix padded with zeros to 10
    digits, then index + 1 as 2 hex digits (01 ... 34).
    """
    return f"04{prefix}{'0' * (10 - len(prefix))}{index + 1:02X}"


def generate_sim_deck(deck_id: str, seed_prefix: str | None = None) -> dict[str, str]:
    """A deterministic simulated deck: uid -> card, in canonical card order.

    `seed_prefix` (0..10 hex digits) tells decks apart; None derives 4 hex digits from
    `deck_id` (sha256). E.g. prefix "A": 2c = 04A00000000001, As = 04A00000000034.
    """
    prefix = _sim_prefix(seed_prefix, deck_id, 10)
    return {sim_card_uid(prefix, i): card for i, card in enumerate(CARDS)}


def sim_chip_uid(prefix: str, value: int, serial: int) -> str:
    """The simulated uid of chip number `serial` (1...) of `value`.

    14 hex digits read as decimal: "04", the 1-digit prefix, the value in 7 digits,
    the serial in 4 digits. E.g. prefix "C", the 17th 500 chip: 04C00005000017.
    """
    return f"04{prefix}{value:07d}{serial:04d}"


def generate_sim_chips(
    counts: Mapping[int, int] | None = None, *, seed_prefix: str = "C"
) -> dict[str, int]:
    """A deterministic simulated chip set: uid -> value (default SIM_CHIP_COUNTS)."""
    prefix = seed_prefix.upper()
    if not re.fullmatch(r"[0-9A-F]", prefix):
        raise RegistryError(f"seed prefix {seed_prefix!r}: expected 1 hex digit")
    chips: dict[str, int] = {}
    for value, count in sorted((SIM_CHIP_COUNTS if counts is None else counts).items()):
        if not 0 < value <= 9_999_999:
            raise RegistryError(f"chip value {value}: expected 1..9999999")
        if not 0 <= count <= 9999:
            raise RegistryError(f"chip count {count} for value {value}: expected 0..9999")
        for serial in range(1, count + 1):
            chips[sim_chip_uid(prefix, value, serial)] = value
    return chips
