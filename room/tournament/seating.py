"""Seats: the random draws (TDA 2019 rules 7, 8-A, 10 and its 2-step process), who moves to
balance and where (11-A, and the houses' variants), when to balance (11-A, 11-D; Venezia art. 5),
when to break a table and which (11-C; Casinos Austria art. 39), the final table's size and
draw (RP-9; Casinos Austria art. 37, 40). Pure: randomness comes in as a `random.Random`.

Positions come from the engine's own rules for the button and blinds (dead button, rule 32;
heads-up, 34; new players not dealt in between the button and the small blind, 8 and 10), so
the room's "big blind next" is the table's.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from controller.engine.positions import Positions, fresh_positions, next_positions
from room.tournament.house import HouseRules

RANKS = "23456789TJQKA"
#: Suits from the lowest for a draw by suit (clubs, diamonds, hearts, spades).
SUITS = "cdhs"
DECK = tuple(r + s for r in RANKS for s in SUITS)


def card_order(card: str) -> int:
    """A draw card's strength: by rank, then by suit (the 2-step draw, rule 10 addendum)."""
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


@dataclass(frozen=True, slots=True)
class TableSeats:
    """One table as the floor sees it: who sits where (players with chips), where the
    button and blinds were in the hand in progress or the last one, the coming button."""

    table: str
    seats: Mapping[int, str]  # seat -> player id (players still in)
    positions: Positions | None  # the hand in progress, else the last hand
    n_seats: int  # the seats the event uses at this table (1..n)
    button: int | None = None  # where the button goes for a table's first hand
    blocked: frozenset[int] = frozenset()  # seats still taken by players out of play

    def empty(self) -> list[int]:
        return [
            s for s in range(1, self.n_seats + 1) if s not in self.seats and s not in self.blocked
        ]

    @property
    def count(self) -> int:
        return len(self.seats)


def coming_positions(t: TableSeats, players: Sequence[int] | None = None) -> Positions | None:
    """Button and blinds of the table's next hand with `players` seated (default: its
    players now); None when fewer than two."""
    seated = sorted(t.seats if players is None else players)
    if len(seated) < 2:
        return None
    if t.positions is None:
        return fresh_positions(t.button if t.button is not None else seated[-1], seated, t.n_seats)
    return next_positions(t.positions, seated, t.n_seats)


def mover(t: TableSeats, rules: HouseRules) -> int | None:
    """The seat whose player moves to balance: the player to be big blind next (TDA 11-A;
    Casinos Austria art. 22), or the player in the big blind of the hand just played
    (Venezia art. 5) while still in."""
    if rules.mover == "big_blind" and t.positions is not None and t.positions.big_blind in t.seats:
        return t.positions.big_blind
    pos = coming_positions(t)
    return pos.big_blind if pos is not None else None


def hands_until_big_blind(t: TableSeats, seat: int, limit: int = 12) -> int | None:
    """How many hands until a newcomer in the empty `seat` posts the big blind (1: the next
    hand); None if the seat would post the small blind next hand first (TDA 11-A: the worst
    position is never the small blind) or no big blind comes within `limit` hands."""
    players = sorted([*t.seats, seat])
    pos = coming_positions(t, players)
    if pos is None:
        return None
    for k in range(1, limit + 1):
        if pos.big_blind == seat:
            return k
        if k == 1 and pos.small_blind == seat:
            return None
        pos = next_positions(pos, players, t.n_seats)
    return None


def worst_seat(t: TableSeats, rng: random.Random) -> int | None:
    """TDA 11-A: the worst position at the short table for the player moved in: the empty
    seat that posts the big blind soonest ("including single big blind if available"),
    never the small blind. With no hand played there yet, a seat drawn at random."""
    empty = t.empty()
    if not empty:
        return None
    if t.positions is None and t.button is None:
        return rng.choice(empty)
    ranked = [(k, s) for s in empty if (k := hands_until_big_blind(t, s)) is not None]
    if not ranked:
        return rng.choice(empty)
    return min(ranked)[1]


