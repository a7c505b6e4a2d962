"""The tournament's pages in a real browser (Debian's Chromium, driven by playwright): the
clock for the room's screens, the live chip counts, the floor's page confirming a proposal
with the floor token, and the TV lower third behind the secure delay. Simulated tables deal
through a real broker; the room server runs the tournament.

Set TOURNAMENT_SCREENSHOTS=docs/img to write the screenshots of docs/tournament.md.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.broker import Mosquitto, free_port
from tests.room_helpers import TOKEN
from tests.tournament_live import EXAMPLES, LiveRoom
from tests.tv_rig import CHROMIUM, CHROMIUM_ARGS, wait_until

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed"),
]
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
CARD = re.compile(r"(?<![0-9A-Za-z])[23456789TJQKA][cdhs](?![0-9A-Za-z])")
EVENT = EXAMPLES / "sim-turbo.toml"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    with Mosquitto(tmp_path_factory.mktemp("broker") / "mosquitto") as mosquitto:
        yield mosquitto


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, broker: Mosquitto) -> Iterator[LiveRoom]:
    """One event for every page (the tests below run in order as the event goes on)."""
    room = LiveRoom(
        tmp_path_factory.mktemp("event"), broker, EVENT, tables=5, time_scale=30.0, seed=4
    )
    room.start()
    room.act("/api/tournament/start")
    yield room
    room.stop()


def shot(page: Page, name: str, tmp_path: Path, *, full: bool = True) -> None:
    folder = Path(os.environ.get("TOURNAMENT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=full)


def wait_js(page: Page, expression: str, timeout: float = 30000) -> None:
    """Wait until `expression` is true in the page, asked from here every 100 ms: the
    pages' policy allows no script from a string (`unsafe-eval`), which Playwright's own
    polling needs, while an evaluation over the debugging protocol is not the page's."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout / 1000:g} s in the page: {expression}")
        time.sleep(0.1)


def open_page(browser: Browser, url: str, width: int = 1600, height: int = 900) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    wait_js(page, "document.body.dataset.rendered !== undefined", timeout=15000)
    return page


def play_until(live: LiveRoom, left: int, timeout: float = 300) -> None:
    live.wait(lambda: live.get("/api/tournament")["players_left"] <= left, timeout)


def test_the_clock_page_counts_down_and_follows_the_clock(
    live: LiveRoom, browser: Browser, tmp_path: Path
) -> None:
    play_until(live, 28)
    page = open_page(browser, live.url + "/tournament/clock", 1920, 1080)
    first = page.inner_text('[data-field="time"]')
    wait_js(page,
        f"document.querySelector('[data-field=\"time\"]').textContent !== {first!r}", timeout=5000
    )
    clock = live.get("/api/tournament")["clock"]
    shown = page.inner_text('[data-field="level"]').lower()
    if clock["on_break"]:
        assert shown == f"break after level {clock['after_level']}"
    else:
        assert shown == f"level {clock['level']}"
        blinds = page.inner_text('[data-field="blinds"]')
        assert f"{clock['small_blind']:,} / {clock['big_blind']:,}" in blinds
    players = page.inner_text('[data-field="players"]')
    assert re.fullmatch(r"\d+ of 30", players)
    assert page.inner_text('[data-field="pool"]') == "3,000 EUR"
    shot(page, "tournament-clock.png", tmp_path, full=False)
    # The floor pauses the clock: the room's screens say so at once.
    live.act("/api/tournament/clock", {"action": "pause"})
    wait_js(page,
        "document.querySelector('[data-field=\"banner\"]').textContent === 'clock paused'",
        timeout=3000,
    )
    stopped = page.inner_text('[data-field="time"]')
    time.sleep(1.5)
    assert page.inner_text('[data-field="time"]') == stopped
    live.act("/api/tournament/clock", {"action": "resume"})
    assert not CARD.search(page.content())


def test_the_floor_confirms_on_its_page_with_the_token(
    live: LiveRoom, browser: Browser, tmp_path: Path
) -> None:
    page = open_page(browser, live.url + "/tournament/floor", 1600, 1200)
    page.fill("#floor-name", "Anna Floor")
    page.dispatch_event("#floor-name", "change")
    page.fill("#floor-token", "not-the-token-000")
    page.dispatch_event("#floor-token", "change")
    live.wait(
        lambda: any(p["status"] == "open" for p in live.get("/api/tournament/proposals")),
        240,
        confirm=False,
    )
    page.wait_for_selector("[data-proposal]", timeout=10000)
    pid = int(page.locator("[data-proposal]").first.get_attribute("data-proposal") or 0)
    confirm = page.locator(f'[data-proposal="{pid}"] button.confirm')
    confirm.click()  # the page redraws on every change: the locator finds it again
    wait_js(page,
        "document.getElementById('floor-error').textContent === 'wrong token'", timeout=5000
    )
    page.fill("#floor-token", TOKEN)
    page.dispatch_event("#floor-token", "change")
    assert page.inner_text("#floor-error") == ""
    shot(page, "tournament-floor.png", tmp_path, full=False)
    confirm.click()
    assert wait_until(
        lambda: (
            next(p for p in live.get("/api/tournament/proposals") if p["id"] == pid)["status"]
            in ("confirmed", "done")
        ),
        10,
    )
    decided = next(p for p in live.get("/api/tournament/proposals") if p["id"] == pid)
    assert decided["by"] == "Anna Floor"
    wait_js(page, f"!document.querySelector('[data-proposal=\"{pid}\"]')", timeout=5000)
    assert not CARD.search(page.content())


