"""Engine checkpoints: the table's state and the hand in progress (its `HandRecord`) as a plain
JSON-able dict, and its restore."""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from typing import Any

from controller.engine import hand_record, hands
from controller.engine.cards import CardMap
from controller.engine.engine import Engine
from controller.engine.hand import Hand
from controller.engine.positions import Positions
from controller.engine.state import Level, Staffer
from kernel.errors import CheckpointError

VERSION = 4
#: 2: holds, penalties, away, staff, dealer, floor, early chips; 3: answered request ids;
#: 4: the hand in progress (`hand`), the hole-card reads counted; the cards of the last
#: hand, the card that started a hand, the blinds missed on a break (only when there are)
KNOWN_VERSIONS = frozenset({2, 3, 4})


def _level(level: Level) -> dict[str, Any]:
    saved: dict[str, Any] = {
        "small_blind": level.small_blind,
        "big_blind": level.big_blind,
        "ante": level.ante,
        "bb_ante": level.bb_ante,
    }
    if level.event_heads_up:  # only when set: older checkpoints stay byte for byte
        saved["event_heads_up"] = True
    return saved


def checkpoint(engine: Engine) -> dict[str, Any]:
    """Everything the engine carries from one input to the next, as plain JSON values.

    Between hands, the table's state; during a hand, also the hand's record (`hand`). With
    the same registries and profile, `restore` of this dict into a fresh engine gives an
    engine that answers every later input exactly as this one does, `seq` and the next
    state publication included.
    """
    state: dict[str, Any] = {
        "version": VERSION,
        "table": engine.spec.table,
        "seat_count": engine.spec.seats,
        "t": engine.t,
        "seq": engine.seq,
        "hand_number": engine.hand_number,
        "seats": {
            str(n): {"player": seat.player, "stack": seat.stack, "new": seat.new, "away": seat.away}
            for n, seat in engine.seats.items()
        },
        "holds": dict(engine.holds),
        "offline": sorted(engine.offline),
        "penalties": {str(n): hands for n, hands in engine.penalties.items()},
        "staff": [[m.uid, m.name, m.role] for m in engine.staff_members()],
        "dealer": [engine.dealer.uid, engine.dealer.name, engine.dealer.role]
        if engine.dealer
        else None,
        "floor": [engine.floor[0].uid, engine.floor[0].name, engine.floor[0].role, engine.floor[1]]
        if engine.floor
        else None,
        "floor_called": engine.floor_called,
        "early_chips": {str(n): dict(zone) for n, zone in engine.early_chips.items() if zone},
        "level": _level(engine.level),
        "pending_level": _level(engine.pending_level) if engine.pending_level else None,
        "next_button": engine.next_button,
        "last_positions": (
            dataclasses.asdict(engine.last_positions) if engine.last_positions else None
        ),
        # Cards still read on the table (e.g. left over from the last hand): both orders
        # matter (antenna -> cards in arrival order, card -> antennas oldest first).
        "cards": {
            "contents": {a: list(c) for a, c in engine.cards.contents.items() if c},
            "at": {card: list(places) for card, places in engine.cards.at.items() if places},
        },
        # The last published state minus t/seq: the next state is published only if it
        # differs from this one, exactly as in the engine that was checkpointed.
        "last_state": engine._last_state,
        "answered": [[request, *answer] for request, answer in engine.answered.items()],
    }
    if engine.hand_for_hand:  # RP-8: only when on, so a checkpoint without it reads as before
        state["hand_for_hand"] = True
    if engine.chip_spots.at:
        # Chips still read in bet zones or the pot (a chip counted once, inputs/chips.py):
        # only when there are some, so that a checkpoint without them reads as before.
        state["chips"] = {
            "at": {chip: list(places) for chip, places in engine.chip_spots.at.items()},
            "values": dict(engine.chip_values),
        }
    _table_extras(engine, state)
    if engine.hand is not None:
        state["hand"] = {"record": hand_record.to_json(hand_record.record_of(engine.hand))}
    # A plain dict of JSON values: what the journal writes is what `restore` gets back.
    result: dict[str, Any] = json.loads(json.dumps(state))
    return result


def _table_extras(engine: Engine, state: dict[str, Any]) -> None:
    """Version 4's table keys, each only when it holds something (older ones read as none)."""
    if engine.last_hand_cards:  # a card of the hand just ended is no lift
        state["last_hand_cards"] = sorted(engine.last_hand_cards)
    if engine.lifted:  # the antenna of the card that started the hand
        state["lifted"] = engine.lifted
    # Hole-card changes so far: the dealing flow compares it with the count it last checked at.
    state["hole_reads"] = engine.hole_reads
    if engine.missed_blinds:  # a house break: blinds missed meanwhile
        state["missed_blinds"] = {
            str(n): [small, big] for n, (small, big) in engine.missed_blinds.items()
        }


