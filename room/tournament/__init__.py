"""The room's tournament: clock, seats, live chip counts, balancing, breaking, hand-for-hand,
eliminations and payouts, proposed from what the tables report and confirmed by the floor."""
