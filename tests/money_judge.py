"""Every completed hand of a table's messages exported to PHH and judged by pokerkit strictly
(controller/phh_judge.py), from the real starting stacks: the money tests' judge."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from controller.phh import build_phh, split_hands
from controller.phh_judge import hand_figures, judge
from kernel.messages import EVENTS, Message

Messages = list[tuple[str, dict[str, Any]]]


def pairs(messages: list[Message]) -> Messages:
    """(topic, payload) of each message."""
    return [(m.topic, m.payload) for m in messages]


def starting_stacks(messages: Messages, hand: int) -> dict[int, int]:
    """Each seat's stack in the last `state` published before the hand started, updated by
    a `hand_completed` after it (a hand abandoned by the shuffler that starts the next one
    publishes its `state` only after the new `hand_started`)."""
    stacks: dict[int, int] = {}
    for topic, payload in messages:
        if topic == "state":
            stacks = {
                int(s): int(v["stack"])
                for s, v in payload.get("seats", {}).items()
                if isinstance(v, dict) and isinstance(v.get("stack"), int)
            }
        elif topic == EVENTS and payload.get("type") == "hand_completed":
            # a hand ended and the next began on one input: no `state` between them
            stacks.update({int(s): int(v) for s, v in (payload.get("stacks") or {}).items()})
        elif (
            topic == EVENTS
            and payload.get("type") == "hand_started"
            and payload.get("hand") == hand
        ):
            return stacks
    return stacks


Known = Callable[[Sequence[Mapping[str, Any]]], str | None]


def judge_completed_hands(messages: Messages, known: Known | None = None) -> list[str]:
    """Export every completed hand of `messages` to PHH and have pokerkit judge it strictly;
    the verdicts (a hand PHH cannot hold is named with its reason). `known` names, from a
    hand's events, a known gap a failing hand may show (its verdict says so); else any
    failure raises."""
    out = []
    for hand in split_hands(messages):
        if not any(e.get("type") == "hand_completed" for e in hand.events):
            continue
        phh = build_phh(hand)
        if phh.text is None:
            out.append(f"hand {hand.hand}: not written ({phh.problem})")
            continue
        start = starting_stacks(messages, hand.hand)
        odd, rake = hand_figures(hand.events)
        try:
            verdict = judge(
                phh.text,
                phh.finishing_stacks,
                starting=[start[s] for s in phh.seats],
                odd_chips=odd,
                rake=rake,
            )
        except Exception as exc:
            gap = known(hand.events) if known is not None else None
            if gap is not None:
                out.append(f"hand {hand.hand}: known gap, {gap}")
                continue
            raise AssertionError(f"hand {hand.hand}: {exc}\n{phh.text}") from exc
        out.append(f"hand {hand.hand}: judged {', '.join(verdict.allowances) or 'exactly'}")
    return out
