"""Tables across members, on a real Redis and PostgreSQL, read as MultiPoints reads replies
(tests/web/zagram.py): a player of one member watches, chats at and leaves a game of another member,
and plays a tournament game set up through the other member, each line once and in order; a member
that stops takes its people away from the other member's tables."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from redis.asyncio import Redis

from server.config import Settings
from server.hub.limits import CHAT_LINES_PER_MINUTE
from server.hub.model import PLAYER_ACTIONS
from server.hub.stream import CONFIRM_WAIT
from server.web.common import HUB_KEY, MEMBERSHIP_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, ala_and_cyd, guest, two_members, until
from tests.web.zagram import Zagram


async def at_table(
    player: Zagram, uid: int, found: Callable[[list[str]], bool], seconds: float = WITHIN
) -> list[str]:
    """Polls until the lines of table `uid` had since the call satisfy `found`; returns them."""
    lines: list[str] = []
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        reply = await player.poll(b=True)
        lines += reply.sections.get(uid, [])
        if found(lines):
            return lines
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick} got only {lines} at {uid}"
        await asyncio.sleep(0.05)


async def set_up(client: TestClient, first: str, second: str, organiser: str = "cup-bot") -> int:
    """An organiser's table (setUpTable) through `client`'s member, with a new key named `organiser`;
    its number."""
    key = await client.app[STORE_KEY].tournaments.add_key(organiser, "Cup", False)
    query = {"co": "setUpTable", "key": key, "gameType": "0808stanF0.60.5", "sayHiTimes": "30.30"}
    query |= {"tourn": "Cup", "tRound": "1", "pl1": first, "pl2": second}
    answer = await (await client.get("/a.kropki", params=query)).text()
    assert answer.startswith("ok."), answer
    return int(answer[3:])


def colours(state: list[str], uid: int, first: Zagram, second: Zagram) -> tuple[Zagram, Zagram]:
    """The two players as (blue, red), as table `uid`'s `d` line in `state` says."""
    blue_nick = next(line for line in state if line.startswith(f"d{uid}.")).rsplit(".", 2)[1]
    return (first, second) if blue_nick == first.nick else (second, first)


async def invited_table(inviter: Zagram, invitee: Zagram, game_type: str = "0808stanF0.0.0") -> int:
    """The invitee accepts the inviter's invitation, once it has reached them (from another member it
    comes over Redis, which a loaded host may deliver after the inviter's reply): the new table's
    number."""
    inviter.send("v", 0, f"s.{invitee.nick}.{game_type}")
    await inviter.poll(b=True)
    await until(invitee, lambda lines: any(line.startswith(f"vg{inviter.nick}.") for line in lines))
    invitee.send("v", 0, "a")
    return next(table for table in (await invitee.poll(b=True)).sections if table)


def has(text: str) -> Callable[[list[str]], bool]:
    return lambda lines: any(text in line for line in lines)


