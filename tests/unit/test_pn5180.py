"""The firmware's PN5180 driver against the simulated PN5180: the SPI command protocol with
its BUSY handshake, registers, RF, ISO 15693 inventories with collisions, ISO 14443A
anticollision over the cascade levels."""

from __future__ import annotations

import random
from typing import Any

import pytest

from firmware import pn5180 as chip
from firmware.hal import HardwareError
from firmware.pn5180 import PN5180
from firmware_sim.pn5180_sim import ProximityTag, SimBus, SimPN5180, VirtualClock

pytestmark = pytest.mark.timeout(60)


def rig(count: int = 1) -> tuple[VirtualClock, list[SimPN5180], list[PN5180]]:
    clock = VirtualClock()
    sims = [SimPN5180(clock) for _ in range(count)]
    bus = SimBus(sims)
    drivers = [PN5180(bus, i, clock) for i in range(count)]
    for driver in drivers:
        driver.begin()
    return clock, sims, drivers


def vicinity_uid(rng: random.Random) -> bytes:
    return bytes([0xE0, 0x04, 0x01]) + bytes(rng.randrange(256) for _ in range(5))


def test_begin_reads_the_versions_and_a_missing_chip_is_an_error() -> None:
    _, sims, drivers = rig(2)
    assert drivers[0].begin() == (0x0305, 0x0400)  # product 3.5, firmware 4.0 (little endian)
    sims[1].dead = True
    with pytest.raises(HardwareError, match="BUSY stuck"):
        drivers[1].begin()


def test_registers_write_or_and_read_and_irq_clear() -> None:
    _, sims, (driver,) = rig()
    driver.write_register(chip.TX_CONFIG, 0x0000F0F0)
    driver.or_register(chip.TX_CONFIG, 0x0000000F)
    driver.and_register(chip.TX_CONFIG, 0xFFFF0FFF)
    assert driver.read_register(chip.TX_CONFIG) == 0x000000FF
    sims[0].registers[chip.IRQ_STATUS] = chip.IRQ_RX | chip.IRQ_TX | chip.IRQ_TIMER1
    driver.write_register(chip.IRQ_CLEAR, chip.IRQ_RX | chip.IRQ_TIMER1)
    assert driver.read_register(chip.IRQ_STATUS) == chip.IRQ_TX


def test_every_frame_waits_for_busy_to_fall() -> None:
    _, sims, (driver,) = rig()
    rng = random.Random(1)
    for _ in range(12):
        sims[0].place(vicinity_uid(rng))
    sims[0].place(bytes.fromhex("04A1B2C3D4E5F6"))
    polls = 0
    real_busy = sims[0].busy

    def counted() -> bool:
        nonlocal polls
        high = real_busy()
        polls += high
        return high

    sims[0].busy = counted  # type: ignore[method-assign]
    assert len(driver.read_tags((chip.ISO15693, chip.ISO14443A))) == 13
    assert sims[0].violations == 0  # never a frame while BUSY was high...
    assert polls > 100  # ...though it was high after nearly every command
    # A host that ignores BUSY loses its frames: the simulated chip ignores them, as the real one.
    driver.write_register(chip.TX_CONFIG, 0x1234)
    driver.bus.select(0)
    driver.bus.write(bytes([chip.WRITE_REGISTER, chip.TX_CONFIG, 0, 0, 0, 0]))
    driver.bus.deselect()
    assert sims[0].violations == 1
    assert driver.read_register(chip.TX_CONFIG) == 0x1234


def test_rf_on_waits_for_the_field_and_the_tags_power_up() -> None:
    clock, sims, (driver,) = rig()
    before = clock.now
    driver.field_on(chip.ISO14443A)
    assert sims[0].rf
    assert clock.now - before >= chip.RF_GUARD_14443A_US
    driver.rf_off()
    assert not sims[0].rf


def test_iso15693_single_tag_is_read_by_a_one_slot_inventory() -> None:
    _, sims, (driver,) = rig()
    uid = bytes.fromhex("E004015012345678")
    sims[0].place(uid)
    driver.field_on(chip.ISO15693)
    rounds: list[int] = []
    assert driver.inventory_15693(rounds) == [uid]
    assert rounds == [-1]  # the one-slot request alone: no collision, no 16-slot round


def test_iso15693_empty_field_costs_one_request() -> None:
    clock, sims, (driver,) = rig()
    driver.field_on(chip.ISO15693)
    exchanges, before = sims[0].exchanges, clock.now
    assert driver.inventory_15693() == []
    assert sims[0].exchanges == exchanges + 1
    assert clock.now - before < 3000  # request 1.7 ms + the response timeout


