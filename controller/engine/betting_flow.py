"""A hand's betting from physical events: posts, settled chip pushes, streets, all-ins, pots."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

from controller.engine.betting import (
    allin_live_16,
    award_12_20,
    check_55,
    fold_58,
    forced_bets_rp11,
    mucked_winner_13c,
    out_of_turn_53,
    straddle,
    tabled_16,
    two_motion_42c,
    uncalled_15b_65a,
    undercall_51b,
)
from controller.engine.betting.changes import (
    AfterChange,
    Aggressor,
    Change,
    Checked,
    Chips,
    Completed,
    CurrentBet,
    Drop,
    FaceDownNow,
    Folded,
    Keep,
    Mark,
    OpenPreflop,
    Posted,
    Skip,
    Straddled,
    Tabled,
    Won,
)
from controller.engine.betting.records import BettingRecord, Blinds, Opening, StackHolder, Zone
from controller.engine.cards import street_cards
from controller.engine.effects import Alert, Say
from controller.engine.ports import Emitter
from controller.engine.positions import Positions
from controller.engine.procedures.premature_card_rp5 import PREMATURE_RULES
from controller.engine.state import ACTIVE as _ACTIVE  # module globals: state.py's aliases
from controller.engine.state import ALLIN as _ALLIN
from controller.engine.state import BETTING as _BETTING
from controller.engine.state import FOLDED as _FOLDED
from controller.engine.state import POSTING as _POSTING
from controller.engine.state import FaceDown, Phase, SeatStatus
from controller.rules import RuleError
from controller.rules.betting import (
    Action,
    BettingRound,
    house_raise_cap,
    limit_bet_size,
    showdown_order,
    street_order,
    substantial_action,
)
from controller.rules.chips import Declared, PushRuling
from controller.rules.pots import Pot, build_pots
from controller.rules.profiles import PROFILES, Profile

STRUCTURES = {"nlhe": "nl", "plhe": "pl", "flhe": "fl"}
STREETS = ("preflop", "flop", "turn", "river")


class HandBetting(BettingRecord):
    """Everything about a hand's chips: it owns the stacks of the dealt-in seats.

    Its state is the `BettingRecord` it is (every field that changes during the hand);
    what it is given at the start (the seats, the positions, the profile, the callbacks)
    is its wiring.
    """

    # One hand's object, compared and hashed by identity (its record compares by value).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(
        self,
        *,
        emit: Emitter,
        seats: dict[int, StackHolder],
        dealt_in: list[int],
        positions: Positions,
        blinds: Blinds,
        game: str,
        settle_seconds: float,
        hole: Callable[[int], list[str]],
        board: Callable[[], list[str]],
        odd_unit: int = 1,
        straddle_multiple: int = 0,
        profile: Profile = PROFILES["tda-2019"],
        event_heads_up: bool = False,
        missed: dict[int, int] | None = None,
    ) -> None:
        self.emit = emit
        # Blinds missed on a house break (Campione "Gestione pause"), due as dead money.
        self.missed = {s: m for s, m in (missed or {}).items() if s in dealt_in}
        self.seats = seats
        self.dealt_in = list(dealt_in)
        self.pos = positions
        self.structure = STRUCTURES.get(game, "nl")
        self.settle_seconds = settle_seconds
        self.hole = hole
        self.board = board
        self.odd_unit = odd_unit
        self.profile = profile
        self.event_heads_up = event_heads_up  # rule 48: the event is down to two players
        # A house straddle (Campione "Puntate aggiuntive"): the seat left of the big blind may
        # put out `straddle_multiple` big blinds before the cards; it then acts last preflop.
        self.straddle_multiple = straddle_multiple if len(dealt_in) > 2 else 0
        BettingRecord.__init__(
            self,
            blinds=blinds,
            live=set(dealt_in),
            contrib={s: 0 for s in dealt_in},
            posted={s: 0 for s in dealt_in},
            zones={s: Zone() for s in dealt_in},
        )
        self.owed = forced_bets_rp11.forced_bets(self)
        # Called when the first round opens (blinds, antes, a straddle in): the engine keeps
        # the `opening()` there, the point a misdeal's exact re-play returns to (rule 35-C).
        self.on_open: Callable[[], None] | None = None
        if not any(self.owed.values()):
            self.open_preflop()

    # ------------------------------------------------------------------ queries

    def state(self) -> BettingRecord:
        """A copy of the hand's betting state, as one typed record."""
        return BettingRecord(
            **{
                f.name: copy.deepcopy(getattr(self, f.name))
                for f in dataclasses.fields(BettingRecord)
            }
        )

    def deadline(self) -> float | None:
        """When the oldest unsettled push must be read as settled."""
        due = [self.zones[s].last_t for s in self.unsettled if self._can_settle(s)]
        return round(min(due) + self.settle_seconds, 6) if due else None

    @property
    def to_act(self) -> int | None:
        """The seat whose turn it is."""
        if self.phase != _BETTING or self.round is None:
            return None
        return self.round.to_act

    def bet(self, seat: int) -> int:
        """Chips in front of the seat on the current street."""
        if self.round is not None and self.phase == _BETTING:
            return self.round.bets.get(seat, 0)
        if self.phase == _POSTING:
            return self.posted.get(seat, 0)
        return 0

    def status(self, seat: int) -> SeatStatus:
        """active / folded / allin for a dealt-in seat."""
        if seat not in self.live:
            return _FOLDED
        if self.seats[seat].stack == 0:
            return _ALLIN
        return _ACTIVE

    def pots(self) -> list[Pot]:
        """The pots in the middle (this street's bets not yet in them)."""
        middle = {s: c - self.bet(s) for s, c in self.contrib.items()}
        return build_pots(middle, self.live, self.dead)

    @property
    def substantial_action(self) -> bool:
        """Rule 36: substantial action has occurred in this hand (kept per action count)."""
        n = len(self.actions)
        if self.sa_memo[0] != n:
            self.sa_memo = (n, substantial_action(self.actions))
        return self.sa_memo[1]

    # ------------------------------------------------------------------ forced bets

    # ------------------------------------------------------------------ rounds

    def open_preflop(self) -> None:
        self.phase = Phase.BETTING
        # Ante chips in a bet zone belong to the pot, not to the seat's bet: they must not
        # count as "prior chips" of the seat's next push (rule 46 is about its bet).
        if not self.antes_taken:
            self.antes_taken = True
            for seat, zone in self.zones.items():
                ante = forced_bets_rp11.ante_paid(self, seat) + self.missed_paid.get(seat, 0)
                if ante:
                    _take_value(zone.chips, ante)
        order = street_order(
            [s for s in self.dealt_in if s in self.live],
            button=self.pos.button,
            big_blind_seat=self.pos.big_blind,
            preflop=True,
        )
        if self.straddle_seat is not None and self.straddle_seat in order:
            # The straddler acts last on the first round, with the option to raise.
            i = order.index(self.straddle_seat)
            order = order[i + 1 :] + order[: i + 1]
        self.round = self._new_round(
            order,
            bets={s: self.posted[s] for s in order},
            blind_level=max(self.blinds.big_blind, self.straddle),
            pot=self.antes,
            big_blind_seat=self.pos.big_blind,
            last_full_raise=self.straddle or None,
        )
        if self.on_open is not None:
            self.on_open()
        self.after_change(0.0)

    def _new_round(
        self,
        order: list[int],
        *,
        bets: dict[int, int],
        blind_level: int,
        pot: int,
        big_blind_seat: int | None,
        last_full_raise: int | None = None,
    ) -> BettingRound:
        bb = max(self.blinds.big_blind, 1)
        street = STREETS[self.street_i]
        return BettingRound(
            order=order,
            stacks={s: self.seats[s].stack for s in order},
            big_blind=bb,
            bets=bets,
            structure=self.structure,  # type: ignore[arg-type]
            pot=pot,
            blind_level=blind_level,
            big_blind_seat=big_blind_seat,
            bet_unit=limit_bet_size(street, bb) if self.structure == "fl" else None,  # type: ignore[arg-type]
            raise_cap=house_raise_cap(
                house_cap=self.profile.limit_raise_cap, event_heads_up=self.event_heads_up
            ),
            cap_lifted_heads_up=self.profile.limit_cap_lifted_heads_up_in_hand,
            last_full_raise=last_full_raise,
        )

    def _open_street(self) -> None:
        live_order = [s for s in self.dealt_in if s in self.live]
        with_chips = [s for s in live_order if self.seats[s].stack > 0]
        if len(with_chips) < 2:
            self.phase = Phase.WAITING
            self.make(tabled_16.maybe_table(self))
            if self.street_i == 3:
                self.showdown()
            return
        self.phase = Phase.BETTING
        order = street_order(live_order, button=self.pos.button)
        self.round = self._new_round(
            order,
            bets={},
            blind_level=0,
            pot=sum(self.contrib.values()) + self.dead,
            big_blind_seat=None,
        )
        self.after_change(0.0)

    def board_street(self, street: str) -> None:
        """The dealer turned a street's cards (flop, turn, river)."""
        if self.face_down == FaceDown.SAID:
            self.emit.alert(
                "card_before_instruction",
                "warning",
                f"{street} dealt before the floor's instruction: during hand-for-hand the "
                "dealer waits once all-in and called (RP-8 F)",
                street=street,
                rule="RP-8F",
            )
        index = STREETS.index(street)
        self.announced.add(index)  # its `board_dealt` is published, in turn or not
        if self.phase in (Phase.POSTING, Phase.BETTING):
            self.emit.alert(
                "premature_board",
                "critical",
                f"{street} dealt before the {STREETS[self.street_i]} betting was complete",
                street=street,
                rule=PREMATURE_RULES[street],
            )
            return
        if self.phase == Phase.WAITING and index == self.street_i + 1:
            self.street_i = index
            self._open_street()

    def _close_round(self) -> None:
        assert self.round is not None
        self.round = None
        # The street's chips belong to the pot now, gathered yet or not: they are no longer
        # "prior chips" of the next push (rule 46 is about the current street).
        for zone in self.zones.values():
            zone.chips.clear()
        self.declared.clear()
        self.checked_facing.clear()
        self.first_motion.clear()
        self.skip = None
        self.binding_53b.clear()
        for seat in sorted(self.held):
            held = self.held.pop(seat)
            self.emit.event(
                "out_of_turn",
                seat=seat,
                action=held.action.kind,
                amount=held.action.total or 0,
                status="returnable",
                reason="the street ended before the seat's turn came",
                to_act=None,
                rule="53-A",
            )
        if len(self.live) < 2:
            return
        self.make(tabled_16.maybe_table(self))
        if self.street_i == 3:
            self.showdown()
            return
        self.phase = Phase.WAITING
        # The next street may already be on the board (dealt before betting ended).
        needed = (3, 4, 5)[self.street_i]
        board = self.board()
        if len(board) >= needed:
            self.street_i += 1
            if self.street_i not in self.announced:
                # Cards that lay on the board unannounced (a board the floor let stand):
                # announced as the street opens, so the room, TV and a hand history see it.
                street = STREETS[self.street_i]
                self.emit.event(
                    "board_dealt",
                    street=street,
                    cards=street_cards(board, street),
                    board=board[:needed],
                )
            self._open_street()

    def instruct(self) -> bool:
        """RP-8 F: the floor instructs the dealer; hands kept face down are tabled now (16).
        False when no hand was waiting face down."""
        changes = tabled_16.instruct(self)
        if changes is None:
            return False
        self.make(changes)
        return True

    # ------------------------------------------------------------------ chips

    def _can_settle(self, seat: int) -> bool:
        if self.phase == _POSTING:
            return self.owed.get(seat, 0) > 0
        return self.phase == _BETTING

    def chip_in(self, t: float, seat: int, uid: str, value: int) -> None:
        """A chip arrived in the seat's bet zone."""
        zone = self.zones[seat]
        if uid in zone.nudged:
            # A settled chip nudged out of the zone and back (not the seat's turn): no bet.
            zone.chips[uid] = zone.nudged.pop(uid)
            return
        street, owed = self.owing.get(seat, (0, 0))
        if 0 < value <= owed:
            # Chips the seat still owed on an action already counted (an undercall completed,
            # a raise held to a full one): they pay what is owed, they are no new push.
            if owed > value:
                self.owing[seat] = (street, owed - value)
            else:
                del self.owing[seat]
            if street == self.street_i and self.round is not None:
                zone.chips[uid] = value
            return
        zone.pending[uid] = value
        zone.last_t = t
        self.unsettled.add(seat)

    def chip_out(self, t: float, seat: int, uid: str) -> None:
        """A chip left the seat's bet zone (pulled back, change made, or gathered)."""
        zone = self.zones[seat]
        if uid in zone.pending:
            del zone.pending[uid]
            zone.last_t = t
            if not zone.pending and not zone.pulled:
                self.unsettled.discard(seat)
            return
        value = zone.chips.pop(uid, None)
        if value is not None and self.to_act == seat and seat not in self.held:
            zone.pulled.append(value)  # rule 46: prior chips taken back as part of a push
            zone.last_t = t
            self.unsettled.add(seat)
        elif value is not None and self.phase in (_POSTING, _BETTING):
            zone.nudged[uid] = value

    def settle(self, t: float, *, only_due: bool, except_seat: int | None = None) -> None:
        """Read pushes as settled: those quiet for settle_seconds, or all of them."""
        while self.unsettled:
            ready = []
            for s in self.unsettled:
                last = self.zones[s].last_t
                if s == except_seat or not self._can_settle(s):
                    continue
                if not only_due or round(last + self.settle_seconds, 6) <= t:
                    ready.append((last, s))
            if not ready:
                return
            _last, seat = min(ready)
            self._settle(t, seat)

    def _settle(self, t: float, seat: int) -> None:
        zone = self.zones[seat]
        self.unsettled.discard(seat)
        if self.phase == Phase.POSTING:
            amount = sum(zone.pending.values()) - sum(zone.pulled)
            zone.chips.update(zone.pending)
            zone.pending.clear()
            zone.pulled.clear()
            self.make(forced_bets_rp11.post(self, seat, amount))
            return
        rnd = self.round
        assert rnd is not None
        new = list(zone.pending.values())
        pulled = list(zone.pulled)
        straddled = straddle.try_straddle(self, seat, sum(new)) if not pulled else None
        if straddled is not None:
            self.make(straddled)
            zone.chips.update(zone.pending)
            zone.pending.clear()
            return
        prior = [*zone.chips.values(), *pulled]
        zone.chips.update(zone.pending)
        zone.pending.clear()
        zone.pulled.clear()
        if seat not in self.live or seat not in rnd.behind:
            self.emit.alert(
                "chips_from_folded_seat",
                "warning",
                f"chips pushed by seat {seat}, not in the hand",
                seat=seat,
            )
            return
        declared = self.declared.get(seat)
        waits = two_motion_42c.first_motion(self, seat, rnd, declared, new, prior, pulled)
        if waits:
            self.make(waits)
            return
        try:
            ruling = rnd.interpret_push(
                seat,
                new_chips=new,
                prior_chips=prior,
                pulled_back=pulled,
                declared=declared,
                no_raise="55" if seat in self.checked_facing else None,
                last_chips_all_in=self.profile.last_chips_all_in,
            )
        except RuleError as exc:
            self.emit.alert(
                "push_refused", "warning", f"seat {seat}: {exc}", seat=seat, rule=exc.rule
            )
            return
        if seat != rnd.to_act:
            self.make(out_of_turn_53.hold(self, seat, ruling))
            return
        self.apply_ruling(t, seat, ruling)

    def apply_ruling(self, t: float, seat: int, ruling: PushRuling) -> None:
        rnd = self.round
        assert rnd is not None
        before = rnd.bets[seat]
        declared = self.declared.get(seat)
        try:
            if ruling.kind == "undercall":
                chips = sum(self.zones[seat].chips.values())
                decision, changes = undercall_51b.undercall(self, seat, rnd, ruling, before, chips)
                self.make(changes)
                if decision == "td":
                    return  # the floor's discretion: the seat's turn waits for it
                action = rnd.call(seat, rule="51-B")
            else:
                action = rnd.apply(seat, ruling)
        except RuleError as exc:
            self.emit.alert(
                "push_refused", "warning", f"seat {seat}: {exc}", seat=seat, rule=exc.rule
            )
            return
        self.undercalls.pop(seat, None)
        self.record(action, before)
        # An undercall made a full call (51-B): the rest of the call is still owed.
        owed = (
            max(0, action.total - sum(self.zones[seat].chips.values()))
            if ruling.kind == "undercall"
            else ruling.owed
        )
        if owed:
            self.owing[seat] = (self.street_i, owed)
        self.emit.event(
            "action",
            seat=seat,
            action=action.name,
            amount=action.total,
            rule=action.rule,
            change=ruling.change,
            owed=owed,
            declared=declared,
        )
        self.after_change(t)

    def record(self, action: Action, before: int) -> None:
        delta = action.total - before
        self.seats[action.seat].stack -= delta
        self.contrib[action.seat] += delta
        self.actions.append(action)
        if action.kind in ("bet", "raise"):
            self.last_aggressor = action.seat
            if self.street_i == 3:
                self.river_aggressor = action.seat
            # A declaration made facing the old bet lapses when the action changes (53-A).
            for other in [s for s in self.declared if s != action.seat]:
                del self.declared[other]
        self.declared.pop(action.seat, None)
        self.checked_facing.discard(action.seat)
        self.first_motion.discard(action.seat)

    # ------------------------------------------------------------------ buttons and folds

    def check(self, t: float) -> None:
        """The dealer's `check` button, for the player whose turn it is (rule 55)."""
        self.make(check_55.check(self, t))

    def declare(self, seat: int, kind: Declared) -> None:
        """An all-in button (RP-1) or the panel's raise declaration (rule 44)."""
        if seat not in self.live or (self.seats[seat].stack == 0 and kind == "allin"):
            self.emit.alert(
                "button_out_of_sequence",
                "warning",
                f"{kind} for seat {seat}, not able to bet",
                seat=seat,
            )
            return
        self.declared[seat] = kind
        self.emit.event(
            "declared", seat=seat, declaration=kind, rule="RP-1" if kind == "allin" else "44"
        )

    def fold(self, t: float, seat: int) -> None:
        """The seat's cards reached the muck."""
        if seat not in self.live:
            return
        if self.phase == Phase.SHOWDOWN or (
            self.phase == Phase.WAITING and (self.tabled or self.face_down == FaceDown.SAID)
        ):
            if self.tabled and seat in self.shown:
                self.emit.alert(
                    "tabled_hand_mucked",
                    "warning",
                    f"seat {seat}'s hand was tabled (a hand all in, betting over): it stays live",
                    seat=seat,
                    rule="16",
                )
                return
            self.make(mucked_winner_13c.best_hand_mucked(self, seat))
            self.leave(seat)
            self.emit.event("hand_mucked", seat=seat, rule="13-B")
            if len(self.live) == 1:
                self.award(t, "uncontested")
            return
        rnd = self.round
        if self.phase == Phase.BETTING and rnd is not None and rnd.to_act == seat:
            before = rnd.bets[seat]
            action = rnd.fold(seat)
            self.leave(seat)
            self.record(action, before)
            # 51-B with 46: only the chips still out beyond its bet are forfeited (some may
            # have been taken back since the undercall), and never more than it has
            out = sum(self.zones[seat].chips.values()) - before if seat in self.zones else 0
            forfeit = self.undercalls.pop(seat, 0)
            forfeit = max(0, min(forfeit, out, self.seats[seat].stack))
            if forfeit:  # the floor let the undercaller fold: its chips stay in (51-B)
                self.seats[seat].stack -= forfeit
                self.contrib[seat] += forfeit
                self.emit.event(
                    "action",
                    seat=seat,
                    action="fold",
                    amount=action.total,
                    rule="51-B",
                    forfeited=forfeit,
                )
            else:
                self.emit.event("action", seat=seat, action="fold", amount=action.total, rule=None)
            self.after_change(t)
            return
        live_allin = allin_live_16.allin_hand_to_muck(self, seat)
        if live_allin is not None:
            self.make(live_allin)
            return
        self.make(fold_58.fold_out_of_turn(self, t, seat))

    def leave(self, seat: int) -> None:
        """The seat's hand leaves the pot (a fold, a muck, a kill)."""
        if seat in self.live:
            self.live.discard(seat)
            self.left.append(seat)

    def kill(self, t: float, seat: int, rule: str) -> None:
        """The seat's hand is dead by rule (37, 38, 30, 71-C): not an action, its chips stay in."""
        if seat not in self.live:
            return
        rnd = self.round
        if rnd is not None and seat in rnd.behind and seat not in rnd.folded:
            self.make(uncalled_15b_65a.return_uncalled(self, seat, "65-A"))
            rnd.folded.add(seat)
        self.leave(seat)
        self.held.pop(seat, None)
        self.declared.pop(seat, None)
        self.undercalls.pop(seat, None)
        # During posting the killed seat's blinds and antes are still due (rules 30, 71-C):
        # the dealer posts them and they go to the pot.
        self.after_change(t)

    def opening(self) -> Opening:
        """What `return_to` needs to undo every action since the first round opened."""
        return Opening(
            live=frozenset(self.live),
            contrib=dict(self.contrib),
            posted=dict(self.posted),
            owed=dict(self.owed),
            antes=self.antes,
            dead=self.dead,
            straddle_seat=self.straddle_seat,
            straddle=self.straddle,
            blinds=self.blinds,
            zones={s: dict(z.chips) for s, z in self.zones.items()},
            stacks={s: self.seats[s].stack for s in self.dealt_in},
        )

    def return_to(self, o: Opening) -> None:
        """Undo every action since `o` was taken: chips back behind, the first round again."""
        self.live = set(o.live)
        self.left = [s for s in self.left if s not in self.live]
        self.contrib = dict(o.contrib)
        self.posted = dict(o.posted)
        self.owed = dict(o.owed)
        self.antes, self.dead = o.antes, o.dead
        self.straddle_seat, self.straddle = o.straddle_seat, o.straddle
        self.blinds = o.blinds
        self.zones = {s: Zone(chips=dict(o.zones.get(s, {}))) for s in self.dealt_in}
        for s, stack in o.stacks.items():
            self.seats[s].stack = stack
        self.unsettled = set()
        self.declared = {}
        self.checked_facing = set()
        self.first_motion = set()
        self.held = {}
        self.undercalls = {}
        self.owing = {}
        self.skip = None
        self.binding_53b = set()
        self.actions = []
        self.sa_memo = (0, False)
        self.street_i = 0
        self.announced = set()
        self.round = None
        self.tabled = False
        self.shown = set()
        if self.face_down == FaceDown.SAID:
            self.face_down = FaceDown.WAIT
        self.river_aggressor = None
        self.last_aggressor = None
        self.open_preflop()

    def reopen_posting(self, blinds: Blinds) -> dict[int, int]:
        """Rule 23 correction: the hand goes on at another level; what each seat still owes."""
        posted = {s: self.posted[s] + forced_bets_rp11.ante_paid(self, s) for s in self.dealt_in}
        self.blinds = blinds
        self.round = None
        self.phase = Phase.POSTING
        owed = forced_bets_rp11.forced_bets(self)
        self.owed = {s: max(0, owed[s] - posted[s]) if s in self.live else 0 for s in self.dealt_in}
        if not any(self.owed.values()):
            self.open_preflop()
        return {s: o for s, o in self.owed.items() if o}

    # ------------------------------------------------------------------ progress

    def after_change(self, t: float) -> None:
        """Close the round, end the hand or resolve a held action, as far as it goes."""
        if self.phase == Phase.WAITING:
            # A fold between streets can leave one hand with chips against all-in hands:
            # betting is over, every hand face up now (16), not when the next card comes
            self.make(tabled_16.maybe_table(self))
        while True:
            if len(self.live) == 1 and self.phase != Phase.COMPLETE:
                self.award(t, "uncontested")
                return
            rnd = self.round
            if self.phase != Phase.BETTING or rnd is None:
                return
            if rnd.round_complete:
                self._close_round()
                continue
            seat = rnd.to_act
            held = self.held.pop(seat, None) if seat is not None else None
            if held is None or seat is None:
                return
            resolution = rnd.resolve_out_of_turn(held.action)
            if seat in self.binding_53b:
                self.binding_53b.discard(seat)
                if not resolution.binding and not out_of_turn_53.all_in_beyond_the_bet(
                    self, seat, held
                ):
                    self.make(out_of_turn_53.commit_53b(self, seat, held))
                    continue
                resolution = out_of_turn_53.binding_53b(resolution)
            self.emit.event(
                "out_of_turn",
                seat=seat,
                action=held.action.kind,
                amount=held.action.total or 0,
                status="binding" if resolution.binding else "returnable",
                reason=resolution.reason,
                to_act=seat,
                rule=resolution.rule,
            )
            if resolution.binding:
                self.apply_ruling(t, seat, held.ruling)
                return

    def showdown(self) -> None:
        self.phase = Phase.SHOWDOWN
        if any(self.seats[s].stack == 0 for s in self.live):
            self.make(tabled_16.maybe_table(self, betting_over=True))  # rule 16 example 3
        hand_wide = self.profile.showdown_order == "last_aggressor"
        order = showdown_order(
            self.live,
            self.pos.button,
            aggressor=self.last_aggressor if hand_wide else self.river_aggressor,
        )
        self.emit.event("showdown", order=order, rule="16" if self.tabled else "17-A")

    def pot_pushed(self, t: float) -> None:
        """Chips left the pot antenna: at showdown, the dealer is pushing the pot."""
        if self.phase == Phase.SHOWDOWN:
            self.award(t, "pot_pushed")

    def unreadable(self) -> list[int]:
        """Live seats whose hand the reader has not fully read (two hole cards, five board)."""
        if len(self.live) < 2:
            return []
        board = self.board()
        board_ok = len(board) == 5
        seen = [c for s in self.live for c in self.hole(s)] + board
        twice = {c for c in seen if seen.count(c) > 1}  # a hole card slid onto the board
        return [
            s
            for s in sorted(self.live)
            if len(self.hole(s)) != 2 or not board_ok or twice & set(self.hole(s))
        ]

    def award(self, t: float, reason: str) -> bool:
        """Return the uncalled bet, build the pots, award them (rules 12, 15, 20, 21); False
        while a live hand is not fully read (the pot is held)."""
        if self.phase == Phase.COMPLETE:
            return True
        self.settle(t, only_due=False)
        complete, changes = award_12_20.award(self, reason)
        self.make(changes)
        return complete

    # ------------------------------------------------------------------ the one writer

    def make(self, changes: list[Change]) -> None:
        """Carry out, in order, the changes a betting rule returned: the hand's one writer
        of what the rules decide (`controller.engine.betting.changes`)."""
        for c in changes:
            if isinstance(c, Say):
                self.emit.event(c.kind, **c.fields)
            elif isinstance(c, Alert):
                self.emit.alert(c.kind, c.severity, c.message, **c.fields)
            elif isinstance(c, Chips | Won | Posted):
                self._move_chips(c)
            elif isinstance(c, Mark | Keep | Drop | Skip):
                self._set_seats(c)
            elif isinstance(c, Straddled | Tabled | FaceDownNow | Completed | Aggressor):
                self._set_field(c)
            else:
                self._take_step(c)

    def _move_chips(self, c: Chips | Won | Posted) -> None:
        match c:
            case Chips(seat, amount, street):
                self.seats[seat].stack -= amount
                self.contrib[seat] += amount
                if street and self.round is not None:
                    self.round.bets[seat] += amount
                    self.round.behind[seat] -= amount
            case Won(seat, chips):
                self.seats[seat].stack += chips
            case Posted(seat, blind, ante, missed, owed, dead_ante):
                if missed:
                    self.missed_paid[seat] = self.missed_paid.get(seat, 0) + missed
                    self.dead += missed
                self.antes += ante + missed
                self.posted[seat] += blind
                self.dead += ante if dead_ante else 0
                self.contrib[seat] += blind if dead_ante else blind + ante
                self.seats[seat].stack -= missed + ante + blind
                self.owed[seat] -= owed

    def _set_seats(self, c: Mark | Keep | Drop | Skip) -> None:
        match c:
            case Mark("live", seat, False):
                self.leave(seat)
            case Mark(field, seat, on):
                seats: set[int] = getattr(self, field)
                if on:
                    seats.add(seat)
                else:
                    seats.discard(seat)
            case Keep(field, seat, value):
                getattr(self, field)[seat] = value
            case Drop(field, seat):
                getattr(self, field).pop(seat, None)
            case Skip(street, seat, kinds, seats_, binding, found):
                self.skip = (street, seat, list(kinds), list(seats_))
                self.binding_53b.update(binding)
                if found is not None:
                    self.skipped_found.append(found)

    def _set_field(self, c: Straddled | Tabled | FaceDownNow | Completed | Aggressor) -> None:
        match c:
            case Straddled(seat, amount):
                self.straddle_seat = seat
                self.straddle = amount
            case Tabled():
                self.tabled = True
            case FaceDownNow(state):
                self.face_down = state
            case Completed(rake):
                self.phase = Phase.COMPLETE
                self.round = None
                self.rake = rake
            case Aggressor(seat):
                if self.last_aggressor == seat:
                    self.last_aggressor = None
                if self.river_aggressor == seat:
                    self.river_aggressor = None

    def _take_step(self, c: Change) -> None:
        rnd = self.round
        match c:
            case CurrentBet(amount) if rnd is not None:
                rnd.current_bet = amount
            case Folded(seat) if rnd is not None:
                rnd.folded.add(seat)
            case Checked(seat) if rnd is not None:
                before = rnd.bets[seat]
                self.record(rnd.check(seat), before)
            case OpenPreflop():
                self.open_preflop()
            case AfterChange(at):
                self.after_change(at)

    def refund_all(self) -> dict[int, int]:
        """Abandon the hand: every chip put in goes back to its owner (the ante too)."""
        refunds = {s: c for s, c in self.contrib.items() if c}
        for s, chips in self.missed_paid.items():  # blinds missed on a break: dead money
            refunds[s] = refunds.get(s, 0) + chips
        dead = self.dead - sum(self.missed_paid.values())
        if dead:
            bb = self.pos.big_blind
            refunds[bb] = refunds.get(bb, 0) + dead
        for s, chips in refunds.items():
            self.seats[s].stack += chips
        self.contrib = {s: 0 for s in self.contrib}
        self.dead = 0
        self.round = None
        self.phase = Phase.COMPLETE
        return refunds


def _take_value(chips: dict[str, int], amount: int) -> None:
    """Remove chips summing exactly to `amount` (fewest first found); if no subset does,
    forget them all (the seat's bet is then counted without physical prior chips)."""
    reach: dict[int, list[str]] = {0: []}
    for uid, value in sorted(chips.items(), key=lambda kv: -kv[1]):
        for total, used in list(reach.items()):
            new = total + value
            if new <= amount and new not in reach:
                reach[new] = [*used, uid]
        if amount in reach:
            break
    if amount in reach:
        for uid in reach[amount]:
            del chips[uid]
    else:
        chips.clear()
