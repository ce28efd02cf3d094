"""Private conversations of a guest with people of another member of a cluster, when its nick passes
to somebody else there (docs/cluster.md, "Private chat across members"): each member keeps a copy, and
the copy on the other member was never closed when the guest's session ended on its own, so a stranger
taking the nick there read it. A guest back from its network reads it again, as on one member."""

from __future__ import annotations

import random
from typing import Any

from server.hub.chats import CARRIED_LINES, CARRIED_TALKS
from server.hub.hub import Hub
from server.hub.model import Origin
from server.hub.persistence import LiveSessions
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


def history(hub: Hub, secret: str, number: int = 1, other: str = "*Bob") -> list[str]:
    """What `get._<other>` shows, after what the session was sent before: the texts of the conversation's
    lines (none: a `nochat` line). `number`: the command's, above those the session sent already."""
    seen = poll(hub, secret, 0).last
    lines = poll(hub, secret, seen, f"c{number}.get._{other}").lines(0, "ca")
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
    assert history(b, "bobBob22", 2, "*Ala") == SAID  # Bob keeps his side


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


def test_a_conversation_left_on_the_member_the_guest_came_back_from_is_closed_to_a_stranger() -> None:
    """Ala and Bob talk on member a; Ala's MultiPoints starts again and reaches member b, which asks a
    to give her session up. Her side of the conversation on a must close as her session's end there
    closes it, or a stranger taking *Ala on a later reads it. Before, a session given up kept it open,
    as a session replaced on the same member does for its new session there."""
    link = Link("ab")
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    a.guest_login("bobBob22", "*Bob", "en", Origin("192.0.2.5", False, "192.0.2.0/24"))
    poll(a, "alaAla11", 0, "c1._*Bob." + encode_client_text(SAID[0]))
    poll(a, "bobBob22", 0, "c1._*Ala." + encode_client_text(SAID[1]))
    link.deliver()
    carried = a.give_up("*Ala", HOME_AGAIN.group)
    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN, carried=carried)
    link.deliver()
    assert b.logout("alaNew99")
    link.deliver()

    a.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    assert history(a, "eveEve55") == ["nochat"]
    assert history(a, "bobBob22", 2, "*Ala") == SAID  # Bob keeps his side
    assert a.logout("eveEve55")
    a.guest_login("alaAla33", "*Ala", "en", HOME)  # Ala herself, back on a from her network, reads it
    assert history(a, "alaAla33") == SAID


def talked_on_a(link: Link) -> None:
    """*Ala and *Bob, guests of member a, write to each other."""
    a = link.hubs["a"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    a.guest_login("bobBob22", "*Bob", "en", Origin("192.0.2.5", False, "192.0.2.0/24"))
    poll(a, "alaAla11", 0, "c1._*Bob." + encode_client_text(SAID[0]))
    poll(a, "bobBob22", 0, "c1._*Ala." + encode_client_text(SAID[1]))
    link.deliver()


def moved(link: Link, source: str, target: str, secret: str) -> None:
    """The session's requests reach member `target` now (nginx's members changed): `source` hands it
    over, `target` takes it from the store (server/cluster/sessions.py)."""
    id_hmac = link.hubs[source].ctx.persistence.id_hmac(secret)
    assert link.hubs[source].hand_over(id_hmac)
    link.hubs[target].take_over(link.stores[source].sessions[id_hmac], None)
    link.deliver()


def test_a_conversation_left_by_a_session_moved_to_another_member_is_closed_to_a_stranger() -> None:
    """Before, a session handed over kept its side open on the member it left: once it ended on the
    other member, a stranger taking *Ala there read the conversation."""
    link = Link("ab")
    talked_on_a(link)
    moved(link, "a", "b", "alaAla11")
    a, b = link.hubs["a"], link.hubs["b"]
    assert b.logout("alaAla11")
    link.deliver()

    a.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    assert history(a, "eveEve55") == ["nochat"]
    assert history(a, "bobBob22", 2, "*Ala") == SAID


def test_a_guest_session_moved_back_reads_its_conversation_again() -> None:
    link = Link("ab")
    talked_on_a(link)
    moved(link, "a", "b", "alaAla11")
    moved(link, "b", "a", "alaAla11")
    assert history(link.hubs["a"], "alaAla11", number=2) == SAID


def test_a_member_restarted_after_its_guest_went_elsewhere_keeps_the_talk_from_a_stranger() -> None:
    """Member a dies; Ala's session is taken over by member b (her requests reach it) and ends there.
    Member a's journal still has her side open, and no session of hers is a's to restore: it closes at
    the restart. Before, a stranger taking *Ala on a after its restart read the conversation."""
    link = Link("ab")
    talked_on_a(link)
    a_store = link.stores["a"]
    ala = a_store.sessions[link.hubs["a"].ctx.persistence.id_hmac("alaAla11")]
    bob = a_store.sessions[link.hubs["a"].ctx.persistence.id_hmac("bobBob22")]
    link.kill("a")
    link.hubs["b"].take_over(ala, None)
    assert link.hubs["b"].logout("alaAla11")

    journal = {uid: list(entries) for uid, entries in a_store.entries.items()}
    after = Hub(timers=link.timers, persistence=a_store, rng=random.Random(9))  # its key: Bob's id still his
    after.restore(journal, next_uid=1, sessions=LiveSessions([bob]))  # Ala's row is b's now

    after.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    assert history(after, "eveEve55") == ["nochat"]
    assert history(after, "bobBob22", 2, "*Ala") == SAID


def test_the_guest_come_back_on_another_member_reads_its_conversations_there() -> None:
    """As on one member, the same person's new session reads what its old one read: member a hands Ala's
    conversations to member b with her session (give_up), and b keeps them as its own, across a restart
    too. Bob's side of b's copy is closed: whoever takes *Bob on b is not known to be Bob. Before, Ala
    found none of them on b."""
    link = Link("ab")
    talked_on_a(link)
    a, b = link.hubs["a"], link.hubs["b"]
    carried = a.give_up("*Ala", HOME_AGAIN.group)
    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN, carried=carried)
    link.deliver()
    assert history(b, "alaNew99") == SAID
    b.guest_login("eveEve55", "*Bob", "en", ELSEWHERE)
    assert history(b, "eveEve55", other="*Ala") == ["nochat"]
    assert b.logout("eveEve55")

    poll(a, "bobBob22", 0, "c2._*Ala." + encode_client_text("still there?"))  # to her, on member b now
    link.deliver()
    assert history(b, "alaNew99", number=2) == [*SAID, "still there?"]
    saved = link.stores["b"].sessions[b.ctx.persistence.id_hmac("alaNew99")]
    journal = {uid: list(entries) for uid, entries in link.stores["b"].entries.items()}
    after = Hub(timers=link.timers, persistence=link.stores["b"], rng=random.Random(9))
    after.restore(journal, next_uid=1, sessions=LiveSessions([saved]))
    assert history(after, "alaNew99", number=3) == [*SAID, "still there?"]


