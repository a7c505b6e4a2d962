"""A hand from start to end: one start per hand (TDA 2019 rule 23), positions and who is dealt
in (8, 10, 32, 34), the level it is played at (23), and its end however it comes (1, 35-E)."""

from __future__ import annotations

from typing import Any

from controller.engine.antennas import antenna
from controller.engine.betting.records import Blinds
from controller.engine.betting_flow import HandBetting
from controller.engine.dealing import HandDealing
from controller.engine.hand import Hand
from controller.engine.positions import (
    Positions,
    fresh_positions,
    next_positions,
    waits_for_button,
)
from controller.engine.procedures import fouled_deck_35e
from controller.engine.state import COMPLETE as _COMPLETE  # a module global: state.py's aliases
from controller.engine.state import FaceDown, Level, Phase
from controller.engine.table import ROOM_HOLD, Table


def coming_button(table: Table) -> int | None:
    """Where the button is for the next hand, as far as it is known."""
    if table.next_button is not None:
        return table.next_button
    return table.last_positions.button if table.last_positions else None


def not_dealt_yet(table: Table, trigger: str) -> bool:
    """Rule 23, one start per hand: the shuffler button and the dealer push both start a
    hand; the second of the two, before any card or chip of the hand, is the same hand."""
    hand = table.hand
    betting = hand.betting if hand is not None else None
    return (
        hand is not None
        and {hand.trigger, trigger} == {"shuffler", "dealer_push"}
        and not hand.hole
        and not hand.board
        and hand.dealing is not None
        and not hand.dealing.deal.dealt
        and hand.redeals == 0
        and (betting is None or not any(betting.posted.values()))
    )


def start_hand(table: Table, trigger: str) -> None:
    """A hand-start trigger (shuffler, dealer push, first card): a new hand if it can be."""
    if table.holds:
        table.alert(
            "table_held",
            "warning",
            "the table is held (" + ", ".join(sorted(table.holds)) + "): no new hand",
            held=sorted(table.holds),
            trigger=trigger,
        )
        return
    if table.hand is not None:
        complete_hand(table)
    players = table.eligible()
    on_break: list[int] = []
    if table.profile.away_sits_out:  # Campione "Gestione pause": not dealt in
        on_break = [s for s in players if table.seats[s].away]
        players = [s for s in players if s not in on_break]
    if len(players) < 2:
        table.alert(
            "hand_not_started",
            "warning",
            "a hand needs at least two seated players with chips",
            trigger=trigger,
        )
        return
    previous = table.last_positions
    pos = _positions(table, players)
    n = table.spec.seats
    dealt_in = [s for s in players if not (table.seats[s].new and waits_for_button(s, pos, n))]
    if len(dealt_in) >= 2 and previous is not None:
        _blinds_passed(table, on_break, previous, pos)
    if len(dealt_in) < 2:
        table.alert(
            "hand_not_started",
            "warning",
            "a hand needs at least two players dealt in",
            trigger=trigger,
        )
        return
    hand = _open(table, pos, dealt_in, trigger)
    _take_early_chips(table, hand)
    _left_on_table(table, trigger)


def _passed(seat: int, before: int | None, now: int | None) -> bool:
    """The blind moved clockwise from `before` to `now` over `seat`."""
    if before is None or now is None or before == now:
        return False
    return 0 < (seat - before) % 100 < (now - before) % 100


def _blinds_passed(table: Table, on_break: list[int], before: Positions, now: Positions) -> None:
    """Campione "Gestione pause": a player on a break pays the blinds missed meanwhile."""
    for seat in on_break:
        small, big = table.missed_blinds.get(seat, (False, False))
        small = small or _passed(seat, before.small_blind, now.small_blind)
        big = big or _passed(seat, before.big_blind, now.big_blind)
        if small or big:
            table.missed_blinds[seat] = (small, big)


def _missed(table: Table, dealt_in: list[int], pos: Positions) -> dict[int, int]:
    """What each seat back from a break owes for the blinds it missed (dead money), less
    a blind it posts in this hand anyway."""
    owed: dict[int, int] = {}
    level = table.level
    for seat in dealt_in:
        small, big = table.missed_blinds.pop(seat, (False, False))
        amount = (level.small_blind if small else 0) + (level.big_blind if big else 0)
        if seat == pos.big_blind:
            amount -= level.big_blind if big else 0
        if amount > 0:
            owed[seat] = amount
    return owed


