"""Room and operator commands: seats, stacks, levels (TDA 2019 rule 23), the button, penalties
(71-A), players away (30), pause and resume, the room's hold and release (breaks, balancing,
hand-for-hand RP-8), staff badges, the table's random draws (RP-14); each answered once per
request id."""

from __future__ import annotations

from collections.abc import Callable

from controller.engine import hands
from controller.engine.state import FaceDown, Level, Seat, Staffer
from controller.engine.table import ANSWERED_KEPT, ROOM_HOLD, Table
from kernel.inputs import Command


def apply_command(table: Table, cmd: Command) -> None:
    """A command: applied and answered, or, its request id answered already, answered again
    as it was then (`duplicate`) and not applied a second time."""
    table.rejected = None
    if _answered_before(table, cmd):
        return
    error = _apply(table, cmd)
    if error is not None:
        table.rejected = error
        table.alert(
            "command_rejected", "warning", f"command {cmd.name} refused: {error}", command=cmd.name
        )
    _reply(table, cmd)


def _apply(table: Table, cmd: Command) -> str | None:
    """Apply a command; why it is refused, or None."""
    table.mark_dirty()  # seats, stacks, level and button are public without an event
    table_command = TABLE_COMMANDS.get(cmd.name)
    if table_command is not None:
        return table_command(table, cmd)
    seat_no = cmd.args.get("seat")
    if not isinstance(seat_no, int) or seat_no not in table.seats:
        return f"no seat {seat_no} at this table (seats 1-{table.spec.seats})"
    seat_command = SEAT_COMMANDS.get(cmd.name)
    return seat_command(table, cmd, table.seats[seat_no]) if seat_command is not None else None


# ------------------------------------------------------------------ the table's commands


def _level(table: Table, cmd: Command) -> str | None:
    """A new level: from the next hand (rule 23), or corrected into a hand started before
    it was announced."""
    args = cmd.args
    current = table.pending_level or table.level
    level = Level(
        small_blind=args["small_blind"],
        big_blind=args["big_blind"],
        ante=args["ante"],
        bb_ante=bool(args.get("bb_ante", False)),
        # Rule 48: once the room says the event is heads-up, it stays so until it says not.
        event_heads_up=bool(args.get("event_heads_up", current.event_heads_up)),
    )
    if not 0 <= level.small_blind <= level.big_blind or level.big_blind <= 0:
        return "blinds must satisfy 0 <= small_blind <= big_blind, big_blind > 0"
    if level.ante < 0:
        return "ante must not be negative"
    if table.hand is None and table.hand_number == 0:
        table.level = level
        return None
    table.pending_level = level  # rule 23: applies to the next hand
    announced = args.get("announced")
    if table.hand is not None and announced is not None:
        hands.level_announced(table, level, float(announced))
    return None


def _pause(table: Table, cmd: Command) -> str | None:
    if "pause" in table.holds:
        return "the table is already paused"
    table.holds["pause"] = str(cmd.args.get("reason", "paused by the room"))
    table.event("table_paused", reason=table.holds["pause"])
    return None


def _resume(table: Table, cmd: Command) -> str | None:
    if table.holds.pop("pause", None) is None:
        return "the table is not paused"
    table.event("table_resumed")
    return None


def _hold(table: Table, cmd: Command) -> str | None:
    """The room holds the table after the hand in progress (a break, a balancing halt);
    `hand_for_hand` starts (or ends) RP-8: held again after every hand the room releases,
    and an all-in and call kept face down (RP-8 F), from the hand in progress on."""
    mode = cmd.args.get("hand_for_hand")
    betting = table.betting
    if mode is not None:
        table.hand_for_hand = bool(mode)
    if mode and betting is not None and not betting.tabled and betting.face_down != FaceDown.SAID:
        betting.face_down = FaceDown.WAIT
    elif mode is not None and not mode and betting is not None:
        betting.instruct()  # hand-for-hand is over: a hand kept face down goes on
        betting.face_down = FaceDown.OFF
    reason = str(cmd.args.get("reason", "held by the room"))
    table.holds[ROOM_HOLD] = reason
    rule = "RP-8" if table.hand_for_hand else None
    table.event("room_hold", reason=reason, hand_for_hand=table.hand_for_hand, rule=rule)
    return None


def _release(table: Table, cmd: Command) -> str | None:
    """The room releases the held table: its next hand may start (in hand-for-hand, that one
    hand only); a hand kept face down (RP-8 F) is the floor's instruction to go on."""
    mode = cmd.args.get("hand_for_hand")
    betting = table.betting
    instructed = betting is not None and betting.instruct()
    if mode is not None and not mode:
        table.hand_for_hand = False
        if betting is not None and betting.face_down == FaceDown.WAIT:
            betting.face_down = FaceDown.OFF
    elif not instructed and table.hand is not None and table.hand_for_hand:
        return "hand-for-hand: the table holds again after this hand; release it after the hand"
    if table.holds.pop(ROOM_HOLD, None) is None and not instructed and mode is None:
        return "the table is not held by the room"
    table.event("room_release", hand_for_hand=table.hand_for_hand, instructed=instructed, rule=None)
    return None


