"""Poker Hand History (PHH, uoftcprg/phh-std) files from a table's published messages.

One function builds a hand's PHH text from the hand's `events` (what the room server stores)
and, when known, the hole cards (what the table itself knows from `holecards`, replaying its
journal). The room writes a card it never saw as PHH's unknown card `??`. Pure: no I/O.

Player order (phh-std *Position*): clockwise from the first seat left of the button, the
button last; heads-up that is the big blind then the button, and the forced-bet arrays are
written "reverse-assigned" as the standard says (index 0 the small blind's, index 1 the big
blind's). `seats` gives the table's seat number of each player, in that order.

Starting stacks are not published as such: they are worked out from the hand's events
(the final stacks of `hand_completed`, plus what each seat put in, minus what it won and
got back), so the file replays to exactly the published final stacks wherever the PHH
model and the table's rules agree (docs/room.md, *Hand histories*, says where they do not:
the odd chips of a split pot).

Dealing errors and rulings are written twice: as commentary no-op actions (`# misdeal
(rule 35A-2): ...`) where they happened, and in the user fields `_dealing_errors` and
`_rulings`. Actions voided by a misdeal are not written (the re-deal is the same hand,
rule 35-C: the betting restarts from the blinds and antes).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

UNKNOWN = "??"
STREETS = {"flop": 1, "turn": 2, "river": 3}
#: Events after which a hand cannot be written as a PHH file (nothing was played out).
VOID = {
    "bets_returned": "a fouled deck returned every bet (rule 35E)",
    "level_corrected": "the level was corrected during the hand (rule 23)",
}


@dataclass(frozen=True, slots=True)
class HandMessages:
    """One hand's messages: its events in `seq` order, and what else is known of it."""

    table: str
    hand: int
    events: list[dict[str, Any]]
    holecards: dict[int, list[str]] = field(default_factory=dict)  # seat -> cards (table only)
    players: dict[int, str] = field(default_factory=dict)  # seat -> name (from `state`)
    started_at: float | None = None  # unix time of hand_started, when known


@dataclass(frozen=True, slots=True)
class PhhHand:
    """A hand exported to PHH, or the reason it cannot be (`text` None, `problem` set)."""

    table: str
    hand: int
    first_seq: int
    last_seq: int
    text: str | None
    problem: str | None = None
    seats: tuple[int, ...] = ()
    finishing_stacks: tuple[int, ...] = ()
    dealing_errors: tuple[str, ...] = ()
    put_in: int = 0  # chips the seats put in (antes, blinds, bets)
    awarded: int = 0  # chips paid out in pots
    returned: int = 0  # uncalled bets and bets returned (fouled deck) given back

    @property
    def rake(self) -> int:
        """Chips that went in and did not come back out: the house's take (0 while the
        engine takes no rake)."""
        return max(0, self.put_in - self.awarded - self.returned)

    @property
    def filename(self) -> str:
        """`<table>-<hand, 6 digits>.phh`."""
        return f"{self.table}-{self.hand:06d}.phh"


def split_hands(
    messages: Iterable[tuple[str, dict[str, Any]]], *, epoch: float | None = None
) -> Iterator[HandMessages]:
    """The completed hands in a stream of (topic suffix, payload) messages of one table.

    `epoch` is the unix time of trace time 0 (a journal's header), to date the hands.

    `events` (de-duplicated by `seq`), `holecards` (the last cards read for each seat since
    the last deal began: a misdeal starts a new deal) and `state` (player names) are used;
    a hand is complete with its `hand_completed`.
    """
    seen: set[int] = set()
    current: list[dict[str, Any]] = []
    hole: dict[int, list[str]] = {}
    players: dict[int, str] = {}
    names: dict[int, str] = {}
    table = ""
    for topic, payload in messages:
        if topic == "state":
            names = {
                int(s): v["player"]
                for s, v in payload.get("seats", {}).items()
                if isinstance(v, dict) and isinstance(v.get("player"), str)
            }
            continue
        if topic == "holecards":
            cards = payload.get("cards")
            same = bool(current) and payload.get("hand") == current[0].get("hand")
            # the last read with the most cards (a card leaving for the muck keeps the hand)
            if same and isinstance(cards, list) and len(cards) >= len(hole.get(seat(payload), [])):
                hole[seat(payload)] = [str(c) for c in cards]
            continue
        if topic != "events":
            continue
        seq = payload.get("seq")
        if not isinstance(seq, int) or seq in seen:
            continue
        seen.add(seq)
        kind = payload.get("type")
        table = str(payload.get("table", table))
        if kind == "hand_started":
            current, hole, players = [payload], {}, dict(names)
            continue
        if not current or payload.get("hand") != current[0].get("hand"):
            continue
        current.append(payload)
        if kind == "misdeal":
            hole = {}  # the re-deal: the cards read from now on are the hand's
        elif kind == "hand_completed":
            started = None if epoch is None else epoch + float(current[0].get("t", 0.0))
            number = int(current[0]["hand"])
            yield HandMessages(table, number, current, dict(hole), players, started)
            current, hole = [], {}


def seat(payload: dict[str, Any]) -> int:
    """The seat number of a `holecards` payload."""
    return int(payload["seat"])


def _order(button: int, seats: Sequence[int]) -> list[int]:
    """Seats in PHH player order: clockwise from the first seat left of the button."""
    return sorted(seats, key=lambda s: (s <= button, s))


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(value, datetime.time):
        return value.isoformat()  # a TOML local time
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _comment(text: str) -> str:
    """A commentary no-op action (one line, no '#' inside)."""
    return "# " + " ".join(text.replace("#", "No.").split())


def _staff(ref: Any) -> str:
    return str(ref.get("name") or ref.get("uid")) if isinstance(ref, dict) else "?"


