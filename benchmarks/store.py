"""Store load: the p99 latency a move's journal write adds, and finished games archived per second, on SQLite.

Everything runs in this one process, on a throwaway SQLite file (WAL, synchronous=NORMAL, as the server
opens it) in a temporary folder; no HTTP. The hub is driven the way `/a.kropki` drives it: a "move
request" is `hub.move(...)` followed by `await hub.settled(before)` (server/web/kropki.py answers only after
that, so a move's reply waits for its journal commit), timed from just before hub.move to just after
settled.

Moves, twice with the same workload: journal off (the hub on MemoryPersistence) and journal on (the
hub on the store's write-behind writer, `Store.open(url, upgrade=True).writer`). --tables tables of
--game-type between guests; every table makes a random legal move every --move-every seconds (with
+-jitter), the player on move moving, for --warmup seconds not measured and then --seconds measured.
Then --bursts bursts in which every table moves at the same instant (timed from that instant, so a
burst's last move also waits for the ones before it; group commit should keep this flat).
Target: the journal adds under 5 ms to a move's p99 (p99 with it on minus p99 with it off, steady play).
The machine's other load over each measured span is printed, with a note when it was busy.

Archive: --games finished games (--min-moves..--max-moves random moves on --game-type, then a
resignation; records built with game_to_record), queued to `store.writer.archive` as fast as possible,
then `await writer.flush()`: games per second and the database's size. Once between guests (no rating
change) and once as --rated-games rated games between --accounts registered players (ratings read and
written, so each game also reads both players and updates both rows).

    .venv/bin/python benchmarks/store.py
    .venv/bin/python benchmarks/store.py --tables 500 --seconds 60 --games 5000
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import math
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from stream import (  # noqa: E402
    argument_parser,
    machine_cpu_seconds,
    ms,
    percentile,
    server_revision,
    stop_as_on_ctrl_c,
)

from server.engine.board import BLACK  # noqa: E402
from server.engine.game import Game, game_for_type  # noqa: E402
from server.engine.gametype import GameKind, GameType, GameTypeError, parse_game_type  # noqa: E402
from server.engine.moves import MoveSpec, point_to_sgf  # noqa: E402
from server.engine.record import game_to_record  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.hub.persistence import Account, FinishedGame, MemoryPersistence, Persistence  # noqa: E402
from server.hub.stream import SETTLE_TIMEOUT  # noqa: E402
from server.protocol import events  # noqa: E402
from server.protocol.codec import ProtocolError  # noqa: E402
from server.store.store import Store  # noqa: E402
from server.store.writer import StoreWriter  # noqa: E402

TARGET_ADDED_P99_MS = 5.0
BUSY_NOTE = 0.25  # of one core: other work on the machine above this gets a note under the figures


# --- load caveat ---------------------------------------------------------------------------------------


def steal_seconds() -> float:
    """CPU time the hypervisor gave to other guests (steal, /proc/stat): a VM's hidden stalls."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


