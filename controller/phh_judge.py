"""pokerkit judges a hand the engine completed: its exported PHH replayed strictly.

The file is loaded with pokerkit's own parser (`HandHistory.loads`), the game and its
initial state are built from it, and every action of the file is applied in order with
pokerkit's own `parse_action`. Nothing is repaired: `HandHistory.__iter__` (and
`state_actions`) fold, check or show for a player whose written action pokerkit refuses,
and so hide the very errors this judge is for. Only pokerkit's game automations run (antes,
blinds, bet collection, hand killing, chips pushed and pulled) and the burn card PHH never
writes (the file's `CARD_BURNING` automation, a `??` burned before a board card): they are the
game's own procedure, not a repair.

A hand fails the judge when pokerkit refuses an action, when the hand is not over after the
last action, or when the final stacks differ from the engine's. The rules differ in two
places only, each a named allowance (docs/phh.md, *Judged by pokerkit*):

- `ODD_CHIPS_20A`: TDA 2019 rule 20-A gives a split pot's odd chips by seat (first left of
  the button) and house texts break the pot down to another unit; pokerkit gives them its
  own way. Allowed: the same total, and each stack off by no more than the odd chips of the
  hand's split pots.
- `RAKE`: the house rake (Campione "Rake") comes out of the pots; the file is replayed
  without one. Allowed: every stack the engine paid is at most pokerkit's, and the
  differences add up to exactly the hand's rake (`_rake`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pokerkit import Automation, HandHistory
from pokerkit.notation import parse_action

from kernel.errors import TableError

ODD_CHIPS_20A = "odd chips (TDA 2019 20-A)"
RAKE = "rake (Campione, Rake)"


class PhhJudgement(TableError):
    """pokerkit does not replay the exported hand to the engine's result."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What pokerkit made of a hand: its final stacks and the allowances used."""

    stacks: tuple[int, ...]
    allowances: tuple[str, ...] = field(default=())


def replay_strictly(text: str) -> list[int]:
    """pokerkit's final stacks for a PHH file, every action applied as written.

    Raises PhhJudgement on a refused action or a hand not over after the last action.
    """
    history = HandHistory.loads(text)
    state = history.create_state()
    burns = Automation.CARD_BURNING in history.automations
    for number, action in enumerate(history.actions, 1):
        if burns and state.can_burn_card():
            state.burn_card("??")  # PHH writes no burn: the standard's own automation
        try:
            parse_action(state, action, history.parse_value)
        except ValueError as exc:
            raise PhhJudgement(f"pokerkit refuses action {number} {action!r}: {exc}") from exc
        except AssertionError as exc:  # pokerkit's own consistency check, not the file's
            raise PhhJudgement(
                f"pokerkit fails on action {number} {action!r} (an assertion inside pokerkit)"
            ) from exc
    if state.status:
        raise PhhJudgement(
            f"the hand is not over after its {len(history.actions)} actions "
            f"(pokerkit waits for {_waiting(state)})"
        )
    return list(state.stacks)


def _waiting(state: Any) -> str:
    if state.actor_index is not None:
        return f"p{state.actor_index + 1} to act"
    if state.showdown_index is not None:
        return f"p{state.showdown_index + 1} to show or muck"
    return "a card or a procedure"


def judge(
    text: str,
    stacks: Sequence[int],
    *,
    starting: Sequence[int] | None = None,
    odd_chips: int = 0,
    rake: int = 0,
) -> Verdict:
    """Judge one exported hand: `stacks` are the engine's final stacks in the file's player
    order, `starting` (when known) the real starting stacks. `odd_chips` are the odd chips of
    the hand's split pots (rule 20-A), `rake` the house's rake of the hand."""
    history = HandHistory.loads(text)
    if starting is not None and list(history.starting_stacks) != list(starting):
        raise PhhJudgement(
            f"starting stacks {list(history.starting_stacks)} are not the real {list(starting)}"
        )
    got = replay_strictly(text)
    ours = list(stacks)
    if got == ours:
        return Verdict(tuple(got))
    diff = [o - g for o, g in zip(ours, got, strict=True)]
    used: list[str] = []
    if rake and all(d <= 0 for d in diff) and -sum(diff) == rake:
        used.append(RAKE)
    elif odd_chips and sum(diff) == -rake and all(abs(d) <= odd_chips + rake for d in diff):
        used.append(ODD_CHIPS_20A)
        if rake:
            used.append(RAKE)
    else:
        raise PhhJudgement(f"final stacks: pokerkit {got}, the engine {ours}")
    return Verdict(tuple(got), tuple(used))


def hand_figures(events: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(odd chips of the hand's split pots, the hand's rake) from its events."""
    odd = 0
    rake = 0
    for e in events:
        if e.get("type") != "pot_awarded":
            continue
        shares = [int(v) for v in (e.get("shares") or {}).values()]
        if len(shares) > 1:
            odd += sum(s - min(shares) for s in shares)
            odd += (int(e["amount"]) - int(e.get("rake") or 0)) - sum(shares)
        rake += int(e.get("rake") or 0)
    return odd, rake


__all__ = ["ODD_CHIPS_20A", "RAKE", "PhhJudgement", "Verdict", "hand_figures", "judge"]