def test_a_conversation_the_member_has_a_copy_of_is_not_taken_twice() -> None:
    """Ala on member a and Bob on member b talked across members, so b has its own copy; Ala comes back
    on b: b keeps its copy, the lines once, and Bob reads them as before."""
    link = Link("ab")
    talked(link)  # ends with Ala's logout: she comes back from her network on a first
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla33", "*Ala", "en", HOME)
    carried = a.give_up("*Ala", HOME_AGAIN.group)
    assert carried is not None and [line["text"] for line in carried.talks] == SAID
    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN, carried=carried)
    assert history(b, "alaNew99") == SAID
    assert history(b, "bobBob22", 2, "*Ala") == SAID


def test_what_a_session_given_up_carries_is_bounded_to_its_latest_talks_and_lines() -> None:
    """At most CARRIED_TALKS conversations, the latest, and the latest CARRIED_LINES lines of each: the
    answer goes through Redis in one message (350 KB at most, measured)."""
    link = Link("ab")
    a = link.hubs["a"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    for partner in range(CARRIED_TALKS + 5):
        for line in range(CARRIED_LINES + 50):
            a.private.add(1_000 * partner + line, "*Ala", f"*P{partner}", f"{partner}:{line}")

    carried = a.give_up("*Ala", HOME_AGAIN.group)

    assert carried is not None and len(carried.talks) == CARRIED_TALKS * CARRIED_LINES
    partners = {line["to"] for line in carried.talks}
    assert partners == {f"*P{partner}" for partner in range(5, CARRIED_TALKS + 5)}  # the latest ones
    kept = {int(line["text"].split(":")[1]) for line in carried.talks}
    assert kept == set(range(50, CARRIED_LINES + 50))  # the latest lines of each


def test_the_guest_back_on_another_member_after_its_session_ended_reads_its_conversations_there() -> None:
    """Ala's session on member a has ended (she closed MultiPoints); she starts it again, and its new id
    reaches member b. b asks the other members (`recall_talks`) for what a session of *Ala from her
    network left closed at them, and keeps it as a given-up session's. Before, she found on b only what
    b kept, and her talk with Bob stayed on a."""
    link = Link("ab")
    talked_on_a(link)
    a, b = link.hubs["a"], link.hubs["b"]
    assert a.logout("alaAla11")
    b.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)  # a stranger first: a hands her nothing
    link.deliver()
    assert history(b, "eveEve55") == ["nochat"]
    assert b.logout("eveEve55")

    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    link.deliver()
    assert history(b, "alaNew99") == SAID
    poll(a, "bobBob22", 0, "c2._*Ala." + encode_client_text("still there?"))  # to her, on member b now
    link.deliver()
    assert history(b, "alaNew99", number=2) == [*SAID, "still there?"]
    assert history(a, "bobBob22", 3, "*Ala") == [*SAID, "still there?"]  # Bob's side, as it was
    a.guest_login("eveEve66", "*Ala", "en", ELSEWHERE)  # member a's copy: closed to a stranger still
    assert history(a, "eveEve66") == ["nochat"]