def balance_move(
    tables: Sequence[TableSeats],
    rules: HouseRules,
    *,
    seats_per_table: int,
    difference: int,
    order: Sequence[str],
) -> tuple[str, str] | None:
    """(from table, to table) when the tables need balancing, else None.

    TDA: once the fullest and the shortest table differ by `difference` players (the TD's
    tightness, 11-D's "more tightly balanced"). Venezia art. 5: a table three or more below
    the event's table size, when another has at least two more. The player comes from the
    fullest table, the first of them in the predetermined order (11-C), and goes to the
    shortest one, the last of them in that order (the one that breaks last)."""
    playing = [t for t in tables if t.count > 0]
    if len(playing) < 2:
        return None
    most = max(t.count for t in playing)
    least = min(t.count for t in playing)
    if most - least < 2:
        return None
    if rules.balance_trigger == "short_of_table_size":
        if least > seats_per_table - 3:
            return None
    elif most - least < difference:
        return None
    rank = {name: i for i, name in enumerate(order)}
    source = min((t for t in playing if t.count == most), key=lambda t: rank.get(t.table, 0))
    target = max((t for t in playing if t.count == least), key=lambda t: rank.get(t.table, 0))
    return source.table, target.table


def halted(tables: Sequence[TableSeats], rules: HouseRules) -> list[str]:
    """TDA 11-D: full-table play halts on tables three or more players short of the table
    with the most players (none under a house without the rule)."""
    if not rules.halt_short_tables:
        return []
    playing = [t for t in tables if t.count > 0]
    if len(playing) < 2:
        return []
    most = max(t.count for t in playing)
    return [t.table for t in playing if most - t.count >= 3]


