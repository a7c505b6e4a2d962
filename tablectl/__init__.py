"""The `tablectl` program: one command line that wires the table, the room and TV."""