class GcPauses:
    """The garbage collector's pauses, from gc.callbacks: a stall of the loop that is no one's I/O."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self._began = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.pauses.append(time.perf_counter() - self._began)


GC = GcPauses()


@dataclass
class Cpu:
    """This process's CPU time (the event loop and aiosqlite's thread) and the machine's, over a span;
    also the hypervisor's steal time and this process's garbage collector pauses."""

    wall: float = 0.0
    own: float = 0.0
    machine: float = 0.0
    steal: float = 0.0
    gc_pauses: list[float] = field(default_factory=list)
    _marks: tuple[float, float, float, float, int] = (0.0, 0.0, 0.0, 0.0, 0)

    def start(self) -> None:
        now = (time.perf_counter(), time.process_time(), machine_cpu_seconds(), steal_seconds())
        self._marks = (*now, len(GC.pauses))

    def stop(self) -> None:
        wall, own, machine, steal, pauses = self._marks
        self.wall = time.perf_counter() - wall
        self.own = time.process_time() - own
        self.machine = machine_cpu_seconds() - machine
        self.steal = steal_seconds() - steal
        self.gc_pauses = sorted(GC.pauses[pauses:])

    def line(self) -> str:
        others = max(0.0, self.machine - self.own)  # clock ticks can make it dip below 0
        pauses = self.gc_pauses
        text = (
            f"CPU over {self.wall:.1f} s: this process {self.own:.1f} s = {self.own / self.wall:.0%} of one "
            f"core; rest of the machine {others:.1f} s = {others / self.wall:.0%} of one core (of which "
            f"steal {self.steal:.1f} s); {len(pauses)} GC pauses, "
            f"{sum(pauses) * 1000:.0f} ms in all, longest {max(pauses, default=0) * 1000:.1f} ms"
        )
        if others / self.wall > BUSY_NOTE:
            text += "\nNOTE: other work kept the CPUs busy meanwhile; these figures may be pessimistic"
        return text


class BatchTimer:
    """Times the writer's batches (one transaction each, commit included) through its `on_commit`, to
    tell commit time from waiting in the queue; a batch counts for the phase current at its commit."""

    def __init__(self, writer: StoreWriter) -> None:
        self.phase: str | None = None  # batches committed while this is None are not recorded
        self.sizes: dict[str, list[int]] = {}  # jobs per batch, by phase
        self.seconds: dict[str, list[float]] = {}  # wall time of each batch's transaction, commit included
        writer.on_commit = self.committed

    def committed(self, jobs: int, seconds: float) -> None:
        if self.phase is not None:
            self.sizes.setdefault(self.phase, []).append(jobs)
            self.seconds.setdefault(self.phase, []).append(seconds)

    def line(self, phase: str, span: float | None = None) -> str:
        sizes, seconds = self.sizes.get(phase, []), sorted(self.seconds.get(phase, []))
        batches, jobs = len(sizes), sum(sizes)
        text = (
            f"writer batches: {batches}, {jobs / max(1, batches):.1f} jobs each "
            f"(max {max(sizes, default=0)}); "
            f"transaction ms {ms(seconds, 50, 90, 99)}"
        )
        if span:
            text += f"; {batches / span:.0f} batches/s, writer busy {sum(seconds) / span:.0%} of the time"
        return text


# --- moves: the journal's added latency ----------------------------------------------------------------


@dataclass
class Table:
    """One table of the benchmark: its players' ids and its own random order of candidate points."""

    uid: int
    blue: str  # secret ids
    red: str
    candidates: list[int]
    rng: random.Random


@dataclass
class MoveStats:
    mode: str
    latencies: list[float] = field(default_factory=list)  # hub.move -> settled, measured window
    lags: list[float] = field(default_factory=list)  # due time -> settled: includes the loop's lateness
    bursts: list[float] = field(default_factory=list)  # burst instant -> settled
    refused: int = 0
    finished: int = 0  # tables whose game ended (no free point, or won): they stop moving
    batches: BatchTimer | None = None  # journal on only: the writer's batches in the measured window
    setup_seconds: float = 0.0
    cpu: Cpu = field(default_factory=Cpu)


def pick(hub: Hub, table: Table) -> tuple[str, str] | None:
    """(secret of the player on move, a random legal point), or None when the game is over.

    Reads the hub's own board, so a refusal means the hub and its board disagree (counted)."""
    room = hub.tables[table.uid].room
    assert room is not None
    game = room.game
    if game.result is not None:
        return None
    board, candidates = game.board, table.candidates
    while candidates:
        index = candidates[-1]
        if board.playable(index):
            candidates.pop()
            secret = table.blue if game.to_move == BLACK else table.red
            return secret, point_to_sgf(board.point(index))
        candidates.pop()
    return None


async def request(hub: Hub, secret: str, uid: str, where: str, stats: MoveStats) -> bool:
    """One move request as /a.kropki makes it; False when the hub refused the move."""
    before = hub.writes()
    try:
        hub.move(secret, uid, where)
    except ProtocolError:
        stats.refused += 1
        await hub.settled(before)
        return False
    await hub.settled(before)
    return True


