"""The rule index: every rule the table cites, and where it is enforced (`docs/rules.md`).

A rule is keyed as events cite it (`rule`): the TDA 2019 number with its part
(`"35A-2"`, `"53-A"`, `"RP-5A"`), or a house rule's name (`"straddle"`,
`"fixed-limit"`). `where` names the code that enforces it, as `module:qualname`;
`profiles` says what the house profiles (`controller/rules/profiles.py`) change.

`lookup("35")` gives every part of rule 35; `docs/rules.md` is `markdown()`, regenerated
with `python -m controller.rules.index > docs/rules.md` (a test checks it is current).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INDEX", "Entry", "key", "lookup", "markdown"]

_ENGINE = "controller.engine"
_PROC = "controller.engine.procedures"
_DEAL = "controller.engine.dealing:HandDealing"
_BET = "controller.engine.betting_flow:HandBetting"
_RULE = "controller.engine.betting"  # the betting rules, one module per rule
_ROUND = "controller.rules.betting:BettingRound"
_PUSH = "controller.rules.chips:_Push"


@dataclass(frozen=True)
class Entry:
    """One rule as cited, what it says in short, and where it is enforced."""

    rule: str
    title: str
    where: tuple[str, ...]
    profiles: str = ""  # what the house profiles change, and whether the engine reads it

    @property
    def key(self) -> str:
        """The rule without dashes, as test names carry it (`35A2`, `RP5A`, `53A`)."""
        return key(self.rule)


def key(rule: str) -> str:
    """A rule reference without dashes or case: `"35A-2"` -> `"35A2"`, `"RP-5A"` -> `"RP5A"`."""
    return rule.replace("-", "").upper()


INDEX: tuple[Entry, ...] = (
    Entry(
        "1",
        "Floor decisions: the floor rules where the text or the readers give no answer",
        (
            "controller.engine.inputs.buttons:_floor",
            f"{_DEAL}.floor_ruled",
            f"{_DEAL}._streets_as_ruled",
            "controller.engine.hands:complete_hand",
            f"{_RULE}.award_12_20:award",
            f"{_PROC}.base:FloorCall",
        ),
        "every house text with no procedure for an error calls the floor (`floor_call`)",
    ),
    Entry(
        "8",
        "New players: any seat, but not dealt in between the button and the small blind",
        ("controller.engine.positions:waits_for_button", "controller.engine.inputs.commands:_seat"),
    ),
    Entry(
        "10",
        "Players from a broken table: dealt in except between the button and the small blind",
        ("controller.engine.positions:waits_for_button",),
    ),
    Entry(
        "12",
        "Cards speak: the best hand read on the antennas wins",
        (f"{_RULE}.award_12_20:award", "controller.rules.handeval:evaluate"),
    ),
    Entry("13-B", "A hand mucked at showdown is dead", (f"{_BET}.fold",)),
    Entry(
        "13-C",
        "A tabled winner cannot be killed: the antennas cannot see a tabled hand, so a hand "
        "mucked at showdown that was the best hand read calls the floor (`floor_needed`)",
        (f"{_RULE}.mucked_winner_13c:best_hand_mucked",),
    ),
    Entry(
        "15-B",
        "The uncalled bet goes back to its owner, also a bettor who discards before the others "
        "act (its uncalled part at once; the others face the largest bet still standing)",
        (
            "controller.rules.pots:uncalled",
            f"{_RULE}.award_12_20:award",
            f"{_RULE}.uncalled_15b_65a:return_uncalled",
        ),
    ),
    Entry(
        "16",
        "Face up for all-ins once betting is complete; a tabled or called all-in hand stays "
        "live (its cards reaching the muck call the floor)",
        (
            f"{_RULE}.tabled_16:maybe_table",
            f"{_BET}.showdown",
            f"{_BET}.fold",
            f"{_RULE}.allin_live_16:allin_hand_to_muck",
        ),
    ),
    Entry(
        "17-A",
        "Showdown order: the last aggressor shows first, else the first seat left of the button",
        (f"{_BET}.showdown", "controller.rules.betting:showdown_order"),
        "`showdown_order` (casinos-austria `last_aggressor`: the hand's last bet or raise shows "
        "first, whatever the street): honoured",
    ),
    Entry(
        "20",
        "Odd chips are broken down to the smallest chip in play",
        (
            "controller.rules.pots:split_pot",
            "controller.rules.pots:division_unit",
            f"{_RULE}.award_12_20:award",
            "controller.engine.spec:EngineSpec",
        ),
        "`odd_chip_unit` (casinos-austria `blind_or_ante`: divided down to the small blind, "
        "every odd unit to the first winner left of the button): honoured",
    ),
    Entry(
        "20-A",
        "The odd chip goes to the first seat left of the button",
        ("controller.rules.pots:split_pot", "controller.rules.pots:award"),
    ),
    Entry(
        "21",
        "Side pots: each awarded on its own, side pots first",
        ("controller.rules.pots:build_pots", "controller.rules.pots:award"),
    ),
    Entry(
        "23",
        "A new hand starts once (shuffler, dealer push); a new level from the next hand, or "
        "corrected into a hand started at the prior level before substantial action",
        (
            "controller.engine.hands:start_hand",
            "controller.engine.hands:not_dealt_yet",
            "controller.engine.hands:level_announced",
            "controller.engine.inputs.buttons:_shuffler",
            "controller.engine.inputs.badges:_dealer_push",
            "controller.engine.inputs.commands:_level",
        ),
        "`hand_start_triggers`: venezia the shuffler only; casinos-austria the first card "
        "lifted (`first_card`): honoured",
    ),
    Entry(
        "30",
        "A player away from the table is dealt in and the hand killed after the deal",
        (
            f"{_PROC}.away_30_penalty_71c:kills",
            f"{_PROC}.away_30_penalty_71c:absent_at_deal",
            "controller.engine.inputs.commands:_away",
        ),
    ),
    Entry(
        "32",
        "Dead button: the big blind moves one player each hand",
        ("controller.engine.positions:next_positions",),
        "every profile: each house text plays a dead button (no profile field)",
    ),
    Entry(
        "34",
        "Heads-up: the button posts the small blind and acts first pre-flop",
        (
            "controller.engine.positions:fresh_positions",
            "controller.engine.positions:next_positions",
            "controller.rules.betting:street_order",
        ),
    ),
    Entry(
        "35A",
        "Misdeal: an extra card, or a misdeal the dealer declares",
        (
            f"{_PROC}.misdeal_35:MISDEAL_REASONS",
            f"{_PROC}.misdeal_35:short_seat",
            f"{_PROC}.misdeal_35:extra_card_floor_call",
            f"{_DEAL}._extra_card",
        ),
        "`misdeal_extra_cards`: casinos-austria and campione need two extra cards, one calls "
        "the floor: honoured",
    ),
    Entry("35A-1", "Misdeal: two or more boxed cards on the deal", (f"{_DEAL}.boxed",)),
    Entry("35A-2", "Misdeal: the first card dealt to the wrong seat", (f"{_DEAL}.hole_card",)),
    Entry("35A-3", "Misdeal: a card dealt to a seat not entitled to one", (f"{_DEAL}.hole_card",)),
    Entry(
        "35A-4",
        "Misdeal: a seat entitled to a hand was dealt out (after substantial action: 38)",
        (f"{_DEAL}.end_of_deal",),
    ),
    Entry(
        "35A-5",
        "Misdeal: one of the first two cards, or two cards in all, exposed by the dealer",
        (f"{_PROC}.exposed_card_35a5:pressed", f"{_PROC}.exposed_card_35a5:ExposedCard"),
        "`misdeal_exposed_downcards` (casinos-austria: the first two only), "
        "`single_exposed_card` (campione: replaced and burned): honoured",
    ),
    Entry(
        "35B",
        "Two consecutive cards to the button are no misdeal",
        (f"{_DEAL}.hole_card", f"{_DEAL}._deal_order"),
    ),
    Entry(
        "35C",
        "The re-deal is an exact re-play: same button, blinds and players",
        (
            f"{_PROC}.misdeal_35:Misdeal",
            f"{_DEAL}.misdeal",
            f"{_DEAL}.restore_posted",
            f"{_PROC}.misdeal_35:redeal_same_hand",
            f"{_PROC}.misdeal_35:not_collected",
            f"{_PROC}.misdeal_35:chips_before_redeal",
            f"{_DEAL}.chips_set_aside",
        ),
    ),
    Entry(
        "35D",
        "No misdeal after substantial action, unless the floor rules one",
        (
            f"{_PROC}.misdeal_35:refused",
            f"{_PROC}.misdeal_35:panel_reason",
            "controller.rules.profiles:misdeal_allowed",
        ),
        "`misdeal_max_actions` (casinos-austria: two actions of any kind): honoured",
    ),
    Entry(
        "35E",
        "A fouled deck (foreign or duplicate card): play stops, every bet is returned",
        (
            f"{_PROC}.fouled_deck_35e:stopped",
            "controller.engine.hands:fouled_deck",
            "controller.engine.inputs.tags:_resolve",
            "controller.engine.inputs.cards:_read_twice",
        ),
    ),
    Entry(
        "36",
        "Substantial action: two actions with chips in, or any three",
        ("controller.rules.betting:substantial_action",),
    ),
    Entry(
        "37",
        "The button dealt too few cards is completed from the stub, unless it acts first",
        (f"{_PROC}.button_short_37:ButtonShort", f"{_PROC}.button_short_37:short"),
    ),
    Entry(
        "38",
        "Wrong number of cards after substantial action (a seat dealt out included): the hand "
        "is dead, play goes on, one burn a street",
        (
            f"{_PROC}.dead_hand_38:dead",
            f"{_PROC}.dead_hand_38:dealt_out",
            f"{_PROC}.dead_hand_38:too_few",
            f"{_PROC}.dead_hand_38:killed_card_burned",
            f"{_DEAL}._after_substantial_action",
            f"{_DEAL}._check_burns",
        ),
    ),
    Entry(
        "39",
        "Four-card flop: the floor draws one of the four as the burn; the table is held",
        (
            f"{_PROC}.four_card_flop_39:detected",
            f"{_PROC}.four_card_flop_39:FourCardFlop",
            f"{_PROC}.four_card_flop_39:FlopHold",
            f"{_PROC}.four_card_flop_39:is_four_card_flop",
        ),
        "`four_card_flop` (casinos-austria `unspecified`: the floor rules): honoured",
    ),
    Entry(
        "43-A",
        "A raise of 50% or more of a full raise is held to a full raise",
        (f"{_PUSH}.fifty_percent", f"{_PUSH}.as_declared", f"{_ROUND}.verify_bet_or_raise_to"),
    ),
    Entry(
        "44",
        "A single oversized chip is a call facing a bet, a full bet otherwise; a raise "
        "declared before the chips",
        (f"{_PUSH}.opening", f"{_PUSH}.facing_a_bet", f"{_BET}.declare"),
    ),
    Entry(
        "45-A",
        "Several chips: a call if removing the smallest would leave less than the call",
        (f"{_PUSH}.facing_a_bet",),
    ),
    Entry(
        "45-B1",
        "Several chips short of a full raise: held to it at 50% or more, else a call",
        (f"{_PUSH}.fifty_percent",),
    ),
    Entry(
        "45-B2",
        "Several chips, all-in: the all-in stands even short of a full raise",
        (f"{_PUSH}.fifty_percent",),
    ),
    Entry(
        "46-B",
        "Prior chips pulled back short of the call: an undercall",
        (f"{_PUSH}.up_to_the_call", f"{_BET}.chip_out"),
    ),
    Entry(
        "46-C1",
        "Prior chips not covering the call: only the new chips are judged",
        (f"{_PUSH}.facing_a_bet",),
    ),
    Entry(
        "46-C2",
        "Prior chips covering the call (or partly pulled back): the whole push is judged",
        (f"{_PUSH}.facing_a_bet",),
    ),
    Entry(
        "47-A",
        "A short all-in does not re-open the betting to those who acted",
        (f"{_ROUND}.raise_block",),
    ),
    Entry(
        "47-B",
        "Fixed limit: an all-in of half a bet or more re-opens the betting",
        (f"{_ROUND}.raise_block", f"{_ROUND}.bet_or_raise_to"),
    ),
    Entry(
        "48",
        "Fixed limit: a bet and three raises, even heads-up, until the event is down to two "
        "players (the `level` command's `event_heads_up`)",
        (
            "controller.rules.betting:house_raise_cap",
            "controller.rules.betting:limit_raise_cap",
            f"{_ROUND}.raise_block",
            f"{_BET}._new_round",
        ),
        "`limit_raise_cap` (the house limit, 3 when the text names none), "
        "`limit_cap_lifted_heads_up_in_hand` (casinos-austria art. 12: no cap once two are "
        "left in the hand): honoured",
    ),
    Entry(
        "51-A",
        "A declaration binds: an all-in declared where no raise is open is a call",
        (f"{_PUSH}.as_declared",),
    ),
    Entry(
        "51-B",
        "An undercall is a full call heads-up or facing the opening bet (pre-flop the big "
        "blind); otherwise the floor: a full call, or a fold forfeiting the chips put out",
        (
            "controller.rules.chips:undercall_ruling",
            "controller.rules.chips:facing_opening_bet",
            f"{_PUSH}.as_call",
            f"{_BET}.apply_ruling",
            f"{_RULE}.undercall_51b:undercall",
            f"{_BET}.fold",
        ),
        '`undercall_always_full_call` (casinos-austria art. 8, campione "Dead Money": '
        "always a full call, the floor is offered no fold): honoured; venezia art. 30A is 51-B",
    ),
    Entry(
        "52-A",
        "An opening underbet is corrected to the minimum bet",
        (f"{_PUSH}.opening", f"{_ROUND}.verify_bet_or_raise_to"),
    ),
    Entry(
        "52-B",
        "Pot limit: an overbet is reduced to the pot",
        (f"{_PUSH}.ruling", f"{_ROUND}.pot_limit_max", f"{_ROUND}.verify_bet_or_raise_to"),
    ),
    Entry(
        "53-A",
        "Action out of turn: held, binding if the action to the seat has not changed",
        (
            f"{_ROUND}.hold_out_of_turn",
            f"{_ROUND}.resolve_out_of_turn",
            f"{_RULE}.out_of_turn_53:hold",
            f"{_BET}._close_round",
        ),
    ),
    Entry(
        "53-B",
        "Actions out of turn after a skipped seat bind once they amount to substantial action; "
        "the action backs up and the floor rules on the skipped hand",
        (
            "controller.rules.betting:substantial_action_out_of_turn",
            f"{_RULE}.out_of_turn_53:after_skipped_seat",
            f"{_RULE}.out_of_turn_53:commit_53b",
            f"{_PROC}.skipped_seat_53b:skipped",
            f"{_PROC}.skipped_seat_53b:SkippedHand",
        ),
    ),
    Entry(
        "54-B",
        "Pot limit: a short all-in big blind counts as a full blind",
        (f"{_ROUND}.pot_limit_max",),
    ),
    Entry(
        "55",
        "No check facing a bet; a seat that declared check facing a bet may call or fold, "
        "never raise (its push is held to a call)",
        (f"{_ROUND}.verify_check", f"{_ROUND}.interpret_push", f"{_RULE}.check_55:check"),
    ),
    Entry("55-A", "A call facing no bet is a check", (f"{_ROUND}.call",)),
    Entry(
        "55-B",
        "A raise declared facing no bet is at least the minimum bet",
        (f"{_PUSH}.as_declared",),
    ),
    Entry(
        "58",
        "A fold out of turn, or facing no bet, is binding; an uncalled bet of the folded hand "
        "goes back (15-B)",
        (
            f"{_BET}.fold",
            f"{_RULE}.fold_58:fold_out_of_turn",
            f"{_RULE}.uncalled_15b_65a:return_uncalled",
        ),
    ),
    Entry(
        "65-A",
        "A hand killed with a bet or raise not yet called: the uncalled amount goes back",
        (f"{_BET}.kill", f"{_RULE}.uncalled_15b_65a:return_uncalled"),
    ),
    Entry(
        "71A",
        "Penalties are given in hands or rounds",
        ("controller.engine.inputs.commands:_penalty", "controller.engine.hands:_count_penalties"),
    ),
    Entry(
        "71C",
        "A player on penalty is dealt in and the hand killed after the deal",
        (f"{_PROC}.away_30_penalty_71c:kills",),
    ),
    Entry(
        "RP-1",
        "All-in buttons: the declaration, and the seat's lamp",
        (f"{_BET}.declare", f"{_ENGINE}.engine:Engine.lamps"),
    ),
    Entry(
        "RP-5A",
        "Premature flop: back to the stub, the new flop without another burn",
        (f"{_PROC}.premature_card_rp5:dealt_early", f"{_PROC}.premature_card_rp5:PrematureCard"),
        "`premature_card` (casinos-austria `unspecified`: the floor rules; venezia "
        "`keep_unexposed`, handled as RP-5): honoured",
    ),
    Entry(
        "RP-5B",
        "Premature turn: set aside, the turn dealt with a burn, the river without one",
        (f"{_PROC}.premature_card_rp5:dealt_early", f"{_PROC}.premature_card_rp5:PrematureCard"),
        "as RP-5A",
    ),
    Entry(
        "RP-5C",
        "Premature river: back to the stub, its burn stays, the river without a new burn",
        (f"{_PROC}.premature_card_rp5:dealt_early", f"{_PROC}.premature_card_rp5:PrematureCard"),
        "as RP-5A",
    ),
    Entry(
        "RP-8",
        "Hand-for-hand: the room holds every table after its hand and releases the next one "
        "(the room's `hold`/`release`; the tournament's side is room/tournament/)",
        (
            "controller.engine.inputs.commands:_hold",
            "controller.engine.inputs.commands:_release",
            "controller.engine.hands:close_hand",
        ),
    ),
    Entry(
        "RP-8F",
        "Hand-for-hand: an all-in and call stays face down until the floor instructs (no "
        "rule 16 tabling until then; a board dealt before it is a warning)",
        (f"{_RULE}.tabled_16:maybe_table", f"{_RULE}.tabled_16:instruct", f"{_BET}.board_street"),
    ),
    Entry(
        "RP-11",
        "Big-blind ante: posted by the big blind, dead money in the main pot",
        (f"{_RULE}.forced_bets_rp11:post",),
        "every profile: the room's `level` command sets `bb_ante` (no profile field)",
    ),
    Entry(
        "RP-14",
        "A random choice the rules call for is drawn by the table (the four-card flop's burn)",
        (
            f"{_PROC}.four_card_flop_39:wants_draw",
            f"{_PROC}.four_card_flop_39:draw",
            f"{_PROC}.four_card_flop_39:FourCardFlop.drawn",
        ),
    ),
    Entry(
        "fixed-limit",
        "House betting form (hold'em basics): bets and raises of the fixed size",
        (f"{_PUSH}.ruling", "controller.rules.betting:limit_bet_size"),
        'the table\'s `[rules] game = "flhe"`',
    ),
    Entry(
        "straddle",
        'House rule (Casinò di Campione, "Puntate aggiuntive"): a straddle of two big '
        "blinds by the seat left of the big blind, acting last pre-flop",
        (f"{_RULE}.straddle:try_straddle",),
        "`straddle` (campione): honoured",
    ),
    Entry(
        "rake",
        'House rule (Casinò di Campione, "Rake"): 5% of every pot that saw a flop, the pot '
        "rounded down to 20, capped at 25; from the main pot first",
        (
            "controller.rules.profiles:rake_amount",
            "controller.rules.pots:take_rake",
            f"{_RULE}.award_12_20:rake",
            f"{_RULE}.award_12_20:award",
        ),
        "`rake` (campione): honoured (`pot_awarded.rake`, `hand_completed.rake`, `state.rake`)",
    ),
)

_BY_KEY = {entry.key: entry for entry in INDEX}
_BASE = re.compile(r"^(RP\d{1,2}|\d{1,2})")


def lookup(rule: str) -> list[Entry]:
    """The entries for a rule: `"35A-2"` exactly, `"35"` or `"RP-5"` with every part."""
    wanted = key(rule)
    if wanted in _BY_KEY:
        return [_BY_KEY[wanted]]
    base = _BASE.match(wanted)
    if base is None or base.group(1) != wanted:
        return []
    return [e for e in INDEX if (m := _BASE.match(e.key)) is not None and m.group(1) == wanted]


def _where(place: str) -> str:
    module, _, name = place.partition(":")
    path = module.replace(".", "/") + ".py"
    return f"`{path}` `{name}`" if name else f"`{path}`"


def markdown() -> str:
    """`docs/rules.md`: the index as a table."""
    lines = [
        "# Rule index",
        "",
        "<!-- Generated by `python -m controller.rules.index > docs/rules.md`; edit",
        "     controller/rules/index.py, not this file",
        "     (tests/unit/test_rule_index.py checks it). -->",
        "",
        "Every rule the table cites in its events and alerts (`rule`), with what it says in",
        "short and where the code enforces it. Numbers are the TDA 2019 rules; a house rule",
        "is named. The house profiles' differences are in [profiles.md](profiles.md); the",
        "dealing procedures in [dealing-errors.md](dealing-errors.md); the betting rules in",
        "[betting-rules.md](betting-rules.md). Every rule here has at least one test named",
        "after it (`test_rule_35A2_…`, or a `tests/scenarios/rule_35A2_…` trace).",
        "",
        "| Rule | What | Enforced in | House profiles |",
        "|---|---|---|---|",
    ]
    for entry in INDEX:
        where = "<br>".join(_where(p) for p in entry.where)
        lines.append(f"| {entry.rule} | {entry.title} | {where} | {entry.profiles} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
