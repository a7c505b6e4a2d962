"""The award: the uncalled bet back (15-B), the pots built and raked (Campione "Rake"), cards
speak (12), odd chips (20-A), never a pot paid on a hand not fully read (1)."""

from __future__ import annotations

from typing import Any

from controller.engine.betting.changes import Change, Chips, Completed, Mark, Won
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import alert, say
from controller.rules import pots as pot_rules
from controller.rules.betting import seats_left_of_button
from controller.rules.handeval import HandRank, describe, evaluate
from controller.rules.pots import Pot, build_pots, division_unit, take_rake, uncalled
from controller.rules.profiles import rake_amount


def rake(hb: HandChips, pots: list[Pot]) -> tuple[int, list[int]]:
    """The house's rake (Campione "Rake"): on the hand's pots, once the flop was dealt (no
    flop, no drop); the hand's rake and what each pot gives."""
    house = hb.profile.rake
    total = sum(p.amount for p in pots)
    taken = rake_amount(house, total, flop_dealt=hb.street_i > 0) if house is not None else 0
    main_first = house.main_pot_first if house is not None else True
    return taken, take_rake(pots, taken, main_pot_first=main_first)


def award(hb: HandChips, reason: str) -> tuple[bool, list[Change]]:
    """Return the uncalled bet, build the pots, award them (rules 12, 15, 20, 21): the
    changes, and whether the hand is complete.

    The hand asks once, before its pushes are settled, while it is not complete. A pot is
    never paid on a guess: while a live hand is not fully read, the pot is
    held (re-read the cards on their antenna) and False is returned.
    """
    unreadable = hb.unreadable()
    if unreadable:
        return False, [
            alert(
                "hand_unreadable",
                "critical",
                f"seats {unreadable}: hand not fully read ({len(hb.board())} board cards); "
                "the pot is held: place the cards on their antenna again or call the floor",
                seats=unreadable,
                rule="1",
            )
        ]
    contrib = dict(hb.contrib)
    changes: list[Change] = []
    back = uncalled(contrib, hb.live)
    if back is not None and back[0] in hb.live:
        # A hand gone from the pot got back its uncalled bet as it left (15-B, 65-A): what
        # it has in beyond the others now is its blind, a forced bet, dead in the pot.
        seat, amount = back
        contrib[seat] -= amount
        changes += [
            Chips(seat, -amount),
            say("uncalled_bet_returned", seat=seat, amount=amount, rule="15-B"),
        ]
    # Table stakes: a hand wins from each rival no more than it could have put in itself
    # (chips in and behind); chips above every live hand's reach are the last rival's (21)
    reach = max((hb.contrib.get(s, 0) + hb.seats[s].stack for s in hb.live), default=0)
    pots = build_pots(contrib, hb.live, hb.dead, gone=hb.left, reach=reach)
    taken, raked = rake(hb, pots)
    changes.insert(0, Completed(taken))
    board = hb.board()
    contested = len(hb.live) > 1
    hands: dict[int, HandRank] = (
        {s: evaluate([*hb.hole(s), *board]) for s in sorted(hb.live)} if contested else {}
    )
    order = seats_left_of_button(hb.dealt_in, hb.pos.button)
    house_unit = hb.profile.odd_chip_unit
    unit = division_unit(
        house_unit,
        smallest_chip=hb.odd_unit,
        small_blind=hb.blinds.small_blind,
        big_blind=hb.blinds.big_blind,
    )
    net = [Pot(p.amount - r, p.eligible) for p, r in zip(pots, raked, strict=True)]
    awards = pot_rules.award(net, hands, order, unit, rest_to_first=house_unit != "smallest_chip")
    # Cards speak (12): every winner's hand is tabled (13-A) and becomes public; a
    # losing hand stays private unless rule 16 already turned it face up.
    winners = {w for a in awards for w in a.winners} if contested else set()
    public = winners | (hb.shown & hb.live)
    changes += [Mark("shown", w) for w in sorted(winners)]
    for a in awards:
        changes += [Won(s, chips) for s, chips in a.shares.items()]
        odd = len(set(a.shares.values())) > 1
        eligible = pots[a.pot_index].eligible
        # Under a house that takes a rake, `amount` is the pot and `rake` what the house
        # took from it: the shares are net of it.
        money: dict[str, Any] = {}
        if hb.profile.rake is not None:
            money = {"rake": raked[a.pot_index], "house_rule": "rake"}
        changes.append(
            say(
                "pot_awarded",
                pot=a.pot_index,
                amount=pots[a.pot_index].amount,
                **money,
                winners=list(a.winners),
                shares={str(s): v for s, v in a.shares.items()},
                rule="20-A" if odd else ("12" if contested else None),
                reason=reason,
                showdown={
                    str(s): {"cards": hb.hole(s), "rank": describe(hands[s])}
                    for s in sorted(hands)
                    if s in public and s in eligible and len(eligible) > 1
                },
            )
        )
    return True, changes
