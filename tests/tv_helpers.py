"""Hands for the TV service tests: dealer plans, and the messages the real engine makes of them."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from controller.config import Config, load_config
from controller.replay import build_engine, drive
from controller.seal import ReleasePolicy, TableSeal, open_sealed
from kernel.inputs import Event, TagIn
from kernel.messages import Message
from sim.dealer import DealerClock, Decision, HandPlan, TableDealer, seat_players

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "sim-table.toml"
CARD = re.compile(r"[23456789TJQKA][cdhs]")
D = Decision

PLAYERS = [(1, "Alice", 20000), (2, "Bruno", 20000), (3, "Chiara", 20000), (4, "Dario", 20000)]
SIX = [*PLAYERS, (5, "Elena", 20000), (6, "Fabio", 20000)]
LEVEL = (100, 200, 0)


def config(tmp_path: Path | None = None) -> Config:
    """The shipped 9-seat sim table (journal in tmp_path when given)."""
    cfg = load_config(EXAMPLE)
    journal = (tmp_path / "t01.journal") if tmp_path is not None else None
    return dataclasses.replace(cfg, journal=dataclasses.replace(cfg.journal, path=journal))


def flop_plan() -> HandPlan:
    """Four players; seat 4 folds pre-flop, three see a flop and check it through, the
    turn is bet and folded to: no showdown."""
    checks = [D(2, "check"), D(3, "check"), D(1, "check")]
    return HandPlan(
        dealt_in=[1, 2, 3, 4],
        button=1,
        small_blind_seat=2,
        big_blind_seat=3,
        blinds=LEVEL,
        stacks={s: 20000 for s in (1, 2, 3, 4)},
        hole={1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"], 4: ["2c", "9s"]},
        board=["Kd", "8d", "3s", "Jc", "4h"],
        burns=["5c", "Tc", "Td"],
        streets=[
            [D(4, "fold"), D(1, "call"), D(2, "call"), D(3, "check")],
            checks,
            [D(2, "bet", 600), D(3, "fold"), D(1, "fold")],
        ],
    )


def allin_plan() -> HandPlan:
    """Heads-up all-in pre-flop after two folds: the hands are tabled (rule 16) and run
    out; aces and threes make two pair and win."""
    return HandPlan(
        dealt_in=[1, 2, 3, 4],
        button=4,
        small_blind_seat=1,
        big_blind_seat=2,
        blinds=LEVEL,
        stacks={s: 20000 for s in (1, 2, 3, 4)},
        hole={1: ["As", "3c"], 2: ["Kd", "Ks"], 3: ["8h", "2d"], 4: ["9c", "4s"]},
        board=["Ah", "3d", "Jc", "7s", "Qh"],
        burns=["5c", "Tc", "Td"],
        streets=[[D(3, "fold"), D(4, "fold"), D(1, "allin"), D(2, "call")]],
    )


def six_handed_plan() -> HandPlan:
    """Six players: a raise and two calls pre-flop, then a bet on the flop."""
    return HandPlan(
        dealt_in=[1, 2, 3, 4, 5, 6],
        button=1,
        small_blind_seat=2,
        big_blind_seat=3,
        blinds=LEVEL,
        stacks={s: 20000 for s in range(1, 7)},
        hole={
            1: ["9h", "8h"],
            2: ["Ac", "2d"],
            3: ["Jh", "Jc"],
            4: ["7c", "2s"],
            5: ["Ad", "Qd"],
            6: ["Ks", "Kh"],
        },
        board=["Qs", "Jd", "4d", "Tc", "3h"],
        burns=["5c", "6s", "7h"],
        streets=[
            [
                D(4, "fold"),
                D(5, "call"),
                D(6, "raise", 600),
                D(1, "fold"),
                D(2, "fold"),
                D(3, "call"),
                D(5, "call"),
            ],
            [D(3, "check"), D(5, "bet", 900), D(6, "call"), D(3, "call")],
            [D(3, "check"), D(5, "check"), D(6, "check")],
            [D(3, "check"), D(5, "check"), D(6, "check")],
        ],
    )


def hand_events(
    plan: HandPlan, *, players: list[tuple[int, str, int]] | None = None
) -> list[Event]:
    """The room commands seating the players (PLAYERS), then the physical trace of a hand."""
    events = seat_players(players or PLAYERS, LEVEL, button=plan.button)
    # settle > the engine's 1 s: a push is read as settled by a timer the daemon fires
    return events + TableDealer(DealerClock(0.5), step=0.1, settle=1.1).play(plan)


def fold_to_big_blind_plan() -> HandPlan:
    """The hand after `flop_plan`: button 2, blinds 3 and 4, everyone folds to the big
    blind."""
    return HandPlan(
        dealt_in=[1, 2, 3, 4],
        button=2,
        small_blind_seat=3,
        big_blind_seat=4,
        blinds=LEVEL,
        stacks={1: 19800, 2: 20400, 3: 19800, 4: 20000},
        hole={1: ["Tc", "Th"], 2: ["5s", "5d"], 3: ["Jd", "Js"], 4: ["Ac", "Ad"]},
        board=["2h", "3h", "4h", "6c", "7c"],
        burns=["8c", "8s", "9h"],
        streets=[[D(1, "fold"), D(2, "fold"), D(3, "fold")]],
    )


def two_hands_events() -> list[Event]:
    """`flop_plan` then `fold_to_big_blind_plan`, one dealer, one trace."""
    dealer = TableDealer(DealerClock(0.5), step=0.1, settle=1.1)
    events = seat_players(PLAYERS, LEVEL, button=1)
    events += dealer.play(flop_plan())
    dealer.clock.step(1.0)
    return events + dealer.play(fold_to_big_blind_plan())


def misdeal_events() -> list[Event]:
    """The flop hand, but its first hole card goes to the wrong seat (rule 35A-2): the
    trace stops right after that card."""
    events = hand_events(flop_plan())
    first = next(
        i for i, e in enumerate(events) if isinstance(e, TagIn) and e.antenna.startswith("seat")
    )
    card = events[first]
    assert isinstance(card, TagIn)
    wrong = TagIn(card.t, "seat3", card=card.card)  # seat 2 is the first to get a card
    return [*events[:first], wrong]


def engine_messages(events: Iterable[Event], *, delay: float = 0.0) -> list[Message]:
    """What the table publishes for the trace (as the daemon would, timers fired): the real
    engine's messages through the shell's seal (controller/seal.py), every key released
    `delay` seconds after its read (0: right after the sealed message)."""
    engine = build_engine(config())
    seal = TableSeal("t01", ReleasePolicy(delay, False))
    out: list[Message] = []
    for event, messages in drive(engine, events):
        out += [r.message for r in seal.outgoing("engine", messages, event.t)]
    out += [r.message for r in seal.due(float("inf"))]
    return out


def tv_messages(messages: Iterable[Message]) -> list[tuple[str, dict[str, Any]]]:
    """The messages the `tv` identity may read: (topic kind, payload)."""
    return [
        (m.topic, m.payload)
        for m in messages
        if m.topic in ("state", "events", "holecards", "holekeys", "status")
    ]


def view_messages(messages: Iterable[Message]) -> list[tuple[str, dict[str, Any]]]:
    """What the desk gives a secret view (broadcast/desk.py): the `tv` messages with each
    sealed hole-card message opened by its key (keys themselves are not view input)."""
    listed = tv_messages(messages)
    keys = {p["seq"]: p["key"] for kind, p in listed if kind == "holekeys"}
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, p in listed:
        if kind == "holekeys":
            continue
        if kind == "holecards":
            cards = open_sealed(p, keys[p["seq"]])
            p = {"table": p["table"], "hand": p["hand"], "seat": p["seat"], "cards": cards}
        out.append((kind, p))
    return out


def hole_cards(messages: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    """Every hole card the messages reveal: the sealed `holecards` opened with their keys."""
    listed = list(messages)
    keys = {p["seq"]: p["key"] for kind, p in listed if kind == "holekeys"}
    return {
        c
        for kind, p in listed
        if kind == "holecards" and ("cards" in p or p["seq"] in keys)
        for c in (p["cards"] if "cards" in p else open_sealed(p, keys[p["seq"]]))
    }


def board_cards(messages: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    """Every card the public messages show on the board."""
    return {c for kind, p in messages if kind == "state" for c in p.get("board", [])}