def test_recalled_conversations_reach_only_the_session_that_asked() -> None:
    """An answer that comes once the session has ended, or for a session from another network, is kept
    by nobody; nor does a member with a session of the nick online hand anything over (its guest gives
    it up itself: give_up)."""
    link = Link("ab")
    talked_on_a(link)
    a, b = link.hubs["a"], link.hubs["b"]
    assert a.logout("alaAla11")
    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    assert b.logout("alaNew99")  # before a's answer
    b.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    link.deliver()
    assert history(b, "eveEve55") == ["nochat"]
    assert b.private.get("*Ala", "*Bob") is None

    a.guest_login("alaAla33", "*Ala", "en", HOME)
    assert a.chats.recalled_talks("*Ala", HOME.group) == []
    assert a.logout("alaAla33")
    assert [line["text"] for line in a.chats.recalled_talks("*Ala", HOME.group)] == SAID
    assert a.chats.recalled_talks("*Ala", ELSEWHERE.group) == []


def test_a_login_that_takes_a_session_over_asks_no_member_for_conversations() -> None:
    """The session given up brought its conversations: nothing more is asked of the members, where an
    answer would only repeat them (up to 350 KB through Redis)."""
    link = Link("ab")
    talked_on_a(link)
    a, b = link.hubs["a"], link.hubs["b"]
    b.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN, carried=a.give_up("*Ala", HOME_AGAIN.group))
    assert [message for _, _, message in link.queue if "recall_talks" in message] == []
    assert b.logout("alaNew99")
    b.guest_login("alaNew77", "*Ala", "en", HOME_AGAIN)
    assert [message for _, _, message in link.queue if "recall_talks" in message] == [
        {"recall_talks": ["*Ala", HOME_AGAIN.group]}
    ]


def test_an_answer_to_a_private_line_heard_twice_is_taken_once() -> None:
    """The answers to a private line are sent again while Redis fails (server/cluster/lobby.py, RESENT),
    and Redis may have taken a copy before it failed: the writer's member keeps and shows the line once,
    and tells a refusal once."""
    link = Link("ab")
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    b.guest_login("bobBob22", "*Bob", "en", ELSEWHERE)
    link.deliver()
    answers: list[dict[str, Any]] = []
    link.losing = lambda message: bool(answers.append(message))
    seen = poll(a, "alaAla11", 0, "c1._*Bob." + encode_client_text("hi bob")).last
    link.deliver()
    for answer in answers:
        if "private_kept" in answer:
            a.take_from_member("b", answer)  # again
    reply = poll(a, "alaAla11", seen)
    assert [line for line in reply.lines(0, "ca") if line.endswith(".hi bob")] != []
    assert sum(line.endswith(".hi bob") for line in reply.lines(0, "ca")) == 1
    assert history(a, "alaAla11", 2) == ["hi bob"]

    poll(b, "bobBob22", 0, "c1.ignore._*Ala")
    seen = poll(a, "alaAla11", 0, "c3._*Bob." + encode_client_text("hello??")).last
    answers.clear()
    link.deliver()
    refusals = [answer for answer in answers if "private_refused" in answer]
    assert refusals
    a.take_from_member("b", refusals[0])  # again
    told = [line for line in poll(a, "alaAla11", seen).lines(0, "ca") if "does not accept" in line]
    assert len(told) == 1


def test_a_line_kept_after_its_writers_session_ended_is_shown_to_no_stranger() -> None:
    """The answer to *Ala's line comes late (sent again while Redis failed): her session has ended
    meanwhile, and a stranger from another network took the nick *Ala on member a. Before, the stranger
    was shown Ala's line, and read it with `get._*Bob`. Ala back from her network reads it."""
    link = Link("ab")
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    b.guest_login("bobBob22", "*Bob", "en", Origin("192.0.2.5", False, "192.0.2.0/24"))
    link.deliver()
    late: list[dict[str, Any]] = []
    link.losing = lambda message: "private_kept" in message and not late.append(message)
    poll(a, "alaAla11", 0, "c1._*Bob." + encode_client_text(SAID[0]))
    link.deliver()
    assert a.logout("alaAla11")
    link.deliver()
    a.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    (answer,) = late
    a.take_from_member("b", answer)
    assert SAID[0] not in a.reply("eveEve55", 0, with_subscriptions=True)
    assert history(a, "eveEve55") == ["nochat"]
    assert a.logout("eveEve55")

    a.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    assert history(a, "alaNew99") == [SAID[0]]