async def test_a_player_of_one_member_watches_chats_at_and_leaves_a_game_of_the_other(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    dan = await guest(b, "danDan44", "*Dan")
    eve = await guest(b, "eveEve55", "*Eve")
    uid = await invited_table(dan, eve)
    blue, red = colours(await at_table(dan, uid, has("pr")), uid, dan, eve)
    blue.send("s", uid, "aa")  # a move before the watcher comes
    await at_table(blue, uid, has("aa"))
    await until(ala, lambda lines: f"ga{uid}" in lines)

    ala.send("b", uid)
    state = await at_table(ala, uid, lambda lines: any(line.startswith("pr") for line in lines))
    people = next(line for line in state if line.startswith("pr"))[2:].split(".")
    assert {"*Dan", "*Eve", "*Ala"} <= set(people)
    assert any("aa" in line for line in state)  # the move made before, in the whole state
    await at_table(dan, uid, has("pa*Ala"))  # the players see the watcher come

    red.send("s", uid, "hh")
    await red.poll(b=True)
    seen = await at_table(ala, uid, has("hh"))
    ala.say(uid, "nice move")
    seen += await at_table(ala, uid, has("nice move"))  # the watcher sees its own line
    assert any(line.endswith(".*Ala.1.nice move") for line in await at_table(dan, uid, has("nice move")))
    assert sum("hh" in line for line in seen) == 1  # every line once

    ala.send("s", uid, "bb")  # not Ala's game: the owner refuses, and Ala is told
    told = await at_table(ala, uid, lambda lines: any("..e." in line for line in lines))
    assert not any(line.endswith(".bb") for line in told)
    await at_table(dan, uid, lambda lines: True)

    # a flood: past the limit (one line said already this minute) refused on Ala's own member
    allowed = CHAT_LINES_PER_MINUTE - 1
    received: list[dict[str, Any]] = []  # what member b is sent (a spy around the real method)
    peers = b.app[HUB_KEY].peers
    take = peers.take
    peers.take = lambda member, message: (received.append(message), take(member, message))  # type: ignore[method-assign]
    for n in range(allowed + 10):
        ala.say(uid, f"flood {n}")
    lines = await at_table(ala, uid, lambda lines: sum(".flood " in line for line in lines) >= allowed)
    assert sum("chat lines" in line for line in lines) == 10  # told why, once for each refused line
    heard = await at_table(dan, uid, lambda lines: sum(".flood " in line for line in lines) >= allowed)
    await asyncio.sleep(0.3)
    heard += (await dan.poll(b=True)).sections.get(uid, [])
    assert sum(".flood " in line for line in heard) == allowed
    assert sum("flood " in str(message.get("do")) for message in received) == allowed  # no more sent

    ala.send("q", uid)
    reply = await ala.poll(b=True)
    assert uid not in reply.sections
    await at_table(dan, uid, has("pd*Ala"))


async def processed_by_the_poll_that_carried_it(player: Zagram, number: int) -> None:
    """The poll carrying command `number` answers it processed; or, on a machine too loaded for the
    other member's `done` to come within CONFIRM_WAIT (seen once in make test, its four parts on two
    cores), it waited that long and a later poll answers it (carrying the command again, as clients do
    until k moves past it; the server takes it once)."""
    started = asyncio.get_running_loop().time()
    if (await player.poll(b=True)).processed == number:
        return
    assert asyncio.get_running_loop().time() - started >= CONFIRM_WAIT, "the poll did not wait for `done`"
    deadline = started + WITHIN
    while (await player.poll(b=True)).processed != number:
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick}'s command {number} not processed"
        await asyncio.sleep(0.1)


async def test_a_tournament_game_set_up_through_one_member_is_played_across_both(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await set_up(a, "*Cyd", "*Ala")

    # Ala, on the table's member, sits down at once; Cyd, on the other, as soon as it hears of it
    await at_table(ala, uid, has("pr"))
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))
    for player, where in [(cyd, "aa"), (ala, "hh"), (cyd, "ab"), (ala, "hg")]:
        number = player.send("s", uid, where)
        # the reply of the poll that carried it counts it processed, stored by the table's member (for
        # Cyd, member a: the poll waits CONFIRM_WAIT at most for its `done`, then k waits on), so the
        # client need not send it again
        await processed_by_the_poll_that_carried_it(player, number)
        other = ala if player is cyd else cyd
        await at_table(other, uid, has(where))
    # the old-style endpoint, through the other member
    assert await cyd.get(co="propose", idGracza=cyd.secret, table=str(uid), proposal="resign") == ""
    await until(ala, lambda lines: any(line.startswith(f"x{uid}.") and ".W+R." in line for line in lines))
    response = await a.get("/tournament/Cup")
    assert [(t["blue"], t["red"], t["result"]) for t in (await response.json())["tables"]] == [
        ("*Cyd", "*Ala", "W+R")
    ]

    await b.close()  # Cyd's member stops: Cyd leaves the table on member a
    await at_table(ala, uid, has("pd*Cyd"))


async def test_a_tournament_table_is_cancelled_through_its_own_member_only(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await set_up(a, "*Cyd", "*Ala")
    key = await a.app[STORE_KEY].tournaments.add_key("cancelling", "Cup", False)
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))

    async def cancel(member: TestClient) -> str:
        query = {"co": "cancelTable", "key": key, "table": str(uid)}
        return await (await member.get("/a.kropki", params=query)).text()

    assert await cancel(b) == "err.otherMember"  # b knows the table (Cyd sits at it) but does not run it
    assert await cancel(a) == "ok"
    told = ".Void.The organiser cancelled this game: it does not count."
    lines = await at_table(cyd, uid, lambda lines: has(told)(lines) and has(".Void.")(lines))
    assert any(line.startswith(f"x{uid}.") and ".Void." in line for line in lines)
    response = await b.get("/tournament/Cup")
    assert [t["state"] for t in (await response.json())["tables"]] == ["cancelled"]


