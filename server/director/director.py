"""The server as tournament director: it runs the swiss and arena tournaments organisers create on it
(docs/tournaments.md, "Tournaments the server runs").

Between the hub, whose tables play the games (set up as an organiser's setUpTable would), and the
store, which keeps the tournament, its players and its swiss pairings. Every decision reads the
tournament back from the store first: a restart in the middle of a round goes on from what is stored,
and nothing here has to be journalled. A tournament is looked at when something may have changed for
it: its start, a game's stored result, an arena's pairing wave, a swiss round's pause.

Here: the tournaments' life, the swiss rounds, and the arena's wave as a sequence of steps; what a wave
works out before its pairing is in arenawave.py, the games read as the engines count them in history.py,
the standings shown in views.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from server.director.arenawave import ArenaMemory, waiting
from server.director.creating import check_new, check_room
from server.director.entering import EntryLimits, check_eligible
from server.director.entrants import Entrants, theirs
from server.director.history import Board, no_shows_still_in, swiss_rounds
from server.director.pacing import ArenaPace
from server.director.times import arena_end, joined, wall
from server.director.views import ArenaBoards, arena_standings, summary, swiss_table
from server.engine import arena, swiss
from server.engine.gametype import parse_game_type
from server.hub.clock import Handle
from server.hub.hub import Hub
from server.hub.persistence import StorageFailing
from server.logs import Fields
from server.protocol.codec import ProtocolError, nick_key
from server.store.hosted import Entry, Hosted, HostedTournaments, NameTaken, PairedRound, Settings
from server.store.tournaments import TableRecord, Tournaments

log = logging.getLogger(__name__)

ROUND_PAUSE = 10.0  # seconds between a swiss round's last result and the next round's pairing
ARENA_WAVE = 5.0  # seconds between an arena's pairings of the players who are free
RETRY = 30.0  # after storage or the hub refused (storage failing, no room for tables), the next try
GUEST_RATING = 0.0  # guests have no rating: they come after every registered player in the swiss order


@dataclass
class _Watch:
    """What the director keeps in memory of a tournament it runs: only when it looks at it next."""

    handle: Handle | None = None
    at: float = 0.0  # the timers' time of `handle`
    # the swiss round whose pause before the next pairing is running or over, and the pause's end
    # (timers' time): what else brings us back meanwhile (a player joining) does not shorten it
    paused_after: int = 0
    pause_ends: float = 0.0
    arena: ArenaMemory = field(default_factory=ArenaMemory)  # an arena's, between its waves
    busy: bool = False  # a look is under way
    again: bool = False  # something changed during it: look once more when it is done


class Director:
    def __init__(
        self,
        hub: Hub,
        hosted: HostedTournaments,
        organised: Tournaments,
        *,
        round_pause: float = ROUND_PAUSE,
        arena_wave: float = ARENA_WAVE,
        pairing: Executor | None = None,
    ) -> None:
        self.hub, self.hosted, self.organised = hub, hosted, organised
        self.pairing = pairing  # a worker process for swiss and arena pairings; None: a thread
        self.round_pause, self.arena_wave = round_pause, arena_wave
        self._watches: dict[str, _Watch] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._pace = ArenaPace(hub)  # arena games begun an hour: a player's, a guest address's
        self._entry_limits = EntryLimits(hub)

    async def start(self) -> None:
        """Take up the unfinished tournaments: those a restart interrupted go on at once."""
        self.hub.watch_tournament_results(self._result)
        for hosted in await self.hosted.unfinished():
            self._look(hosted.settings.name)

    async def stop(self) -> None:
        """Its looks cancelled, and ended before the store closes: one cut off mid-query closed its
        connection after the store had, which hung the event loop's end (1 run of test_hosted.py in 5)."""
        self.hub.watch_tournament_results(None)
        for watch in self._watches.values():
            if watch.handle is not None:
                watch.handle.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def settled(self) -> None:
        """Return once every look started so far (and those they start) is done: for tests."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # --- what organisers and players ask -------------------------------------------------------

    async def create(self, settings: Settings) -> Hosted:
        now = self.hub.clock()
        check_new(settings, wall(settings.starts_at) - now, await self.hosted.unfinished())
        try:
            hosted = await self.hosted.create(settings, datetime.fromtimestamp(now, UTC))
        except NameTaken:
            raise ProtocolError("nameTaken", "Another tournament has this name.") from None
        log.info(
            "tournament created %s",
            Fields(name=settings.name, kind=settings.kind, by=settings.created_by, starts=settings.starts_at),
        )
        self._look(settings.name)
        return hosted

    async def join(self, secret: str, name: str) -> None:
        player = self.hub.players.get(secret)
        if player is None:
            raise ProtocolError("notLoggedIn")
        hosted = await self._open(name)
        settings = hosted.settings
        rating = float(player.record[0]) if player.record is not None and not player.guest else None
        check_eligible(settings, rating)
        if settings.kind == "swiss" and hosted.state == "running" and hosted.round >= settings.rounds:
            raise ProtocolError("tournamentOver", "The last round has been paired.")
        entries = await self.hosted.entries(hosted.id)
        taken = Entrants(entries).of(player)
        if taken is None or taken.withdrawn:
            check_room(settings, entries)
        if taken is not None and not theirs(taken, player):
            # a guest's nick once another session's, a nick a renamed account had: not the newcomer's games
            raise ProtocolError("nickUsed", "Another player has played in this tournament under this nick.")
        self._entry_limits.check(player, taken is None)
        entry = Entry(
            player.nick,
            nick_key(player.nick),
            player.seat_key,
            GUEST_RATING if rating is None else rating,
            datetime.fromtimestamp(self.hub.clock(), UTC),
            False,
        )
        if not await self.hosted.register(hosted.id, entry):
            raise ProtocolError("alreadyRegistered", "You are registered already.")
        self._entry_limits.made(name, player, taken is None)
        if hosted.state == "running" and settings.kind == "arena":
            self._look(name)  # paired at once rather than at the next wave

    async def leave(self, secret: str, name: str) -> None:
        player = self.hub.players.get(secret)
        if player is None:
            raise ProtocolError("notLoggedIn")
        hosted = await self._open(name)
        now = datetime.fromtimestamp(self.hub.clock(), UTC)
        entry = Entrants(await self.hosted.entries(hosted.id)).of(player)
        if (
            entry is None
            # a nick a renamed account had, a guest's nick another session joined under (withdrawn at
            # the next look once that session is gone: Entrants.gone)
            or not theirs(entry, player)
            or not await self.hosted.withdraw(hosted.id, entry.nick_key, now)
        ):
            raise ProtocolError("notRegistered", "You are not registered in this tournament.")
        self._entry_limits.ended(name, player.nick)

    async def cancel(self, name: str, key_tournament: str | None) -> None:
        """The organiser calls the tournament off: no more pairings, and its games still being played
        end `Void` as cancelTable ends one (unrated, counted nowhere)."""
        hosted = await self._open(name)
        if key_tournament is not None and key_tournament != name:
            raise ProtocolError("keyNotForTournament")
        await self._finish(hosted, "cancelled")
        for board in await self.boards(hosted):
            if board.result is None:
                with contextlib.suppress(ProtocolError):  # it ended meanwhile: its result stands
                    self.hub.cancel_table(board.table, None)
        await self.hub.persistence.flush()

    async def _open(self, name: str) -> Hosted:
        hosted = await self.hosted.get(name)
        if hosted is None:
            raise ProtocolError("noSuchTournament", "The server runs no tournament of this name.")
        if hosted.state in ("finished", "cancelled"):
            raise ProtocolError("tournamentOver", "This tournament is over.")
        return hosted

    async def boards(self, hosted: Hosted) -> list[Board]:
        return self._boards(await self.organised.tables(hosted.settings.name))

    async def arena_read(self, hosted: Hosted, entrants: Entrants) -> ArenaMemory:
        """The director's memory of an arena's games, with the rows changed since the last wave read from
        the store and counted (a 24-hour arena has some 108,000 games)."""
        memory = self._watches.setdefault(hosted.settings.name, _Watch()).arena
        changed = await self.organised.tables(hosted.settings.name, memory.read_up_to)
        memory.tables_read(changed, self.board, entrants)
        return memory

    def _boards(self, rows: Iterable[TableRecord]) -> list[Board]:
        return [self.board(row) for row in rows]

    def board(self, row: TableRecord) -> Board:
        """The game of this table, with the live table's moves and result (a result is stored a moment
        after the game ends); a table gone without a stored result counts as void, so a round can end."""
        live = self.hub.tables.tournament_game(row.uid)
        result, ended = row.result, wall(row.finished_at) if row.finished_at is not None else None
        if result is None and live is not None and live.game.result is not None:
            result, ended = str(live.game.result), self.hub.clock()
        elif result is None and live is None:
            result, ended = "Void", self.hub.clock()
        number = int(row.round) if row.round and row.round.isdigit() else 0
        moves = row.moves if row.moves is not None else len(live.game.moves) if live is not None else 0
        return Board(row.uid, number, row.blue, row.red, result, row.cancelled, moves, ended)

    async def listing(self) -> list[dict[str, Any]]:
        """The tournaments' summaries, as /tournaments.json lists them."""
        return [
            summary(hosted, await self.hosted.entries(hosted.id)) for hosted in await self.hosted.listing()
        ]

    async def described(
        self,
        name: str,
        games: Callable[[], list[Board]] | None = None,
        kept: ArenaBoards | None = None,
    ) -> dict[str, Any] | None:
        """The summary with the standings by the tournament's own rules; None: no such tournament.
        `games`: its boards in table order as the public answers keep them (server/web/kept_tables.py),
        made only if read; None: read from the store. `kept`: an arena's games counted by those answers,
        brought up to date with the games settled since (the whole count took 0.7 to 1 s a build)."""
        hosted = await self.hosted.get(name)
        if hosted is None:
            return None
        entries = await self.hosted.entries(hosted.id)
        about = summary(hosted, entries)
        ends = arena_end(hosted.settings)
        if hosted.settings.kind == "arena" and kept is not None:
            # in a thread, as below; the kept games only one build at a time changes
            # (server/web/kept_tables.py's KeptTables.building)
            settled = kept.settled() if kept.kept.needs_whole(entries, ends) else None
            about["standings"] = await asyncio.to_thread(kept.kept.table, entries, settled, kept.live, ends)
            return about
        boards = games() if games is not None else await self.boards(hosted)
        if hosted.settings.kind == "arena":
            # every game: 0.7 to 1 s of pure Python at 108,000 (docs/performance.md), so in a thread; its
            # inputs are this build's own (a list of frozen boards, the entries read here)
            about["standings"] = await asyncio.to_thread(arena_standings, entries, boards, ends)
        else:
            entrants = Entrants(entries)
            rounds = entrants.rounds(await self.hosted.rounds(hosted.id))
            about["standings"] = swiss_table(entries, entrants.boards(boards), rounds)
        return about

    # --- looking at a tournament ---------------------------------------------------------------

    def _result(self, uid: int, tournament: str, result: str) -> None:
        if tournament in self._watches:
            self._look(tournament)

    def _look(self, name: str) -> None:
        """Look at the tournament soon; many wishes at once (a flood of joins, results arriving together)
        make one look, and one more if they came during it."""
        watch = self._watches.setdefault(name, _Watch())
        if watch.busy:
            watch.again = True
            return
        watch.busy = True
        self._spawn(self._looking(name, watch))

    async def _looking(self, name: str, watch: _Watch) -> None:
        try:
            watch.again = True
            while watch.again:
                watch.again = False
                await self._advance(name)
        finally:
            watch.busy = False

    def _look_at(self, name: str, moment: float) -> None:
        """Look again at the timers' time `moment` (the earliest such wish wins)."""
        watch = self._watches.setdefault(name, _Watch())
        if watch.handle is not None and watch.at <= moment:
            return
        if watch.handle is not None:
            watch.handle.cancel()

        def due() -> None:
            watch.handle = None
            self._look(name)

        watch.at, watch.handle = moment, self.hub.timers.call_at(moment, due)

    def _look_in(self, name: str, seconds: float) -> None:
        self._look_at(name, self.hub.timers.now() + max(0.0, seconds))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _advance(self, name: str) -> None:
        try:
            hosted = await self.hosted.get(name)
            if hosted is None or hosted.state in ("finished", "cancelled"):
                self._forget(name)
                return
            until_start = wall(hosted.settings.starts_at) - self.hub.clock()
            if until_start > 0 and hosted.state == "registering":  # a running one: the clock stepped back
                self._look_in(name, until_start)
            elif hosted.settings.kind == "swiss":
                await self._swiss(hosted)
            else:
                await self._arena(hosted)
        except (ProtocolError, StorageFailing, OSError) as refused:
            # storage failing or the server full of tables: nothing is lost, try again later
            log.warning("tournament waits %s", Fields(name=name, reason=str(refused), retry=RETRY))
            self._look_in(name, RETRY)
        except Exception:
            log.exception("tournament failed %s", Fields(name=name, retry=RETRY))
            self._look_in(name, RETRY)

    def _forget(self, name: str) -> None:
        watch = self._watches.pop(name, None)
        if watch is not None and watch.handle is not None:
            watch.handle.cancel()

    async def _finish(self, hosted: Hosted, state: str = "finished") -> None:
        await self.hosted.set_state(hosted.id, state, datetime.fromtimestamp(self.hub.clock(), UTC))
        log.info("tournament over %s", Fields(name=hosted.settings.name, state=state, round=hosted.round))
        self._entry_limits.ended(hosted.settings.name)
        self._forget(hosted.settings.name)

    def _set_up(self, hosted: Hosted, round_: int, pair: tuple[str, str], entrants: Entrants) -> None:
        """The table of a pair of entrants, under the nicks they play as (Entrants.playing_as)."""
        settings = hosted.settings
        (blue, blue_seat), (red, red_seat) = (entrants.playing_as(self.hub, nick) for nick in pair)
        uid = self.hub.set_up_table(
            parse_game_type(settings.game_type),
            blue,
            red,
            (settings.say_hi, settings.say_hi),
            settings.name,
            str(round_) if round_ else None,
            {},  # no ratings: blue is the one the pairing made first to move, even in ranked games
        )
        seats = {blue: blue_seat, red: red_seat}
        self.hub.reserve_seats(uid, {nick: seat for nick, seat in seats.items() if seat is not None})

    async def _withdraw(self, hosted: Hosted, entries: list[Entry], nicks: set[str], why: str) -> list[Entry]:
        """Withdraw these players; the entries as they are now."""
        now = datetime.fromtimestamp(self.hub.clock(), UTC)
        kept = []
        for entry in entries:
            if not entry.withdrawn and entry.nick in nicks:
                await self.hosted.withdraw(hosted.id, entry.nick_key, now)
                self._entry_limits.ended(hosted.settings.name, entry.nick)
                log.info(
                    "tournament withdrew %s", Fields(name=hosted.settings.name, player=entry.nick, why=why)
                )
                entry = replace(entry, withdrawn=True)
            kept.append(entry)
        return kept

    # --- swiss ---------------------------------------------------------------------------------

    async def _swiss(self, hosted: Hosted) -> None:
        name, settings = hosted.settings.name, hosted.settings
        entries = await self.hosted.entries(hosted.id)
        self._entry_limits.held(name, entries)
        entrants = Entrants(entries)  # the pairings and the tables as the entrants' (renamed or not)
        rounds = entrants.rounds(await self.hosted.rounds(hosted.id))
        boards = entrants.boards(await self.boards(hosted))
        if rounds:
            current = rounds[-1]
            made = {(b.blue, b.red) for b in boards if b.round == current.round}
            missing = [board for board in current.boards if board not in made]
            for board in missing:  # a restart came between the pairing and its tables
                self._set_up(hosted, current.round, board, entrants)
            if missing:
                await self.hub.persistence.flush()
                return
            if any(b.result is None for b in boards if b.round == current.round):
                return  # the results will bring us back
            if current.round >= settings.rounds:
                await self._finish(hosted)
                return
            watch = self._watches[name]
            if watch.paused_after != current.round:
                absent = no_shows_still_in(joined(entries), [b for b in boards if b.round == current.round])
                await self._withdraw(hosted, entries, absent, "did not show up")
                watch.paused_after, watch.pause_ends = current.round, self.hub.timers.now() + self.round_pause
            if self.hub.timers.now() < watch.pause_ends:
                self._look_at(name, watch.pause_ends)
                return
        entries = await self._withdraw(hosted, entries, Entrants(entries).gone(self.hub), "session over")
        await self._pair_swiss(hosted, entries, rounds, boards)

    async def _pair_swiss(
        self, hosted: Hosted, entries: list[Entry], rounds: list[PairedRound], boards: list[Board]
    ) -> None:
        settings = hosted.settings
        number = len(rounds) + 1
        order = {entry.nick: index for index, entry in enumerate(entries)}
        # the initial ranking (pairing numbers) counts everyone who ever joined: a withdrawn player
        # keeps a number, and FIDE's pairing reads the games of those who played (`others`)
        ranking = sorted(entries, key=lambda e: (-e.rating, order[e.nick]))
        byes = {paired.round: paired.bye for paired in rounds}
        field = [
            swiss.Entrant(e.nick, e.rating, swiss_rounds(e.nick, len(rounds), boards, byes), place)
            for place, e in enumerate(ranking, start=1)
        ]
        active = [entrant for entrant, e in zip(field, ranking, strict=True) if not e.withdrawn]
        others = [entrant for entrant, e in zip(field, ranking, strict=True) if e.withdrawn]
        if len(active) < 2:
            await self._finish(hosted, "finished" if rounds else "cancelled")
            return
        try:
            pairing = await self.pair_swiss_round(active, settings.rounds, others)
        except swiss.NoPairing as impossible:
            log.info(
                "tournament cannot pair %s", Fields(name=settings.name, round=number, why=str(impossible))
            )
            await self._finish(hosted)
            return
        paired = PairedRound(number, tuple(pairing.boards), pairing.bye)
        await self.hosted.save_round(hosted.id, paired, datetime.fromtimestamp(self.hub.clock(), UTC))
        entrants = Entrants(entries)
        for board in paired.boards:
            self._set_up(hosted, number, board, entrants)
        await self.hub.persistence.flush()
        log.info("tournament paired %s", Fields(name=settings.name, round=number, boards=len(paired.boards)))

    async def pair_swiss_round(
        self, active: list[swiss.Entrant], rounds: int, others: list[swiss.Entrant]
    ) -> swiss.Pairing:
        """FIDE's pairing, off the event loop: seconds of pure Python at 200 players (benchmarks/swiss.py),
        which on a thread would hold the GIL against every poll (benchmarks/swiss_load.py)."""
        pair = functools.partial(swiss.pair_round, active, rounds, others=others)
        return await asyncio.get_running_loop().run_in_executor(self.pairing, pair)  # None: a thread

    async def pair_arena_wave(
        self, waiting: list[arena.WaitingPlayer], ranks: dict[str, int], active_players: int
    ) -> list[tuple[str, str]]:
        """lichess's arena pairing, off the event loop: networkx's matching, pure Python, seconds at 200
        waiting players (benchmarks/arena.py), on the same worker process as the swiss rounds."""
        pair = functools.partial(arena.pair, waiting, ranks=ranks, active_players=active_players)
        return await asyncio.get_running_loop().run_in_executor(self.pairing, pair)  # None: a thread

    # --- arena ---------------------------------------------------------------------------------

    async def _arena(self, hosted: Hosted) -> None:
        settings = hosted.settings
        if hosted.state == "registering":
            await self.hosted.set_state(hosted.id, "running")
        ends = arena_end(settings)
        left = ends - self.hub.clock()
        if left <= 0:
            await self._finish(hosted)  # games still played go on, but count no more (lichess's rule)
            return
        entries = await self.hosted.entries(hosted.id)
        entrants = Entrants(entries)
        memory = await self.arena_read(hosted, entrants)
        self._entry_limits.held(settings.name, entries)
        entries = await self._withdraw(hosted, entries, memory.no_shows(entries), "did not show up")
        entries = await self._withdraw(hosted, entries, Entrants(entries).gone(self.hub), "session over")
        ready = memory.field(entries)
        resting = memory.resting(self.hub.clock(), self.hub.timers.now())
        free, playing_as = waiting(self.hub, entrants, entries, ready, resting, self._pace)
        still_in = sum(not entry.withdrawn for entry in entries)
        pairs = await self.pair_arena_wave([ready.waiting(nick) for nick in free], ready.ranks, still_in)
        for pair in pairs:
            self._set_up(hosted, 0, pair, entrants)
            self._pace.began(playing_as[nick][0] for nick in pair)
        if pairs:
            await self.hub.persistence.flush()
        self._look_in(hosted.settings.name, min(self.arena_wave, left))
