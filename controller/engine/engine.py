"""The engine: applies one trace event at a time to the table state and returns the messages."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from controller import messages as topics
from controller.config import Config
from controller.engine.betting_flow import Blinds, HandBetting
from controller.engine.cards import CardMap
from controller.engine.positions import (
    Positions,
    fresh_positions,
    next_positions,
    waits_for_button,
)
from controller.messages import Message
from controller.rules import RuleError
from controller.rules.profiles import get_profile, rule_ref
from controller.trace import Badge, ButtonPress, Command, Event, TagIn, TagOut, Tick

BOARD_STREET = {3: "flop", 4: "turn", 5: "river"}


class CardResolver(Protocol):
    """Deck registry: tag UID to card name."""

    def card_of(self, uid: str) -> str | None: ...


class ChipResolver(Protocol):
    """Chip registry: tag UID to chip value."""

    def value_of(self, uid: str) -> int | None: ...


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """What the engine needs to know of the table: identity, size, rules."""

    table: str
    room: str
    seats: int
    profile: str = "tda-2019"
    game: str = "nlhe"
    settle_seconds: float = 1.0
    odd_chip_unit: int = 1  # rule 20: odd chips are broken into the smallest chip in play

    @classmethod
    def from_config(cls, config: Config) -> EngineSpec:
        """The engine's view of a table configuration."""
        return cls(
            table=config.table.id,
            room=config.table.room,
            seats=config.table.seats,
            profile=config.rules.profile,
            game=config.rules.game,
            settle_seconds=config.rules.settle_seconds,
        )


@dataclass(frozen=True, slots=True)
class Level:
    """Blinds and ante of a level (rule 23: a new level applies from the next hand)."""

    small_blind: int = 0
    big_blind: int = 0
    ante: int = 0
    bb_ante: bool = False


@dataclass(slots=True)
class Seat:
    """A seat and the player in it."""

    number: int
    player: str | None = None
    stack: int = 0
    new: bool = False  # seated since the last hand started (rules 8, 10)


@dataclass(slots=True)
class Hand:
    """One hand in progress."""

    number: int
    positions: Positions
    level: Level
    dealt_in: list[int]
    started_t: float
    hole: dict[int, list[str]] = field(default_factory=dict)
    board: list[str] = field(default_factory=list)
    burns: list[str] = field(default_factory=list)
    street: str = "preflop"
    betting: HandBetting | None = None