class _Money:
    """The chips a hand's events move: returned bets, pots won, the final stacks."""

    def __init__(self, order: Sequence[int]) -> None:
        self.final: dict[int, int] = {}
        self.wins = dict.fromkeys(order, 0)
        self.returned = dict.fromkeys(order, 0)

    def take(self, e: dict[str, Any]) -> bool:
        """Count the event if it moves chips; whether it did."""
        kind = e.get("type")
        if kind == "uncalled_bet_returned":
            self.returned[int(e["seat"])] = self.returned.get(int(e["seat"]), 0) + int(e["amount"])
        elif kind == "bets_returned":
            for key, chips in (e.get("refunds") or {}).items():
                self.returned[int(key)] = self.returned.get(int(key), 0) + int(chips)
        elif kind == "pot_awarded":
            for key, share in (e.get("shares") or {}).items():
                self.wins[int(key)] = self.wins.get(int(key), 0) + int(share)
        elif kind == "hand_completed":
            self.final = {int(k): int(v) for k, v in (e.get("stacks") or {}).items()}
        else:
            return False
        return True


class _Builder:
    """Walks one hand's events and writes its PHH actions."""

    def __init__(self, hand: HandMessages) -> None:
        started = hand.events[0]
        self.hand = hand
        self.button = int(started["button"])
        self.order = _order(self.button, [int(s) for s in started["seats"]])
        self.index = {seat: i for i, seat in enumerate(self.order)}
        self.n = len(self.order)
        self.big_blind = int(started["big_blind"])
        self.game = str(started.get("game") or "nlhe")  # named when not no-limit
        self.blinds = [0] * self.n
        self.antes = [0] * self.n
        self.contrib_ante = dict.fromkeys(self.order, 0)
        self.short_ante: set[int] = set()  # seats all in for part of the ante
        self.errors: list[str] = []
        self.rulings: list[str] = []
        self.problem: str | None = None
        self.awarded = False
        self.raked = 0  # the house's rake, as the pots' `pot_awarded` say
        self.award_cards: dict[int, list[str]] = {}  # seat -> its cards, as the awards show
        self.forced_allin: set[int] = set()  # seats all in with their forced bets
        # seat -> the chips it never put in (its final stack less what it won and got back):
        # none for a seat that was all in at some point of the hand
        self.kept: dict[int, int] = {}
        self._reset_deal()

    def _reset_deal(self) -> None:
        """A (re-)deal: the betting as it opened (forced bets in), no board, no action."""
        self.street = 0
        self.totals: list[dict[int, int]] = [dict.fromkeys(self.order, 0) for _ in range(4)]
        for seat in self.order:
            self.totals[0][seat] = self.blinds[self.index[seat]]
        self.level = max(self.blinds, default=0)
        self.actions: list[str] = []
        self.board: dict[int, list[str]] = {}
        self.board_at: dict[int, int] = {}  # street -> position of its `d db` in actions
        self.shown: set[int] = set()
        self.mucked: set[int] = set()
        self.killed: dict[int, int] = {}  # dead hands still to fold in PHH -> street killed
        self.acted: dict[int, int] = {}  # player -> the level after its last action this round
        self.acted_before: dict[int, int] = {}  # position in `actions` -> its player's before
        self.last_actor = self._last_forced()
        self.folded: set[int] = set()
        # The forced bets stay in through a misdeal (35-C: the same blinds): a blind that put
        # a seat all in keeps it all in for the re-deal.
        self.allin: set[int] = set(self.forced_allin)
        # seat -> (where its last action is in `actions`, the level it faced, its total before)
        self.last_act: dict[int, tuple[int, int, int]] = {}
        # seat -> (street, chips) bound in by rule 53-B while the seat acts again
        self.committed: dict[int, tuple[int, int]] = {}
        # seat -> (street, chips) binding chips (53-B) left in front above the bet it called
        # in the file: back uncalled at the end, its call of a later raise, or dead on a fold
        self.parked: dict[int, tuple[int, int]] = {}
        # An all-in tabling with only dead hands able to bet: their folds and the shows wait
        # for the next street (`_dead_hands_fold_then_show`).
        self.deferred = False
        self.shows: list[str] = []

    def _last_forced(self) -> int:
        """The player whose forced bet the first actor follows: the largest blind or
        straddle (the last of equal ones; heads-up the big blind is the first player), or
        the button when no blind is in."""
        forced = [(b, i) for i, b in enumerate(self.blinds) if b]
        return max(forced)[1] if forced else self.n - 1

    # -- events ----------------------------------------------------------------------

    def posted(self, e: dict[str, Any]) -> None:
        seat = int(e["seat"])
        if seat not in self.index:
            return
        i = self.index[seat]
        ante = int(e.get("ante") or 0)
        self.antes[i] += ante
        self.contrib_ante[seat] += ante
        amount = int(e.get("amount") or 0)
        if e.get("blind") in ("small", "big", "straddle"):
            self.blinds[i] += amount
        self.totals[0][seat] += amount
        self.level = max(self.level, self.totals[0][seat])
        if e.get("allin"):
            self.allin.add(seat)
            self.forced_allin.add(seat)
            if ante < int(self.hand.events[0].get("ante") or 0):
                self.short_ante.add(seat)  # all in for part of the ante (`_ante_trimming`)
        self.last_actor = self._last_forced()

    def action(self, e: dict[str, Any]) -> None:
        seat = int(e["seat"])
        kind = str(e["action"])
        amount = int(e.get("amount") or 0)
        i = self.index[seat]
        self._bound_before(i)
        self._kills_before(i)
        self.last_act[seat] = (len(self.actions), self.level, self.totals[self.street][seat])
        self.acted_before[len(self.actions)] = self.acted.get(i, -1)
        self.acted[i] = max(self.level, amount)
        totals = self.totals[self.street]
        parked = self._unpark(seat)
        if kind == "fold":
            word = "f"
            self.folded.add(seat)
            if parked:
                # binding chips left above its call stay in the pot with the fold (53-B)
                self._dead_money(seat, parked, "binding out-of-turn chips forfeited (rule 53-B)")
            # An undercall the floor let fold (rule 51-B): its chips stay in the pot. PHH has
            # no such action: they are written as the seat's ante (dead money in the pot, so
            # every stack replays exactly), and a ruling says so.
            forfeited = int(e.get("forfeited") or 0)
            street, bound = self.committed.pop(seat, (-1, 0))
            if street == self.street and bound > totals[seat]:
                # 53-B: chips bound out of turn, then a fold: they stay in. Written, as a
                # forfeited undercall is, as dead money (the seat's ante).
                self.contrib_ante[seat] += bound - totals[seat]
                self.antes[i] += bound - totals[seat]
                self.rulings.append(
                    f"binding out-of-turn chips forfeited (rule 53-B): seat {seat}, "
                    f"{bound - totals[seat]}"
                )
            if forfeited:
                self.contrib_ante[seat] += forfeited
                self.antes[i] += forfeited
                self.rulings.append(f"undercall forfeited (rule 51-B): seat {seat}, {forfeited}")
            dead = forfeited or (street == self.street and bound > totals[seat])
            if dead and self.kept.get(seat, 1) <= 0 and self.problem is None:
                # Dead money that leaves the seat nothing: written as its ante it is all in
                # from the deal, with no fold to make. PHH has no such hand.
                self.problem = (
                    f"seat {seat} folded forfeiting every chip it had (rule 51-B or 53-B): "
                    "PHH has no fold for a hand its dead money puts all in"
                )
        elif kind in ("check", "call") or (kind == "allin" and amount <= self.level):
            self.committed.pop(seat, None)
            word = "cc"
            # A check by a seat whose binding chips (53-B) are the level: they are its call.
            totals[seat] = amount if kind != "check" else max(totals[seat], amount)
            if amount > self.level:
                # Binding chips (53-B) above the bet: in the file a call of the bet; the rest
                # stays in front (back uncalled at the end) and is its call of a later raise
                # up to it, written when the round closes (`_close_round`).
                self.acted[i] = self.level
                self.parked[seat] = (self.street, amount - self.level)
        else:
            self.committed.pop(seat, None)
            word = f"cbr {amount}"
            totals[seat] = amount
            self.level = max(self.level, amount)
        if kind == "allin":
            self.allin.add(seat)
        self.actions.append(f"p{i + 1} {word}")
        self.last_actor = i

    def out_of_turn_money(self, e: dict[str, Any]) -> bool:
        """Actions out of turn and the chips they move (53, 58, 15-B, 65-A), the pots' rake:
        True when the event is wholly accounted for here."""
        kind = e.get("type")
        if kind == "out_of_turn":
            self.out_of_turn(e)
            return True
        if kind == "uncalled_bet_returned":
            return self.handed_back(int(e["seat"]), int(e["amount"]))
        if kind == "pot_awarded":
            if not self.awarded and e.get("reason") == "uncontested":
                self.uncontested()
            self.awarded = True
            self.raked += int(e.get("rake") or 0)
        return False

    def out_of_turn(self, e: dict[str, Any]) -> None:
        """A binding fold out of turn (rule 58): PHH has no action out of turn, so the hand
        folds when its turn comes, as a dead hand does (its chips stay in either way). A
        binding bet, call or raise out of turn is its `action` event, written in turn."""
        seat = int(e["seat"])
        if e.get("acts_again") and seat in self.index:
            # 53-B: binding chips out of turn stay in while the seat acts again (below).
            self.committed[seat] = (self.street, int(e.get("amount") or 0))
            return
        if e.get("action") != "fold" or e.get("status") != "binding" or seat not in self.index:
            return
        i = self.index[seat]
        if seat not in self.folded and i not in self.killed:
            self.killed[i] = self.street
            self.rulings.append(f"binding fold out of turn (rule {e.get('rule')}): seat {seat}")

    def handed_back(self, seat: int, amount: int) -> bool:
        """An uncalled bet or raise given back as its hand left the pot out of turn (15-B,
        65-A): the seat's last action becomes what stayed in, the part the others matched
        (a call of the level it faced, or a smaller raise). At the award PHH returns the
        uncalled bet itself. False when this is that return (nothing rewritten)."""
        i = self.index.get(seat)
        if i is None or i not in self.killed or seat not in self.last_act:
            return False
        at, faced, _before = self.last_act[seat]
        totals = self.totals[self.street]
        kept = totals[seat] - amount
        totals[seat] = kept
        self.allin.discard(seat)  # chips came back: it is not all in
        self.level = max([kept, *(t for s, t in totals.items() if s != seat)])
        self.acted[i] = kept
        self.actions[at] = f"p{i + 1} cc" if kept <= faced else f"p{i + 1} cbr {kept}"
        if faced < kept < faced + self._least_raise() and self.problem is None:
            # what a short all-in matched, written as the seat's bet or raise, is less than
            # any the file may make (and the seat is not all in)
            self.problem = (
                f"seat {seat}'s bet, cut back to what a short all-in matched (rule "
                f"15-B or 65-A), is {kept - faced} over the bet it faced: below the least "
                "bet or raise, which PHH cannot write"
            )
        self._folds_without_a_turn(at)
        return True

    def _least_raise(self) -> int:
        """The least bet or raise over a bet: the big blind (no or pot limit; a raise after
        a raise is at least its size, not tracked here) or the street's fixed bet."""
        if self.game == "flhe":
            return self.big_blind * (2 if self.street >= 2 else 1)
        return self.big_blind

    def _folds_without_a_turn(self, at: int) -> None:
        """Folds written after the raise at `at` that came back (15-B, 65-A) by players who
        had already acted at the level it is now: in the file they have no turn left in the
        round. Each becomes a dead hand, folding at its next turn (its chips stay in either
        way), and a comment stands where it folded."""
        for k in range(at + 1, len(self.actions)):
            player, _, word = self.actions[k].partition(" ")
            if player == "d":
                return  # the next street: its folds had turns
            if word != "f" or not player.startswith("p") or k not in self.acted_before:
                continue
            j = int(player[1:]) - 1
            if self.acted_before[k] < self.level or j in self.killed:
                continue
            seat = self.order[j]
            self.actions[k] = _comment(f"seat {seat} folded: no turn left (the raise came back)")
            self.folded.discard(seat)
            self.killed[j] = self.street
            self.acted[j] = self.acted_before[k]
            self.last_act.pop(seat, None)  # its fold is no action of the file to fold at
            if self.last_actor == j:
                self.last_actor = self._previous_actor(k)

    def _fold_where_it_acted(self, i: int) -> None:
        """A dead hand folds where it last acted on the street (its action the last one
        written, or a check or call no later action depended on) instead: what it had put in
        on the street beyond its earlier chips is written as its dead money (its ante), as a
        forfeited undercall is."""
        seat = self.order[i]
        at, _faced, before = self.last_act[seat]
        totals = self.totals[self.street]
        last = at == len(self.actions) - 1
        self.actions[at] = f"p{i + 1} f"
        self.contrib_ante[seat] += totals[seat] - before
        self.antes[i] += totals[seat] - before
        totals[seat] = before
        self.folded.add(seat)
        del self.killed[i]
        self.level = max(t for s, t in totals.items())
        self.level = max(self.level, max(self.blinds, default=0) if self.street == 0 else 0)
        if last:
            self.last_actor = self._previous_actor(at)

    def _bound_before(self, actor: int) -> None:
        """A seat bound by 53-B to act again whose turn the table passed (its binding chips
        were all it had: all in): in the file its binding chips are its action, in turn."""
        for seat, (street, bound) in list(self.committed.items()):
            i = self.index[seat]
            gap = (i - self.last_actor) % self.n
            if street == self.street and 0 < gap < (actor - self.last_actor) % self.n:
                self._kills_before(i)
                self._bound_acts(i, bound)

    def _bound_acts(self, i: int, bound: int) -> None:
        """The 53-B seat's binding chips written as its call: the table passed it, all in
        for less than the bet, or with its binding chips covering the bet (above it, or at
        it with chips it never put in)."""
        seat = self.order[i]
        del self.committed[seat]
        totals = self.totals[self.street]
        self.last_act[seat] = (len(self.actions), self.level, totals[seat])
        if bound > self.level or (bound == self.level and self.kept.get(seat, 0) > 0):
            # Passed with chips behind: its binding chips cover the bet (binding chips that
            # were all it had above the bet are its all-in raise, an action of their own);
            # in the file a call of it, the rest staying in front (back uncalled at the end
            # of the round, as the table does).
            self.acted[i] = self.level
            totals[seat] = bound
            self.actions.append(f"p{i + 1} cc")
            self.last_actor = i
            if bound > self.level:
                self.parked[seat] = (self.street, bound - self.level)
            return
        word = f"cbr {bound}" if bound > self.level else "cc"
        self.acted[i] = max(self.level, bound)
        totals[seat] = bound
        self.level = max(self.level, bound)
        self.allin.add(seat)
        self.actions.append(f"p{i + 1} {word}")
        self.last_actor = i

    def _bound_matched(self, i: int, bound: int) -> bool:
        """A 53-B seat to act again whose binding chips are in and match the round as it
        closes (the change that gave it a turn was handed back, 15-B): it has no turn left
        in the file."""
        seat = self.order[i]
        return self.totals[self.street][seat] >= bound and self.acted.get(i, -1) >= self.level

    def _previous_actor(self, at: int) -> int:
        """The player of the last action before position `at` that was a player's."""
        for line in reversed(self.actions[:at]):
            if line.startswith("p") and " " in line:
                return int(line.split()[0][1:]) - 1
        return self.last_actor

    def _due(self, i: int) -> bool:
        """A dead hand has a turn due in this round (it has not acted at the current level);
        an all-in hand has no turn left (it mucks at the showdown)."""
        if self.order[i] in self.allin:
            return False
        return self.killed[i] < self.street or self.acted.get(i, -1) < self.level

    def _unpark(self, seat: int) -> int:
        """The seat's binding chips left in front above its call on this street (53-B), no
        longer so: a later action of its own takes them up, or a fold leaves them dead."""
        street, chips = self.parked.pop(seat, (-1, 0))
        return chips if street == self.street else 0

    def _dead_money(self, seat: int, chips: int, why: str) -> None:
        """Chips the seat leaves in the pot beyond its bets in the file: its ante (dead
        money), a ruling saying so."""
        self.totals[self.street][seat] -= chips
        self.contrib_ante[seat] += chips
        self.antes[self.index[seat]] += chips
        self.rulings.append(f"{why}: seat {seat}, {chips}")

    def _fold_dead(self, i: int) -> None:
        """A dead hand folds in the file, now."""
        parked = self._unpark(self.order[i])
        if parked:
            self._dead_money(self.order[i], parked, "binding chips forfeited (rule 53-B)")
        self.acted_before[len(self.actions)] = self.acted.get(i, -1)  # `_folds_without_a_turn`
        self.actions.append(f"p{i + 1} f")
        self.folded.add(self.order[i])
        del self.killed[i]

    def _kills_before(self, actor: int) -> None:
        """A dead hand (hand_killed) folds in PHH when its turn comes: before the next actor
        whose turn comes after it, clockwise from the last actor (PHH has no fold out of
        turn; the table's rules keep its chips in the pot either way)."""
        # Clockwise from the last actor, not in the order the hands were killed.
        for i in sorted(self.killed, key=lambda k: (k - self.last_actor) % self.n):
            gap = (i - self.last_actor) % self.n
            if 0 < gap < (actor - self.last_actor) % self.n and self._due(i):
                self._fold_dead(i)

    def _close_round(self) -> None:
        """The round ends: a dead hand whose turn was due folds before it does, and a player
        still in who has not acted in the opened round (the big blind's or the straddle's
        option, the rest all in or folded: the table does not ask it) checks."""
        # A dead hand folding opens the round in the file as much as an action does.
        opened = bool(self.acted) or any(self._due(i) for i in self.killed)
        out = {self.index[s] for s in self.folded | self.allin if s in self.index}
        start = self.last_actor
        for k in range(1, self.n + 1):
            i = (start + k) % self.n
            bound = self.committed.get(self.order[i])
            if bound is not None and bound[0] == self.street:
                if self._bound_matched(i, bound[1]):
                    del self.committed[self.order[i]]  # nothing left for it to put in
                else:
                    self._bound_acts(i, bound[1])
            elif i in self.killed:
                if self._due(i):
                    self._fold_dead(i)
            elif opened and i not in out and self.acted.get(i, -1) < self.level:
                self.actions.append(f"p{i + 1} cc")
                self.acted[i] = self.level
                left = self.totals[self.street][self.order[i]] - self.level
                self.parked.pop(self.order[i], None)
                if left > 0:  # still above the bet: back uncalled at the end
                    self.parked[self.order[i]] = (self.street, left)

    def _fold_dead_callers(self) -> None:
        """Dead hands whose turn in the round is over (a call, or the last action) while the
        hand ends without another turn for them (uncontested, or the rest all in): they fold
        where they acted instead (their chips stay in, as dead money), since the call that
        closes the round in the file would come before their fold."""
        for raises in (False, True):  # the callers first: a raise is judged by what follows
            for i in list(self.killed):
                at = self.last_act.get(self.order[i], (-1, 0, 0))[0]
                on_street = at > self.board_at.get(self.street, -1)
                over = self.level and on_street and self.order[i] not in self.allin
                if i not in self.killed or not over or self._due(i):
                    continue
                if at == len(self.actions) - 1 or self.actions[at].endswith(" cc"):
                    self._fold_where_it_acted(i)
                elif raises and (callers := self._answered_by_folds_and_all_in_calls(at)):
                    self._raise_folded_before_all_in_calls(i, at, callers)

    def _answered_by_folds_and_all_in_calls(self, at: int) -> set[int]:
        """The calls all in after a dead hand's bet or raise at `at` when every other action
        after it is a fold (else none): written folding where it raised, the dead hand's
        chips stay in as dead money, and the one call all in (the hand that wins the pot
        uncontested) calls the bet left instead, its own chips coming back to it either
        way."""
        callers: set[int] = set()
        for line in self.actions[at + 1 :]:
            player, _, word = line.partition(" ")
            if not player.startswith("p") or word == "f":
                continue  # a comment, a fold
            seat = self.order[int(player[1:]) - 1]
            if word != "cc" or seat not in self.allin:
                return set()
            callers.add(seat)
        return callers

    def _raise_folded_before_all_in_calls(self, i: int, at: int, callers: set[int]) -> None:
        """The dead hand at `i` folds where it raised (at `at`); the calls all in after it
        call the bet left, with chips behind in the file; a fold after it by a player who
        had acted at that bet has no turn: that hand folds at its next turn instead."""
        self._fold_where_it_acted(i)
        totals = self.totals[self.street]
        left = [t for s, t in totals.items() if s not in callers]
        self.level = max(left + ([max(self.blinds, default=0)] if self.street == 0 else []))
        for seat in callers:
            self.allin.discard(seat)
            self.acted[self.index[seat]] = self.level
        for k in range(at + 1, len(self.actions)):
            player, _, word = self.actions[k].partition(" ")
            if word == "cc" and self.acted_before.get(k, -1) >= self.level:
                # a call of the raise by a player who had acted at the bet left: no turn
                seat = self.order[int(player[1:]) - 1]
                self.actions[k] = _comment(f"seat {seat} called: no turn left (the raise folded)")
        self._folds_without_a_turn(at)

    def uncontested(self) -> None:
        """The pot went uncontested while hands that folded out of turn (58) or were killed
        still had to fold in the file: they fold in turn order, and a player still in the
        hand whose turn comes first checks (in the table's hand it never had to act) or,
        when the folded hands have no turn left in the round, bets the minimum, returned
        uncalled as they fold (the stacks stay the table's)."""
        self._bound_chips_of_the_winner()
        if not self.killed:
            return
        self._fold_dead_callers()
        self._drop_checks_after_the_last_fold()
        out = {self.index[s] for s in self.folded | self.allin if s in self.index}
        turn = self.last_actor
        for _ in range(3 * self.n):
            if not self.killed:
                return
            if all(self.order[i] in self.allin for i in self.killed):
                self._dead_all_in_to_the_showdown()
                return
            if self.street < 3 and self._round_closed(out):
                self._unseen_street()
                turn = self.last_actor
            turn = (turn + 1) % self.n
            if turn in out:
                continue
            if turn in self.killed:
                self._fold_dead(turn)
                out.add(turn)
            elif all(self._due(i) for i in self.killed):
                self.actions.append(f"p{turn + 1} cc")
                self.acted[turn] = self.level
            else:
                # A folded hand has no turn left in this round: the player still in bets or
                # raises (returned uncalled when they fold), so that they fold in it.
                self._opens_again(turn)

    def _dead_all_in_to_the_showdown(self) -> None:
        """Every hand still to leave the file is all in (it left out of turn, 58, or was
        killed with every chip in): PHH has no fold for it. The hand still in calls, the
        dead hands muck at the showdown, the winner shows its cards (when the reader has
        them), and the board comes unseen (the table dealt none). Before the river, pokerkit
        (0.7.7) cannot deal on once the one hand left has chips behind (it asserts): a gap
        the money tests name (`tests/money_known.py`, docs/phh.md)."""
        out = {self.index[s] for s in self.folded | self.allin if s in self.index}
        for k in range(1, self.n + 1):
            i = (self.last_actor + k) % self.n
            if i not in out and self.acted.get(i, -1) < self.level:
                self.actions.append(f"p{i + 1} cc")
                self.acted[i] = self.level
        for i in sorted(self.killed):
            self.actions.append(f"p{i + 1} sm")
            self.shown.add(self.order[i])
        self.killed.clear()
        for i in range(self.n):
            seat = self.order[i]
            if i not in out:
                cards = self.hand.holecards.get(seat, [])
                self.actions.append(f"p{i + 1} sm {''.join(cards)}".rstrip())
                self.shown.add(seat)
        for street in range(self.street + 1, 4):
            self.actions.append("d db " + UNKNOWN * (3 if street == 1 else 1))

    def _bound_chips_of_the_winner(self) -> None:
        """A 53-B seat to act again wins the pot uncontested before it acts: its binding
        chips are in the pot it wins (the table's stacks count them), so they count in what it
        put in. In the file the others' chips are what it wins either way."""
        for seat, (street, bound) in list(self.committed.items()):
            if street == self.street and seat not in self.folded and (
                self.index[seat] not in self.killed
            ):
                totals = self.totals[self.street]
                totals[seat] = max(totals[seat], bound)
                del self.committed[seat]

    def _drop_checks_after_the_last_fold(self) -> None:
        """Dead hands folded where they called: a check written after them, when only one
        hand is left in the file, has no turn (the hand is over there): it is dropped."""
        folded: set[str] = set()
        for at, line in enumerate(self.actions):
            player, _, word = line.partition(" ")
            if word == "f":
                folded.add(player)
            elif self.n - len(folded) == 1 and word == "cc" and line.startswith("p"):
                left = [k for k, a in enumerate(self.actions[at:]) if a.startswith("p")]
                if all(self.actions[at + k].endswith(" cc") for k in left):
                    for k in reversed(left):
                        del self.actions[at + k]
                return

    def _round_closed(self, out: set[int]) -> bool:
        """Every hand still in the file, dead or not, has acted at the level of a round that
        was opened: in the file the betting round is over."""
        if not self.acted or self.n - len(out) < 2:
            return False
        return all(
            self.acted.get(i, -1) >= self.level and self.killed.get(i, self.street) == self.street
            for i in range(self.n)
            if i not in out
        )

    def _unseen_street(self) -> None:
        """The round closed before the hands still to fold left (58 after the last call): in
        the file the next street comes, its cards unseen (the table dealt none), and they
        fold on it in turn."""
        self.street += 1
        self.actions.append("d db " + UNKNOWN * (3 if self.street == 1 else 1))
        self.level = 0
        self.last_actor = self.n - 1
        self.acted = {}

    def _opens_again(self, turn: int) -> None:
        """The player still in bets (or raises) so that every hand still to fold has a turn:
        the least a fixed-limit bet is, or double the level (at least a minimum raise)."""
        if self.game == "flhe":
            size = self.level + self.big_blind * (2 if self.street >= 2 else 1)
        else:
            size = 2 * self.level if self.level else self.big_blind
        self.actions.append(f"p{turn + 1} cbr {size}")
        self.level = size
        self.acted[turn] = size

    def board_dealt(self, e: dict[str, Any]) -> None:
        street = STREETS.get(str(e.get("street")))
        if street is None:
            return
        if street not in self.board_at:
            self._close_round()
            self.board_at[street] = len(self.actions)
            self.actions.append("")  # placeholder: the street's final cards, filled in at the end
            self.street = street
            self.level = 0
            self.last_actor = self.n - 1
            self.acted = {}
            if self.deferred:
                self._dead_hands_fold_then_show()
        self.board[street] = [str(c) for c in e.get("cards", [])]

    def _dead_hands_fold_then_show(self) -> None:
        """The street after an all-in tabling where dead hands could still bet in the file:
        in turn they fold and the player still able to bet checks; then the tabled hands are
        shown."""
        for i in range(self.n):
            seat = self.order[i]
            if seat in self.allin or seat in self.folded:
                continue
            if i in self.killed:
                self._fold_dead(i)
            else:
                self.actions.append(f"p{i + 1} cc")
        self.actions += self.shows
        self.shows = []
        self.deferred = False

    def _able(self) -> list[int]:
        """The seats in the file still able to bet: not folded, not all in."""
        return [s for s in self.order if s not in self.folded and s not in self.allin]

    def tabled(self, cards_by_seat: Mapping[str, Any]) -> None:
        if self.street == 3 and len(self._able()) > 1:
            # In the file a dead hand still has chips to bet with beside the player still in:
            # betting would go on, so it folds where it called.
            self._fold_dead_callers()
        self._close_round()
        able = self._able()
        if len(able) > 1 and self.street < 3:
            # Dead hands have chips left to bet with in the file: they fold as the next street
            # opens (pokerkit deals it and waits for their turn), the player still able to
            # bet checks, and the hands are shown then.
            self.deferred = True
        for i in sorted(self.killed):
            seat = self.order[i]
            if seat not in self.shown and (seat in self.allin or len(able) <= 1) and not (
                self.deferred and seat not in self.allin
            ):
                # A hand killed or discarded (15-B, 65-A) with no betting left to it: its
                # chips stay in, in every pot they reach; in the file it mucks at the all-in
                # showdown.
                self.shown.add(seat)
                del self.killed[i]
                (self.shows if self.deferred else self.actions).append(f"p{i + 1} sm")
        for key, cards in cards_by_seat.items():
            seat = int(key)
            if seat in self.award_cards or (isinstance(cards, list) and not cards):
                # The cards the award names, if any: a hand tabled before its cards were
                # read, or before a misdeal (35-C: the re-deal's cards are the hand's).
                cards = self.award_cards.get(seat, [])
            if seat in self.index and seat not in self.shown and isinstance(cards, list):
                self.shown.add(seat)
                line = f"p{self.index[seat] + 1} sm {''.join(cards)}"
                (self.shows if self.deferred else self.actions).append(line)

    def showdown(self, events: Sequence[dict[str, Any]], at: int) -> None:
        """River showdown: every live hand shows (cards from the awards) or mucks, in order."""
        self._close_round()
        order = [int(s) for s in events[at].get("order", [])]
        order += [self.order[i] for i in sorted(self.killed)]  # dead hands in the showdown muck
        cards: dict[int, list[str]] = {}
        mucked: set[int] = set()
        for e in events[at + 1 :]:
            if e.get("type") == "pot_awarded":
                for key, shown in (e.get("showdown") or {}).items():
                    if isinstance(shown, dict) and isinstance(shown.get("cards"), list):
                        cards.setdefault(int(key), [str(c) for c in shown["cards"]])
            elif e.get("type") == "hand_mucked":
                mucked.add(int(e["seat"]))
        for seat in order:
            if seat in self.shown or seat not in self.index:
                continue
            self.shown.add(seat)
            if seat in cards and seat not in mucked:
                self.actions.append(f"p{self.index[seat] + 1} sm {''.join(cards[seat])}")
            else:
                self.actions.append(f"p{self.index[seat] + 1} sm")

    # -- the file ----------------------------------------------------------------------

    def build(self) -> PhhHand:
        events = self.hand.events
        money = _Money(self.order)
        self.award_cards = {
            int(key): [str(c) for c in shown["cards"]]
            for e in events
            if e.get("type") == "pot_awarded"
            for key, shown in (e.get("showdown") or {}).items()
            if isinstance(shown, dict) and isinstance(shown.get("cards"), list)
        }
        self.kept = self._kept()
        for at, e in enumerate(events):
            if self.out_of_turn_money(e):
                continue
            kind = e.get("type")
            if kind in VOID:
                self.problem = VOID[str(kind)]
            elif kind == "posted":
                self.posted(e)
            elif kind == "action":
                self.action(e)
            elif kind == "board_dealt":
                self.board_dealt(e)
            elif kind == "hands_tabled":
                self.tabled(e.get("showdown") or {})
            elif kind == "showdown":
                self.showdown(events, at)
            elif not money.take(e):
                self._annotate(e)
        return self._file(money.final, money.wins, money.returned)

    def _kept(self) -> dict[int, int]:
        """Each seat's chips it never put in: its final stack less what it won and got back,
        read ahead from the hand's events (none for a seat all in at some point)."""
        ahead = _Money(self.order)
        for e in self.hand.events:
            ahead.take(e)
        return {s: ahead.final.get(s, 0) - ahead.wins[s] - ahead.returned[s] for s in self.order}

    def _annotate(self, e: dict[str, Any]) -> None:
        """A dealing error, a procedure or a ruling: a comment among the actions."""
        kind = e.get("type")
        if kind == "hand_killed":
            seat = int(e["seat"])
            if seat in self.index:
                self.killed[self.index[seat]] = self.street
            self._note(e, f"hand killed (rule {e.get('rule')}): seat {seat}, {e.get('reason')}")
        elif kind == "misdeal":
            self._note(e, f"misdeal (rule {e.get('rule')}): {e.get('reason')}", error=True)
            self._reset_deal()
            self.actions.append(_comment(self.errors[-1] + "; the same hand is re-dealt"))
        elif kind == "four_card_flop":
            cards = " ".join(e.get("cards", []))
            self._note(e, f"four-card flop (rule 39): {cards}", error=True)
        elif kind == "premature_card":
            cards = " ".join(e.get("cards", []))
            text = f"premature card (rule {e.get('rule')}): {e.get('street')} {cards}"
            self._note(e, text, error=True)
        elif kind == "burn_drawn":
            floor = _staff(e.get("floor"))
            self._note(e, f"burn card drawn (rule RP-14): {e.get('card')}, floor {floor}")
        elif kind == "floor_ruling":
            self._note(e, f"floor ruling (rule 1) by {_staff(e.get('floor'))}", ruling=True)
        elif kind == "procedure_violation":
            text = f"procedure violation (rule {e.get('rule')}): {e.get('got')}"
            self._note(e, text, error=True)

    def _note(
        self, e: dict[str, Any], text: str, *, error: bool = False, ruling: bool = False
    ) -> None:
        if error:
            self.errors.append(text)
        if ruling:
            self.rulings.append(text)
        if e.get("type") != "misdeal":
            self.actions.append(_comment(text))

    def _game_fields(self) -> list[tuple[str, Any]]:
        """The variant, the forced bets and the bet sizes."""
        antes, blinds = list(self.antes), list(self.blinds)
        if self.n == 2:  # heads-up: the arrays are reverse-assigned (phh-std)
            antes.reverse()
            blinds.reverse()
        fields: list[tuple[str, Any]] = [
            ("variant", "FT" if self.game == "flhe" else "NT"),
            *self._ante_trimming(),
            ("antes", antes),
            ("blinds_or_straddles", blinds),
        ]
        if self.game == "flhe":  # fixed limit: a small bet pre-flop and flop, then double
            fields += [("small_bet", self.big_blind), ("big_bet", 2 * self.big_blind)]
        else:
            fields.append(("min_bet", self.big_blind))
        return fields

    def _file(
        self, final: dict[int, int], wins: dict[int, int], returned: dict[int, int]
    ) -> PhhHand:
        hand = self.hand
        first, last = int(hand.events[0]["seq"]), int(hand.events[-1]["seq"])
        put_in = {s: self.contrib_ante[s] + sum(t[s] for t in self.totals) for s in self.order}
        base: dict[str, Any] = {
            "table": hand.table,
            "hand": hand.hand,
            "first_seq": first,
            "last_seq": last,
            "put_in": sum(put_in.values()),
            "awarded": sum(wins.values()),
            "returned": sum(returned.values()),
        }
        if self.problem is None and not self.awarded:
            # Ended with no pot awarded (abandoned: every chip went back, rule 1).
            self.problem = "no pot was awarded: the hand was abandoned and its chips returned"
        if self.problem is None and any(seat not in final for seat in self.order):
            self.problem = "hand_completed does not give every dealt-in seat's stack"
        starting = [
            final.get(seat, 0) + put_in[seat] - wins[seat] - returned[seat] for seat in self.order
        ]
        if self.problem is None and any(s <= 0 for s in starting):
            self.problem = "a starting stack works out at zero or less"
        if self.problem is not None:
            return PhhHand(**base, text=None, problem=self.problem)
        for street, at in self.board_at.items():
            self.actions[at] = f"d db {''.join(self.board.get(street, []))}"
        cards = ["".join(hand.holecards.get(seat, [])) for seat in self.order]
        self.actions = _as_the_stacks_allow(
            self.actions, starting, self.antes, self.blinds, cards=cards
        )
        deal = []
        for i, seat in enumerate(self.order):
            cards = hand.holecards.get(seat, [])
            deal.append(f"d dh p{i + 1} {''.join(cards) if len(cards) == 2 else UNKNOWN * 2}")
        fields = self._game_fields()
        fields += [
            ("starting_stacks", starting),
            ("actions", deal + self.actions),
            ("hand", hand.hand),
            ("table", hand.table),
            ("seats", self.order),
        ]
        players, started_at = _names_and_start(hand)
        if players and all(seat in players for seat in self.order):
            fields.append(("players", [players[s] for s in self.order]))
        finishing = [final[s] for s in self.order]
        if started_at is not None:
            when = datetime.datetime.fromtimestamp(started_at, datetime.UTC)
            fields += [("day", when.day), ("month", when.month), ("year", when.year)]
            fields += [("time", when.time().replace(microsecond=0)), ("time_zone", "UTC")]
        fields += [
            ("finishing_stacks", finishing),
            ("winnings", [wins[s] for s in self.order]),
            ("_first_seq", first),
            ("_last_seq", last),
            ("_button_seat", self.button),
        ]
        if self.game == "plhe":
            # PHH has no pot-limit hold'em: the hand is written as no-limit (every pot-limit
            # action is a legal no-limit one, so it replays exactly) and says it was not.
            fields.append(("_betting_structure", "pot-limit"))
        if self.raked:  # the house's rake (campione), pot by pot: PHH has no field for it
            fields.append(("_rake", self.raked))
        if self.errors:
            fields.append(("_dealing_errors", self.errors))
        if self.rulings:
            fields.append(("_rulings", self.rulings))
        text = "".join(f"{key} = {_toml(value)}\n" for key, value in fields)
        return PhhHand(
            **base,
            text=text,
            seats=tuple(self.order),
            finishing_stacks=tuple(finishing),
            dealing_errors=tuple(self.errors),
        )

    def _ante_trimming(self) -> list[tuple[str, Any]]:
        """A seat all in for part of the ante (the rest paying the level's ante in full) wins
        from each other ante only what it matched, as from any bet (side pots): pokerkit
        puts antes in the main pot whole unless the file asks it to trim them
        (`ante_trimming_status`, phh-std), which for uniform antes is the same pots."""
        events = self.hand.events
        level = int(events[0].get("ante") or 0)
        short = [i for i, seat in enumerate(self.order) if seat in self.short_ante]
        if any(e.get("type") == "posted" and e.get("rule") == "RP-11" for e in events):
            return []  # a big-blind ante (RP-11): one seat antes for all
        if not short or any(a != level for i, a in enumerate(self.antes) if i not in short):
            return []
        return [("ante_trimming_status", True)]


