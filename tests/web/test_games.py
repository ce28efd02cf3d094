"""Games over the wire: invitations, moves, enclosures, propositions, STOP, clocks, spectators."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from server.engine.moves import point_to_sgf
from server.engine.sgf import GameRecord, read_record
from server.engine.start import two_crosses
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.room import Room
from tests.web.test_stream import chat_texts
from tests.web.zagram import Reply, Zagram


class Players:
    """Two logged-in guests, a spectator, and the hub with a clock the test drives."""

    def __init__(self, client: TestClient, hub: Hub, timers: ManualTimers) -> None:
        self.client, self.hub, self.timers = client, hub, timers
        self.ala = Zagram(client, "ala123", "*Ala")
        self.bob = Zagram(client, "bob456", "*Bob")
        self.eve = Zagram(client, "eve789", "*Eve")

    async def start(self, game_type: str) -> tuple[int, Zagram, Zagram]:
        """Ala invites Bob with `game_type`, Bob accepts; returns (table, blue, red)."""
        self.ala.send("v", 0, f"s.*Bob.{game_type}")
        await self.ala.poll()
        self.bob.send("v", 0, "a")
        reply = await self.bob.poll()
        uid = max(reply.sections)
        await self.ala.poll()
        room = self.room(uid)
        blue, red = (self.ala, self.bob) if room.blue == "*Ala" else (self.bob, self.ala)
        return uid, blue, red

    def room(self, uid: int) -> Room:
        room = self.hub.tables[uid].room
        assert room is not None
        return room


async def archived(game: Players, number: int | None) -> GameRecord:
    """A finished game's record as anyone downloads it from the archive (once it is written)."""
    await game.hub.persistence.flush()
    response = await game.client.get(f"/sgf/{number}")
    assert response.status == 200
    assert response.content_type == "application/x-go-sgf"
    return read_record(await response.text())


async def play(uid: int, *moves: tuple[Zagram, str]) -> list[Reply]:
    replies = []
    for player, where in moves:
        player.send("s", uid, where)
        replies.append(await player.poll())
    return replies


def diamond(blue: Zagram, red: Zagram) -> list[tuple[Zagram, str]]:
    """Blue surrounds red's cc with cb, bc, dc, cd; red plays elsewhere."""
    return [(blue, "cb"), (red, "cc"), (blue, "bc"), (red, "hh"), (blue, "dc"), (red, "hg"), (blue, "cd")]


def errors(reply: Reply, uid: int) -> list[str]:
    return [text for nick, kind, text in chat_texts(reply.lines(uid) + reply.lines(0)) if kind == "e"]


async def test_invitation_lines_repeat_until_answered(game: Players) -> None:
    game.ala.send("v", 0, "s.*Bob.2020stanF0.0.0")
    assert (await game.ala.poll()).lines(0, "vs") == ["vs*Bob.2020s0..s.F.n...."]
    for _ in range(2):
        assert (await game.bob.poll()).lines(0, "vg") == ["vg*Ala.2020s0..s.F.n...."]
        assert (await game.ala.poll()).lines(0, "vs") == ["vs*Bob.2020s0..s.F.n...."]
    assert await game.bob.get(co="zaproszenieNie", idGracza="bob456") == ""
    assert (await game.bob.poll()).lines(0, "vg") == []
    assert (await game.ala.poll()).lines(0, "v") == ["vr*Bob"]
    assert (await game.ala.poll()).lines(0, "v") == ["vr*Bob"], "until acknowledged"
    assert await game.ala.get(co="zaproszenieOdrzuconeOk", idGracza="ala123") == ""
    assert (await game.ala.poll()).lines(0, "v") == []


