"""k across members (server/hub/acknowledged.py): a poll's k waits for its writes and for the members
that run the tables its actions went to, each action at most UNCONFIRMED_AT_MOST, whatever the player
sends after it. Two hubs joined as server/cluster/lobby.py joins them (their lobby lines and messages
delivered in order), one of them running the table, the other's player acting at it."""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any

import pytest

from server.engine.gametype import parse_game_type
from server.hub.acknowledged import UNCONFIRMED, UNCONFIRMED_AT_MOST
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.saved import SESSION_JOURNAL
from server.hub.stream import CONFIRM_WAIT
from server.protocol.codec import ProtocolError
from tests.hub.test_restore import RecordingPersistence
from tests.hub.test_sessions import poll


class Link:
    """Members joined as server/cluster/lobby.py joins them: every lobby line goes to every other
    member, a message to its member, in order, when `deliver` runs; `losing` drops the messages it
    matches (pub/sub delivers at most once); a member `killed` hears nothing more, and what is sent to
    it is not delivered (its sender is told, as Redis's count of listeners tells it)."""

    def __init__(self, names: str = "ab") -> None:
        self.timers = ManualTimers()
        self.stores = {name: RecordingPersistence() for name in names}
        self.hubs = {
            name: Hub(timers=self.timers, persistence=self.stores[name], rng=random.Random(n))
            for n, name in enumerate(names)
        }
        self.queue: deque[tuple[str, str, Any]] = deque()
        self.losing = lambda message: False
        for name, hub in self.hubs.items():
            hub.share_lobby(lambda line, b_only, by=name: self._lobby_line(by, line, b_only))
            hub.share_with_members(lambda member, message, by=name: self.queue.append((member, by, message)))

    def _lobby_line(self, by: str, line: str, b_only: bool) -> None:
        for to in self.hubs:
            if to != by:
                self.queue.append((to, by, (line, b_only)))

    def kill(self, name: str) -> None:
        self.hubs[name].share_lobby(None)
        self.hubs[name].share_with_members(None)
        del self.hubs[name]

    def deliver(self, only_to: str | None = None) -> None:
        """`only_to`: the messages to that member alone, the others kept in their order."""
        kept: deque[tuple[str, str, Any]] = deque()
        while self.queue:
            to, by, message = self.queue.popleft()
            if only_to is not None and to != only_to:
                kept.append((to, by, message))
                continue
            if by not in self.hubs:
                continue
            if to not in self.hubs:
                if not isinstance(message, tuple):
                    self.hubs[by].not_delivered(to, message)
            elif isinstance(message, tuple):
                self.hubs[to].take_lobby_line(by, *message)
            elif not self.losing(message):
                self.hubs[to].take_from_member(by, message)
        self.queue.extend(kept)


def game_across(link: Link) -> tuple[int, str]:
    """*Ala on member a against *Bob on member b, at a table of member a: its number, and the move Bob
    makes first once Ala has made hers."""
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en")
    b.guest_login("bobBob22", "*Bob", "en")
    link.deliver()
    uid = a.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    link.deliver()  # its `d` line names Bob: he sits down at it from member b
    assert uid in b.players["bobBob22"].tables
    return uid, "hh"


def test_an_action_whose_done_is_lost_holds_k_its_own_time_only() -> None:
    """issue 44: k waited for every action at once until 30 s after the newest one, so a player acting
    every few seconds whose members lost one `done` was held for minutes (171 s in the chaos run)."""
    link = Link()
    uid, _ = game_across(link)
    a, b = link.hubs["a"], link.hubs["b"]
    link.losing = lambda message: "done" in message  # the owner's answers are lost from now on
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    assert poll(b, "bobBob22", 0, f"c1.{uid}.hello").processed == 0  # sent to member a: not yet
    link.deliver()
    link.timers.advance(UNCONFIRMED_AT_MOST - 10)
    assert poll(b, "bobBob22", 0, f"c1.{uid}.hello/c2.{uid}.again").processed == 0
    link.deliver()
    link.timers.advance(10.5)  # the first line's 30 s are over, not the second's
    assert poll(b, "bobBob22", 0, f"c2.{uid}.again").processed == 1
    link.timers.advance(UNCONFIRMED_AT_MOST - 10)
    assert poll(b, "bobBob22", 0).processed == 2
    said = [line.rsplit(".", 1)[1] for line in a.lobby_state.snapshot(uid) if line.startswith("cr")]
    assert said == ["hello", "again"]  # each done once by the table's member


