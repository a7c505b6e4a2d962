"""Staff badge uids stay in the room server: a request without the token sees a keyed hash.

A staff badge's uid is the only credential of floor authority at a table (a badge held to
the reader authorises rulings), and the tables publish it: in `dealer`/`floor` objects of
`state` and events, in `badge_unknown`/`badge_repeat` alerts, in the room's own `staff`
commands. The room stores it as received (the record is evidence); what it serves to a
request without the bearer token (the monitor's pages, the read-only API) goes through
`PublicStore`, which replaces every badge uid, and any text quoting it, with
`badge-<12 hex digits>`: an HMAC-SHA256 of the uid under a key of this server (derived from
the token, or random per process when there is none), so a public view can still tell
dealers apart and count their hands, but cannot present their badge.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable
from typing import Any

from fastapi import Request

#: Keys whose string value is a tag uid (a staff badge; a card tag in `fouled_deck`).
UID_KEYS = frozenset({"uid", "dealer_uid"})
#: Stored rows' columns that hold a JSON text (a message's payload, a table's state).
JSON_COLUMNS = frozenset({"payload", "state"})
PREFIX = "badge-"


def bearer_token(request: Request) -> str | None:
    """The request's bearer token (Authorization header), or None."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def has_token(request: Request, token: str | None) -> bool:
    """True when the server has a token and the request carries it."""
    given = bearer_token(request)
    return (
        token is not None
        and given is not None
        and secrets.compare_digest(given.encode(), token.encode())
    )


class BadgeIds:
    """The public stand-in of a badge uid: stable for this server's key."""

    def __init__(self, token: str | None) -> None:
        if token is None:
            self._key = secrets.token_bytes(32)
        else:
            self._key = hashlib.sha256(b"tablectl badge ids\0" + token.encode()).digest()

    def public(self, uid: str) -> str:
        """`badge-` and 12 hex digits of HMAC-SHA256(key, the uid in upper case)."""
        digest = hmac.new(self._key, uid.strip().upper().encode(), hashlib.sha256).hexdigest()
        return PREFIX + digest[:12]

    def redact(self, value: Any) -> Any:
        """`value` (decoded JSON) with every uid under a UID_KEYS key replaced, and every
        occurrence of such a uid in its strings (a message that quotes it) too."""
        found: set[str] = set()
        _collect(value, found)
        if not found:
            return value
        pattern = re.compile(
            r"(?<![0-9A-Fa-f])(?:"
            + "|".join(re.escape(u) for u in sorted(found, key=len, reverse=True))
            + r")(?![0-9A-Fa-f])",
            re.IGNORECASE,
        )
        return _replace(value, pattern, self.public)

    def redact_text(self, text: str) -> str:
        """A JSON text redacted (the text itself when it holds no uid key)."""
        if '"uid"' not in text and '"dealer_uid"' not in text:
            return text
        try:
            decoded = json.loads(text)
        except ValueError:
            return text
        return json.dumps(self.redact(decoded), separators=(",", ":"), ensure_ascii=False)

    def redact_row(self, value: Any) -> Any:
        """A store result (rows as dicts, lists of them, a dict of them) redacted."""
        if isinstance(value, list):
            return [self.redact_row(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.redact_row(v) for v in value)
        if not isinstance(value, dict):
            return value
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if key in UID_KEYS and isinstance(item, str):
                out[key] = self.public(item)
            elif key in JSON_COLUMNS and isinstance(item, str):
                out[key] = self.redact_text(item)
            elif key in JSON_COLUMNS and isinstance(item, dict | list):
                out[key] = self.redact(item)
            else:
                out[key] = self.redact_row(item)
        return out


def _collect(value: Any, found: set[str]) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if key in UID_KEYS and isinstance(sub, str) and sub.strip():
                    found.add(sub.strip())
                else:
                    stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)


def _replace(value: Any, pattern: re.Pattern[str], public: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {
            k: public(v)
            if k in UID_KEYS and isinstance(v, str) and v.strip()
            else _replace(v, pattern, public)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_replace(v, pattern, public) for v in value]
    if isinstance(value, str):
        return pattern.sub(lambda m: public(m.group(0)), value)
    return value


class PublicStore:
    """A room store whose every read comes back with badge uids replaced (BadgeIds)."""

    def __init__(self, store: Any, ids: BadgeIds) -> None:
        self._store = store
        self._ids = ids

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def read(*args: Any, **kwargs: Any) -> Any:
            return self._ids.redact_row(attr(*args, **kwargs))

        return read
