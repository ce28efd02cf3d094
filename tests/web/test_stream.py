"""Whole conversations over /a.kropki, spoken the way the real clients speak."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.engine.gametype import parse_game_type
from server.hub.bus import LOBBY_WAKE_EVERY
from server.hub.clock import LoopTimers
from server.hub.hub import Hub
from server.hub.model import Table
from server.protocol.codec import decode_server_text
from server.web.common import HUB_KEY
from tests.web.zagram import Zagram, parse_reply


def hub_of(client: TestClient) -> Hub:
    return client.app[HUB_KEY]


def open_table(client: TestClient, blue: str = "*Xena", red: str = "*Yuri") -> Table:
    """A game table as invitations open them; by default its players are not online."""
    return hub_of(client).open_table(parse_game_type("2020stanR0.180.15"), blue, red)


def chat_texts(lines: list[str]) -> list[tuple[str, str, str]]:
    """(nick, nickType, decoded text) of `ca`/`cr` lines."""
    found = []
    for line in lines:
        if line.startswith(("ca", "cr")):
            _, nick, nick_type, text = line[2:].split(".", 3)
            found.append((nick, nick_type, decode_server_text(text)))
    return found


@pytest.fixture
async def pair(client: TestClient) -> tuple[Zagram, Zagram]:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    assert await ala.login() == ""
    assert await bob.login() == ""
    return ala, bob


def state_of(hub: Hub) -> tuple:
    """Everything a refused request must leave as it was."""
    return (
        {
            secret: (p.nick, p.lang, tuple(p.tables), p.free, p.inbox.last)
            for secret, p in hub.players.items()
        },
        {uid: (tuple(t.people), tuple(e.line() for e in t.chat.entries)) for uid, t in hub.tables.items()},
        hub.counter.last,
    )


async def test_two_guests_see_each_other_in_the_lobby(pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    first = await ala.poll()
    assert first.status == "ok" and first.first == 0 and first.last > 0
    assert first.lines(0, "pr") == ["pr*Ala.*Bob"], "the lobby as it is now, both already there"
    assert {"i*Ala..F.en", "i*Bob..F.en"} <= set(first.lines(0, "i"))
    carol = Zagram(ala.client, "carol1", "*Carol")
    await carol.login()
    joined = await ala.poll()
    assert joined.lines(0) == ["pa*Carol", "i*Carol..F.en"]
    seen = await bob.poll()
    assert seen.lines(0, "pr") == ["pr*Ala.*Bob.*Carol"]
    assert {"i*Ala..F.en", "i*Bob..F.en"} <= set(seen.lines(0, "i"))
    again = await ala.poll()
    assert again.lines(0) == [] and list(again.sections) == [0], "nothing new, but q0 is always repeated"


async def test_chat_with_every_special_character_reads_back_exactly(pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    await bob.poll()
    text = "<b>'quoted' \"double\" - dash @at /slash. dots... Привет, Вася! @S @A & 1+1 #60;"
    ala.say(0, text)
    await ala.poll()
    lines = (await bob.poll()).lines(0, "ca")
    assert chat_texts(lines) == [("*Ala", "1", text)]
    raw = lines[0]
    assert "/" not in raw and "<" not in raw and "-" not in raw.split(".", 3)[3]


async def test_bidirectional_overrides_are_taken_out_of_chat(pair: tuple[Zagram, Zagram]) -> None:
    """A right-to-left override showed `\u202etoidi` to readers as "idiot", while the banned words and
    the moderators' search read "toidi": readers now get the line as it was checked. The marks that
    right-to-left text needs (RLM) stay."""
    ala, bob = pair
    await bob.poll()
    ala.say(0, "\u202etoidi \u2067isolated\u2069 \u200fmark")
    await ala.poll()
    assert chat_texts((await bob.poll()).lines(0, "ca")) == [("*Ala", "1", "toidi isolated \u200fmark")]


async def test_every_line_break_becomes_a_space(pair: tuple[Zagram, Zagram]) -> None:
    """Unicode's line and paragraph separators and NEL are line breaks, as CR and LF are (a reply is one
    line): they went through or were dropped, so a reader whose client breaks lines at them (a log
    viewer, a text widget) saw two lines, and one that does not saw two words run together."""
    ala, bob = pair
    await bob.poll()
    ala.say(0, "one\u2028two\u2029three\x85four\r\nfive\tsix")
    await ala.poll()
    assert chat_texts((await bob.poll()).lines(0, "ca")) == [("*Ala", "1", "one two three four  five six")]


async def test_plus_and_percent_20_are_both_spaces(client: TestClient) -> None:
    response = await client.get("/a.kropki?co=guestLogin&idGracza=sp1&opis=*Ala+Ma&lang=en")
    assert await response.text() == ""
    response = await client.get("/a.kropki?co=guestLogin&idGracza=sp2&opis=*Ola%20Ma")
    assert await response.text() == ""
    response = await client.get("/a.kropki?co=dodajWpis&idGracza=sp1&table=0&newMsgs=a+b%20c")
    assert await response.text() == ""
    reply = parse_reply(await (await client.get("/a.kropki?co=getMsg&playerId=sp2&msgNo=0")).text())
    assert "pr*Ala Ma.*Ola Ma" in reply.lines(0)
    assert chat_texts(reply.lines(0)) == [("*Ala Ma", "1", "a b c")]


async def test_both_id_parameter_names_work_everywhere(client: TestClient) -> None:
    ala = Zagram(client, "ala1", "*Ala")
    assert await ala.get(co="guestLogin", playerId="ala1", opis="*Ala") == ""
    assert (await ala.get(co="getMsg", idGracza="ala1", msgNo="0")).startswith("ok/")
    assert await ala.get(co="changeLang", playerId="ala1", na="pl") == ""
    assert await ala.get(co="dodajWpis", playerId="ala1", table="0", newMsgs="hi") == ""
    assert await ala.get(co="usunGracza", idGracza="ala1") == ""


async def test_subscribe_to_a_table_and_unsubscribe(client: TestClient, pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    await ala.poll()
    await bob.poll()
    table = open_table(client)
    await ala.poll()
    lobby = (await bob.poll()).lines(0)
    assert f"ga{table.uid}" in lobby
    assert any(line.startswith(f"d{table.uid}.2020s0..s.R.a.180.15..") for line in lobby)
    assert f"x{table.uid}.1.-." in lobby
    bob.send("b", table.uid)
    entered = await bob.poll()
    assert list(entered.sections) == [0, table.uid]
    assert entered.lines(table.uid, "pr") == ["pr*Bob"]
    assert entered.lines(table.uid, "d") and entered.lines(table.uid, "x")
    ala.send("b", table.uid)
    await ala.poll()
    assert "pa*Ala" in (await bob.poll()).lines(table.uid)
    bob.say(table.uid, "good luck")
    await bob.poll()
    assert chat_texts((await ala.poll()).lines(table.uid)) == [("*Bob", "1", "good luck")]  # a spectator
    ala.send("q", table.uid)
    left = await ala.poll()
    assert list(left.sections) == [0], "the table is gone from the reply's sections"
    assert "pd*Ala" in (await bob.poll()).lines(table.uid)


async def test_newcomer_gets_the_table_chat(client: TestClient, pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    for text in ("one", "two"):
        ala.say(0, text)
    await ala.poll()
    carol = Zagram(client, "carol1", "*Carol")
    await carol.login()
    history = (await carol.poll()).lines(0, "cr")
    assert [text for _, _, text in chat_texts(history)] == ["one", "two"]


async def test_private_conversation_is_seen_by_its_two_people_only(
    client: TestClient, pair: tuple[Zagram, Zagram]
) -> None:
    ala, bob = pair
    carol = Zagram(client, "carol1", "*Carol")
    await carol.login()
    for reader in (ala, bob, carol):
        await reader.poll()
    public_before = parse_reply(await carol.get(co="getMsg", idGracza="nobody", msgNo="0"))
    ala.say("_*Bob", "just between us")
    to_ala = (await ala.poll()).lines(0, "ca")
    to_bob = (await bob.poll()).lines(0, "ca")
    assert to_ala == to_bob
    assert chat_texts(to_bob) == [("*Ala-*Bob", "1", "just between us")]
    assert (await carol.poll()).lines(0) == []
    public = parse_reply(await carol.get(co="getMsg", idGracza="nobody", msgNo=str(public_before.last)))
    assert public.lines(0) == []
    bob.say("_*Ala", "sure")
    await bob.poll()
    assert chat_texts((await ala.poll()).lines(0)) == [("*Ala-*Bob", "2", "sure")]
    # the partner list, the whole conversation, and deleting it for oneself
    ala.send("c", "get", "0")
    partners = (await ala.poll()).lines(0)
    assert [line.split(".")[1:3] for line in partners] == [["*Ala-*Bob", "-"]]
    ala.send("c", "get", "_*Bob")
    assert [text for _, _, text in chat_texts((await ala.poll()).lines(0))] == ["just between us", "sure"]
    ala.send("c", "del", "_*Bob")
    assert (await ala.poll()).lines(0)[0].split(".")[1:3] == ["*Ala-*Bob", "del"]
    ala.send("c", "get", "_*Bob")
    assert (await ala.poll()).lines(0)[0].split(".")[1:3] == ["*Ala-*Bob", "nochat"]
    bob.send("c", "get", "_*Ala")
    assert len(chat_texts((await bob.poll()).lines(0))) == 2, "deleting is for oneself only"


async def test_a_resent_command_applies_once(pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    await bob.poll()
    ala.say(0, "once")
    reply = await ala.poll()
    assert reply.processed == 1
    # the reply was lost: the client resends the same numbered command
    ala.acknowledged = 0
    again = await ala.poll()
    assert again.processed == 1 and again.lines(0) == []
    assert [text for _, _, text in chat_texts((await bob.poll()).lines(0))] == ["once"]


async def test_old_msg_no_gets_the_full_state_again(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await aiohttp_client(create_app(settings, Hub(history=10)))
    ala, bob = Zagram(client, "ala1", "*Ala"), Zagram(client, "bob1", "*Bob")
    await ala.login()
    await bob.login()
    await ala.poll()
    stale = ala.seen
    for i in range(15):  # within the chat flood limit (20 lines a minute)
        bob.say(0, f"line {i}")
    await bob.poll()
    reply = await ala.poll(msg_no=str(stale))
    assert reply.first == stale and reply.last > stale + 10
    assert reply.lines(0, "pr") == ["pr*Ala.*Bob"], "the whole state, not a silent gap"
    assert len(reply.lines(0, "cr")) == 15
    after_restart = await ala.poll(msg_no="999999")
    assert after_restart.lines(0, "pr") == ["pr*Ala.*Bob"]


async def test_logout_removes_the_player_everywhere(client: TestClient, pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    table = open_table(client)
    for reader in (ala, bob):
        reader.send("b", table.uid)
        await reader.poll()
    assert await ala.get(co="usunGracza", playerId="ala123") == ""
    reply = await bob.poll()
    assert "pd*Ala" in reply.lines(0) and "pd*Ala" in reply.lines(table.uid)
    assert (await ala.poll()).status == "sd"
    assert await Zagram(client, "new1", "*Ala").login() == "", "the nick is free again"
    assert await ala.get(co="usunGracza", playerId="ala123") == "err.notLoggedIn"


class AheadTimers(LoopTimers):
    """The loop's monotonic clock, `ahead` seconds ahead of it: time passing without waiting for it."""

    ahead = 0.0

    def now(self) -> float:
        return super().now() + self.ahead