def test_a_done_confirms_the_action_sent_to_its_member_and_a_member_gone_has_it_sent_again() -> None:
    link = Link()
    uid, _ = game_across(link)
    a, b = link.hubs["a"], link.hubs["b"]
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    assert poll(b, "bobBob22", 0, f"s1.{uid}.hh").processed == 0
    link.deliver()  # member a stored it and said so
    assert poll(b, "bobBob22", 0).processed == 1

    link.losing = lambda message: "done" in message
    a.move("alaAla11", str(uid), "ab")
    link.deliver()
    assert poll(b, "bobBob22", 0, f"s2.{uid}.hg").processed == 1
    b.mirrors.owner_gone("a")  # member a left the cluster before it said so
    assert poll(b, "bobBob22", 0).processed == 1  # not done: the client sends it again
    noted = [data["k"] for _, kind, data in link.stores["b"].entries[SESSION_JOURNAL] if kind == "k"]
    assert noted[-1] == 1, "kept as not done: a member taking Bob's session from the store does not ack it"
    reply = poll(b, "bobBob22", 0, f"s2.{uid}.hg")  # as MultiPoints does: everything above k
    assert reply.processed == 2
    assert any(".e." in line for line in reply.lines(0, "ca"))  # refused where the table is now (gone)


def after_alas_move(link: Link) -> tuple[int, str, Hub]:
    """game_across with Ala's first move made: the table, the move Bob makes next, and member b."""
    uid, bobs_move = game_across(link)
    link.hubs["a"].move("alaAla11", str(uid), "aa")
    link.deliver()
    return uid, bobs_move, link.hubs["b"]


def answered_move(b: Hub, uid: int, where: str) -> asyncio.Task[None]:
    """Bob's move as a request that is answered (a bot's, an old-style one): Hub.answered's task."""

    async def moving() -> None:
        b.move("bobBob22", str(uid), where)

    return asyncio.create_task(b.answered("bobBob22", moving()))


def bob_moves_unheard(link: Link) -> tuple[int, Hub, str, dict[str, Any]]:
    """Bob's move at member a's table (game_across), its message to member a not delivered (member a
    died, or Redis failed): the table, member b, member a's name and the message."""
    uid, move, b = after_alas_move(link)
    assert poll(b, "bobBob22", 0, f"s1.{uid}.{move}").processed == 0
    (to, _, sent), *_ = [entry for entry in link.queue if "do" in entry[2]]
    link.queue.clear()
    return uid, b, to, sent


def test_an_action_given_up_with_its_member_is_not_told_not_done_when_its_message_comes_back() -> None:
    """The chaos run with bots: 69 moves were told "Not done: the table's server cannot be reached now."
    and were played. Their member died; it left the cluster (the action given up: k went back, and the
    client sent the move again, to the table's new member, which did it) before the message to it was
    declared not delivered (Redis had no listener for it, sent again for 10 s). That late answer told
    the player "not done" of an action that was no longer waiting for that member."""
    uid, b, to, sent = bob_moves_unheard(Link())  # member a died: the move never reached it
    b.mirrors.owner_gone(to)  # it left the cluster: the move is given up, its client sends it again
    b.not_delivered(to, sent)  # the message's own end comes afterwards
    reply = poll(b, "bobBob22", 0)
    assert reply.processed == 0
    told = [line for section in reply.sections.values() for line in section if "cannot be reached" in line]
    assert not told
    # refused once, as given up (for a request that is answered: Hub.answered), not again as undelivered
    assert list(b.players["bobBob22"].acknowledged.refusals) == [(1, UNCONFIRMED.code, str(UNCONFIRMED))]


def test_an_action_whose_member_cannot_be_reached_is_told_not_done() -> None:
    uid, b, to, sent = bob_moves_unheard(Link())
    b.not_delivered(to, sent)  # nobody took it, and its member is still a member
    assert b.players["bobBob22"].acknowledged.refused_between(0, 1) == (
        "notReached",
        "The table's server cannot be reached now.",
    )
    reply = poll(b, "bobBob22", 0)
    assert reply.processed == 1
    assert [line for line in reply.lines(uid, "ca") if "cannot be reached" in line]


