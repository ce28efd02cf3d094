"""The tournament director's choices one at a time: who a guest is, what a flood of requests costs, the
swiss round's pause, and what each result counts as for the pairing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.arenawave import ARENA_REST
from server.director.director import ARENA_WAVE, RETRY, Director
from server.director.history import Board, no_shows, swiss_round
from server.engine import swiss
from server.hub.games import EMPTY_TABLE_KEPT
from server.hub.limits import Caps
from server.store.hosted import PairedRound
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.conversation import poll
from tests.clients.multipoints import MultiPoints
from tests.director.bots import (
    GAME_TYPE,
    Bot,
    Time,
    director_of,
    everyone_turns,
    guests,
    organiser_asks,
    organiser_creates,
    restarted_on,
    served_on,
    tick,
)
from tests.web.test_auth import register, registered_id
from tests.web.zagram import Zagram

Served = tuple[Time, TestClient, str]  # the clocks, the client, an organiser's key


@pytest.fixture
async def cup(aiohttp_client: AiohttpClient, settings: Settings) -> Served:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    return clock, client, await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)


async def joined(client: TestClient, count: int) -> list[Bot]:
    """Guests logged in and registered for the tournament "Cup"."""
    bots = guests(client, count)
    for bot in bots:
        await bot.log_in()
        assert await bot.ask("joinTournament", tourn="Cup") == "ok"
    return bots


async def create(client: TestClient, key: str, clock: Time, name: str = "Cup", **params: str) -> None:
    query = {"tourn": name, "kind": "swiss", "rounds": "3", "start": str(int(clock.clock()) + 10), **params}
    assert await organiser_creates(client, key, **query) == "ok"


async def test_a_guest_whose_session_ended_is_withdrawn_and_the_nick_is_not_a_strangers_entry(
    cup: Served,
) -> None:
    clock, client, key = cup
    await create(client, key, clock)
    bots = await joined(client, 3)
    gone = bots[0]
    assert await gone.ask("usunGracza") == ""
    stranger = Bot(client, MultiPoints(gone.nick, "strange1"))
    await stranger.log_in()
    assert await stranger.ask("joinTournament", tourn="Cup") == "err.nickUsed"

    await tick(client, clock.timers, 11)  # the start: round 1 is paired
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None and hosted.round == 1
    (paired,) = await director.hosted.rounds(hosted.id)
    assert paired.boards == ((bots[1].nick, bots[2].nick),) and paired.bye is None
    entries = {entry.nick: entry for entry in await director.hosted.entries(hosted.id)}
    assert entries[gone.nick].withdrawn and not entries[bots[1].nick].withdrawn
    await everyone_turns([stranger, *bots[1:]])
    assert not stranger.mp.tabs, "the stranger is seated at no tournament table"


async def test_a_stranger_under_a_guests_nick_cannot_withdraw_the_guests_entry(cup: Served) -> None:
    """The entry is the session's that made it: a guest who took the nick once that session left (or the
    same person with a new id, as MultiPoints draws one at every start) cannot withdraw it; it is
    withdrawn at the next look, as its guest is gone."""
    clock, client, key = cup
    await create(client, key, clock)
    gone, _ = await joined(client, 2)
    assert await gone.ask("usunGracza") == ""
    stranger = Bot(client, MultiPoints(gone.nick, "strange1"))
    await stranger.log_in()
    assert await stranger.ask("leaveTournament", tourn="Cup") == "err.notRegistered"
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    entries = {entry.nick: entry for entry in await director.hosted.entries(hosted.id)}
    assert not entries[gone.nick].withdrawn, "withdrawn by the stranger"

    await tick(client, clock.timers, 11)  # the start: its guest gone, the entry is withdrawn
    entries = {entry.nick: entry for entry in await director.hosted.entries(hosted.id)}
    assert entries[gone.nick].withdrawn


async def test_an_organisers_key_cannot_cancel_a_game_the_server_paired(cup: Served) -> None:
    """A key cancels what it could have set up (docs/tournaments.md, "Cancelling a table"), and no key
    sets up the tables of a tournament the server runs: calling it all off is cancelTournament's."""
    clock, client, key = cup
    await create(client, key, clock)
    await joined(client, 2)
    await tick(client, clock.timers, 11)  # the start: round 1 is paired
    hub = client.app[HUB_KEY]
    (uid,) = [uid for uid, table in hub.tables.items() if table.room is not None and table.room.auto]
    other = await client.app[STORE_KEY].tournaments.add_key("another organiser", None, False)

    for asking in (key, other):
        answer = await organiser_asks(client, asking, co="cancelTable", table=str(uid))
        assert answer == "err.hostedTournament"
    room = hub.tables[uid].room
    assert room is not None and room.game.result is None  # the game goes on


