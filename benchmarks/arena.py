"""Arena pairing speed: waves of --players free players paired by server/engine/arena.py, each timed.

Every player is free at every wave, as at an arena's start (everyone joined before it) and the worst
case later: every game of a wave ends before the next. Results are drawn from the ratings (the stronger
wins more often, a third of the games drawn) with 10 to 120 moves; ranks are the standings of everyone,
as the director passes them. Prints each wave's pairing time in CPU seconds (a shared machine's wall
time says less) and the slowest, for each --players.

    .venv/bin/python benchmarks/arena.py --players 100 200 500 --waves 3

With --wave-boards, also what one wave of an arena of --wave-players costs on the event loop besides
its pairing, after so many finished games (one-minute games: 4,500 is an hour at 150 players): the
CPU seconds of server/director/arenawave.py's and ledger.py's part (the games changed taken in and
counted, no-shows, everyone's ranks, rests, the games of the players whose games ended), in a
(re)started director's first wave, which counts every game, and in a wave after --wave-games games
ended and as many were set up (150 players of one-minute games end about 6 in 5 seconds); and of the
director's reads of the tournament's games from the store (`Director.boards`, `Director.arena_read`),
the event loop's thread only (a throwaway SQLite file): the whole read, which every wave made before
2026-12-02 and a restarted director's first wave makes, and a wave's read of the tables changed since
the last (written through the store's writer) into the director's memory of the tournament. And what
a wave hands its worker process when all --wave-players are free at once (after a pause, or every game
of a wave ended before the next): the pairing's call pickled (its bytes, the CPU seconds to make its
input and to pickle it, the event loop's, and to unpickle it, the worker's).

    .venv/bin/python benchmarks/arena.py --players --wave-boards 4500 40000 108000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import pickle
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.director.arenawave import ArenaMemory  # noqa: E402
from server.director.director import Director  # noqa: E402
from server.director.entrants import Entrants  # noqa: E402
from server.director.history import Board  # noqa: E402
from server.engine import arena  # noqa: E402
from server.engine.arena import ArenaGame, ArenaPlayer, Outcome, WaitingPlayer, pair, standings  # noqa: E402
from server.engine.game import Result  # noqa: E402
from server.engine.sgf import GameRecord  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.hub.persistence import FinishedGame  # noqa: E402
from server.store.hosted import Entry, Settings  # noqa: E402
from server.store.store import Store  # noqa: E402
from server.store.tournaments import TableRecord  # noqa: E402

TOURNAMENT = "Hourly arena"
BEGUN = datetime(2026, 12, 2, tzinfo=UTC)
RESULTS = ["B+R", "W+R", "B+3", "W+2.5", "0", "B+T", "W+F", "Void"]


@dataclass(frozen=True)
class Wave:
    """One wave's input, as Director._arena hands it to arena.pair."""

    waiting: list[WaitingPlayer]
    ranks: dict[str, int]


def simulate(players: int, waves: int, seed: int, inputs: list[Wave] | None = None) -> list[float]:
    """Each wave's pairing time in CPU seconds; `inputs`, when given, gets each wave's input."""
    rng = random.Random(seed)
    ratings = {f"p{n}": 2400.0 - 1000 * n / players for n in range(1, players + 1)}
    history: dict[str, list[ArenaGame]] = {key: [] for key in ratings}
    times = []
    for _ in range(waves):
        players = [ArenaPlayer(key, ratings[key], tuple(history[key])) for key in ratings]
        rng.shuffle(players)  # the order they became free
        ranks = {standing.key: standing.rank for standing in standings(players)}
        waiting = [WaitingPlayer.of(player) for player in players]
        if inputs is not None:
            inputs.append(Wave(waiting, ranks))
        start = time.process_time()
        pairs = pair(waiting, ranks=ranks, active_players=players)
        times.append(time.process_time() - start)
        for white, black in pairs:
            expected = 1 / (1 + 10 ** ((ratings[black] - ratings[white]) / 400))
            moves = rng.randrange(10, 121)
            white_result: Outcome = (
                "draw" if rng.random() < 1 / 3 else "win" if rng.random() < expected else "loss"
            )
            black_result: Outcome = {"win": "loss", "loss": "win", "draw": "draw"}[white_result]
            history[white].append(ArenaGame(black, white_result, True, moves))
            history[black].append(ArenaGame(white, black_result, False, moves))
    return times


def tournament(players: int, boards: int, seed: int) -> tuple[list[Entry], list[Board]]:
    """An arena's entries and games: random pairs, random results, one game a second; the last
    players/2 games still being played."""
    rng = random.Random(seed)
    entries = [
        Entry(f"p{n}", f"p{n}", f"@{n}", 2400.0 - 1000 * n / players, BEGUN, False)
        for n in range(1, players + 1)
    ]
    nicks = [entry.nick for entry in entries]
    games = []
    for table in range(1, boards + 1):
        blue, red = rng.sample(nicks, 2)
        live = table > boards - players // 2
        result = None if live else rng.choice(RESULTS)
        ended = None if live else BEGUN.timestamp() + table
        games.append(Board(table, 0, blue, red, result, False, rng.randrange(10, 121), ended))
    return entries, games


