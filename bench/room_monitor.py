"""What the monitor's room view costs the server: rendering it for N tables (SQLite).

Each table gets the stored rows of one demo hand played by the real engine (its events,
a `state` in the middle of the hand, an `online` status, a floor call not acknowledged),
written through the room's store. The room view's fragment (`/fragments/room`: every
tile, its banners) is rendered in process, as the page's reload asks for it; the median of
`--runs` renders after one warm-up is reported, with the size of the HTML.

Usage: python -m bench.room_monitor --tables 10 100 1000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from controller.config import load_config
from controller.replay import build_engine, drive
from room import pages
from room.config import load_room_config
from room.deps import RoomContext
from room.store import Batch, EventRow, MessageRow, Store, open_store
from sim.demo import demo_script

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sim-table.toml"
FLOOR = {"type": "floor_called", "severity": "warning", "message": "floor called", "t": 1.0}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def one_hand() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events of one demo hand and a state from the middle of it."""
    config = load_config(EXAMPLE)
    messages = [m for _e, ms in drive(build_engine(config), demo_script(config, 1, 7)) for m in ms]
    events = [m.payload for m in messages if m.topic == "events"]
    states = [m.payload for m in messages if m.topic == "state"]
    return events, states[len(states) // 2]


def fill(store: Store, tables: int, now: float) -> None:
    events, state = one_hand()
    for k in range(tables):
        table = f"t{k:04d}"
        batch = Batch()
        for event in events:
            text = json.dumps({**event, "table": table})
            batch.events.append(
                EventRow(
                    table,
                    event["seq"],
                    event["hand"],
                    event["type"],
                    event["t"],
                    now,
                    _digest(text),
                    text,
                )
            )
        status = {"state": "online", "heartbeat": 10, "t": now}
        for topic, payload in (("state", state), ("status", status), ("alerts", FLOOR)):
            text = json.dumps({**payload, "table": table, "hand": state.get("hand")})
            seq = state["seq"] if topic == "state" else None
            batch.messages.append(MessageRow(table, topic, _digest(text), now, text, seq))
        store.write(batch)


def measure(tables: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "room.toml"
        path.write_text(f'[room]\nname = "bench"\n\n[database]\npath = "{Path(tmp) / "room.db"}"\n')
        config = load_room_config(path)
        store = open_store(config.database, "bench")
        fill(store, tables, time.time())
        ctx = RoomContext(config, store)
        html = pages.room_fragment(ctx)  # warm-up
        took = []
        for _ in range(runs):
            began = time.perf_counter()
            html = pages.room_fragment(ctx)
            took.append(time.perf_counter() - began)
        store.close()
    return {
        "tables": tables,
        "median_ms": round(1000 * statistics.median(took), 1),
        "min_ms": round(1000 * min(took), 1),
        "html_kib": round(len(html.encode()) / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for tables in args.tables:
        r = measure(tables, args.runs)
        print(
            f"{r['tables']} tables: room view {r['median_ms']} ms median "
            f"(min {r['min_ms']} ms), {r['html_kib']} KiB of HTML"
        )


if __name__ == "__main__":
    main()