def test_the_k_kept_for_a_session_leaves_out_what_other_members_have_not_confirmed() -> None:
    """issue 44: the sessions' journal kept k as soon as a poll's commands were taken, also for a move
    sent to another member's table. The player's member died before that member confirmed the move
    (which it never got: it had died too); the member that took the session took that k, so the move
    was acknowledged and never played. Now the k kept stops before it until it is confirmed."""
    link = Link()
    uid, _ = game_across(link)
    a, b = link.hubs["a"], link.hubs["b"]
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    journal = link.stores["b"].entries

    def kept() -> int:
        return [data["k"] for _, kind, data in journal[SESSION_JOURNAL] if kind == "k"][-1]

    assert poll(b, "bobBob22", 0, f"c1.0.hi/s2.{uid}.hh/c3.0.there").processed == 0
    assert kept() == 1  # the move, and the line after it, are not kept as done
    link.deliver()  # member a stored the move and said so
    assert poll(b, "bobBob22", 0).processed == 3
    assert kept() == 3


def test_a_done_confirms_its_own_action_not_the_oldest_one_waiting() -> None:
    """issue 44: an action whose answer never came had the next action's `done` taken for it, so that
    action's k waited its whole 30 s too. Each answer names its action's ticket."""
    link = Link()
    uid, _ = game_across(link)
    b = link.hubs["b"]
    first = {"lost": True}

    def losing(message: dict[str, object]) -> bool:
        lost = "done" in message and first["lost"]
        first["lost"] = first["lost"] and not lost
        return lost

    link.losing = losing  # the first action's answer never comes
    poll(b, "bobBob22", 0, "c1.0.lobby")
    poll(b, "bobBob22", 0, f"c2.{uid}.one")
    link.deliver()
    link.timers.advance(5)
    poll(b, "bobBob22", 0, f"c3.{uid}.two")
    link.deliver()  # the second action's answer
    assert poll(b, "bobBob22", 0).processed == 1
    link.timers.advance(UNCONFIRMED_AT_MOST - 4)  # the first action's wait is over, not the second's
    assert poll(b, "bobBob22", 0).processed == 3


def test_an_action_taken_back_is_sent_again_with_what_came_after_it_not_before() -> None:
    """`undone` (the owner's storage failed before it stored the action): k goes back to the command
    before it, still waiting for what before it is unconfirmed; the client sends the rest again."""
    link = Link()
    uid, _ = game_across(link)
    b = link.hubs["b"]
    link.losing = lambda message: "done" in message  # held here, answered by hand
    poll(b, "bobBob22", 0, f"c1.{uid}.one/c2.0.lobby/c3.{uid}.two/c4.0.after")
    link.deliver()
    player = b.players["bobBob22"]
    assert [sent.number for step in player.acknowledged.steps for sent in step.owners] == [1, 3]
    b.take_from_member("a", {"undone": "*Bob", "t": 2})  # the second line taken back
    assert player.last_command == 2
    assert poll(b, "bobBob22", 0).processed == 0  # the first still waits
    b.take_from_member("a", {"done": "*Bob", "t": 1})
    assert poll(b, "bobBob22", 0).processed == 2
    assert poll(b, "bobBob22", 0, f"c3.{uid}.two/c4.0.after").processed == 2  # sent again: waits anew
    b.take_from_member("a", {"done": "*Bob", "t": 3})
    assert poll(b, "bobBob22", 0).processed == 4


async def test_an_answered_action_the_tables_member_took_back_is_answered_storage() -> None:
    """`undone` ended a bot's (or an old-style) request's wait as a `done` would, and it was answered as
    made (200): the owner had taken it back, its storage failing. It answers the owner's refusal of the
    moment, `storage`, which a bot sends again a second later (docs/bots.md)."""
    link = Link()
    uid, bobs_move, b = after_alas_move(link)
    link.losing = lambda message: "done" in message  # held here, answered by hand
    answering = answered_move(b, uid, bobs_move)
    await asyncio.sleep(0.1)
    link.deliver()
    ticket = b.players["bobBob22"].acknowledged.tickets
    b.take_from_member("a", {"undone": "*Bob", "t": ticket})
    with pytest.raises(ProtocolError) as refused:
        async with asyncio.timeout(1):
            await answering
    assert refused.value.code == "storage"


def moves_at(hub: Hub, uid: int, point: str) -> int:
    """How many of the table's move lines place a dot at `point`, in its whole state."""
    return sum(line.count(f"[{point}") for line in hub.lobby_state.snapshot(uid) if line.startswith("s"))


