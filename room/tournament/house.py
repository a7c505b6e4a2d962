"""The tournament procedures where the houses' texts differ from TDA 2019: data, not forks.

Each field's default is the Poker TDA 2019 rule; each house's value cites its article. Where a
house text is silent, the field keeps the value its own text falls back on: the Casinò di
Venezia tournament rules defer to the TDA code ("disciplinati dal Codice di Gara della TDA",
preamble); the Casinos Austria tournament rules defer to the house's technical rules (art. 1),
which this project does not have, so only what their text says is applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kernel.errors import ConfigError

Mover = Literal["next_big_blind", "big_blind"]
BalanceTrigger = Literal["difference", "short_of_table_size"]
BustSharing = Literal["all_share", "tables_share"]
FinalDraw = Literal["random", "casinos_austria"]
ButtonDraw = Literal["per_table", "one_for_all"]
BreakDraw = Literal["two_step", "random"]
FinalTable = Literal["rp9", "table_size", "plus_one"]


@dataclass(frozen=True, slots=True)
class HouseRules:
    """How one house runs the tournament floor (`profile` of the tournament file)."""

    name: str
    document: str  # how the docs and the floor page cite the house's text
    # Who moves to balance (TDA 11-A: "the player to be big blind next").
    mover: Mover = "next_big_blind"
    mover_rule: str = "11-A"
    # When a table is short enough to balance (TDA: the tables kept within
    # `balance_difference` players; 11-D halts play 3 or more short of the fullest).
    balance_trigger: BalanceTrigger = "difference"
    balance_rule: str = "11-A"
    halt_short_tables: bool = True  # TDA 11-D
    # Players from a broken table: a 2-step random draw (TDA 10 and its addendum).
    break_draw: BreakDraw = "two_step"
    break_rule: str = "10"
    break_order_rule: str = "11-C"
    # Final table size from the table size (TDA RP-9), or as the house says.
    final_table: FinalTable = "rp9"
    final_table_rule: str = "RP-9"
    final_draw: FinalDraw = "random"
    final_draw_rule: str = "7"
    button_draw: ButtonDraw = "per_table"
    button_rule: str = "7"
    # Busts in the same hand-for-hand hand (TDA RP-8 A: all share the places paid).
    bust_sharing: BustSharing = "all_share"
    bust_sharing_rule: str = "RP-8A"
    heads_up_time_factor: float = 1.0  # levels run at this fraction once heads-up
    heads_up_rule: str = ""
    late_rule: str = "8-A"
    disqualify_rule: str = "71-D"  # the chips of a disqualified player leave play


TDA_2019 = HouseRules(name="tda-2019", document="Poker TDA Rules 2019")

# Casinò di Venezia, tournament rules (Poker Hour). The preamble makes the TDA code apply
# where these articles are silent.
VENEZIA = HouseRules(
    name="venezia",
    document="Casinò di Venezia, tournament rules",
    # art. 5: "i giocatori saranno spostati dalla posizione di big blind alla posizione di
    # maggior svantaggio del nuovo tavolo": the player in the big blind of the hand just
    # played moves (TDA 11-A: the player to be big blind next).
    mover="big_blind",
    mover_rule="Venezia art. 5",
    # art. 5: "Si necessita di bilanciare un tavolo con tre o più giocatori in meno del
    # numero previsto dal torneo": a table 3 or more below the event's table size.
    balance_trigger="short_of_table_size",
    balance_rule="Venezia art. 5",
    # art. 3: seats drawn at random, by hand or electronically; art. 4: players from a broken
    # table take any seat, not dealt in between the button and the small blind.
    break_draw="random",
    break_rule="Venezia art. 4",
    # art. 6: the final table of flop games has 7, 8, 9 or 10 players as the event says
    # (`final_table_size` in the tournament file; by default the table size).
    final_table="table_size",
    final_table_rule="Venezia art. 6",
    late_rule="Venezia art. 3",
    disqualify_rule="Venezia art. 44",
)

# Casinos Austria, tournament rules (Italian edition).
CASINOS_AUSTRIA = HouseRules(
    name="casinos-austria",
    document="Casinos Austria, tournament rules",
    # art. 22: the player who is big blind in the next hand leaves and takes the worst
    # position at the new table (as TDA 11-A).
    mover_rule="Casinos Austria art. 22",
    balance_rule="Casinos Austria art. 22",
    # No halting of short tables in the text (TDA 11-D is not theirs).
    halt_short_tables=False,
    # art. 35: players from a closed table take any seat, not dealt in between the button
    # and the small blind; art. 3: seats by lot.
    break_draw="random",
    break_rule="Casinos Austria art. 35",
    # art. 39 (breaking of tables): from the highest table number, or an order announced
    # before the start; art. 3: tables added later close first.
    break_order_rule="Casinos Austria art. 39",
    # art. 40 (players at the final table): a full table plus one, at most 10.
    final_table="plus_one",
    final_table_rule="Casinos Austria art. 40",
    # art. 37: the final table's draw by the positions the players would have had.
    final_draw="casinos_austria",
    final_draw_rule="Casinos Austria art. 37",
    # art. 6: the button drawn at one table goes on that seat at every table.
    button_draw="one_for_all",
    button_rule="Casinos Austria art. 6",
    # art. 40 (hand by hand): busts at different tables share; at the same table the player
    # with more chips at the start of the hand finishes higher.
    bust_sharing="tables_share",
    bust_sharing_rule="Casinos Austria art. 40",
    # art. 42: once only two players are left, each level lasts half as long.
    heads_up_time_factor=0.5,
    heads_up_rule="Casinos Austria art. 42",
    late_rule="Casinos Austria art. 19",
    disqualify_rule="Casinos Austria art. 45",
)

HOUSES = {h.name: h for h in (TDA_2019, VENEZIA, CASINOS_AUSTRIA)}


def house(name: str) -> HouseRules:
    """The house rules called `name`; ConfigError naming the known ones otherwise."""
    try:
        return HOUSES[name]
    except KeyError:
        raise ConfigError(
            f"tournament profile {name!r} is not known: one of {', '.join(HOUSES)}"
        ) from None


def final_table_size(rules: HouseRules, seats_per_table: int, configured: int | None) -> int:
    """How many players make the final table: the tournament file's `final_table_size` if
    given; else a full table plus one at most 10 (Casinos Austria art. 40), or TDA RP-9
    (9- and 8-handed events: 9; 7- and 6-handed: 7; other sizes: a full table)."""
    if configured is not None:
        return configured
    if rules.final_table == "plus_one":
        return min(seats_per_table + 1, 10)
    if rules.final_table == "rp9" and seats_per_table in (8, 9):
        return 9
    if rules.final_table == "rp9" and seats_per_table in (6, 7):
        return 7
    return seats_per_table
