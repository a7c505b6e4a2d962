"""Table controller daemon: engine, configuration, journal, publishing and CLI."""

__version__ = "0.1.0"
