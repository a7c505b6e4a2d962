"""Rule profiles: house rule sets as data over TDA 2019, and their own rule numbering."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from controller.rules import RuleError
from controller.rules.betting import Action, substantial_action
from kernel.errors import ConfigError

__all__ = [
    "PROFILES",
    "FourCardFlop",
    "HandStart",
    "HandStartTrigger",
    "Numbering",
    "OddChipUnit",
    "PrematureCard",
    "Profile",
    "Rake",
    "ShowdownOrder",
    "SingleExposedCard",
    "Straddle",
    "cite",
    "get_profile",
    "misdeal_allowed",
    "rake_amount",
    "rule_ref",
]

# What the house text says starts a hand.
HandStart = Literal[
    "riffle_shuffler_or_push",  # TDA 2019 23: first riffle, shuffler button, or dealer push
    "riffle_or_shuffler",  # first riffle; with a shuffle machine, its (green) button
    "dealer_lift",  # when the dealer lifts the cards
]
# Input events (docs/trace-format.md) the engine may take as the start of a hand.
HandStartTrigger = Literal[
    "shuffler",  # {"event": "button", "name": "shuffler"}
    "dealer_push",  # a dealer's badge at the table (the dealer push, rule 23)
    "first_card",  # the first card read at a seatN antenna while no hand is in progress
]
SingleExposedCard = Literal[
    "unspecified",  # the text has no procedure for one exposed card after the first two
    "replace_as_burn",  # deal goes on; the card is replaced by the top card and burned
]
FourCardFlop = Literal[
    "scramble_floor_picks_burn",  # TDA 2019 39: scramble face down, floor draws the burn
    "unspecified",
]
PrematureCard = Literal[
    "rp5",  # TDA 2019 RP-5 A/B/C
    "keep_unexposed",  # the unexposed board and burns stay in the stub for the new board
    "unspecified",
]
OddChipUnit = Literal["smallest_chip", "blind_or_ante"]
ShowdownOrder = Literal[
    "last_aggressor_else_first_left",  # TDA 2019 17-A
    "last_aggressor",  # no order given when there was no bet on the last street
]

_RULE = re.compile(r"^(RP-?\d{1,2}|\d{1,2})(?:-?([A-H])(?:-?(\d))?)?$")
_TDA2019_RULES = frozenset({str(n) for n in range(1, 72)} | {f"RP-{n}" for n in range(1, 15)})


@dataclass(frozen=True)
class Straddle:
    """A voluntary blind posted before the deal by the seat left of the big blind."""

    multiple: int  # times the big blind
    acts_last_preflop: bool  # the straddler acts last on the first round, and may raise


@dataclass(frozen=True)
class Rake:
    """The house's cut of a pot, in the table's money units (chips are the currency)."""

    percent: int
    cap: int
    pot_step: int  # the pot is rounded down to a multiple of this before the percentage
    no_flop_no_drop: bool
    main_pot_first: bool  # taken from the main pot, the shortfall from the side pots


@dataclass(frozen=True)
class Numbering:
    """How a profile numbers its rules, as a translation of TDA 2019 rule numbers.

    ``rules`` maps a TDA 2019 rule (``"23"``, ``"RP-5"``) to the profile's own;
    ``None`` for the whole table means the TDA 2019 numbering itself. ``parts``
    maps one part (``"35A5"``, ``"35E"``: rule, letter, digit, no dashes) to the
    profile's reference, or ``None`` when that part has no equivalent.
    ``carry_parts`` lists the TDA 2019 rules whose part letters/digits are the
    same in the profile: ``"35A-2"`` becomes ``"34A-2"``; other rules translate
    to the whole rule. Without an equivalent the TDA 2019 number is given with
    ``fallback`` before it.
    """

    rules: Mapping[str, str] | None = None
    parts: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    carry_parts: frozenset[str] = frozenset()
    fallback: str = "TDA "


@dataclass(frozen=True)
class Profile:
    """One rule set. Defaults are TDA 2019; every other value cites the house text's article."""

    name: str
    title: str
    source: str  # the house document the values were taken from (publisher, title, edition)
    hand_start: HandStart = "riffle_shuffler_or_push"  # TDA 2019 23
    hand_start_triggers: tuple[HandStartTrigger, ...] = ("shuffler", "dealer_push")
    misdeal_max_actions: int | None = None  # None: until substantial action (35-D, 36)
    misdeal_exposed_downcards: int | None = 2  # 35A-5: 1 of the first 2, or any 2 exposed
    single_exposed_card: SingleExposedCard = "unspecified"  # TDA 2019 has no hold'em rule
    misdeal_extra_cards: int = 1  # 35A ("not necessarily limited to"): an extra card
    four_card_flop: FourCardFlop = "scramble_floor_picks_burn"  # TDA 2019 39
    premature_card: PrematureCard = "rp5"  # TDA 2019 RP-5
    straddle: Straddle | None = None  # TDA 2019 has no straddle
    rake: Rake | None = None  # tournament rules: no rake
    odd_chip_unit: OddChipUnit = "smallest_chip"  # TDA 2019 20
    showdown_order: ShowdownOrder = "last_aggressor_else_first_left"  # TDA 2019 17-A
    undercall_always_full_call: bool = False  # TDA 2019 51-B: only heads-up or vs the opener
    limit_raise_cap: int | None = None  # TDA 2019 48: "the house limit applies"
    limit_cap_lifted_heads_up_in_hand: bool = False  # TDA 2019 48: when the event is heads-up
    last_chips_all_in: bool = True  # TDA 2019 45-B2: a bet of the last chips is an all-in
    # TDA 2019 30: a player away is dealt in and the hand killed. A house break that keeps
    # the seat, deals the player out and has the missed blinds paid on return: True.
    away_sits_out: bool = False
    two_motion_raise: bool = False  # TDA 2019 42: "2-motion raises eliminated in 2019"
    numbering: Numbering = field(default_factory=Numbering)

    @property
    def straddle_allowed(self) -> bool:
        """Whether the house allows a straddle."""
        return self.straddle is not None


