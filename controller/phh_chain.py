"""The signed chain in a PHH file, and when each hole card became readable (a hook after
controller/phh.py builds the file; the builder itself is untouched).

A hand's file gains, as PHH user fields (`_` first, which PHH readers keep and ignore):

- `_chain_prev`: the events chain before the hand's first event; `_chain_head`: the chain of
  its last (`hand_completed`); `_chain_signature` and `_chain_key`: the table's signature of
  that head and the id of its key; `_chain_public_key`: the key itself (base64 PEM), so the
  file can be checked alone (`tablectl verify FILE --config` checks it against the
  registered key instead);
- `_events`: the hand's events exactly as published (each a JSON text), so that
  `tablectl verify` can recompute the chain to the signed head and check that the hand
  history is what they say;
- `_holecards_readable`: per player (PHH order), for each of its hole cards, the trace time
  the table released a key that opens it (nothing: an empty list); `_holecards_read`: when
  each was read; `_holecards_readable_by`: the identity the keys went to.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from controller.phh import PhhHand


def _toml(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return repr(round(value, 6))
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def with_chain(
    phh: PhhHand,
    events: Sequence[dict[str, Any]],
    *,
    prev: str | None,
    readable: Mapping[int, list[tuple[float, float]]] | None = None,
    public_pem: str | None = None,
) -> PhhHand:
    """`phh` with the chain fields of its `events` (the hand's events in seq order, as
    published) and when its seats' hole cards were read and became readable (seat ->
    [(read, readable)] per card: `per_card`)."""
    if phh.text is None or not events or prev is None:
        return phh
    last = events[-1]
    signature = last.get("signature")
    if not isinstance(last.get("chain"), str) or not isinstance(signature, dict):
        return phh
    fields: list[tuple[str, Any]] = [
        ("_chain_prev", prev),
        ("_chain_head", last["chain"]),
        ("_chain_signature", str(signature.get("sig"))),
        ("_chain_key", str(signature.get("key"))),
    ]
    if public_pem is not None:
        fields.append(("_chain_public_key", base64.b64encode(public_pem.encode()).decode()))
    fields.append(
        ("_events", [json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in events])
    )
    if readable is not None:
        cards = [readable.get(seat, []) for seat in phh.seats]
        fields += [
            ("_holecards_read", [[read for read, _ in c] for c in cards]),
            ("_holecards_readable", [[when for _, when in c] for c in cards]),
            ("_holecards_readable_by", "tv"),
        ]
    text = phh.text + "".join(f"{key} = {_toml(value)}\n" for key, value in fields)
    return dataclasses.replace(phh, text=text)


def per_card(notices: Sequence[dict[str, Any]], hand: int) -> dict[int, list[tuple[float, float]]]:
    """Per seat of `hand`, for its 1st, 2nd ... hole card: (read, readable), from the release
    notices (a card is readable from the first release of a message holding that many cards;
    the cards of a re-deal after a misdeal count from their own reads)."""
    out: dict[int, list[tuple[float, float]]] = {}
    ordered = sorted(
        (n for n in notices if n.get("hand") == hand), key=lambda n: (float(n["t"]), n["seq"])
    )
    for notice in ordered:
        times = out.setdefault(int(notice["seat"]), [])
        count = int(notice.get("count", 1))
        while len(times) < count:
            times.append((float(notice["read_t"]), float(notice["t"])))
    return out
