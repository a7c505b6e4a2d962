"""JSON Schemas of the MQTT payloads (controller/schemas/*.json); jsonschema is imported lazily."""

from __future__ import annotations

import importlib
import json
from functools import cache
from importlib import resources
from typing import Any

from kernel.errors import TableError
from kernel.messages import (
    ALERTS,
    EVENTS,
    HOLECARDS,
    HOLEKEYS,
    RELEASED,
    REPLIES,
    STATE,
    STATUS,
    Message,
)

#: Topic suffix -> (schema file, qos, retain), as docs/mqtt.md lists them.
TOPICS: dict[str, tuple[str, int, bool]] = {
    STATUS: ("status.json", 1, True),
    STATE: ("state.json", 1, True),
    EVENTS: ("events.json", 1, False),
    HOLECARDS: ("holecards.json", 1, False),
    ALERTS: ("alerts.json", 1, False),
    REPLIES: ("reply.json", 1, False),  # answers to room commands (docs/mqtt.md)
    HOLEKEYS: ("holekeys.json", 1, False),  # released hole-card keys, TV only
    RELEASED: ("released.json", 1, False),  # the public notice of a release
}
COMMAND_SCHEMA = "command.json"
SCHEMA_FILES = (*(entry[0] for entry in TOPICS.values()), COMMAND_SCHEMA)


class SchemaError(TableError):
    """A payload does not match its schema, or a message has the wrong QoS/retain."""


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema file `name` (e.g. "events.json")."""
    if name not in SCHEMA_FILES:
        raise SchemaError(f"no schema named {name!r}")
    text = resources.files("controller").joinpath("schemas", name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(name: str) -> Any:
    try:
        jsonschema = importlib.import_module("jsonschema")
    except ImportError as exc:  # a test/tooling dependency, not a runtime one
        raise SchemaError("validation needs the jsonschema package (pip install .[test])") from exc
    return jsonschema.Draft202012Validator(load_schema(name))


def validate_payload(name: str, payload: object) -> None:
    """Raise SchemaError unless `payload` matches schema `name`; every error is listed."""
    errors = sorted(_validator(name).iter_errors(payload), key=lambda e: list(e.absolute_path))
    if errors:
        details = "; ".join(
            f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in errors
        )
        raise SchemaError(f"{name}: {details}")


def validate(message: Message) -> None:
    """Raise SchemaError unless `message` has its topic's QoS/retain and a valid payload.

    The payload is checked as published (after JSON encoding), so tuples, key types and
    non-JSON values are caught too. Topics `cmd/<name>` are checked against command.json.
    """
    if message.topic.startswith("cmd/"):
        payload = json.loads(message.payload_bytes())
        validate_payload(COMMAND_SCHEMA, payload)
        if payload.get("name") != message.topic[len("cmd/") :]:
            raise SchemaError(f"{message.topic}: payload name {payload.get('name')!r} differs")
        return
    if message.topic not in TOPICS:
        raise SchemaError(f"unknown topic {message.topic!r}")
    name, qos, retain = TOPICS[message.topic]
    if (message.qos, message.retain) != (qos, retain):
        raise SchemaError(
            f"{message.topic}: must be qos {qos} retain {retain}, "
            f"got qos {message.qos} retain {message.retain}"
        )
    validate_payload(name, json.loads(message.payload_bytes()))
