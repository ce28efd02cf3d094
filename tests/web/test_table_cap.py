"""No more game tables (docs/operations.md, "Abuse limits"): every way to open a table is refused the same
way past the cap, `err.tooManyTables` (or the stream's line saying so in the player's language), and
nothing it would have made is kept, except the invitation being accepted."""

from __future__ import annotations

import random

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY, create_app
from server.config import Settings
from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.model import COMPUTER_NICKS
from tests.hub.test_computer import IdlePool
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram

GAME = "0808stanF0.0.0"
NO_ROOM = "err.tooManyTables"


async def full(aiohttp_client: AiohttpClient, settings: Settings, caps: Caps) -> tuple[TestClient, Hub]:
    """A server whose game tables are all taken, but for what `caps` keeps for registered players: one
    table between two guests who are not online."""
    hub = Hub(caps=caps, timers=ManualTimers(), rng=random.Random(1))
    hub.enable_computer(IdlePool(), 1)
    client = await aiohttp_client(create_app(settings, hub))
    hub.open_table(parse_game_type(GAME), "*Xena", "*Yuri")
    return client, hub


async def online(client: TestClient, *nicks: str, lang: str = "en") -> list[Zagram]:
    players = [Zagram(client, f"{nick.strip('*').lower()}123", nick) for nick in nicks]
    for player in players:
        assert await player.login(lang) == ""
    return players


def game_tables(hub: Hub) -> int:
    return sum(1 for table in hub.tables.values() if table.room is not None)


async def test_accepting_an_invitation_is_refused_and_the_invitation_stays(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, hub = await full(aiohttp_client, settings, Caps(tables=1, registered_share=0))
    ala, bob = await online(client, "*Ala", "*Bob")
    assert await ala.get(co="zapraszam", idGracza=ala.secret, whom="*Bob", gameType=GAME) == ""

    assert await bob.get(co="zaproszenieTak", idGracza=bob.secret) == NO_ROOM
    (cid,) = await online(client, "*Cid", lang="pl")
    assert await cid.get(co="zapraszam", idGracza=cid.secret, whom="*Ala", gameType=GAME) == ""
    ala.send("v", 0, "a")  # in the stream: a line, in the player's language
    said = [text for _, kind, text in chat_texts((await ala.poll()).lines(0)) if kind == "e"]
    assert said == ["No more game tables can be opened now; please try later."]

    assert game_tables(hub) == 1
    assert hub.incoming[hub.by_nick["*bob"]].inviter.nick == "*Ala"  # to accept once there is room
    assert hub.incoming[hub.by_nick["*ala"]].inviter.nick == "*Cid"


async def test_a_refusal_in_the_stream_is_in_the_players_language(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, _ = await full(aiohttp_client, settings, Caps(tables=1, registered_share=0))
    ala, bob = await online(client, "*Ala", "*Bob", lang="ru")
    ala.send("v", 0, f"s.*Bob.{GAME}")
    await ala.poll()
    bob.send("v", 0, "a")
    said = [text for _, kind, text in chat_texts((await bob.poll()).lines(0)) if kind == "e"]
    assert said == ["Сейчас нельзя открыть больше столов; попробуйте позже."]


async def test_the_last_acceptance_of_a_team_game_is_refused_and_the_others_stay(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, hub = await full(aiohttp_client, settings, Caps(tables=1, registered_share=0))
    ala, bob, cid, dan = await online(client, "*Ala", "*Bob", "*Cid", "*Dan")
    assert await ala.get(co="zapraszam", idGracza=ala.secret, whom="*Bob,*Cid,*Dan", gameType=GAME) == ""

    assert [await p.get(co="zaproszenieTak", idGracza=p.secret) for p in (bob, cid, dan)] == ["", "", NO_ROOM]
    invitation = hub.invitations[hub.by_nick["*ala"]]
    assert {player.nick for player in invitation.accepted} == {"*Bob", "*Cid"}
    assert game_tables(hub) == 1


async def test_an_analysis_is_refused_and_counts_for_nothing(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, hub = await full(aiohttp_client, settings, Caps(tables=1, registered_share=0))
    (ala,) = await online(client, "*Ala")
    analysis = "1010s0..a.a.n...c___SUsuen*Ala."
    assert await ala.get(co="zapraszam", idGracza=ala.secret, whom="*Ala", gameType=analysis) == NO_ROOM
    assert game_tables(hub) == 1
    assert not hub.players[ala.secret].invited  # not one of the invitations a minute


async def test_a_game_against_the_computer_is_refused_and_nothing_is_kept(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, hub = await full(aiohttp_client, settings, Caps(tables=1, registered_share=0))
    (ala,) = await online(client, "*Ala")
    computer = next(iter(COMPUTER_NICKS.values()))
    against_it = "0505s0..a.A.a.60.2.."
    assert await ala.get(co="zapraszam", idGracza=ala.secret, whom=computer, gameType=against_it) == NO_ROOM
    assert game_tables(hub) == 1 and not hub.invitations


async def test_an_organisers_table_with_a_guest_is_kept_out_of_the_registered_players_share(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A game with a guest in it, whoever opens it (docs/operations.md): an organiser's too."""
    client, hub = await full(aiohttp_client, settings, Caps(tables=2, registered_share=50))
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    (ala,) = await online(client, "*Ala")

    async def set_up(first: str, second: str) -> str:
        return await ala.get(co="setUpTable", key=key, gameType=GAME, pl1=first, pl2=second)

    assert [await set_up("*Ala", "*Bob"), await set_up("Ala", "*Bob")] == [NO_ROOM, NO_ROOM]
    assert game_tables(hub) == 1
    assert (await set_up("Ala", "Bob")).startswith("ok.")  # registered players: the table kept for them
    assert await set_up("Cid", "Dan") == NO_ROOM  # and then the server is full for everyone
    assert game_tables(hub) == 2
