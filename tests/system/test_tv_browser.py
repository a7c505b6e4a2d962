"""The TV pages in a real browser, on a simulated table.

Debian's Chromium (`/usr/bin/chromium`), driven by playwright (nothing downloaded), loads
`/overlay/t01` and `/preview/t01` of the TV service while the real daemon deals on the
simulated boards through mosquitto with the shipped kit (TLS, ACL; the service reads as
`tv`). The service's clock is injected, so the secure delay is passed exactly when the
test says: before it, the on-air page holds no hole card; after it, the cards, the
equities (adding up to 100 %), the hand names and the banners are on the page. The
preview never holds a hole card: not in its DOM, not in the frames its WebSocket got.

Set TV_SCREENSHOTS=docs/img to write the screenshots of docs/tv.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from kernel.inputs import Event, TagIn, Tick
from tests.broker import Mosquitto
from tests.tv_helpers import (
    SIX,
    allin_plan,
    engine_messages,
    hand_events,
    misdeal_events,
    six_handed_plan,
)
from tests.tv_rig import CHROMIUM, CHROMIUM_ARGS, SimTable, TvRig, wait_until

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed"),
]
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
D = 30.0
CARD_TEXT = re.compile(r"[23456789TJQKA][cdhs]")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        yield launch(pw)


def launch(pw: Playwright) -> Browser:
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


@dataclass
class Watched:
    """A page and every WebSocket frame it received."""

    page: Page
    frames: list[str] = field(default_factory=list)

    def dom(self) -> str:
        return self.page.content()

    def face_cards(self, where: str = "#seats") -> list[str]:
        cards: list[str] = self.page.eval_on_selector_all(
            f"{where} .card.face", "els => els.map(e => e.dataset.card)"
        )
        return cards

    def equities(self) -> list[float]:
        values: list[str] = self.page.eval_on_selector_all(
            "#seats [data-equity]", "els => els.map(e => e.dataset.equity)"
        )
        return [float(v) for v in values]

    def text(self, selector: str) -> str:
        return str(self.page.inner_text(selector))

    def shot(self, name: str, tmp_path: Path) -> None:
        """A screenshot on a felt backdrop (the page itself stays transparent)."""
        folder = Path(os.environ.get("TV_SCREENSHOTS") or tmp_path)
        folder.mkdir(parents=True, exist_ok=True)
        self.page.evaluate("document.body.classList.add('backdrop')")
        self.page.screenshot(path=str(folder / name))
        self.page.evaluate("document.body.classList.remove('backdrop')")


def open_page(browser: Browser, url: str) -> Watched:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    watched = Watched(page)
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: watched.frames.append(str(payload))),
    )
    page.goto(url)
    page.wait_for_function("document.body.dataset.rendered !== undefined")
    return watched


@dataclass
class Studio:
    """Table, TV service and the two pages."""

    table: SimTable
    rig: TvRig
    overlay: Watched
    preview: Watched

    def deal(self, events: list[Event]) -> None:
        """Deal `events` on the table and wait until the TV service has all it caused."""
        self.table.play(events)
        last = engine_messages([*self.dealt, *events, Tick(events[-1].t + 10)])
        self.dealt.extend(events)
        seq = max(m.payload["seq"] for m in last if m.topic == "events")
        view = self.rig.desk.lookahead
        assert wait_until(
            lambda: view.last_seq >= seq and (view.state or {}).get("seq", 0) >= seq, timeout=30
        ), (view.last_seq, seq)

    def __post_init__(self) -> None:
        self.dealt: list[Event] = []

    def on_air(self, seconds: float) -> None:
        """Move the clock and wait until the overlay page drew the latest on-air frame."""
        self.rig.clock.advance(seconds)
        self.rig.settle()
        self.drawn(self.overlay, self.rig.desk.overlay.text)
        self.drawn(self.preview, self.rig.desk.preview.text)

    def drawn(self, watched: Watched, text: str | None) -> None:
        """Wait until the page got `text` and drew it (playwright's events are taken
        only while it is called: wait on the page, not with time.sleep)."""
        for _ in range(500):
            if watched.frames and watched.frames[-1] == text:
                break
            watched.page.wait_for_timeout(20)
        assert watched.frames and watched.frames[-1] == text
        watched.page.wait_for_timeout(50)  # the frame handler ran (one task later)

    def equity_on_air(self) -> None:
        """Wait until the on-air frame carries its equity (computed beforehand)."""
        desk = self.rig.desk
        assert wait_until(lambda: '"equity":{' in (desk.overlay.text or ""), timeout=20)
        self.drawn(self.overlay, desk.overlay.text)

    def assert_preview_clean(self, secret: set[str]) -> None:
        assert self.preview.face_cards() == []
        dom = self.preview.dom()
        assert not [c for c in secret if re.search(rf"[\"'=>]{c}[\"'<]", dom)]
        frames = "\n".join(self.preview.frames)
        assert not [c for c in secret if f'"{c}"' in frames]


@pytest.fixture
def studio(tmp_path: Path, mosquitto_room: Mosquitto, browser: Browser) -> Iterator[Studio]:
    rig = TvRig(delay=D, broker=mosquitto_room.broker_config("tv", client_id="tablectl-tv"))
    assert rig.service.subscriber is not None and rig.service.subscriber.subscribed.wait(10)
    table = SimTable(tmp_path, mosquitto_room, "table-t01")
    overlay = open_page(browser, f"{rig.base}/overlay/t01")
    preview = open_page(browser, f"{rig.base}/preview/t01")
    studio = Studio(table, rig, overlay, preview)
    studio.drawn(overlay, rig.desk.overlay.text)
    try:
        yield studio
    finally:
        overlay.page.close()
        preview.page.close()
        table.stop()
        rig.close()


def split_at(events: list[Event], antenna: str, nth: int = 1) -> int:
    """Index of the `nth` card arriving at `antenna`."""
    hits = [i for i, e in enumerate(events) if isinstance(e, TagIn) and e.antenna == antenna]
    return hits[nth - 1]


def test_overlay_shows_cards_only_after_the_delay_and_the_preview_never(
    studio: Studio, tmp_path: Path
) -> None:
    plan = six_handed_plan()
    events = hand_events(plan, players=SIX)
    secret = {c for cards in plan.hole.values() for c in cards}
    flop = split_at(events, "burn")  # the burn card before the flop
    turn = split_at(events, "burn", 2)
    overlay, preview = studio.overlay, studio.preview

    # The page is 1920x1080 and transparent (OBS keys nothing: it composites).
    assert overlay.page.evaluate("getComputedStyle(document.body).backgroundColor") in (
        "rgba(0, 0, 0, 0)",
        "transparent",
    )
    assert overlay.page.evaluate("[innerWidth, innerHeight]") == [1920, 1080]

    studio.deal(events[:flop])  # pre-flop: every hole card read, the betting done
    studio.on_air(D - 0.01)
    assert overlay.face_cards() == []
    assert not [c for c in secret if re.search(rf"[\"'=>]{c}[\"'<]", overlay.dom())]
    assert not [c for c in secret if f'"{c}"' in "\n".join(overlay.frames)]
    assert overlay.equities() == []
    # the preview is live: the players, their bets and the cards face down
    assert preview.page.locator("#seats .card.back").count() == 6  # three live hands
    assert "PREVIEW" in preview.text("#preview-tag")
    studio.assert_preview_clean(secret)
    preview.shot("tv-preview.png", tmp_path)

    studio.on_air(0.01)  # the delay has passed
    studio.equity_on_air()
    on_air = set(overlay.face_cards())
    live = {c for s in (3, 5, 6) for c in plan.hole[s]}
    assert live <= on_air  # the folded seats' cards are shown dimmed too
    assert overlay.page.locator('.seat[data-status="folded"]').count() == 3
    shares = overlay.equities()
    assert len(shares) == 3 and sum(shares) == pytest.approx(100.0, abs=1e-6)
    assert overlay.page.locator(".seat .dealer").count() == 1
    assert "POT 1,900" in overlay.text("#pots").upper()
    overlay.shot("tv-preflop.png", tmp_path)
    studio.assert_preview_clean(secret)

    studio.rig.clock.advance(5)
    bet = next(
        i
        for i, e in enumerate(events)
        if i > flop and isinstance(e, TagIn) and e.antenna.startswith("bet")
    )
    settled = next(i for i, e in enumerate(events) if i > bet and isinstance(e, Tick))
    studio.deal(events[flop : settled + 1])  # the flop and its bet, not yet called
    # a bet's amount shows once: on the chips in front, not in the action tag as well
    seats = preview.page.eval_on_selector_all(
        ".seat",
        "ss => ss.map(s => [(s.querySelector('.tag') || {}).innerText || '',"
        " (s.querySelector('.bet') || {}).innerText || ''])",
    )
    priced = [(tag, chips) for tag, chips in seats if chips]
    assert len(priced) == 1 and priced[0][0].upper() == "BET", seats
    studio.deal(events[settled + 1 : turn - 1])  # the two calls
    studio.on_air(D - 0.01)  # the flop is not on air yet...
    assert overlay.face_cards("#board") == []
    assert preview.face_cards("#board") == ["Qs", "Jd", "4d"]  # ...but live on the preview
    studio.on_air(D + 0.01)
    studio.equity_on_air()
    assert overlay.face_cards("#board") == ["Qs", "Jd", "4d"]
    shares = overlay.equities()
    assert len(shares) == 3 and sum(shares) == pytest.approx(100.0, abs=1e-6)
    feed = studio.rig.desk.overlay.text or ""
    assert '"method":"exact"' in feed and '"boards":666' in feed  # C(37, 2)
    assert "CALLS" in overlay.text("#last-action").upper()
    overlay.shot("tv-flop.png", tmp_path)
    studio.assert_preview_clean(secret)


def test_all_in_showdown_equities_outs_and_hand_names(studio: Studio, tmp_path: Path) -> None:
    plan = allin_plan()
    events = hand_events(plan)
    turn = split_at(events, "board", 4)
    river = split_at(events, "board", 5)
    overlay = studio.overlay
    studio.deal(events[: turn + 1])  # all in pre-flop, hands tabled, flop and turn out
    studio.rig.clock.advance(5)
    studio.deal(events[turn + 1 : river + 1])
    studio.rig.clock.advance(5)
    studio.deal(events[river + 1 :])
    studio.on_air(D - 10)  # the turn is on air, the river not yet
    studio.equity_on_air()
    assert overlay.face_cards("#board") == ["Ah", "3d", "Jc", "7s"]
    shares = overlay.equities()
    assert len(shares) == 2 and sum(shares) == pytest.approx(100.0)
    assert overlay.page.locator(".seat .tag.allin").count() == 2
    outs = overlay.page.get_attribute('.seat[data-seat="2"] .outs', "data-outs")
    assert outs is not None and sorted(outs.split()) == ["Kc", "Kh"]  # kings, heads-up
    overlay.shot("tv-allin.png", tmp_path)

    studio.on_air(10)  # the river, the showdown and the pot on air
    assert overlay.face_cards("#board") == ["Ah", "3d", "Jc", "7s", "Qh"]
    alice = overlay.text('.seat[data-seat="1"]')
    assert "two pair, aces and threes" in alice and "WINS 40,000" in alice.upper()
    assert "pair of kings" in overlay.text('.seat[data-seat="2"]')
    assert overlay.page.locator(".seat.winner").count() == 1
    overlay.shot("tv-showdown.png", tmp_path)
    studio.assert_preview_clean({c for cards in plan.hole.values() for c in cards})
    assert "two pair" not in studio.preview.dom()  # hand names describe the cards


def test_a_misdeal_banner_tells_the_commentators_why(studio: Studio, tmp_path: Path) -> None:
    studio.deal(misdeal_events())
    studio.on_air(D - 0.01)
    # live on the preview at once; on air only after the delay, like everything else
    assert studio.preview.page.is_visible("#banner")
    assert not studio.overlay.page.is_visible("#banner")
    studio.on_air(0.01)
    assert studio.overlay.page.is_visible("#banner")
    assert studio.overlay.text("#banner .banner-title") == "MISDEAL"
    assert "wrong seat" in studio.overlay.text("#banner .banner-text")
    assert "35A-2" in studio.overlay.text("#banner .banner-rule")
    assert studio.overlay.equities() == []
    studio.overlay.shot("tv-misdeal.png", tmp_path)


def test_pages_load_every_asset_from_the_service(browser: Browser) -> None:
    rig = TvRig(delay=D)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        page.goto(f"{rig.base}/overlay/t01")
        page.wait_for_function("document.body.dataset.rendered !== undefined")
        page.wait_for_function("document.fonts.status === 'loaded'")
        fonts: Any = page.evaluate(
            "[...document.fonts].filter(f => f.status === 'loaded').map(f => f.family)"
        )
        assert any("Barlow" in f for f in fonts)  # the shipped font, not a system one
        assert requests and all(u.startswith(rig.base) for u in requests), requests
        kinds = {u.rsplit(".", 1)[-1] for u in requests if "/static/" in u}
        assert {"css", "js", "woff2"} <= kinds
    finally:
        page.close()
        rig.close()


def test_side_pots_and_a_reader_hold_on_the_page(browser: Browser) -> None:
    from tests.tv_helpers import tv_messages

    rig = TvRig(delay=0)
    try:
        watched = open_page(browser, f"{rig.base}/overlay/t01")
        messages = tv_messages(engine_messages(hand_events(allin_plan())))
        state = next(p for k, p in messages if k == "state" and p["hand"] == 1)
        pots = [{"amount": 1200, "eligible": [1, 2, 3]}, {"amount": 400, "eligible": [2, 3]}]
        held = {**state, "seq": 90, "pots": pots, "held": ["card_reader"]}
        rig.feed([("state", held)])
        rig.settle()
        text = rig.desk.overlay.text
        for _ in range(250):
            if watched.frames and watched.frames[-1] == text:
                break
            watched.page.wait_for_timeout(20)
        watched.page.wait_for_timeout(50)
        assert "SIDE POT 1 400" in watched.text("#pots").upper()
        assert watched.text("#banner .banner-title") == "TABLE HOLD"
        assert "card reader" in watched.text("#banner .banner-text")
        watched.page.close()
    finally:
        rig.close()
