"""What the hub tells a cluster's nick claims (Hub.watch_nicks, server/cluster/nicks.py): every session
that ends here or comes here from another member, so that its nick is freed or claimed at once; not a
login (it claims its nick before it is admitted), nor a session that goes on on another member (the
member it went to claims it: freed here first, the nick would be nobody's in between)."""

from __future__ import annotations

from server.hub.model import Origin
from tests.hub.test_acknowledged import Link
from tests.hub.test_private_across import ELSEWHERE, HOME, HOME_AGAIN, moved


def test_ends_and_arrivals_are_told_and_a_session_handed_over_is_not() -> None:
    link = Link("ab")
    a, b = link.hubs["a"], link.hubs["b"]
    heard: dict[str, list[str]] = {"a": [], "b": []}
    a.watch_nicks(heard["a"].append)
    b.watch_nicks(heard["b"].append)
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    a.guest_login("bobBob22", "*Bob", "en", ELSEWHERE)
    a.guest_login("cydCyd33", "*Cyd", "en", Origin("192.0.2.5", False, "192.0.2.0/24"))
    assert heard == {"a": [], "b": []}

    moved(link, "a", "b", "alaAla11")
    assert heard == {"a": [], "b": ["*Ala"]}
    assert b.logout("alaAla11")
    assert a.logout("bobBob22")
    assert heard == {"a": ["*Bob"], "b": ["*Ala", "*Ala"]}

    a.guest_login("cydNew99", "*Cyd", "en", Origin("192.0.2.9", False, "192.0.2.0/24"))  # come back
    assert heard["a"] == ["*Bob", "*Cyd"]  # the old session ended; the claims keep what the new one holds

    a.watch_nicks(None)
    a.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    assert a.logout("alaNew99")
    assert heard["a"] == ["*Bob", "*Cyd"]