@dataclass(frozen=True)
class WaveCosts:
    """The median CPU seconds of a wave's part in arenawave.py and ledger.py (the games changed taken in
    and counted, no-shows, everyone's ranks, rests, the games of the players whose games ended)."""

    first: float  # a (re)started director's first wave, which counts every game (each wave before 2026-12-02)
    wave: float  # a wave after --wave-games games ended and as many were set up
    handed: Handed  # every entrant free at once


@dataclass(frozen=True)
class Handed:
    """A wave's pairing call as the worker process gets it, every entrant free: its size pickled, and the
    median CPU seconds to make its input and pickle it (the event loop's thread) and to unpickle it (the
    worker's)."""

    size: int
    made: float
    pickled: float
    unpickled: float


def handed(memory: ArenaMemory, entries: list[Entry], repeat: int) -> Handed:
    """Director._arena's call of its worker, with everyone free."""
    made, pickled, unpickled = [], [], []
    for _ in range(repeat):
        start = time.process_time()
        ready = memory.field(entries)
        waiting = [ready.waiting(entry.nick) for entry in entries]
        made.append(time.process_time() - start)
        start = time.process_time()
        call = pickle.dumps(
            functools.partial(arena.pair, waiting, ranks=ready.ranks, active_players=len(entries))
        )
        pickled.append(time.process_time() - start)
        start = time.process_time()
        pickle.loads(call)
        unpickled.append(time.process_time() - start)
    return Handed(len(call), *map(statistics.median, (made, pickled, unpickled)))


def record(board: Board, changed: int) -> TableRecord:
    """The board's row as the store gives it: a finished game's with its moves, a live game's without."""
    ended = datetime.fromtimestamp(board.ended, UTC) if board.ended is not None else None
    moves = board.moves if board.result is not None else None
    return TableRecord(
        board.table, TOURNAMENT, None, BEGUN, board.blue, board.red, "20x20", board.result, None, False,
        ended, moves, changed,
    )  # fmt: skip


def board_of(row: TableRecord) -> Board:
    """Director._board without live tables: a game not stored is being played."""
    ended = row.finished_at.timestamp() if row.finished_at is not None else None
    return Board(row.uid, 0, row.blue, row.red, row.result, row.cancelled, row.moves or 0, ended)


def wave_cpu(entries: list[Entry], boards: list[Board], repeat: int, wave_games: int, seed: int) -> WaveCosts:
    """A (re)started director's first wave, its boards made beforehand as the whole count each wave made
    before was handed them (the director makes them in its read: the whole read's figure), then waves
    after `wave_games` games ended and as many set up (the oldest being played end; new ones between
    random players)."""
    rng, nicks = random.Random(seed), [entry.nick for entry in entries]
    given, rows = {board.table: board for board in boards}, [record(board, 1) for board in boards]
    firsts, times = [], []
    for _ in range(repeat):
        memory = ArenaMemory()
        start = time.process_time()
        a_wave(memory, entries, rows, lambda row: given[row.uid], 0.0)
        firsts.append(time.process_time() - start)
    live = [board for board in boards if board.result is None]
    for round_ in range(repeat):
        now = BEGUN.timestamp() + len(boards) + round_ * 5.0
        count, uid = round_ + 2, max(memory.settled.keys() | memory.unsettled.keys()) + 1
        over = [replace(board, result=rng.choice(RESULTS), ended=now) for board in live[:wave_games]]
        new = [
            Board(uid + n, 0, *rng.sample(nicks, 2), None, False, rng.randrange(10, 121))
            for n in range(wave_games)
        ]
        live = live[wave_games:] + new
        changed = [record(board, count) for board in (*over, *new)]
        start = time.process_time()
        a_wave(memory, entries, changed, board_of, now)
        times.append(time.process_time() - start)
    return WaveCosts(statistics.median(firsts), statistics.median(times), handed(memory, entries, repeat))


def a_wave(
    memory: ArenaMemory,
    entries: list[Entry],
    changed: list[TableRecord],
    board: Callable[[TableRecord], Board],
    now: float,
) -> None:
    """Director._arena's part before the pairing, and the games of the players whose games just ended
    (the pairing's, a little later)."""
    memory.tables_read(changed, board, Entrants(entries))
    memory.no_shows(entries)
    ready = memory.field(entries)
    memory.resting(now, now)
    ended = {nick for row in changed if row.result is not None for nick in (row.blue, row.red)}
    assert all(ready.waiting(nick).key == nick for nick in ended if nick in ready.ratings)


@dataclass(frozen=True)
class ReadCosts:
    """The median CPU seconds of the event loop's thread in the director's reads of an arena's games
    from the store (the rows and the boards made of them)."""

    whole: float  # every game: each wave before 2026-12-02, a restarted director's first wave now
    wave: float  # those changed since the last wave, put into the director's memory (ArenaMemory)


