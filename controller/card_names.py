"""Card names in free text (alert messages, reply errors, plain-words event fields): finding
them, and hiding every one that is not public, so no text on a room-readable topic names a
hole card, a burn or the stub."""

from __future__ import annotations

import re
from collections.abc import Collection

#: A card name standing alone in text: "Qs", "Td", "9c" (not inside a word or a tag uid).
CARD_NAME = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][shdc])(?![A-Za-z0-9])")

#: What a hidden card name reads as.
HIDDEN = "a card"


def card_names(text: str) -> list[str]:
    """The card names in `text`, in order."""
    return CARD_NAME.findall(text)


def hide_private(text: str, public: Collection[str]) -> str:
    """`text` with every card name not in `public` replaced by "a card"."""
    if not CARD_NAME.search(text):
        return text
    return CARD_NAME.sub(lambda m: m.group(1) if m.group(1) in public else HIDDEN, text)