async def open_tables(hub: Hub, count: int, game_type: GameType, seed: int) -> list[Table]:
    before = hub.writes()
    tables = []
    for number in range(1, count + 1):
        blue, red = f"b{number}", f"r{number}"
        hub.guest_login(blue, f"*{blue}", "en")
        hub.guest_login(red, f"*{red}", "en")
        uid = hub.open_table(game_type, f"*{blue}", f"*{red}").uid
        rng = random.Random(seed * 100_003 + number)
        room = hub.tables[uid].room
        assert room is not None
        candidates = room.game.board.board_indices()
        rng.shuffle(candidates)
        tables.append(Table(uid, blue, red, candidates, rng))
    await hub.settled(before)
    return tables


async def play(hub: Hub, table: Table, stats: MoveStats, args: argparse.Namespace, start: float) -> None:
    """Steady play at one table from `start` (loop time): a move every --move-every seconds +- jitter,
    the first at a random moment of the first period, until the window ends."""
    loop = asyncio.get_running_loop()
    measured_from, end = start + args.warmup, start + args.warmup + args.seconds
    due = start + table.rng.random() * args.move_every
    uid = str(table.uid)
    while True:
        await asyncio.sleep(max(0.0, due - loop.time()))
        if loop.time() >= end:
            return
        chosen = pick(hub, table)
        if chosen is None:
            stats.finished += 1
            return
        began = time.perf_counter()
        accepted = await request(hub, chosen[0], uid, chosen[1], stats)
        done = time.perf_counter()
        if accepted and due >= measured_from:
            stats.latencies.append(done - began)
            stats.lags.append(loop.time() - due)
        due += args.move_every * table.rng.uniform(1 - args.jitter, 1 + args.jitter)


async def burst(hub: Hub, tables: list[Table], stats: MoveStats) -> None:
    """Every table's player on move moves at once; each move is timed from the burst's instant."""
    instant = time.perf_counter()

    async def one(table: Table) -> None:
        chosen = pick(hub, table)
        if chosen is None:
            return
        if await request(hub, chosen[0], str(table.uid), chosen[1], stats):
            stats.bursts.append(time.perf_counter() - instant)

    await asyncio.gather(*(one(table) for table in tables))


async def run_moves(store: Store | None, args: argparse.Namespace) -> MoveStats:
    """One mode: the journal on (the store's writer) or off (MemoryPersistence, when `store` is None)."""
    stats = MoveStats("on" if store is not None else "off")
    persistence: Persistence = store.writer if store is not None else MemoryPersistence()
    hub = Hub(persistence=persistence, rng=random.Random(args.seed))
    if store is not None:
        hub.restore({}, 1, await store.writer.load_sessions())  # as the app starts: the sessions' key
    first_write = hub.writes()
    began = time.perf_counter()
    tables = await open_tables(hub, args.tables, args.game_type, args.seed)
    stats.setup_seconds = time.perf_counter() - began
    timer = stats.batches = BatchTimer(store.writer) if store is not None else None
    gc.collect()

    loop = asyncio.get_running_loop()
    start = loop.time()

    async def sample_window() -> None:
        await asyncio.sleep(start + args.warmup - loop.time())
        stats.cpu.start()
        if timer is not None:
            timer.phase = "steady"
        await asyncio.sleep(start + args.warmup + args.seconds - loop.time())
        stats.cpu.stop()
        if timer is not None:
            timer.phase = None

    await asyncio.gather(sample_window(), *(play(hub, t, stats, args, start) for t in tables))
    for _ in range(args.bursts):
        await asyncio.sleep(args.burst_gap)
        if timer is not None:
            timer.phase = "burst"
        await burst(hub, tables, stats)
        if timer is not None:
            timer.phase = None
    await hub.settled(first_write)  # everything written before the next mode begins
    hub.close()
    return stats


