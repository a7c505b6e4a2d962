"""Oracle hands: random no-limit hold'em played by pokerkit, converted to physical table traces."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pokerkit import Automation, ChipsPushing, NoLimitTexasHoldem, State

from controller.engine import Engine, EngineSpec
from controller.engine.cards import FULL_DECK
from kernel.inputs import Command, Event
from kernel.messages import Message
from sim.dealer import Decision, HandPlan, TableDealer

# Hole and board cards are dealt by this module from a seeded deck (pokerkit's own dealing
# automations shuffle with the global `random` module, which would make hands irreproducible).
AUTOMATIONS: tuple[Automation, ...] = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)

LEVELS: tuple[tuple[int, int], ...] = ((50, 100), (50, 100), (50, 100), (25, 50), (100, 200))
NAMES = "ABCDEFGHI"


@dataclass(frozen=True, slots=True)
class OracleAction:
    """One pokerkit action: `kind` is fold/check/call/bet/raise/allin, `total` the amount
    in front of the player on the street after it (pokerkit's complete_bet_or_raise_to)."""

    street: int
    player: int
    kind: str
    total: int


@dataclass(frozen=True, slots=True)
class OracleHand:
    """A hand pokerkit played: inputs, every action in order, and pokerkit's result."""

    index: int
    blinds: tuple[int, int]
    ante: int
    bb_ante: bool
    starting_stacks: tuple[int, ...]
    hole: tuple[tuple[str, str], ...]  # per player index
    board: tuple[str, ...]  # five cards (those pokerkit never reached are filled in)
    burns: tuple[str, ...]  # three cards
    actions: tuple[OracleAction, ...]
    final_stacks: tuple[int, ...]
    pots_pushed: int  # pokerkit's ChipsPushing operations with chips in them
    split_winners: frozenset[int]  # players who shared a pot pokerkit pushed

    @property
    def players(self) -> int:
        """Number of players (seats 1..N)."""
        return len(self.starting_stacks)


def _raw_antes(players: int, ante: int, bb_ante: bool) -> dict[int, int] | int:
    if not bb_ante:
        return ante
    # The big blind is pokerkit's player 1; heads-up pokerkit swaps the blinds and antes of
    # players 0 and 1 (player 0 posts the big blind), so the ante is still keyed on player 1.
    del players
    return {1: ante}


def new_state(
    hand_players: int, blinds: tuple[int, int], ante: int, bb_ante: bool, stacks: Sequence[int]
) -> State:
    """A fresh pokerkit state for one hand (tournament mode: a single runout)."""
    return NoLimitTexasHoldem.create_state(
        AUTOMATIONS,
        False,
        _raw_antes(hand_players, ante, bb_ante),
        blinds,
        blinds[1],
        tuple(stacks),
        hand_players,
    )


Chooser = Callable[[State], OracleAction | None]


def drive(
    state: State,
    hole: Sequence[Sequence[str]],
    board: Sequence[str],
    burns: Sequence[str],
    choose: Chooser,
) -> list[OracleAction]:
    """Deal the given cards and play `choose`'s actions until pokerkit's hand is over."""
    actions: list[OracleAction] = []
    board_at = 0
    burn_at = 0
    while state.status:
        if state.can_deal_hole():
            dealee = state.hole_dealee_index
            assert dealee is not None
            state.deal_hole("".join(hole[dealee]))
        elif state.can_burn_card():
            state.burn_card(burns[burn_at])
            burn_at += 1
        elif state.can_deal_board():
            assert state.street is not None
            count = state.street.board_dealing_count
            state.deal_board("".join(board[board_at : board_at + count]))
            board_at += count
        elif state.actor_index is not None:
            action = choose(state)
            if action is None:
                raise RuntimeError(f"no action for player {state.actor_index}")
            _apply(state, action)
            actions.append(action)
        else:  # pragma: no cover - every other step is automated
            raise RuntimeError("pokerkit is waiting for an operation the oracle does not do")
    return actions


def _apply(state: State, action: OracleAction) -> None:
    if action.kind == "fold":
        state.fold()
    elif action.kind in ("check", "call") or (
        action.kind == "allin" and not state.can_complete_bet_or_raise_to()
    ):
        state.check_or_call()
    elif action.kind == "allin" and action.total <= max(state.bets):
        state.check_or_call()  # an all-in call for no more than the bet to call
    else:
        state.complete_bet_or_raise_to(action.total)


def classify(state: State, kind: str, total: int = 0) -> OracleAction:
    """Name a pokerkit action before it is applied (fold, check_or_call or raise to `total`)."""
    player = state.actor_index
    street = state.street_index
    assert player is not None and street is not None
    behind = state.stacks[player]
    in_front = state.bets[player]
    if kind == "fold":
        return OracleAction(street, player, "fold", in_front)
    if kind == "check_or_call":
        to_call = state.checking_or_calling_amount or 0
        if to_call == 0:
            return OracleAction(street, player, "check", in_front)
        if to_call >= behind:
            return OracleAction(street, player, "allin", in_front + behind)
        return OracleAction(street, player, "call", in_front + to_call)
    if total == in_front + behind:
        return OracleAction(street, player, "allin", total)
    return OracleAction(street, player, "raise" if max(state.bets) > 0 else "bet", total)


class TdaReopening:
    """Who may still raise on the street under TDA rule 47 (a short all-in does not reopen).

    pokerkit measures a full raise from the last bet or raise made by an action and lets a
    player who already acted raise again after a short all-in that follows only the blinds
    (a limped pot) or that opens the betting after the flop. Under TDA rules 43 and 47 the
    big blind is the full bet to raise over, and a player who already acted may raise only
    when facing at least a full raise in total since; the engine reads such a push as a
    call (47-A). The oracle only raises where both rule sets allow it, and never over an
    opening all-in bet smaller than the big blind (pokerkit and TDA also size the minimum
    raise differently there).
    """

    def __init__(self) -> None:
        self.street: int | None = None
        self.full_raise = 0
        self.faced: dict[int, int] = {}  # level each player left the betting at

    def _sync(self, state: State) -> None:
        if state.street_index != self.street:
            self.street = state.street_index
            self.full_raise = state.blinds_or_straddles[1]
            self.faced = {}

    def may_raise(self, state: State) -> bool:
        """True when the player to act may bet or raise under both rule sets."""
        self._sync(state)
        player = state.actor_index
        assert player is not None
        level = max(state.bets)
        if self.street and 0 < level < state.blinds_or_straddles[1]:
            return False
        faced = self.faced.get(player)
        return faced is None or level - faced >= self.full_raise

    def record(self, state: State, action: OracleAction) -> None:
        """Note an action about to be applied to `state`."""
        self._sync(state)
        level = max(state.bets)
        if action.total > level and action.total - level >= self.full_raise:
            self.full_raise = action.total - level
        self.faced[action.player] = max(level, action.total)


def random_chooser(rng: random.Random, aggression: float) -> Chooser:
    """A seeded player: folds, checks/calls, bets/raises (often all-in) among legal actions."""
    reopening = TdaReopening()

    def choose(state: State) -> OracleAction:
        action = decide(state)
        reopening.record(state, action)
        return action

    def decide(state: State) -> OracleAction:
        to_call = state.checking_or_calling_amount or 0
        roll = rng.random()
        if to_call and state.can_fold() and roll < 0.22:
            return classify(state, "fold")
        if (
            state.can_complete_bet_or_raise_to()
            and roll > 1.0 - aggression
            and reopening.may_raise(state)
        ):
            low = state.min_completion_betting_or_raising_to_amount
            high = state.max_completion_betting_or_raising_to_amount
            assert low is not None and high is not None
            if low >= high or rng.random() < 0.4:
                total = high
            else:
                top = min(high, low + rng.choice((0, 50, 100, 333, 1000, 5000)))
                total = rng.randint(low, top)
            return classify(state, "raise", total)
        return classify(state, "check_or_call")

    return choose


def _stack(rng: random.Random, big_blind: int, floor: int) -> int:
    """Short stacks are common: a third of players have 1-10 big blinds."""
    low, high = (1, 10) if rng.random() < 0.35 else (10, 60)
    return max(floor, rng.randint(low * big_blind, high * big_blind))


def generate_hand(
    rng: random.Random, index: int = 0, players: int | None = None, antes: bool = False
) -> OracleHand:
    """One random hand played through pokerkit.

    Every stack covers the player's forced bets: with a big blind all-in for less, pokerkit
    lets the others call the short blind while our betting (like most rooms) keeps the full
    big blind as the bet to call, so such hands would not compare like for like.
    """
    n = players if players is not None else rng.randint(2, 9)
    sb, bb = rng.choice(LEVELS)
    ante = 0
    bb_ante = False
    if antes:
        bb_ante = rng.random() < 0.3
        ante = bb if bb_ante else rng.choice((bb // 10, bb // 4, bb // 2))
    stacks = [_stack(rng, bb, bb + ante) for _ in range(n)]
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole = tuple((deck.pop(), deck.pop()) for _ in range(n))
    board = tuple(deck.pop() for _ in range(5))
    burns = tuple(deck.pop() for _ in range(3))
    state = new_state(n, (sb, bb), ante, bb_ante, stacks)
    actions = drive(state, hole, board, burns, random_chooser(rng, rng.choice((0.15, 0.3, 0.5))))
    pushes = [op for op in state.operations if isinstance(op, ChipsPushing) and any(op.amounts)]
    return OracleHand(
        index=index,
        blinds=(sb, bb),
        ante=ante,
        bb_ante=bb_ante,
        starting_stacks=tuple(stacks),
        hole=hole,
        board=board,
        burns=burns,
        actions=tuple(actions),
        final_stacks=tuple(state.stacks),
        pots_pushed=len(pushes),
        split_winners=frozenset(
            p
            for op in pushes
            if sum(1 for a in op.amounts if a > 0) > 1
            for p, a in enumerate(op.amounts)
            if a > 0
        ),
    )


def generate_hands(seed: int, count: int, *, antes: bool = False) -> list[OracleHand]:
    """`count` hands from one seed (deterministic); with `antes`, every hand has one."""
    rng = random.Random(seed)
    return [generate_hand(rng, i, antes=antes) for i in range(count)]


def replay_pokerkit(hand: OracleHand) -> tuple[int, ...]:
    """pokerkit's state machine replaying the recorded actions; its final stacks."""
    state = new_state(hand.players, hand.blinds, hand.ante, hand.bb_ante, hand.starting_stacks)
    recorded = iter(hand.actions)
    drive(state, hand.hole, hand.board, hand.burns, lambda _state: next(recorded, None))
    return tuple(state.stacks)


# ---------------------------------------------------------------------- to the engine


def seat_of(player: int) -> int:
    """Seat of a pokerkit player index (player 0 in seat 1)."""
    return player + 1


def positions(players: int) -> tuple[int, int | None, int]:
    """(button, small blind, big blind) seats matching pokerkit's player order.

    Three or more: player 0 posts the small blind, player 1 the big blind, the last player
    has the button. Heads-up pokerkit's player 1 posts the small blind and acts first
    preflop, player 0 the big blind: that is rule 34 with the button in seat 2.
    """
    if players == 2:
        return 2, 2, 1
    return players, 1, 2


def plan_of(hand: OracleHand) -> HandPlan:
    """The dealer's plan replaying pokerkit's hand."""
    button, small, big = positions(hand.players)
    streets: list[list[Decision]] = [[] for _ in range(4)]
    for a in hand.actions:
        streets[a.street].append(Decision(seat_of(a.player), a.kind, a.total))
    while streets and not streets[-1]:
        streets.pop()
    seats = [seat_of(p) for p in range(hand.players)]
    return HandPlan(
        dealt_in=seats,
        button=button,
        small_blind_seat=small,
        big_blind_seat=big,
        blinds=(hand.blinds[0], hand.blinds[1], hand.ante),
        stacks={seat_of(p): s for p, s in enumerate(hand.starting_stacks)},
        hole={seat_of(p): list(cards) for p, cards in enumerate(hand.hole)},
        board=list(hand.board),
        burns=list(hand.burns),
        streets=streets,
        bb_ante=hand.bb_ante,
    )


def setup_events(hand: OracleHand) -> list[Event]:
    """Room commands: the players with their stacks, the level, the button."""
    events: list[Event] = [
        Command(0.0, "seat", {"seat": seat_of(p), "player": NAMES[p], "stack": stack})
        for p, stack in enumerate(hand.starting_stacks)
    ]
    sb, bb = hand.blinds
    level = {"small_blind": sb, "big_blind": bb, "ante": hand.ante, "bb_ante": hand.bb_ante}
    events.append(Command(0.0, "level", level))
    events.append(Command(0.0, "button", {"seat": positions(hand.players)[0]}))
    return events


def trace_of(hand: OracleHand) -> list[Event]:
    """The whole physical trace of the hand: setup commands, then what the dealer does."""
    return [*setup_events(hand), *TableDealer().play(plan_of(hand))]


def new_engine() -> Engine:
    """A fresh 9-seat engine, odd chips broken down to single chips."""
    return Engine(EngineSpec(table="t01", room="test", seats=9, odd_chip_unit=1))


@dataclass(frozen=True, slots=True)
class EngineResult:
    """What the engine made of one hand's trace."""

    stacks: tuple[int, ...]  # seats 1..N
    critical: tuple[dict[str, object], ...]
    pots_awarded: int
    messages: tuple[Message, ...]


def replay_engine(hand: OracleHand, trace: Sequence[Event] | None = None) -> EngineResult:
    """Run the hand's trace through a fresh engine."""
    engine = new_engine()
    out: list[Message] = []
    for event in trace if trace is not None else trace_of(hand):
        out.extend(engine.apply(event))
    critical = tuple(
        m.payload for m in out if m.topic == "alerts" and m.payload.get("severity") == "critical"
    )
    pots = sum(1 for m in out if m.topic == "events" and m.payload["type"] == "pot_awarded")
    stacks = tuple(engine.seats[seat_of(p)].stack for p in range(hand.players))
    return EngineResult(stacks, critical, pots, tuple(out))


def describe(hand: OracleHand) -> str:
    """A readable account of the hand, for failure messages."""
    button, small, big = positions(hand.players)
    lines = [
        f"hand {hand.index}: {hand.players} players, blinds {hand.blinds}, ante {hand.ante}"
        f"{' (bb ante)' if hand.bb_ante else ''}; button seat {button}, sb {small}, bb {big}",
        "stacks " + ", ".join(f"s{seat_of(p)}={s}" for p, s in enumerate(hand.starting_stacks)),
        "hole " + ", ".join(f"s{seat_of(p)}={''.join(c)}" for p, c in enumerate(hand.hole)),
        "board " + " ".join(hand.board),
    ]
    for street in range(4):
        acts = [a for a in hand.actions if a.street == street]
        if acts:
            name = ("preflop", "flop", "turn", "river")[street]
            lines.append(
                f"{name}: " + ", ".join(f"s{seat_of(a.player)} {a.kind} {a.total}" for a in acts)
            )
    lines.append(
        "pokerkit final " + ", ".join(f"s{seat_of(p)}={s}" for p, s in enumerate(hand.final_stacks))
    )
    return "\n".join(lines)
