"""The pure table engine: trace events in, messages out; no I/O, no clock, no randomness."""

from controller.engine.engine import Engine
from controller.engine.spec import EngineSpec

__all__ = ["Engine", "EngineSpec"]
