"""Tests for deck/chip registries, their file format, registration and the simulated sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.registration import (
    SIM_CHIP_COLOURS,
    SIM_CHIP_COUNTS,
    DeckRegistration,
    generate_sim_chips,
    generate_sim_deck,
)
from controller.registry import (
    CARDS,
    ChipRegistry,
    DeckRegistry,
    format_chips,
    format_deck,
    load_chips,
    load_deck,
    write_chips,
    write_deck,
)
from kernel.errors import RegistryError

ROOT = Path(__file__).resolve().parents[2]
SIM_DECK = ROOT / "examples" / "decks" / "sim-deck.toml"
SIM_CHIPS = ROOT / "examples" / "chips" / "sim-chips.toml"


def uid(i: int) -> str:
    return f"04{i:012X}"


def deck_text(entries: list[tuple[str, str]], deck_id: str = "d1") -> str:
    tags = "".join(f'"{u}" = "{c}"\n' for u, c in entries)
    return f'[deck]\nid = "{deck_id}"\n[tags]\n{tags}'


def full_deck() -> list[tuple[str, str]]:
    return [(uid(i), card) for i, card in enumerate(CARDS)]


def refuse_deck(tmp_path: Path, text: str, *fragments: str) -> str:
    path = tmp_path / "deck.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RegistryError) as info:
        load_deck(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


# --------------------------------------------------------------------------- deck


def test_card_order_is_rank_then_suit() -> None:
    assert len(CARDS) == len(set(CARDS)) == 52
    assert CARDS[:5] == ("2c", "2d", "2h", "2s", "3c")
    assert CARDS[-1] == "As"


def test_load_good_deck(tmp_path: Path) -> None:
    entries = list(reversed(full_deck()))  # file order does not matter
    path = tmp_path / "deck.toml"
    path.write_text(deck_text(entries), encoding="utf-8")
    deck = load_deck(path)
    assert deck.id == "d1"
    assert len(deck) == 52
    assert deck.card_of(uid(0)) == "2c"
    assert deck.card_of(uid(51)) == "As"
    assert deck.card_of(uid(51).lower()) == "As"
    assert deck.card_of("04FFFFFFFFFFFF") is None
    assert deck.uid_of("Td") == uid(CARDS.index("Td"))
    assert uid(3) in deck
    with pytest.raises(KeyError):
        deck.uid_of("1x")


def test_example_sim_deck_loads_and_matches_generator() -> None:
    deck = load_deck(SIM_DECK)
    assert deck.id == "sim-A"
    assert deck.as_dict() == generate_sim_deck("sim-A", "A")
    assert deck.uid_of("2c") == "04A00000000001"
    assert deck.uid_of("As") == "04A00000000034"
    assert SIM_DECK.read_text(encoding="utf-8") == format_deck("sim-A", deck.as_dict())


def test_uid_lengths_8_14_20_accepted() -> None:
    mapping = {f"{i:08X}": c for i, c in enumerate(CARDS[:20])}
    mapping |= {f"04{i:012X}": c for i, c in enumerate(CARDS[20:40])}
    mapping |= {f"{i:020X}": c for i, c in enumerate(CARDS[40:])}
    assert len(DeckRegistry("mixed", mapping)) == 52


def test_refuse_duplicate_card(tmp_path: Path) -> None:
    entries = full_deck()
    entries[10] = (entries[10][0], "2c")
    refuse_deck(tmp_path, deck_text(entries), "duplicate card 2c", uid(0), uid(10))


def test_refuse_duplicate_uid(tmp_path: Path) -> None:
    entries = full_deck()
    entries[7] = (uid(2), entries[7][1])
    refuse_deck(tmp_path, deck_text(entries), "duplicate tag uid", uid(2), "line 11", "line 6")


def test_refuse_53_entries(tmp_path: Path) -> None:
    entries = [*full_deck(), (uid(99), "As")]
    refuse_deck(tmp_path, deck_text(entries), "53 tags", "exactly 52")


def test_refuse_51_entries(tmp_path: Path) -> None:
    entries = [e for e in full_deck() if e[1] != "7h"]
    refuse_deck(tmp_path, deck_text(entries), "51 tags", "missing card(s) 7h")


@pytest.mark.parametrize("card", ["1c", "AS", "10h", "Tx", "", "a"])
def test_refuse_bad_card_name(tmp_path: Path, card: str) -> None:
    entries = full_deck()
    entries[5] = (entries[5][0], card)
    refuse_deck(tmp_path, deck_text(entries), f"bad card {card!r}", uid(5))


@pytest.mark.parametrize("bad", ["04a1b2c3d4e5f6", "04A1B2C3D4E5F", "04A1B2C3D4E5F6G", "1234"])
def test_refuse_bad_uid(tmp_path: Path, bad: str) -> None:
    entries = full_deck()
    entries[0] = (bad, entries[0][1])
    refuse_deck(tmp_path, deck_text(entries), f"bad uid {bad!r}")


def test_refuse_card_value_not_a_string(tmp_path: Path) -> None:
    text = deck_text(full_deck()).replace('"2c"', "2")
    refuse_deck(tmp_path, text, "bad card 2")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tags]\n"04000000000000" = "2c"\n', "missing [deck]"),
        ("[deck]\n[tags]\n", "[deck] id: missing"),
        ('[deck]\nid = "a b"\n[tags]\n', "[deck] id"),
        ('[deck]\nid = "d"\nname = "x"\n', "unknown key 'name' in [deck]"),
        ('[deck]\nid = "d"\n[cards]\n', "unknown key 'cards'"),
        ('[deck]\nid = "d"\n[tags\n', "TOML syntax error"),
    ],
)
def test_refuse_malformed_deck_file(tmp_path: Path, text: str, expected: str) -> None:
    refuse_deck(tmp_path, text, expected)


def test_missing_deck_file(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="file not found"):
        load_deck(tmp_path / "absent.toml")


def test_deck_write_load_round_trip_is_byte_identical(tmp_path: Path) -> None:
    mapping = dict(reversed(full_deck()))
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    write_deck(first, "round", mapping)
    deck = load_deck(first)
    write_deck(second, deck.id, deck.as_dict())
    assert first.read_bytes() == second.read_bytes()
    write_deck(second, load_deck(second).id, load_deck(second).as_dict())
    assert first.read_bytes() == second.read_bytes()
    lines = first.read_text(encoding="utf-8").splitlines()
    tag_lines = [line for line in lines if line.startswith('"')]
    assert [line.split('"')[3] for line in tag_lines] == list(CARDS)  # canonical order


def test_write_deck_refuses_invalid_mapping_and_leaves_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "deck.toml"
    write_deck(path, "good", dict(full_deck()))
    before = path.read_bytes()
    with pytest.raises(RegistryError, match="missing card"):
        write_deck(path, "bad", dict(full_deck()[:-1]))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.toml"]  # no temp files left


# --------------------------------------------------------------------------- chips


def test_example_sim_chips_load_and_match_generator() -> None:
    chips = load_chips(SIM_CHIPS)
    assert chips.id == "sim-chips"
    assert len(chips) == sum(SIM_CHIP_COUNTS.values()) == 750
    assert chips.value_of("04C00000250001") == 25
    assert chips.value_of("04C00001000300") == 100
    assert chips.value_of("04C00250000030") == 25000
    assert chips.value_of("04C00250000031") is None
    assert chips.denominations == SIM_CHIP_COLOURS
    assert chips.as_dict() == generate_sim_chips()
    assert SIM_CHIPS.read_text(encoding="utf-8") == format_chips(
        "sim-chips", chips.as_dict(), chips.denominations
    )


def test_chips_round_trip_is_byte_identical(tmp_path: Path) -> None:
    mapping = generate_sim_chips({500: 3, 25: 2})
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    write_chips(first, "c", mapping, {25: 'light "green"', 500: "purple"})
    chips = load_chips(first)
    assert chips.denominations == {25: 'light "green"', 500: "purple"}
    write_chips(second, chips.id, chips.as_dict(), chips.denominations)
    assert first.read_bytes() == second.read_bytes()


def test_chips_without_denominations() -> None:
    chips = ChipRegistry("c", {"04C00000050001": 5})
    assert chips.value_of("04c00000050001") == 5
    assert chips.denominations == {}


@pytest.mark.parametrize(
    ("tags", "denominations", "expected"),
    [
        ('"04C00000250001" = 0\n', "", "not a positive integer"),
        ('"04C00000250001" = -25\n', "", "not a positive integer"),
        ('"04C00000250001" = "25"\n', "", "not a positive integer"),
        ('"04C00000250001" = true\n', "", "not a positive integer"),
        ('"04c00000250001" = 25\n', "", "bad uid"),
        ('"04C00000250001" = 2500\n', '"25" = "green"\n', "not one of [denominations] 25"),
        ('"04C00000250001" = 25\n', '"x" = "green"\n', "[denominations] 'x'"),
        ("", "", "no chips"),
    ],
)
def test_refuse_bad_chip_file(tmp_path: Path, tags: str, denominations: str, expected: str) -> None:
    path = tmp_path / "chips.toml"
    text = f'[chips]\nid = "c"\n[denominations]\n{denominations}[tags]\n{tags}'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RegistryError) as info:
        load_chips(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


# --------------------------------------------------------------------------- registration


def test_full_registration_in_printed_order(tmp_path: Path) -> None:
    reg = DeckRegistration("house-1")
    assert reg.next_card == "2c"
    assert not reg.complete
    for i, card in enumerate(CARDS):
        result = reg.offer(uid(i))
        assert result.accepted
        assert result.card == card
        assert result.next_card == (CARDS[i + 1] if i < 51 else None)
    assert reg.complete
    assert reg.next_card is None
    assert result.message == "As registered, deck complete"
    path = tmp_path / "house-1.toml"
    reg.save(path)
    deck = load_deck(path)
    assert deck.id == "house-1"
    assert all(deck.card_of(uid(i)) == card for i, card in enumerate(CARDS))


def test_registration_refuses_a_duplicate_with_its_card() -> None:
    reg = DeckRegistration("d")
    for i in range(24):  # 2c .. 7s
        reg.offer(uid(i))
    result = reg.offer(uid(CARDS.index("7h")))
    assert not result.accepted
    assert result.card == "7h"
    assert result.message == "duplicate tag, already registered as 7h"
    assert reg.next_card == "8c"  # state unchanged
    assert len(reg) == 24


def test_registration_refuses_a_53rd_tag() -> None:
    reg = DeckRegistration("d")
    for i in range(52):
        reg.offer(uid(i))
    result = reg.offer(uid(52))
    assert not result.accepted
    assert result.message == "deck is complete"
    assert len(reg) == 52


def test_registration_refuses_a_bad_uid_and_normalises_case() -> None:
    reg = DeckRegistration("d")
    assert not reg.offer("xyz").accepted
    result = reg.offer(" 04a1b2c3d4e5f6 ")
    assert result.accepted and result.uid == "04A1B2C3D4E5F6" and result.card == "2c"
    assert reg.offer("04A1B2C3D4E5F6").message == "duplicate tag, already registered as 2c"


def test_registration_undo() -> None:
    reg = DeckRegistration("d")
    reg.offer(uid(0))
    reg.offer(uid(1))
    assert reg.undo() == "2d"
    assert reg.next_card == "2d"
    assert reg.offer(uid(9)).card == "2d"


def test_incomplete_registration_is_not_saved(tmp_path: Path) -> None:
    reg = DeckRegistration("d")
    reg.offer(uid(0))
    with pytest.raises(RegistryError, match="incomplete: 1 of 52"):
        reg.save(tmp_path / "d.toml")
    assert not (tmp_path / "d.toml").exists()


def test_sim_generators_are_deterministic_and_distinct() -> None:
    assert generate_sim_deck("x") == generate_sim_deck("x")
    assert set(generate_sim_deck("x")).isdisjoint(generate_sim_deck("y"))
    assert len(DeckRegistry("x", generate_sim_deck("x"))) == 52
    chips = generate_sim_chips({100: 2})
    assert chips == {"04C00001000001": 100, "04C00001000002": 100}
    with pytest.raises(RegistryError):
        generate_sim_deck("x", "NOTHEX")


def test_iso15693_uids_of_eight_bytes_are_registered() -> None:
    chips = ChipRegistry("slix", {"E004015012345678": 500})
    assert chips.value_of("e004015012345678") == 500
    with pytest.raises(RegistryError, match="8, 14, 16 or 20"):
        ChipRegistry("bad", {"E00401501234567": 5})
