"""Equities and outs of the live hands: exact enumeration, or Monte Carlo pre-flop.

- **Exact** whenever two or fewer board cards remain (flop, turn, river): every runout
  of the cards still unseen is dealt, every hand ranked (`broadcast.evaluator`).
- **Monte Carlo** otherwise (pre-flop): random runouts, `CHUNK` at a time, until the
  95 % error of every hand (1.96 standard errors, from the sample variance) is at most
  `MC_ERROR_POINTS` percentage points, and never more than `MC_BOARDS` runouts: a
  hand's share of a pot lies in [0, 1], so its variance is at most 1/4 and
  1.96 * sqrt(1/4 / n) <= 0.005 for n >= 38,415 whatever the hands. The error reached
  is returned with each equity.
- **True outs**: cards known to be out of play (mucked hands, exposed or burned cards the
  TV service saw) can be given as `dead`: they are then never dealt in a runout.

An equity is a hand's expected share of the pot: a board it wins counts 1, a board it
splits with k - 1 others counts 1/k. The equities of the live hands add up to 100.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from broadcast.evaluator import DECK, POW5, EvaluatorError, IntArray, card_id, tables

FloatArray = npt.NDArray[np.float64]

#: 95 % two-sided normal quantile.
Z95: Final = 1.959964
#: The largest error a pre-flop equity may have, in percentage points, at 95 %.
MC_ERROR_POINTS: Final = 0.5
#: Random runouts pre-flop: the worst case variance (1/4) meets MC_ERROR_POINTS.
MC_BOARDS: Final = math.ceil((Z95 * 0.5 / (MC_ERROR_POINTS / 100)) ** 2)
#: Runouts are ranked this many at a time (bounded memory; the Monte Carlo's step).
CHUNK: Final = 4096
#: Enumerate exactly when at most this many board cards are still to come.
EXACT_REMAINING: Final = 2


@dataclass(frozen=True, slots=True)
class Situation:
    """What an equity is computed from: live hands, the board, cards out of play."""

    hands: tuple[tuple[int, tuple[str, ...]], ...]  # (seat, hole cards), seats ascending
    board: tuple[str, ...] = ()
    dead: tuple[str, ...] = ()  # known out of play (true outs), sorted

    @classmethod
    def of(
        cls,
        hands: Mapping[int, Sequence[str]],
        board: Sequence[str] = (),
        dead: Iterable[str] = (),
    ) -> Situation:
        """A normalised situation (seats and dead cards sorted; dead cards in play dropped)."""
        in_play = {c for cards in hands.values() for c in cards} | set(board)
        return cls(
            hands=tuple((seat, tuple(cards)) for seat, cards in sorted(hands.items())),
            board=tuple(board),
            dead=tuple(sorted(set(dead) - in_play)),
        )

    def seed(self) -> int:
        """A seed derived from the situation: the same situation, the same estimate."""
        return zlib.crc32(repr((self.hands, self.board, self.dead)).encode())


@dataclass(frozen=True, slots=True)
class Equity:
    """The equity of every live hand (percentage points), how it was found, and outs."""

    method: str  # "exact" or "monte-carlo"
    boards: int  # runouts dealt
    equity: dict[int, float]  # seat -> expected share of the pot, 0..100
    error: dict[int, float]  # seat -> 95 % half-width in points (0.0 when exact)
    outs: dict[int, tuple[str, ...]] = field(default_factory=dict)  # heads-up, flop/turn

    def rounded(self, digits: int = 1) -> dict[int, float]:
        """Equities rounded so that they still add up to exactly 100 (largest remainder)."""
        return round_to_total(self.equity, 100.0, digits)


def round_to_total(values: dict[int, float], total: float, digits: int) -> dict[int, float]:
    """Round each value to `digits` decimals keeping their sum at `total`."""
    if not values:
        return {}
    unit = 10**digits
    scaled = {k: v * unit for k, v in values.items()}
    floors = {k: math.floor(v) for k, v in scaled.items()}
    missing = round(total * unit) - sum(floors.values())
    order = sorted(scaled, key=lambda k: (floors[k] - scaled[k], k))
    for k in order[: max(missing, 0)]:
        floors[k] += 1
    return {k: floors[k] / unit for k in values}


def _check(situation: Situation) -> tuple[list[int], IntArray, IntArray, IntArray]:
    """Seats, card numbers of the hands (H, 2), of the board, and of the cards left."""
    seen: set[str] = set()
    for card in [*(c for _s, cards in situation.hands for c in cards), *situation.board]:
        if card in seen:
            raise EvaluatorError(f"card {card} is in two places")
        seen.add(card)
    if len(situation.hands) < 2:
        raise EvaluatorError("an equity needs at least two live hands")
    if any(len(cards) != 2 for _s, cards in situation.hands):
        raise EvaluatorError("hold'em hands have two hole cards")
    if len(situation.board) > 5:
        raise EvaluatorError(f"a board has at most five cards, got {len(situation.board)}")
    hands = np.array([[card_id(c) for c in cards] for _s, cards in situation.hands])
    board = np.array([card_id(c) for c in situation.board], dtype=np.int64)
    gone = seen | set(situation.dead)
    pool = np.array([card_id(c) for c in DECK if c not in gone], dtype=np.int64)
    need = 5 - len(situation.board)
    if len(pool) < need:
        raise EvaluatorError("not enough cards left to complete the board")
    return [s for s, _c in situation.hands], hands.astype(np.int64), board, pool


class _Parts:
    """Per-hand and per-board partial sums: multiset key, suit counts, suit rank masks."""

    def __init__(self, ids: IntArray) -> None:
        # ids: (N, k) card numbers -> key (N,), counts (N, 4), masks (N, 4)
        self.size = ids.shape[-1]
        ranks = ids >> 2
        suits = ids & 3
        self.key: IntArray = POW5[ranks].sum(axis=-1)
        onehot = suits[..., None] == np.arange(4)
        self.count: IntArray = onehot.sum(axis=-2).astype(np.int64)
        bits = np.left_shift(np.int64(1), ranks)[..., None]
        self.mask: IntArray = np.where(onehot, bits, 0).sum(axis=-2).astype(np.int64)


def _ranks(hands: _Parts, boards: _Parts) -> IntArray:
    """Ranks (B, H) of every hand on every board (1 is best)."""
    t = tables()
    if hands.size == 2 and boards.size == 5:
        board_at = np.searchsorted(t.board_keys, boards.key)
        hole_at = np.searchsorted(t.hole_keys, hands.key)
        result: IntArray = t.pairs[board_at[:, None], hole_at[None, :]]
    else:
        result = t.nonflush(boards.key[:, None] + hands.key[None, :])
    # Five suited cards: with two hole cards, only boards with three of a suit qualify.
    suited = boards.count.max(axis=1) >= 5 - hands.size
    rows = np.flatnonzero(suited)
    if len(rows) == 0:
        return result
    counts = boards.count[rows, None, :] + hands.count[None, :, :]
    flush_suit = counts.argmax(axis=-1)
    flushed = np.take_along_axis(counts, flush_suit[..., None], axis=-1)[..., 0] >= 5
    if flushed.any():
        masks = boards.mask[rows, None, :] | hands.mask[None, :, :]
        suit_mask = np.take_along_axis(masks, flush_suit[..., None], axis=-1)[..., 0]
        result[rows] = np.where(flushed, t.flush[suit_mask], result[rows])
    return result


def _shares(ranks: IntArray) -> FloatArray:
    """Each hand's share of the pot on each board (B, H): 1/k to each of k best hands."""
    best = ranks.min(axis=1, keepdims=True)
    winners = ranks == best
    share: FloatArray = winners / winners.sum(axis=1, keepdims=True)
    return share