def _positions(table: Table, players: list[int]) -> Positions:
    """Button and blinds: placed afresh (first hand, `button` command) or moved (32, 34)."""
    n = table.spec.seats
    if table.next_button is not None or table.last_positions is None:
        start = table.next_button if table.next_button is not None else players[-1]
        return fresh_positions(start, players, n)
    return next_positions(table.last_positions, players, n)


def _open(table: Table, pos: Positions, dealt_in: list[int], trigger: str) -> Hand:
    """The hand begins at the level now due (23): `hand_started`, its betting and dealing."""
    table.next_button = None
    if table.pending_level is not None:
        table.level, table.pending_level = table.pending_level, None
    for s in dealt_in:
        table.seats[s].new = False
    table.hand_number += 1
    table.last_positions = pos
    level = table.level
    hand = Hand(
        number=table.hand_number,
        positions=pos,
        level=level,
        dealt_in=dealt_in,
        started_t=table.t,
        trigger=trigger,
    )
    table.hand = hand
    dealer = table.dealer.ref() if table.dealer else None
    table.event(
        "hand_started",
        button=pos.button,
        small_blind=level.small_blind,
        big_blind=level.big_blind,
        ante=level.ante,
        trigger=trigger,
        small_blind_seat=pos.small_blind,
        big_blind_seat=pos.big_blind,
        seats=dealt_in,
        dealer=dealer,
        rule="23",
        players={str(s): table.seats[s].player for s in dealt_in},
        game=table.spec.game,
        started_at=None if table.epoch is None else round(table.epoch + table.t, 6),
    )
    hand.dealer = table.dealer.ref() if table.dealer else None
    wire(table, hand, missed=_missed(table, dealt_in, pos), event_heads_up=level.event_heads_up)
    if table.hand_for_hand:
        assert hand.betting is not None
        hand.betting.face_down = FaceDown.WAIT  # RP-8 F
    return hand


def wire(table: Table, hand: Hand, *, missed: dict[int, int], event_heads_up: bool) -> None:
    """Give a hand its betting and dealing, wired to the table: as it starts, and as a
    checkpoint restores it (whose record is then loaded into them)."""
    level = hand.level
    straddle = table.profile.straddle
    hand.betting = HandBetting(
        emit=table,
        seats=dict(table.seats.items()),
        dealt_in=hand.dealt_in,
        positions=hand.positions,
        blinds=Blinds(level.small_blind, level.big_blind, level.ante, level.bb_ante),
        game=table.spec.game,
        settle_seconds=table.spec.settle_seconds,
        hole=lambda s: list(hand.hole.get(s, ())),
        board=lambda: list(hand.board),
        odd_unit=table.spec.odd_chip_unit,
        straddle_multiple=straddle.multiple if straddle else 0,
        profile=table.profile,
        event_heads_up=event_heads_up,
        missed=missed,
    )
    hand.dealing = HandDealing(table, hand, hand.betting, table.spec.game)


def _take_early_chips(table: Table, hand: Hand) -> None:
    """Chips put out before the start count as the seat's forced bet (the blinds set out
    before the shuffler, or before the lift under casinos-austria); anywhere else they are
    no bet of this hand (a pot pushed onto a winner's bet zone, say)."""
    betting = hand.betting
    assert betting is not None
    early, table.early_chips = table.early_chips, {}
    for seat, zone in sorted(early.items()):
        if not zone:
            continue
        if betting.owed.get(seat, 0) > 0:
            for uid, value in zone.items():
                betting.chip_in(table.t, seat, uid, value)
        else:
            table.alert(
                "chips_before_hand",
                "warning",
                f"chips lay in seat {seat}'s bet zone when the hand started and it owes no "
                "blind or ante: they are not a bet of this hand; take them back",
                seat=seat,
            )


def _left_on_table(table: Table, trigger: str) -> None:
    """Cards of the previous hand still read at a seat or on the board."""
    leftovers = sorted(
        name
        for name, cards in table.cards.contents.items()
        if cards
        and antenna(name).on_table
        and not (trigger == "first_card" and name == table.lifted and len(cards) == 1)
    )
    if leftovers:
        table.alert(
            "cards_left_on_table",
            "warning",
            "cards from the previous hand are still read at " + ", ".join(leftovers),
            antennas=leftovers,
        )