async def test_a_player_who_stops_polling_is_timed_out(
    client: TestClient, pair: tuple[Zagram, Zagram]
) -> None:
    ala, bob = pair
    hub = hub_of(client)
    timers = hub.timers = AheadTimers()
    await ala.poll()
    await bob.poll()
    timers.ahead += hub.poll_timeout / 2
    await bob.poll()
    hub.sweep()
    assert set(p.nick for p in hub.players.values()) == {"*Ala", "*Bob"}
    timers.ahead += hub.poll_timeout / 2 + 1
    hub.sweep()
    assert [p.nick for p in hub.players.values()] == ["*Bob"]
    assert "pd*Ala" in (await bob.poll()).lines(0)


async def test_the_hub_sweeps_by_itself(client: TestClient, pair: tuple[Zagram, Zagram]) -> None:
    hub = hub_of(client)
    hub.poll_timeout = 0.0
    hub.close()
    loop = asyncio.get_running_loop()
    hub._sweeper = loop.call_later(0.01, hub._sweep_and_rearm)
    await asyncio.sleep(0.1)
    assert hub.players == {}


async def test_change_lang_and_own_flags_update_the_user_info(pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    await bob.poll()
    assert await ala.get(co="changeLang", idGracza="ala123", na="ru") == ""
    assert (await bob.poll()).lines(0, "i") == ["i*Ala..F.ru"]
    await ala.poll(extra="i0nJb")
    assert (await bob.poll()).lines(0, "i") == ["i*Ala..NJ.ru"]
    await ala.poll(extra="i0nJa")
    assert (await bob.poll()).lines(0, "i") == ["i*Ala..FJ.ru"]


async def test_get_b_msg_carries_subscriptions(client: TestClient, pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    table = open_table(client)
    await ala.poll()
    first = await bob.poll(b=True, msg_no=f"{bob.seen}.0")
    assert {"b*Ala.0", "b*Bob.0"} <= set(first.lines(0, "b"))
    ala.send("b", table.uid)
    await ala.poll()
    assert f"b*Ala.0.{table.uid}" in (await bob.poll(b=True, msg_no=f"{bob.seen}.{bob.seen}")).lines(0, "b")
    ala.send("q", table.uid)
    await ala.poll()
    assert (await bob.poll()).lines(0, "b") == [], "getMsg leaves subscription lines out"


async def test_old_endpoints_change_table_and_add_chat(
    client: TestClient, pair: tuple[Zagram, Zagram]
) -> None:
    ala, bob = pair
    table = open_table(client, blue="*Ala")
    assert ala.nick in table.people, "a player sits at a new table at once"
    assert await ala.get(co="zmienStol", idGracza="ala123", newTable=str(table.uid)) == ""
    assert list((await ala.poll()).sections) == [0, table.uid]
    assert (
        await ala.get(co="dodajWpis", idGracza="ala123", table=str(table.uid), newMsgs="hej", msgNo="1") == ""
    )
    assert chat_texts((await ala.poll()).lines(table.uid)) == [("*Ala", "B1", "hej")]
    assert await ala.get(co="zmienStol", idGracza="ala123", newTable="0") == ""
    assert list((await ala.poll()).sections) == [0]


async def test_moderator_deletes_a_chat_line(client: TestClient, pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    await bob.poll()
    ala.say(0, "rude words")
    await ala.poll()
    line_id = (await bob.poll()).lines(0, "ca")[0][2:].split(".")[0]
    bob.send("c", "delmsg", f"0.{line_id}")
    refused = await bob.poll()
    assert chat_texts(refused.lines(0)) == [("", "e", "Only moderators may delete chat lines.")]
    hub_of(client).players["bob456"].role = "moderator"  # set on the account by an admin (accounts: issue 5)
    bob.send("c", "delmsg", f"0.{line_id}")
    await bob.poll()
    assert (await ala.poll()).lines(0, "cd") == [f"cd{line_id}"]
    carol = Zagram(client, "carol1", "*Carol")
    await carol.login()
    assert f"cr{line_id}.*Ala.d." in (await carol.poll()).lines(0, "cr")


async def test_anonymous_reader_gets_the_public_lobby_stream(
    client: TestClient, pair: tuple[Zagram, Zagram]
) -> None:
    ala, _ = pair
    table = open_table(client)
    reader = Zagram(client, "unknown", "")
    body = await reader.get(co="getMsg", idGracza="robo123", msgNo="0", wiad="x")
    reply = parse_reply(body)
    assert reply.status == "sd" and list(reply.sections) == [0]
    assert f"x{table.uid}.1.-." in reply.lines(0) and reply.lines(0, "d")
    ala.say(0, "results soon")
    await ala.poll()
    later = parse_reply(await reader.get(co="getMsg", idGracza="robo123", msgNo=str(reply.last), wiad="x"))
    assert chat_texts(later.lines(0)) == [("*Ala", "1", "results soon")]


async def test_long_poll_waits_for_an_event(pair: tuple[Zagram, Zagram]) -> None:
    ala, bob = pair
    await ala.poll()
    await bob.poll()
    started = time.monotonic()
    immediate = await ala.poll()
    assert immediate.lines(0) == [] and time.monotonic() - started < 1

    async def later() -> None:
        await asyncio.sleep(0.3)
        bob.say(0, "wake up")
        await bob.poll()

    started = time.monotonic()
    waited, _ = await asyncio.gather(ala.poll(wait="20"), later())
    assert 0.25 < time.monotonic() - started < 10  # far from the wait: a loaded host's stall is no failure
    assert chat_texts(waited.lines(0)) == [("*Bob", "1", "wake up")]
    started = time.monotonic()
    empty = await ala.poll(wait="0.3")
    assert empty.lines(0) == [] and time.monotonic() - started >= 0.25


async def test_a_long_poll_that_must_start_again_is_answered_at_once(pair: tuple[Zagram, Zagram]) -> None:
    # After a restart a client's session is gone (`sd`: log in again) and its msgNo is beyond the newest
    # event (the full state comes instead): neither is news that may be worth waiting for.
    ala, _ = pair
    await ala.poll()
    newest = (await ala.poll()).last
    for query in (
        f"co=getMsg&playerId=stale12&msgNo={newest}&wait=5",
        f"co=getMsg&playerId=ala123&msgNo={newest + 1000}&wait=5",
    ):
        started = time.monotonic()
        response = await ala.client.get(f"/a.kropki?{query}")
        body = await response.text()
        assert time.monotonic() - started < 2, query
        assert body.startswith("sd/" if "stale" in query else "ok/"), body
    full = parse_reply(body)
    assert full.lines(0, "pr") == ["pr*Ala.*Bob"]


async def test_invitations_and_their_answers_end_a_long_poll(pair: tuple[Zagram, Zagram]) -> None:
    # vg/vs/vr are state repeated in every reply, not events; a long poll must still end when they change.
    ala, bob = pair
    await ala.poll()
    await bob.poll()
    invite = {"co": "zapraszam", "whom": "*Bob", "gameType": "2020s0..s.F.n...."}

    async def later(player: Zagram, **request: str) -> str:
        await asyncio.sleep(0.2)
        return await player.get(idGracza=player.secret, **request)

    async def long_poll_while(waiting: Zagram, acting: Zagram, **request: str) -> list[str]:
        started = time.monotonic()
        reply, answer = await asyncio.gather(waiting.poll(wait="20"), later(acting, **request))
        assert answer == "" and time.monotonic() - started < 10, request
        return [line for line in reply.lines(0) if line[:2] in ("vg", "vs", "vr")]

    assert await long_poll_while(bob, ala, **invite) == ["vg*Ala.2020s0..s.F.n...."]
    assert await long_poll_while(bob, ala, co="zaproszenieAnuluj") == []
    assert await ala.get(idGracza=ala.secret, **invite) == ""
    assert (await ala.poll()).lines(0, "vs") == ["vs*Bob.2020s0..s.F.n...."]  # her own, in her next reply
    assert await long_poll_while(ala, bob, co="zaproszenieNie") == ["vr*Bob"]
    assert await long_poll_while(ala, ala, co="zaproszenieOdrzuconeOk") == []


async def test_an_invitation_withdrawn_between_two_polls_ends_the_next_long_poll_at_once(
    pair: tuple[Zagram, Zagram],
) -> None:
    """The built-in client's long poll after a reply: an invitation withdrawn while no poll of Bob's
    waited (no event: invitation lines are repeated state) was shown gone only when that poll timed
    out: the stale invitation box of a flaky browser test (issue 43.8's words test)."""
    ala, bob = pair
    await ala.poll()
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Bob", gameType="2020s0..s.F.n....") == ""
    assert (await bob.poll()).lines(0, "vg") == ["vg*Ala.2020s0..s.F.n...."]
    await asyncio.sleep(LOBBY_WAKE_EVERY + 0.1)  # no wake of the lobby's long polls is due any more
    await bob.poll()
    assert await ala.get(idGracza=ala.secret, co="zaproszenieAnuluj") == ""
    started = time.monotonic()
    reply = await bob.poll(wait="20")
    assert time.monotonic() - started < 10 and reply.lines(0, "vg") == []
    started = time.monotonic()
    await bob.poll(wait="0.5")  # and once a reply has said so, a long poll waits again
    assert time.monotonic() - started >= 0.5


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("co=nonsense&idGracza=ala123", "err.unknownCo"),
        ("idGracza=ala123", "err.unknownCo"),
        ("co=guestLogin&opis=*Zed", "err.missing.idGracza"),
        ("co=guestLogin&idGracza=zed1", "err.missing.opis"),
        ("co=guestLogin&idGracza=zed1&opis=Zed", "err.badNick"),
        ("co=guestLogin&idGracza=zed1&opis=*Zed-x", "err.badNick"),
        ("co=guestLogin&idGracza=zed1&opis=*ZedЖ", "err.badNick"),
        ("co=guestLogin&idGracza=zed1&opis=*" + "z" * 20, "err.badNick"),
        ("co=guestLogin&idGracza=toolongid10&opis=*Zed", "err.badId"),
        ("co=guestLogin&idGracza=zed%2F1&opis=*Zed", "err.badId"),
        ("co=guestLogin&idGracza=zed1&opis=*ala", "err.nickInUse"),
        ("co=guestLogin&idGracza=ala123&opis=*Zed", "err.idInUse"),
        ("co=guestLogin&idGracza=zed1&opis=*Zed&lang=xx", "err.badLang"),
        ("co=getMsg&playerId=ala123", "err.missing.msgNo"),
        ("co=getMsg&playerId=ala123&msgNo=-1", "err.badMsgNo"),
        ("co=getMsg&playerId=ala123&msgNo=1.2.3", "err.badMsgNo"),
        ("co=getMsg&playerId=ala123&msgNo=0&wait=soon", "err.badWait"),
        ("co=getMsg&playerId=ala123&msgNo=0&wait=nan", "err.badWait"),
        ("co=getMsg&playerId=ala123&msgNo=0&msgFromClient=" + "c1.0.x" * 1100, "err.tooLong"),
        # 6,001 Cyrillic characters: a 36 kB request line, still read and answered
        ("co=getMsg&playerId=ala123&msgNo=0&msgFromClient=" + "ж" * 6001, "err.tooLong"),
        ("co=changeLang&idGracza=ala123&na=zz", "err.badLang"),
        ("co=changeLang&idGracza=nobody&na=pl", "err.notLoggedIn"),
        ("co=zmienStol&idGracza=ala123&newTable=77", "err.noSuchTable"),
        ("co=zmienStol&idGracza=ala123&newTable=abc", "err.badTable"),
        ("co=dodajWpis&idGracza=ala123&table=0", "err.missing.newMsgs"),
        ("co=dodajWpis&idGracza=ala123&table=0&newMsgs=" + "x" * 301, "err.tooLong"),
        ("co=dodajWpis&idGracza=ala123&table=0&newMsgs=%20", "err.emptyMessage"),
        # nothing a reader sees: a zero-width space; a word joiner, a soft hyphen and a tag space
        ("co=dodajWpis&idGracza=ala123&table=0&newMsgs=%E2%80%8B", "err.emptyMessage"),
        ("co=dodajWpis&idGracza=ala123&table=0&newMsgs=%E2%81%A0%C2%AD%F3%A0%80%A0", "err.emptyMessage"),
        ("co=dodajWpis&idGracza=ala123&table=5&newMsgs=hi", "err.notAtTable"),
        ("co=dodajWpis&idGracza=ala123&table=_*Nobody&newMsgs=hi", "err.notOnline"),
        ("co=dodajWpis&idGracza=nobody&table=0&newMsgs=hi", "err.notLoggedIn"),
        ("co=usunGracza", "err.missing.idGracza"),
    ],
    ids=lambda value: value[:60],
)
async def test_bad_requests_are_answered_and_change_nothing(
    client: TestClient, pair: tuple[Zagram, Zagram], query: str, answer: str
) -> None:
    before = state_of(hub_of(client))
    response = await client.get(f"/a.kropki?{query}")
    assert response.status == 200
    assert await response.text() == answer
    assert state_of(hub_of(client)) == before


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("c1.0." + "x" * 301, "Message too long"),
        ("c1.0.", "empty message"),
        ("c1.0.\u200b\ufe0f", "empty message"),  # a zero-width space and a variation selector
        ("c1.9.hello", "not at table 9"),
        ("c1._*Nobody.hi", "not online"),
        ("c1._*Ala.hi", "another person"),
        ("c1.get.soon", "get needs minutes"),
        ("c1.del._*Bob", "no conversation"),
        ("c1.del.x", "del needs _nick"),
        ("c1.delmsg.0.1_0", "Only moderators"),
        ("b1.99.", "no table 99"),
        ("b1.x.", "not a table number"),
        ("q1.0.", "main room cannot be left"),
        ("q1.5.", "not at table 5"),
        ("s1.0.aa", "no game table 0"),
        ("m1.0.x", "not available"),
        ("zz", "badCommand"),
        ("c.0.hi", "badCommand"),
    ],
    ids=lambda value: value[:40],
)
async def test_refused_commands_are_answered_in_the_stream_and_change_nothing(
    client: TestClient, pair: tuple[Zagram, Zagram], command: str, reason: str
) -> None:
    ala, bob = pair
    await ala.poll()
    await bob.poll()
    hub = hub_of(client)
    bob_seen = bob.seen
    tables_before = state_of(hub)[1]
    reply = await ala.poll(extra=command)
    assert [(nick, kind) for nick, kind, _ in chat_texts(reply.lines(0))] == [("", "e")]
    assert reason.lower() in chat_texts(reply.lines(0))[0][2].lower()
    assert not hub.stream.has_news(hub.players["bob456"], bob_seen), "nobody else hears of it"
    assert state_of(hub)[1] == tables_before