def compute(
    situation: Situation,
    *,
    boards: int = MC_BOARDS,
    seed: int | None = None,
    exact: bool | None = None,
    adaptive: bool = True,
) -> Equity:
    """The equity of every hand of `situation`.

    Exact if at most two cards are to come (or `exact` is True). Otherwise random
    runouts (seeded by the situation), `CHUNK` at a time: with `adaptive`, until the 95 %
    error of every hand is at most `MC_ERROR_POINTS`, and never more than `boards`
    (whose default meets that error whatever the hands).
    """
    seats, hand_ids, board_ids, pool = _check(situation)
    need = 5 - len(board_ids)
    hands = _Parts(hand_ids)
    total = np.zeros(len(seats))
    total_sq = np.zeros(len(seats))
    if exact if exact is not None else need <= EXACT_REMAINING:
        method = "exact"
        runouts = np.array(list(itertools.combinations(pool, need)), dtype=np.int64)
        runouts = runouts.reshape(len(runouts), need)
        chunks: Iterable[IntArray] = (runouts[i : i + CHUNK] for i in range(0, len(runouts), CHUNK))
    else:
        method = "monte-carlo"
        rng = np.random.default_rng(situation.seed() if seed is None else seed)
        chunks = (_sample(rng, pool, need, min(CHUNK, boards - i)) for i in range(0, boards, CHUNK))
    count = 0
    for chunk in chunks:
        full = np.concatenate([np.broadcast_to(board_ids, (len(chunk), len(board_ids))), chunk], 1)
        share = _shares(_ranks(hands, _Parts(full)))
        total += share.sum(axis=0)
        total_sq += (share * share).sum(axis=0)
        count += len(chunk)
        adequate = adaptive and max(_half_widths(total, total_sq, count)) <= MC_ERROR_POINTS
        if method == "monte-carlo" and adequate:
            break
    mean = total / count
    equity = {seat: float(100 * m) for seat, m in zip(seats, mean, strict=True)}
    error = dict.fromkeys(seats, 0.0)
    if method == "monte-carlo":
        error = dict(zip(seats, _half_widths(total, total_sq, count), strict=True))
    outs: dict[int, tuple[str, ...]] = {}
    if len(seats) == 2 and len(board_ids) in (3, 4):
        outs = _outs(seats, hands, board_ids, pool)
    return Equity(method=method, boards=count, equity=equity, error=error, outs=outs)