def test_the_tv_lower_third_shows_the_chip_counts_behind_the_delay(
    live: LiveRoom, browser: Browser, tmp_path: Path, broker: Mosquitto
) -> None:
    from broadcast.sim import start_sim_tv

    prefix = f"poker/{live.room_name}/t01"
    tv = start_sim_tv(
        broker.broker_config(None, prefix=prefix), prefix, "t01", delay=3.0, port=free_port()
    )
    assert tv is not None
    try:
        url = f"{tv.service.base_url}/lower-third?room={live.url}&backdrop"
        page = open_page_any(browser, url)
        # The delay in force: TV's own 3 s, or the table's longer key-release delay.
        status = httpx.get(f"{tv.service.base_url}/api/status", timeout=10).json()
        delay = status["tables"]["t01"]["delay"]
        assert delay >= 3.0
        wait_js(page, f"Number(document.body.dataset.delay) === {delay}", timeout=10000)
        page.wait_for_selector(".l3-row", timeout=20000)
        board = live.get("/api/tournament/leaderboard")
        names = [r.inner_text() for r in page.query_selector_all(".l3-row .l3-name")]
        assert len(names) == 5
        assert set(n.lower() for n in names) <= {p["name"].lower() for p in board["players"]}
        # A new count reaches the lower third no sooner than the delay.
        last_unchanged = time.monotonic()
        seen = live.get("/api/tournament/leaderboard")["version"]  # the room's, not yet TV's
        # Polled tightly: the count changed after the last poll that did not see it was
        # sent (a loaded machine can answer a poll late, so the time the change was seen
        # is no bound on when it happened).
        deadline = time.monotonic() + 60
        while True:
            asked = time.monotonic()
            version = live.get("/api/tournament/leaderboard")["version"]
            if version > seen:
                break
            assert asked < deadline, "no new chip count within 60 s"
            last_unchanged = asked
            time.sleep(0.05)
        wait_js(page, f"Number(document.body.dataset.version) >= {version}", timeout=15000)
        assert time.monotonic() - last_unchanged >= delay - 0.5
        shot(page, "tv-lower-third.png", tmp_path, full=False)
        assert not CARD.search(page.content())
    finally:
        tv.service.stop()


def test_the_chip_counts_follow_every_hand_within_a_second(
    live: LiveRoom, browser: Browser, tmp_path: Path
) -> None:
    """Last: it stops the dealers."""
    play_until(live, 25)
    page = open_page(browser, live.url + "/tournament/leaderboard", 1600, 1100)
    lags: list[float] = []
    for _ in range(3):
        before = page.evaluate("Number(document.body.dataset.version)")
        hands = [d.engine.hand_number for d in live.daemons]
        done = wait_until(
            lambda h=hands: any(
                d.engine.hand_number > n and d.engine.hand is None
                for d, n in zip(live.daemons, h, strict=True)
            ),
            60,
        )
        assert done
        ended = time.monotonic()
        wait_js(page, f"Number(document.body.dataset.version) > {before}", timeout=5000)
        lags.append(time.monotonic() - ended)
    assert max(lags) < 1.0, lags
    # What the page shows is what the tables say: each player's stack, big blinds, seat.
    live.act("/api/tournament/clock", {"action": "pause"})
    for d in live.dealers:
        d.stop.set()  # the dealers stop: nothing changes any more
    for d in live.dealers:
        d.join(30)
    stacks = {s.player: s.stack for d in live.daemons for s in d.engine.seats.values() if s.player}
    idle = {d.config.table.id for d in live.daemons if d.engine.hand is None}
    # A hand completed just before its dealer stopped may still be on its way through the
    # broker to the room: the room's counts are read until they have it (at most 30 s).
    deadline = time.monotonic() + 30
    while True:
        board = live.get("/api/tournament/leaderboard")
        compared = [row for row in board["players"] if row["table"] in idle]
        counted = [row["chips"] for row in compared]
        if [stacks[row["name"]] for row in compared] == counted or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert compared  # a dealer stopped mid-hand leaves that table's last counts standing
    assert [stacks[row["name"]] for row in compared] == counted
    wait_js(page,
        f"Number(document.body.dataset.version) >= {board['version']}", timeout=5000
    )
    board = live.get("/api/tournament/leaderboard")
    rows = page.query_selector_all("#leaderboard tbody tr")
    assert len(rows) == board["players_left"]
    first = board["players"][0]
    top = rows[0].inner_text()
    assert first["name"] in top and f"{first['chips']:,}" in top
    assert page.query_selector_all("#results tbody tr")  # players out, with their places
    shot(page, "tournament-leaderboard.png", tmp_path)
    assert not CARD.search(page.content())


def open_page_any(browser: Browser, url: str) -> Page:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(url)
    return page