async def test_blocking_cancelling_and_busy_invitees(game: Players) -> None:
    assert await game.ala.get(co="zapraszam", idGracza="ala123", whom="*Bob", gameType="2020stanF0.0.0") == ""
    assert await game.ala.get(co="zaproszenieAnuluj", idGracza="ala123") == ""
    assert (await game.bob.poll()).lines(0, "vg") == []
    await game.ala.get(co="zapraszam", idGracza="ala123", whom="*Bob", gameType="2020stanF0.0.0")
    assert await game.eve.get(co="zapraszam", idGracza="eve789", whom="*Bob", gameType="2020stanF0.0.0") == (
        "err.busy"
    )
    assert await game.bob.get(co="zaproszenieBlokuj", idGracza="bob456") == ""
    again = await game.ala.get(co="zapraszam", idGracza="ala123", whom="*Bob", gameType="2020stanF0.0.0")
    assert again == "err.blocked"
    await game.bob.poll(extra="i0nJb")
    assert await game.eve.get(co="zapraszam", idGracza="eve789", whom="*Bob", gameType="2020stanF0.0.0") == (
        "err.busy"
    )


@pytest.mark.parametrize(
    ("game_type", "first"),
    [("2020stanr0.0.0", "*Ala"), ("2020s0..a.F.n....", "*Ala"), ("2020s0..p.F.n....", "*Bob")],
)
async def test_who_is_blue_follows_the_game_type(game: Players, game_type: str, first: str) -> None:
    uid, _, _ = await game.start(game_type)
    assert game.room(uid).blue == first


