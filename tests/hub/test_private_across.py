"""Private conversations of a guest with people of another member of a cluster, when its nick passes
to somebody else there (docs/cluster.md, "Private chat across members"): each member keeps a copy, and
the copy on the other member was never closed when the guest's session ended on its own, so a stranger
taking the nick there read it. A guest back from its network reads it again, as on one member."""

from __future__ import annotations

import random

from server.hub.hub import Hub
from server.hub.model import Origin
from server.protocol.codec import encode_client_text
from tests.hub.test_acknowledged import Link
from tests.hub.test_restore import RecordingPersistence
from tests.hub.test_sessions import poll

HOME = Origin("198.51.100.7", False, "198.51.100.0/24")
HOME_AGAIN = Origin("198.51.100.9", False, "198.51.100.0/24")
ELSEWHERE = Origin("203.0.113.9", False, "203.0.113.0/24")
SAID = ["my secret plan", "good luck"]


def talked(link: Link) -> None:
    """*Ala, a guest of member a, and *Bob, a guest of member b, write to each other; then Ala's session
    ends (she closed MultiPoints: `usunGracza`)."""
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    b.guest_login("bobBob22", "*Bob", "en", Origin("192.0.2.5", False, "192.0.2.0/24"))
    link.deliver()
    poll(a, "alaAla11", 0, "c1._*Bob." + encode_client_text(SAID[0]))
    link.deliver()
    poll(b, "bobBob22", 0, "c1._*Ala." + encode_client_text(SAID[1]))
    link.deliver()
    assert a.logout("alaAla11")
    link.deliver()


def history(hub: Hub, secret: str) -> list[str]:
    """What `get._*Bob` shows: the texts of the conversation's lines (none: a `nochat` line)."""
    lines = poll(hub, secret, 0, "c1.get._*Bob").lines(0, "ca")
    parts = [line.split(".", 3) for line in lines if ".*Ala-*Bob." in line]
    return ["nochat" if writer == "nochat" else text for _, _, writer, text in parts]


def test_a_stranger_who_takes_the_nick_on_the_other_member_reads_none_of_it() -> None:
    link = Link("ab")
    talked(link)
    b = link.hubs["b"]
    assert [entry.text for entry in b.private.get("*Ala", "*Bob").visible_to("*Bob")] == SAID  # type: ignore[union-attr]

    b.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    assert history(b, "eveEve55") == ["nochat"]
    reply = b.reply("eveEve55", 0, with_subscriptions=True)
    assert SAID[0] not in reply and SAID[1] not in reply
    assert history(b, "bobBob22") == SAID  # Bob keeps his side


def test_the_guest_back_from_its_network_on_the_other_member_reads_it_again() -> None:
    link = Link("ab")
    talked(link)
    b = link.hubs["b"]
    b.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)  # a stranger first: closed on her side
    assert b.logout("eveEve55")

    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    assert history(b, "alaNew99") == SAID


def test_a_restart_of_the_other_member_keeps_it_closed_to_a_stranger() -> None:
    link = Link("ab")
    talked(link)
    journal = link.stores["b"].entries
    after = Hub(timers=link.timers, persistence=RecordingPersistence(), rng=random.Random(9))
    after.restore(journal, next_uid=1)

    after.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    assert history(after, "eveEve55") == ["nochat"]