def restore(engine: Engine, state: dict[str, Any]) -> None:
    """Put a checkpoint's state into `engine` (built for the same table; no hand in progress),
    the hand in progress too: its betting and dealing are wired as when a hand starts, then
    its record is loaded into them.

    Refuses (CheckpointError) an unknown `version`, another table or seat count, and a
    malformed dict.
    """
    version = state.get("version") if isinstance(state, dict) else None
    if version not in KNOWN_VERSIONS:
        raise CheckpointError(
            f"checkpoint version {version!r} is not one this engine knows "
            f"({', '.join(str(v) for v in sorted(KNOWN_VERSIONS))})"
        )
    if engine.hand is not None:
        raise CheckpointError("cannot restore a checkpoint into an engine with a hand in progress")
    if state.get("table") != engine.spec.table or state.get("seat_count") != engine.spec.seats:
        raise CheckpointError(
            f"checkpoint of table {state.get('table')!r} with {state.get('seat_count')} seats "
            f"does not fit table {engine.spec.table!r} with {engine.spec.seats} seats"
        )
    try:
        seats = state["seats"]
        if sorted(int(n) for n in seats) != sorted(engine.seats):
            raise CheckpointError(f"checkpoint seats {sorted(seats)} differ from the table's")
        players = {
            n: (
                seats[str(n)]["player"],
                int(seats[str(n)]["stack"]),
                bool(seats[str(n)]["new"]),
                bool(seats[str(n)]["away"]),
            )
            for n in engine.seats
        }
        holds = {str(k): str(v) for k, v in state["holds"].items()}
        offline = {str(d) for d in state["offline"]}
        penalties = {int(n): int(h) for n, h in state["penalties"].items()}
        staff = {str(u): Staffer(str(u), str(n), str(r)) for u, n, r in state["staff"]}
        dealer = Staffer(*map(str, state["dealer"])) if state["dealer"] else None
        floor = state["floor"]
        floor_at = (Staffer(*map(str, floor[:3])), float(floor[3])) if floor else None
        early = {
            int(n): {str(u): int(v) for u, v in zone.items()}
            for n, zone in state["early_chips"].items()
        }
        floor_called = bool(state["floor_called"])
        pending = state["pending_level"]
        positions = state["last_positions"]
        cards = CardMap(
            at={str(c): [str(a) for a in p] for c, p in state["cards"]["at"].items()},
            contents={str(a): [str(c) for c in cs] for a, cs in state["cards"]["contents"].items()},
        )
        chips = state.get("chips") or {"at": {}, "values": {}}  # absent: none on the table
        chip_at = {str(c): [str(a) for a in p] for c, p in chips["at"].items()}
        chip_spots = CardMap(at=chip_at, contents=_contents(chip_at))
        chip_values = {str(c): int(v) for c, v in chips["values"].items()}
        answered = OrderedDict(
            (str(r), (str(n), bool(ok), None if e is None else str(e)))
            for r, n, ok, e in state.get("answered", [])  # absent before this version
        )
        hand_for_hand = bool(state.get("hand_for_hand", False))  # absent: off
        last_state = state["last_state"]
        if last_state is not None and not isinstance(last_state, dict):
            raise CheckpointError("checkpoint last_state must be an object or null")
        t = float(state["t"])
        seq = int(state["seq"])
        hand_number = int(state["hand_number"])
        level = Level(**state["level"])
        pending_level = Level(**pending) if pending is not None else None
        next_button = state["next_button"]
        if next_button is not None and next_button not in engine.seats:
            raise CheckpointError(f"checkpoint next_button {next_button!r} is not a seat")
        last_positions = Positions(**positions) if positions is not None else None
        last_hand_cards = {str(c) for c in state.get("last_hand_cards", [])}
        lifted = str(state.get("lifted", ""))
        missed_blinds = {
            int(n): (bool(small), bool(big))
            for n, (small, big) in state.get("missed_blinds", {}).items()
        }
        saved_hand = state.get("hand")
        record = hand_record.from_json(saved_hand["record"]) if saved_hand is not None else None
        hole_reads = int(state.get("hole_reads", 0))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint is malformed: {type(exc).__name__}: {exc}") from None
    for n, (player, stack, new, away) in players.items():
        seat = engine.seats[n]
        seat.player, seat.stack, seat.new, seat.away = player, stack, new, away
    engine.holds = holds
    engine.hand_for_hand = hand_for_hand
    engine.offline = offline
    engine.penalties = penalties
    engine.staff = staff
    engine.dealer = dealer
    engine.floor = floor_at
    engine.floor_called = floor_called
    engine.early_chips = early
    engine.t = t
    engine.seq = seq
    engine.hand_number = hand_number
    engine.level = level
    engine.pending_level = pending_level
    engine.next_button = next_button
    engine.last_positions = last_positions
    engine.cards = cards
    engine.chip_spots = chip_spots
    engine.chip_values = chip_values
    engine.hand = None
    engine.answered = answered
    engine.last_hand_cards = last_hand_cards
    engine.lifted = lifted
    engine.missed_blinds = missed_blinds
    engine.hole_reads = hole_reads
    if record is not None:
        _restore_hand(engine, record)
    engine.seq = seq
    engine._last_state = last_state
    engine._dirty = last_state is None  # as a fresh engine: its first input publishes a state
    engine._pots_cache = (-1, [])
    engine._out = []


def _restore_hand(engine: Engine, record: hand_record.HandRecord) -> None:
    """The hand in progress: its facts, wired as a hand that starts, its record loaded."""
    facts = record.facts
    hand = Hand(**{f.name: getattr(facts, f.name) for f in dataclasses.fields(facts)})
    engine.hand = hand
    hands.wire(
        engine,
        hand,
        missed=dict(record.start.missed),
        event_heads_up=record.start.event_heads_up,
    )
    hand_record.load(hand.betting, hand.dealing, record)


def _contents(at: dict[str, list[str]]) -> dict[str, list[str]]:
    """Antenna -> tags, from tag -> antennas (a chip's order at an antenna does not matter)."""
    contents: dict[str, list[str]] = {}
    for tag, places in at.items():
        for place in places:
            contents.setdefault(place, []).append(tag)
    return contents
