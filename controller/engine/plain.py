"""A plain serialiser of typed records: to JSON values and back, led by the declared types.

Dataclasses go by field, enums by value, sets and frozensets as sorted lists, tuples and
lists as lists, dicts as objects (str or int keys) or as pairs. A type that is not a
dataclass, or a base whose subclasses are told apart by the data, is known through a
closed `Registry`: no type is ever looked up by a name the data gives outside it. No pickle.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kernel.errors import CheckpointError

Json = Any


class PlainError(CheckpointError):
    """A value or a plain form that does not fit its declared type."""


@dataclass(frozen=True, slots=True)
class Adapter:
    """A type that is not a dataclass, stored as the record it converts to and from."""

    record: type
    to_record: Callable[[Any], Any]
    from_record: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Registry:
    """The closed set of types a codec knows beyond dataclasses, enums and builtins.

    `tagged`: a base class -> its known subclasses by tag (the data names the tag; the
    object is stored once and later occurrences of the same object refer to it);
    `adapters`: a type -> how it converts to a record.
    """

    tagged: dict[type, dict[str, type]] = field(default_factory=dict)
    adapters: dict[type, Adapter] = field(default_factory=dict)

    def tag_of(self, base: type, value: object) -> str:
        """The tag of `value`'s exact type among `base`'s known subclasses."""
        for tag, cls in self.tagged[base].items():
            if type(value) is cls:
                return tag
        raise PlainError(f"{type(value).__name__} is not a known {base.__name__}")


_HINTS: dict[type, dict[str, Any]] = {}


def _fields(cls: type) -> list[tuple[str, Any]]:
    """A dataclass's fields with their resolved types (cached)."""
    hints = _HINTS.get(cls)
    if hints is None:
        resolved = typing.get_type_hints(cls)
        hints = {f.name: resolved[f.name] for f in dataclasses.fields(cls)}
        _HINTS[cls] = hints
    return list(hints.items())