def test_iso15693_tags_in_one_slot_collide_and_are_split_by_the_mask() -> None:
    _, sims, (driver,) = rig()
    # Same lowest nibble (slot 7 of the first round) and same next nibble: a collision in
    # the first round and again in the round masked with 4 bits; the 8-bit mask splits them.
    uids = [bytes.fromhex("E0040150000001" + end) for end in ("17", "27")]
    other = bytes.fromhex("E004015000000103")
    for uid in [*uids, other]:
        sims[0].place(uid)
    driver.field_on(chip.ISO15693)
    rounds: list[int] = []
    found = driver.inventory_15693(rounds)
    assert sorted(found) == sorted([*uids, other])
    assert rounds == [-1, 0, 4]  # one slot (collision), 16 slots, then 16 under a 4-bit mask
    assert sims[0].violations == 0


@pytest.mark.parametrize("count", [2, 16, 40, 100])
def test_iso15693_stacked_chips_are_all_resolved(count: int) -> None:
    _, sims, (driver,) = rig()
    rng = random.Random(count)
    uids = {vicinity_uid(rng) for _ in range(count)}
    for uid in uids:
        sims[0].place(uid)
    assert set(driver.read_tags((chip.ISO15693,))) == uids


def test_iso14443a_single_double_and_triple_size_uids() -> None:
    _, sims, (driver,) = rig()
    uids = [bytes.fromhex(h) for h in ("DEADBEEF", "04A1B2C3D4E5F6", "04112233445566778899")]
    for uid in uids:
        sims[0].place(uid)
    assert sorted(driver.read_tags((chip.ISO14443A,))) == sorted(uids)


@pytest.mark.parametrize("count", [2, 9, 52])
def test_iso14443a_overlapping_cards_with_a_common_prefix(count: int) -> None:
    _, sims, (driver,) = rig()
    # A deck: the first cascade level is the same for every card; they differ in the last bits.
    uids = {bytes.fromhex(f"04A000000000{i:02X}") for i in range(1, count + 1)}
    for uid in uids:
        sims[0].place(uid)
    assert set(driver.read_tags((chip.ISO14443A,))) == uids
    # Halted cards wake up when the field comes back: the next scan reads them all again.
    assert set(driver.read_tags((chip.ISO14443A,))) == uids
    assert all(isinstance(t, ProximityTag) and t.state == 0 for t in sims[0].tags)


def test_protocols_do_not_see_each_others_tags() -> None:
    _, sims, (driver,) = rig()
    card, tag = bytes.fromhex("04A1B2C3D4E5F6"), bytes.fromhex("E004015012345678")
    sims[0].place(card)
    sims[0].place(tag)
    assert driver.read_tags((chip.ISO14443A,)) == [card]
    assert driver.read_tags((chip.ISO15693,)) == [tag]
    assert driver.read_tags((chip.ISO15693, chip.ISO14443A)) == [tag, card]


def test_a_front_end_that_stops_answering_is_set_up_again_when_it_is_back() -> None:
    _, sims, (driver,) = rig()
    card = bytes.fromhex("04A1B2C3D4E5F6")
    sims[0].place(card)
    sims[0].dead = True
    with pytest.raises(HardwareError):
        driver.read_tags((chip.ISO14443A,))
    assert not driver.ready
    sims[0].dead = False
    sims[0].reset()  # it was replaced or power-cycled
    assert driver.read_tags((chip.ISO14443A,)) == [card]
    assert driver.ready


def test_modelled_time_of_one_antenna_follows_the_air_protocols() -> None:
    clock, sims, (driver,) = rig()
    sims[0].place(bytes.fromhex("E004015012345678"))
    before = clock.now
    driver.read_tags((chip.ISO15693,))
    one_tag_us = clock.now - before
    # RF config, field on + 1 ms guard, request (5 bytes: 1.7 ms), t1, answer (12 bytes: 3.7 ms)
    assert 6_500 < one_tag_us < 9_000


def proximity_uid(rng: random.Random, deck: bool) -> bytes:
    """An NTAG-like card: random (04 and six bytes), or of a deck sharing its first level."""
    if deck:
        return bytes.fromhex(f"04A000000000{rng.randrange(256):02X}")
    return bytes([0x04]) + bytes(rng.randrange(256) for _ in range(6))