class Engine:
    """The whole table state; `apply` is the only way it changes."""

    def __init__(
        self,
        spec: EngineSpec,
        deck: CardResolver | None = None,
        chips: ChipResolver | None = None,
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

    # ------------------------------------------------------------------ public API

    def apply(self, event: Event) -> list[Message]:
        """Apply one input event; return the messages to publish, in order."""
        self.t = event.t
        self._out = []
        self._settle_before(event)
        if isinstance(event, Command):
            self._command(event)
        elif isinstance(event, ButtonPress):
            self._button(event)
        elif isinstance(event, TagIn):
            self._tag_in(event)
        elif isinstance(event, TagOut):
            self._tag_out(event)
        elif isinstance(event, Badge):
            self._alert("badge", "info", f"badge {event.uid} presented", uid=event.uid)
        elif isinstance(event, Tick):
            pass
        self._finish_if_complete()
        if self._dirty:
            self._publish_state_if_changed()
        out, self._out = self._out, []
        return out

    @property
    def _betting(self) -> HandBetting | None:
        """The betting of the hand in progress, if any."""
        return self.hand.betting if self.hand is not None else None

    def deadline(self) -> float | None:
        """The trace time at which the engine wants a `tick`, or None."""
        betting = self._betting
        return betting.deadline() if betting else None

    def _settle_before(self, event: Event) -> None:
        """A push is settled when quiet long enough, or by any later input (CONTRACT 2)."""
        betting = self._betting
        if betting is None:
            return
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
            self._complete_hand()

    def lamps(self) -> dict[str, bool]:
        """The all-in lamps, `allin<N>` (RP-1); the shell drives the fault lamp itself."""
        return {f"allin{n}": self._seat_status(n) == "allin" for n in self.seats}

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
            entry: dict[str, Any] = {
                "player": seat.player,
                "stack": seat.stack,
                "bet": betting.bet(n) if betting is not None and in_hand else 0,
                "status": self._seat_status(n),
                "cards": len(hand.hole.get(n, ())) if hand else 0,
            }
            if betting is not None and n in betting.shown and hand is not None:
                entry["shown"] = list(hand.hole.get(n, ()))
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
            "pots": [{"amount": p.amount, "eligible": list(p.eligible)} for p in betting.pots()]
            if betting is not None
            else [],
            "to_act": betting.to_act if betting is not None else None,
            "substantial_action": betting.substantial_action if betting is not None else False,
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
        rule = fields.get("rule")
        if rule and self.profile.name != "tda-2019":
            # `rule` stays the TDA 2019 number (CONTRACT); the house's own number is added.
            with contextlib.suppress(RuleError):  # not a TDA number, e.g. "fixed-limit"
                payload["profile_rule"] = rule_ref(self.profile, rule)
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
        self._out.append(Message(topics.ALERTS, payload, qos=1, retain=False))

    def _holecards(self, seat: int, cards: list[str]) -> None:
        assert self.hand is not None
        self._dirty = True
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
        elif cmd.name == "stack":
            if self.hand is not None and seat_no in self.hand.dealt_in:
                self._reject(cmd, f"seat {seat_no} is in the hand; set its stack after it ends")
                return
            if seat.player is None or args["stack"] < 0:
                self._reject(cmd, "stack needs a seated player and a stack >= 0")
                return
            seat.stack = args["stack"]

    def _reject(self, cmd: Command, why: str) -> None:
        self._alert(
            "command_rejected", "warning", f"command {cmd.name} refused: {why}", command=cmd.name
        )

    # ------------------------------------------------------------------ buttons

    def _button(self, press: ButtonPress) -> None:
        if press.name == "shuffler":
            if "shuffler" in self.profile.hand_start_triggers:
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
        if betting is None:
            self._alert(
                "button_out_of_hand",
                "warning",
                f"{press.name} pressed with no hand in progress",
                button=press.name,
            )
            return
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
        else:
            # misdeal, floor, exposed, boxed: the dealing-error procedures (TDA 35-39) are
            # not in this engine yet; the floor is called so nothing goes unnoticed.
            self._alert(
                "floor_called",
                "warning",
                f"dealer pressed {press.name}: floor called",
                button=press.name,
            )

    # ------------------------------------------------------------------ hands

    def _eligible(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.player is not None and s.stack > 0]

    def _coming_button(self) -> int | None:
        if self.next_button is not None:
            return self.next_button
        return self.last_positions.button if self.last_positions else None

    def _start_hand(self, trigger: str) -> None:
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
        self.next_button = None
        dealt_in = [s for s in players if not (self.seats[s].new and waits_for_button(s, pos, n))]
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
            rule="23",
        )
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
        )
        leftovers = {
            antenna: cards
            for antenna, cards in self.cards.contents.items()
            if cards and (antenna.startswith("seat") or antenna == "board")
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
        self._event(
            "hand_completed",
            stacks={str(s): self.seats[s].stack for s in hand.dealt_in},
        )
        self.hand = None

    def _seat_status(self, n: int) -> str:
        seat = self.seats[n]
        if seat.player is None:
            return "empty"
        hand = self.hand
        if hand is None or n not in hand.dealt_in:
            return "waiting" if seat.stack > 0 else "out"
        return hand.betting.status(n) if hand.betting is not None else "active"

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
            "critical" if tag.antenna.startswith("bet") or tag.antenna == "pot" else "warning",
            f"tag {uid} at {tag.antenna} is in no registry (foreign card or counterfeit chip?)",
            uid=uid,
            antenna=tag.antenna,
        )
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
        if others:
            self._alert(
                "card_at_two_antennas",
                "warning",
                f"a card is read at {tag.antenna} and at {', '.join(others)} at once",
                antennas=[*others, tag.antenna],
            )
        hand = self.hand
        if tag.antenna.startswith("seat"):
            seat = int(tag.antenna[4:])
            if hand is None and "first_card" in self.profile.hand_start_triggers:
                self._start_hand("first_card")  # e.g. Casinos Austria: the dealer lifts
                hand = self.hand
            if hand is None:
                self._alert(
                    "card_outside_hand",
                    "warning",
                    f"a card arrived at seat {seat} with no hand in progress",
                    seat=seat,
                )
                return
            if seat not in hand.dealt_in:
                self._alert(
                    "card_to_seat_not_dealt_in",
                    "warning",
                    f"a card arrived at seat {seat}, which is not dealt in",
                    seat=seat,
                )
                return
            if others:
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
            hole = hand.hole.setdefault(seat, [])
            if card not in hole:
                hole.append(card)
            self._holecards(seat, hole)
        elif tag.antenna == "board":
            if hand is None:
                self._alert(
                    "card_outside_hand",
                    "warning",
                    "a card arrived on the board with no hand in progress",
                )
                return
            if others or card in hand.board:
                return
            hand.board.append(card)
            self._dirty = True
            street = BOARD_STREET.get(len(hand.board))
            if street is not None:
                hand.street = street
                new = hand.board[:3] if street == "flop" else [card]
                self._event("board_dealt", street=street, cards=new, board=list(hand.board))
                if hand.betting is not None:
                    hand.betting.board_street(street)
        elif tag.antenna == "burn" and hand is not None and card not in hand.burns:
            hand.burns.append(card)
        elif tag.antenna == "muck" and hand is not None and hand.betting is not None:
            for seat, cards in hand.hole.items():
                if card in cards:
                    hand.betting.fold(tag.t, seat)
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