async def test_a_capture_is_seen_identically_by_every_subscriber(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.0.0")
    game.eve.send("b", uid)
    await game.eve.poll()
    replies = await play(uid, *diamond(blue, red))
    assert not any(errors(reply, uid) for reply in replies)
    nodes = ["B[cb]", "W[cc]", "B[bc]", "W[hh]", "B[dc]", "W[hg]", "B[cd.cddccbbccd]"]
    assert (await game.eve.poll()).lines(uid, "sa") == [f"sa;{node}" for node in nodes]
    assert (await red.poll()).lines(uid, "sa") == ["sa;B[cd.cddccbbccd]"]
    assert replies[-1].lines(uid, "sa")[-1] == "sa;B[cd.cddccbbccd]", "the mover sees it in its own reply"
    assert game.room(uid).game.captured(1) == 1


async def test_a_spectator_joining_mid_game_gets_the_same_position(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.0.0")
    await play(uid, *diamond(blue, red))
    game.eve.send("b", uid)
    record = (await game.eve.poll()).lines(uid, "sr")
    assert record == ["sr(;B[cb];W[cc];B[bc];W[hh];B[dc];W[hg];B[cd.cddccbbccd])"]


async def test_refused_actions_are_answered_and_change_nothing(game: Players) -> None:
    uid, blue, red = await game.start("0808s0..s.F.n..._SRATP_sratp.")
    await play(uid, *diamond(blue, red))
    room = game.room(uid)
    before = (room.game.board.state(), len(room.game.moves), room.proposal)
    cases = [
        (blue, "s", "aa", "not your move"),
        (red, "s", "cb", "occupied"),  # red is on move after blue's capture
        (red, "s", "cc", "captured dot"),
        (red, "s", "zz", "outside"),
        (red, "s", "aa.aabbaa", "automatic"),
        (game.eve, "s", "aa", "Only the two players"),
        (red, "u", "undo", "not allowed"),
        (red, "u", "ok1score", "no score proposition"),
        (red, "u", "nonsense", "Unknown proposition"),
        (blue, "u", "score", "own move"),
        (red, "t", "p", "no clock"),
    ]
    for who, kind, text, reason in cases:
        who.send(kind, uid, text)
        said = errors(await who.poll(), uid)
        assert len(said) == 1 and reason.lower() in said[0].lower(), (text, said)
    assert (room.game.board.state(), len(room.game.moves), room.proposal) == before
    for query, answer in [
        (dict(co="graczStawiaKropke", idGracza="ala123", table=str(uid)), "err.missing.where"),
        (dict(co="graczStawiaKropke", idGracza="ala123", table="99", where="aa"), "err.noSuchTable"),
        (dict(co="propose", idGracza="ala123", table=str(uid), proposal="reject2undo"), "err.noProposal"),
        (dict(co="stopMove", idGracza="ala123", stol=str(uid)), "err.illegalMove"),
        (dict(co="dodajeCzas", idGracza="ala123", stol=str(uid), ile="5"), "err.noClock"),
        (dict(co="zaproszenieTak", idGracza="ala123"), "err.noInvitation"),
        (dict(co="zapraszam", idGracza="ala123", whom="*Bob", gameType="9999bad"), "err.badGameType"),
        (dict(co="zapraszam", idGracza="ala123", whom="*Nobody", gameType="2020stanF0.0.0"), "err.notOnline"),
    ]:
        assert await game.ala.get(**query) == answer
    assert (room.game.board.state(), len(room.game.moves), room.proposal) == before


async def test_undo_asked_accepted_and_rejected(game: Players) -> None:
    uid, blue, red = await game.start("0808s0..s.F.n..._SRAUP_sraup.")
    await play(uid, *diamond(blue, red))
    assert game.room(uid).game.captured(1) == 1
    blue.send("u", uid, "undo")
    asked = await blue.poll()
    assert "u1undo" in asked.lines(uid)
    assert ("", "u1undo") in [(nick, kind) for nick, kind, _ in chat_texts(asked.lines(uid))]
    red.send("u", uid, "reject1undo")
    assert "u" in (await red.poll()).lines(uid)
    assert game.room(uid).game.captured(1) == 1
    blue.send("u", uid, "undo")
    await blue.poll()
    red.send("u", uid, "accept1undo")  # MultiPoints' spelling of ok1undo
    taken = (await red.poll()).lines(uid)
    assert "sa;UB[cd]" in taken
    room = game.room(uid)
    assert room.game.captured(1) == 0 and len(room.game.moves) == 6 and room.game.to_move == 1
    assert "sa;UB[cd]" in (await game.ala.poll()).lines(uid) + (await game.bob.poll()).lines(uid)


async def test_a_stop_that_places_no_dots_clears_a_pending_proposition(game: Players) -> None:
    """A STOP is a move: before, one that placed no dots left blue's undo pending, and red's `ok1undo`
    was journalled and announced as agreed, then failed (err.internal) with nothing taken back."""
    uid, blue, red = await game.start("1010n0..s.F.n..._SRAUP_sraup.")
    await play(uid, (blue, "aa"), (red, "jj"), (blue, "ab"))
    blue.send("u", uid, "undo")
    assert "u1undo" in (await blue.poll()).lines(uid)
    assert await red.get(co="stopMove", idGracza=red.secret, stol=str(uid)) == ""  # nothing to ground
    room = game.room(uid)
    assert room.game.stopped == {2} and len(room.game.moves) == 3 and room.proposal is None
    assert "u" in (await blue.poll()).lines(uid)
    journalled = len(game.hub.tables[uid].journal)
    red.send("u", uid, "ok1undo")
    reply = await red.poll()
    assert [kind for _, kind, _ in chat_texts(reply.lines(uid)) if kind.startswith("ok")] == []
    assert errors(reply, uid) == ["There is no undo proposition to answer."]
    assert len(game.hub.tables[uid].journal) == journalled and len(room.game.moves) == 3


async def test_a_game_ended_by_stop_leaves_no_proposition_to_accept(game: Players) -> None:
    uid, blue, red = await game.start("1010n0..s.F.n....")
    await play(uid, (blue, "aa"), (red, "jj"), (blue, "ab"))
    assert await red.get(co="stopMove", idGracza=red.secret, stol=str(uid)) == ""
    blue.send("u", uid, "draw")
    await blue.poll()
    assert await blue.get(co="stopMove", idGracza=blue.secret, stol=str(uid)) == ""  # the game ends
    room = game.room(uid)
    assert room.game.result is not None and room.proposal is None
    assert room.proposal_line() in room.snapshot()
    red.send("u", uid, "ok1draw")
    assert errors(await red.poll(), uid) == ["There is no draw proposition to answer."]
    assert room.game.result.reason != "Draw"


async def test_resignation_ends_and_archives_the_game(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.0.0")
    await play(uid, (blue, "aa"), (red, "hh"))
    assert await blue.get(co="propose", idGracza=blue.secret, table=str(uid), proposal="resign") == ""
    lobby = (await game.eve.poll()).lines(0, "x")
    assert lobby[-1] == f"x{uid}.1.W+R.1"
    record = await archived(game, 1)
    assert record.result == "W+R" and [m.value for m in record.moves] == ["aa", "hh"]
    assert (record.black_name, record.white_name) == (blue.nick, red.nick)


async def test_an_invitation_with_two_crosses_plays_and_archives_them(game: Players) -> None:
    uid, blue, red = await game.start("2020n0.2.a.F.n....")
    assert game.room(uid).description().startswith(f"d{uid}.2020n0.2.a.F.n....")
    crosses = game.room(uid).game.setup
    assert crosses == two_crosses(20, 20)
    await play(uid, (blue, "aa"), (red, "tt"))
    assert await blue.get(co="propose", idGracza=blue.secret, table=str(uid), proposal="resign") == ""
    record = await archived(game, 1)
    assert (record.black_setup, record.white_setup) == (
        [point_to_sgf(p) for p in crosses.black],
        [point_to_sgf(p) for p in crosses.white],
    )
    assert [m.value for m in record.moves] == ["aa", "tt"] and record.result == "W+R"


async def test_territory_game_with_a_ring_a_quick_enclosure_and_agreed_territory(game: Players) -> None:
    uid, blue, red = await game.start("0808terrF0.0.0")
    await play(uid, (blue, "cb"), (red, "cc"), (blue, "bc"), (red, "ff"), (blue, "dc"), (red, "aa"))
    # red shows the enclosure being drawn, then blue closes a manual ring
    assert await blue.get(co="okrazam", idGracza=blue.secret, table=str(uid), where="cd.cb") == ""
    assert "o1.cd.cb" in (await red.poll()).lines(uid)
    game.eve.send("b", uid)
    assert "o1.cd.cb" in (await game.eve.poll()).lines(uid), "a spectator arriving now sees it too"
    before = game.room(uid).game.board.state()
    for bad, reason in [
        ("cd.cbdccdbc", "not closed"),
        ("cd.cbdcbccdcb", "not to a neighbour"),
        ("cd.ccddcc", "4 dots"),
    ]:
        blue.send("s", uid, bad)
        said = errors(await blue.poll(), uid)
        assert len(said) == 1 and reason in said[0], (bad, said)
    assert game.room(uid).game.board.state() == before and game.room(uid).game.to_move == 1
    blue.send("s", uid, "cd.cbdccdbccb")
    assert errors(await blue.poll(), uid) == []
    assert "sa;B[cd.cbdccdbccb]" in (await red.poll()).lines(uid)
    await play(
        uid, (red, "hh"), (blue, "fe"), (red, "ha"), (blue, "gf"), (red, "ah"), (blue, "fg"), (red, "hb")
    )
    blue.send("s", uid, "ef!ff")
    assert errors(await blue.poll(), uid) == []
    assert "sa;B[ef.effggffeef]" in (await red.poll()).lines(uid)
    room = game.room(uid)
    assert room.game.captured(1) == 2
    red.send("u", uid, "terr")
    await red.poll()
    blue.send("u", uid, "ok2terr")
    await blue.poll()
    assert str(room.game.result) == "B+2" and room.game.final_rings == ([], [])
    record = await archived(game, room.archive_number)
    assert (record.black_territory, record.white_territory, record.result) == ([], [], "B+2")


async def test_no_territory_game_ended_by_stop(game: Players) -> None:
    uid, blue, red = await game.start("1010noT1F0.0.0")
    await play(uid, (blue, "aa"), (red, "jj"), (blue, "bb"))
    assert await red.get(co="stopMove", idGracza=red.secret, stol=str(uid)) == ""
    room = game.room(uid)
    assert room.game.stopped == {2} and room.game.to_move == 1
    lines = (await blue.poll()).lines(uid)
    assert any(kind == "stop2" for _, kind, _ in chat_texts(lines))
    assert any(line.startswith("sa;B[") for line in lines), "the STOP dots were placed for blue"
    await play(uid, (blue, "ab"))
    assert await blue.get(co="stopMove", idGracza=blue.secret, stol=str(uid)) == ""
    assert room.game.result is not None
    assert (await game.eve.poll()).lines(0, "x")[-1].startswith(f"x{uid}.")


async def test_a_game_is_lost_on_time_while_nobody_polls(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.60.5")
    await play(uid, (blue, "aa"))
    game.timers.advance(30)
    await play(uid, (red, "hh"))
    room = game.room(uid)
    assert room.flags() == "f1_65.35"
    game.timers.advance(64)
    assert room.game.result is None
    game.timers.advance(2)  # blue's 65 seconds run out with no request at all
    assert str(room.game.result) == "W+T"
    await game.hub.persistence.flush()  # the archive number is announced once the game is written
    reply = await game.eve.poll()
    assert f"x{uid}.1.W+T.1" in reply.lines(0)


@pytest.mark.parametrize("action", ["move", "draw accepted"])
async def test_an_action_after_the_deadline_loses_on_time_though_the_timer_has_not_run(
    game: Players, action: str
) -> None:
    """A busy event loop runs the flag's timer late. Before, a move in that moment was played: blue's
    clock was charged below zero, got its increment, and never flagged."""
    uid, blue, red = await game.start("0808stanF0.60.5")
    await play(uid, (blue, "aa"), (red, "hh"))
    room = game.room(uid)
    if action == "draw accepted":
        red.send("u", uid, "draw")
        await red.poll()
    game.timers.time += 66  # past blue's 65 seconds; the timer is due but has not run
    if action == "move":
        reply = (await play(uid, (blue, "ab")))[0]
    else:
        blue.send("u", uid, "ok2draw")
        reply = await blue.poll()
    assert errors(reply, uid) == ["The game is over."]
    assert str(room.game.result) == "W+T" and len(room.game.moves) == 2
    assert [kind for _, kind, _ in chat_texts(reply.lines(uid)) if kind.startswith("ok")] == []
    game.timers.advance(0)  # the late timer finds the game over
    assert str(room.game.result) == "W+T"


async def test_pause_and_added_time_follow_the_rights(game: Players) -> None:
    uid, blue, red = await game.start("0808s0..s.F.a.60.5._SRATP_sratp.")
    room = game.room(uid)
    red.send("t", uid, "p")  # red pauses blue's clock
    await red.poll()
    game.timers.advance(100)
    assert room.flags() == "f1_p60.60" and room.game.result is None
    red.send("t", uid, "u")
    await red.poll()
    assert await red.get(co="dodajeCzas", idGracza=red.secret, ile="30", stol=str(uid)) == ""
    assert room.flags() == "f1_90.60"
    # the same pause through the endpoint the built-in client uses (it sends no commands in its polls)
    assert await red.get(co="pauseClock", idGracza=red.secret, table=str(uid), what="p") == ""
    game.timers.advance(100)
    assert room.flags() == "f1_p90.60"
    for query, answer in [
        (dict(what="x"), "err.badCommand"),
        (dict(), "err.missing.what"),
        (dict(what="p", table="99"), "err.noSuchTable"),
    ]:
        assert await red.get(co="pauseClock", idGracza=red.secret, **{"table": str(uid), **query}) == answer
    # blue's `u` is of red's clock, not his own: only red gave him that pause (red's runs: refused)
    assert await blue.get(co="pauseClock", idGracza=blue.secret, table=str(uid), what="u") == "err.notPaused"
    assert room.flags() == "f1_p90.60"
    assert await red.get(co="pauseClock", idGracza=red.secret, stol=str(uid), what="u") == ""
    assert room.flags() == "f1_90.60"
    uid2, blue2, red2 = await game.start("0808s0..s.F.a.60.5._SRA_sra.")
    assert await red2.get(co="dodajeCzas", idGracza=red2.secret, ile="30", stol=str(uid2)) == "err.noRight"
    assert await red2.get(co="pauseClock", idGracza=red2.secret, table=str(uid2), what="p") == "err.noRight"


async def test_pausing_a_paused_clock_or_unpausing_a_running_one_is_refused_and_changes_nothing(
    game: Players,
) -> None:
    """Before, both were answered as done: journalled, and the clocks sent to everyone at the table
    again (a `clock` event in a bot's feed) though nothing had changed."""
    uid, blue, red = await game.start("0808s0..s.F.a.60.5._SRATP_sratp.")
    room, table = game.room(uid), game.hub.tables[uid]
    assert await red.get(co="pauseClock", idGracza=red.secret, table=str(uid), what="p") == ""
    assert (await blue.poll()).lines(uid, "f") == ["f1_p60.60"]
    journalled = table.journal_seq
    for who, what, refusal in ((red, "p", "err.alreadyPaused"), (blue, "u", "err.notPaused")):
        assert await who.get(co="pauseClock", idGracza=who.secret, table=str(uid), what=what) == refusal
    red.send("t", uid, "p")  # the stream's command: the same refusal, as an error line
    assert errors(await red.poll(), uid) == ["The opponent's clock is already paused."]
    assert table.journal_seq == journalled and room.flags() == "f1_p60.60"
    assert (await blue.poll()).lines(uid, "f") == []  # nothing sent again


async def test_new_game_after_the_end_swaps_colours(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.0.0")
    await play(uid, (blue, "aa"))
    blue.send("u", uid, "resign")
    await blue.poll()
    red.send("u", uid, "new")
    assert "u2new" in (await red.poll()).lines(uid)
    blue.send("u", uid, "new")
    left = await blue.poll()
    room = game.room(uid)
    assert (room.blue, room.red) == (red.nick, blue.nick)
    assert room.game.result is None and room.game.moves == []
    # one reply without the table (MultiPoints closes its board), then the new game's whole state
    assert uid not in left.sections and f"d{uid}.0808s0..s.F.n.....{red.nick}.{blue.nick}" in left.lines(0)
    reply = await blue.poll()
    assert f"d{uid}.0808s0..s.F.n.....{red.nick}.{blue.nick}" in reply.lines(uid)
    assert "sr(;GM[40])" in reply.lines(uid)
    await play(uid, (red, "aa"))
    assert errors(await red.poll(), uid) == []


async def test_finished_and_abandoned_tables_disappear(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.0.0")
    await play(uid, (blue, "aa"))
    for who in (blue, red):
        who.send("q", uid)
        await who.poll()
    game.timers.advance(59)
    game.hub.sweep()
    assert uid in game.hub.tables
    game.timers.advance(2)
    game.hub.sweep()
    assert uid not in game.hub.tables
    assert f"gd{uid}" in (await game.eve.poll()).lines(0)
    record = await archived(game, 1)
    assert record.result is None and [m.value for m in record.moves] == ["aa"]


async def test_a_finished_game_stays_an_hour_then_goes(game: Players) -> None:
    uid, blue, red = await game.start("0808stanF0.0.0")
    await play(uid, (blue, "aa"))
    blue.send("u", uid, "resign")
    await blue.poll()
    game.timers.advance(3599)
    game.hub.sweep()
    assert uid in game.hub.tables, "both players are still at the table"
    game.timers.advance(2)
    game.hub.sweep()
    assert uid not in game.hub.tables
    assert list((await blue.poll()).sections) == [0]