async def test_a_game_across_members_goes_on_after_redis_restarts_empty(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await set_up(a, "*Cyd", "*Ala")
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))
    for player, where in [(cyd, "aa"), (ala, "hh"), (cyd, "ab")]:
        player.send("s", uid, where)
        await player.poll(b=True)
        await at_table(ala if player is cyd else cyd, uid, has(where))

    redis_server.stop()
    ala.send("s", uid, "hg")  # on the table's own member: played, but member b cannot hear it now
    await at_table(ala, uid, has("hg"))
    await asyncio.sleep(1.5)
    cyd.send("s", uid, "ac")  # member b cannot reach the table: Cyd is told, nothing is played
    await at_table(cyd, uid, has("cannot be reached"))

    redis_server.start()  # empty
    # the members resynchronise by themselves: Cyd gets the table's whole state, with Ala's move
    state = await at_table(cyd, uid, lambda lines: any(line.startswith("pr") for line in lines))
    # the moves' lines (`sa;R[ac]`): "ac" alone is in "reached", "back", ... of a server line there
    moves = [line for line in state if line.startswith("s")]
    assert any("[hg]" in line for line in moves) and not any("[ac]" in line for line in moves)
    cyd.send("s", uid, "ac")
    await cyd.poll(b=True)
    await at_table(ala, uid, has("ac"))


async def test_k_counts_an_action_at_another_members_table_processed_once_that_member_stored_it(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await set_up(a, "*Cyd", "*Ala")  # on member a; Cyd plays from member b
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))

    held: list[tuple[str, dict[str, Any]]] = []  # what member a is sent, held back (a spy, then let go)
    peers = a.app[HUB_KEY].peers
    take = peers.take
    peers.take = lambda member, message: (
        held.append((member, message)) if "do" in message else take(member, message)
    )  # type: ignore[method-assign]
    number = cyd.send("s", uid, "aa")
    for _ in range(2):  # member a has not stored it (has not even had it): k stays below it
        assert (await cyd.poll(b=True)).processed < number  # after waiting CONFIRM_WAIT for it
    assert held
    peers.take = take  # type: ignore[method-assign]
    for member, message in held:
        take(member, message)
    reply = await cyd.poll(b=True)
    deadline = asyncio.get_running_loop().time() + WITHIN
    while reply.processed < number:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
        reply = await cyd.poll(b=True)
    await at_table(ala, uid, has("aa"))


