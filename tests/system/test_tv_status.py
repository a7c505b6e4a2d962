"""The TV service's public status and headers (the attack run's findings): no live sign of
the equity worker computing, security headers on every answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tv_helpers import engine_messages, flop_plan, hand_events, tv_messages
from tests.tv_rig import TvRig, wait_until

pytestmark = pytest.mark.timeout(60)

TOKEN = "a-control-token-for-the-tests"


@pytest.fixture
def rig() -> Iterator[TvRig]:
    rig = TvRig(delay=30.0, control_token=TOKEN)
    yield rig
    rig.close()


def test_status_shows_no_live_equity_computation_without_the_token(rig: TvRig) -> None:
    """When equities are computed depends on the hole cards read: the public status never
    says it; the director's desk (the control token) still sees the counter."""
    rig.feed(tv_messages(engine_messages(hand_events(flop_plan()))))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert wait_until(lambda: rig.http.get("/api/status", headers=auth).json()["equities_computed"])
    public = rig.http.get("/api/status").json()
    assert "equities_computed" not in public
    assert "equit" not in rig.http.get("/api/status").text


def test_every_answer_carries_the_security_headers(rig: TvRig) -> None:
    for path in ("/", "/overlay/t01", "/preview/t01", "/api/status", "/static/tv.js"):
        headers = rig.http.get(path).headers
        assert "frame-ancestors 'self'" in headers["content-security-policy"], path
        assert headers["x-content-type-options"] == "nosniff", path


def test_the_lower_third_may_read_from_the_room_server_it_names_and_nowhere_else(
    rig: TvRig,
) -> None:
    """The chip-count lower third reads the room server's API (another origin): its policy
    lets the page connect to that origin only; an address that is not a plain http(s)
    origin adds nothing to the policy."""
    policy = rig.http.get("/lower-third", params={"room": "http://10.0.0.5:8090/x"}).headers[
        "content-security-policy"
    ]
    assert "connect-src 'self' http://10.0.0.5:8090;" in policy
    assert "script-src 'self';" in policy
    for bad in ("javascript:alert(1)", "http://a.b; script-src *", "ftp://x", ""):
        policy = rig.http.get("/lower-third", params={"room": bad}).headers[
            "content-security-policy"
        ]
        assert "connect-src 'self';" in policy, bad