async def test_a_registered_player_joins_again_after_withdrawing(cup: Served) -> None:
    clock, client, key = cup
    await create(client, key, clock, registeredOnly="1")
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    await alice.poll()

    async def ask(co: str) -> str:
        return await alice.get(co=co, idGracza=alice.secret, tourn="Cup")

    assert [await ask("joinTournament"), await ask("leaveTournament"), await ask("joinTournament")] == [
        "ok"
    ] * 3
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    (entry,) = await director.hosted.entries(hosted.id)
    assert entry.nick == "Alice" and entry.seat == "@alice#1" and not entry.withdrawn  # her account's number


async def test_whoever_registers_a_deleted_accounts_nick_joins_as_a_newcomer(cup: Served) -> None:
    """`kropki-server user delete` changes the database the running director reads back at each look:
    the deleted account's entry is withdrawn and renamed, not the entry of the nick's next owner."""
    clock, client, key = cup
    await create(client, key, clock, registeredOnly="1")
    players = []
    for nick in ("Alice", "Bob"):
        assert await register(client, nick) == "ok.zarejestrowalem."
        players.append(Zagram(client, registered_id(nick, "pw"), nick))
        await players[-1].poll()
        assert await players[-1].get(co="joinTournament", idGracza=players[-1].secret, tourn="Cup") == "ok"
    await players[0].get(co="usunGracza", playerId=players[0].secret)
    await client.app[HUB_KEY].persistence.flush()  # her session's end stored: she is not online
    await client.app[STORE_KEY].accounts.delete("Alice")
    assert await register(client, "Alice", password="mallory") == "ok.zarejestrowalem."
    stranger = Zagram(client, registered_id("Alice", "mallory"), "Alice")
    await stranger.poll()

    assert await stranger.get(co="joinTournament", idGracza=stranger.secret, tourn="Cup") == "ok"
    await tick(client, clock.timers, 11)  # the start: round 1 is paired
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None and hosted.round == 1
    entries = await director.hosted.entries(hosted.id)
    assert [(e.nick, e.seat, e.withdrawn) for e in entries] == [
        ("deleted1", "", True),
        ("Bob", "@bob#2", False),
        ("Alice", "@alice#3", False),  # the stranger's account, not the deleted one
    ]
    (paired,) = await director.hosted.rounds(hosted.id)
    assert sorted(paired.boards[0]) == ["Alice", "Bob"] and paired.bye is None
    assert await register(client, "deleted1") == "ok.tenOpisJestJuzZajety"  # nobody's to register


