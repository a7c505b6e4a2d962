"""Deck and chip registries: which RFID tag uid is which card, which chip is worth what."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from kernel.errors import RegistryError

V = TypeVar("V")

RANKS = "23456789TJQKA"
SUITS = "cdhs"
# Canonical card order: by rank, then suit (2c 2d 2h 2s 3c ... As). Registry files are
# written in this order and registration asks for the cards in this order.
CARDS: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)
DECK_SIZE = len(CARDS)

# Tag uids in uppercase hex: ISO 14443 (4, 7 or 10 bytes) or ISO 15693 (8 bytes).
UID_RE = re.compile(r"^(?:[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{16}|[0-9A-F]{20})$")
REGISTRY_ID_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_CARD_INDEX = {card: i for i, card in enumerate(CARDS)}
_TOML_POS_RE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_QUOTED_KEY_RE = re.compile(r'^\s*"([^"]*)"\s*=')


def is_uid(uid: str) -> bool:
    """True for 8, 14, 16 or 20 uppercase hex digits."""
    return UID_RE.match(uid) is not None


def is_card(card: str) -> bool:
    """True for a card name: rank + suit, e.g. "Td"."""
    return card in _CARD_INDEX


def _check_id(kind: str, registry_id: object) -> str:
    if not isinstance(registry_id, str) or not REGISTRY_ID_RE.match(registry_id):
        raise RegistryError(
            f"[{kind}] id: expected a non-empty string of letters, digits, '_', '.', '-', "
            f"got {registry_id!r}"
        )
    return registry_id


def _check_uid(uid: object) -> str:
    if not isinstance(uid, str) or not is_uid(uid):
        raise RegistryError(
            f"[tags] bad uid {uid!r}: expected 8, 14, 16 or 20 uppercase hex digits"
        )
    return uid


class _TagMap(Generic[V]):
    """What both registries share: an ordered uid -> value map, looked up case-insensitively."""

    __slots__ = ("_by_uid", "id")
    _by_uid: dict[str, V]
    id: str

    def items(self) -> Iterator[tuple[str, V]]:
        """(uid, value) pairs in the registry's canonical order."""
        return iter(self._by_uid.items())

    def as_dict(self) -> dict[str, V]:
        """A copy of the uid -> value mapping, in canonical order."""
        return dict(self._by_uid)

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and uid.upper() in self._by_uid

    def __len__(self) -> int:
        return len(self._by_uid)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, tags={len(self)})"


class DeckRegistry(_TagMap[str]):
    """A registered deck: each of the 52 cards has exactly one tag uid."""

    __slots__ = ("_by_card",)

    def __init__(self, deck_id: str, mapping: Mapping[str, str]) -> None:
        """Validate `mapping` (uid -> card); RegistryError names the problem."""
        self.id = _check_id("deck", deck_id)
        if len(mapping) > DECK_SIZE:
            raise RegistryError(
                f"[tags] {len(mapping)} tags: a deck has exactly {DECK_SIZE} "
                f"(the {DECK_SIZE + 1}th is one too many)"
            )
        by_uid: dict[str, str] = {}
        by_card: dict[str, str] = {}
        for uid, card in mapping.items():
            _check_uid(uid)
            if not isinstance(card, str) or not is_card(card):
                raise RegistryError(
                    f"[tags] {uid}: bad card {card!r}: expected rank ({RANKS}) + suit ({SUITS})"
                )
            if card in by_card:
                raise RegistryError(f"[tags] duplicate card {card}: tags {by_card[card]} and {uid}")
            by_uid[uid] = card
            by_card[card] = uid
        missing = [card for card in CARDS if card not in by_card]
        if missing:
            raise RegistryError(f"[tags] {len(by_uid)} tags: missing card(s) {' '.join(missing)}")
        self._by_uid = {
            uid: by_uid[uid] for uid in sorted(by_uid, key=lambda u: _CARD_INDEX[by_uid[u]])
        }
        self._by_card = by_card

    def card_of(self, uid: str) -> str | None:
        """The card a tag is, or None for a tag not in this deck (case-insensitive uid)."""
        return self._by_uid.get(uid.upper())

    def uid_of(self, card: str) -> str:
        """The tag uid of a card; KeyError for a name that is not a card."""
        return self._by_card[card]


class ChipRegistry(_TagMap[int]):
    """Registered chips: tag uid -> value (positive integer)."""

    __slots__ = ("denominations",)

    def __init__(
        self,
        chips_id: str,
        mapping: Mapping[str, int],
        denominations: Mapping[int, str] | None = None,
    ) -> None:
        """Validate `mapping` (uid -> value) and the optional value -> colour table."""
        self.id = _check_id("chips", chips_id)
        denoms: dict[int, str] = {}
        for value, colour in (denominations or {}).items():
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise RegistryError(f"[denominations] {value!r}: not a positive integer value")
            if not isinstance(colour, str) or not colour:
                raise RegistryError(f"[denominations] {value}: colour must be a non-empty string")
            denoms[value] = colour
        if not mapping:
            raise RegistryError("[tags] no chips registered")
        by_uid: dict[str, int] = {}
        for uid, value in mapping.items():
            _check_uid(uid)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise RegistryError(f"[tags] {uid}: value {value!r} is not a positive integer")
            if denoms and value not in denoms:
                raise RegistryError(
                    f"[tags] {uid}: value {value} is not one of [denominations] "
                    f"{', '.join(str(v) for v in sorted(denoms))}"
                )
            by_uid[uid] = value
        self._by_uid = dict(sorted(by_uid.items(), key=lambda item: (item[1], item[0])))
        self.denominations = dict(sorted(denoms.items()))

    def value_of(self, uid: str) -> int | None:
        """A chip's value, or None for a tag that is not a registered chip."""
        return self._by_uid.get(uid.upper())