# --------------------------------------------------------------------------- numbering tables

# TDA 2019 -> TDA 2015, matched on the rule titles of the two texts (the 2015 title in
# the comment where the numbers differ). 2019 rules 4, 15, 37, 38, 52, 55, RP-8,
# RP-10..RP-14 are new.
_TDA2015 = Numbering(
    rules=MappingProxyType(
        {
            "1": "1",
            "2": "2",
            "3": "3",
            "5": "4",  # electronic devices
            "6": "5",  # official language
            "7": "6",  # random seating
            "8": "7",  # late registration, re-entries
            "9": "8",  # special needs
            "10": "9",  # breaking tables
            "11": "10",  # balancing
            "12": "12",
            "13": "13",
            "14": "14",
            "16": "15",  # face up for all-ins
            "17": "16",  # showdown order
            "18": "17",  # asking to see a hand
            "19": "18",  # playing the board
            "20": "19",  # odd chips
            "21": "20",  # side pots
            "22": "21",  # disputed pots
            "23": "22",  # new hand & new limits
            "24": "23",  # chip race
            "25": "24",  # chips visible
            "26": "25",  # deck changes
            "27": "26",  # re-buys
            "28": "28",  # rabbit hunting
            "29": "27",  # calling for a clock
            "30": "29",  # at your seat
            "31": "30",  # at the table with action pending
            "32": "31",  # dead button
            "33": "32",  # dodging blinds
            "34": "33",  # button in heads-up
            "35": "34",  # misdeals
            "36": "35",  # substantial action
            "39": "36",  # four-card flops and premature cards
            "40": "37",  # methods of betting
            "41": "41",  # methods of calling
            "42": "42",  # methods of raising
            "43": "43",  # raise amounts
            "44": "45",  # overchips
            "45": "46",  # multiple-chip betting
            "46": "47",  # prior bet chips not pulled in
            "47": "44",  # re-opening the bet
            "48": "48",  # number of raises
            "49": "49",  # accepted action
            "50": "38",  # acting in turn
            "51": "39",  # binding declarations / undercalls
            "53": "40",  # action out of turn
            "54": "50",  # pot size & pot-limit bets
            "56": "51",  # string bets
            "57": "52",  # non-standard & unclear betting
            "58": "53",  # non-standard folds
            "59": "54",  # conditional declarations
            "60": "55",  # count of opponent's stack
            "61": "56",  # over-betting expecting change
            "62": "57",  # all-in with chips found behind
            "63": "58",  # chips out of view
            "64": "59",  # lost and found chips
            "65": "60",  # accidentally killed / fouled hands
            "66": "61",  # dead hands in stud
            "67": "62",  # no disclosure
            "68": "63",  # exposing cards
            "69": "64",  # ethical play
            "70": "65",  # etiquette violations
            "71": "66",  # penalties
            "RP-1": "RP-1",
            "RP-2": "RP-2",
            "RP-3": "RP-3",
            "RP-4": "RP-4",
            "RP-5": "RP-5",
            "RP-6": "RP-6",
            "RP-7": "RP-7",
            "RP-9": "11",  # final-table size was a rule in 2015
        }
    ),
    parts=MappingProxyType(
        {
            "35A5": "34A-6",  # 2015's A-5 is stud, A-6 the flop-game exposure
            "35E": None,  # fouled decks: not in 2015's 34 (A-D only)
            "46C": None,  # 2015's 47 has A and B only
            "51C": None,  # 2015's 39 has A and B only
        }
    ),
    # Rules whose lettering is the same in both texts (checked part by part).
    carry_parts=frozenset(
        {"11", "13", "17", "18", "20", "24", "25", "35", "36", "41", "42", "43", "46"}
        | {"50", "51", "53", "54", "71", "RP-4", "RP-5"}
    ),
    fallback="TDA 2019 ",
)