async def store_read_cpu(boards: list[Board], wave_games: int, repeat: int) -> ReadCosts:
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite+aiosqlite:///{workdir}/arena.sqlite3"
        store = await Store.open(url, upgrade=True)
        arena = Settings(TOURNAMENT, "arena", "20x20", 0, 1440, BEGUN, None, None, False, 0, "bench")
        hosted = await store.hosted.create(arena, BEGUN)
        await store.close()
        stamp = "2026-12-02 00:00:00.000000"
        with contextlib.closing(sqlite3.connect(f"{workdir}/arena.sqlite3")) as db, db:
            db.executemany(
                "INSERT INTO games (number, finished_at, blue_nick, red_nick, game_type, result, rated,"
                " tournament, sgf) VALUES (?, ?, ?, ?, '20x20', ?, 0, ?, '(;)')",
                [(b.table, stamp, b.blue, b.red, b.result, TOURNAMENT) for b in boards if b.result],
            )
            db.executemany(
                "INSERT INTO tournament_tables (uid, tournament, round, created_at, blue, red, game_type,"
                " result, game_number, moves) VALUES (?, ?, NULL, ?, ?, ?, '20x20', ?, ?, ?)",
                [
                    (
                        b.table,
                        TOURNAMENT,
                        stamp,
                        b.blue,
                        b.red,
                        b.result,
                        b.table if b.result else None,
                        b.moves,
                    )
                    for b in boards
                ],
            )
        store = await Store.open(url)
        director = Director(Hub(), store.hosted, store.tournaments)
        try:
            whole, wave = [], []
            for _ in range(repeat):
                start = time.thread_time()
                read = await director.boards(hosted)
                whole.append(time.thread_time() - start)
            assert len(read) == len(boards)
            await director.arena_read(hosted, Entrants([]))  # a (re)started director's first wave
            live = [b for b in boards if b.result is None]
            for round_ in range(repeat):
                await between_waves(store, live, len(boards) + round_ * wave_games + 1, wave_games)
                start = time.thread_time()
                memory = await director.arena_read(hosted, Entrants([]))
                wave.append(time.thread_time() - start)
            assert len(memory.settled) + len(memory.live) == len(boards) + repeat * wave_games
        finally:
            await store.close()
        return ReadCosts(statistics.median(whole), statistics.median(wave))


async def between_waves(store: Store, live: list[Board], first_uid: int, games: int) -> None:
    """What a wave finds changed: `games` of the `live` ones ended (taken from it) and as many set up."""
    for board in live[:games]:
        game = FinishedGame(
            board.table,
            GameRecord(width=20, height=20),
            board.blue,
            board.red,
            "20x20",
            Result.parse("B+R"),
            False,
            TOURNAMENT,
            0,
            1,
            moves=board.moves,
        )
        store.writer.archive(game, lambda *_: None)
    for uid in range(first_uid, first_uid + games):
        blue, red = live[0].blue, live[0].red
        store.writer.tournament_table(uid, TOURNAMENT, None, blue, red, "20x20")
        live.append(Board(uid, 0, blue, red, None))
    del live[:games]
    await store.writer.flush()


def wave_costs(players: int, sizes: list[int], seed: int, repeat: int, wave_games: int) -> None:
    for size in sizes:
        entries, boards = tournament(players, size, seed)
        director = wave_cpu(entries, boards, repeat, wave_games, seed)
        store = asyncio.run(store_read_cpu(boards, wave_games, repeat))
        print(
            f"a wave of {players} players after {size:,} games: {director.wave:.4f} s of CPU besides the"
            f" pairing and the store ({director.first:.3f} s the first after a start); the director's read"
            f" of every game {store.whole:.3f} s, of the {wave_games} ended and {wave_games} set up since the"
            f" last wave {store.wave:.4f} s (median of {repeat})",
            flush=True,
        )
        given = director.handed
        print(
            f"  the pairing's call with all {players} free: {given.size:,} bytes pickled; its input made in"
            f" {given.made:.4f} s and pickled in {given.pickled:.4f} s of the event loop's CPU, unpickled"
            f" in {given.unpickled:.4f} s of the worker's",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, nargs="*", default=[100, 200, 500])
    parser.add_argument("--waves", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wave-boards", type=int, nargs="*", default=[])
    parser.add_argument("--wave-players", type=int, default=150)
    parser.add_argument("--wave-games", type=int, default=6, help="games ended between two waves")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for players in args.players:
        times = simulate(players, args.waves, args.seed)
        waves = ", ".join(f"{seconds:.2f}" for seconds in times)
        print(f"{players} players: waves paired in {waves} s; slowest {max(times):.2f} s", flush=True)
    wave_costs(args.wave_players, args.wave_boards, args.seed, args.repeat, args.wave_games)


if __name__ == "__main__":
    main()
