"""Hold'em hand evaluator: best five of five to seven cards, by rank bitmasks and counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from controller.rules import RuleError

__all__ = [
    "CATEGORY_NAMES",
    "FLUSH",
    "FOUR_OF_A_KIND",
    "FULL_HOUSE",
    "HIGH_CARD",
    "ONE_PAIR",
    "STRAIGHT",
    "STRAIGHT_FLUSH",
    "THREE_OF_A_KIND",
    "TWO_PAIR",
    "HandRank",
    "best_five",
    "describe",
    "evaluate",
    "parse_card",
]

# A hand rank is (category, rank values...) with values 2..14 (ace high); higher is better.
HandRank = tuple[int, ...]

HIGH_CARD: Final = 0
ONE_PAIR: Final = 1
TWO_PAIR: Final = 2
THREE_OF_A_KIND: Final = 3
STRAIGHT: Final = 4
FLUSH: Final = 5
FULL_HOUSE: Final = 6
FOUR_OF_A_KIND: Final = 7
STRAIGHT_FLUSH: Final = 8

CATEGORY_NAMES: Final[tuple[str, ...]] = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)

RANKS: Final = "23456789TJQKA"
SUITS: Final = "cdhs"

_CARDS: Final[dict[str, tuple[int, int]]] = {
    r + s: (ri, si) for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}

_NAMES: Final = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
_PLURALS: Final = (
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
)


def _straight_high(mask: int) -> int:
    """Rank index of the highest straight in a 13-bit rank mask (3 for the wheel), else -1."""
    m = (mask << 1) | (mask >> 12 & 1)  # bit 0 stands for the ace played low
    runs = m & (m >> 1) & (m >> 2) & (m >> 3) & (m >> 4)
    if not runs:
        return -1
    return runs.bit_length() + 2  # bit i of runs = straight whose low card is bit i of m


_STRAIGHT_HIGH: Final[tuple[int, ...]] = tuple(_straight_high(m) for m in range(1 << 13))
_DESC_RANKS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(r for r in range(12, -1, -1) if m >> r & 1) for m in range(1 << 13)
)


def parse_card(card: str) -> tuple[int, int]:
    """(rank index 0..12, suit index 0..3) of a card such as ``"As"``; RuleError if invalid."""
    try:
        return _CARDS[card]
    except KeyError:
        raise RuleError(f"not a card: {card!r}") from None


def _ranks_and_suits(cards: Sequence[str]) -> tuple[list[int], list[int]]:
    """Per-rank counts and per-suit rank masks; rejects bad, duplicate or too few/many cards."""
    if not 5 <= len(cards) <= 7:
        raise RuleError(f"need 5 to 7 cards, got {len(cards)}")
    counts = [0] * 13
    suit_masks = [0, 0, 0, 0]
    for card in cards:
        rank, suit = parse_card(card)
        bit = 1 << rank
        if suit_masks[suit] & bit:
            raise RuleError(f"duplicate card: {card}")
        suit_masks[suit] |= bit
        counts[rank] += 1
    return counts, suit_masks


def evaluate(cards: Sequence[str]) -> HandRank:
    """Rank of the best five-card hand among 5..7 cards; compare ranks with ``<``/``==``."""
    counts, suit_masks = _ranks_and_suits(cards)
    flush_mask = 0
    for sm in suit_masks:
        if sm.bit_count() >= 5:
            flush_mask = sm
            high = _STRAIGHT_HIGH[sm]
            if high >= 0:
                return (STRAIGHT_FLUSH, high + 2)
            break
    quads, trips, pairs, singles = _groups(counts)
    if quads:
        q = quads[0]
        return (FOUR_OF_A_KIND, q, max(r + 2 for r in range(13) if counts[r] and r + 2 != q))
    if trips and (len(trips) > 1 or pairs):
        second = max(trips[1] if len(trips) > 1 else 0, pairs[0] if pairs else 0)
        return (FULL_HOUSE, trips[0], second)
    if flush_mask:
        return (FLUSH, *(r + 2 for r in _DESC_RANKS[flush_mask][:5]))
    rank_mask = 0
    for r in range(13):
        if counts[r]:
            rank_mask |= 1 << r
    high = _STRAIGHT_HIGH[rank_mask]
    if high >= 0:
        return (STRAIGHT, high + 2)
    return _by_groups(trips, pairs, singles)


def _groups(counts: list[int]) -> tuple[list[int], list[int], list[int], list[int]]:
    """The rank values (2..14, highest first) held four, three, two times and once."""
    quads: list[int] = []
    trips: list[int] = []
    pairs: list[int] = []
    singles: list[int] = []
    for r in range(12, -1, -1):
        n = counts[r]
        if n == 4:
            quads.append(r + 2)
        elif n == 3:
            trips.append(r + 2)
        elif n == 2:
            pairs.append(r + 2)
        elif n == 1:
            singles.append(r + 2)
    return quads, trips, pairs, singles


def _by_groups(trips: list[int], pairs: list[int], singles: list[int]) -> HandRank:
    """Three of a kind, two pair, one pair or high card (no flush, straight or better)."""
    if trips:
        return (THREE_OF_A_KIND, trips[0], *singles[:2])
    if len(pairs) >= 2:
        kicker = max(pairs[2] if len(pairs) > 2 else 0, singles[0] if singles else 0)
        return (TWO_PAIR, pairs[0], pairs[1], kicker)
    if pairs:
        return (ONE_PAIR, pairs[0], *singles[:3])
    return (HIGH_CARD, *singles[:5])


def _rank_sequence(rank: HandRank) -> list[int]:
    """The five rank values (2..14, ace low as 1 in a wheel) a hand rank stands for."""
    cat = rank[0]
    if cat in (STRAIGHT, STRAIGHT_FLUSH):
        top = rank[1]
        return [top - i if top - i >= 2 else 14 for i in range(5)]
    if cat == FOUR_OF_A_KIND:
        return [rank[1]] * 4 + [rank[2]]
    if cat == FULL_HOUSE:
        return [rank[1]] * 3 + [rank[2]] * 2
    if cat == THREE_OF_A_KIND:
        return [rank[1]] * 3 + list(rank[2:])
    if cat == TWO_PAIR:
        return [rank[1]] * 2 + [rank[2]] * 2 + [rank[3]]
    if cat == ONE_PAIR:
        return [rank[1]] * 2 + list(rank[2:])
    return list(rank[1:])


def best_five(cards: Sequence[str]) -> tuple[str, ...]:
    """The five cards making the best hand, most significant first (input order breaks ties)."""
    rank = evaluate(cards)
    pool = list(cards)
    if rank[0] in (FLUSH, STRAIGHT_FLUSH):
        suit_counts = [0, 0, 0, 0]
        for c in pool:
            suit_counts[_CARDS[c][1]] += 1
        suit = suit_counts.index(max(suit_counts))
        pool = [c for c in pool if _CARDS[c][1] == suit]
    chosen: list[str] = []
    for value in _rank_sequence(rank):
        for c in pool:
            if _CARDS[c][0] + 2 == value and c not in chosen:
                chosen.append(c)
                break
    return tuple(chosen)


def describe(rank: HandRank) -> str:
    """Dealer's reading of a hand rank, e.g. ``"straight, nine high"``."""
    cat = rank[0]

    def name(v: int) -> str:
        return _NAMES[v - 2]

    def plural(v: int) -> str:
        return _PLURALS[v - 2]

    if cat == STRAIGHT_FLUSH:
        return "royal flush" if rank[1] == 14 else f"straight flush, {name(rank[1])} high"
    if cat == FOUR_OF_A_KIND:
        return f"four of a kind, {plural(rank[1])}"
    if cat == FULL_HOUSE:
        return f"full house, {plural(rank[1])} full of {plural(rank[2])}"
    if cat == FLUSH:
        return f"flush, {name(rank[1])} high"
    if cat == STRAIGHT:
        return f"straight, {name(rank[1])} high"
    if cat == THREE_OF_A_KIND:
        return f"three of a kind, {plural(rank[1])}"
    if cat == TWO_PAIR:
        return f"two pair, {plural(rank[1])} and {plural(rank[2])}"
    if cat == ONE_PAIR:
        return f"pair of {plural(rank[1])}"
    if cat == HIGH_CARD:
        return f"high card, {name(rank[1])}"
    raise RuleError(f"not a hand rank: {rank!r}")
