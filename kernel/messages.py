"""Outbound messages: what the engine asks the shell to publish, topic relative to the prefix."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Topic suffixes under the table prefix (docs/mqtt.md, Topics).
STATUS = "status"
STATE = "state"
EVENTS = "events"
HOLECARDS = "holecards"
ALERTS = "alerts"
REPLIES = "replies"  # answers to room commands (docs/mqtt.md, Room commands)
HOLEKEYS = "holekeys"  # released hole-card keys, TV only (controller/seal.py)
RELEASED = "released"  # the public notice of a release, without the key
TVREQ = "tvreq"  # TV asks for hole cards it missed: tvreq/holecards, tvreq/holekeys


@dataclass(frozen=True, slots=True)
class Message:
    """One MQTT publication; `topic` is relative to the table prefix."""

    topic: str
    payload: dict[str, Any]
    qos: int = 1
    retain: bool = False

    def payload_bytes(self) -> bytes:
        """The exact bytes published: compact, key order as built (deterministic)."""
        return json.dumps(self.payload, separators=(",", ":"), ensure_ascii=False).encode()

    def to_line(self, prefix: str) -> str:
        """The `replay` output line: {"topic", "qos", "retain", "payload"}."""
        return json.dumps(
            {
                "topic": f"{prefix}/{self.topic}",
                "qos": self.qos,
                "retain": self.retain,
                "payload": self.payload,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )
