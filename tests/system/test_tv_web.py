"""The secure delay as a security boundary, over real HTTP and WebSockets, on an injected clock.

The TV service runs on uvicorn (a free loopback port); the messages are the real engine's
for dealt hands, given to the service as its MQTT client does. Every output a browser or
a graphics system can reach (feed, preview socket, pages, status, static files) is read
just before the delay has passed and must hold no hole card; just after, the feed does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.tv_helpers import (
    board_cards,
    engine_messages,
    flop_plan,
    hand_events,
    hole_cards,
    tv_messages,
    two_hands_events,
)
from tests.tv_rig import TvRig, wait_until

pytestmark = pytest.mark.timeout(60)

D = 30.0
TOKEN = "a-control-token-for-the-tests"


@pytest.fixture
def rig() -> Iterator[TvRig]:
    rig = TvRig(delay=D, control_token=TOKEN)
    yield rig
    rig.close()


def cards_in(text: str, cards: set[str]) -> set[str]:
    """Which of `cards` appear in `text` as a card (a quoted name or a data-card value)."""
    return {c for c in cards if re.search(rf"[\"'=]{c}[\"']", text)}


def everything_reachable(rig: TvRig) -> str:
    """Every HTTP answer a client can get from the service, concatenated."""
    paths = [
        "/",
        "/feed/t01.json",
        "/overlay/t01",
        "/preview/t01",
        "/api/status",
        "/static/tv.js",
        "/static/tv.css",
        "/static/page.html",
    ]
    return "\n".join(rig.http.get(p).text for p in paths)


def upto_last_holecard(messages: list[tuple[str, dict[str, Any]]]) -> int:
    """Up to the last hole card and its key (the table released every key at once here)."""
    return max(i for i, (kind, p) in enumerate(messages) if kind in ("holecards", "holekeys")) + 1


def test_no_hole_card_or_equity_anywhere_before_the_delay(rig: TvRig) -> None:
    feed = rig.reader("/feed/t01")
    preview = rig.reader("/preview/t01/ws")
    messages = tv_messages(engine_messages(hand_events(flop_plan())))
    secret = hole_cards(messages) - board_cards(messages)
    deal = messages[: upto_last_holecard(messages)]
    rig.feed(deal)  # every hole card read now, at the clock's time
    rig.clock.advance(D - 0.001)
    rig.settle()
    assert wait_until(lambda: rig.desk.worker.computed >= 1)  # ready, but held back
    assert not cards_in(feed.text(), secret)
    assert all(s["equity"] is None for f in feed.frames for s in f["seats"])
    assert not cards_in(preview.text(), secret)
    assert not cards_in(everything_reachable(rig), secret)
    # keys are not held: they only open what the delay line holds
    assert rig.status()["tables"]["t01"]["held"] == sum(1 for k, _ in deal if k != "holekeys")

    rig.clock.advance(0.001)  # the delay has passed: on air
    rig.settle()
    last = feed.last
    assert last is not None
    shown = {s["seat"]: s["cards"] for s in last["seats"]}
    assert shown == {1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"], 4: ["2c", "9s"]}
    # the equity was computed from the live cards beforehand: it comes on air with them
    assert all(s["equity"] is not None for s in last["seats"])
    assert sum(s["equity"] for s in last["seats"]) == pytest.approx(100.0)
    assert last["equity"]["method"] == "monte-carlo" and last["equity"]["max_error"] <= 0.5
    assert not cards_in(preview.text(), secret)
    assert not cards_in(rig.http.get("/overlay/t01").text, secret)  # the page holds no data
    latest = rig.http.get("/feed/t01.json")
    assert latest.headers["content-type"] == "application/json"
    assert latest.json() == last  # the same delayed frame over plain HTTP


def test_the_preview_never_carries_a_hole_card(rig: TvRig) -> None:
    preview = rig.reader("/preview/t01/ws")
    messages = tv_messages(engine_messages(hand_events(flop_plan())))
    secret = hole_cards(messages) - board_cards(messages)
    for chunk in range(0, len(messages), 10):
        rig.feed(messages[chunk : chunk + 10])
        rig.clock.advance(D)
        rig.settle()
    frames = preview.frames
    assert len(frames) >= 4 and frames[-1]["hand"] == 1
    assert any(s["card_count"] == 2 for f in frames for s in f["seats"])  # face down
    assert not cards_in(preview.text(), secret)
    assert rig.desk.leaks_stopped == 0


def test_a_lower_delay_takes_effect_only_from_the_next_hand(rig: TvRig) -> None:
    feed = rig.reader("/feed/t01")
    messages = tv_messages(engine_messages(two_hands_events()))
    second = next(
        i
        for i, (k, p) in enumerate(messages)
        if k == "events" and p["type"] == "hand_started" and p["hand"] == 2
    )
    first_hand = messages[:second]
    rig.feed(first_hand[: upto_last_holecard(first_hand)])
    answer = rig.http.post(
        "/api/delay", json={"seconds": 5}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert answer.status_code == 200
    assert answer.json()["t01"] == {"configured": 5.0, "in_force": 30.0}
    rig.clock.advance(29.9)  # hand 1 keeps the 30 s it started with
    rig.settle()
    assert not cards_in(feed.text(), {"Ah", "Kh", "Qs", "Qc"})
    rig.feed(first_hand[upto_last_holecard(first_hand) :])
    rig.clock.advance(0.1)
    rig.settle()
    assert cards_in(feed.text(), {"Ah", "Kh", "Qs", "Qc"}) == {"Ah", "Kh", "Qs", "Qc"}
    rig.clock.advance(30)  # hand 1 over on air too
    rig.settle()
    second_hand = messages[second:]
    rig.feed(second_hand[: upto_last_holecard(second_hand)])
    assert rig.status()["tables"]["t01"]["delay"] == 5.0
    rig.clock.advance(4.999)
    rig.settle()
    assert not cards_in(feed.text(), {"Jd", "Js", "Ac", "Ad"})
    rig.clock.advance(0.001)
    rig.settle()
    assert cards_in(feed.text(), {"Jd", "Js", "Ac", "Ad"}) == {"Jd", "Js", "Ac", "Ad"}


def test_the_delay_control_needs_the_token(rig: TvRig) -> None:
    url = "/api/delay"
    assert rig.http.post(url, json={"seconds": 0}).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert rig.http.post(url, json={"seconds": 0}, headers=wrong).status_code == 401
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert rig.http.post(url, json={"seconds": -1}, headers=good).status_code == 400
    assert rig.http.post(url, json={"delay": 1}, headers=good).status_code == 400
    assert rig.http.post(url, content=b"{", headers=good).status_code == 400
    assert rig.status()["tables"]["t01"]["delay"] == D


def test_without_a_token_the_delay_cannot_be_changed() -> None:
    rig = TvRig(delay=D)
    try:
        answer = rig.http.post(
            "/api/delay", json={"seconds": 0}, headers={"Authorization": "Bearer anything"}
        )
        assert answer.status_code == 403
    finally:
        rig.close()


def test_unknown_tables_and_bad_messages_are_refused_without_harm(rig: TvRig) -> None:
    assert rig.http.get("/overlay/t99").status_code == 404
    assert rig.http.get("/preview/t99").status_code == 404
    # a person's browser gets a page saying so, with the tables there are; JSON otherwise
    missing = rig.http.get("/overlay/t99", headers={"Accept": "text/html"})
    assert missing.status_code == 404 and "<h1>Not found</h1>" in missing.text
    assert 'href="/overlay/t01"' in missing.text
    assert rig.http.get("/feed/t99.json").json()["detail"]
    icon = rig.http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
    page = rig.http.get("/overlay/t01")
    assert page.status_code == 200 and 'data-ws="/feed/t01"' in page.text
    before = rig.service.desk.bad_messages
    for payload in (b"not json", b"[1, 2]", b"\xff\xfe"):
        rig.service.desk.receive_threadsafe("poker/sim/t01/events", payload)
    assert wait_until(lambda: rig.service.desk.bad_messages == before + 3)
    rig.service.desk.receive_threadsafe("poker/sim/t01/alerts", b"{}")  # not a TV topic
    rig.service.desk.receive_threadsafe("poker/sim/t09/state", b"{}")  # not a table here
    messages = tv_messages(engine_messages(hand_events(flop_plan())))
    rig.feed(messages[:12])  # the service goes on
    assert rig.status()["tables"]["t01"]["received"] == 12
