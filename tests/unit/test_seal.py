"""Sealed hole cards and their key releases (controller/seal.py), in process."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from controller.chain import GENESIS, Verifier, body_bytes, generate_keys, link, signed_message
from controller.seal import (
    HOLEKEYS,
    RELEASED,
    ReleasePolicy,
    SealError,
    TableSeal,
    aad,
    open_sealed,
    seal_cards,
)
from kernel.messages import EVENTS, HOLECARDS, Message


def holecards(hand: int, seat: int, cards: list[str], t: float) -> Message:
    """A hole-card message as the engine makes it (cards in the clear)."""
    return Message(HOLECARDS, {"table": "t01", "hand": hand, "seat": seat, "cards": cards, "t": t})


def event(seq: int, kind: str, hand: int | None, t: float, **fields: object) -> Message:
    payload = {"type": kind, "seq": seq, "table": "t01", "hand": hand, "t": t, **fields}
    return Message(EVENTS, payload)


def test_a_sealed_card_opens_with_its_key_only_and_only_where_it_was_sealed() -> None:
    key, sealed = seal_cards(["As", "Kd"], aad("t01", 3, 2, 7))
    payload = {"table": "t01", "hand": 3, "seat": 2, "seq": 7, "sealed": sealed}
    assert open_sealed(payload, key) == ["As", "Kd"]
    # The cards as they went in (compact JSON) are nowhere in the box, nor in its base64:
    # the two letters of a card alone turn up in random bytes now and then (1 run in ~60).
    plain = b'["As","Kd"]'
    assert plain not in base64.b64decode(sealed)
    assert base64.b64encode(plain).decode()[:12] not in sealed
    other, _ = seal_cards(["As", "Kd"], aad("t01", 3, 2, 7))
    with pytest.raises(SealError):
        open_sealed(payload, other)  # another message's key
    for moved in ({"seat": 3}, {"hand": 4}, {"seq": 8}, {"table": "t02"}):
        with pytest.raises(SealError):
            open_sealed({**payload, **moved}, key)  # the same box shown as another seat's
    tampered = bytearray(base64.b64decode(sealed))
    tampered[-1] ^= 1
    with pytest.raises(SealError):
        open_sealed({**payload, "sealed": base64.b64encode(bytes(tampered)).decode()}, key)


def test_hole_cards_leave_sealed_with_a_sequence_and_no_card() -> None:
    seal = TableSeal("t01", ReleasePolicy(30.0, False))
    records = seal.outgoing("engine", [holecards(1, 2, ["As"], 1.0)], now=1.0)
    records += seal.outgoing("engine", [holecards(1, 2, ["As", "Kd"], 1.5)], now=1.5)
    assert [r.message.topic for r in records] == [HOLECARDS, HOLECARDS]
    first, second = (r.message.payload for r in records)
    assert (first["seq"], second["seq"], second["first"], second["count"]) == (1, 2, 1, 2)
    assert "cards" not in first and not any(c in json.dumps(first) for c in ('"As"', '"Kd"'))
    assert open_sealed(second, records[1].key or "") == ["As", "Kd"]
    assert records[0].key != records[1].key  # a key per message


def test_rule_delay_a_key_is_released_no_earlier_than_the_delay_after_the_read() -> None:
    seal = TableSeal("t01", ReleasePolicy(30.0, False))
    sealed = seal.outgoing("engine", [holecards(1, 2, ["As", "Kd"], 1.0)], now=1.0)[0]
    assert seal.next_due() == 31.0
    assert seal.due(30.999) == []
    released = seal.due(31.2)
    assert [r.message.topic for r in released] == [HOLEKEYS, RELEASED]
    keys, notice = (r.message.payload for r in released)
    assert keys["key"] == sealed.key and keys["to"] == "tv" and keys["t"] == 31.2
    assert "key" not in notice and notice["read_t"] == 1.0 and notice["rule"] == "delay"
    assert open_sealed(sealed.message.payload, keys["key"]) == ["As", "Kd"]
    assert seal.due(100.0) == []  # once only


def test_rule_hand_end_strictest_wins() -> None:
    """At hand end and after the delay: the later of the two."""
    seal = TableSeal("t01", ReleasePolicy(5.0, True))
    seal.outgoing("engine", [holecards(1, 1, ["As", "Kd"], 1.0)], now=1.0)
    assert seal.next_due() is None and seal.due(1000.0) == []  # not before the hand is over
    early_end = seal.outgoing("engine", [event(1, "hand_completed", 1, 3.0, stacks={})], now=3.0)
    assert [r.message.topic for r in early_end] == [EVENTS]  # the delay is not over yet
    assert seal.next_due() == 6.0
    assert [r.message.topic for r in seal.due(6.0)] == [HOLEKEYS, RELEASED]
    seal.outgoing("engine", [holecards(2, 1, ["2c", "3c"], 10.0)], now=10.0)
    late_end = seal.outgoing("engine", [event(2, "hand_completed", 2, 40.0, stacks={})], now=40.0)
    topics = [r.message.topic for r in late_end]
    assert topics == [EVENTS, HOLEKEYS, RELEASED]  # released with the hand's end
    assert late_end[2].message.payload["rule"] == "hand_end"


def test_the_events_chain_links_every_event_and_signs_each_hand(tmp_path: Path) -> None:
    signer = generate_keys(tmp_path / "t.key")
    seal = TableSeal("t01", ReleasePolicy(30.0, False), signer)
    out = seal.outgoing(
        "engine",
        [event(1, "hand_started", 1, 1.0), event(2, "hand_completed", 1, 2.0, stacks={"1": 5})],
        now=2.0,
    )
    first, second = (r.message.payload for r in out)
    head = link(link(GENESIS, body_bytes(first)), body_bytes(second))
    assert first["chain"] == link(GENESIS, body_bytes(first)).hex()
    assert second["chain"] == head.hex()
    assert out[1].sign and not out[0].sign  # the journal is signed after the hand too
    assert "signature" not in first
    sig = second["signature"]
    verifier = Verifier(signer.public)
    assert sig["key"] == verifier.key_id
    assert verifier.check(signed_message("t01", 2, head), sig["sig"])
    assert not verifier.check(signed_message("t01", 2, bytes(32)), sig["sig"])


def test_the_state_survives_a_segment_and_a_restart() -> None:
    seal = TableSeal("t01", ReleasePolicy(30.0, False))
    seal.outgoing("engine", [event(1, "hand_started", 1, 1.0)], now=1.0)
    sealed = seal.outgoing("engine", [holecards(1, 1, ["As", "Kd"], 1.0)], now=1.0)[0]
    again = TableSeal("t01", ReleasePolicy(30.0, False))
    again.restore(seal.snapshot(), [])
    assert (again.hseq, again.chain_head, again.next_due()) == (1, seal.chain_head, 31.0)
    released = again.due(31.0)
    assert released[0].message.payload["key"] == sealed.key
    # a key asked for before its time: refused, alerted
    third = TableSeal("t01", ReleasePolicy(30.0, False))
    third.restore(seal.snapshot(), [])
    alert = third.refusal([1], 5.0)
    assert alert.payload["type"] == "holekey_refused" and alert.payload["seqs"] == [1]
    assert sealed.key is not None and sealed.key not in json.dumps(alert.payload)


def test_what_leaves_the_table_matches_the_schemas(tmp_path: Path) -> None:
    from controller.schema import validate

    seal = TableSeal("t01", ReleasePolicy(0.0, False), generate_keys(tmp_path / "t.key"))
    records = seal.outgoing(
        "engine",
        [
            event(
                1,
                "hand_started",
                1,
                1.0,
                button=1,
                small_blind=1,
                big_blind=2,
                ante=0,
                trigger="shuffler",
            ),
            holecards(1, 2, ["As", "Kd"], 1.0),
            event(2, "hand_completed", 1, 2.0, stacks={"2": 5}),
        ],
        now=2.0,
    )
    assert [r.message.topic for r in records] == [EVENTS, HOLECARDS, EVENTS, HOLEKEYS, RELEASED]
    for record in records:
        validate(record.message)
    validate(holecards(1, 2, ["As", "Kd"], 1.0))  # the engine's, in the clear


def test_the_signing_key_is_private_whatever_the_umask(tmp_path: Path) -> None:
    import os
    import stat

    from controller.chain import ChainError, load_signer, public_key_path

    old = os.umask(0)
    try:
        signer = generate_keys(tmp_path / "keys" / "t01.key")
    finally:
        os.umask(old)
    key = tmp_path / "keys" / "t01.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert load_signer(key).key_id == signer.key_id
    assert public_key_path(key).read_text().startswith("-----BEGIN PUBLIC KEY-----")
    with pytest.raises(ChainError, match="exists"):
        generate_keys(key)  # never overwritten
    key.chmod(0o644)
    with pytest.raises(ChainError):
        load_signer(key)  # others may read it: refused, as ssh refuses a private key


def test_a_key_asked_for_early_is_refused_and_alerted(tmp_path: Path) -> None:
    """TV asks on tvreq/holekeys for a key not yet due: nothing is sent, the room is told."""
    from controller.config import load_config
    from controller.daemon import Daemon
    from controller.holeresend import HoleRequest
    from controller.journal import open_journal
    from kernel.messages import ALERTS
    from tests.unit.test_journal_rotation import EPOCH, TABLE_TOML, session

    (tmp_path / "t01.toml").write_text(TABLE_TOML + "\n[seal]\ndelay = 3600\n")
    config = load_config(tmp_path / "t01.toml")
    daemon = Daemon(config, clock=lambda: EPOCH)
    daemon.journal = open_journal(config.journal, "t01", now=EPOCH)
    daemon.epoch = daemon.journal.epoch
    out = [m for e in session(config, hands=1) for m in daemon.handle([e])]
    sealed = [m.payload["seq"] for m in out if m.topic == HOLECARDS]
    assert sealed and not [m for m in out if m.topic == HOLEKEYS]  # an hour to go
    answer = daemon.handle([HoleRequest("holekeys", sealed[0], sealed[-1])])
    assert not [m for m in answer if m.topic == HOLEKEYS]
    alerts = [m.payload for m in answer if m.topic == ALERTS]
    assert [a["type"] for a in alerts] == ["holekey_refused"]
    assert alerts[0]["seqs"] == sealed and alerts[0]["severity"] == "critical"
    # the sealed cards themselves may be asked for again: the same bytes, still sealed
    again = daemon.handle([HoleRequest("holecards", sealed[0], sealed[-1])])
    assert [m.payload for m in again] == [m.payload for m in out if m.topic == HOLECARDS]
    daemon.journal.close()
