"""A registered player's setting "no private lines from guests" (docs/protocol.md, "Private lines from
guests"), on the hub itself: what the writers are told, what the player reads, what the store is handed,
and lines from guests of another member of a cluster."""

from __future__ import annotations

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import ANSWERED_FOR
from server.hub.persistence import Account, MemoryPersistence
from server.protocol.codec import encode_client_text, parse_commands
from tests.hub.test_acknowledged import Link
from tests.hub.test_ignoring import Reader, lobby_of, texts
from tests.hub.test_sessions import poll

BLOCKED = "told: Bob does not accept your private messages."


class Registered(Reader):
    """A registered player polling the hub, logged in with `account`."""

    def __init__(self, hub: Hub, account: Account) -> None:
        self.hub, self.nick, self.secret = hub, account.nick, f"Registered{account.number:05d}"
        self.number, self.seen = 0, 0
        hub.login(self.secret, account)


def bob(refuses: bool | None = False) -> Account:
    return Account("Bob", 1500, 0, 0, 0, ignored=(), refuses_guest_privates=refuses, number=7)


def test_guests_lines_are_refused_with_the_ignores_answer_and_others_delivered() -> None:
    hub, timers, people = lobby_of("*Ala", "*Cyd")
    ala, cyd = people["*Ala"], people["*Cyd"]
    bob_ = Registered(hub, bob())
    carol = Registered(hub, Account("Carol", 1500, 0, 0, 0, ignored=(), number=8))
    bob_.poll()
    bob_.send("c", "guestprivates", "off")
    assert bob_.poll().lines(0, "a") == ["aguestprivates.off"]

    ala.say("_Bob", "buy gold")
    carol.say("_Bob", "a game?")
    assert texts(ala.poll()) == [BLOCKED]  # what an ignored writer reads: nothing more is told
    assert texts(bob_.poll()) == ["Carol: a game?"]
    assert hub.private.get("*Ala", "Bob") is None  # kept in no conversation

    bob_.say("_*Cyd", "hello Cyd")  # a guest Bob writes to may answer him for a while
    cyd.say("_Bob", "hello Bob")
    assert texts(bob_.poll()) == ["Bob: hello Cyd", "*Cyd: hello Bob"]
    timers.advance(ANSWERED_FOR)
    cyd.say("_Bob", "still there?")
    assert texts(cyd.poll())[-1] == BLOCKED

    bob_.send("c", "guestprivates", "on")
    assert bob_.poll().lines(0, "a") == ["aguestprivates.on"]
    ala.say("_Bob", "hi again")
    assert texts(bob_.poll()) == ["*Ala: hi again"]


def test_the_setting_is_asked_for_and_bad_or_guests_commands_change_nothing() -> None:
    hub, _, people = lobby_of("*Ala")
    ala = people["*Ala"]
    bob_ = Registered(hub, bob())
    bob_.poll()
    bob_.send("c", "guestprivates")
    bob_.send("c", "guestprivates", "maybe")
    reply = bob_.poll()
    assert reply.lines(0, "a") == ["aguestprivates.on"]
    assert texts(reply) == ["told: guestprivates needs on, off or nothing."]

    ala.send("c", "guestprivates", "off")
    ala.send("c", "guestprivates")
    reply = ala.poll()
    assert texts(reply) == ["told: Only registered players can refuse private lines from guests."]
    assert reply.lines(0, "a") == ["aguestprivates.on"]  # a guest reads every line, as before
    assert not hub.players[ala.secret].refuses_guest_privates
    assert not hub.players[bob_.secret].refuses_guest_privates


class Recording(MemoryPersistence):
    def __init__(self) -> None:
        super().__init__()
        self.changes: list[tuple[int, bool]] = []

    def guest_privates_set(self, account: int, refused: bool) -> None:
        self.changes.append((account, refused))


def test_the_setting_is_the_accounts_stored_by_its_number_and_read_at_login_only() -> None:
    store = Recording()
    hub = Hub(timers=ManualTimers(), persistence=store, clock=lambda: 1_700_000_000.0)
    hub.login("RegisteredBo1", bob(refuses=True))
    player = hub.players["RegisteredBo1"]
    assert player.refuses_guest_privates  # read with the account at login
    hub.receive(
        "RegisteredBo1", parse_commands("c1.guestprivates.on/c2.guestprivates.off/c3.guestprivates.off")
    )
    assert store.changes == [(7, False), (7, True)]  # a change at a time; the same again is none
    player.apply(bob(refuses=None))  # the account read again for its rating (after a game) changes nothing
    assert player.refuses_guest_privates

    hub.persistence.storage_failure = "disk full"
    hub.receive("RegisteredBo1", parse_commands("c4.guestprivates.on"))
    assert player.refuses_guest_privates and store.changes == [(7, False), (7, True)]


def test_a_guest_of_another_member_is_refused_and_a_registered_player_there_is_not() -> None:
    link = Link("ab")
    a, b = link.hubs["a"], link.hubs["b"]
    a.login("RegisteredBo1", bob(refuses=True))
    b.guest_login("alaAla11", "*Ala", "en")
    b.login("RegisteredCa1", Account("Carol", 1500, 0, 0, 0, ignored=(), number=8))
    link.deliver()
    seen = poll(a, "RegisteredBo1", 0).last
    told = poll(b, "alaAla11", 0, "c1._Bob." + encode_client_text("buy gold"))
    poll(b, "RegisteredCa1", 0, "c1._Bob." + encode_client_text("a game?"))
    link.deliver()
    assert texts(poll(b, "alaAla11", told.last)) == [BLOCKED]
    assert texts(poll(a, "RegisteredBo1", seen)) == ["Carol: a game?"]
