"""The shared kernel every program stands on: errors, clocks, message topics, input events,
the config kit and private files. It imports nothing of the table, the room, TV, the
drivers or the firmware."""
