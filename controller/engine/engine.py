"""The engine: applies one trace event at a time to the table and returns the messages; its
public state snapshot and lamps. The inputs are handled in `inputs/`, hands in `hands.py`."""

from __future__ import annotations

from typing import Any

from controller.engine import hands
from controller.engine.betting_flow import HandBetting
from controller.engine.inputs import badges, buttons, chips, commands, devices, tags
from controller.engine.procedures.fouled_deck_35e import FOULED_DECK_HOLD
from controller.engine.state import FOLDED as _FOLDED  # a module global: state.py's aliases
from controller.engine.state import Level, SeatStatus, Staffer
from controller.engine.table import Table
from kernel import messages as topics
from kernel.inputs import Badge, ButtonPress, Command, Device, Event, TagIn, TagOut
from kernel.messages import Message

__all__ = ["Engine", "Staffer"]


#: A seat status as the published state writes it (a plain string); looked up, not
#: `.value` (an enum property, called for every seat of every state published).
_PLAIN = {status: status.value for status in SeatStatus}


class Engine(Table):
    """The whole table state; `apply` is the only way it changes."""

    # ------------------------------------------------------------------ public API

    def apply(self, event: Event) -> list[Message]:
        """Apply one input event; return the messages to publish, in order."""
        self.t = event.t
        self._out = []
        dealing = self.dealing
        if dealing is not None:
            dealing.before_input(board_card=isinstance(event, TagIn) and event.antenna == "board")
        chips.settle_before(self, event)
        if isinstance(event, Command):
            commands.apply_command(self, event)
        elif isinstance(event, ButtonPress):
            buttons.pressed(self, event)
        elif isinstance(event, TagIn):
            tags.tag_in(self, event)
        elif isinstance(event, TagOut):
            tags.tag_out(self, event)
        elif isinstance(event, Badge):
            badges.badge(self, event)
        elif isinstance(event, Device):
            devices.device(self, event)
        # A Tick is time passing: the push settled above is all it does.
        dealing = self.dealing
        if dealing is not None:
            dealing.after_apply(event.t)
            dealing.sync_hold(event.t)  # a pending four-card flop holds the table (39)
        hands.finish_if_complete(self)
        if self._dirty:
            self._publish_state_if_changed()
        out, self._out = self._out, []
        return out

    def deadline(self) -> float | None:
        """The trace time at which the engine wants a `tick`, or None.

        While a reader board is offline no push is read as settled by time: its chips may
        not all have been seen (the table is held).
        """
        if {"card_reader", "chip_reader"} & self.holds.keys() or self.flop_held():
            return None
        betting = self.betting
        return betting.deadline() if betting else None

    def wants_draw(self) -> tuple[str, int] | None:
        """A random draw the shell must supply as a `draw` command (RP-14): (purpose, of)."""
        dealing = self.dealing
        return dealing.wants_draw() if dealing is not None else None

    @property
    def command_accepted(self) -> bool:
        """Whether the last command applied was accepted."""
        return self.rejected is None

    def staff_members(self) -> list[Staffer]:
        """The staff registry as commands have left it (the shell writes it back)."""
        return [self.staff[uid] for uid in sorted(self.staff)]

    def lamps(self) -> dict[str, bool]:
        """The all-in lamps `allin<N>` (RP-1), `pending` (a procedure) and `floor`.

        The shell drives the fault lamp itself.
        """
        lamps = {f"allin{n}": self.seat_status(n) == SeatStatus.ALLIN for n in self.seats}
        dealing = self.dealing
        pending = dealing.pending() if dealing is not None else []
        lamps["pending"] = bool(pending)
        lamps["floor"] = (
            self.floor_called
            or any(p.needs_floor for p in pending)
            or FOULED_DECK_HOLD in self.holds
            or bool(self.betting is not None and self.betting.undercalls)  # 51-B
            or bool(self.betting is not None and self.betting.muck_disputed)  # 13-C, 16
        )
        return lamps

    # ------------------------------------------------------------------ the public state

    def snapshot(self) -> dict[str, Any]:
        """The public state snapshot (no hole card unless the rules turned it face up)."""
        hand = self.hand
        betting = hand.betting if hand else None
        level = hand.level if hand else self.level
        return {
            "table": self.spec.table,
            "room": self.spec.room,
            "seq": self.seq,
            "t": self.t,
            "hand": hand.number if hand else None,
            "street": hand.street if hand else None,
            "button": hand.positions.button if hand else hands.coming_button(self),
            "level": self._level(level),
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
            "seats": self._seats(),
            **self._rake(betting),
        }

    def _rake(self, betting: HandBetting | None) -> dict[str, int]:
        """Under a house that takes a rake: the rake taken from this hand's pots (0 until
        they are awarded, and between hands)."""
        if self.profile.rake is None:
            return {}
        return {"rake": betting.rake if betting is not None else 0}

    @staticmethod
    def _level(level: Level) -> dict[str, Any]:
        """The level in the public state; `event_heads_up` only once the room set it (48)."""
        public: dict[str, Any] = {
            "small_blind": level.small_blind,
            "big_blind": level.big_blind,
            "ante": level.ante,
        }
        if level.event_heads_up:
            public["event_heads_up"] = True
        return public

    def _seats(self) -> dict[str, Any]:
        """The seats in the public state: no hole card unless the rules turned it face up."""
        hand = self.hand
        betting = hand.betting if hand else None
        seats: dict[str, Any] = {}
        for n, seat in self.seats.items():
            in_hand = betting is not None and n in betting.contrib
            status = self.seat_status(n)
            entry: dict[str, Any] = {
                "player": seat.player,
                "stack": seat.stack,
                "bet": betting.bet(n) if betting is not None and in_hand else 0,
                "status": _PLAIN[status],
                "cards": len(hand.hole.get(n, ())) if hand and status is not _FOLDED else 0,
            }
            if betting is not None and n in betting.shown and hand is not None:
                entry["shown"] = list(hand.hole.get(n, ()))
            if self.penalties.get(n):
                entry["penalty"] = self.penalties[n]
            if seat.away:
                entry["away"] = True
            seats[str(n)] = entry
        return seats

    def _pots(self, betting: HandBetting | None) -> list[dict[str, Any]]:
        """The public pots; they change only with an event, so they are kept per seq."""
        if betting is None:
            return []
        if self._pots_cache[0] != self.seq:
            pots = [{"amount": p.amount, "eligible": list(p.eligible)} for p in betting.pots()]
            self._pots_cache = (self.seq, pots)
        return [dict(p) for p in self._pots_cache[1]]

    def _publish_state_if_changed(self) -> None:
        self._dirty = False
        state = self.snapshot()
        comparable = {k: v for k, v in state.items() if k not in ("t", "seq")}
        if comparable == self._last_state:
            return
        self._last_state = comparable
        self._out.append(Message(topics.STATE, state, qos=1, retain=True))
