"""Ignoring another player (server/hub/ignoring.py) and the limits on private lines to one player
(Limits.private), on the hub itself: what the one who ignores reads, what the ignored one is told, and
what a reader who ignores nobody pays for it (nothing)."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.ignoring import MOST_IGNORED, Ignoring
from server.hub.limits import (
    ANSWERED_FOR,
    CHAT_LINES_PER_MINUTE,
    IGNORE_CHANGES_PER_MINUTE,
    PRIVATE_FROM_GUESTS_PER_MINUTE,
    PRIVATE_FROM_ONE_PER_MINUTE,
)
from server.hub.persistence import Account, MemoryPersistence, SavedSession
from server.protocol.codec import decode_server_text, encode_client_text, parse_commands
from tests.web.zagram import Reply, parse_reply

GAME = "0808stanF0.0.0"


class Reader:
    """A logged-in guest polling the hub as a client does: its commands numbered, its msgNo kept."""

    def __init__(self, hub: Hub, nick: str) -> None:
        self.hub, self.nick, self.secret = hub, nick, f"id{len(hub.players):07d}"
        self.number, self.seen = 0, 0
        hub.guest_login(self.secret, nick, "en")

    def send(self, kind: str, table: str | int, text: str = "") -> None:
        self.number += 1
        self.hub.receive(self.secret, parse_commands(f"{kind}{self.number}.{table}.{text}"))

    def say(self, table: str | int, text: str) -> None:
        self.send("c", table, encode_client_text(text))

    def poll(self) -> Reply:
        reply = parse_reply(self.hub.reply(self.secret, self.seen, with_subscriptions=False))
        self.seen = reply.last
        return reply


def texts(reply: Reply, table: int = 0) -> list[str]:
    """`nick: text` of every chat line of one section (the writer's side for a private line)."""
    found = []
    for line in reply.lines(table, "c"):
        _, nick, kind, text = line[2:].split(".", 3)
        if "-" in nick and kind in ("1", "2"):
            nick = nick.split("-")[int(kind) - 1]
        text = decode_server_text(text)
        found.append(f"{nick}: {text}" if kind != "e" else f"told: {text}")
    return found


def lobby_of(*nicks: str) -> tuple[Hub, ManualTimers, dict[str, Reader]]:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    readers = {nick: Reader(hub, nick) for nick in nicks}
    for reader in readers.values():
        reader.poll()
    return hub, timers, readers


def test_an_ignored_players_lines_are_hidden_at_every_table_and_shown_again_once_unignored() -> None:
    hub, _, people = lobby_of("*Ala", "*Bob", "*Cyd")
    ala, bob, cyd = people["*Ala"], people["*Bob"], people["*Cyd"]
    uid = hub.open_table(parse_game_type(GAME), "*Bob", "*Cyd").uid
    ala.send("b", uid)
    ala.send("c", "ignore", "_*BOB")  # the nick in another case is the same player
    assert ala.poll().lines(0, "n") == ["n*Bob"]  # the list, with the nick as it is shown

    bob.say(0, "lobby line")
    bob.say(uid, "table line")
    cyd.say(0, "cyd here")
    cyd.say(uid, "cyd at the table")
    reply = ala.poll()
    assert texts(reply) == ["*Cyd: cyd here"]
    assert texts(reply, uid) == ["*Cyd: cyd at the table"]
    assert texts(cyd.poll()) == ["*Bob: lobby line", "*Cyd: cyd here"]  # the others read everything

    whole = parse_reply(hub.reply(ala.secret, 0, with_subscriptions=False))  # the whole state again
    assert "*Bob: lobby line" not in texts(whole) and "*Cyd: cyd here" in texts(whole)
    assert texts(whole, uid) == ["*Cyd: cyd at the table"]

    ala.send("c", "unignore", "_*Bob")
    assert ala.poll().lines(0, "n") == ["n"]
    bob.say(0, "back again")
    assert texts(ala.poll()) == ["*Bob: back again"]


def test_an_ignored_players_private_lines_and_invitations_are_refused_and_the_writer_told() -> None:
    hub, _, people = lobby_of("*Ala", "*Bob")
    ala, bob = people["*Ala"], people["*Bob"]
    bob.send("v", 0, f"s.*Ala.{GAME}")  # pending when Ala starts to ignore Bob: rejected
    assert [line[:7] for line in ala.poll().lines(0, "vg")] == ["vg*Bob."]
    ala.send("c", "ignore", "_*Bob")
    assert ala.poll().lines(0, "vg") == []
    assert bob.poll().lines(0, "vr") == ["vr*Ala"]
    bob.send("v", 0, "o")

    bob.say("_*Ala", "hello?")
    bob.send("v", 0, f"s.*Ala.{GAME}")
    assert texts(bob.poll()) == [
        "told: *Ala does not accept your private messages.",
        "told: *Ala does not accept your invitations.",
    ]
    assert texts(ala.poll()) == [] and hub.private.get("*Ala", "*Bob") is None  # nothing kept
    assert not hub.incoming

    ala.say("_*Bob", "I can still write to you")  # ignoring is one-way
    assert texts(bob.poll()) == ["*Ala: I can still write to you"]


def test_conversation_history_hides_the_ignored_side() -> None:
    hub, _, people = lobby_of("*Ala", "*Bob")
    ala, bob = people["*Ala"], people["*Bob"]
    bob.say("_*Ala", "first")
    ala.say("_*Bob", "answer")
    ala.poll()
    ala.send("c", "ignore", "_*Bob")
    ala.send("c", "get", "_*Bob")
    assert texts(ala.poll()) == ["*Ala: answer"]


def test_ignore_commands_refused_and_the_list_bounded() -> None:
    hub, timers, people = lobby_of("*Ala")
    ala = people["*Ala"]
    for what in ("_*ALA", "_bad.nick", "*Bob", "_"):
        ala.send("c", "ignore", what)
    assert texts(ala.poll()) == [
        "told: You cannot ignore yourself.",
        "told: A nick has 1-20 Latin or Cyrillic letters, digits, _ or single spaces.",
        "told: ignore needs _nick.",
        "told: ignore needs _nick.",
    ]
    player = hub.players[ala.secret]
    assert player.ignored == {}
    for n in range(IGNORE_CHANGES_PER_MINUTE + 1):
        ala.send("c", "ignore", f"_*Guest{n}")
    assert texts(ala.poll())[-1] == (
        f"told: At most {IGNORE_CHANGES_PER_MINUTE} changes to the players you ignore a minute; "
        "please wait a little."
    )
    assert len(player.ignored) == IGNORE_CHANGES_PER_MINUTE
    timers.advance(60)
    for n in range(IGNORE_CHANGES_PER_MINUTE, MOST_IGNORED + 1):
        timers.advance(2.1)  # at most 30 changes a minute
        ala.send("c", "ignore", f"_*Guest{n}")
    assert len(player.ignored) == MOST_IGNORED
    full = f"told: You ignore {MOST_IGNORED} players already: stop ignoring one first."
    assert texts(ala.poll())[-1] == full
    ala.send("c", "ignore", "")  # asks for the list only
    (listed,) = ala.poll().lines(0, "n")
    assert listed.startswith("n*Guest0.*Guest1.*Guest10.") and listed.count(".") == MOST_IGNORED - 1


def test_a_reader_who_ignores_nobody_gets_the_reply_it_got_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hiding walks the lines of the readers who ignore someone, and only theirs: the shared text of the
    lobby goes out to everyone else as it is."""
    hub, _, people = lobby_of("*Ala", "*Bob", "*Cyd")
    people["*Ala"].send("c", "ignore", "_*Bob")
    people["*Ala"].poll()
    walked: list[str] = []
    hide = Ignoring.hide
    monkeypatch.setattr(Ignoring, "hide", staticmethod(lambda p, s: walked.append(p.nick) or hide(p, s)))
    people["*Bob"].say(0, "hello")
    for reader in people.values():
        reader.poll()
    assert walked == ["*Ala"]
    assert hub.reply(people["*Cyd"].secret, 0, with_subscriptions=False).count("*Bob.1.hello") == 1
    assert walked == ["*Ala"]


def test_thirty_players_flooding_one_get_the_limits_worth_through_and_are_told() -> None:
    """Issue 43.7's figure on the hub: 30 players send one player 600 private lines within a minute."""
    nicks = ["*Target"] + [f"*Flood{n}" for n in range(30)]
    hub, _, people = lobby_of(*nicks)
    target = people["*Target"]
    for sender in nicks[1:]:
        for n in range(CHAT_LINES_PER_MINUTE):
            people[sender].say("_*Target", f"{sender} line {n}")
    received = texts(target.poll())
    assert len(received) == PRIVATE_FROM_GUESTS_PER_MINUTE  # all guests: their share of the 30
    told = {sender: texts(people[sender].poll()) for sender in nicks[1:]}
    refusals = [line for lines in told.values() for line in lines if line.startswith("told:")]
    assert len(refusals) == 30 * CHAT_LINES_PER_MINUTE - PRIVATE_FROM_GUESTS_PER_MINUTE
    assert all(any(line.startswith("told:") for line in lines) for lines in told.values())
    per_sender = (
        f"told: At most {PRIVATE_FROM_ONE_PER_MINUTE} private lines a minute to *Target until they write "
        "to you; it was not sent."
    )
    in_all = (
        "told: *Target is getting too many private messages just now; it was not sent. Please try again "
        "in a minute."
    )
    assert per_sender in told["*Flood0"] and in_all in told["*Flood29"]
    kept = sum(len(hub.private.get("*Target", sender).entries) for sender in nicks[1:3])
    assert kept == PRIVATE_FROM_ONE_PER_MINUTE * 2  # refused lines are kept nowhere
    assert hub.private.get("*Target", nicks[3]) is None


def test_a_conversation_is_never_held_back_and_a_minute_frees_the_limits() -> None:
    hub, timers, people = lobby_of("*Ala", "*Bob", "*Cyd")
    ala, bob, cyd = people["*Ala"], people["*Bob"], people["*Cyd"]
    ala.say("_*Bob", "hi Bob")  # Ala wrote to Bob: his lines to her are a conversation
    for n in range(CHAT_LINES_PER_MINUTE):
        bob.say("_*Ala", f"reply {n}")
    for n in range(PRIVATE_FROM_ONE_PER_MINUTE + 1):
        cyd.say("_*Ala", f"unasked {n}")
    assert len(texts(ala.poll())) == 1 + CHAT_LINES_PER_MINUTE + PRIVATE_FROM_ONE_PER_MINUTE
    assert texts(cyd.poll())[-1].startswith("told: At most 10 private lines a minute to *Ala")
    assert hub.players[cyd.secret].said[-1][1] == f"unasked {PRIVATE_FROM_ONE_PER_MINUTE - 1}"  # not counted

    timers.advance(60)
    cyd.say("_*Ala", "a minute later")
    timers.advance(ANSWERED_FOR)
    for n in range(PRIVATE_FROM_ONE_PER_MINUTE + 1):  # Ala has not written to Bob for ten minutes
        bob.say("_*Ala", f"later {n}")
    assert texts(ala.poll()) == ["*Cyd: a minute later"] + [
        f"*Bob: later {n}" for n in range(PRIVATE_FROM_ONE_PER_MINUTE)
    ]


class Recording(MemoryPersistence):
    def __init__(self) -> None:
        super().__init__()
        self.sessions: dict[str, SavedSession] = {}
        self.changes: list[tuple[int, str, str | None]] = []  # account number, key, nick (None: taken off)

    def session_saved(self, session: SavedSession) -> None:
        self.sessions[session.id_hmac] = session

    def ignored_added(self, account: int, key: str, nick: str) -> None:
        self.changes.append((account, key, nick))

    def ignored_removed(self, account: int, key: str) -> None:
        self.changes.append((account, key, None))


def test_a_guests_list_goes_with_its_session_and_a_registered_players_with_the_account() -> None:
    store = Recording()
    hub = Hub(timers=ManualTimers(), persistence=store, clock=lambda: 1_700_000_000.0)
    hub.guest_login("guest01", "*Ala", "en")
    hub.login("RegisteredBo1", Account("Bob", 1500, 0, 0, 0, ignored=("*Old",), number=7))
    bob = hub.players["RegisteredBo1"]
    assert bob.ignored == {"*old": "*Old"}  # read with the account at login
    hub.receive("guest01", parse_commands("c1.ignore._*Cyd"))
    hub.receive("RegisteredBo1", parse_commands("c1.ignore._*Cyd/c2.ignore._*Dan/c3.unignore._*old"))

    assert store.sessions[hub.players["guest01"].id_hmac].ignored == ("*Cyd",)
    # one change at a time, by the account's number (a rename keeps it), never the whole list
    assert store.changes == [(7, "*cyd", "*Cyd"), (7, "*dan", "*Dan"), (7, "*old", None)]
    assert store.sessions[bob.id_hmac].ignored == ()  # the account keeps it, not the session


def test_while_storage_fails_the_list_is_not_changed_but_can_be_read() -> None:
    hub, _, people = lobby_of("*Ala", "*Bob")
    ala = people["*Ala"]
    ala.send("c", "ignore", "_*Bob")
    ala.poll()
    hub.persistence.storage_failure = "disk full"
    ala.send("c", "unignore", "_*Bob")
    ala.send("c", "ignore")
    reply = ala.poll()
    assert texts(reply)[0].startswith("told: The server cannot save anything just now")
    assert reply.lines(0, "n") == ["n*Bob"]
    assert hub.players[ala.secret].ignored == {"*bob": "*Bob"}