# TDA 2019 -> articles of the Casinò di Venezia tournament rules.
_VENEZIA = Numbering(
    rules=MappingProxyType(
        {
            "2": "art. 1",
            "6": "art. 2",
            "7": "art. 3",
            "10": "art. 4",
            "11": "art. 5",
            "RP-9": "art. 6",
            "12": "art. 7",
            "16": "art. 8",
            "17": "art. 10",  # showdown order
            "20": "art. 11",  # odd chips
            "19": "art. 12",  # both cards to win a share
            "21": "art. 13",
            "22": "art. 14",
            "24": "art. 15",
            "26": "art. 16",
            "23": "art. 17",  # new level / hand start
            "27": "art. 18",
            "29": "art. 19",
            "28": "art. 20",
            "30": "art. 21",
            "31": "art. 22",
            "32": "art. 23",
            "33": "art. 24",
            "34": "art. 25",
            "35": "art. 26",  # misdeal
            "36": "art. 27",  # substantial action
            "39": "art. 28",  # four-card flop
            "RP-5": "art. 29",  # premature board
            "50": "art. 30",  # acting in turn
            "51": "art. 30A",  # undercall
            "41": "art. 31",
            "42": "art. 32",
            "43": "art. 33",
            "47": "art. 33",  # short all-in does not re-open
            "44": "art. 34",  # overchip
            "53": "art. 35",  # action out of turn
            "48": "art. 36",
            "54": "art. 37",
            "49": "art. 38",
            "56": "art. 39",
            "25": "art. 40",  # chips visible
            "63": "art. 40",  # transporting chips
            "65": "art. 41",  # unprotected hands
            "59": "art. 42",
            "61": "art. 43",
            "71": "art. 44",
            "67": "art. 45",
            "68": "art. 46",
            "69": "art. 47",
            "70": "art. 48",
        }
    ),
    parts=MappingProxyType(
        {
            "35A5": "art. 26A-6",  # item 6 is the flop-game exposure
            "35A": "art. 26A",
            "35B": "art. 26A",  # (button may get two consecutive cards)
            "35C": "art. 26B",  # exact re-play
            "35D": "art. 26C",  # no misdeal after substantial action
            "35E": None,  # fouled decks: not in art. 26
        }
    ),
    carry_parts=frozenset({"50", "53"}),  # art. 30 A/B and art. 35 A/B match 50 and 53
)

