"""Completes a hand in progress from any state, with legal dealer, player and floor inputs only:
the liveness check of tests/unit/test_liveness.py.

It extends `tests/hand_finisher.py` (deal the missing hole cards, check or call, gather,
burn and board, push the pot) with what a dealing error may leave to do: collect the cards
of a misdeal and re-deal, take stray cards off the board (a premature card back to the stub),
supply the table's random draw (RP-14, as the daemon does), and, when nothing else moves the
hand, call the floor to the table (badge) and let it rule (`floor`). Cards come from the
deck minus every card read anywhere or held by the hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from controller.engine import Engine
from controller.engine.antennas import antenna
from controller.engine.cards import FULL_DECK
from kernel.inputs import Badge, ButtonPress, Command, Event, TagIn, TagOut
from kernel.messages import Message
from tests.hand_finisher import _Finisher

FLOOR_UID = "04F1E2D3C4B5A6"  # the floor badge the liveness machine registers


def free_card(engine: Engine, pick: int) -> tuple[str, bool] | None:
    """A card the dealer may deal now: read nowhere and not the hand's; else one gathered from
    the muck (True: it must leave the muck first); None when every card is on the table."""
    hand = engine.hand
    held: set[str] = set()
    if hand is not None:
        held = {c for cards in hand.hole.values() for c in cards}
        held |= set(hand.board) | set(hand.burns) | set(hand.extras)
    read = {c for cards in engine.cards.contents.values() for c in cards}
    free = [c for c in FULL_DECK if c not in read and c not in held]
    if free:
        return free[pick % len(free)], False
    mucked = [c for c in engine.cards_at("muck") if c not in held]
    return (mucked[pick % len(mucked)], True) if mucked else None


class LivenessFinisher(_Finisher):
    """A dealer and a floor who finish the hand, whatever state it is in."""

    def __init__(self, engine: Engine, trace: Sequence[Event]) -> None:
        super().__init__(engine, trace)
        self.rulings = 0

    def card(self, antenna_name: str) -> None:
        found = free_card(self.engine, -1)
        assert found is not None, "the deck ran out"
        card, mucked = found
        if mucked:
            self.feed(TagOut(self.tick(0.01), "muck", card=card))
        self.feed(TagIn(self.tick(), antenna_name, card=card))

    def draw(self) -> bool:
        want = self.engine.wants_draw()
        if want is None:
            return False
        purpose, of = want
        args = {"purpose": purpose, "pick": 0, "of": of}
        self.feed(Command(t=self.tick(), name="draw", args=args))
        return True

    def collect(self) -> bool:
        """After a misdeal: every card off the seats, the board and the burn."""
        dealing = self.engine.dealing
        if dealing is None or not dealing.deal.collecting:
            return False
        for name, cards in sorted(self.engine.cards.contents.items()):
            if antenna(name).kind in ("seat", "board", "burn"):
                for card in list(cards):
                    self.feed(TagOut(self.tick(0.01), name, card=card))
        return True

    def redeal(self) -> bool:
        """The initial deal (or the re-deal) not over: the next card, in dealing order."""
        dealing = self.engine.dealing
        hand = self.engine.hand
        if dealing is None or hand is None or dealing.deal.over or dealing.deal.collecting:
            return False
        for _ in range(dealing.hole_count):
            for seat in dealing.deal.order:  # every seat dealt in, a folded one too
                if len(hand.hole.get(seat, ())) < dealing.hole_count:
                    self.card(f"seat{seat}")
                    return True
        return False

    def post(self) -> bool:
        """The blinds and antes still owed are put out."""
        betting = self.engine.betting
        if betting is None or betting.phase != "posting":
            return False
        owed = [(s, o) for s, o in sorted(betting.owed.items()) if o > 0]
        for seat, amount in owed:
            self.push(seat, amount)
        return bool(owed)

    def stray_cards(self) -> bool:
        """Cards on the board or at a seat that are not the hand's (a premature card, a card
        the hand no longer counts): back to the stub."""
        hand = self.engine.hand
        if hand is None:
            return False
        moved = False
        for name, cards in sorted(self.engine.cards.contents.items()):
            where = antenna(name)
            if where.kind == "board":
                keep = set(hand.board)
            elif where.kind == "seat" and where.seat is not None:
                keep = set(hand.hole.get(where.seat, ()))
            else:
                continue
            for card in [c for c in cards if c not in keep]:
                self.feed(TagOut(self.tick(0.01), name, card=card))
                moved = True
        return moved

    def floor_rules(self) -> bool:
        """The floor comes to the table and rules: holds released, its procedures closed."""
        if self.rulings >= 3:
            return False
        self.rulings += 1
        if not self.engine.floor_present():
            self.feed(Badge(t=self.tick(), uid=FLOOR_UID))
        self.feed(ButtonPress(self.tick(), "floor"))
        return True

    def fold_to_act(self) -> bool:
        """The player to act, whose check or call is refused, folds: cards to the muck."""
        betting = self.engine.betting
        hand = self.engine.hand
        seat = betting.to_act if betting is not None else None
        if seat is None or hand is None:
            return False
        cards = list(hand.hole.get(seat, ()))  # on its antenna, or picked up meanwhile
        on_seat = self.engine.cards_at(f"seat{seat}")
        for card in cards:
            if card in on_seat:
                self.feed(TagOut(self.tick(0.05), f"seat{seat}", card=card))
            self.feed(TagIn(self.tick(0.05), "muck", card=card))
        return bool(cards)

    def progress_key(self) -> tuple[object, ...]:
        """What a motion may change: events, hole cards, cards on antennas, the betting."""
        engine = self.engine
        betting = engine.betting
        dealing = engine.dealing
        return (
            engine.seq,
            engine.hole_reads,
            tuple(sorted((k, len(v)) for k, v in engine.cards.contents.items())),
            engine.floor_present(),
            betting.to_act if betting is not None else None,
            betting.phase if betting is not None else None,
            len(dealing.pending()) if dealing is not None else 0,
        )

    def motion(self, pot: list[tuple[str, int]]) -> bool:
        """One dealer (or floor) motion; False when none is left to try."""
        if self.draw() or self.collect():
            return True
        if self.engine.held() and self.floor_rules():
            return True
        if self.post() or self.stray_cards() or self.redeal():
            return True
        return self.step(pot)


def _play_to_the_end(finisher: LivenessFinisher, limit: int) -> bool:
    """Dealer, player and floor motions until the hand ends; True if it did."""
    engine = finisher.engine
    pot: list[tuple[str, int]] = list(finisher.pot.items())
    idle = 0  # motions in a row that changed nothing
    for _ in range(limit):
        if engine.hand is None:
            return True
        before = finisher.progress_key()
        if idle < 2:
            finisher.motion(pot)
        elif idle == 2:
            finisher.fold_to_act()  # its push or check was refused: the player folds
        elif not finisher.floor_rules():
            break
        idle = 0 if finisher.progress_key() != before else idle + 1
        if idle > 3:
            break
    return engine.hand is None


def complete_hand(engine: Engine, trace: Sequence[Event], limit: int = 300) -> str | None:
    """Play the engine's hand to its end; None once it ended, else why it could not."""
    if _play_to_the_end(LivenessFinisher(engine, trace), limit):
        return None
    return f"stuck: {json.dumps(engine.snapshot(), sort_keys=True)[:2000]}"


def finish_with_the_floor(
    engine: Engine, trace: Sequence[Event], limit: int = 300
) -> list[Message] | None:
    """Like `complete_hand`, the floor ruling where a procedure holds the table: the
    messages published meanwhile, or None when the hand could not be finished."""
    finisher = LivenessFinisher(engine, trace)
    return finisher.messages if _play_to_the_end(finisher, limit) else None
