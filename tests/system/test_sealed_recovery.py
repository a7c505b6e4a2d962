"""Sealed hole cards across SIGKILLs: every key is released once, never early, and TV gets all.

The daemon is `tablectl run` in a subprocess on a real mosquitto, the reader boards are
simulated here on real ptys (tests/table_rig.py). Its table releases each hole card's key
1.5 s after the read, so kills land while keys are owed, while they fall due and right
after they are released. A `tv` subscriber with a persistent session collects the sealed
messages and the keys. At the end, from the journal: every sealed hole-card message has
exactly one release, journaled after it and no earlier than its read plus the delay; on
the broker: the TV has a key for every one, and each opens its message; and the journal's
signed chain holds (`tablectl verify`).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from controller.chain import generate_keys, public_key_path
from controller.journal import list_segments, split_h
from controller.seal import open_sealed
from tablectl.cli import main as cli_main
from tests.broker import Mosquitto, Subscriber
from tests.table_rig import (
    PREFIX,
    Expectation,
    Player,
    TableRig,
    env_seed,
    poll,
    seeded,
    session,
    top_seq,
)

pytestmark = pytest.mark.timeout(600)

DELAY = 1.5
HANDS = 2
KILL_POINTS = 12


def _records(rig: TableRig) -> list[dict[str, Any]]:
    """Every `out` record of the journal (every segment, in order)."""
    out: list[dict[str, Any]] = []
    for path in list_segments(rig.journal):
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.name.endswith(".gz") else data).decode()
        for line in text.splitlines():
            if line.startswith('{"out"'):
                out.append(json.loads(split_h(line)[0]))
    return out


def test_recovery_after_kills_releases_every_key_exactly_once(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    seed = env_seed(20261129)
    rng = seeded(seed)
    key = tmp_path / "t09.key"
    generate_keys(key)
    seal = f'delay = {DELAY}\nsigning_key = "{key}"'
    with TableRig(tmp_path / "rig", mosquitto, segments=True, seal=seal) as rig:
        steps = session(rig.config, HANDS, 5)
        expect = Expectation(rig.config, steps)
        room = Subscriber(mosquitto, f"{PREFIX}/#")
        tv = Subscriber(
            mosquitto,
            [f"{PREFIX}/holecards", f"{PREFIX}/holekeys"],
            client_id="tv-under-test",
            persistent=True,
        )
        try:
            player = Player(rig, room, steps, expect)
            player.start()
            points = sorted(rng.sample(range(len(steps)), KILL_POINTS))
            kills = {
                k: rng.choice([0.0, rng.uniform(0.0, 0.2), rng.uniform(1.0, 2.0)]) for k in points
            }
            player.play(range(len(steps)), seed=seed, kills=kills, rng=rng)
            assert poll(lambda: top_seq(room) >= expect.seq_after[-1], 30)
            records = _records(rig)
            sealed = {r["payload"]["seq"]: r for r in records if r["out"] == "holecards"}
            assert sealed and all(
                r.get("key") and "cards" not in r["payload"] for r in sealed.values()
            )
            # every key owed falls due DELAY after its read: wait for the last
            assert poll(
                lambda: (
                    {r["payload"]["seq"] for r in _records(rig) if r["out"] == "holekeys"}
                    >= set(sealed)
                ),
                30,
            ), "a key was never released"
            assert rig.stop() == 0, rig.log.read_text()[-3000:]
            records = _records(rig)
        finally:
            room.close()
        releases = Counter(r["payload"]["seq"] for r in records if r["out"] == "holekeys")
        assert set(releases) == set(sealed)
        assert all(n == 1 for n in releases.values()), f"seed {seed}: released twice: {releases}"
        notices = Counter(r["payload"]["seq"] for r in records if r["out"] == "released")
        assert notices == releases
        order = [
            (r["out"], r["payload"]["seq"])
            for r in records
            if r["out"] in ("holecards", "holekeys")
        ]
        for seq, record in sealed.items():
            assert order.index(("holecards", seq)) < order.index(("holekeys", seq))
            released = next(
                r for r in records if r["out"] == "holekeys" and r["payload"]["seq"] == seq
            )
            assert released["payload"]["t"] >= record["payload"]["t"] + DELAY - 1e-6
            assert released["payload"]["key"] == record["key"]
        # TV got every sealed message and every key, and each key opens its message
        assert tv.wait_for(
            lambda msgs: (
                {json.loads(m.payload)["seq"] for m in msgs if m.topic.endswith("holekeys")}
                >= set(sealed)
            ),
            30,
        )
        got = [json.loads(m.payload) for m in tv.messages()]
        keys = {p["seq"]: p["key"] for p in got if "key" in p}
        cards = {p["seq"]: p for p in got if "sealed" in p}
        assert set(cards) == set(sealed)
        for seq, payload in cards.items():
            assert open_sealed(payload, keys[seq]) == open_sealed(
                sealed[seq]["payload"], sealed[seq]["key"]
            )
        tv.close()
        # the kills broke nothing of the signed chain
        assert rig.kills >= KILL_POINTS
        code = cli_main(["verify", str(rig.journal), "--config", str(rig.config_path)])
        assert code == 0
        assert public_key_path(key).exists()