# TDA 2019 -> articles of the Casinos Austria tournament rules. The text repeats some
# numbers (14, 36, 39, 40, 41, 42): those carry the article's title.
_CASINOS_AUSTRIA = Numbering(
    rules=MappingProxyType(
        {
            "1": "art. 1",
            "2": "art. 2",
            "7": "art. 3",  # (the text prints the title before the number)
            "31": "art. 4",
            "6": "art. 5",
            "30": "art. 7",
            "44": "art. 8",  # single overchip
            "51": "art. 8",  # an insufficient bet must be completed
            "56": "art. 8",  # string bets
            "23": "art. 9",  # the hand starts when the dealer lifts the cards
            "54": "art. 10",
            "43": "art. 11",
            "45": "art. 11",  # two 500s at 300-600 is a call
            "47": "art. 11",
            "48": "art. 12",
            "42": "art. 13",
            "16": "art. 14 (All-in Showdown)",
            "17": "art. 14 (Showdown (1))",
            "13": "art. 15",
            "19": "art. 16",
            "21": "art. 17",
            "27": "art. 18",
            "8": "art. 19",
            "63": "art. 20",
            "33": "art. 21",
            "11": "art. 22",
            "32": "art. 23",
            "35": "art. 24",  # misdeal
            "65": "art. 25",
            "50": "art. 26",
            "53": "art. 26",
            "12": "art. 27",
            "68": "art. 28",
            "69": "art. 30",
            "24": "art. 31",
            "20": "art. 32",
            "25": "art. 33",
            "28": "art. 34",
            "10": "art. 35",
            "29": "art. 36 (Calling for a Clock)",
            "RP-8": "art. 40 (Hand by Hand)",
            "RP-9": "art. 40 (Numero dei giocatori al tavolo della finale)",
            "34": "art. 41 (Heads-Up)",
            "67": "art. 41 (Rispetto)",
            "26": "art. 42 (Mazzo di Poker)",
            "5": "art. 43",
            "70": "art. 44",
            "71": "art. 45",
        }
    ),
    parts=MappingProxyType({"35E": None}),  # fouled decks: not in art. 24
)

# Casinò di Campione house rules: its own sections have titles, not numbers; the TDA text it
# includes (in Italian and English) is the 2019 numbering, so everything else stays "TDA n".
_CAMPIONE = Numbering(
    rules=MappingProxyType({}),
    parts=MappingProxyType(
        {
            "35A": 'sez. "Forme di misdeal"',
            "51B": 'sez. "Dead Money"',
        }
    ),
)


# --------------------------------------------------------------------------- profiles

_PROFILES = (
    Profile(
        name="tda-2019",
        title="Poker TDA 2019 Rules and Recommended Procedures",
        source="Poker TDA, 2019 Rules and Recommended Procedures, with the Illustration Addendum",
    ),
    Profile(
        name="tda-2015",
        title="Poker TDA 2015 Rules (Italian translation)",
        source="Poker TDA, 2015 Rules, Italian translation (C. Scalzi, F. Stefanini)",
        # 2015 rule 22: riffle, shuffler button or dealer change: same as 2019 23.
        # 2015 rules 34 + 35: misdeal until substantial action, same as 2019.
        # 2015 rule 46 (2019's 45): every multiple-chip push to the 50% standard of 2015 43,
        # last chips included (no 45-B2); 2015 43-A: under 50% "si tratta di un call".
        last_chips_all_in=False,
        two_motion_raise=True,  # 2015 rule 42 C: "raise", the call, then the raise
        numbering=_TDA2015,
    ),
    Profile(
        name="venezia",
        title="Casinò di Venezia: regolamento tornei poker",
        source="Casinò di Venezia, Regolamento tornei poker (Poker Hour)",
        hand_start="riffle_or_shuffler",  # art. 17: green button of the shuffle machine
        hand_start_triggers=("shuffler",),  # art. 17: a dealer change does not start a hand
        premature_card="keep_unexposed",  # art. 29
        numbering=_VENEZIA,
    ),
    Profile(
        name="casinos-austria",
        title="Casinos Austria: regolamento dei tornei (Italian)",
        source="Casinos Austria, Turnier Reglement, Italian edition",
        hand_start="dealer_lift",  # art. 9
        hand_start_triggers=("first_card",),  # lifting the cards = the first card at a seat
        misdeal_max_actions=2,  # art. 24: two or more moves and the hand stands
        misdeal_exposed_downcards=None,  # art. 24: only the first or second card
        misdeal_extra_cards=2,  # art. 24: "ulteriori due o più carte"
        four_card_flop="unspecified",  # none; art. 1 defers to the CASAG rules
        premature_card="unspecified",  # none in the text
        odd_chip_unit="blind_or_ante",  # art. 32
        showdown_order="last_aggressor",  # art. 14 Showdown (1)
        undercall_always_full_call=True,  # art. 8
        limit_raise_cap=3,  # art. 12
        limit_cap_lifted_heads_up_in_hand=True,  # art. 12
        numbering=_CASINOS_AUSTRIA,
    ),
    Profile(
        name="campione",
        title="Casinò di Campione: regole della casa (with TDA 2019)",
        source="Casinò di Campione, house rules (sections by title), with TDA 2019",
        single_exposed_card="replace_as_burn",  # "Forme di misdeal"
        misdeal_extra_cards=2,  # "Forme di misdeal": "due o più carte in eccesso"
        straddle=Straddle(multiple=2, acts_last_preflop=True),  # "Puntate aggiuntive"
        rake=Rake(  # "Rake"
            percent=5,
            cap=25,
            pot_step=20,
            no_flop_no_drop=True,
            main_pot_first=True,
        ),
        undercall_always_full_call=True,  # "Dead Money"
        away_sits_out=True,  # "Gestione pause": seat kept, missed blinds paid on return
        numbering=_CAMPIONE,
    ),
)

