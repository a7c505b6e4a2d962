"""Hand ranks for whole arrays of hands at once: lookup tables filled by phevaluator.

phevaluator (PokerHandEvaluator) ranks every 5- to 7-card hand on one scale, 1 (a royal
flush) to 7462 (seven high), smaller is better. Called once per hand from Python it costs
about half a microsecond plus the call; an equity needs hundreds of thousands of hands,
so this module asks it once, at start, for every hand that can differ, and keeps the
answers in two numpy tables:

- a hand without a flush is ranked by its multiset of ranks alone: the key
  ``sum(5 ** rank)`` is unique (a rank occurs at most four times), and the table holds
  the rank of every multiset of 5, 6 or 7 cards (73,775 keys, sorted, searched with
  `numpy.searchsorted`); for two hole cards and a five-card board, a second table
  (6,175 board multisets x 91 hole multisets) gives it with one index per hand;
- a hand with five or more cards of one suit is a flush or a straight flush, which no
  other hand of seven cards can beat (quads or a full house with five suited cards would
  need eight cards): it is ranked by the 13-bit mask of that suit's ranks (8,192 entries).

Cards are numbered as phevaluator numbers them: ``rank * 4 + suit`` with ranks
``23456789TJQKA`` and suits ``cdhs``.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Final

import numpy as np
import numpy.typing as npt
from phevaluator import evaluate_cards

from kernel.errors import TableError

RANKS: Final = "23456789TJQKA"
SUITS: Final = "cdhs"
DECK: Final[tuple[str, ...]] = tuple(r + s for r in RANKS for s in SUITS)
CARD_ID: Final[dict[str, int]] = {card: i for i, card in enumerate(DECK)}
WORST: Final = 7463  # worse than any real rank (phevaluator's worst is 7462)

IntArray = npt.NDArray[np.int64]

#: 5 ** rank, the weight of one card of that rank in a multiset key.
POW5: Final[IntArray] = np.array([5**r for r in range(13)], dtype=np.int64)


class EvaluatorError(TableError):
    """A card name or a hand the evaluator cannot rank."""


def card_id(card: str) -> int:
    """The number of a card such as ``"Td"``."""
    try:
        return CARD_ID[card]
    except KeyError:
        raise EvaluatorError(f"not a card: {card!r}") from None


class Tables:
    """The two lookup tables (built once per process, see `tables()`)."""

    def __init__(self) -> None:
        keys: list[int] = []
        values: list[int] = []
        pow5 = [5**r for r in range(13)]
        for size in (5, 6, 7):
            for multiset in itertools.combinations_with_replacement(range(13), size):
                key = 0
                for r in multiset:
                    key += pow5[r]
                if any(multiset[i] == multiset[i + 4] for i in range(size - 4)):
                    continue  # five of a rank
                # Suits dealt round robin over the sorted ranks: equal ranks get different
                # suits and no suit gets five cards, so phevaluator sees no flush.
                keys.append(key)
                values.append(evaluate_cards(*(r * 4 + i % 4 for i, r in enumerate(multiset))))
        order = np.argsort(np.array(keys, dtype=np.int64))
        self.keys: IntArray = np.array(keys, dtype=np.int64)[order]
        self.values: IntArray = np.array(values, dtype=np.int64)[order]
        # Hold'em's case, two hole cards and a five-card board, as one 2-D table: the
        # rank without a flush of (board multiset, hole multiset); one gather per hand.
        self.board_keys: IntArray = _multiset_keys(5)
        self.hole_keys: IntArray = _multiset_keys(2)
        combined = self.board_keys[:, None] + self.hole_keys[None, :]
        at = np.minimum(np.searchsorted(self.keys, combined), len(self.keys) - 1)
        self.pairs: IntArray = np.where(self.keys[at] == combined, self.values[at], WORST)
        flush = np.full(1 << 13, WORST, dtype=np.int64)
        for mask in range(1 << 13):
            count = mask.bit_count()
            if count < 5:
                continue
            ranks = [r for r in range(13) if mask >> r & 1]
            best = WORST
            # phevaluator ranks 5..7 cards; a mask of more ranks cannot occur in 7 cards
            if count <= 7:
                best = evaluate_cards(*(r * 4 + 3 for r in ranks))
            flush[mask] = best
        self.flush: IntArray = flush

    def nonflush(self, keys: IntArray) -> IntArray:
        """Ranks of hands with no flush, from their multiset keys."""
        found: IntArray = self.values[np.searchsorted(self.keys, keys)]
        return found


def _multiset_keys(size: int) -> IntArray:
    """The sorted keys of every multiset of `size` ranks (no rank more than four times)."""
    keys = {
        sum(5**r for r in multiset)
        for multiset in itertools.combinations_with_replacement(range(13), size)
        if all(multiset.count(r) <= 4 for r in multiset)
    }
    return np.array(sorted(keys), dtype=np.int64)


@lru_cache(maxsize=1)
def tables() -> Tables:
    """The lookup tables of this process (about 0.2 s to build, once)."""
    return Tables()


def rank_cards(cards: list[str]) -> int:
    """The rank of one hand of 5 to 7 cards (1 is best), through the tables."""
    ids = np.array([card_id(c) for c in cards], dtype=np.int64)
    if not 5 <= len(ids) <= 7 or len(set(cards)) != len(cards):
        raise EvaluatorError(f"need 5 to 7 different cards, got {cards}")
    return int(rank_arrays(ids[None, :])[0])


def rank_arrays(ids: IntArray) -> IntArray:
    """Ranks of many hands: `ids` has shape (..., k) with 5 <= k <= 7 card numbers."""
    t = tables()
    ranks = ids >> 2
    suits = ids & 3
    keys = POW5[ranks].sum(axis=-1)
    result = t.nonflush(keys)
    bits = np.left_shift(np.int64(1), ranks)
    for suit in range(4):
        in_suit = suits == suit
        flushed = in_suit.sum(axis=-1) >= 5
        if flushed.any():
            masks = np.where(in_suit, bits, 0).sum(axis=-1)
            result = np.where(flushed, t.flush[masks], result)
    return result
