"""The room monitor in a real browser: simulated tables through the room server.

Debian's Chromium (`/usr/bin/chromium`), driven by playwright (nothing downloaded), opens the
monitor of a room server (`room.server.RoomServer`) subscribed to a real mosquitto, while
real table daemons deal on simulated boards (in this process) and one table runs as a
`tablectl run` process that is SIGKILLed. The tests assert what the pages show: a tile per
table, a misdeal banner within 2 s of the misdeal, a held table, an offline tile for the
killed table (sorted first), an alert acknowledged (who and when stored), the hand in
progress without a hole card anywhere in the DOM or in what the server sent, a replay
stepped through, and the dealers page.

Set MONITOR_SCREENSHOTS=docs/img to write the screenshots of docs/room.md.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from kernel.inputs import ButtonPress
from tests.broker import Mosquitto
from tests.monitor_rig import Room, SimTables, card_in, open_page
from tests.room_helpers import TOKEN
from tests.tv_helpers import allin_plan, flop_plan, hand_events, misdeal_events
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


def tile(table: str) -> str:
    return f'.tile[data-table="{table}"]'


def test_a_tile_per_table_a_misdeal_banner_within_2_s_and_a_held_table(
    room: Room, tables: SimTables, browser: Browser, tmp_path: Path
) -> None:
    for table in ("t01", "t02"):
        tables.start(table)
        tables.badge_dealer(table)
    requests: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("request", lambda r: requests.append(r.url))
    page.goto(room.url + "/")
    page.wait_for_function("document.body.dataset.rendered !== undefined")
    page.wait_for_selector("#live:not(.off)")  # the live stream is open
    page.wait_for_selector(f'{tile("t02")} dd[data-field="dealer"]:text("Luca Bianchi")')
    assert page.locator(".tile").count() == 2
    assert "online" in page.inner_text(tile("t01") + " .link")

    trace = misdeal_events()  # the flop hand; its first hole card goes to the wrong seat
    tables.play("t01", trace[:-1])
    page.wait_for_selector(f'{tile("t01")} dd[data-field="hand"]:text("1")')
    assert page.locator(".banner").count() == 0
    tables.play("t01", trace[-1:])
    dealt = time.monotonic()
    page.wait_for_selector(f'{tile("t01")} .banner[data-kind="misdeal"]', timeout=2000)
    latency = time.monotonic() - dealt
    assert latency < 2.0
    print(f"misdeal banner on the page {latency * 1000:.0f} ms after the card was read")
    banner = page.inner_text(f'{tile("t01")} .banner[data-kind="misdeal"]')
    assert banner.startswith("MISDEAL (rule 35A-2) first card wrong seat.") and "re-deal" in banner

    tables.play("t02", [ButtonPress(0.0, "floor")])  # the dealer calls the floor
    page.wait_for_selector(f'{tile("t02")} .banner[data-kind="floor"]', timeout=2000)
    reply = room.command("t02", "pause", {"reason": "tournament break"})
    assert reply["ok"] is True
    page.wait_for_selector(f'{tile("t02")} .banner[data-kind="held"]', timeout=2000)
    assert "pause" in page.inner_text(f'{tile("t02")} .banner[data-kind="held"]')
    api = {t["table"]: t for t in room.http.get("/api/monitor/tiles").json()}
    assert [b["kind"] for b in api["t01"]["banners"]] == ["misdeal"]
    assert {b["kind"] for b in api["t02"]["banners"]} == {"held", "floor"}
    # everything the page loaded came from the room server: no CDN, no web font service
    page.wait_for_function("document.fonts.status === 'loaded'")
    fonts = page.evaluate("[...document.fonts].filter(f => f.status === 'loaded').length")
    assert fonts >= 1
    assert requests and all(u.startswith(room.url) for u in requests), requests
    shot(page, "room-monitor.png", tmp_path)
    page.close()


def test_the_tile_of_a_killed_table_goes_offline_and_first(
    room: Room, tables: SimTables, browser: Browser, tmp_path: Path, mosquitto: Mosquitto
) -> None:
    from tests.table_rig import TableRig

    tables.start("t01")
    with TableRig(tmp_path / "rig", mosquitto) as rig:  # t09: `tablectl run`, keepalive 5 s
        rig.start()
        page = open_page(browser, room.url + "/")
        page.wait_for_selector('.tile[data-table="t09"][data-link="online"]', timeout=30000)
        page.wait_for_selector('.tile[data-table="t01"][data-link="online"]', timeout=30000)
        assert page.eval_on_selector_all(".tile", "ts => ts.map(t => t.dataset.table)") == [
            "t01",
            "t09",
        ]
        rig.cards_board.unplug()  # the card reader board goes away: the table is held
        reader = '.tile[data-table="t09"] .banner[data-kind="reader"]'
        page.wait_for_selector(reader, timeout=30000)
        assert "card reader board offline" in page.inner_text(reader)
        rig.kill()
        killed = time.monotonic()
        page.wait_for_selector('.tile[data-table="t09"][data-link="offline"]', timeout=20000)
        took = time.monotonic() - killed
        print(f"offline tile {took:.1f} s after SIGKILL")
        assert took <= 1.5 * 5 + 3  # the broker sends the will at once (the socket closed),
        # or at the latest after 1.5 x keepalive (5 s) if the connection just went silent
        order = page.eval_on_selector_all(".tile", "ts => ts.map(t => t.dataset.table)")
        assert order == ["t09", "t01"]  # offline first
        assert "offline for" in page.inner_text('.tile[data-table="t09"] .link')
        assert page.is_visible('.tile[data-table="t09"] .banner[data-kind="offline"]')
        page.close()


def test_an_alert_acknowledged_in_the_feed(room: Room, tables: SimTables, browser: Browser) -> None:
    tables.start("t01")
    tables.start("t02")
    tables.play("t01", misdeal_events())
    tables.play("t02", misdeal_events())
    store = room.server.store
    for table in ("t01", "t02"):
        assert wait_until(lambda t=table: len(store.table_alerts(t, "procedure_required")) >= 1)
    page = open_page(browser, room.url + "/alerts")
    rows = page.locator("tr.alert")
    assert rows.count() >= 1
    first = store.table_alerts("t01", "procedure_required")[0]
    row = f'tr.alert[data-alert-id="{first["id"]}"]'
    page.fill("#ack-name", "Giulia Ferrari")
    page.fill("#ack-token", "wrong-token-0000000000")
    page.click(f"{row} button.ack")
    page.wait_for_selector("#ack-error:text('wrong token')")
    assert store.table_alerts("t01", "procedure_required")[0]["acknowledged_by"] is None
    page.fill("#ack-token", TOKEN)
    before = time.time()
    page.click(f"{row} button.ack")
    page.wait_for_selector(f"{row} .acked:text('Giulia Ferrari')", timeout=3000)
    stored = store.table_alerts("t01", "procedure_required")[0]
    assert stored["acknowledged_by"] == "Giulia Ferrari"
    assert before - 1 <= stored["acknowledged_at"] <= time.time() + 1
    # the API: the token, who, an alert that exists
    path = f"/api/table-alerts/{first['id']}/ack"
    assert room.http.post(path, json={"by": "Giulia"}).status_code == 401
    assert room.http.post(path, json={"by": ""}, headers=room.auth).status_code == 422
    assert room.http.post(path, json={"by": "   "}, headers=room.auth).status_code == 422
    assert room.http.post(path, json={"by": "a\nb"}, headers=room.auth).status_code == 422
    missing = room.http.post("/api/table-alerts/999999/ack", json={"by": "G"}, headers=room.auth)
    assert missing.status_code == 404
    # a second acknowledgement does not overwrite the first
    again = room.http.post(
        f"/api/table-alerts/{first['id']}/ack", json={"by": "Someone Else"}, headers=room.auth
    ).json()
    assert again["acknowledged_by"] == "Giulia Ferrari"
    # the filters: one table, one kind
    page.goto(room.url + "/alerts?table=t01&kind=procedure_required")
    tables_shown = page.eval_on_selector_all("tr.alert", "rs => rs.map(r => r.dataset.table)")
    kinds = page.eval_on_selector_all("tr.alert", "rs => rs.map(r => r.dataset.kind)")
    assert set(tables_shown) == {"t01"} and set(kinds) == {"procedure_required"}
    page.goto(room.url + "/alerts?table=t02")
    assert set(page.eval_on_selector_all("tr.alert", "rs => rs.map(r => r.dataset.table)")) == {
        "t02"
    }
    page.close()


def test_table_page_never_holds_a_hole_card_and_a_hand_replays(
    room: Room, tables: SimTables, browser: Browser, tmp_path: Path
) -> None:
    tables.start("t01")
    tables.badge_dealer("t01")
    plan = allin_plan()  # seats 3 and 4 fold; 1 and 2 are all in and tabled (rule 16)
    secret = {c for s in (3, 4) for c in plan.hole[s]}
    tabled = {c for s in (1, 2) for c in plan.hole[s]}
    events = hand_events(plan)
    first_action = next(i for i, e in enumerate(events) if getattr(e, "antenna", "") == "muck")
    tables.play("t01", events[:first_action])  # every hole card dealt and read
    page = open_page(browser, room.url + "/tables/t01")
    page.wait_for_selector('tr.seat[data-seat="4"][data-cards="2"]', timeout=5000)
    reads = page.eval_on_selector_all("tr.seat", "rs => rs.map(r => r.dataset.cards)")
    assert reads == ["2", "2", "2", "2"]  # each seat's reader saw both cards
    everything = set(secret) | tabled
    assert not [c for c in everything if card_in(c, page.content())]
    assert not [c for c in everything if card_in(c, room.http.get("/tables/t01").text)]

    boards = [i for i, e in enumerate(events) if getattr(e, "antenna", "") == "board"]
    tables.play("t01", events[first_action : boards[3]])  # all in, tabled, the flop out
    page.wait_for_selector('#board .card[data-card="Jc"]', timeout=5000)
    shown = page.eval_on_selector_all("tr.seat .card", "cs => cs.map(c => c.dataset.card)")
    assert sorted(shown) == sorted(tabled)  # rule 16: face up, so on the page
    assert not [c for c in secret if card_in(c, page.content())]
    shot(page, "room-table.png", tmp_path)

    tables.play("t01", events[boards[3] :])
    assert wait_until(lambda: room.completed("t01") == 1, 60)
    page.wait_for_selector('tr[data-hand="1"]', timeout=5000)
    result = page.inner_text('tr[data-hand="1"]')
    assert "main pot 40,000 to seat 1" in result
    sources = [page.content()]
    for path in ("/tables/t01", "/fragments/tables/t01", "/", "/alerts", "/dealers"):
        sources.append(room.http.get(path).text)
    assert not [c for c in secret for text in sources if card_in(c, text)]

    replay = open_page(browser, room.url + "/tables/t01/hands/1")
    steps = int(replay.get_attribute(".replay", "data-steps") or 0)
    assert steps > 10
    opening = replay.inner_text(".step:not([hidden]) .what")
    assert opening.endswith("hand 1 starts: button 4, blinds 100/200")
    seen_board: list[str] = []
    for _ in range(steps - 1):
        replay.click("button[data-go='1']")
        seen_board = replay.eval_on_selector_all(
            ".step:not([hidden]) .board .card", "cs => cs.map(c => c.dataset.card)"
        )
        if "hands tabled" in replay.inner_text(".step:not([hidden]) .what"):
            shown = replay.eval_on_selector_all(
                ".step:not([hidden]) li .card", "cs => cs.map(c => c.dataset.card)"
            )
            assert set(shown) == tabled
    assert replay.get_attribute(".replay", "data-at") == str(steps - 1)
    assert seen_board == plan.board
    assert "main pot 40,000 to seat 1" in replay.inner_text(".step:not([hidden])")
    assert not [c for c in secret if card_in(c, replay.content())]
    replay.close()

    dealers = open_page(browser, room.url + "/dealers")
    assert dealers.locator("svg.chart .series").count() == 1
    assert dealers.get_attribute("svg.chart .series", "data-name") == "Maria Rossi"
    row = dealers.inner_text('tr[data-dealer="Maria Rossi"]')
    assert row.split("\t")[1:2] == ["1"]  # one hand this shift
    assert "Maria Rossi" in dealers.inner_text('.assignments tr[data-table="t01"]')
    shot(dealers, "room-dealers.png", tmp_path)
    dealers.close()
    page.close()


def test_a_seat_whose_reader_missed_a_card_is_marked(
    room: Room, tables: SimTables, browser: Browser
) -> None:
    from kernel.inputs import TagIn

    tables.start("t01")
    events = hand_events(flop_plan())
    cards = [i for i, e in enumerate(events) if isinstance(e, TagIn) and e.antenna == "seat3"]
    first_fold = next(i for i, e in enumerate(events) if getattr(e, "antenna", "") == "muck")
    dealt = [e for i, e in enumerate(events[:first_fold]) if i != cards[1]]  # seat 3's 2nd card
    tables.play("t01", dealt)
    page = open_page(browser, room.url + "/tables/t01")
    page.wait_for_selector('tr.seat[data-seat="4"][data-cards="2"]', timeout=5000)
    reads = page.eval_on_selector_all("tr.seat", "rs => rs.map(r => r.dataset.cards)")
    assert reads == ["2", "2", "1", "2"]
    missing = page.eval_on_selector_all("tr.seat.missing", "rs => rs.map(r => r.dataset.seat)")
    assert missing == ["3"]  # the floor sees at once which antenna missed a card
    assert "1 read" in page.inner_text('tr.seat[data-seat="3"] .reads')
    page.close()