def _half_widths(total: FloatArray, total_sq: FloatArray, count: int) -> list[float]:
    """The 95 % half-width of each hand's mean share, in percentage points."""
    mean = total / count
    variance = np.maximum(total_sq / count - mean * mean, 0.0)
    return [float(h) for h in 100 * Z95 * np.sqrt(variance / count)]


def _sample(rng: np.random.Generator, pool: IntArray, need: int, n: int) -> IntArray:
    """`n` runouts of `need` different cards from `pool`."""
    # A partial Fisher-Yates shuffle of every row at once: `need` swaps per runout.
    m = len(pool)
    perm = np.tile(np.arange(m), (n, 1))
    rows = np.arange(n)
    for j in range(need):
        k = rng.integers(j, m, size=n)
        perm[rows, j], perm[rows, k] = perm[rows, k], perm[rows, j].copy()
    drawn: IntArray = pool[perm[:, :need]]
    return drawn


def _outs(
    seats: list[int], hands: _Parts, board_ids: IntArray, pool: IntArray
) -> dict[int, tuple[str, ...]]:
    """Heads-up: the next cards that put the hand behind strictly ahead."""
    now = _ranks(hands, _Parts(board_ids[None, :]))[0]
    if now[0] == now[1]:
        return {}
    behind = 0 if now[0] > now[1] else 1
    boards = np.concatenate(
        [np.broadcast_to(board_ids, (len(pool), len(board_ids))), pool[:, None]], 1
    )
    after = _ranks(hands, _Parts(boards))
    wins = after[:, behind] < after[:, 1 - behind]
    return {seats[behind]: tuple(DECK[int(c)] for c in pool[wins])}


__all__ = [
    "MC_BOARDS",
    "MC_ERROR_POINTS",
    "Equity",
    "Situation",
    "compute",
    "round_to_total",
]
