"""Sealed hole cards and their key releases: what the shell does to the engine's messages.

The engine keeps making its `holecards` messages with the cards in the clear and its
`events` as ever (it is pure: no key, no clock). On their way out of the daemon, before
they are journaled, the shell (`TableSeal.outgoing`):

- **seals** each `holecards` message: its cards encrypted with a fresh 256-bit key
  (ChaCha20-Poly1305, authenticated; the table, hand, seat and hole-card `seq` are bound
  in as associated data), a per-table hole-card `seq` added; the key goes to the journal
  beside the sealed payload (`out` record field `key`), never anywhere else yet;
- **chains** each `events` payload (controller/chain.py) and signs the chain at every
  `hand_completed`;
- **releases** a key once the broadcast may show its cards: `delay` seconds after the
  read, or once the hand is over (`at_hand_end`), the later of the two when both apply
  ([seal] in the table file). A release is two messages, journaled before they are
  published: `holekeys` (the key, for the TV identity only) and `released` (the public
  notice without the key: which seat's cards, read when, readable from when, by whom).

Releases are made exactly once: a journaled release is never made again, and a restart
finds the ones still owed in the journal (`restore`), keys included, and makes them when
due (the daemon's loop wakes for `next_due`).
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from controller.chain import GENESIS, EventChain, Signer, load_signer, read_chain
from controller.config import Config
from kernel.errors import ConfigError, TableError
from kernel.messages import ALERTS, EVENTS, HOLECARDS, HOLEKEYS, RELEASED, Message

#: The identity a released key is meant for (the broker ACL lets only it read `holekeys`).
READER = "tv"
ALG = "chacha20-poly1305"
KEY_BYTES = 32
NONCE_BYTES = 12
#: Fields the shell adds to a `holecards` payload (the clear `cards` go).
SEALED_FIELDS = ("seq", "first", "count", "alg", "sealed", "delay", "at_hand_end")


class SealError(TableError):
    """A sealed hole card that does not open with the key given (wrong key, altered)."""


def aad(table: str, hand: int, seat: int, seq: int) -> bytes:
    """The associated data a sealed message is bound to: it opens nowhere else."""
    return f"tablectl-holecards v1|{table}|{hand}|{seat}|{seq}".encode()


def seal_cards(
    cards: Sequence[str],
    bound: bytes,
    *,
    key: bytes | None = None,
    nonce: bytes | None = None,
) -> tuple[bytes, str]:
    """(key, sealed): the cards as compact JSON, encrypted and authenticated under a fresh
    key; `sealed` is base64 of nonce || ciphertext."""
    key = key if key is not None else ChaCha20Poly1305.generate_key()
    nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
    plain = json.dumps(list(cards), separators=(",", ":")).encode()
    box = ChaCha20Poly1305(key).encrypt(nonce, plain, bound)
    return key, base64.b64encode(nonce + box).decode()


def open_sealed(payload: dict[str, Any], key: str | bytes) -> list[str]:
    """The cards of a sealed `holecards` payload, with its key (base64 or raw); SealError
    when the key is not the one, or anything in it (cards, table, hand, seat, seq) changed."""
    try:
        raw_key = base64.b64decode(key, validate=True) if isinstance(key, str) else key
        blob = base64.b64decode(str(payload["sealed"]), validate=True)
        bound = aad(
            str(payload["table"]), int(payload["hand"]), int(payload["seat"]), int(payload["seq"])
        )
        plain = ChaCha20Poly1305(raw_key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], bound)
        cards = json.loads(plain)
    except (InvalidTag, ValueError, KeyError, TypeError) as exc:
        raise SealError(f"hole cards seq {payload.get('seq')!r} do not open with this key") from exc
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise SealError(f"hole cards seq {payload.get('seq')!r}: not a list of cards")
    return cards


def is_sealed(payload: dict[str, Any]) -> bool:
    """A `holecards` payload as the table publishes it now (no clear `cards`)."""
    return "sealed" in payload and "cards" not in payload


@dataclass(frozen=True, slots=True)
class ReleasePolicy:
    """[seal]: when a key may go. `delay`: seconds after the read; `at_hand_end`: not before
    the hand is over (both: the later)."""

    delay: float = 30.0
    at_hand_end: bool = False


@dataclass(slots=True)
class Pending:
    """A sealed message whose key is not released yet."""

    seq: int
    hand: int
    seat: int
    read_t: float
    key: str  # base64
    count: int  # cards sealed
    delay: float
    at_hand_end: bool
    due: float | None  # None: waits for the hand's end

    def as_dict(self) -> dict[str, Any]:
        """For the journal's seal record (a segment's start)."""
        return {
            "seq": self.seq,
            "hand": self.hand,
            "seat": self.seat,
            "read_t": self.read_t,
            "key": self.key,
            "count": self.count,
            "delay": self.delay,
            "at_hand_end": self.at_hand_end,
            "due": self.due,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pending:
        """The inverse of `as_dict`."""
        due = data.get("due")
        return cls(
            seq=int(data["seq"]),
            hand=int(data["hand"]),
            seat=int(data["seat"]),
            read_t=float(data["read_t"]),
            key=str(data["key"]),
            count=int(data.get("count", 0)),
            delay=float(data["delay"]),
            at_hand_end=bool(data["at_hand_end"]),
            due=None if due is None else float(due),
        )


@dataclass(frozen=True, slots=True)
class Record:
    """A message on its way out, as the journal records it: its `src` ("engine" or
    "daemon"), the key of a sealed message (journal only), and whether the journal
    chain is signed right after it (a hand is over)."""

    src: str
    message: Message
    key: str | None = None
    sign: bool = False


@dataclass(slots=True)
class _State:
    hseq: int = 0
    chain: bytes = GENESIS
    first: dict[int, int] = field(default_factory=dict)  # hand -> its first hole-card seq
    ended: int = 0  # the last hand known to be over
    pending: dict[int, Pending] = field(default_factory=dict)  # seq -> pending release


class TableSeal:
    """The shell's hole-card seals, key releases and events chain for one table."""

    def __init__(
        self,
        table: str,
        policy: ReleasePolicy,
        signer: Signer | None = None,
        *,
        new_key: Callable[[], bytes] = ChaCha20Poly1305.generate_key,
    ) -> None:
        self.table = table
        self.policy = policy
        self.signer = signer
        self._new_key = new_key
        self._s = _State()
        self._chain = EventChain(GENESIS, signer)
        self._status: dict[str, Any] = {"holecards_seq": 0, "holecards_first": None}
        self.released = 0  # releases made since start

    # ------------------------------------------------------------------ reading the state

    @property
    def hseq(self) -> int:
        """The last hole-card seq used."""
        return self._s.hseq

    @property
    def chain_head(self) -> bytes:
        """The events chain after the last event."""
        return self._chain.head

    def pending(self) -> list[Pending]:
        """The releases still owed, in seq order."""
        return [self._s.pending[s] for s in sorted(self._s.pending)]

    def next_due(self) -> float | None:
        """When the next release is due (trace time); None: none is (or only at a hand's end)."""
        dues = [p.due for p in self._s.pending.values() if p.due is not None]
        return min(dues) if dues else None

    def last_due(self) -> float | None:
        """When the last release owed with a time is due (the sim waits for it)."""
        dues = [p.due for p in self._s.pending.values() if p.due is not None]
        return max(dues) if dues else None

    def is_pending(self, seq: int) -> Pending | None:
        """The pending release of hole-card `seq`, if it is owed."""
        return self._s.pending.get(seq)

    def status_fields(self) -> dict[str, Any]:
        """What `status` tells about hole cards: the last hole-card seq published (TV asks
        for a tail it missed) and the first of the hand in progress (None between hands: a
        TV that starts mid-hand asks for the hand's cards from there). Read from the
        publisher's thread: a copy made by the loop's."""
        return dict(self._status)

    def _refresh_status(self) -> None:
        s = self._s
        current = max(s.first, default=None)
        first = s.first[current] if current is not None and current > s.ended else None
        self._status = {"holecards_seq": s.hseq, "holecards_first": first}

    # ------------------------------------------------------------------ the outgoing path

    def outgoing(self, src: str, messages: Iterable[Message], now: float) -> list[Record]:
        """The records of `messages` (made by `src`) as they are journaled and published:
        hole cards sealed, events chained (and signed at a hand's end), then every key
        release due at `now` (a hand that ended, a delay of 0)."""
        out: list[Record] = []
        for message in messages:
            if message.topic == HOLECARDS and "cards" in message.payload:
                out.append(self._seal(src, message))
            elif message.topic == EVENTS and isinstance(message.payload.get("seq"), int):
                out.append(self._extend(src, message, now))
            else:
                out.append(Record(src, message))
        out += self.due(now)
        return out

    def _seal(self, src: str, message: Message) -> Record:
        p = message.payload
        s = self._s
        s.hseq += 1
        seq = s.hseq
        hand, seat = int(p["hand"]), int(p["seat"])
        s.first.setdefault(hand, seq)
        for old in [h for h in s.first if h < hand - 8]:
            del s.first[old]
        cards = [str(c) for c in p.get("cards", [])]
        key, sealed = seal_cards(cards, aad(self.table, hand, seat, seq), key=self._new_key())
        payload: dict[str, Any] = {
            "table": p.get("table", self.table),
            "hand": hand,
            "seat": seat,
            "seq": seq,
            "first": s.first[hand],
            "count": len(cards),
            "alg": ALG,
            "sealed": sealed,
            "delay": self.policy.delay,
            "at_hand_end": self.policy.at_hand_end,
            "t": p.get("t", 0.0),
        }
        key_text = base64.b64encode(key).decode()
        self._owe(payload, key_text)
        self._refresh_status()
        return Record(src, Message(HOLECARDS, payload, message.qos, message.retain), key_text)

    def _owe(self, payload: dict[str, Any], key: str) -> None:
        """Remember the release a sealed payload is owed (its own policy, never weaker than
        this table's now)."""
        delay = max(float(payload.get("delay", 0.0)), self.policy.delay)
        at_end = bool(payload.get("at_hand_end")) or self.policy.at_hand_end
        read_t = float(payload.get("t", 0.0))
        hand = int(payload["hand"])
        due: float | None = round(read_t + delay, 6)  # trace time's precision (µs)
        if at_end and hand > self._s.ended:
            due = None
        seq = int(payload["seq"])
        count = int(payload.get("count", 0))
        self._s.pending[seq] = Pending(
            seq, hand, int(payload["seat"]), read_t, key, count, delay, at_end, due
        )

    def _extend(self, src: str, message: Message, now: float) -> Record:
        kind = message.payload.get("type")
        over = kind == "hand_completed"
        payload = self._chain.extend(message.payload, sign=over)
        hand = message.payload.get("hand")
        if isinstance(hand, int):
            if over:
                self._hand_over(hand, now)
            elif kind == "hand_started":
                self._hand_over(hand - 1, now)
        return Record(src, Message(EVENTS, payload, message.qos, message.retain), sign=over)

    def _hand_over(self, hand: int, now: float) -> None:
        """Every key held for the end of `hand` (or an earlier one) gets its time."""
        if hand <= self._s.ended:
            return
        self._s.ended = hand
        self._refresh_status()
        for p in self._s.pending.values():
            if p.due is None and p.hand <= hand:
                p.due = max(round(p.read_t + p.delay, 6), now)

    def due(self, now: float) -> list[Record]:
        """The releases due at `now`, in seq order (each taken once)."""
        ready = sorted(
            (p for p in self._s.pending.values() if p.due is not None and p.due <= now),
            key=lambda p: p.seq,
        )
        out: list[Record] = []
        for p in ready:
            del self._s.pending[p.seq]
            self.released += 1
            out += self._release(p, now)
        return out

    def _release(self, p: Pending, now: float) -> list[Record]:
        when = round(max(now, p.due if p.due is not None else now), 6)
        waited = p.at_hand_end and p.due is not None and p.due > p.read_t + p.delay + 1e-6
        rule = "hand_end" if waited else "delay"
        common = {
            "table": self.table,
            "hand": p.hand,
            "seat": p.seat,
            "seq": p.seq,
            "count": p.count,
        }
        keys = {**common, "key": p.key, "alg": ALG, "to": READER, "read_t": p.read_t, "t": when}
        notice = {
            **common,
            "to": READER,
            "read_t": p.read_t,
            "rule": rule,
            "delay": p.delay,
            "at_hand_end": p.at_hand_end,
            "t": when,
        }
        return [
            Record("daemon", Message(HOLEKEYS, keys)),
            Record("daemon", Message(RELEASED, notice)),
        ]

    # ------------------------------------------------------------------ early requests

    def refusal(self, seqs: Sequence[int], now: float) -> Message:
        """The alert for a key asked for before its release (TV asked early: refused)."""
        owed = [self._s.pending[s] for s in seqs if s in self._s.pending]
        text = (
            f"the TV identity asked for the key of hole cards seq "
            f"{', '.join(str(p.seq) for p in owed)} before the broadcast may show them: refused"
        )
        details: dict[str, Any] = {
            "table": self.table,
            "type": "holekey_refused",
            "severity": "critical",
            "message": text,
            "hand": owed[0].hand if owed else None,
            "t": now,
            "seqs": [p.seq for p in owed],
            "due": [p.due for p in owed],
        }
        return Message(ALERTS, details)

    # ------------------------------------------------------------------ journal state

    def snapshot(self) -> dict[str, Any]:
        """The state a new journal segment starts from (its `seal` record): keys owed
        included."""
        s = self._s
        return {
            "hseq": s.hseq,
            "chain": self._chain.head.hex(),
            "ended": s.ended,
            "first": {str(h): q for h, q in s.first.items()},
            "pending": [p.as_dict() for p in self.pending()],
        }

    def restore(self, snapshot: dict[str, Any] | None, outputs: Iterable[Any]) -> None:
        """Rebuild the state from a segment's `seal` record (None: the journal's first)
        and the `out` records after it (controller/journal.Output), in order."""
        self._s = _State()
        self._chain.head = GENESIS
        if snapshot:
            s = self._s
            s.hseq = int(snapshot.get("hseq", 0))
            s.ended = int(snapshot.get("ended", 0))
            s.first = {int(h): int(q) for h, q in dict(snapshot.get("first", {})).items()}
            chain = snapshot.get("chain")
            if isinstance(chain, str) and len(chain) == 64:
                self._chain.head = bytes.fromhex(chain)
            for item in snapshot.get("pending", []):
                p = Pending.from_dict(item)
                s.pending[p.seq] = p
        for output in outputs:
            self.observe(output.message, getattr(output, "key", None), float(output.t))
        self._refresh_status()

    def observe(self, message: Message, key: str | None, t: float) -> None:
        """Follow one journaled `out` record (recovery): the seq, chain and releases it
        shows."""
        p = message.payload
        s = self._s
        if message.topic == HOLECARDS and isinstance(p.get("seq"), int):
            seq = int(p["seq"])
            s.hseq = max(s.hseq, seq)
            s.first.setdefault(int(p["hand"]), int(p.get("first", seq)))
            if key is not None:
                self._owe(p, key)
        elif message.topic == HOLEKEYS and isinstance(p.get("seq"), int):
            s.pending.pop(int(p["seq"]), None)
        elif message.topic == EVENTS:
            head = read_chain(p)
            if head is not None:
                self._chain.head = head
            hand = p.get("hand")
            if isinstance(hand, int):
                event_t = float(p.get("t", t))
                if p.get("type") == "hand_completed":
                    self._hand_over(hand, event_t)
                elif p.get("type") == "hand_started":
                    self._hand_over(hand - 1, event_t)


def release_due(notice: dict[str, Any]) -> float:
    """The earliest time a release could rightly be made, from its notice or key message
    (its own read time and delay; a hand-end release is checked against the events)."""
    read_t = float(notice.get("read_t", math.inf))
    delay = float(notice.get("delay", 0.0))
    return read_t + delay


def table_seal(config: Config) -> TableSeal:
    """The seal of a configured table: its release policy and signing key ([seal])."""
    signer: Signer | None = None
    if config.seal.signing_key is not None:
        try:
            signer = load_signer(config.seal.signing_key)
        except TableError as exc:
            raise ConfigError(f"{config.path}: [seal] signing_key: {exc}") from None
    policy = ReleasePolicy(config.seal.delay, config.seal.at_hand_end)
    return TableSeal(config.table.id, policy, signer)