def changed_field(
    rng: random.Random, sim: SimPN5180, deck: bool
) -> tuple[list[bytes], str]:
    """A field of up to 19 cards, known to the board, then (maybe) changed."""
    sim.tags = []
    known = list(dict.fromkeys(proximity_uid(rng, deck) for _ in range(rng.randrange(1, 20))))
    for uid in known:
        sim.place(uid)
    change = rng.choice(["none", "left", "came", "swapped"])
    if change in ("left", "swapped"):
        for uid in rng.sample(known, rng.randrange(1, len(known) + 1)):
            sim.remove(uid)
    if change in ("came", "swapped"):
        for _ in range(rng.randrange(1, 3)):
            uid = proximity_uid(rng, deck)
            if uid not in known:
                sim.place(uid)
    if sorted(t.uid for t in sim.tags) == sorted(known):
        change = "none"
    return known, change


def test_known_cards_are_checked_without_reading_them_and_every_change_is_seen() -> None:
    """check_14443a: True exactly when the field holds the known cards and no other; a card
    that came (even one sharing a known card's first cascade level), one that left, or both,
    always make it False. And it takes less time than reading the cards: much less for a
    deck that shares its first level."""
    clock, sims, (driver,) = rig()
    rng = random.Random(29)
    seen = {"none": 0, "left": 0, "came": 0, "swapped": 0}
    for trial in range(600):
        known, change = changed_field(rng, sims[0], deck=trial % 3 == 0)
        seen[change] += 1
        driver.field_on(chip.ISO14443A)
        assert driver.check_14443a(known) == (change == "none"), (trial, change, len(known))
        driver.rf_off()
    assert min(seen.values()) > 50
    for deck, ratio in ((False, 0.8), (True, 0.5)):
        cards = list({proximity_uid(rng, deck) for _ in range(8)})
        sims[0].tags = []
        for uid in cards:
            sims[0].place(uid)
        before = clock.now
        driver.field_on(chip.ISO14443A)
        assert driver.check_14443a(cards)
        driver.rf_off()
        checked = clock.now - before
        before = clock.now
        assert sorted(driver.read_tags((chip.ISO14443A,))) == sorted(cards)
        assert checked < ratio * (clock.now - before)


def test_a_read_in_steps_with_the_field_off_between_finds_every_card_once() -> None:
    """FieldRead: another front-end may be read between two steps (the field goes off):
    the read still finds every card and chip in the field, checked or read, once."""
    _, sims, (driver, other) = rig(2)
    rng = random.Random(7)
    for trial in range(300):
        known, _change = changed_field(rng, sims[0], deck=trial % 2 == 0)
        chips = [vicinity_uid(rng) for _ in range(rng.randrange(0, 40))]
        for uid in chips:
            sims[0].place(uid)
        read = chip.FieldRead(
            driver,
            (chip.ISO15693, chip.ISO14443A),
            expect=len(chips),
            known=known if trial % 4 else None,
        )
        while not read.done:
            read.step()
            if rng.random() < 0.4:
                read.pause()
                other.read_tags((chip.ISO14443A,))
        assert sorted(read.found) == sorted(t.uid for t in sims[0].tags), trial
        assert len(set(read.found)) == len(read.found)
    assert sims[0].violations == 0


def test_a_card_that_leaves_during_the_anticollision_does_not_end_the_read() -> None:
    """Cards lifted one after another from the muck while the board reads it: those still
    there are all found (the walk that lost its card sends the others back to idle); this
    once ended the read early, and the cards not yet read were reported gone."""
    _, sims, (driver,) = rig()
    rng = random.Random(3)
    for _ in range(100):
        sims[0].tags = []
        cards = [proximity_uid(rng, deck=False) for _ in range(rng.randrange(4, 20))]
        for uid in cards:
            sims[0].place(uid)
        leaving = rng.sample(cards, rng.randrange(1, len(cards) // 2 + 1))
        real_send = sims[0]._send

        def send(
            data: bytes, last_bits: int, leaving: list[bytes] = leaving, real_send: Any = real_send
        ) -> None:
            if leaving and rng.random() < 0.08:  # in the middle of a walk
                sims[0].remove(leaving.pop())
            real_send(data, last_bits)

        sims[0]._send = send  # type: ignore[method-assign]
        try:
            found = driver.read_tags((chip.ISO14443A,))
        finally:
            sims[0]._send = real_send  # type: ignore[method-assign]
        assert {t.uid for t in sims[0].tags} <= set(found)
