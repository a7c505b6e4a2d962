"""Rule 53: actions out of turn, held until the seat's turn (53-A); after a skipped seat,
binding once they amount to substantial action (53-B)."""

from __future__ import annotations

from controller.engine.betting.changes import Change, Chips, Keep, Skip
from controller.engine.betting.hand_chips import HandChips
from controller.engine.betting.records import Held
from controller.engine.effects import alert, say
from controller.engine.state import Phase
from controller.rules import RuleError
from controller.rules.betting import HeldKind, OOTResolution, substantial_action_out_of_turn
from controller.rules.chips import PushRuling


def hold(hb: HandChips, seat: int, ruling: PushRuling) -> list[Change]:
    """Rule 53-A: a push out of turn is held until the seat's turn (`out_of_turn` held)."""
    rnd = hb.round
    assert rnd is not None
    kind: HeldKind = "call" if ruling.kind in ("call", "undercall") else ruling.kind  # type: ignore[assignment]
    try:
        held = rnd.hold_out_of_turn(seat, kind, ruling.total)
    except RuleError as exc:
        return [alert("push_refused", "warning", f"seat {seat}: {exc}", seat=seat)]
    return [
        Keep("held", seat, Held(held, ruling)),
        say(
            "out_of_turn",
            seat=seat,
            action=ruling.action,
            amount=ruling.total,
            status="held",
            to_act=rnd.to_act,
            rule="53-A",
        ),
        *after_skipped_seat(hb, seat, kind, held_now=seat),
    ]


def after_skipped_seat(
    hb: HandChips, seat: int, kind: str, *, held_now: int | None = None
) -> list[Change]:
    """Rule 53-B: an out-of-turn action while `to_act` waits; once those actions amount
    to substantial action (36) they bind and the floor rules on the skipped hand
    (`held_now`: a seat whose action is being held with this one)."""
    rnd = hb.round
    skipped = rnd.to_act if rnd is not None and hb.phase == Phase.BETTING else None
    if skipped is None:
        return []
    kinds: list[str] = []
    seats: list[int] = []
    if hb.skip is not None and tuple(hb.skip[:2]) == (hb.street_i, skipped):
        kinds, seats = list(hb.skip[2]), list(hb.skip[3])
    was = substantial_action_out_of_turn(kinds)
    kinds.append(kind)
    seats.append(seat)
    if not substantial_action_out_of_turn(kinds):
        return [Skip(hb.street_i, skipped, tuple(kinds), tuple(seats))]
    binding = tuple(s for s in seats if s in hb.held or s == held_now)
    found = None if was else (skipped, sorted(set(seats)))
    return [Skip(hb.street_i, skipped, tuple(kinds), tuple(seats), binding, found)]


def commit_53b(hb: HandChips, seat: int, held: Held) -> list[Change]:
    """Rule 53-B: an action out of turn made binding by substantial action stays in even
    when the skipped seat's own action (a raise the floor allowed) changed the bet: its
    chips stay in the pot and the seat acts again facing the new bet (call, raise or
    fold, its chips forfeited on a fold)."""
    rnd = hb.round
    assert rnd is not None
    total = held.action.total or 0
    add = max(0, min(total, rnd.bets[seat] + rnd.behind[seat]) - rnd.bets[seat])
    return [
        *([Chips(seat, add, street=True)] if add else []),
        say(
            "out_of_turn",
            seat=seat,
            action=held.action.kind,
            amount=rnd.bets[seat] + add,
            status="binding",
            reason="binding: substantial action out of turn (53-B); the skipped seat "
            "changed the action, so the seat acts again, its chips staying in",
            to_act=seat,
            rule="53-B",
            acts_again=True,
        ),
    ]


def all_in_beyond_the_bet(hb: HandChips, seat: int, held: Held) -> bool:
    """Rule 53-B with rule 47: binding chips out of turn that are every chip the seat has,
    beyond the bet it faces when its turn comes again (the skipped seat raised less), stand
    as its all-in raise, which the others may call (`binding_53b`); the seat has no chips to
    act again with, and none of them comes back uncalled while the others can call."""
    rnd = hb.round
    assert rnd is not None
    total = held.action.total or 0
    return total >= rnd.bets[seat] + rnd.behind[seat] > rnd.current_bet


def binding_53b(resolution: OOTResolution) -> OOTResolution:
    """Rule 53-B: an action out of turn made binding by substantial action after a skipped
    seat stands (where the skipped seat changed the bet, see `commit_53b`)."""
    return OOTResolution(True, "53-B", "binding: substantial action out of turn (53-B)")
