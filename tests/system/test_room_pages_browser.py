"""The room server's pages a person opens, in a real browser: alerts grouped with an
acknowledge-all, the table-shaped hand replay, HTML error pages, the favicon and the API
docs served by the room server itself (no CDN).

Debian's Chromium driven by playwright, real table daemons on simulated boards, a real
mosquitto. MONITOR_SCREENSHOTS=docs/img writes the screenshots of docs/room.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from kernel.inputs import ButtonPress, TagIn
from tests.broker import Mosquitto
from tests.monitor_rig import Room, SimTables, card_in, open_page
from tests.room_helpers import TOKEN
from tests.tv_helpers import PLAYERS, allin_plan, flop_plan, hand_events
from tests.tv_rig import CHROMIUM, CHROMIUM_ARGS, wait_until

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed"),
]
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def room(tmp_path: Path, mosquitto: Mosquitto) -> Iterator[Room]:
    room = Room(tmp_path, mosquitto)
    yield room
    room.close()


@pytest.fixture
def tables(tmp_path: Path, mosquitto: Mosquitto, room: Room) -> Iterator[SimTables]:
    tables = SimTables(tmp_path, mosquitto)
    yield tables
    tables.stop()


def shot(page: Page, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("MONITOR_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)


def test_repeated_alerts_are_one_row_with_a_count_and_acknowledged_all_at_once(
    room: Room, tables: SimTables, browser: Browser, tmp_path: Path
) -> None:
    tables.start("t01")
    events = hand_events(flop_plan())
    cards = [i for i, e in enumerate(events) if isinstance(e, TagIn) and e.card]
    dealt = cards[7]  # the eight hole cards are out: seat 1 faces the big blind
    tables.play("t01", events[: dealt + 1])
    tables.play("t01", [ButtonPress(0.0, "check") for _ in range(5)])  # five refused checks
    store = room.server.store
    assert wait_until(lambda: len(store.table_alerts("t01", "check_refused")) == 5)
    page = open_page(browser, room.url + "/alerts?kind=check_refused")
    rows = page.locator("tr.alert")
    assert rows.count() == 1  # the five repeats, grouped
    assert page.get_attribute("tr.alert", "data-count") == "5"
    assert page.inner_text("tr.alert .repeat") == "\u00d75"
    assert page.inner_text("tr.alert td:first-child").count(":") >= 2  # a time (or span)
    # the filters are in the URL and in the form: a link shows the same feed
    assert page.input_value('select[name="kind"]') == "check_refused"
    page.uncheck('input[name="group"][type="checkbox"]')
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**group=0**")
    assert page.locator("tr.alert").count() == 5 and "kind=check_refused" in page.url
    page.goto(room.url + "/alerts?kind=check_refused")
    page.wait_for_function("document.body.dataset.rendered !== undefined")
    page.fill("#ack-name", "Giulia Ferrari")
    page.fill("#ack-token", TOKEN)
    button = 'button.ack-all[data-table="t01"][data-kind="check_refused"]'
    assert page.inner_text(button) == "acknowledge all 5"
    shot(page, "room-alerts.png", tmp_path)
    page.click(button)
    page.wait_for_selector("tr.alert .acked:text('Giulia Ferrari')", timeout=5000)
    acked = [a["acknowledged_by"] for a in store.table_alerts("t01", "check_refused")]
    assert acked == ["Giulia Ferrari"] * 5
    assert page.locator("button.ack-all").count() == 0  # nothing left open
    page.goto(room.url + "/alerts?open=1")
    page.wait_for_function("document.body.dataset.rendered !== undefined")
    kinds = page.eval_on_selector_all("tr.alert", "rs => rs.map(r => r.dataset.kind)")
    assert "check_refused" not in kinds
    page.close()


def test_the_replay_is_the_table_with_names_stacks_pot_and_the_shown_hands(
    room: Room, tables: SimTables, browser: Browser, tmp_path: Path
) -> None:
    tables.start("t01")
    tables.badge_dealer("t01")
    plan = allin_plan()  # seats 3 and 4 fold; 1 and 2 are all in and tabled (rule 16)
    secret = {c for s in (3, 4) for c in plan.hole[s]}
    tables.play("t01", hand_events(plan))
    assert wait_until(lambda: room.completed("t01") == 1, 60)
    page = open_page(browser, room.url + "/tables/t01/hands/1", height=1100)
    names = {str(s): name for s, name, _stack in PLAYERS}
    seats = page.eval_on_selector_all(
        ".step:not([hidden]) .pseat", "ss => ss.map(s => [s.dataset.seat, s.innerText])"
    )
    assert {s for s, _ in seats} == {"1", "2", "3", "4"}
    for seat, text in seats:
        assert names[seat] in text
    # jump to the river: the board is out, the all-in hands shown with their names
    page.click("button.jump[data-jump='showdown']")
    step = ".step:not([hidden])"
    assert page.get_attribute(step, "data-street") == "showdown"
    assert page.eval_on_selector_all(f"{step} .felt-middle .card", "cs => cs.length") == 5
    shown = page.eval_on_selector_all(
        f"{step} .pseat .pcards .card", "cs => cs.map(c => c.dataset.card)"
    )
    assert sorted(shown) == sorted(c for s in (1, 2) for c in plan.hole[s])
    assert int(page.get_attribute(f"{step} .pot b", "data-pot") or 0) == 40_000
    page.click("button[data-go='1']")  # the pot awarded: the hands' names
    assert "pot" in page.inner_text(f"{step} .what")
    assert "two pair" in page.inner_text(f'{step} .pseat[data-seat="1"] .hand-name')
    assert page.locator(f'{step} .pseat[data-seat="3"].folded').count() == 1
    shot(page, "room-replay.png", tmp_path)
    # the last step: the pot pushed, the winner's stack grown
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    last = int(page.get_attribute(".replay", "data-steps") or 0) - 1
    page.evaluate(f"document.querySelector('.slider').value = {last}")
    page.dispatch_event(".slider", "input")
    assert page.get_attribute(".replay", "data-at") == str(last)
    stack = int(page.get_attribute(f'{step} .pseat[data-seat="1"]', "data-stack") or 0)
    assert stack > 20_000
    assert page.get_attribute("a.phh", "href") == "/api/hands/t01.1.phh"
    assert room.http.get("/api/hands/t01.1.phh").status_code == 200
    assert not [c for c in secret if card_in(c, page.content())]
    page.close()


def test_error_pages_favicon_and_the_api_docs_come_from_the_room_server(
    room: Room, browser: Browser, tmp_path: Path
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    requests: list[str] = []  # what the browser fetched (a request the page's policy
    page.on("requestfinished", lambda r: requests.append(r.url))  # blocks never leaves)
    response = page.goto(room.url + "/tables/no-such-table")
    assert response is not None and response.status == 404
    assert page.inner_text("h1") == "Not found"
    assert "no-such-table" in page.inner_text("main")
    assert page.locator('link[rel="icon"]').count() == 1
    api = room.http.get("/api/hands/t09.1")
    assert api.status_code == 404 and api.json()["detail"].startswith("no hand")
    icon = room.http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    for path, ready in (("/docs", ".swagger-ui .opblock"), ("/redoc", "redoc-wrap, .redoc-wrap")):
        requests.clear()
        page.goto(room.url + path)
        page.wait_for_selector(ready, timeout=20_000)
        local = (room.url, f"blob:{room.url}")  # ReDoc runs its worker from a blob
        assert requests and all(u.startswith(local) for u in requests), requests
        if path == "/docs":
            assert page.locator('.opblock-summary-path[data-path="/api/tables"]').count() >= 1
            shot(page, "room-api-docs.png", tmp_path)
    page.close()
