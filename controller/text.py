"""Checks on free text from outside (room commands, staff registry) before it is published."""

from __future__ import annotations

import unicodedata

from controller.trace import CARD_RE

# Unicode categories refused in a name or note: control characters, line and paragraph
# separators (a name is one line on every screen that shows it).
_REFUSED_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})


def is_unicode(value: str) -> bool:
    """True if `value` can be encoded as UTF-8 (no lone surrogate, e.g. a JSON `\\ud800`)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_problem(value: str) -> str | None:
    """Why `value` cannot be a name or note published on a public topic, or None if it can.

    Refused: text that is not Unicode (a lone surrogate), blank text, a control character
    or line break, and a string that reads as a card name (`As`): public topics never carry
    one unless the rules show it (TDA 2019 rule 16; docs/mqtt.md).
    """
    if not is_unicode(value):
        return "is not Unicode text (a lone surrogate: a \\uD800-\\uDFFF escape without its pair)"
    if not value.strip():
        return "is blank"
    for index, char in enumerate(value):
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            return f"has a control character (U+{ord(char):04X} at position {index + 1})"
    if CARD_RE.fullmatch(value):
        return "reads as a card name (rank + suit); public topics never carry one"
    return None