def tables_needed(players: int, seats_per_table: int) -> int:
    """How many tables `players` fill (at least one)."""
    return max(1, -(-players // seats_per_table))


def table_to_break(
    tables: Sequence[TableSeats], order: Sequence[str], final_table: str, seats_per_table: int
) -> str | None:
    """The table to break when the players left fit in one table fewer: the first in the
    predetermined order (11-C; Casinos Austria art. 39: from the highest number) that is in
    play; the final table's host last of all."""
    playing = [t for t in tables if t.count > 0]
    players = sum(t.count for t in playing)
    if len(playing) < 2 or players > (len(playing) - 1) * seats_per_table:
        return None
    names = {t.table for t in playing}
    for name in order:
        if name in names and name != final_table:
            return name
    return None


def balanced_targets(tables: Sequence[TableSeats], players: int) -> dict[str, int]:
    """How many of `players` go to each table so the counts end as even as can be (the
    shortest tables first; among equals, the first of `tables`)."""
    counts = {t.table: t.count for t in tables}
    room = {t.table: len(t.empty()) for t in tables}
    added = dict.fromkeys(counts, 0)
    for _ in range(players):
        open_tables = [n for n in counts if room[n] > added[n]]
        if not open_tables:
            break
        pick = min(open_tables, key=lambda n: counts[n] + added[n])
        added[pick] += 1
    return {n: k for n, k in added.items() if k}


@dataclass(frozen=True, slots=True)
class Draw:
    """A recorded random seat draw: who got which seat, and how it was drawn."""

    seats: dict[str, tuple[str, int]]  # player id -> (table, seat)
    seat_cards: list[tuple[str, int]]  # step 1: the seat cards, scrambled, top first
    cards: dict[str, str]  # step 2: the playing card dealt face up to each player
    rule: str

    def public(self) -> dict[str, object]:
        return {
            "seats": {p: {"table": t, "seat": s} for p, (t, s) in self.seats.items()},
            "seat_cards": [{"table": t, "seat": s} for t, s in self.seat_cards],
            "cards": dict(self.cards),
            "rule": self.rule,
        }


def two_step_draw(
    players: Sequence[str], seat_cards: Sequence[tuple[str, int]], rng: random.Random, rule: str
) -> Draw:
    """TDA 10 and its addendum: 1) the new seat cards are scrambled face down into a stack;
    2) each player is dealt a playing card face up, and the seat cards are dealt out, the
    first to the highest card by suit."""
    stack = list(seat_cards)
    rng.shuffle(stack)
    dealt = rng.sample(DECK, len(players))
    cards = dict(zip(players, dealt, strict=True))
    by_card = sorted(players, key=lambda p: -card_order(cards[p]))
    return Draw(dict(zip(by_card, stack, strict=False)), stack, cards, rule)


def random_draw(
    players: Sequence[str], seat_cards: Sequence[tuple[str, int]], rng: random.Random, rule: str
) -> Draw:
    """A single random draw of the seats (rule 7; Venezia art. 3; Casinos Austria art. 3)."""
    stack = list(seat_cards)
    rng.shuffle(stack)
    return Draw(dict(zip(players, stack, strict=False)), stack, {}, rule)


def draw_seats(
    players: Sequence[str],
    tables: Sequence[TableSeats],
    rules: HouseRules,
    rng: random.Random,
    *,
    two_step: bool,
    rule: str,
) -> Draw:
    """Seats for `players` at `tables`, kept balanced: the seat cards are as many empty seats
    of each table as it is to receive, picked at random among its empty seats."""
    targets = balanced_targets(tables, len(players))
    cards: list[tuple[str, int]] = []
    for t in tables:
        k = targets.get(t.table, 0)
        if k:
            cards += [(t.table, s) for s in sorted(rng.sample(t.empty(), k))]
    draw = two_step_draw if two_step and rules.break_draw == "two_step" else random_draw
    return draw(players, cards, rng, rule)


def initial_tables(players: int, tables: Sequence[str], seats_per_table: int) -> list[str]:
    """The tables a field of `players` starts on: as few as hold them, in order."""
    return list(tables[: tables_needed(players, seats_per_table)])


def positions_of(t: TableSeats) -> dict[str, int | None]:
    """The table's next button, small blind and big blind seats (for draws by position)."""
    pos = coming_positions(t)
    if pos is None:
        return {"button": None, "small_blind": None, "big_blind": None}
    return {"button": pos.button, "small_blind": pos.small_blind, "big_blind": pos.big_blind}


def final_table_draw(
    tables: Sequence[TableSeats],
    size: int,
    host: str,
    rules: HouseRules,
    rng: random.Random,
) -> tuple[Draw, int]:
    """The final table's seats and its first button.

    TDA (rule 7): every seat drawn at random; the button drawn at random among them.
    Casinos Austria art. 37: the button on the last seat; the two players who would be big
    blind next at the last two tables draw seats 2 and 3 (big blind and under the gun), the
    two who would be on the button the two highest seats (button and cutoff), the two who
    would be small blind seats 1 and 7 (the text's numbers, for a final of ten: here seat 1
    and seat size - 3), the others the seats left."""
    players = [p for t in tables for p in t.seats.values()]
    seats = list(range(1, size + 1))
    if rules.final_draw != "casinos_austria":
        draw = random_draw(players, [(host, s) for s in seats], rng, rules.final_draw_rule)
        return draw, rng.choice(sorted(s for _t, s in draw.seats.values()))
    groups: list[tuple[list[str], list[int]]] = []
    taken: set[str] = set()
    used: set[int] = set()
    for role, wanted in (
        ("big_blind", [2, 3]),
        ("button", [size, size - 1]),
        ("small_blind", [1, size - 3]),
    ):
        who = []
        for t in tables[-2:]:  # the last two tables
            seat = positions_of(t)[role]
            if seat is not None and seat in t.seats and t.seats[seat] not in taken:
                who.append(t.seats[seat])
        cards = [s for s in dict.fromkeys(wanted) if 1 <= s <= size and s not in used]
        who = who[: len(cards)]
        taken.update(who)
        used.update(cards[: len(who)])
        groups.append((who, cards[: len(who)]))
    rest = [p for p in players if p not in taken]
    groups.append((rest, [s for s in seats if s not in used]))
    assigned: dict[str, tuple[str, int]] = {}
    stack: list[tuple[str, int]] = []
    for who, cards in groups:
        pick = list(cards)
        rng.shuffle(pick)
        stack += [(host, s) for s in pick]
        for player, seat in zip(who, pick, strict=False):
            assigned[player] = (host, seat)
    return Draw(assigned, stack, {}, rules.final_draw_rule), size


def button_draws(
    tables: Iterable[TableSeats], rules: HouseRules, rng: random.Random
) -> dict[str, int]:
    """The first button of each table: drawn at each table among its players (rule 7), or
    one seat drawn at one table and used at every table (Casinos Austria art. 6)."""
    tables = [t for t in tables if t.seats]
    if not tables:
        return {}
    if rules.button_draw == "one_for_all":
        seat = rng.choice(sorted(tables[0].seats))
        return {t.table: seat for t in tables}
    return {t.table: rng.choice(sorted(t.seats)) for t in tables}