async def test_sitting_down_again_and_again_at_another_members_table_is_limited_and_keeps_nothing(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    held_to_limits = dataclasses.replace(postgres, unlimited=())  # the tests' address is exempt otherwise
    a, b = await two_members(aiohttp_client, held_to_limits, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    await guest(b, "danDan44", "*Dan")
    uid = await set_up(b, "*Dan", "*Eve")  # a table of member b, Dan sitting at it
    await until(ala, lambda lines: f"ga{uid}" in lines)

    received: list[dict[str, Any]] = []  # what member b is sent (a spy around the real method)
    peers = b.app[HUB_KEY].peers
    take = peers.take
    peers.take = lambda member, message: (received.append(message), take(member, message))  # type: ignore[method-assign]
    tries = 40  # each time the table's whole state would be sent; a poll carries 50 commands at most
    told = []
    for _ in range(tries // 20):
        for _ in range(20):
            ala.send("b", uid)
            ala.send("q", uid)
        told += (await ala.poll(b=True)).sections.get(0, [])
    assert any("game actions a second" in line for line in told)
    await asyncio.sleep(0.5)
    assert sum("enter" in message for message in received) <= PLAYER_ACTIONS[1] + 5 < tries

    # a member asking to seat someone whose nick is already at the table is refused, and nothing is kept
    visitors = b.app[HUB_KEY].visitors
    kept = dict(visitors.by_key)
    person = {"nick": "*Dan", "lang": "en", "guest": True, "moderator": False, "seat": "x", "record": None}
    visitors.enter("kropki-a", uid, person)
    assert visitors.by_key == kept


async def test_a_team_table_is_played_across_members_and_a_visitor_who_leaves_is_out_of_the_game(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """docs/teams.md, docs/cluster.md: team one *Ala and *Cyd, team two *Bob and *Dan; *Cyd and *Dan are
    on member b, the table on member a."""
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    bob = await guest(a, "bobBob22", "*Bob")
    dan = await guest(b, "danDan44", "*Dan")
    await until(ala, lambda lines: "pa*Dan" in lines)
    key = await a.app[STORE_KEY].tournaments.add_key("pairs-bot", None, False)
    query = {"co": "setUpTable", "key": key, "gameType": "0808stanF0.0.0", "sayHiTimes": "0.0.0.0"}
    query |= {"pl1": "*Ala", "pl2": "*Bob", "pl3": "*Cyd", "pl4": "*Dan"}
    answer = await (await a.get("/a.kropki", params=query)).text()
    assert answer.startswith("ok."), answer
    uid = int(answer[3:])

    for player in (cyd, dan):  # they sit down by themselves: the `d` line names every player
        state = await at_table(player, uid, lambda lines: any(line.startswith("pr") for line in lines))
        assert f"d{uid}.0808s0..s.F.n.....*Ala,*Cyd.*Bob,*Dan" in state
    moves = [(ala, "aa"), (bob, "hh"), (cyd, "ab"), (dan, "hg"), (ala, "ac"), (bob, "hf"), (cyd, "ad")]
    for player, where in moves:
        player.send("s", uid, where)
        await player.poll(b=True)
        await at_table(dan if player is not dan else ala, uid, has(where))

    dan.send("q", uid)  # *Dan, on move, leaves for good through his member: *Bob plays for team two
    await dan.poll(b=True)
    lines = await at_table(ala, uid, has("left4.*Dan left the game."))
    assert any(line.startswith(f"x{uid}.2.") for line in lines)
    dan.send("b", uid)  # back to watch: not to play
    await at_table(dan, uid, lambda lines: any(line.startswith("pr") for line in lines))
    dan.send("s", uid, "hd")
    told = await at_table(dan, uid, has("..e."))
    assert not any(line.endswith("[hd]") for line in told)

    cyd.send("v", 0, "s.*Ala,*Dan,*Bob.0808stanF0.0.0")  # a team invitation naming players of member a
    refusal = (await cyd.poll(b=True)).sections[0]
    assert any("..e.*Ala is on another member of the cluster" in line for line in refusal), refusal
    assert not a.app[HUB_KEY].invitations and not b.app[HUB_KEY].invitations


async def test_a_move_and_its_confirmation_wait_for_a_member_subscribing_again(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """issue 44: after Redis came back, a member that had not subscribed again yet heard nothing: a move
    sent to it was refused ("cannot be reached") and a confirmation sent to it lost, which held its
    player's k 30 s. Now both are sent again until it listens."""
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await set_up(a, "*Cyd", "*Ala")  # on member a; Cyd plays from member b
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))
    async with Redis.from_url(redis_server.url) as redis:
        await redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # both members listen again soon
    number = cyd.send("s", uid, "aa")
    reply = await cyd.poll(b=True)
    deadline = asyncio.get_running_loop().time() + WITHIN
    lines = reply.sections.get(uid, []) + reply.sections.get(0, [])
    while reply.processed < number:
        assert asyncio.get_running_loop().time() < deadline, lines
        await asyncio.sleep(0.05)
        reply = await cyd.poll(b=True)
        lines += reply.sections.get(uid, []) + reply.sections.get(0, [])
    assert not any("cannot be reached" in line for line in lines)
    await at_table(ala, uid, has("aa"))


async def test_a_member_not_announced_again_yet_after_redis_returns_keeps_its_people_at_the_tables(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """issue 44: Redis restarted empty; member a announced itself again first and, seeing member b
    missing, took b's people away from its tables (and dropped what it sent b meanwhile), although b
    was only not announced yet. For a lifetime after Redis returns, nobody is taken for gone."""
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await set_up(a, "*Cyd", "*Ala")  # on member a; Cyd plays from member b
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))
    membership = a.app[MEMBERSHIP_KEY]
    redis_server.restart()
    deadline = asyncio.get_running_loop().time() + WITHIN
    while not (membership.connected and membership.judged_members is None):  # back, not judging yet
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)
    assert membership.on_members is not None
    membership.on_members(("kropki-a",))  # what a's heartbeat says while b has not announced itself yet
    assert "*Cyd" in a.app[HUB_KEY].tables[uid].people
