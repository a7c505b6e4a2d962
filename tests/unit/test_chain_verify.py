"""The signed chain: one altered, removed or reordered event in a journal or in the room's
database is found by `tablectl verify` and by the room, named by where it breaks."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.chain import body_bytes, generate_keys, link, public_key_path
from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.journal import chain_record, list_segments, open_journal, split_h
from controller.replay import replay_path
from room.config import load_room_config
from room.export import export_events
from room.ingest import Incoming, Ingest
from room.store import open_store
from tablectl.cli import main as cli_main
from tests.unit.test_journal_rotation import EPOCH, TABLE_TOML, session

Edit = Callable[[list[str], int], None]


def _alter(lines: list[str], i: int) -> None:
    lines[i] = lines[i].replace('"amount":', '"amount":1', 1)


def _remove(lines: list[str], i: int) -> None:
    del lines[i]


def _swap(lines: list[str], i: int) -> None:
    lines[i], lines[i + 1] = lines[i + 1], lines[i]


EDITS = {"altered": _alter, "removed": _remove, "reordered": _swap}


def signed_table(tmp_path: Path, *, directory: bool = True) -> tuple[Config, Path]:
    """A table with a signing key and a journal of three hands (in process, no broker)."""
    generate_keys(tmp_path / "t01.key")
    journal = "" if directory else '\n[journal]\npath = "t01.journal"\n'
    toml = TABLE_TOML if directory else TABLE_TOML.split("[journal]")[0] + journal
    (tmp_path / "t01.toml").write_text(toml + '\n[seal]\ndelay = 0\nsigning_key = "t01.key"\n')
    config = load_config(tmp_path / "t01.toml")
    daemon = Daemon(config, clock=lambda: EPOCH)
    daemon.journal = open_journal(config.journal, "t01", now=EPOCH, signer=daemon.seal.signer)
    daemon.epoch = daemon.journal.epoch
    for e in session(config, hands=3):
        daemon.handle([e])
    daemon.journal.close()
    return config, tmp_path / "t01.toml"


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.name.endswith(".gz") else data).decode()


def _write(path: Path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode()) if path.name.endswith(".gz") else text.encode())


def verify(path: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli_main(["verify", str(path), "--config", str(config)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_verify_finds_one_event_altered_removed_or_reordered_in_a_journal(
    tmp_path: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _config, toml = signed_table(tmp_path)
    journal = tmp_path / "journal"
    assert verify(journal, toml, capsys)[0] == 0
    segment = list_segments(journal)[0]
    lines = _text(segment).split("\n")
    i = next(
        k
        for k, line in enumerate(lines)
        if line.startswith('{"out":"events"') and '"action"' in line
    )
    EDITS[edit](lines, i)
    _write(segment, "\n".join(lines))
    code, said = verify(journal, toml, capsys)
    assert code == 1
    assert f"BROKEN at {segment}:{i + 1}:" in said


def test_a_journal_rehashed_after_an_edit_still_fails_on_its_signature(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Someone with the Pi's disk but not its key edits an event, then recomputes the events
    chain and every record's `h` after it: both chains are whole again, and the next
    signature is not the table's."""
    _config, toml = signed_table(tmp_path, directory=False)
    path = tmp_path / "t01.journal"
    lines = path.read_text().rstrip("\n").split("\n")
    i = next(
        k
        for k, line in enumerate(lines)
        if line.startswith('{"out":"events"') and '"action"' in line
    )
    before = [
        json.loads(split_h(x)[0])["payload"] for x in lines[:i] if x.startswith('{"out":"events"')
    ]
    events_head = bytes.fromhex(before[-1]["chain"])
    prev = bytes.fromhex(split_h(lines[i - 1])[1] or "")
    out = lines[:i]
    for k, line in enumerate(lines[i:], start=i):
        body, h = split_h(line)
        if h is None:
            out.append(line)
            continue
        if body.startswith('{"out":"events"'):
            record = json.loads(body)
            payload = record["payload"]
            if k == i:
                payload["amount"] = payload["amount"] + 1
            events_head = link(events_head, body_bytes(payload))
            payload["chain"] = events_head.hex()
            body = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        new, prev = chain_record(prev, body)
        out.append(new)
    path.write_text("\n".join(out) + "\n")
    code, said = verify(path, toml, capsys)
    assert code == 1
    assert "not the table's" in said or "names another chain head" in said, said
    first_signed = next(
        k for k in range(i, len(out)) if out[k].startswith('{"sig"') or '"signature"' in out[k]
    )
    assert f"{path}:{first_signed + 1}:" in said