def lost_on_the_way(link: Link, kind: str, commands: str) -> tuple[Hub, Hub, int]:
    """A game across members a and b, Ala's first move made; then Bob's `commands` (`{uid}` for the
    table) with every `kind` message between the members lost. Members a and b, and the table."""
    uid, _, b = after_alas_move(link)
    link.losing = lambda message: kind in message
    assert poll(b, "bobBob22", 0, commands.format(uid=uid)).processed == 0
    link.deliver()
    link.losing = lambda message: False
    return link.hubs["a"], b, uid


def test_an_action_lost_on_its_way_is_sent_again_when_its_member_asks_for_the_view_again() -> None:
    """benchmarks/chaos.py, seed 29: Redis came back empty and a member subscribed a second time; a
    move sent to it meanwhile was lost, or its answer. It saw the gap and asked for a resync, but
    nothing sent the move again: k waited its 30 s, and the game with it (a table still 37-54 s
    after Redis's return)."""
    link = Link()
    a, b, uid = lost_on_the_way(link, "do", "s1.{uid}.hh")
    b.take_from_member("a", {"resync": True})  # member a found a message of b's missing
    link.deliver()
    assert poll(b, "bobBob22", 0).processed == 1
    assert moves_at(a, uid, "hh") == 1


def test_an_answer_lost_on_its_way_comes_again_and_the_action_is_done_once() -> None:
    """The other way: member a did the actions and their `done` were lost; member b finds a's messages
    missing one and sends its unconfirmed actions again. Member a does each only once and answers it
    again, so k goes on without waiting 30 s and nothing is said or played twice."""
    link = Link()
    a, b, uid = lost_on_the_way(link, "done", "c1.{uid}.hello/s2.{uid}.hh")
    b.missed_from_member("a")  # member b's link found a's messages missing one
    link.deliver()
    assert poll(b, "bobBob22", 0).processed == 2
    said = [line.rsplit(".", 1)[1] for line in a.lobby_state.snapshot(uid) if line.startswith("cr")]
    assert said == ["hello"]
    assert moves_at(a, uid, "hh") == 1
    b.take_from_member("a", {"resync": True})  # and again: each still done once
    link.deliver()
    assert moves_at(a, uid, "hh") == 1


def test_a_poll_that_writes_nothing_here_waits_for_no_one_elses_writes() -> None:
    """CI of 2026-12-01: Bob's move at member a's table wrote nothing at his member b (his kept k stays
    below it until a confirms it), so his poll did not wait for b's storage; but its k waited for
    `Persistence.queued` as it stood, which other people's writes in flight had moved on. The poll
    returned at once with k behind the move that a had stored and confirmed. The same for a command
    that writes nothing on its table's own member (a refused move)."""
    link = Link()
    uid, bobs_move = game_across(link)
    a, b = link.hubs["a"], link.hubs["b"]
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    link.stores["b"].queued = 7  # someone else's writes at member b, not stored yet
    assert poll(b, "bobBob22", 0, f"s1.{uid}.{bobs_move}").processed == 0  # sent to member a: not yet
    link.deliver()  # member a stored it and said so
    assert poll(b, "bobBob22", 0).processed == 1

    link.stores["a"].queued = 7
    refused = poll(a, "alaAla11", 0, f"s1.{uid}.aa")  # taken already: refused, nothing written
    assert refused.processed == 1 and any("point is occupied" in line for line in refused.lines(uid, "ca"))


def test_an_actions_refusal_comes_with_its_answer_and_again_with_the_answer_sent_again() -> None:
    """An old-style request or a bot's action at another member's table is answered with that member's
    outcome (Mirrors.outcome): the owner's `done` carries its refusal, and an answer lost and sent
    again (the action done once) carries the same refusal, not a bare `done` that reads as made."""
    link = Link()
    uid, _ = game_across(link)
    a, b = link.hubs["a"], link.hubs["b"]
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    bob = b.players["bobBob22"]

    def refusal() -> tuple[str, str] | None:  # of the actions Bob sent since `since`
        return bob.acknowledged.refused_between(since, bob.acknowledged.tickets)

    since = b.mirrors.sent(bob)
    link.losing = lambda message: "done" in message
    b.move("bobBob22", str(uid), "aa")  # taken: refused by member a, whose answer is lost
    link.deliver()
    assert refusal() is None
    link.losing = lambda message: False
    b.mirrors.send_again("a")
    link.deliver()
    refused = refusal()
    assert refused is not None and refused[0] == "illegalMove" and "occupied" in refused[1]
    room = a.tables[uid].room
    assert room is not None and len(room.game.moves) == 1

    since = b.mirrors.sent(bob)
    b.move("bobBob22", str(uid), "hh")  # done: no refusal
    link.deliver()
    assert refusal() is None and len(room.game.moves) == 2

    a.move("alaAla11", str(uid), "ab")
    link.deliver()
    since = b.mirrors.sent(bob)
    b.move("bobBob22", str(uid), "hg")  # one request's move, done
    upto = b.mirrors.sent(bob)
    b.move("bobBob22", str(uid), "hf")  # another request's, made before the answers: not Bob's turn
    link.deliver()
    assert bob.acknowledged.refused_between(since, upto) is None  # each request its own answer
    assert refusal() is not None and len(room.game.moves) == 4


