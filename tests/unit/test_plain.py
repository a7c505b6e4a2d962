"""The plain serialiser: typed records to JSON values and back, a closed registry of types."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum

import pytest

from controller.engine.plain import Adapter, PlainError, Registry, from_plain, to_plain
from kernel.errors import CheckpointError


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclass(slots=True, kw_only=True)
class Base:
    name: str


@dataclass(slots=True, kw_only=True)
class Left(Base):
    seats: set[int] = field(default_factory=set)


@dataclass(slots=True, kw_only=True)
class Right(Base):
    colour: Colour = Colour.RED


class Point:
    """Not a dataclass: known through an adapter."""

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


@dataclass(frozen=True, slots=True)
class PointRecord:
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Frozen:
    cards: frozenset[str]
    pair: tuple[int, str]
    many: tuple[int, ...]


@dataclass(kw_only=True)
class Everything:
    by_seat: dict[int, list[str]]
    nested: dict[int, tuple[int, int]]
    frozen: Frozen
    colours: set[Colour]
    maybe: int | None
    items: list[Base]
    chosen: Base | None
    where: Point
    t: float


REGISTRY = Registry(
    tagged={Base: {"left": Left, "right": Right}},
    adapters={
        Point: Adapter(PointRecord, lambda p: PointRecord(p.x, p.y), lambda r: Point(r.x, r.y))
    },
)


def _sample() -> Everything:
    left = Left(name="a", seats={9, 1, 3})
    return Everything(
        by_seat={3: ["As", "Kd"], 1: []},
        nested={2: (1, 5)},
        frozen=Frozen(frozenset({"Qh", "2c"}), (4, "x"), (1, 2, 3)),
        colours={Colour.BLUE, Colour.RED},
        maybe=None,
        items=[left, Right(name="b", colour=Colour.BLUE)],
        chosen=left,
        where=Point(3, 4),
        t=12.345678,
    )


def test_a_record_goes_through_json_and_back_equal_and_in_order() -> None:
    value = _sample()
    plain = json.loads(json.dumps(to_plain(REGISTRY, Everything, value)))
    back = from_plain(REGISTRY, Everything, plain)
    assert list(back.by_seat) == [3, 1]  # a dict keeps its order, its int keys
    assert back.nested == {2: (1, 5)}
    assert back.frozen == value.frozen and isinstance(back.frozen.cards, frozenset)
    assert back.colours == {Colour.BLUE, Colour.RED}
    assert back.maybe is None and back.t == value.t
    assert back.items == value.items
    assert (back.where.x, back.where.y) == (3, 4)
    # The same tagged object stored once: it comes back as one object.
    assert back.chosen is back.items[0]
    assert to_plain(REGISTRY, Everything, back) == plain
    assert plain["items"][0]["fields"]["seats"] == [1, 3, 9]  # a set, sorted


def test_the_data_names_only_types_of_the_closed_registry() -> None:
    plain = to_plain(REGISTRY, Everything, _sample())
    plain["items"][1]["type"] = "subprocess.Popen"
    with pytest.raises(PlainError, match="not a known Base") as caught:
        from_plain(REGISTRY, Everything, plain)
    assert isinstance(caught.value, CheckpointError)


def test_an_unknown_subclass_or_a_malformed_field_is_refused() -> None:
    @dataclass(slots=True, kw_only=True)
    class Stranger(Base):
        pass

    value = _sample()
    value.items.append(Stranger(name="c"))
    with pytest.raises(PlainError, match="not a known Base"):
        to_plain(REGISTRY, Everything, value)
    plain = to_plain(REGISTRY, Everything, _sample())
    plain["maybe"] = "seven"
    with pytest.raises(PlainError, match="not an int"):
        from_plain(REGISTRY, Everything, plain)
    del plain["maybe"]
    with pytest.raises(PlainError, match="are not its own"):
        from_plain(REGISTRY, Everything, plain)
