"""The table's state and its outputs: seats, staff, holds, cards as read, the hand in
progress; every `events`, `alerts`, `holecards` and `state` message is made here."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Any

from controller.card_names import hide_private
from controller.engine.antennas import antenna
from controller.engine.betting_flow import HandBetting
from controller.engine.cards import CardMap
from controller.engine.dealing import HandDealing
from controller.engine.effects import Alert, CallFloor, Changed, Republish, Say, TableEffect
from controller.engine.hand import Hand
from controller.engine.ports import CardResolver, ChipResolver, StaffSource
from controller.engine.positions import Positions
from controller.engine.procedures.four_card_flop_39 import PROCEDURE_HOLD
from controller.engine.spec import EngineSpec
from controller.engine.state import ACTIVE as _ACTIVE  # module globals: state.py's aliases
from controller.engine.state import EMPTY as _EMPTY
from controller.engine.state import OUT as _OUT
from controller.engine.state import WAITING as _WAITING
from controller.engine.state import Level, Seat, SeatStatus, Staffer
from controller.rules import RuleError
from controller.rules.profiles import get_profile, rule_ref
from kernel import messages as topics
from kernel.messages import Message

#: How many answered request ids the table remembers (a day of a busy table's commands).
ANSWERED_KEPT = 1024
#: Plain-words event fields: a card named there must be public, like in an alert's message.
FREE_TEXT_FIELDS = ("reason", "expected", "got")
FLOOR_AUTHORITY_SECONDS = 300.0  # a floor badge authorises rulings for five minutes
#: The hold the room sets with `hold` and lifts with `release` (breaks, balancing, RP-8).
ROOM_HOLD = "room"


class Table:
    """The whole table state, and the messages it says; the input modules change it."""

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
        # Where every chip is read (bet zones, the pot), oldest first, and its value: a chip
        # read at a second place before it left the first is counted once (inputs/chips.py).
        self.chip_spots = CardMap()
        self.chip_values: dict[str, int] = {}
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
        # RP-8: hand-for-hand, the table holds again after every hand the room releases, and
        # an all-in and call keeps the cards face down until the floor instructs (RP-8 F).
        self.hand_for_hand = False
        self.offline: set[str] = set()  # devices reported offline (journaled `device` events)
        self.penalties: dict[int, int] = {}  # seat -> hands still to miss (rule 71)
        # A house break (away_sits_out): seat -> (small blind missed, big blind missed)
        self.missed_blinds: dict[int, tuple[bool, bool]] = {}
        self.rejected: str | None = None  # why the command being applied was refused
        self.hole_reads = 0  # counts hole-card changes (the dealing flow skips idle checks)
        self.lifted = ""  # the antenna of the card that started a hand (first_card trigger)
        self.last_hand_cards: set[str] = set()  # a card of the hand just ended is no lift
        # Chips put in a bet zone while no hand is in progress (blinds out before the start).
        self.early_chips: dict[int, dict[str, int]] = {}
        # Request id -> (command, ok, error) of the last ANSWERED_KEPT room commands: a
        # command is applied once per id, however often it arrives (broker redelivery
        # after a restart, the room sending it again for want of a reply).
        self.answered: OrderedDict[str, tuple[str, bool, str | None]] = OrderedDict()
        # Unix time of trace time 0 (the journal's epoch), given by whoever drives the
        # engine; None for a trace without one. Not state: it dates `hand_started`.
        self.epoch: float | None = None

    # ------------------------------------------------------------------ the hand

    @property
    def dealing(self) -> HandDealing | None:
        """The dealing of the hand in progress, if any."""
        return self.hand.dealing if self.hand is not None else None

    @property
    def betting(self) -> HandBetting | None:
        """The betting of the hand in progress, if any."""
        return self.hand.betting if self.hand is not None else None

    def eligible(self) -> list[int]:
        """Seats with a player and chips: who may be dealt in."""
        return [n for n, s in self.seats.items() if s.player is not None and s.stack > 0]

    def seat_status(self, n: int) -> SeatStatus:
        """empty / out / waiting between hands; active / folded / allin in the hand."""
        seat = self.seats[n]
        if seat.player is None:
            return _EMPTY
        hand = self.hand
        if hand is None or n not in hand.dealt_in:
            return _WAITING if seat.stack > 0 else _OUT
        return hand.betting.status(n) if hand.betting is not None else _ACTIVE

    # ------------------------------------------------------------------ what procedures see

    def floor_present(self) -> bool:
        """A floor badge was read at the table within the authority window."""
        return self.floor is not None and self.t - self.floor[1] <= FLOOR_AUTHORITY_SECONDS

    def floor_ref(self) -> dict[str, str] | None:
        """The floor at the table, as events name them."""
        return self.floor[0].ref() if self.floor is not None and self.floor_present() else None

    def flop_held(self) -> bool:
        """A four-card flop holds the table (rule 39)."""
        dealing = self.dealing
        return dealing is not None and dealing.hold.reason is not None

    def held(self) -> list[str]:
        """Why the table is held, sorted: its own holds and a four-card flop's (39)."""
        if self.flop_held():
            return sorted({*self.holds, PROCEDURE_HOLD})
        return sorted(self.holds)

    def public_cards(self) -> set[str]:
        """The cards of the hand in progress that are face up for everyone: the board (once
        the deal is over: before, a card read there may be a hole card sliding to its seat),
        the hands turned face up (rules 12, 16), the board cards a procedure shows."""
        hand = self.hand
        if hand is None:
            return set()
        public = set(hand.board)
        if hand.dealing is not None and hand.dealing.deal.over:
            public.update(self.cards_at("board"))
        betting = hand.betting
        if betting is not None:
            for seat in betting.shown:
                public.update(hand.hole.get(seat, ()))
        if hand.dealing is not None:
            for proc in hand.dealing.pending():
                if proc.SHOWS_CARDS:
                    public.update(proc.cards)
        return public

    def cards_at(self, antenna_name: str) -> list[str]:
        """Cards read at an antenna, in arrival order."""
        return self.cards.cards_at(antenna_name)

    def table_clear(self) -> bool:
        """No card is read at a seat, on the board or at the burn."""
        return not any(
            cards
            for name, cards in self.cards.contents.items()
            if cards and antenna(name).kind in ("seat", "board", "burn")
        )

    def away(self, seat: int) -> bool:
        """The seat's player is away from the table (rule 30)."""
        return self.seats[seat].away

    def penalty(self, seat: int) -> int:
        """Hands the seat still has to miss (rule 71)."""
        return self.penalties.get(seat, 0)

    # ------------------------------------------------------------------ outputs

    def call_floor(self) -> None:
        """Call the floor (the floor lamp, until a floor badge is read or the floor rules)."""
        self.floor_called = True

    def mark_dirty(self) -> None:
        """The public state changed without an event of its own."""
        self._dirty = True

    def do(self, effects: list[TableEffect]) -> None:
        """Carry out what a procedure asked of the table, in order."""
        for effect in effects:
            match effect:
                case Say(kind, fields):
                    self.event(kind, **fields)
                case Alert(kind, severity, message, fields):
                    self.alert(kind, severity, message, **fields)
                case CallFloor():
                    self.call_floor()
                case Changed():
                    self.mark_dirty()
                case Republish(seat):
                    self.holecards(seat)

    def event(self, kind: str, **fields: Any) -> None:
        """Emit an `events` message (the Emitter of the hand's flows)."""
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
        for key in FREE_TEXT_FIELDS:
            if isinstance(payload.get(key), str):
                payload[key] = hide_private(payload[key], self.public_cards())
        self._cite_house_rule(payload)
        self._out.append(Message(topics.EVENTS, payload, qos=1, retain=False))

    def alert(self, kind: str, severity: str, message: str, **fields: Any) -> None:
        """Emit an `alerts` message (the Emitter of the hand's flows)."""
        payload: dict[str, Any] = {
            "table": self.spec.table,
            "type": kind,
            "severity": severity,
            "message": hide_private(message, self.public_cards()),
            "hand": self.hand.number if self.hand else None,
            "t": self.t,
        }
        payload.update(fields)
        self._cite_house_rule(payload)
        self._out.append(Message(topics.ALERTS, payload, qos=1, retain=False))

    def _cite_house_rule(self, payload: dict[str, Any]) -> None:
        """`rule` stays the TDA 2019 number (docs/mqtt.md); the house's own number is added."""
        rule = payload.get("rule")
        if rule and self.profile.name != "tda-2019":
            with contextlib.suppress(RuleError):  # not a TDA number, e.g. "fixed-limit"
                payload["profile_rule"] = rule_ref(self.profile, rule)

    def holecards(self, seat: int) -> None:
        """Publish a seat's hole cards again (after a card was taken from it)."""
        self.hole_reads += 1
        if self.hand is not None and self.hand.hole.get(seat):
            self.publish_holecards(seat, self.hand.hole[seat])

    def publish_holecards(self, seat: int, cards: list[str]) -> None:
        """A seat's hole cards, on the topic only the TV client reads."""
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

    def answer(
        self, request: str, name: str, ok: bool, error: str | None, *, duplicate: bool = False
    ) -> None:
        """A `replies` message: the answer to a room command's request id."""
        payload: dict[str, Any] = {
            "table": self.spec.table,
            "id": request,
            "command": name,
            "ok": ok,
            "error": hide_private(error, self.public_cards()) if error else error,
            "t": self.t,
        }
        if duplicate:
            payload["duplicate"] = True
        self._out.append(Message(topics.REPLIES, payload, qos=1, retain=False))