async def test_a_players_id_never_reaches_the_log(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ala, bob = Zagram(client, "SeCrEtA1", "*Ala"), Zagram(client, "SeCrEtB2", "*Bob")
    await ala.login()
    await bob.login()
    ala.say("_*Bob", "hi")
    await ala.poll(extra="zz")
    await ala.get(co="guestLogin", idGracza="SeCrEtA1", opis="*Other")
    await ala.get(co="getMsg", playerId="SeCrEtB2", msgNo="x")
    await bob.get(co="usunGracza", playerId="SeCrEtB2")
    assert await ala.get(co="dodajWpis", idGracza="SeCrEtA1", table="0", newMsgs="x" * 400) == "err.tooLong"
    text = caplog.text + repr(list(hub_of(client).players.values()))
    for secret in ("SeCrEtA1", "SeCrEtB2"):
        assert secret not in text
    assert "*Ala" in caplog.text, "the log does say who did what, by nick"


async def test_a_command_failing_on_a_bug_leaves_the_polls_other_commands_done(
    client: TestClient,
    pair: tuple[Zagram, Zagram],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """k passes a poll's commands before they run. Before, the first command to raise anything but a
    refusal ended the poll with err.internal, and the commands after it were never done nor sent again."""
    ala, bob = pair
    hub = hub_of(client)

    def bug(player: object, text: str) -> None:
        raise RuntimeError("a bug in the invitations")

    monkeypatch.setattr(hub.stream.invitations, "command", bug)
    ala.send("v", 0, "s.*Bob.0808stanF0.0.0")
    ala.say(0, "still said")
    reply = await ala.poll()
    assert reply.processed == 2
    said = [(nick, text) for nick, _, text in chat_texts(reply.lines(0))]
    assert said == [
        ("*Ala", "still said"),
        ("", "The server failed on this command; it may not have been done."),
    ]
    assert ("*Ala", "still said") in [
        (nick, text) for nick, _, text in chat_texts((await bob.poll()).lines(0))
    ]
    assert "command failed" in caplog.text and "a bug in the invitations" in caplog.text
    assert ala.secret not in caplog.text


async def test_superscript_digits_and_control_characters_do_not_break_anything(
    client: TestClient, pair: tuple[Zagram, Zagram]
) -> None:
    ala, bob = pair
    await bob.poll()
    ala.send("b", "\u00b2")
    refused = await ala.poll()
    assert "not a table number" in chat_texts(refused.lines(0))[0][2]
    ala.say(0, "two\nlines\tand\x07bell")
    await ala.poll()
    body = await bob.get(co="getMsg", playerId="bob456", msgNo=str(bob.seen))
    assert "\n" not in body and "\t" not in body and "\x07" not in body
    assert chat_texts(parse_reply(body).lines(0)) == [("*Ala", "1", "two lines andbell")]


@pytest.mark.parametrize(
    ("nick", "answer"),
    [
        ("*\uff21la", "err.nickInUse"),
        ("*ALA", "err.nickInUse"),
        ("*Ala\u0301", "err.badNick"),
        ("*Ala\U000e0061", "err.badNick"),  # TAG LATIN SMALL LETTER A: invisible, `*Ala` to a reader
        ("*\U000e0041\U000e006c\U000e0061", "err.badNick"),  # a nick nobody sees: `*`
        ("*Alɑ", "err.nickInUse"),  # LATIN SMALL LETTER ALPHA (UTS #39 skeletons)
        ("*AIa", "err.nickInUse"),  # a capital I
        ("*A1a", "err.nickInUse"),
        ("*Аӏа", "err.nickInUse"),  # all Cyrillic
        ("*Аla", "err.badNick"),  # Cyrillic А, Latin la: two scripts
        ("*B0b", "err.nickInUse"),
        ("*Ola", ""),  # another nick
    ],
)
async def test_look_alike_nicks_are_refused(pair: tuple[Zagram, Zagram], nick: str, answer: str) -> None:
    ala, _ = pair
    assert await ala.get(co="guestLogin", idGracza="other1", opis=nick) == answer


async def test_a_bug_answers_err_internal_without_the_id(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(secret: str, messages: object) -> None:
        raise RuntimeError(f"bug while handling {secret}")

    monkeypatch.setattr(hub_of(client).stream, "receive", broken)  # inside Hub.poll
    response = await client.get("/a.kropki?co=getMsg&playerId=SeCrEt9&msgNo=0")
    assert response.status == 200 and await response.text() == "err.internal"
    assert "RuntimeError" in caplog.text and "SeCrEt9" not in caplog.text


async def test_resume_session_takes_over_a_live_session_and_never_makes_one(
    client: TestClient, pair: tuple[Zagram, Zagram]
) -> None:
    ala, _ = pair
    ala.say(0, "from the other program")
    await ala.poll()
    assert await ala.get(co="resumeSession", idGracza="nobody1", opis="*Nobody") == "err.notLoggedIn"
    assert await ala.get(co="resumeSession", idGracza="ala123", opis="*Bob") == "err.idInUse"
    assert "*Nobody" not in hub_of(client).by_nick and len(hub_of(client).players) == 2
    assert await ala.get(co="resumeSession", idGracza="ala123", opis="*ala") == ""
    browser = Zagram(client, "ala123", "*Ala")  # numbers its commands from 1 again
    browser.say(0, "from the browser")
    reply = await browser.poll()
    assert reply.status == "ok" and reply.processed == 1
    assert [text for _, _, text in chat_texts(reply.lines(0))][-1] == "from the browser"
