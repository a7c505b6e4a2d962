"""Rule 53: actions out of turn, held until the seat's turn (53-A); after a skipped seat,
binding once they amount to substantial action (53-B)."""

from __future__ import annotations

from controller.engine.betting.hand_chips import HandChips
from controller.engine.betting.records import Held
from controller.engine.state import Phase
from controller.rules import RuleError
from controller.rules.betting import OOTResolution, substantial_action_out_of_turn
from controller.rules.chips import PushRuling


def hold(hb: HandChips, seat: int, ruling: PushRuling) -> None:
    """Rule 53-A: a push out of turn is held until the seat's turn (`out_of_turn` held)."""
    rnd = hb.round
    assert rnd is not None
    kind = "call" if ruling.kind in ("call", "undercall") else ruling.kind
    try:
        held = rnd.hold_out_of_turn(seat, kind, ruling.total)  # type: ignore[arg-type]
    except RuleError as exc:
        hb.emit.alert("push_refused", "warning", f"seat {seat}: {exc}", seat=seat)
        return
    hb.held[seat] = Held(held, ruling)
    hb.emit.event(
        "out_of_turn",
        seat=seat,
        action=ruling.action,
        amount=ruling.total,
        status="held",
        to_act=rnd.to_act,
        rule="53-A",
    )
    after_skipped_seat(hb, seat, kind)


def after_skipped_seat(hb: HandChips, seat: int, kind: str) -> None:
    """Rule 53-B: an out-of-turn action while `to_act` waits; once those actions amount
    to substantial action (36) they bind and the floor rules on the skipped hand."""
    rnd = hb.round
    skipped = rnd.to_act if rnd is not None and hb.phase == Phase.BETTING else None
    if skipped is None:
        return
    if hb.skip is None or hb.skip[:2] != (hb.street_i, skipped):
        hb.skip = (hb.street_i, skipped, [], [])
    _street, _seat, kinds, seats = hb.skip
    was = substantial_action_out_of_turn(kinds)
    kinds.append(kind)
    seats.append(seat)
    if not substantial_action_out_of_turn(kinds):
        return
    hb.binding_53b |= {s for s in seats if s in hb.held}
    if not was:
        hb.skipped_found.append((skipped, sorted(set(seats))))


def commit_53b(hb: HandChips, seat: int, held: Held) -> None:
    """Rule 53-B: an action out of turn made binding by substantial action stays in even
    when the skipped seat's own action (a raise the floor allowed) changed the bet: its
    chips stay in the pot and the seat acts again facing the new bet (call, raise or
    fold, its chips forfeited on a fold)."""
    rnd = hb.round
    assert rnd is not None
    total = held.action.total or 0
    add = max(0, min(total, rnd.bets[seat] + rnd.behind[seat]) - rnd.bets[seat])
    if add:
        rnd.bets[seat] += add
        rnd.behind[seat] -= add
        hb.seats[seat].stack -= add
        hb.contrib[seat] += add
    hb.emit.event(
        "out_of_turn",
        seat=seat,
        action=held.action.kind,
        amount=rnd.bets[seat],
        status="binding",
        reason="binding: substantial action out of turn (53-B); the skipped seat changed "
        "the action, so the seat acts again, its chips staying in",
        to_act=seat,
        rule="53-B",
        acts_again=True,
    )


def binding_53b(resolution: OOTResolution) -> OOTResolution:
    """Rule 53-B: an action out of turn made binding by substantial action after a skipped
    seat stands (where the skipped seat changed the bet, see `commit_53b`)."""
    return OOTResolution(True, "53-B", "binding: substantial action out of turn (53-B)")