def _is_optional(tp: Any) -> Any:
    """X for `X | None`, else None."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if len(args) == 1 else None


def _sorted(items: list[Json]) -> list[Json]:
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))


class Codec:
    """One encode or decode pass over a record (it keeps the tagged objects already seen)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._ids: dict[int, int] = {}  # id(object) -> its number, encoding
        self._keep: list[object] = []  # keeps encoded objects alive while numbered
        self._objects: list[object] = []  # decoding: by number

    # ------------------------------------------------------------------ encode

    def encode(self, tp: Any, value: Any) -> Json:
        """`value` (of declared type `tp`) as plain JSON values."""
        if value is None:
            return None
        origin = typing.get_origin(tp)
        if origin is typing.Union or origin is types.UnionType:
            inner = _is_optional(tp)
            if inner is None:
                raise PlainError(f"no plain form for the union {tp}")
            return self.encode(inner, value)
        if origin is typing.Literal or tp in (int, float, str, bool):
            return value
        if origin in (list, tuple, set, frozenset, dict):
            return self._encode_container(tp, origin, value)
        if isinstance(tp, type):
            return self._encode_typed(tp, value)
        raise PlainError(f"no plain form for {tp}")

    def _encode_container(self, tp: Any, origin: Any, value: Any) -> Json:
        args = typing.get_args(tp)
        if origin is list:
            return [self.encode(args[0], v) for v in value]
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return [self.encode(args[0], v) for v in value]
            if len(args) != len(value):
                raise PlainError(f"{value!r} does not fit {tp}")
            return [self.encode(a, v) for a, v in zip(args, value, strict=True)]
        if origin in (set, frozenset):
            return _sorted([self.encode(args[0], v) for v in value])
        key, item = args
        if key in (str, int):
            return {str(k): self.encode(item, v) for k, v in value.items()}
        return [[self.encode(key, k), self.encode(item, v)] for k, v in value.items()]

    def _encode_typed(self, tp: type, value: Any) -> Json:
        registry = self.registry
        if issubclass(tp, enum.Enum):
            return value.value
        if tp in registry.adapters:
            adapter = registry.adapters[tp]
            return self.encode(adapter.record, adapter.to_record(value))
        if tp in registry.tagged:
            return self._encode_tagged(tp, value)
        if dataclasses.is_dataclass(tp):
            return {name: self.encode(ftp, getattr(value, name)) for name, ftp in _fields(tp)}
        raise PlainError(f"no plain form for {tp.__name__}")

    def _encode_tagged(self, base: type, value: Any) -> Json:
        known = self._ids.get(id(value))
        if known is not None:
            return {"ref": known}
        tag = self.registry.tag_of(base, value)
        number = len(self._keep)
        self._ids[id(value)] = number
        self._keep.append(value)
        cls = self.registry.tagged[base][tag]
        return {"type": tag, "id": number, "fields": self._encode_typed_fields(cls, value)}

    def _encode_typed_fields(self, cls: type, value: Any) -> dict[str, Json]:
        return {name: self.encode(ftp, getattr(value, name)) for name, ftp in _fields(cls)}

    # ------------------------------------------------------------------ decode

    def decode(self, tp: Any, data: Json) -> Any:
        """The value of declared type `tp` that `data` is the plain form of."""
        origin = typing.get_origin(tp)
        if origin is typing.Union or origin is types.UnionType:
            inner = _is_optional(tp)
            if inner is None:
                raise PlainError(f"no plain form for the union {tp}")
            return None if data is None else self.decode(inner, data)
        if origin is typing.Literal:
            if data not in typing.get_args(tp):
                raise PlainError(f"{data!r} is not one of {typing.get_args(tp)}")
            return data
        if tp in (int, float, str, bool):
            return _scalar(tp, data)
        if origin in (list, tuple, set, frozenset, dict):
            return self._decode_container(tp, origin, data)
        if isinstance(tp, type):
            return self._decode_typed(tp, data)
        raise PlainError(f"no plain form for {tp}")

    def _decode_container(self, tp: Any, origin: Any, data: Json) -> Any:
        args = typing.get_args(tp)
        if origin is dict:
            key, item = args
            if key in (str, int):
                _expect(data, dict, tp)
                return {_scalar(key, k): self.decode(item, v) for k, v in data.items()}
            _expect(data, list, tp)
            return {self.decode(key, k): self.decode(item, v) for k, v in data}
        _expect(data, list, tp)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(self.decode(args[0], v) for v in data)
            if len(args) != len(data):
                raise PlainError(f"{data!r} does not fit {tp}")
            return tuple(self.decode(a, v) for a, v in zip(args, data, strict=True))
        items = [self.decode(args[0], v) for v in data]
        return origin(items)

    def _decode_typed(self, tp: type, data: Json) -> Any:
        registry = self.registry
        if issubclass(tp, enum.Enum):
            try:
                return tp(data)
            except ValueError as exc:
                raise PlainError(str(exc)) from None
        if tp in registry.adapters:
            adapter = registry.adapters[tp]
            return adapter.from_record(self.decode(adapter.record, data))
        if tp in registry.tagged:
            return self._decode_tagged(tp, data)
        if dataclasses.is_dataclass(tp):
            return self._decode_fields(tp, data)
        raise PlainError(f"no plain form for {tp.__name__}")

    def _decode_tagged(self, base: type, data: Json) -> Any:
        _expect(data, dict, base)
        if "ref" in data:
            number = data["ref"]
            if not isinstance(number, int) or not 0 <= number < len(self._objects):
                raise PlainError(f"a reference to an unknown {base.__name__}: {number!r}")
            return self._objects[number]
        cls = self.registry.tagged[base].get(data.get("type"))  # the closed registry only
        if cls is None:
            raise PlainError(f"{data.get('type')!r} is not a known {base.__name__}")
        if data.get("id") != len(self._objects):
            raise PlainError(f"a {base.__name__} numbered out of order: {data.get('id')!r}")
        self._objects.append(None)
        value = self._decode_fields(cls, data.get("fields"))
        self._objects[data["id"]] = value
        return value

    def _decode_fields(self, cls: type, data: Json) -> Any:
        _expect(data, dict, cls)
        hints = _fields(cls)
        if set(data) != {name for name, _ in hints}:
            raise PlainError(f"{cls.__name__}: fields {sorted(data)} are not its own")
        value: Any = object.__new__(cls)
        for name, ftp in hints:
            object.__setattr__(value, name, self.decode(ftp, data[name]))
        return value


def _expect(data: Json, kind: type, tp: Any) -> None:
    if not isinstance(data, kind):
        raise PlainError(f"{data!r} does not fit {tp}")


def _scalar(tp: type, data: Json) -> Any:
    """An int, float, str or bool as JSON gives it (an int key comes as a string)."""
    if tp is bool:
        if not isinstance(data, bool):
            raise PlainError(f"{data!r} is not a bool")
        return data
    if tp is int:
        if isinstance(data, str):
            try:
                return int(data)
            except ValueError:
                raise PlainError(f"{data!r} is not an int") from None
        if isinstance(data, bool) or not isinstance(data, int):
            raise PlainError(f"{data!r} is not an int")
        return data
    if tp is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise PlainError(f"{data!r} is not a number")
        return data
    if not isinstance(data, str):
        raise PlainError(f"{data!r} is not a string")
    return data


def to_plain(registry: Registry, tp: Any, value: Any) -> Json:
    """`value` of declared type `tp` as plain JSON values."""
    return Codec(registry).encode(tp, value)


def from_plain(registry: Registry, tp: Any, data: Json) -> Any:
    """The value of declared type `tp` whose plain form `data` is."""
    return Codec(registry).decode(tp, data)
