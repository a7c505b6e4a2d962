"""The engine: applies one trace event at a time to the table state and returns the messages."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Any

from controller import messages as topics
from controller.engine.betting_flow import Blinds, HandBetting
from controller.engine.cards import CardMap
from controller.engine.dealing import HandDealing
from controller.engine.hand import Hand
from controller.engine.ports import CardResolver, ChipResolver, StaffSource
from controller.engine.positions import (
    Positions,
    fresh_positions,
    next_positions,
    waits_for_button,
)
from controller.engine.procedures import fouled_deck_35e, misdeal_35
from controller.engine.procedures.base import Alert, CallFloor, Changed, Republish, Say, TableEffect
from controller.engine.procedures.four_card_flop_39 import PROCEDURE_HOLD
from controller.engine.spec import EngineSpec
from controller.engine.state import Level, Seat, Staffer
from controller.messages import Message
from controller.rules import RuleError
from controller.rules.profiles import get_profile, rule_ref
from controller.trace import Badge, ButtonPress, Command, Device, Event, TagIn, TagOut, Tick

BOARD_STREET = {3: "flop", 4: "turn", 5: "river"}
#: How many answered request ids the engine remembers (a day of a busy table's commands).
ANSWERED_KEPT = 1024
FLOOR_AUTHORITY_SECONDS = 300.0  # a floor badge authorises rulings for five minutes


class Engine:
    """The whole table state; `apply` is the only way it changes."""

    def __init__(
        self,
        spec: EngineSpec,
        deck: CardResolver | None = None,
        chips: ChipResolver | None = None,
        staff: StaffSource | None = None,
    ) -> None:
        self.spec = spec
        self.profile = get_profile(spec.profile)
        self.deck = deck
        self.chips = chips
        self.seats: dict[int, Seat] = {n: Seat(n) for n in range(1, spec.seats + 1)}
        self.level = Level()
        self.pending_level: Level | None = None
        self.next_button: int | None = None
        self.last_positions: Positions | None = None
        self.hand: Hand | None = None
        self.hand_number = 0
        self.seq = 0
        self.cards = CardMap()
        self.t = 0.0
        self._out: list[Message] = []
        self._last_state: dict[str, Any] | None = None
        # Every change of the public state comes with an event, a hole card, a board card
        # or a command: only then is the snapshot rebuilt and compared.
        self._dirty = True
        self._pots_cache: tuple[int, list[dict[str, Any]]] = (-1, [])
        self.staff: dict[str, Staffer] = {}
        for m in staff.members() if staff is not None else ():
            self.staff[m.uid.upper()] = Staffer(m.uid.upper(), m.name, m.role)
        self.dealer: Staffer | None = None
        self.floor: tuple[Staffer, float] | None = None  # the floor at the table, since t
        self.floor_called = False
        self.holds: dict[str, str] = {}  # why the table is held: device, pause, fouled deck
        self.offline: set[str] = set()  # devices reported offline (journaled `device` events)
        self.penalties: dict[int, int] = {}  # seat -> hands still to miss (rule 71)
        self._rejected: str | None = None
        self.hole_reads = 0  # counts hole-card changes (the dealing watch skips idle checks)
        self._lifted = ""  # the antenna of the card that started a hand (first_card trigger)
        self._last_hand_cards: set[str] = set()  # a card of the hand just ended is no lift
        # Chips put in a bet zone while no hand is in progress (blinds out before the start).
        self._early_chips: dict[int, dict[str, int]] = {}
        # Request id -> (command, ok, error) of the last ANSWERED_KEPT room commands: a
        # command is applied once per id, however often it arrives (broker redelivery
        # after a restart, the room sending it again for want of a reply).
        self.answered: OrderedDict[str, tuple[str, bool, str | None]] = OrderedDict()

    # ------------------------------------------------------------------ public API

    def apply(self, event: Event) -> list[Message]:
        """Apply one input event; return the messages to publish, in order."""
        self.t = event.t
        self._out = []
        dealing = self._dealing
        if dealing is not None:
            dealing.before_input(board_card=isinstance(event, TagIn) and event.antenna == "board")
        self._settle_before(event)
        if isinstance(event, Command):
            self._rejected = None
            if not self._answered_before(event):
                self._command(event)
                self._reply(event)
        elif isinstance(event, ButtonPress):
            self._button(event)
        elif isinstance(event, TagIn):
            self._tag_in(event)
        elif isinstance(event, TagOut):
            self._tag_out(event)
        elif isinstance(event, Badge):
            self._badge(event)
        elif isinstance(event, Device):
            self._device(event)
        elif isinstance(event, Tick):
            pass
        dealing = self._dealing
        if dealing is not None:
            dealing.after_apply(event.t)
            dealing.sync_hold(event.t)  # a pending four-card flop holds the table (39)
        self._finish_if_complete()
        if self._dirty:
            self._publish_state_if_changed()
        out, self._out = self._out, []
        return out

    @property
    def _dealing(self) -> HandDealing | None:
        """The dealing of the hand in progress, if any."""
        return self.hand.dealing if self.hand is not None else None

    @property
    def _betting(self) -> HandBetting | None:
        """The betting of the hand in progress, if any."""
        return self.hand.betting if self.hand is not None else None

    def deadline(self) -> float | None:
        """The trace time at which the engine wants a `tick`, or None.

        While a reader board is offline no push is read as settled by time: its chips may
        not all have been seen (the table is held).
        """
        if {"card_reader", "chip_reader"} & self.holds.keys() or self._flop_held():
            return None
        betting = self._betting
        return betting.deadline() if betting else None

    def wants_draw(self) -> tuple[str, int] | None:
        """A random draw the shell must supply as a `draw` command (RP-14): (purpose, of)."""
        dealing = self._dealing
        return dealing.wants_draw() if dealing is not None else None

    def _flop_held(self) -> bool:
        """A four-card flop holds the table (rule 39)."""
        dealing = self._dealing
        return dealing is not None and dealing.hold.reason is not None

    def held(self) -> list[str]:
        """Why the table is held, in order: its own holds and a four-card flop's (39)."""
        if self._flop_held():
            return sorted({*self.holds, PROCEDURE_HOLD})
        return sorted(self.holds)

    def cards_at(self, antenna: str) -> list[str]:
        """Cards read at an antenna, in arrival order."""
        return self.cards.cards_at(antenna)

    def table_clear(self) -> bool:
        """No card is read at a seat, on the board or at the burn."""
        return not any(
            cards
            for a, cards in self.cards.contents.items()
            if cards and (a.startswith("seat") or a in ("board", "burn"))
        )

    def away(self, seat: int) -> bool:
        """The seat's player is away from the table (rule 30)."""
        return self.seats[seat].away

    def penalty(self, seat: int) -> int:
        """Hands the seat still has to miss (rule 71)."""
        return self.penalties.get(seat, 0)

    def call_floor(self) -> None:
        """Call the floor (the floor lamp, until a floor badge is read or the floor rules)."""
        self.floor_called = True

    def do(self, effects: list[TableEffect]) -> None:
        """Carry out what a procedure asked of the table, in order."""
        for effect in effects:
            match effect:
                case Say(kind, fields):
                    self._event(kind, **fields)
                case Alert(kind, severity, message, fields):
                    self._alert(kind, severity, message, **fields)
                case CallFloor():
                    self.call_floor()
                case Changed():
                    self.mark_dirty()
                case Republish(seat):
                    self.holecards(seat)

    def mark_dirty(self) -> None:
        """The public state changed without an event of its own."""
        self._dirty = True

    def floor_present(self) -> bool:
        """A floor badge was read at the table within the authority window."""
        return self.floor is not None and self.t - self.floor[1] <= FLOOR_AUTHORITY_SECONDS

    def floor_ref(self) -> dict[str, str] | None:
        """The floor at the table, as events name them."""
        return self.floor[0].ref() if self.floor is not None and self.floor_present() else None

    def holecards(self, seat: int) -> None:
        """Publish a seat's hole cards again (after a card was taken from it)."""
        self.hole_reads += 1
        if self.hand is not None and self.hand.hole.get(seat):
            self._holecards(seat, self.hand.hole[seat])

    @property
    def command_accepted(self) -> bool:
        """Whether the last command applied was accepted."""
        return self._rejected is None

    def staff_members(self) -> list[Staffer]:
        """The staff registry as commands have left it (the shell writes it back)."""
        return [self.staff[uid] for uid in sorted(self.staff)]

    def _settle_before(self, event: Event) -> None:
        """A push is settled when quiet long enough, or by any later input (CONTRACT 2)."""
        betting = self._betting
        if betting is None:
            return
        if isinstance(event, Device):
            return  # a board going or coming is no table action: it settles nothing
        if self._flop_held():
            return  # a four-card flop holds the table: no push is taken as a bet (39)
        if isinstance(event, Tick):
            betting.settle(event.t, only_due=True)
        elif isinstance(event, TagIn | TagOut) and event.antenna.startswith("bet"):
            # The zone's own push goes on unless it was already quiet long enough; every
            # other zone's push is settled by this later input.
            betting.settle(event.t, only_due=True)
            betting.settle(event.t, only_due=False, except_seat=int(event.antenna[3:]))
        else:
            betting.settle(event.t, only_due=False)

    def _finish_if_complete(self) -> None:
        betting = self._betting
        if betting is not None and betting.phase == "complete":
            dealing = self._dealing
            if dealing is not None:
                dealing.hand_over(self.t)
            self._complete_hand()

    def lamps(self) -> dict[str, bool]:
        """The all-in lamps `allin<N>` (RP-1), `pending` (a procedure) and `floor`.

        The shell drives the fault lamp itself.
        """
        lamps = {f"allin{n}": self._seat_status(n) == "allin" for n in self.seats}
        dealing = self._dealing
        pending = dealing.pending() if dealing is not None else []
        lamps["pending"] = bool(pending)
        lamps["floor"] = (
            self.floor_called
            or any(p.needs_floor for p in pending)
            or "fouled_deck" in self.holds
        )
        return lamps

    def _pots(self, betting: HandBetting | None) -> list[dict[str, Any]]:
        """The public pots; they change only with an event, so they are kept per seq."""
        if betting is None:
            return []
        if self._pots_cache[0] != self.seq:
            pots = [{"amount": p.amount, "eligible": list(p.eligible)} for p in betting.pots()]
            self._pots_cache = (self.seq, pots)
        return [dict(p) for p in self._pots_cache[1]]

    def snapshot(self) -> dict[str, Any]:
        """The public state snapshot (no hole card unless the rules turned it face up)."""
        hand = self.hand
        betting = hand.betting if hand else None
        seats: dict[str, Any] = {}
        for n, seat in self.seats.items():
            in_hand = betting is not None and n in betting.contrib
            status = self._seat_status(n)
            entry: dict[str, Any] = {
                "player": seat.player,
                "stack": seat.stack,
                "bet": betting.bet(n) if betting is not None and in_hand else 0,
                "status": status,
                "cards": len(hand.hole.get(n, ())) if hand and status != "folded" else 0,
            }
            if betting is not None and n in betting.shown and hand is not None:
                entry["shown"] = list(hand.hole.get(n, ()))
            if self.penalties.get(n):
                entry["penalty"] = self.penalties[n]
            if seat.away:
                entry["away"] = True
            seats[str(n)] = entry
        level = hand.level if hand else self.level
        return {
            "table": self.spec.table,
            "room": self.spec.room,
            "seq": self.seq,
            "t": self.t,
            "hand": hand.number if hand else None,
            "street": hand.street if hand else None,
            "button": hand.positions.button if hand else self._coming_button(),
            "level": {
                "small_blind": level.small_blind,
                "big_blind": level.big_blind,
                "ante": level.ante,
            },
            "board": list(hand.board) if hand else [],
            "pots": self._pots(betting),
            "to_act": betting.to_act if betting is not None else None,
            "substantial_action": betting.substantial_action if betting is not None else False,
            "held": self.held(),
            "dealer": self.dealer.ref() if self.dealer else None,
            "floor": self.floor_ref(),
            "procedures": [p.public() for p in hand.dealing.pending()]
            if hand is not None and hand.dealing is not None
            else [],
            "seats": seats,
        }

    # ------------------------------------------------------------------ emitters

    def event(self, kind: str, **fields: Any) -> None:
        """Emit an `events` message (Emitter for the betting flow)."""
        self._event(kind, **fields)

    def alert(self, kind: str, severity: str, message: str, **fields: Any) -> None:
        """Emit an `alerts` message (Emitter for the betting flow)."""
        self._alert(kind, severity, message, **fields)

    def _event(self, kind: str, **fields: Any) -> None:
        self._dirty = True
        self.seq += 1
        payload: dict[str, Any] = {
            "type": kind,
            "seq": self.seq,
            "table": self.spec.table,
            "hand": self.hand.number if self.hand else None,
            "t": self.t,
        }
        payload.update(fields)
        self._cite_house_rule(payload)
        self._out.append(Message(topics.EVENTS, payload, qos=1, retain=False))

    def _alert(self, kind: str, severity: str, message: str, **fields: Any) -> None:
        payload: dict[str, Any] = {
            "table": self.spec.table,
            "type": kind,
            "severity": severity,
            "message": message,
            "hand": self.hand.number if self.hand else None,
            "t": self.t,
        }
        payload.update(fields)
        self._cite_house_rule(payload)
        self._out.append(Message(topics.ALERTS, payload, qos=1, retain=False))

    def _cite_house_rule(self, payload: dict[str, Any]) -> None:
        """`rule` stays the TDA 2019 number (CONTRACT); the house's own number is added."""
        rule = payload.get("rule")
        if rule and self.profile.name != "tda-2019":
            with contextlib.suppress(RuleError):  # not a TDA number, e.g. "fixed-limit"
                payload["profile_rule"] = rule_ref(self.profile, rule)

    def _holecards(self, seat: int, cards: list[str]) -> None:
        assert self.hand is not None
        self._dirty = True
        self.hole_reads += 1
        payload = {
            "table": self.spec.table,
            "hand": self.hand.number,
            "seat": seat,
            "cards": list(cards),
            "t": self.t,
        }
        self._out.append(Message(topics.HOLECARDS, payload, qos=1, retain=False))

    def _publish_state_if_changed(self) -> None:
        self._dirty = False
        state = self.snapshot()
        comparable = {k: v for k, v in state.items() if k not in ("t", "seq")}
        if comparable == self._last_state:
            return
        self._last_state = comparable
        self._out.append(Message(topics.STATE, state, qos=1, retain=True))

    # ------------------------------------------------------------------ commands

    def _command(self, cmd: Command) -> None:
        self._dirty = True  # seats, stacks, level and button are public without an event
        args = cmd.args
        if cmd.name == "level":
            level = Level(
                small_blind=args["small_blind"],
                big_blind=args["big_blind"],
                ante=args["ante"],
                bb_ante=bool(args.get("bb_ante", False)),
            )
            if not 0 <= level.small_blind <= level.big_blind or level.big_blind <= 0:
                self._reject(
                    cmd, "blinds must satisfy 0 <= small_blind <= big_blind, big_blind > 0"
                )
                return
            if level.ante < 0:
                self._reject(cmd, "ante must not be negative")
                return
            if self.hand is None and self.hand_number == 0:
                self.level = level
            else:
                self.pending_level = level  # rule 23: applies to the next hand
                announced = args.get("announced")
                if self.hand is not None and announced is not None:
                    self._level_announced(level, float(announced))
            return
        if cmd.name in ("pause", "resume", "staff", "draw"):
            self._table_command(cmd)
            return
        seat_no = args.get("seat")
        if not isinstance(seat_no, int) or seat_no not in self.seats:
            self._reject(cmd, f"no seat {seat_no} at this table (seats 1-{self.spec.seats})")
            return
        seat = self.seats[seat_no]
        if cmd.name == "seat":
            if seat.player is not None:
                self._reject(cmd, f"seat {seat_no} is taken by {seat.player}")
                return
            if args["stack"] <= 0:
                self._reject(cmd, "stack must be positive")
                return
            seat.player = args["player"]
            seat.stack = args["stack"]
            seat.new = self.hand_number > 0
        elif cmd.name == "unseat":
            if seat.player is None:
                self._reject(cmd, f"seat {seat_no} is empty")
                return
            if self.hand is not None and seat_no in self.hand.dealt_in:
                self._reject(cmd, f"seat {seat_no} is in the hand; unseat after it ends")
                return
            seat.player = None
            seat.stack = 0
            seat.new = False
        elif cmd.name == "button":
            self.next_button = seat_no
        elif cmd.name == "penalty":
            if seat.player is None:
                self._reject(cmd, f"seat {seat_no} is empty")
                return
            players = sum(1 for s in self.seats.values() if s.player is not None)
            hands = args["hands"] if "hands" in args else args["rounds"] * players  # 71-A
            self.penalties[seat_no] = self.penalties.get(seat_no, 0) + hands
            self._event("penalty_given", seat=seat_no, hands=hands, rule="71A")
        elif cmd.name == "away":
            if seat.player is None:
                self._reject(cmd, f"seat {seat_no} is empty")
                return
            seat.away = bool(args.get("away", True))
        elif cmd.name == "stack":
            if self.hand is not None and seat_no in self.hand.dealt_in:
                self._reject(cmd, f"seat {seat_no} is in the hand; set its stack after it ends")
                return
            if seat.player is None or args["stack"] < 0:
                self._reject(cmd, "stack needs a seated player and a stack >= 0")
                return
            seat.stack = args["stack"]

    def _reject(self, cmd: Command, why: str) -> None:
        self._rejected = why
        self._alert(
            "command_rejected", "warning", f"command {cmd.name} refused: {why}", command=cmd.name
        )

    def _reply(self, cmd: Command) -> None:
        """Answer a command that carries a request id (room commands do), and remember it."""
        request = cmd.args.get("id")
        if not isinstance(request, str):
            return
        self.answered[request] = (cmd.name, self._rejected is None, self._rejected)
        while len(self.answered) > ANSWERED_KEPT:
            self.answered.popitem(last=False)
        self._answer(request, cmd.name, self._rejected is None, self._rejected)

    def _answer(
        self, request: str, name: str, ok: bool, error: str | None, *, duplicate: bool = False
    ) -> None:
        payload: dict[str, Any] = {
            "table": self.spec.table,
            "id": request,
            "command": name,
            "ok": ok,
            "error": error,
            "t": self.t,
        }
        if duplicate:
            payload["duplicate"] = True
        self._out.append(Message(topics.REPLIES, payload, qos=1, retain=False))

    def _answered_before(self, cmd: Command) -> bool:
        """A command whose request id was answered already: answered again as it was then
        (`duplicate`), not applied a second time."""
        request = cmd.args.get("id")
        if not isinstance(request, str) or request not in self.answered:
            return False
        name, ok, error = self.answered[request]
        self._answer(request, name, ok, error, duplicate=True)
        return True

    def _table_command(self, cmd: Command) -> None:
        """pause, resume, staff registry updates and the table's random draws."""
        args = cmd.args
        if cmd.name == "pause":
            if "pause" in self.holds:
                self._reject(cmd, "the table is already paused")
                return
            self.holds["pause"] = str(args.get("reason", "paused by the room"))
            self._event("table_paused", reason=self.holds["pause"])
        elif cmd.name == "resume":
            if self.holds.pop("pause", None) is None:
                self._reject(cmd, "the table is not paused")
                return
            self._event("table_resumed")
        elif cmd.name == "staff":
            uid = str(args["uid"]).upper()
            if args.get("remove"):
                if self.staff.pop(uid, None) is None:
                    self._reject(cmd, f"no staff badge {uid}")
                    return
            else:
                self.staff[uid] = Staffer(uid, str(args["person"]), str(args["role"]))
        elif cmd.name == "draw":
            dealing = self._dealing
            error = "no hand in progress" if dealing is None else None
            if dealing is not None:
                error = dealing.draw(
                    self.t, str(args["purpose"]), int(args["pick"]), int(args["of"])
                )
            if error is not None:
                self._reject(cmd, error)

    def _level_announced(self, level: Level, announced: float) -> None:
        """Rule 23: a hand started at the prior level by mistake."""
        hand = self.hand
        assert hand is not None
        if announced > hand.started_t:
            return  # announced during the hand: it applies from the next hand
        betting = hand.betting
        if betting is not None and betting.substantial_action:
            self._event(
                "level_kept",
                small_blind=hand.level.small_blind,
                big_blind=hand.level.big_blind,
                ante=hand.level.ante,
                reason="substantial action: the hand continues at the prior level",
                rule="23",
            )
            return
        hand.level = level
        self.level = level
        self.pending_level = None
        owed: dict[int, int] = {}
        if betting is not None:
            folded = set(betting.dealt_in) - betting.live  # a fold stays a fold (rule 58)
            if hand.dealing is not None:
                hand.dealing.restore_posted()
                betting = hand.betting
                assert betting is not None
            betting.live -= folded
            owed = betting.reopen_posting(
                Blinds(level.small_blind, level.big_blind, level.ante, level.bb_ante)
            )
        self._event(
            "level_corrected",
            small_blind=level.small_blind,
            big_blind=level.big_blind,
            ante=level.ante,
            owed={str(s): o for s, o in sorted(owed.items())},
            rule="23",
        )
        if owed:
            self._alert(
                "procedure_required",
                "warning",
                "the hand started at the prior level by mistake: complete the blinds "
                + ", ".join(f"seat {s} +{o}" for s, o in sorted(owed.items())),
                procedure="level_correction",
                rule="23",
            )

    # ------------------------------------------------------------------ buttons

    def _button(self, press: ButtonPress) -> None:
        if press.name == "shuffler":
            if "shuffler" in self.profile.hand_start_triggers:
                dealing = self._dealing
                if dealing is not None and dealing.awaiting_redeal():
                    self.do([misdeal_35.redeal_same_hand()])
                    return
                if self._hand_not_dealt_yet("shuffler"):
                    self._alert(
                        "hand_already_started",
                        "info",
                        f"hand {self.hand.number if self.hand else ''} was already started "
                        "(rule 23: one hand, one start); no card dealt yet",
                    )
                    return
                self._start_hand("shuffler")
            else:
                self._alert(
                    "shuffler_not_a_trigger",
                    "info",
                    f"under profile {self.profile.name} the hand starts when the dealer "
                    "lifts the cards (the first card read), not on the shuffler button",
                )
            return
        betting = self._betting
        if betting is None and press.name == "floor":
            if self.floor_present():
                self._floor_ruling(None)
            else:
                self.floor_called = True
                self._alert(
                    "floor_called", "warning", "dealer pressed floor: floor called", button="floor"
                )
            return
        if betting is None:
            self._alert(
                "button_out_of_hand",
                "warning",
                f"{press.name} pressed with no hand in progress",
                button=press.name,
            )
            return
        dealing = self._dealing
        if press.name in ("misdeal", "boxed", "exposed", "floor") and dealing is not None:
            self._panel(press, dealing)
            return
        if (
            dealing is not None
            and press.name in ("check", "allin", "raise")
            and dealing.refuse(
                press.t, press.name, press.seat if press.name == "allin" else betting.to_act
            )
        ):
            return
        if dealing is not None and press.name == "check" and betting.to_act is not None:
            dealing.end_of_deal(press.t, upto=betting.to_act)
        if press.name == "check":
            betting.check(press.t)
        elif press.name == "allin" and press.seat is not None:
            if press.seat not in betting.contrib:
                self._alert(
                    "button_out_of_sequence",
                    "warning",
                    f"all-in button of seat {press.seat}, not in the hand",
                    seat=press.seat,
                )
            else:
                betting.declare(press.seat, "allin")
        elif press.name == "raise":
            seat = betting.to_act
            if seat is None:
                self._alert("button_out_of_sequence", "warning", "raise pressed with no one to act")
            else:
                betting.declare(seat, "raise")

    def _panel(self, press: ButtonPress, dealing: HandDealing) -> None:
        """The dealer panel's declarations: misdeal, boxed, exposed, floor."""
        if press.name == "boxed":
            dealing.boxed(press.t)
        elif press.name == "exposed":
            dealing.exposed(press.t)
        elif press.name == "misdeal":
            dealing.misdeal_pressed(press.t)
        elif press.name == "floor":
            if self.floor_present():
                self._floor_ruling(dealing)
            else:
                self.floor_called = True
                self._alert(
                    "floor_called", "warning", "dealer pressed floor: floor called", button="floor"
                )

    def _floor_ruling(self, dealing: HandDealing | None) -> None:
        """The floor, badge read, presses `floor`: releases holds and settles open calls."""
        released = [k for k in self.held() if k in ("fouled_deck", PROCEDURE_HOLD)]
        self.holds.pop("fouled_deck", None)
        closed = dealing.floor_ruled() if dealing is not None else []
        self.floor_called = False
        self._event(
            "floor_ruling",
            floor=self.floor_ref(),
            released=released,
            closed=closed,
            rule="1",
        )

    # ------------------------------------------------------------------ hands

    def _eligible(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.player is not None and s.stack > 0]

    def _coming_button(self) -> int | None:
        if self.next_button is not None:
            return self.next_button
        return self.last_positions.button if self.last_positions else None

    def _hand_not_dealt_yet(self, trigger: str) -> bool:
        """Rule 23, one start per hand: the shuffler button and the dealer push both start a
        hand; the second of the two, before any card or chip of the hand, is the same hand."""
        hand = self.hand
        betting = hand.betting if hand is not None else None
        return (
            hand is not None
            and {hand.trigger, trigger} == {"shuffler", "dealer_push"}
            and not hand.hole
            and not hand.board
            and hand.dealing is not None
            and not hand.dealing.deal.dealt
            and hand.redeals == 0
            and (betting is None or not any(betting.posted.values()))
        )

    def _start_hand(self, trigger: str) -> None:
        if self.holds:
            self._alert(
                "table_held",
                "warning",
                "the table is held (" + ", ".join(sorted(self.holds)) + "): no new hand",
                held=sorted(self.holds),
                trigger=trigger,
            )
            return
        if self.hand is not None:
            self._complete_hand()
        players = self._eligible()
        if len(players) < 2:
            self._alert(
                "hand_not_started",
                "warning",
                "a hand needs at least two seated players with chips",
                trigger=trigger,
            )
            return
        n = self.spec.seats
        if self.next_button is not None or self.last_positions is None:
            start = self.next_button if self.next_button is not None else players[-1]
            pos = fresh_positions(start, players, n)
        else:
            pos = next_positions(self.last_positions, players, n)
        dealt_in = [s for s in players if not (self.seats[s].new and waits_for_button(s, pos, n))]
        if len(dealt_in) < 2:
            self._alert(
                "hand_not_started",
                "warning",
                "a hand needs at least two players dealt in",
                trigger=trigger,
            )
            return
        self.next_button = None
        if self.pending_level is not None:
            self.level, self.pending_level = self.pending_level, None
        for s in dealt_in:
            self.seats[s].new = False
        self.hand_number += 1
        self.last_positions = pos
        hand = Hand(
            number=self.hand_number,
            positions=pos,
            level=self.level,
            dealt_in=dealt_in,
            started_t=self.t,
            trigger=trigger,
        )
        self.hand = hand
        self._event(
            "hand_started",
            button=pos.button,
            small_blind=self.level.small_blind,
            big_blind=self.level.big_blind,
            ante=self.level.ante,
            trigger=trigger,
            small_blind_seat=pos.small_blind,
            big_blind_seat=pos.big_blind,
            seats=dealt_in,
            dealer=self.dealer.ref() if self.dealer else None,
            rule="23",
        )
        hand.dealer = self.dealer.ref() if self.dealer else None
        hand.betting = HandBetting(
            emit=self,
            seats=dict(self.seats.items()),
            dealt_in=dealt_in,
            positions=pos,
            blinds=Blinds(
                self.level.small_blind, self.level.big_blind, self.level.ante, self.level.bb_ante
            ),
            game=self.spec.game,
            settle_seconds=self.spec.settle_seconds,
            hole=lambda s: list(hand.hole.get(s, ())),
            board=lambda: list(hand.board),
            odd_unit=self.spec.odd_chip_unit,
            straddle_multiple=self.profile.straddle.multiple if self.profile.straddle else 0,
        )
        hand.dealing = HandDealing(self, hand, hand.betting, self.spec.game)
        # Chips put out before the start count as the seat's forced bet (the blinds set out
        # before the shuffler, or before the lift under casinos-austria); anywhere else they
        # are no bet of this hand (a pot pushed onto a winner's bet zone, say).
        early, self._early_chips = self._early_chips, {}
        for seat, zone in sorted(early.items()):
            if not zone:
                continue
            if hand.betting.owed.get(seat, 0) > 0:
                for uid, value in zone.items():
                    hand.betting.chip_in(self.t, seat, uid, value)
            else:
                self._alert(
                    "chips_before_hand",
                    "warning",
                    f"chips lay in seat {seat}'s bet zone when the hand started and it owes no "
                    "blind or ante: they are not a bet of this hand; take them back",
                    seat=seat,
                )
        leftovers = {
            antenna: cards
            for antenna, cards in self.cards.contents.items()
            if cards
            and (antenna.startswith("seat") or antenna == "board")
            and not (trigger == "first_card" and antenna == self._lifted and len(cards) == 1)
        }
        if leftovers:
            self._alert(
                "cards_left_on_table",
                "warning",
                "cards from the previous hand are still read at " + ", ".join(sorted(leftovers)),
                antennas=sorted(leftovers),
            )

    def _complete_hand(self) -> None:
        hand = self.hand
        assert hand is not None
        betting = hand.betting
        if betting is not None and betting.phase == "showdown":
            betting.award(self.t, "next_hand")
        if betting is not None and betting.phase != "complete":
            # The hand never reached a result: nobody wins chips that were not won.
            refunds = betting.refund_all()
            self._alert(
                "hand_abandoned",
                "critical" if refunds else "warning",
                "the hand ended before its result; chips put in were returned",
                refunds={str(s): c for s, c in refunds.items()},
                rule="1",
            )
        self._close_hand(hand)

    def _close_hand(self, hand: Hand) -> None:
        """The hand is over, however it ended: penalties count it, `hand_completed` gives the
        stacks, and its cards are remembered (one of them seen again is no new hand)."""
        self._count_penalties(hand)
        self._event(
            "hand_completed",
            stacks={str(s): self.seats[s].stack for s in hand.dealt_in},
        )
        self._last_hand_cards = {c for cards in hand.hole.values() for c in cards} | set(hand.board)
        self.hand = None

    def _count_penalties(self, hand: Hand) -> None:
        """A penalised seat has missed one more hand (a misdeal and its re-deal are one, 35-C)."""
        for s in hand.dealt_in:
            if self.penalties.get(s):
                self.penalties[s] -= 1
                if not self.penalties[s]:
                    del self.penalties[s]

    def _seat_status(self, n: int) -> str:
        seat = self.seats[n]
        if seat.player is None:
            return "empty"
        hand = self.hand
        if hand is None or n not in hand.dealt_in:
            return "waiting" if seat.stack > 0 else "out"
        return hand.betting.status(n) if hand.betting is not None else "active"

    # ------------------------------------------------------------------ badges and devices

    def _badge(self, badge: Badge) -> None:
        """A staff badge: a dealer's push (rule 23) or the floor coming to the table."""
        if badge.removed:
            if self.floor is not None and self.floor[0].uid == badge.uid:
                self.floor = None  # the floor took the badge away: authority ends
                self._dirty = True
            return
        member = self.staff.get(badge.uid)
        if member is None:
            self._alert(
                "badge_unknown",
                "warning",
                f"badge {badge.uid} is not in the staff registry: refused",
                uid=badge.uid,
            )
            return
        if member.role == "floor":
            self.floor = (member, badge.t)
            self.floor_called = False
            self._event("floor_arrived", floor=member.ref())
            return
        if self.dealer is not None and self.dealer.uid == member.uid:
            self._alert(
                "badge_repeat", "info", f"{member.name} is already the dealer", uid=member.uid
            )
            return
        previous = self.dealer
        self.dealer = member
        self._event(
            "dealer_changed",
            dealer=member.ref(),
            previous=previous.ref() if previous else None,
            rule="23",
        )
        if self._hand_not_dealt_yet("dealer_push"):
            assert self.hand is not None
            self.hand.dealer = member.ref()  # the same hand: started once (rule 23)
            return
        if self.hand is None and "dealer_push" in self.profile.hand_start_triggers:
            self._start_hand("dealer_push")

    def _device(self, device: Device) -> None:
        """A device went away or came back: a reader board offline holds the table.

        Without the badge reader no badge can be read, but the hand is not at risk: the
        table is not held for it.
        """
        was = device.name in self.offline
        if device.state == "offline":
            self.offline.add(device.name)
        else:
            self.offline.discard(device.name)
        if device.name == "badge_reader":
            if was != (device.state == "offline"):
                self._alert(
                    f"badge_reader_{device.state}",
                    "warning" if device.state == "offline" else "info",
                    "the badge reader is offline: badges cannot be read"
                    if device.state == "offline"
                    else "the badge reader is back",
                    device=device.name,
                )
            return
        if device.state == "offline":
            self.holds[device.name] = "offline"
            if not was:
                self._alert(
                    "reader_offline",
                    "critical",
                    f"{device.name} is offline: the table is held, nothing is guessed",
                    device=device.name,
                )
        else:
            self.holds.pop(device.name, None)
            if was:
                self._alert(
                    "reader_online",
                    "info",
                    f"{device.name} is back; its antennas were read again",
                    device=device.name,
                )
        self._dirty = True

    def _fouled_deck(self, why: str, **details: Any) -> None:
        """Rule 35-E: a foreign or duplicate card stops play and every bet is returned."""
        hand = self.hand
        assert hand is not None
        self.do(fouled_deck_35e.stopped(why, details))
        self.holds[fouled_deck_35e.FOULED_DECK_HOLD] = why
        self.do(fouled_deck_35e.floor_called(why))
        betting = hand.betting
        if betting is not None and betting.phase != "complete":
            self.do(fouled_deck_35e.bets_returned(betting.refund_all()))
        self._close_hand(hand)

    # ------------------------------------------------------------------ tags

    def _resolve(self, tag: TagIn | TagOut) -> tuple[str | None, int | None, str | None]:
        """Card name, chip value, chip id of a tag event; alert when the UID is unknown."""
        if tag.card is not None:
            return tag.card, None, None
        if tag.chip is not None:
            return None, tag.value, tag.chip
        uid = tag.uid or ""
        card = self.deck.card_of(uid) if self.deck else None
        if card is not None:
            return card, None, None
        value = self.chips.value_of(uid) if self.chips else None
        if value is not None:
            return None, value, uid
        self._alert(
            "unknown_tag",
            "critical" if self.hand is not None or tag.antenna.startswith("bet") else "warning",
            f"tag {uid} at {tag.antenna} is in no registry (foreign card or counterfeit chip?)",
            uid=uid,
            antenna=tag.antenna,
        )
        card_antenna = not (tag.antenna.startswith("bet") or tag.antenna in ("pot", "register"))
        if isinstance(tag, TagIn) and card_antenna and self.hand is not None:
            self._fouled_deck("foreign_card", uid=uid, antenna=tag.antenna)
        return None, None, None

    def _chip(self, tag: TagIn | TagOut, value: int | None, chip: str) -> None:
        """A chip tag at a bet zone or the pot."""
        hand = self.hand
        betting = hand.betting if hand else None
        if tag.antenna == "pot":
            if isinstance(tag, TagOut) and betting is not None:
                betting.pot_pushed(tag.t)
            return
        seat = int(tag.antenna[3:])
        if hand is None:
            # Blinds put out before the hand starts (e.g. before the dealer lifts the cards
            # under casinos-austria): kept, and posted when the hand starts.
            zone = self._early_chips.setdefault(seat, {})
            if isinstance(tag, TagIn) and value is not None:
                zone[chip] = value
            else:
                zone.pop(chip, None)
            return
        if betting is None or seat not in betting.contrib:
            if isinstance(tag, TagIn) and betting is not None:
                self._alert(
                    "chips_outside_hand",
                    "warning",
                    f"chips arrived in the bet zone of seat {seat}, which is not in the hand",
                    seat=seat,
                )
            return
        if isinstance(tag, TagIn):
            assert value is not None
            betting.chip_in(tag.t, seat, chip, value)
            if hand.dealing is not None:
                hand.dealing.refuse(tag.t, "push", seat)  # held (39): the push waits, unsettled
        else:
            betting.chip_out(tag.t, seat, chip)

    def _tag_in(self, tag: TagIn) -> None:
        card, value, chip = self._resolve(tag)
        if chip is not None:
            if not (tag.antenna.startswith("bet") or tag.antenna == "pot"):
                self._alert(
                    "chip_on_card_antenna",
                    "info",
                    f"a chip was read at {tag.antenna}",
                    antenna=tag.antenna,
                )
                return
            self._chip(tag, value, chip)
            return
        if card is None:
            return
        if tag.antenna.startswith("bet") or tag.antenna == "pot":
            self._alert(
                "card_on_chip_antenna",
                "warning",
                f"card read at {tag.antenna}",
                antenna=tag.antenna,
            )
            return
        others = self.cards.add(tag.antenna, card)
        hand = self.hand
        table_spots = [a for a in others if a.startswith("seat") or a == "board"]
        if (
            hand is not None
            and (tag.antenna.startswith("seat") or tag.antenna == "board")
            and table_spots
        ):
            # The same card in two places on the table at once: two cards alike (35-E).
            self._alert(
                "card_at_two_antennas",
                "critical",
                f"a card is read at {tag.antenna} and at {', '.join(others)} at once",
                antennas=[*others, tag.antenna],
            )
            self._fouled_deck("duplicate_card", antennas=[*table_spots, tag.antenna])
            return
        if others:
            self._alert(
                "card_at_two_antennas",
                "warning",
                f"a card is read at {tag.antenna} and at {', '.join(others)} at once",
                antennas=[*others, tag.antenna],
            )
        if tag.antenna.startswith("seat"):
            seat = int(tag.antenna[4:])
            if (
                hand is None
                and "first_card" in self.profile.hand_start_triggers
                and card not in self._last_hand_cards
            ):
                self._lifted = tag.antenna
                self._start_hand("first_card")  # e.g. Casinos Austria: the dealer lifts
                if self.holds:
                    return  # refused with a `table_held` alert
                hand = self.hand
            if hand is None or hand.dealing is None:
                self._alert(
                    "card_outside_hand",
                    "warning",
                    f"a card arrived at seat {seat} with no hand in progress",
                    seat=seat,
                )
                return
            if others:
                return
            if card in hand.extras:
                return
            for owner, cards in hand.hole.items():
                if owner != seat and card in cards:
                    # Pitched to the wrong seat and slid on: it is this seat's card now.
                    cards.remove(card)
                    self._holecards(owner, cards)
                    self._alert(
                        "card_moved_between_seats",
                        "warning",
                        f"a card moved from seat {owner} to seat {seat}",
                        seats=[owner, seat],
                    )
                    break
            if hand.betting is not None:
                hand.betting.cards_dealt = True
            if hand.dealing.hole_card(tag.t, seat, card) and hand.hole.get(seat):
                self._holecards(seat, hand.hole[seat])
        elif tag.antenna == "board":
            if hand is None or hand.dealing is None:
                self._alert(
                    "card_outside_hand",
                    "warning",
                    "a card arrived on the board with no hand in progress",
                )
                return
            if others or card in hand.board:
                return
            hand.dealing.board_card(tag.t, card)
        elif tag.antenna == "burn" and hand is not None and hand.dealing is not None:
            hand.dealing.burn_card(tag.t, card)
        elif tag.antenna == "muck" and hand is not None and hand.betting is not None:
            for seat, cards in hand.hole.items():
                if card in cards:
                    # Held (39): the fold is kept and taken when the table is released.
                    live = seat in hand.betting.live
                    dealing = hand.dealing
                    if dealing is not None and not (live and dealing.refuse(tag.t, "fold", seat)):
                        dealing.mucked(tag.t, seat)
                    break

    def _tag_out(self, tag: TagOut) -> None:
        card, value, chip = self._resolve(tag)
        if chip is not None:
            if tag.antenna.startswith("bet") or tag.antenna == "pot":
                self._chip(tag, value, chip)
            return
        if card is None:
            return
        if not self.cards.remove(tag.antenna, card):
            self._alert(
                "tag_out_unexpected",
                "info",
                f"a card left {tag.antenna} where it was not read",
                antenna=tag.antenna,
            )
            return
        if (
            self.hand is None
            and self._last_hand_cards
            and not any(
                cards
                for a, cards in self.cards.contents.items()
                if a.startswith("seat") or a == "board"
            )
        ):
            self._last_hand_cards = set()  # the table is cleared: any card now is a new deal
        dealing = self._dealing
        if dealing is None:
            return
        if tag.antenna == "board":
            dealing.board_left(tag.t, card)
        dealing.collected()