# ---------------------------------------------------------------------------- reading


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RegistryError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{path}: cannot read: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # TOML itself refuses a repeated key: name the repeated tag uid and its lines
        first_line: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith("["):
                first_line.clear()  # keys repeat legitimately across tables
                continue
            match = _QUOTED_KEY_RE.match(line)
            if match is None:
                continue
            key = match.group(1)
            if key in first_line:
                raise RegistryError(
                    f"{path}: line {number}: duplicate tag uid {key} "
                    f"(already on line {first_line[key]})"
                ) from None
            first_line[key] = number
        message = str(exc)
        pos = _TOML_POS_RE.search(message)
        if pos is None:
            raise RegistryError(f"{path}: TOML syntax error: {message}") from None
        raise RegistryError(
            f"{path}: line {pos.group(1)}, column {pos.group(2)}: TOML syntax error: "
            f"{message[: pos.start()]}"
        ) from None


def _sections(path: Path, data: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key, value in data.items():
        if key not in allowed:
            raise RegistryError(
                f"{path}: unknown key {key!r} (allowed sections: {', '.join(allowed)})"
            )
        if not isinstance(value, dict):
            raise RegistryError(f"{path}: [{key}] must be a table")


def _registry_id(path: Path, data: dict[str, Any], section: str) -> str:
    if section not in data:
        raise RegistryError(f"{path}: missing [{section}] section with its id")
    head: dict[str, Any] = data[section]
    for key in head:
        if key != "id":
            raise RegistryError(f"{path}: unknown key {key!r} in [{section}]")
    if "id" not in head:
        raise RegistryError(f"{path}: [{section}] id: missing (required)")
    value: str = head["id"]
    return value


def load_deck(path: Path) -> DeckRegistry:
    """Read a deck registry file; RegistryError names the file and the problem."""
    path = Path(path)
    data = _read_toml(path)
    _sections(path, data, ("deck", "tags"))
    try:
        deck_id = _registry_id(path, data, "deck")
        return DeckRegistry(deck_id, data.get("tags", {}))
    except RegistryError as exc:
        if str(exc).startswith(f"{path}: "):
            raise
        raise RegistryError(f"{path}: {exc}") from None


def load_chips(path: Path) -> ChipRegistry:
    """Read a chip registry file; RegistryError names the file and the problem."""
    path = Path(path)
    data = _read_toml(path)
    _sections(path, data, ("chips", "denominations", "tags"))
    try:
        chips_id = _registry_id(path, data, "chips")
        denominations: dict[int, str] = {}
        for key, colour in data.get("denominations", {}).items():
            if not re.fullmatch(r"[1-9][0-9]*", key):
                raise RegistryError(f"[denominations] {key!r}: not a positive integer value")
            denominations[int(key)] = colour
        return ChipRegistry(chips_id, data.get("tags", {}), denominations)
    except RegistryError as exc:
        if str(exc).startswith(f"{path}: "):
            raise
        raise RegistryError(f"{path}: {exc}") from None


# ---------------------------------------------------------------------------- writing


def _toml_string(value: str) -> str:
    """A TOML basic string."""
    out = ['"']
    escapes = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
    escapes |= {"\f": "\\f", "\r": "\\r"}
    for ch in value:
        if ch in escapes:
            out.append(escapes[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def atomic_write_text(path: Path, text: str, mode: int = 0o600) -> None:
    """Write `text` to `path` via a temporary file in the same directory and os.replace;
    the file gets `mode` exactly (0600 by default), whatever the umask."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def format_deck(deck_id: str, mapping: Mapping[str, str]) -> str:
    """The registry file text for a deck (validated), tags in canonical card order."""
    deck = DeckRegistry(deck_id, mapping)
    lines = [
        f"# Deck registry: tag uid -> card, {DECK_SIZE} tags (see docs/registries.md).",
        "[deck]",
        f"id = {_toml_string(deck.id)}",
        "",
        "[tags]",
    ]
    lines += [f'"{uid}" = "{card}"' for uid, card in deck.items()]
    return "\n".join(lines) + "\n"


def format_chips(
    chips_id: str, mapping: Mapping[str, int], denominations: Mapping[int, str] | None = None
) -> str:
    """The registry file text for chips (validated), tags ordered by value, then uid."""
    chips = ChipRegistry(chips_id, mapping, denominations)
    lines = [
        "# Chip registry: tag uid -> value (see docs/registries.md).",
        "[chips]",
        f"id = {_toml_string(chips.id)}",
        "",
    ]
    if chips.denominations:
        lines.append("[denominations]")
        lines += [f'"{v}" = {_toml_string(c)}' for v, c in chips.denominations.items()]
        lines.append("")
    lines.append("[tags]")
    lines += [f'"{uid}" = {value}' for uid, value in chips.items()]
    return "\n".join(lines) + "\n"


def write_deck(path: Path, deck_id: str, mapping: Mapping[str, str]) -> None:
    """Validate and write a deck registry file atomically, in canonical card order."""
    atomic_write_text(path, format_deck(deck_id, mapping))


def write_chips(
    path: Path,
    chips_id: str,
    mapping: Mapping[str, int],
    denominations: Mapping[int, str] | None = None,
) -> None:
    """Validate and write a chip registry file atomically, ordered by value, then uid."""
    atomic_write_text(path, format_chips(chips_id, mapping, denominations))
