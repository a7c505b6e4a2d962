"""Finds card names in the free text of room-readable messages (alert messages, reply errors,
plain-words event fields, procedure instructions) that were not public when published.

A card is public once a room-readable message has shown it in a structured field: the board,
a hand turned face up, a four-card flop's or a premature card's cards. Hole cards reach only
the `holecards` topic, which is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from controller.card_names import card_names
from controller.engine.cards import FULL_DECK

FREE_TEXT = {"message", "reason", "expected", "got", "instruction", "error"}
CARDS = set(FULL_DECK)


def _walk(value: Any, public: set[str], texts: list[str], key: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(v, public, texts, k)
    elif isinstance(value, list):
        for v in value:
            _walk(v, public, texts, key)
    elif isinstance(value, str):
        if key in FREE_TEXT:
            texts.append(value)
        elif value in CARDS:
            public.add(value)


def leaks(messages: Iterable[tuple[str, dict[str, Any]]]) -> list[str]:
    """(topic, payload) pairs in publishing order -> every free text naming a card that no
    room-readable message had shown by the end of the same moment (the messages one input
    published, which share their `t`)."""
    public: set[str] = set()
    found: list[str] = []
    moment: list[tuple[str, str]] = []
    now: object = None

    def check() -> None:
        for topic, text in moment:
            hidden = [c for c in card_names(text) if c not in public]
            if hidden:
                found.append(f"{topic}: {text!r} names {hidden}")
        moment.clear()

    for topic, payload in messages:
        if topic.endswith("holecards"):
            continue
        if payload.get("t") != now:
            check()
            now = payload.get("t")
        texts: list[str] = []
        _walk(payload, public, texts)
        moment.extend((topic, text) for text in texts)
    check()
    return found