def _as_the_stacks_allow(
    actions: Sequence[str],
    starting: Sequence[int],
    antes: Sequence[int],
    blinds: Sequence[int],
    *,
    cards: Sequence[str],
) -> list[str]:
    """The file's turns and raises as the players' chips allow them, the stacks followed
    through the file's actions (player order, forced bets first):

    - a bet or raise no other hand still in can call beyond the bet it faces (each folded,
      all in, or holding no more than that bet) is written as a call: its excess comes back
      uncalled either way (15-B), and pokerkit refuses such a raise (PHH has no word for it);
    - a check by a player who has no turn in the round is not written: as the round opens,
      its bet already covers every other hand still in, bet and stack (a big blind facing
      only a small blind all in for less, 15-B returns the excess); the table does not ask
      it and neither does pokerkit (its effective stack is nothing);
    - a raise beyond the player's chips (the bet `_opens_again` writes so that dead hands
      fold in turn, returned uncalled) is written as its all-in;
    - a fold by such a player with no turn has none in PHH either: it mucks at the
      showdown, and the hands still in show their `cards` (a big blind folded out of turn
      before a small blind short of the blind acts: 58, with table stakes).
    """
    n = len(starting)
    stacks = [s - a - b for s, a, b in zip(starting, antes, blinds, strict=True)]
    bets = list(blinds)
    folded: set[int] = set()

    def without_a_turn() -> set[int]:
        totals = sorted(bets[j] + stacks[j] for j in range(n) if j not in folded)
        second = totals[-2] if len(totals) > 1 else 0
        return {j for j in range(n) if j not in folded and stacks[j] and second <= bets[j]}

    idle = without_a_turn()
    out: list[str] = []
    for at, line in enumerate(actions):
        parts = line.split()
        if parts[:2] == ["d", "db"]:
            bets = [0] * n
            idle = without_a_turn()
        elif len(parts) >= 2 and parts[0][:1] == "p" and parts[0][1:].isdigit():
            i = int(parts[0][1:]) - 1
            level = max(bets)
            line = _uncallable_as_a_call(line, i, bets, stacks, folded)
            parts = line.split()
            if parts[1] == "f" and i in idle and bets[i] == level:
                # As the round opened its bet covered every other hand still in, bet and
                # stack: PHH has no turn for it; it mucks at the showdown instead.
                folded.add(i)
                return out + _mucked_without_a_turn(i, actions[at + 1 :], out, folded, cards)
            if parts[1] == "f":
                folded.add(i)
            elif parts[1] == "cc" and i in idle and bets[i] == level:
                continue  # no turn: not written
            elif parts[1] in ("cc", "cbr"):
                to = min(level if parts[1] == "cc" else int(parts[2]), bets[i] + stacks[i])
                if parts[1] == "cbr" and to < int(parts[2]):
                    line = f"p{i + 1} cbr {to}" if to > level else f"p{i + 1} cc"
                stacks[i] -= to - bets[i]
                bets[i] = to
        out.append(line)
    return out


