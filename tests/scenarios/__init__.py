"""Scenario traces (the .jsonl files here) replayed through the engine and tablectl replay."""