def report_moves(stats: MoveStats, args: argparse.Namespace) -> None:
    latencies, lags, bursts = sorted(stats.latencies), sorted(stats.lags), sorted(stats.bursts)
    label = "journal ON (store writer)" if stats.mode == "on" else "journal OFF (MemoryPersistence)"
    print(f"\n== moves, {label} ==")
    print(f"set-up: {args.tables} tables opened in {stats.setup_seconds:.2f} s")
    print(
        f"steady: {len(latencies)} moves in {args.seconds:g} s = {len(latencies) / args.seconds:.0f} moves/s "
        f"(about {args.tables / args.move_every:.0f}/s planned); {stats.refused} refused, "
        f"{stats.finished} tables finished their game"
    )
    print(f"  move request (hub.move -> settled) ms: {ms(latencies, 50, 90, 99)}")
    print(f"  due -> answered (adds the event loop's lateness) ms: {ms(lags, 50, 90, 99)}")
    if stats.batches is not None:
        print(f"  {stats.batches.line('steady', args.seconds)}")
    print(f"  {stats.cpu.line()}")
    print(
        f"bursts: {args.bursts} x {args.tables} tables moving at one instant, {len(bursts)} moves; "
        f"instant -> answered ms: {ms(bursts, 50, 90, 99)}"
    )
    if stats.batches is not None and args.bursts:
        print(f"  {stats.batches.line('burst')}")


# --- archive throughput --------------------------------------------------------------------------------


def random_game(game_type: GameType, moves: int, rng: random.Random, seed: int) -> Game:
    """A game of `moves` random legal moves, then the player on move resigns."""
    game = game_for_type(game_type, seed=seed)
    board = game.board
    points = board.board_indices()
    rng.shuffle(points)
    for index in points:
        if len(game.moves) >= moves or game.result is not None:
            break
        if board.playable(index):
            game.play(game.to_move, MoveSpec(board.point(index)))
    if game.result is None:
        game.resign(game.to_move)
    return game


@dataclass
class ArchiveStats:
    label: str
    games: int = 0
    moves: int = 0
    seconds: float = 0.0
    archived: int = 0  # done() callbacks
    numbers: set[int] = field(default_factory=set)
    accounts_changed: int = 0
    batches: BatchTimer | None = None
    db_bytes: int = 0
    wal_bytes: int = 0
    sgf_bytes: int = 0
    cpu: Cpu = field(default_factory=Cpu)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


async def run_archive(
    label: str,
    url_path: Path,
    records: list[tuple[FinishedGame, int]],
    accounts: int,
    args: argparse.Namespace,
) -> ArchiveStats:
    """A fresh database; `accounts` registered players (0: guests); every game queued, then flushed."""
    stats = ArchiveStats(label)
    store = await Store.open(f"sqlite+aiosqlite:///{url_path}", upgrade=True)
    try:
        nicks: list[str] = []
        for number in range(1, accounts + 1):
            account = await store.accounts.register(f"Bench{number}", f"benchsecret{number:04d}", "", "en")
            nicks.append(account.nick)
        rng = random.Random(args.seed)
        ranked = events.game_type_text(dataclasses.replace(args.game_type, kind=GameKind.RANKED))
        games = []
        for finished, _moves in records:
            if nicks:
                blue, red = rng.sample(nicks, 2)
                record = dataclasses.replace(finished.record, black_name=blue, white_name=red)
                finished = dataclasses.replace(
                    finished, record=record, blue=blue, red=red, game_type=ranked, rated=True
                )
            else:
                finished = dataclasses.replace(finished, record=dataclasses.replace(finished.record))
            games.append(finished)
        stats.batches = BatchTimer(store.writer)
        stats.batches.phase = "archive"

        def done(number: int, changed: list[Account]) -> None:
            stats.archived += 1
            stats.numbers.add(number)
            stats.accounts_changed += len(changed)

        gc.collect()
        stats.cpu.start()
        began = time.perf_counter()
        for finished in games:
            store.writer.archive(finished, done)
        await store.writer.flush()
        stats.seconds = time.perf_counter() - began
        stats.cpu.stop()
        stats.games = len(games)
        stats.moves = sum(moves for _, moves in records)
        stats.db_bytes = file_size(url_path)
        stats.wal_bytes = file_size(url_path.with_name(url_path.name + "-wal"))
        async with store.engine.connect() as connection:
            stats.sgf_bytes = (
                await connection.exec_driver_sql("SELECT sum(length(sgf)) FROM games")
            ).scalar() or 0
    finally:
        await store.close()
    # closing the last connection checkpoints the WAL into the file and removes it
    stats.db_bytes = file_size(url_path)
    return stats


