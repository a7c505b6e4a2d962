"""Overlay latency: from the moment the secure delay lets a card through to the card on air.

The TV service runs with the wall clock and a secure delay D; the messages of N demo
hands (the built-in demo dealer through the real engine) are given to it at the pace
the table made them (the trace's times, divided by --speed). For every hole and board
card, `due` is the moment it arrived plus D; measured:

- **feed**: the first `/feed/t01` frame holding the card, at a WebSocket client;
- **page**: the card drawn in the overlay page of Chromium (a MutationObserver stamps
  each `data-card` as it appears, on the same wall clock);
- **equity**: the first feed frame holding the card *and* the equity of every live hand,
  for the cards after which an equity is shown (the last hole card dealt, board cards).

Usage: python -m bench.tv_latency [--hands 4] [--delay 2] [--speed 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from bench.machine import machine
from broadcast.desk import TableSpec
from broadcast.service import TvService
from controller.config import load_config
from controller.replay import build_engine, drive
from sim.demo import demo_script

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
OBSERVER = """
window.__seen = {};
new MutationObserver(() => {
  const now = performance.timeOrigin + performance.now();
  const hand = (document.getElementById('hand-no') || {}).textContent || '';
  for (const el of document.querySelectorAll('[data-card]')) {
    const key = hand.replace('Hand ', '') + '|' + el.dataset.card;
    if (!(key in window.__seen)) window.__seen[key] = now / 1000;
  }
}).observe(document, {subtree: true, childList: true, attributes: true});
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def messages(hands: int, seed: int) -> list[tuple[float, str, dict[str, Any]]]:
    """(trace time, topic kind, payload) of every message the TV identity reads."""
    config = load_config(ROOT / "examples" / "sim-table.toml")
    engine = build_engine(config)
    out = []
    for event, produced in drive(engine, demo_script(config, hands, seed)):
        for m in produced:
            if m.topic in ("state", "events", "holecards"):
                out.append((event.t, m.topic, m.payload))
    return out


class FeedClock:
    """Reads /feed/t01 and stamps when each (hand, card) first appears, with and without
    the equity of every live hand."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self.card: dict[str, float] = {}
        self.with_equity: dict[str, float] = {}
        self._ws = connect(url, open_timeout=10)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for text in self._ws:
                now = time.time()
                frame = json.loads(text)
                hand = frame.get("hand")
                cards = [c for s in frame["seats"] for c in s["cards"] or ()] + frame["board"]
                live = [s for s in frame["seats"] if s["status"] in ("active", "allin")]
                equity = len(live) >= 2 and all(s["equity"] is not None for s in live)
                for card in cards:
                    key = f"{hand}|{card}"
                    self.card.setdefault(key, now)
                    if equity:
                        self.with_equity.setdefault(key, now)
        except ConnectionClosed:
            pass

    def close(self) -> None:
        self._ws.close()


def percentiles(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    if not ms:
        return {}
    return {
        "count": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1),
        "max_ms": round(ms[-1], 1),
    }


def run(hands: int, delay: float, speed: float, seed: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    stream = messages(hands, seed)
    port = free_port()
    service = TvService(
        broker=None, tables=[TableSpec("t01", "poker/sim/t01")], delay=delay, port=port
    )
    service.start()
    arrived: dict[str, float] = {}
    equity_cards: set[str] = set()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.add_init_script(OBSERVER)
            page.goto(f"http://127.0.0.1:{port}/overlay/t01")
            page.wait_for_function("document.body.dataset.rendered !== undefined")
            feed = FeedClock(f"ws://127.0.0.1:{port}/feed/t01")
            start = time.time()
            first_t = stream[0][0]
            dealt: dict[int, int] = {}
            seats: list[int] = []
            for t, kind, payload in stream:
                at = start + (t - first_t) / speed
                pause = at - time.time()
                if pause > 0:
                    time.sleep(pause)
                now = time.time()
                hand = payload.get("hand")
                if kind == "holecards":
                    for card in payload["cards"]:
                        arrived.setdefault(f"{hand}|{card}", now)
                    dealt[payload["seat"]] = len(payload["cards"])
                    if sorted(dealt) == seats and all(n == 2 for n in dealt.values()):
                        # the last hole card of the deal: every hand is known, equities
                        equity_cards.add(f"{hand}|{payload['cards'][-1]}")
                elif kind == "events" and payload["type"] == "hand_started":
                    dealt = {}
                    seats = sorted(payload["seats"])
                elif kind == "state" and hand is not None:
                    # board cards show on `state` one by one as they land, before the
                    # street's `board_dealt`
                    for card in payload.get("board", []):
                        if f"{hand}|{card}" not in arrived:
                            arrived[f"{hand}|{card}"] = now
                            equity_cards.add(f"{hand}|{card}")
                service.desk.receive_threadsafe(
                    f"poker/sim/t01/{kind}", json.dumps(payload).encode()
                )
            time.sleep(delay + 1.5)
            seen: dict[str, float] = page.evaluate("window.__seen")
            feed.close()
            browser.close()
    finally:
        service.stop()
    due = {key: t + delay for key, t in arrived.items()}
    page_lat = [seen[k] - due[k] for k in due if k in seen]
    feed_lat = [feed.card[k] - due[k] for k in due if k in feed.card]
    eq_lat = [feed.with_equity[k] - due[k] for k in equity_cards if k in feed.with_equity]
    early = [k for k in due if min(seen.get(k, 1e18), feed.card.get(k, 1e18)) < due[k]]
    return {
        "machine": machine(),
        "hands": hands,
        "delay_s": delay,
        "speed": speed,
        "cards": len(due),
        "shown_before_due": len(early),  # a card on air before its delay: must be 0
        "page": percentiles(page_lat),
        "feed": percentiles(feed_lat),
        "feed_with_equity": percentiles(eq_lat),
        "equity_cards_without_equity": len([k for k in equity_cards if k not in feed.with_equity]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=4)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.hands, args.delay, args.speed, args.seed)
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