PROFILES: Mapping[str, Profile] = MappingProxyType({p.name: p for p in _PROFILES})


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ConfigError naming the valid ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError(
            f"unknown rule profile {name!r}: valid profiles are {', '.join(PROFILES)}"
        ) from None


# --------------------------------------------------------------------------- rule numbers


def _parse(tda2019_rule: str) -> tuple[str, str, str]:
    """Split ``"35A-2"`` into (``"35"``, ``"A-2"``, ``"35A2"``); RuleError if not a 2019 rule."""
    text = tda2019_rule.strip().upper()
    m = _RULE.match(text)
    base = m.group(1) if m else ""
    if base.startswith("RP") and not base.startswith("RP-"):
        base = "RP-" + base[2:]
    if m is None or base not in _TDA2019_RULES:
        raise RuleError(f"not a TDA 2019 rule number: {tda2019_rule!r}")
    letter, digit = m.group(2) or "", m.group(3) or ""
    suffix = text[len(m.group(1)) :]
    return base, suffix, base + letter + digit


def rule_ref(profile: Profile, tda2019_rule: str) -> str:
    """The profile's own reference for a TDA 2019 rule (``"23"`` -> ``"22"`` in tda-2015).

    Without an equivalent in the profile the TDA 2019 number is returned with the
    profile's fallback prefix (``"TDA 37"``, ``"TDA 2019 37"`` in tda-2015).
    """
    base, suffix, key = _parse(tda2019_rule)
    numbering = profile.numbering
    rule = base + suffix
    if numbering.rules is None:
        return rule
    for candidate in (key, key[: len(base) + 1]):
        if len(candidate) > len(base) and candidate in numbering.parts:
            own = numbering.parts[candidate]
            return numbering.fallback + rule if own is None else own
    own_rule = numbering.rules.get(base)
    if own_rule is None:
        return numbering.fallback + rule
    return own_rule + suffix if base in numbering.carry_parts else own_rule


def cite(profile: Profile, tda2019_rule: str) -> dict[str, str]:
    """Event fields for a rule: ``rule`` (TDA 2019, binding) and ``profile_rule`` (the house's)."""
    base, suffix, _ = _parse(tda2019_rule)
    return {"rule": base + suffix, "profile_rule": rule_ref(profile, tda2019_rule)}


# --------------------------------------------------------------------------- procedures


def misdeal_allowed(profile: Profile, actions: Iterable[str | Action]) -> bool:
    """Whether a misdeal may still be declared after these actions in turn (blinds excluded).

    TDA 2019 35-D/36: until substantial action. A profile with ``misdeal_max_actions``
    counts actions of any kind instead (Casinos Austria art. 24: two moves).
    """
    taken = list(actions)
    if profile.misdeal_max_actions is None:
        return not substantial_action(taken)
    return len(taken) < profile.misdeal_max_actions


def rake_amount(rake: Rake, pot: int, *, flop_dealt: bool) -> int:
    """The rake of a pot: the pot rounded down to ``pot_step``, times ``percent``, capped.

    Campione's examples (house rules, "Rake"): 18 -> 0, 79 -> 3, 132 -> 6, 339 -> 16; no
    flop, no drop.
    """
    if pot < 0:
        raise RuleError(f"negative pot {pot}")
    if rake.no_flop_no_drop and not flop_dealt:
        return 0
    rounded = pot // rake.pot_step * rake.pot_step
    return min(rounded * rake.percent // 100, rake.cap)