def build_records(args: argparse.Namespace) -> tuple[list[tuple[FinishedGame, int]], float]:
    rng = random.Random(args.seed)
    began = time.perf_counter()
    records = []
    date = time.strftime("%Y-%m-%d", time.gmtime())
    type_text = events.game_type_text(args.game_type)
    for number in range(1, args.games + 1):
        game = random_game(args.game_type, rng.randint(args.min_moves, args.max_moves), rng, number)
        blue, red = f"*b{number}", f"*r{number}"
        record = game_to_record(game, black_name=blue, white_name=red, date=date)
        finished = FinishedGame(
            uid=number,
            record=record,
            blue=blue,
            red=red,
            game_type=type_text,
            result=game.result,
            rated=False,
            tournament=None,
            game_index=0,
            journal_seq=number,  # any: one "archived" journal entry per game, (uid, seq) unique
        )
        records.append((finished, len(game.moves)))
    return records, time.perf_counter() - began


def report_archive(stats: ArchiveStats) -> None:
    rate = stats.games / stats.seconds if stats.seconds else math.nan
    print(f"\n== archive, {stats.label} ==")
    print(
        f"{stats.games} games ({stats.moves / max(1, stats.games):.0f} moves each on average) queued at once "
        f"and written in {stats.seconds:.2f} s = {rate:,.0f} games/s; "
        f"{stats.archived} archived callbacks, {len(stats.numbers)} distinct numbers, "
        f"{stats.accounts_changed} rating changes"
    )
    print(
        f"database: {stats.db_bytes / 1e6:.1f} MB after closing "
        f"({stats.wal_bytes / 1e6:.1f} MB of WAL before), "
        f"{stats.db_bytes / max(1, stats.games) / 1024:.1f} KiB per game; SGF text "
        f"{stats.sgf_bytes / max(1, stats.games) / 1024:.1f} KiB per game"
    )
    if stats.batches is not None:
        print(stats.batches.line("archive"))
        longest = max(stats.batches.seconds.get("archive", [0.0]))
        print(
            f"(the writer was busy with one batch for up to {longest:.1f} s; a request answered meanwhile "
            f"waits for all of it in hub.settled(), which gives up after {SETTLE_TIMEOUT:g} s)"
        )
    print(stats.cpu.line())


# --- main ----------------------------------------------------------------------------------------------