async def test_an_answered_action_whose_member_died_is_answered_unconfirmed_once_it_is_found_gone() -> None:
    """The chaos run with bots: a bot's move sent to a table's member that had just died was answered 200
    after 2 s (CONFIRM_WAIT, then as done), and was not made: the bot's feed said it was still on move,
    twice, until the table's new member took the third. An answered request (a bot's, an old-style
    one) now waits for the member's answer, or for it to be found gone (ANSWER_WAIT), and then answers
    `unconfirmed`: the member may have stored it before it died (answered `notReached`, 7 moves so
    refused were played in a chaos run), and the table, once taken over, shows whether it did."""
    link = Link()
    uid, bobs_move, b = after_alas_move(link)
    answering = answered_move(b, uid, bobs_move)
    await asyncio.sleep(0.1)
    link.queue.clear()  # member a died before it heard the move
    await asyncio.sleep(CONFIRM_WAIT + 0.2)
    assert not answering.done(), "answered before anyone knew whether it was done"
    b.mirrors.owner_gone("a")  # found gone: whether it was done is not known
    with pytest.raises(ProtocolError) as refused:
        async with asyncio.timeout(1):
            await answering
    assert refused.value.code == "unconfirmed"


def test_an_action_the_tables_member_has_no_seat_for_is_told_to_the_player() -> None:
    """The owner answered `done` for an action of a person it had no visitor for (one its member had
    seated there before the owner lost it): the client's k moved past its move, and nothing said why."""
    link = Link()
    uid, bobs_move = game_across(link)
    a, b = link.hubs["a"], link.hubs["b"]
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    poll(b, "bobBob22", 0)
    del a.visitors.by_key[("b", "*Bob")]  # as if member a had lost him (its seat is taken again below)
    poll(b, "bobBob22", 0, f"s1.{uid}.{bobs_move}")
    link.deliver()
    reply = poll(b, "bobBob22", 0)
    assert reply.processed == 1
    told = [line for section in reply.sections.values() for line in section if line.startswith("ca")]
    assert any(f"not at table {uid}" in line for line in told), reply.sections
    room = a.tables[uid].room
    assert room is not None and len(room.game.moves) == 1


def test_an_action_of_a_person_not_seated_there_is_given_up_with_its_member_and_not_told_not_done() -> None:
    """benchmarks/chaos.py, two members killed a moment apart: 15 players read "Not done" of the move
    they sent just then. Bob's member died; member c took his session and sent his move to his game's
    member a, dead too, as he was sitting down there again (that seat refused: nobody took the
    `enter`). Member a found gone, only the people at its tables had their actions given up: his
    waited on, and the message's own end, resent until then, told him "Not done" (k past the move,
    his client never to send it again) instead of his client sending it again to the table's new
    member."""
    link = Link("abc")
    uid, move, b = after_alas_move(link)
    c = link.hubs["c"]
    assert poll(b, "bobBob22", 0).processed == 0
    saved = link.stores["b"].sessions[b.ctx.persistence.id_hmac("bobBob22")]
    link.kill("a")
    link.kill("b")
    c.take_over(saved, None)  # seats him back at table uid, at member a
    assert poll(c, "bobBob22", 0, f"s1.{uid}.{move}").processed == 0
    sent = [entry for entry in link.queue if "do" in entry[2]]
    for entry in sent:
        link.queue.remove(entry)  # sent again and again while member a is still a member
    assert sent
    link.deliver()  # the `enter` nobody took: not seated, and not told
    assert uid not in c.players["bobBob22"].tables
    c.member_gone("a")
    for to, _, message in sent:
        c.not_delivered(to, message)  # the last resend, once member a is no member
    reply = poll(c, "bobBob22", 0)
    assert reply.processed == 0  # his client sends the move again
    assert not [line for lines in reply.sections.values() for line in lines if "cannot be reached" in line]