def _staff(table: Table, cmd: Command) -> str | None:
    """A staff registry update: a badge added, changed or removed."""
    args = cmd.args
    uid = str(args["uid"]).upper()
    if args.get("remove"):
        if table.staff.pop(uid, None) is None:
            return f"no staff badge {uid}"
        return None
    table.staff[uid] = Staffer(uid, str(args["person"]), str(args["role"]))
    return None


def _draw(table: Table, cmd: Command) -> str | None:
    """A random draw the table asked for (RP-14), made by the shell and journaled."""
    dealing = table.dealing
    if dealing is None:
        return "no hand in progress"
    args = cmd.args
    return dealing.draw(table.t, str(args["purpose"]), int(args["pick"]), int(args["of"]))


TABLE_COMMANDS: dict[str, Callable[[Table, Command], str | None]] = {
    "level": _level,
    "pause": _pause,
    "resume": _resume,
    "hold": _hold,
    "release": _release,
    "staff": _staff,
    "draw": _draw,
}

# ------------------------------------------------------------------ a seat's commands


def _in_hand(table: Table, seat: Seat) -> bool:
    return table.hand is not None and seat.number in table.hand.dealt_in


def _seat(table: Table, cmd: Command, seat: Seat) -> str | None:
    if seat.player is not None:
        return f"seat {seat.number} is taken by {seat.player}"
    if cmd.args["stack"] <= 0:
        return "stack must be positive"
    seat.player = cmd.args["player"]
    seat.stack = cmd.args["stack"]
    seat.new = table.hand_number > 0  # not dealt in between the button and the blinds (8, 10)
    return None


def _unseat(table: Table, cmd: Command, seat: Seat) -> str | None:
    if seat.player is None:
        return f"seat {seat.number} is empty"
    if _in_hand(table, seat):
        return f"seat {seat.number} is in the hand; unseat after it ends"
    seat.player = None
    seat.stack = 0
    seat.new = False
    return None


def _button(table: Table, cmd: Command, seat: Seat) -> str | None:
    table.next_button = seat.number
    return None


def _penalty(table: Table, cmd: Command, seat: Seat) -> str | None:
    """Rule 71-A: a penalty of hands, or of rounds (a hand per player seated, a round)."""
    if seat.player is None:
        return f"seat {seat.number} is empty"
    args = cmd.args
    players = sum(1 for s in table.seats.values() if s.player is not None)
    penalised = args["hands"] if "hands" in args else args["rounds"] * players
    table.penalties[seat.number] = table.penalties.get(seat.number, 0) + penalised
    table.event("penalty_given", seat=seat.number, hands=penalised, rule="71A")
    return None


def _away(table: Table, cmd: Command, seat: Seat) -> str | None:
    """Rule 30: away from the table (dealt in, hand killed after the deal) or back."""
    if seat.player is None:
        return f"seat {seat.number} is empty"
    seat.away = bool(cmd.args.get("away", True))
    return None


def _stack(table: Table, cmd: Command, seat: Seat) -> str | None:
    if _in_hand(table, seat):
        return f"seat {seat.number} is in the hand; set its stack after it ends"
    if seat.player is None or cmd.args["stack"] < 0:
        return "stack needs a seated player and a stack >= 0"
    seat.stack = cmd.args["stack"]
    return None


SEAT_COMMANDS: dict[str, Callable[[Table, Command, Seat], str | None]] = {
    "seat": _seat,
    "unseat": _unseat,
    "button": _button,
    "penalty": _penalty,
    "away": _away,
    "stack": _stack,
}

# ------------------------------------------------------------------ request ids


def _reply(table: Table, cmd: Command) -> None:
    """Answer a command that carries a request id (room commands do), and remember it."""
    request = cmd.args.get("id")
    if not isinstance(request, str):
        return
    ok = table.rejected is None
    table.answered[request] = (cmd.name, ok, table.rejected)
    while len(table.answered) > ANSWERED_KEPT:
        table.answered.popitem(last=False)
    table.answer(request, cmd.name, ok, table.rejected)


def _answered_before(table: Table, cmd: Command) -> bool:
    """A command whose request id was answered already is answered again as it was then."""
    request = cmd.args.get("id")
    if not isinstance(request, str) or request not in table.answered:
        return False
    name, ok, error = table.answered[request]
    table.answer(request, name, ok, error, duplicate=True)
    return True