async def run(args: argparse.Namespace, workdir: Path) -> bool:
    ok = True
    summary = []
    if args.part in ("moves", "both"):
        off = await run_moves(None, args)
        report_moves(off, args)
        store = await Store.open(f"sqlite+aiosqlite:///{workdir}/bench.sqlite3", upgrade=True)
        try:
            on = await run_moves(store, args)
        finally:
            await store.close()
        report_moves(on, args)
        steady = percentile(sorted(on.latencies), 99) - percentile(sorted(off.latencies), 99)
        lags = percentile(sorted(on.lags), 99) - percentile(sorted(off.lags), 99)
        bursts = percentile(sorted(on.bursts), 99) - percentile(sorted(off.bursts), 99)
        refused = on.refused + off.refused
        met = bool(on.latencies and off.latencies) and steady * 1000 < TARGET_ADDED_P99_MS and not refused
        ok = ok and met
        summary += [
            f"journal's added p99 per move request: steady play {steady * 1000:.2f} ms (due -> answered, "
            f"noisier: {lags * 1000:.2f} ms); bursts of {args.tables} moves at one instant "
            f"{bursts * 1000:.2f} ms",
            f"{'PASS' if met else 'FAIL'}: journaling adds {steady * 1000:.2f} ms to a move's p99 under "
            f"steady play (target < {TARGET_ADDED_P99_MS:g} ms); {refused} refused moves (target 0)",
        ]
    if args.part in ("archive", "both"):
        records, took = build_records(args)
        print(
            f"\n(archive set-up: {len(records)} random games played and recorded in {took:.1f} s, not timed)"
        )
        runs = [("between guests", "guests", records, 0)]
        if args.accounts:
            label = f"rated, between {args.accounts} registered players"
            runs.append((label, "rated", records[: args.rated_games], args.accounts))
        for label, name, chosen, accounts in runs:
            stats = await run_archive(label, workdir / f"archive-{name}.sqlite3", chosen, accounts, args)
            report_archive(stats)
            lost = stats.games - stats.archived
            ok = ok and lost == 0
            summary.append(
                f"archive {label}: {stats.games / stats.seconds:,.0f} games/s"
                + (f"; {lost} games NOT archived" if lost else "")
            )
    print("\n== summary ==")
    for line in summary:
        print(line)
    return ok


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--tables", type=int, default=200, help="game tables moving at once, two guests each")
    add("--seconds", type=float, default=20.0, help="measured window of steady play, per mode")
    add("--warmup", type=float, default=2.0, help="seconds of play before the window, per mode")
    add("--move-every", type=float, default=1.0, help="seconds between two moves at a table")
    add("--jitter", type=float, default=0.3, help="each gap is --move-every times 1 +- this, at random")
    add("--bursts", type=int, default=10, help="bursts after the window: every table moves at one instant")
    add("--burst-gap", type=float, default=0.3, help="seconds before each burst")
    add("--game-type", default="3932noT4F0.0.0", help="game type of the tables and the archived games")
    add("--games", type=int, default=2000, help="finished games archived between guests")
    add("--min-moves", type=int, default=100, help="fewest moves in an archived game")
    add("--max-moves", type=int, default=200, help="most moves in an archived game")
    add("--rated-games", type=int, default=500, help="games archived in the rated run (the first --games)")
    add("--accounts", type=int, default=4, help="registered players of the rated archive run (0: skip it)")
    add("--part", choices=("moves", "archive", "both"), default="both", help="what to measure")
    add("--seed", type=int, default=1)
    args = parser.parse_args()
    if min(args.tables, args.seconds, args.move_every, args.games, args.rated_games) <= 0 or args.warmup < 0:
        parser.error("--tables, --seconds, --move-every, --games, --rated-games positive; --warmup >= 0")
    if not 0 <= args.jitter < 1 or args.bursts < 0 or args.burst_gap < 0:
        parser.error("--jitter must be in [0, 1), --bursts and --burst-gap >= 0")
    if not 0 < args.min_moves <= args.max_moves or args.accounts == 1 or args.accounts < 0:
        parser.error("need 0 < --min-moves <= --max-moves, and --accounts 0 or at least 2")
    try:
        args.game_type = parse_game_type(args.game_type)
    except GameTypeError as bad:
        parser.error(f"--game-type: {bad}")
    if args.game_type.kind in (GameKind.AI, GameKind.ANALYSIS) or not args.game_type.automatic_enclosures:
        parser.error("--game-type: a game between two players with automatic enclosures")

    stop_as_on_ctrl_c()
    gt = args.game_type
    print(
        f"store benchmark: {os.cpu_count()} CPUs, {sys.executable}; SQLite in a temporary folder; "
        f"game type {events.game_type_text(gt)} ({gt.width}x{gt.height})"
    )
    print(f"server code: commit {server_revision()}")
    try:
        with tempfile.TemporaryDirectory(prefix="kropki-store-") as workdir:
            ok = asyncio.run(run(args, Path(workdir)))
    except KeyboardInterrupt:
        print("\ninterrupted")
        return 130
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