async def test_a_flood_of_joins_and_withdrawals_makes_few_looks(
    cup: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock, client, key = cup
    await create(client, key, clock, kind="arena", minutes="10", rounds="")
    looks = []
    director = director_of(client)
    advance = Director._advance

    async def counted(self: Director, name: str) -> None:
        looks.append(name)
        await advance(self, name)

    bots = guests(client, 20)
    for bot in bots:
        await bot.log_in()
    await tick(client, clock.timers, 11)  # the arena runs: a newcomer is paired at once
    monkeypatch.setattr(Director, "_advance", counted)
    for _ in range(5):
        answers = await asyncio.gather(*(bot.ask("joinTournament", tourn="Cup") for bot in bots))
        answers += await asyncio.gather(*(bot.ask("leaveTournament", tourn="Cup") for bot in bots))
        assert set(answers) == {"ok"}
    await director.settled()
    assert 1 <= len(looks) <= 50, f"{len(looks)} looks for 100 joins"  # one each without coalescing


async def test_the_pause_after_a_round_is_not_cut_short_by_a_newcomer(cup: Served) -> None:
    clock, client, key = cup
    await create(client, key, clock)
    bots = await joined(client, 4)
    await tick(client, clock.timers, 11)
    director = director_of(client)
    for _ in range(30):  # round 1 is played to its end
        await everyone_turns(bots)
        hosted = await director.hosted.get("Cup")
        assert hosted is not None
        if all(b.result for b in await director.boards(hosted)):
            break
    await tick(client, clock.timers, 0)
    late = guests(client, 5)[-1]
    await late.log_in()
    assert await late.ask("joinTournament", tourn="Cup") == "ok"
    await director.settled()
    assert (await director.hosted.get("Cup")).round == 1, "paired during the pause"
    await tick(client, clock.timers, director.round_pause)
    hosted = await director.hosted.get("Cup")
    assert hosted.round == 2
    (*_, second) = await director.hosted.rounds(hosted.id)
    assert len(second.boards) == 2 and second.bye is not None, "the newcomer is paired from round 2"


@pytest.mark.parametrize("restart", [False, True])
async def test_a_no_show_who_joined_again_is_paired_next_round(
    aiohttp_client: AiohttpClient, settings: Settings, restart: bool
) -> None:
    """Withdrawn for a forfeit, back during the pause: a restart before the next pairing does not
    withdraw them again (the director's mark of the round's no-shows was only in memory)."""
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    await create(client, key, clock, sayHi="0")
    bots = await joined(client, 3)
    await tick(client, clock.timers, 11)
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    ((blue, _),) = (await director.hosted.rounds(hosted.id))[0].boards
    no_show = next(bot for bot in bots if bot.nick == blue)
    for _ in range(13):  # blue never moves: their clock runs out, W+F
        for bot in bots:
            await poll(client, bot.mp)
        await tick(client, clock.timers, 10)
    await client.app[HUB_KEY].persistence.flush()
    await tick(client, clock.timers, 0)
    entries = {entry.nick: entry for entry in await director.hosted.entries(hosted.id)}
    assert entries[blue].withdrawn, "withdrawn as a no-show"
    assert await no_show.ask("joinTournament", tourn="Cup") == "ok"
    if restart:
        client = await restarted_on(aiohttp_client, settings, clock, 2, bots, client)
        director = director_of(client)
        for bot in bots:
            await poll(client, bot.mp)
        await tick(client, clock.timers, 0)

    await tick(client, clock.timers, director.round_pause + 1)
    entries = {entry.nick: entry for entry in await director.hosted.entries(hosted.id)}
    assert not entries[blue].withdrawn
    second = (await director.hosted.rounds(hosted.id))[-1]
    assert second.round == 2 and blue in {nick for board in second.boards for nick in board} | {second.bye}


async def test_an_arena_no_show_whose_game_ended_just_before_a_restart_is_withdrawn(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process stopped after a no-show's game ended but before the director looked at it: the first
    look after the restart took that game over as seen, so the no-show stayed in and was paired again."""
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    await create(client, key, clock, kind="arena", minutes="30", rounds="", sayHi="0")
    bots = await joined(client, 2)
    await tick(client, clock.timers, 11)
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    ((blue, _),) = [(b.blue, b.red) for b in await director.boards(hosted)]

    async def stopped(_director: Director, _name: str) -> None:
        """The director of a process about to be killed: it never gets to look again."""

    with monkeypatch.context() as dying:
        dying.setattr(Director, "_advance", stopped)
        for _ in range(13):  # blue never moves: their clock runs out, W+F
            for bot in bots:
                await poll(client, bot.mp)
            await tick(client, clock.timers, 10)
        await client.app[HUB_KEY].persistence.flush()
        assert [b.result for b in await director.boards(hosted)] == ["W+F"]
        await client.close()  # before its director looked
    client = await restarted_on(aiohttp_client, settings, clock, 2, bots, client)
    for bot in bots:
        await poll(client, bot.mp)
    await tick(client, clock.timers, ARENA_WAVE + ARENA_REST)

    director = director_of(client)
    entries = {entry.nick: entry for entry in await director.hosted.entries(hosted.id)}
    assert entries[blue].withdrawn, "withdrawn as a no-show"
    assert len(await director.boards(hosted)) == 1, "and not paired again"


@pytest.mark.parametrize(
    ("result", "blue", "red"),
    [
        ("B+R", swiss.Round("*R", "white", 1.0, True), swiss.Round("*B", "black", 0.0, True)),
        ("W+12", swiss.Round("*R", "white", 0.0, True), swiss.Round("*B", "black", 1.0, True)),
        ("0", swiss.Round("*R", "white", 0.5, True), swiss.Round("*B", "black", 0.5, True)),
        # FIDE C.04.1: a forfeit scores but is no game: no colour, and the two may meet again
        ("B+F", swiss.Round("*R", None, 1.0, False), swiss.Round("*B", None, 0.0, False)),
        ("Void", swiss.Round(None, None, 0.0, False), swiss.Round(None, None, 0.0, False)),
    ],
)
def test_what_a_result_counts_as_for_the_swiss_pairing(
    result: str, blue: swiss.Round, red: swiss.Round
) -> None:
    board = Board(1, 1, "*B", "*R", result)
    assert (swiss_round("*B", board, False), swiss_round("*R", board, False)) == (blue, red)


def test_a_cancelled_game_is_no_game_and_nobody_is_a_no_show() -> None:
    cancelled = Board(1, 1, "*B", "*R", "Void", cancelled=True)
    assert swiss_round("*B", cancelled, False) == swiss.Round(None, None, 0.0, False)
    assert no_shows([cancelled]) == set()
    assert no_shows([Board(2, 1, "*B", "*R", "Void"), Board(3, 1, "*C", "*D", "W+F")]) == {"*B", "*R", "*C"}


async def test_a_pairing_stored_before_a_crash_gets_its_tables_and_is_not_made_again(cup: Served) -> None:
    """The worst moment: the round's pairing is written, then the process dies before its tables are.
    After the restart the stored pairing is set up as it is, not paired afresh."""
    clock, client, key = cup
    await create(client, key, clock)
    bots = await joined(client, 4)
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    a, b, c, d = (bot.nick for bot in bots)
    stored = PairedRound(1, ((d, a), (b, c)), None)  # not what the engine pairs (1-3, 4-2): proof of reuse
    await director.hosted.save_round(hosted.id, stored, datetime.now(UTC))

    await tick(client, clock.timers, 11)
    boards = await director.boards(hosted)
    assert sorted((board.round, board.blue, board.red) for board in boards) == [(1, b, c), (1, d, a)]
    await tick(client, clock.timers, 1)
    assert len(await director.boards(hosted)) == 2, "no second table for a board"


async def test_a_round_waits_for_room_for_its_tables_and_gets_them_once_there_is_some(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """No more game tables: the round is paired and its tables open when there is room (RETRY), as
    docs/operations.md says, and no board gets two tables."""
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1, Caps(tables=1, registered_share=0))
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    hub = client.app[HUB_KEY]
    for secret, nick in (("xena123", "*Xena"), ("yuri123", "*Yuri")):  # the one table the server takes
        hub.guest_login(secret, nick, "en")
    hub.invite("xena123", "*Yuri", "0808stanF0.0.0")
    hub.answer_invitation("yuri123", "a")
    (blocking,) = [uid for uid in hub.tables if uid]
    await create(client, key, clock)
    bots = await joined(client, 2)
    director = director_of(client)

    await tick(client, clock.timers, 11)  # the start: round 1 is paired, but there is no room
    hosted = await director.hosted.get("Cup")
    assert hosted is not None and hosted.round == 1
    assert await director.boards(hosted) == [] and list(hub.tables) == [0, blocking]
    for secret in ("xena123", "yuri123"):
        hub.change_table(secret, 0)
    await tick(client, clock.timers, EMPTY_TABLE_KEPT + 1)
    hub.sweep()  # the table its players left closes
    assert list(hub.tables) == [0]
    await tick(client, clock.timers, RETRY)
    (board,) = await director.boards(hosted)
    assert (board.round, {board.blue, board.red}) == (1, {bot.nick for bot in bots})
    await tick(client, clock.timers, RETRY)
    assert len(await director.boards(hosted)) == 1


async def test_the_organiser_calls_a_running_swiss_off_and_its_games_end_void(cup: Served) -> None:
    clock, client, key = cup
    await create(client, key, clock)
    bots = await joined(client, 4)
    await tick(client, clock.timers, 11)
    await everyone_turns(bots)
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None and hosted.round == 1

    other = await client.app[STORE_KEY].tournaments.add_key("other-bot", "Other Cup", False)
    assert (
        await organiser_asks(client, other, co="cancelTournament", tourn="Cup") == "err.keyNotForTournament"
    )
    assert await organiser_asks(client, key, co="cancelTournament", tourn="Cup") == "ok"
    assert await organiser_asks(client, key, co="cancelTournament", tourn="Cup") == "err.tournamentOver"
    hosted = await director.hosted.get("Cup")
    assert hosted is not None and hosted.state == "cancelled"
    assert {board.result for board in await director.boards(hosted)} == {"Void"}
    assert all(board.cancelled for board in await director.boards(hosted))
    await tick(client, clock.timers, 60)
    assert len(await director.hosted.rounds(hosted.id)) == 1, "no round after the cancel"
    assert await bots[0].ask("joinTournament", tourn="Cup") == "err.tournamentOver"


async def test_an_arena_leaves_players_at_another_game_until_it_is_over(cup: Served) -> None:
    clock, client, key = cup
    await create(client, key, clock, kind="arena", minutes="10", rounds="")
    ala, bob, cid, dan = await joined(client, 4)
    ala.mp.invite(bob.nick, GAME_TYPE)  # a game of their own, outside the arena
    await everyone_turns([ala, bob])
    bob.mp.accept_invite()
    await everyone_turns([ala, bob])
    await tick(client, clock.timers, 11)  # the arena starts
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    assert [(b.blue, b.red) for b in await director.boards(hosted)] in (
        [(cid.nick, dan.nick)],
        [(dan.nick, cid.nick)],
    )
    await everyone_turns([ala, bob])
    (casual,) = ala.mp.tabs  # their own game's table
    ala.mp.propose(casual, "resign")
    await everyone_turns([ala, bob])
    await tick(client, clock.timers, ARENA_REST + ARENA_WAVE)
    paired = {frozenset((b.blue, b.red)) for b in await director.boards(hosted)}
    assert frozenset((ala.nick, bob.nick)) in paired, "paired once their own game is over"


async def test_stopping_ends_its_looks_and_not_only_cancels_them(cup: Served) -> None:
    """The app's end stops the director before it closes the store. Before, its looks were only
    cancelled: one cut off in a query closed its connection after the store had closed, and the event
    loop's end waited on that for ever (tests/web/test_hosted.py, 1 run in 5)."""
    clock, client, key = cup
    await create(client, key, clock)
    await joined(client, 4)
    clock.timers.advance(11)  # the start: a look at the tournament begins, not awaited here
    looking = [task for task in asyncio.all_tasks() if task.get_coro().__qualname__.startswith("Director.")]
    assert looking and not any(task.done() for task in looking)

    await director_of(client).stop()
    assert all(task.done() for task in looking)
