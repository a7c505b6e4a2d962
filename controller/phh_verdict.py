"""pokerkit's verdict on each hand a program completes (room, sim, soak): None when it agrees.

The strict judge (controller/phh_judge.py) replays a hand's exported PHH file with pokerkit
and compares the final stacks with the engine's (`hand_completed`). pokerkit is the optional
`judge` extra: without it nothing is judged (`available()` is False, said once in the log)
and every program works as before. A verdict is short: `pokerkit: <reason>`.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from controller.phh import HandMessages, PhhHand, build_phh

log = logging.getLogger(__name__)
PREFIX = "pokerkit: "


@functools.cache
def _judge_module() -> ModuleType | None:
    """controller.phh_judge, or None (logged once) when pokerkit is not installed."""
    try:
        from controller import phh_judge
    except ImportError as exc:
        log.warning("pokerkit is not installed (the 'judge' extra): hands are not judged (%s)", exc)
        return None
    return phh_judge


def available() -> bool:
    """Whether pokerkit can judge hands here."""
    return _judge_module() is not None


def judge_phh(
    phh: PhhHand,
    events: Sequence[Mapping[str, Any]],
    starting: Mapping[int, int] | None = None,
) -> str | None:
    """pokerkit's verdict on an exported hand: None when it replays to the engine's final
    stacks (or the file was not written: its `problem` says why, or pokerkit is missing),
    else `pokerkit: <reason>`. `starting`: each seat's stack as the hand began, when known
    (checked against the file's starting stacks)."""
    module = _judge_module()
    if phh.text is None or module is None:
        return None
    odd, rake = module.hand_figures(events)
    start = None
    if starting is not None and all(s in starting for s in phh.seats):
        start = [starting[s] for s in phh.seats]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pokerkit's advice (a fold it finds needless)
            module.judge(phh.text, phh.finishing_stacks, starting=start, odd_chips=odd, rake=rake)
    except module.PhhJudgement as exc:
        return f"{PREFIX}{exc}"
    except Exception as exc:  # pokerkit failing on a file is a disagreement too
        return f"{PREFIX}{type(exc).__name__}: {exc}"
    return None


def judge_hand(hand: HandMessages, starting: Mapping[int, int] | None = None) -> str | None:
    """pokerkit's verdict on one completed hand's messages (see judge_phh)."""
    return judge_phh(build_phh(hand), hand.events, starting)


def state_stacks(state: Mapping[str, Any]) -> dict[int, int]:
    """Each seat's stack in a published `state`."""
    return {
        int(s): int(v["stack"])
        for s, v in (state.get("seats") or {}).items()
        if isinstance(v, dict) and isinstance(v.get("stack"), int)
    }


@dataclass
class _Table:
    """One table's hand in play, as a reader of its messages sees it."""

    events: list[dict[str, Any]] = field(default_factory=list)
    seqs: set[int] = field(default_factory=set)
    state: dict[str, Any] | None = None  # the last `state` read
    starting: dict[int, int] | None = None  # stacks as the hand began (the state just before)


@dataclass
class HandJudge:
    """Judges every hand completed in a stream of published messages (any number of
    tables): feed it each `state` and `events` payload; it keeps the count and who
    disagreed."""

    judged: int = 0
    disagreed: list[tuple[str, int, str]] = field(default_factory=list)  # (table, hand, why)
    tables: dict[str, _Table] = field(default_factory=dict)

    def see(self, table: str, topic: str, payload: Mapping[str, Any]) -> str | None:
        """Take one message; at a hand's `hand_completed`, pokerkit's verdict on it (None:
        it agrees, or nothing was judged)."""
        seen = self.tables.setdefault(table, _Table())
        if topic == "state":
            seen.state = dict(payload)
            return None
        if topic != "events":
            return None
        kind, seq = payload.get("type"), payload.get("seq")
        if kind == "hand_started":
            seen.events, seen.seqs = [dict(payload)], {int(seq or 0)}
            before = seen.state
            at_start = before is not None and before.get("seq") == int(seq or 0) - 1
            seen.starting = state_stacks(before) if before is not None and at_start else None
            return None
        if not seen.events or payload.get("hand") != seen.events[0].get("hand"):
            return None
        if isinstance(seq, int) and seq in seen.seqs:
            return None  # a message read twice
        seen.seqs.add(int(seq or 0))
        seen.events.append(dict(payload))
        if kind != "hand_completed":
            return None
        events, seen.events = seen.events, []
        if not available():
            return None
        number = int(events[0].get("hand") or 0)
        verdict = judge_hand(HandMessages(table, number, events), seen.starting)
        self.judged += 1
        if verdict is not None:
            self.disagreed.append((table, number, verdict))
        return verdict

    def summary(self, tables: int = 1) -> str:
        """`pokerkit judged N hands: N agree` (or which hands it disagreed on)."""
        if not available():
            return "pokerkit is not installed (the 'judge' extra): no hand judged"
        agree = self.judged - len(self.disagreed)
        text = f"pokerkit judged {self.judged} hands: {agree} agree"
        if self.disagreed:
            which = ", ".join(
                f"{t} hand {h}" if tables > 1 else f"hand {h}" for t, h, _ in self.disagreed
            )
            text += f"; {len(self.disagreed)} disagree ({which})"
        return text


def short(verdict: str, width: int = 100) -> str:
    """A verdict cut to one terminal line's share."""
    return verdict if len(verdict) <= width else verdict[: width - 1] + "…"


__all__ = ["HandJudge", "available", "judge_hand", "judge_phh", "short", "state_stacks"]
