"""Room command cases shared by the unit tests (parsing) and the system tests (through a
daemon and a real broker): malformed payloads and well-formed commands a table refuses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from controller.commands import MAX_PAYLOAD, UNKNOWN_COMMAND


def raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


@dataclass(frozen=True)
class Bad:
    """A malformed room command: topic name, payload, the error, the id echoed in the reply."""

    case: str
    name: str
    payload: bytes
    error: str  # a regular expression the error message matches
    request_id: str | None
    schema_refuses: bool = True  # command.json refuses it too (when it is a JSON object)
    command: str | None = None  # the name echoed in the reply and alert (default: `name`)

    @property
    def echoed(self) -> str:
        return self.name if self.command is None else self.command


LEVEL = {"small_blind": 1, "big_blind": 2, "ante": 0}
NEW_FLOOR = {"name": "staff", "uid": "04ABCD", "role": "floor"}
BIG = raw({"name": "seat", "seat": 5, "player": "x" * MAX_PAYLOAD, "stack": 1, "id": "big"})
MALFORMED = [
    Bad("not-json", "seat", b'{"seat": 5, "id": "nj"', r"^not JSON: ", None),
    Bad("not-utf8", "seat", b'{"player": "\xff"}', r"not UTF-8", None),
    Bad("nan", "seat", b'{"seat": NaN}', r"NaN is not a JSON number", None),
    Bad("too-deep", "seat", b"[" * 4000 + b"]" * 4000, r"nested too deeply", None),
    Bad("array", "seat", b'["seat", 5]', r"must be a JSON object, got an array", None),
    Bad("string", "seat", b'"seat"', r"must be a JSON object, got a string", None),
    Bad("oversized", "seat", BIG, r"too large: \d+ bytes \(at most 8192\)", None),
    Bad("unknown-command", "shuffle", raw({"id": "u1"}), r"unknown command 'shuffle'", "u1"),
    Bad("unknown-nested", "seat/3", raw({"id": "u2"}), r"unknown command 'seat/3'", "u2"),
    Bad(
        "draw-from-room",
        "draw",
        raw({"name": "draw", "purpose": "button", "pick": 0, "of": 9, "id": "d1"}),
        r"'draw' is internal to the table",
        "d1",
    ),
    Bad(
        "name-mismatch",
        "seat",
        raw({"name": "unseat", "seat": 5, "id": "m1"}),
        r"topic says 'seat' but payload says \"unseat\"",
        "m1",
    ),
    Bad(
        "missing-field",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "Eve", "id": "m2"}),
        r"needs field 'stack'",
        "m2",
    ),
    Bad(
        "wrong-type",
        "seat",
        raw({"name": "seat", "seat": "5", "player": "Eve", "stack": 100, "id": "m3"}),
        r"field 'seat' must be an integer, got a string",
        "m3",
    ),
    Bad(
        "bool-for-int",
        "stack",
        raw({"name": "stack", "seat": 1, "stack": True, "id": "m4"}),
        r"field 'stack' must be an integer, got a boolean",
        "m4",
    ),
    Bad(
        "empty-player",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "", "stack": 100, "id": "m5"}),
        r"field 'player' must be a non-empty string",
        "m5",
    ),
    Bad(
        "unknown-field",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "Eve", "stack": 100, "vip": True, "id": "m6"}),
        r"has no field 'vip'",
        "m6",
    ),
    Bad(
        "table-field-t",
        "button",
        raw({"name": "button", "seat": 2, "t": 99.0, "id": "m7"}),
        r"field 't' is set by the table",
        "m7",
    ),
    Bad(
        "seat-out-of-range",
        "seat",
        raw({"name": "seat", "seat": 11, "player": "Eve", "stack": 100, "id": "m8"}),
        r"field 'seat' must be in 1\.\.10, got 11",
        "m8",
    ),
    Bad(
        "negative-stack",
        "stack",
        raw({"name": "stack", "seat": 1, "stack": -5, "id": "m9"}),
        r"field 'stack' must be in 0\.\.",
        "m9",
    ),
    Bad(
        "bool-for-number",
        "level",
        raw({"name": "level", "small_blind": 1, "big_blind": 2, "ante": 0, "announced": True}),
        r"field 'announced' must be a number, got a boolean",
        None,
    ),
    Bad(
        "penalty-both",
        "penalty",
        raw({"name": "penalty", "seat": 1, "hands": 1, "rounds": 1, "id": "p1"}),
        r"exactly one of 'hands' or 'rounds'",
        "p1",
    ),
    Bad(
        "penalty-neither",
        "penalty",
        raw({"name": "penalty", "seat": 1, "id": "p2"}),
        r"exactly one of 'hands' or 'rounds'",
        "p2",
    ),
    Bad(
        "staff-bad-role",
        "staff",
        raw({"name": "staff", "uid": "04A1B2C3", "person": "X", "role": "boss", "id": "s1"}),
        r"staff role must be 'dealer' or 'floor', got 'boss'",
        "s1",
    ),
    Bad(
        "staff-bad-uid",
        "staff",
        raw({"name": "staff", "uid": "badge-7", "person": "X", "role": "dealer", "id": "s2"}),
        r"staff uid must be hex digits",
        "s2",
    ),
    Bad(
        "id-not-string",
        "button",
        raw({"name": "button", "seat": 2, "id": 17}),
        r"field 'id' must be a printable string",
        None,
    ),
    Bad(
        "id-too-long",
        "button",
        raw({"name": "button", "seat": 2, "id": "x" * 129}),
        r"field 'id' must be a printable string of 1\.\.128",
        None,
    ),
    Bad(
        "id-control-char",
        "button",
        raw({"name": "button", "seat": 2, "id": "a\nb"}),
        r"field 'id' must be a printable string",
        None,
    ),
    Bad(
        "id-card-shaped",
        "button",
        raw({"name": "button", "seat": 2, "id": "As"}),
        r"field 'id' must be a printable string .* not a card name",
        None,
    ),
    # Every kind of command, each with at least one malformed payload of its own.
    Bad(
        "unseat-seat-0",
        "unseat",
        raw({"name": "unseat", "seat": 0, "id": "us1"}),
        r"field 'seat' must be in 1\.\.10, got 0",
        "us1",
    ),
    Bad(
        "unseat-extra-field",
        "unseat",
        raw({"name": "unseat", "seat": 3, "player": "Alice", "id": "us2"}),
        r"command 'unseat' has no field 'player' \(it takes 'seat', 'id'\)",
        "us2",
    ),
    Bad(
        "unseat-huge-seat",
        "unseat",
        raw({"name": "unseat", "seat": 10**30, "id": "us3"}),
        r"field 'seat' must be in 1\.\.10, got 1000000000000",
        "us3",
    ),
    Bad(
        "button-seat-string",
        "button",
        raw({"name": "button", "seat": "nine", "id": "bt1"}),
        r"field 'seat' must be an integer, got a string",
        "bt1",
    ),
    Bad(
        "level-huge-announced",
        "level",
        raw({"name": "level", **LEVEL, "announced": 10**400, "id": "lv1"}),
        r"field 'announced' must be in 0\.\.9007199254740991, got 1000",
        "lv1",
    ),
    Bad(
        "level-infinite-announced",
        "level",
        b'{"small_blind": 1, "big_blind": 2, "ante": 0, "announced": 1e400, "id": "lv2"}',
        r"field 'announced' must be a number, got a number \(Infinity\)",
        "lv2",
    ),
    Bad(
        "pause-reason-number",
        "pause",
        raw({"name": "pause", "reason": 5, "id": "pa1"}),
        r"field 'reason' must be a non-empty string, got a number \(5\)",
        "pa1",
    ),
    Bad(
        "pause-reason-control-char",
        "pause",
        raw({"name": "pause", "reason": "color\u0007up", "id": "pa2"}),
        r"field 'reason' has a control character \(U\+0007 at position 6\)",
        "pa2",
    ),
    Bad(
        "hold-hand-for-hand-not-boolean",
        "hold",
        raw({"name": "hold", "hand_for_hand": "yes", "id": "ho1"}),
        r"field 'hand_for_hand' must be true or false, got a string",
        "ho1",
    ),
    Bad(
        "release-extra-field",
        "release",
        raw({"name": "release", "reason": "break over", "id": "rl1"}),
        r"command 'release' has no field 'reason' \(it takes 'hand_for_hand', 'id'\)",
        "rl1",
    ),
    Bad(
        "resume-extra-field",
        "resume",
        raw({"name": "resume", "reason": "break over", "id": "re1"}),
        r"command 'resume' has no field 'reason' \(it takes 'id'\)",
        "re1",
    ),
    Bad(
        "away-not-boolean",
        "away",
        raw({"name": "away", "seat": 2, "away": "yes", "id": "aw1"}),
        r"field 'away' must be true or false, got a string",
        "aw1",
    ),
    Bad(
        "away-missing-seat",
        "away",
        raw({"name": "away", "away": True, "id": "aw2"}),
        r"command 'away' needs field 'seat'",
        "aw2",
    ),
    Bad(
        "staff-missing-person",
        "staff",
        raw({"name": "staff", "uid": "04ABCDEF000002", "role": "floor", "id": "s3"}),
        r"needs 'person' and 'role'",
        "s3",
    ),
    Bad(
        "staff-blank-person",
        "staff",
        raw({"name": "staff", "uid": "04ABCDEF000002", "person": " ", "role": "floor", "id": "s4"}),
        r"field 'person' is blank",
        "s4",
    ),
    Bad(
        "staff-person-line-break",
        "staff",
        raw({**NEW_FLOOR, "person": "Eve\u2028X", "id": "s5"}),
        r"field 'person' has a control character \(U\+2028",
        "s5",
    ),
    # Text that could not be published: lone surrogates (any string, at any depth, keys
    # included), card names.
    Bad(
        "surrogate-player",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "\ud800", "stack": 100, "id": "su1"}),
        r"field 'player' holds text that is not Unicode \(a lone surrogate",
        "su1",
        schema_refuses=False,
    ),
    Bad(
        "surrogate-staff-person",
        "staff",
        raw({**NEW_FLOOR, "person": "Giu\udc00lia", "id": "su2"}),
        r"field 'person' holds text that is not Unicode",
        "su2",
        schema_refuses=False,
    ),
    Bad(
        "surrogate-key",
        "pause",
        raw({"name": "pause", "\udfff": "x", "id": "su3"}),
        r'field name "\\udfff" is not Unicode text',
        "su3",
        schema_refuses=False,  # the schema never sees it: it cannot be encoded to check
    ),
    Bad(
        "surrogate-nested",
        "level",
        raw({"name": "level", **LEVEL, "x": [{"y": "\ud83d"}], "id": "su4"}),
        r"field 'x' holds text that is not Unicode",
        "su4",
        schema_refuses=False,
    ),
    Bad(
        "surrogate-id",
        "resume",
        raw({"name": "resume", "id": "r\ud800"}),
        r'field \'id\' must be a printable string .* \("r\\ud800"\)',
        None,
        schema_refuses=False,
    ),
    Bad(
        "card-shaped-player",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "Kd", "stack": 100, "id": "cs1"}),
        r"field 'player' reads as a card name",
        "cs1",
    ),
    Bad(
        "card-shaped-topic",
        "As",
        raw({"id": "cs2"}),
        r"^unknown command: the topic's name \(2 characters\) is not a command name",
        "cs2",
        command=UNKNOWN_COMMAND,
    ),
]


# Well-formed commands the engine must refuse on this table (9 seats, Alice on 1, Bruno on 2,
# not paused; the staff registry is the example's).
IMPOSSIBLE = [
    ("seat-taken", "seat", {"seat": 1, "player": "Zed", "stack": 500}, r"seat 1 is taken"),
    ("no-such-seat", "seat", {"seat": 10, "player": "Zed", "stack": 500}, r"no seat 10"),
    ("seat-no-stack", "seat", {"seat": 7, "player": "Zed", "stack": 0}, r"stack must be positive"),
    ("unseat-empty", "unseat", {"seat": 7}, r"seat 7 is empty"),
    ("big-blind-0", "level", {"small_blind": 0, "big_blind": 0, "ante": 0}, r"big_blind"),
    ("blinds-inverted", "level", {"small_blind": 400, "big_blind": 200, "ante": 0}, r"blind"),
    ("button-no-such-seat", "button", {"seat": 10}, r"no seat 10 at this table"),
    ("stack-empty-seat", "stack", {"seat": 7, "stack": 100}, r"seated player"),
    ("penalty-empty-seat", "penalty", {"seat": 7, "hands": 2}, r"seat 7 is empty"),
    ("penalty-no-such-seat", "penalty", {"seat": 10, "rounds": 1}, r"no seat 10"),
    ("away-empty-seat", "away", {"seat": 7}, r"seat 7 is empty"),
    ("resume-not-paused", "resume", {}, r"the table is not paused"),
    ("release-not-held", "release", {}, r"the table is not held by the room"),
    ("staff-remove-unknown", "staff", {"uid": "04DEADBEEF0001", "remove": True}, r"no staff"),
]