def test_replay_of_a_sealed_journal_checks_what_was_published(tmp_path: Path) -> None:
    config, _toml = signed_table(tmp_path, directory=False)
    path = tmp_path / "t01.journal"
    result = replay_path(config, path, io.StringIO())
    assert result.messages > 0 and result.mismatches == []
    # a hole-card message whose journaled key is another's: replay cannot open it: differs
    lines = path.read_text().split("\n")
    sealed = [k for k, line in enumerate(lines) if line.startswith('{"out":"holecards"')]
    a, b = (json.loads(split_h(lines[k])[0]) for k in sealed[:2])
    body = split_h(lines[sealed[0]])[0].replace(a["key"], b["key"])
    lines[sealed[0]] = body  # (no h: replay reads the records, verify checks the chain)
    path.write_text("\n".join(lines))
    result = replay_path(config, path, io.StringIO())
    assert result.mismatches and "unopenable" in result.mismatches[0]


def _room(tmp_path: Path, keys: Path) -> Path:
    path = tmp_path / "room.toml"
    path.write_text(
        f'[room]\nname = "sim"\n[database]\npath = "{tmp_path / "room.db"}"\n'
        f'[keys]\ndirectory = "{keys}"\n'
    )
    return path


def _published(tmp_path: Path) -> list[bytes]:
    """The table's events as it published them (its journal's out records, in order)."""
    _config, _toml = signed_table(tmp_path / "table", directory=False)
    text = (tmp_path / "table" / "t01.journal").read_text()
    out = []
    for line in text.splitlines():
        if line.startswith('{"out":"events"'):
            payload = json.loads(split_h(line)[0])["payload"]
            out.append(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
    return out


def _ingest(tmp_path: Path) -> tuple[Ingest, Path]:
    keys = tmp_path / "keys"
    keys.mkdir()
    events = _published(tmp_path)
    (keys / "t01.pub").write_text(public_key_path(tmp_path / "table" / "t01.key").read_text())
    config = load_room_config(_room(tmp_path, keys))
    store = open_store(config.database, config.name)
    ingest = Ingest(config, store)
    items = [Incoming("poker/sim/t01/events", p, 0, 0, EPOCH + k) for k, p in enumerate(events)]
    ingest._write(items)
    return ingest, tmp_path / "room.toml"


def _room_alerts(ingest: Ingest) -> list[str]:
    return [str(a["type"]) for a in ingest.store.room_alerts()]


def test_the_room_checks_the_chain_and_the_signatures_as_it_stores(tmp_path: Path) -> None:
    ingest, _toml = _ingest(tmp_path)
    assert "chain_broken" not in _room_alerts(ingest)
    assert ingest.chain.checked > 0 and ingest.chain.broken == 0
    # a forged event (the broker's operator, a table impostor): not the table's chain
    last = ingest.store.query("SELECT MAX(seq) AS s FROM events")[0]["s"]
    forged = {"type": "table_paused", "seq": last + 1, "table": "t01", "hand": None, "t": 999.0}
    forged["chain"] = hashlib.sha256(b"x").hexdigest()
    text = json.dumps(forged, separators=(",", ":")).encode()
    ingest._write([Incoming("poker/sim/t01/events", text, 0, 0, EPOCH + 999)])
    assert "chain_broken" in _room_alerts(ingest)
    ingest.store.close()


@pytest.mark.parametrize("edit", ["altered", "removed", "reordered"])
def test_the_room_and_verify_find_one_event_changed_in_the_database(
    tmp_path: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ingest, toml = _ingest(tmp_path)
    config = load_room_config(toml)
    export_events(config, tmp_path / "clean")
    assert verify(tmp_path / "clean" / "t01.events", toml, capsys)[0] == 0
    db = sqlite3.connect(tmp_path / "room.db")
    rows = db.execute(
        "SELECT seq, payload FROM events WHERE type = 'action' ORDER BY seq"
    ).fetchall()
    seq, payload = rows[3]
    if edit == "altered":
        db.execute(
            "UPDATE events SET payload = ? WHERE seq = ?",
            (payload.replace('"amount":', '"amount":1', 1), seq),
        )
    elif edit == "removed":
        db.execute("DELETE FROM events WHERE seq = ?", (seq,))
    else:
        other = db.execute("SELECT payload FROM events WHERE seq = ?", (seq + 1,)).fetchone()[0]
        db.execute("UPDATE events SET payload = ? WHERE seq = ?", (other, seq))
        db.execute("UPDATE events SET payload = ? WHERE seq = ?", (payload, seq + 1))
    db.commit()
    db.close()
    # the room's own audit (`tablectl room verify`) ...
    report = ingest.chain.audit("t01")
    assert not report.ok and f" {seq}" in str(report.broken)
    code = cli_main(["room", "verify", "--config", str(toml)])
    assert code == 1
    assert "chain_broken" in _room_alerts(ingest)
    # ... and `tablectl verify` of the room's export
    export_events(config, tmp_path / "tampered")
    code, said = verify(tmp_path / "tampered" / "t01.events", toml, capsys)
    assert code == 1 and f" {seq}" in said
    ingest.store.close()


def test_replay_checks_the_published_chain_too(tmp_path: Path) -> None:
    """The engine gives the same events, but the journal's record of what was published
    says another chain: replay reports it (the chain is verified, not set aside)."""
    config, _toml = signed_table(tmp_path, directory=False)
    path = tmp_path / "t01.journal"
    lines = path.read_text().split("\n")
    i = next(k for k, line in enumerate(lines) if line.startswith('{"out":"events"'))
    record = json.loads(split_h(lines[i])[0])
    record["payload"]["chain"] = "0" * 64
    lines[i] = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    path.write_text("\n".join(lines))
    result = replay_path(config, path, io.StringIO())
    assert result.mismatches and "chain" in result.mismatches[0]


def test_the_hand_page_says_when_each_hole_card_became_readable(tmp_path: Path) -> None:
    """The room stores the release notices (never a key) and its hand page lists them."""
    from room.chain import readable
    from room.render import readable_fragment

    ingest, _toml = _ingest(tmp_path)
    notice = {
        "table": "t01",
        "hand": 1,
        "seat": 3,
        "seq": 5,
        "count": 2,
        "to": "tv",
        "read_t": 2.5,
        "rule": "delay",
        "delay": 30.0,
        "at_hand_end": False,
        "t": 32.5,
    }
    early = {**notice, "seq": 6, "seat": 4, "t": 10.0}
    items = [
        Incoming(
            "poker/sim/t01/released",
            json.dumps(n, separators=(",", ":")).encode(),  # as the table publishes
            0,
            0,
            EPOCH + 40,
        )
        for n in (notice, early)
    ]
    ingest._write(items)
    stored = readable(ingest.store, "t01", 1)
    assert [(n["seat"], n["t"]) for n in stored] == [(3, 32.5), (4, 10.0)]
    html = readable_fragment(stored)
    assert "Hole cards readable" in html and "32.5 s" in html and ">tv<" in html
    assert "early_release" in _room_alerts(ingest)  # seat 4's key went 22.5 s too soon
    ingest.store.close()


def test_a_phh_file_carries_its_signed_chain_and_verify_checks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pokerkit import HandHistory

    _config, toml = signed_table(tmp_path, directory=False)
    out = tmp_path / "phh"
    assert (
        cli_main(
            ["export-phh", str(tmp_path / "t01.journal"), "--config", str(toml), "--out", str(out)]
        )
        == 0
    )
    capsys.readouterr()
    first = sorted(out.glob("*.phh"))[0]
    text = first.read_text()
    assert "_chain_head = " in text and "_chain_signature = " in text and "_events = [" in text
    with first.open("rb") as fh:
        HandHistory.load(fh)  # still a PHH file pokerkit reads
    assert verify(first, toml, capsys)[0] == 0
    first.write_text(text.replace("finishing_stacks = [", "finishing_stacks = [1", 1))
    code, said = verify(first, toml, capsys)
    assert code == 1 and "finishing_stacks" in said
    # an event inside it changed: the chain breaks there
    first.write_text(text.replace('\\"amount\\":', '\\"amount\\":1', 1))
    code, said = verify(first, toml, capsys)
    assert code == 1 and "_events[" in said