def finish_if_complete(table: Table) -> None:
    """After each input: a hand whose betting is complete ends now."""
    betting = table.betting
    if betting is not None and betting.phase == _COMPLETE:
        dealing = table.dealing
        if dealing is not None:
            dealing.hand_over(table.t)
        complete_hand(table)


def complete_hand(table: Table) -> None:
    """End the hand in progress: a showdown is awarded; a hand with no result is abandoned
    and every chip put in returned (rule 1)."""
    hand = table.hand
    assert hand is not None
    betting = hand.betting
    if betting is not None and betting.phase == Phase.SHOWDOWN:
        betting.award(table.t, "next_hand")
    if betting is not None and betting.phase != Phase.COMPLETE:
        # The hand never reached a result: nobody wins chips that were not won.
        refunds = betting.refund_all()
        table.alert(
            "hand_abandoned",
            "critical" if refunds else "warning",
            "the hand ended before its result; chips put in were returned",
            refunds={str(s): c for s, c in refunds.items()},
            rule="1",
        )
    close_hand(table, hand)


def close_hand(table: Table, hand: Hand) -> None:
    """The hand is over, however it ended: penalties count it, `hand_completed` gives the
    stacks, and its cards are remembered (one of them seen again is no new hand)."""
    _count_penalties(table, hand)
    money: dict[str, int] = {}
    if table.profile.rake is not None:  # the house's rake of the hand (Campione "Rake")
        money["rake"] = hand.betting.rake if hand.betting is not None else 0
    table.event(
        "hand_completed",
        stacks={str(s): table.seats[s].stack for s in hand.dealt_in},
        **money,
    )
    table.last_hand_cards = {c for cards in hand.hole.values() for c in cards} | set(hand.board)
    table.hand = None
    if table.hand_for_hand and ROOM_HOLD not in table.holds:
        # RP-8: hand-for-hand, every table holds after its hand until the room releases it.
        table.holds[ROOM_HOLD] = "hand for hand"
        table.event("room_hold", reason="hand for hand", hand_for_hand=True, rule="RP-8")


def _count_penalties(table: Table, hand: Hand) -> None:
    """A penalised seat has missed one more hand (a misdeal and its re-deal are one, 35-C)."""
    for s in hand.dealt_in:
        if table.penalties.get(s):
            table.penalties[s] -= 1
            if not table.penalties[s]:
                del table.penalties[s]


def fouled_deck(table: Table, why: str, **details: Any) -> None:
    """Rule 35-E: a foreign or duplicate card stops play and every bet is returned."""
    hand = table.hand
    assert hand is not None
    table.do(fouled_deck_35e.stopped(why, details))
    table.holds[fouled_deck_35e.FOULED_DECK_HOLD] = why
    table.do(fouled_deck_35e.floor_called(why))
    betting = hand.betting
    if betting is not None and betting.phase != Phase.COMPLETE:
        table.do(fouled_deck_35e.bets_returned(betting.refund_all()))
    close_hand(table, hand)


def level_announced(table: Table, level: Level, announced: float) -> None:
    """Rule 23: a hand started at the prior level by mistake is corrected, unless
    substantial action has occurred (then it goes on at the prior level)."""
    hand = table.hand
    assert hand is not None
    if announced > hand.started_t:
        return  # announced during the hand: it applies from the next hand
    betting = hand.betting
    if betting is not None and betting.substantial_action:
        table.event(
            "level_kept",
            small_blind=hand.level.small_blind,
            big_blind=hand.level.big_blind,
            ante=hand.level.ante,
            reason="substantial action: the hand continues at the prior level",
            rule="23",
        )
        return
    hand.level = level
    table.level = level
    table.pending_level = None
    owed: dict[int, int] = {}
    if betting is not None:
        folded = set(betting.dealt_in) - betting.live  # a fold stays a fold (rule 58)
        if hand.dealing is not None:
            hand.dealing.restore_posted()
        betting.live -= folded
        owed = betting.reopen_posting(
            Blinds(level.small_blind, level.big_blind, level.ante, level.bb_ante)
        )
    table.event(
        "level_corrected",
        small_blind=level.small_blind,
        big_blind=level.big_blind,
        ante=level.ante,
        owed={str(s): o for s, o in sorted(owed.items())},
        rule="23",
    )
    if owed:
        table.alert(
            "procedure_required",
            "warning",
            "the hand started at the prior level by mistake: complete the blinds "
            + ", ".join(f"seat {s} +{o}" for s, o in sorted(owed.items())),
            procedure="level_correction",
            rule="23",
        )
