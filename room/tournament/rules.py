"""The tournament procedures and the rules they follow, and where each is carried out.

`RULES` lists every rule the tournament cites (in its log, proposals and `rule` fields): the
TDA 2019 number with its part, or a house's article ("Venezia art. 5", "Casinos Austria art.
40"). `python -m room.tournament.rules` prints the table of docs/tournament.md;
tests/unit/test_tournament_rules_index.py checks that every cited rule is here, every place
named exists, and every rule has a test named after it.
"""

from __future__ import annotations

from dataclasses import dataclass

_T = "room.tournament.tournament:Tournament"
_S = "room.tournament.seating"
_C = "room.tournament.clock:Clock"


@dataclass(frozen=True)
class Rule:
    """One rule, what it says in short, where it is carried out."""

    rule: str
    title: str
    where: tuple[str, ...]

    @property
    def key(self) -> str:
        """How a test names it: `test_rule_11A_...`, `test_venezia_art_5_...`."""
        if self.rule.startswith("Venezia art. "):
            return "venezia_art_" + self.rule.removeprefix("Venezia art. ")
        if self.rule.startswith("Casinos Austria art. "):
            return "casinos_austria_art_" + self.rule.removeprefix("Casinos Austria art. ")
        return "rule_" + self.rule.replace("-", "")


RULES: tuple[Rule, ...] = (
    Rule(
        "1",
        "The floor decides: a chip count the floor confirms stands against the table's",
        (f"{_T}._do_move",),
    ),
    Rule(
        "7",
        "Seats drawn at random (the start, the final table, each table's first button)",
        (f"{_T}._on_draw", f"{_S}:draw_seats", f"{_S}:final_table_draw", f"{_S}:button_draws"),
    ),
    Rule(
        "8-A",
        "Late registration and re-entries: a full stack, a seat drawn from those open to new "
        "players; not dealt in between the button and the small blind (the table sees to it)",
        (f"{_T}._on_register", f"{_T}._seat_late", f"{_T}._on_reenter", f"{_T}.late_open"),
    ),
    Rule(
        "8-B",
        "A re-entry that forfeits a stack: those chips leave play",
        (f"{_T}._on_reenter", f"{_T}._applied"),
    ),
    Rule(
        "10",
        "A broken table's players: new tables and seats by a 2-step random draw (addendum)",
        (f"{_S}:two_step_draw", f"{_S}:draw_seats", f"{_T}._do_break"),
    ),
    Rule(
        "11-A",
        "Balancing: the player to be big blind next moves to the worst position (a single big "
        "blind if available, never the small blind)",
        (f"{_S}:mover", f"{_S}:worst_seat", f"{_S}:hands_until_big_blind", f"{_T}._do_move"),
    ),
    Rule(
        "11-C",
        "The table a player moves from, or that breaks, by a predetermined order",
        (f"{_S}:balance_move", f"{_S}:table_to_break"),
    ),
    Rule(
        "11-D",
        "Play halts at a table three or more players short of the fullest",
        (f"{_S}:halted", f"{_T}._halts"),
    ),
    Rule(
        "23",
        "A new level when the clock reaches zero, pushed to every table, from its next hand",
        (f"{_C}.advance", f"{_T}._entered", f"{_T}._holds_and_levels"),
    ),
    Rule(
        "RP-8",
        "Hand-for-hand: every table holds after its hand; the next hand when all are done",
        (f"{_T}._start_h4h", f"{_T}._h4h_progress", f"{_T}._end_h4h"),
    ),
    Rule(
        "RP-8A",
        "Players out in the same hand-for-hand hand share the places paid",
        ("room.tournament.places:place_group", "room.tournament.places:prize_of"),
    ),
    Rule("RP-8B", "Each hand-for-hand hand runs two minutes off the clock", (f"{_C}.run_off",)),
    Rule("RP-8C", "The clock is reduced every hand, not in batches", (f"{_T}._h4h_progress",)),
    Rule("RP-8D", "Levels go up as the hands run the clock down", (f"{_C}.run_off",)),
    Rule(
        "RP-8F",
        "An all-in and call stays face down until the floor instructs (the table's side: "
        "controller/engine, `hands_face_down`)",
        (f"{_T}._h4h_progress", "sim.live_dealer:waits_for_the_floor"),
    ),
    Rule(
        "RP-9",
        "The final table's size from the table size",
        ("room.tournament.house:final_table_size",),
    ),
    Rule("71-D", "A disqualified player's chips leave play", (f"{_T}._on_disqualify",)),
    Rule(
        "Venezia art. 3",
        "Seats drawn at random, by hand or electronically (no 2-step draw required)",
        (f"{_S}:random_draw", f"{_T}._seat_late"),
    ),
    Rule(
        "Venezia art. 4",
        "Players from a closed table take any seat, not dealt in between button and small blind",
        (f"{_T}._do_break",),
    ),
    Rule(
        "Venezia art. 5",
        "Balancing: the player in the big blind moves to the worst position; a table is "
        "balanced once three or more below the event's table size",
        (f"{_S}:mover", f"{_S}:balance_move"),
    ),
    Rule(
        "Venezia art. 6",
        "The final table has 7, 8, 9 or 10 players, as the event says",
        ("room.tournament.house:final_table_size", "room.tournament.structure:load_structure"),
    ),
    Rule("Venezia art. 44", "A disqualified player's chips leave play", (f"{_T}._on_disqualify",)),
    Rule(
        "Casinos Austria art. 6",
        "The button drawn at one table goes on that seat at every table for the first hand",
        (f"{_S}:button_draws",),
    ),
    Rule(
        "Casinos Austria art. 19",
        "Re-entry: a player out buys a full starting stack again",
        (f"{_T}._on_reenter",),
    ),
    Rule(
        "Casinos Austria art. 22",
        "Table change: the big blind of the next hand takes the worst position at the new table",
        (f"{_S}:mover", f"{_T}._do_move"),
    ),
    Rule(
        "Casinos Austria art. 35",
        "Players from a closed table take any seat, not dealt in between button and small blind",
        (f"{_T}._do_break",),
    ),
    Rule(
        "Casinos Austria art. 37",
        "The final table's draw by the positions the players would have had",
        (f"{_S}:final_table_draw",),
    ),
    Rule(
        "Casinos Austria art. 39",
        "Tables break from the highest number (tables added later first)",
        ("room.tournament.structure:load_structure", f"{_S}:table_to_break"),
    ),
    Rule(
        "Casinos Austria art. 40",
        "The final table is a full table plus one, at most ten; hand by hand, players out at "
        "different tables share, at the same table the bigger stack at the hand's start is "
        "placed higher",
        ("room.tournament.house:final_table_size", "room.tournament.places:place_group"),
    ),
    Rule(
        "Casinos Austria art. 42",
        "Heads-up, every level lasts half as long",
        (f"{_C}.speed_up", f"{_T}._heads_up_time"),
    ),
    Rule(
        "Casinos Austria art. 45",
        "A disqualified player's chips leave play",
        (f"{_T}._on_disqualify",),
    ),
)


def markdown() -> str:
    """The table of docs/tournament.md, *The rules and where they are carried out*."""
    rows = ["| Rule | What the room does | Where |", "|---|---|---|"]
    for r in RULES:
        where = ", ".join(f"`{w.partition(':')[2] or w}`" for w in r.where)
        rows.append(f"| {r.rule} | {r.title} | {where} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