def _uncallable_as_a_call(
    line: str, i: int, bets: Sequence[int], stacks: Sequence[int], folded: set[int]
) -> str:
    """Player `i`'s bet or raise that no other hand still in can call beyond the bet it
    faces is written as a call (its excess comes back uncalled either way)."""
    level = max(bets)
    others = [j for j in range(len(bets)) if j != i and j not in folded]
    if line.split()[1] == "cbr" and not any(stacks[j] + bets[j] > level for j in others):
        return f"p{i + 1} cc"
    return line


def _mucked_without_a_turn(
    i: int, rest: Sequence[str], written: Sequence[str], folded: set[int], cards: Sequence[str]
) -> list[str]:
    """Player `i`'s fold with no turn, as the showdown it is in the file: it mucks, the hands
    still in show their cards, pokerkit deals the street pending (unseen: the table dealt
    none) and the hand is over; of the rest only the comments stay."""
    shows = [f"p{j + 1} sm {cards[j]}".rstrip() for j in range(len(cards)) if j not in folded]
    dealt = sum(1 for line in written if line.startswith("d db "))
    board = ["d db " + UNKNOWN * (3 if dealt == 0 else 1)] if dealt < 3 else []
    return [f"p{i + 1} sm", *shows, *board, *(line for line in rest if line.startswith("#"))]


def _names_and_start(hand: HandMessages) -> tuple[dict[int, str], float | None]:
    """The players' names and the unix time of the start, as `hand_started` gives them (the
    table's own record, the same for the table's export and the room's); else what the
    reader of the messages knew (the last `state`, a journal's epoch)."""
    started = hand.events[0]
    named = started.get("players")
    players = dict(hand.players)
    if isinstance(named, dict):
        players = {int(k): str(v) for k, v in named.items() if isinstance(v, str)}
    at = started.get("started_at")
    started_at = float(at) if isinstance(at, int | float) else hand.started_at
    return players, started_at


def build_phh(hand: HandMessages) -> PhhHand:
    """The PHH file of one completed hand (or why there is none)."""
    if not hand.events or hand.events[0].get("type") != "hand_started":
        raise ValueError("a hand's events start with hand_started")
    try:
        return _Builder(hand).build()
    except (KeyError, TypeError, ValueError) as exc:
        first = int(hand.events[0].get("seq", 0))
        last = int(hand.events[-1].get("seq", 0))
        return PhhHand(hand.table, hand.hand, first, last, None, f"events not understood: {exc!r}")
