"""Table controller daemon: engine, configuration, journal, publishing and CLI."""
