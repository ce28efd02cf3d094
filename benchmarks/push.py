"""Push against polling (issue 48): idle players polling and on push, and games on push, in one run.

One real server (benchmarks/stream.py's Server, sized as benchmarks/scale.py sizes it) serves, side by
side, in this order:

1. --players guests log in (at --login-rate a second) and poll every 2 s as MultiPoints does (getMsg,
   msgFromClient=x) through a window of --seconds: the server's CPU per polling player.
2. The same sessions each open a push connection (`/push`, docs/protocol.md "Push") from their last
   message number and stop polling (with --pollers N, only the first N players poll in 1; the others
   log in now, at --login-rate, and push from their first reply on, as the built-in client does);
   after --settle seconds, a window of --seconds with nothing to push: the server's CPU per idle push
   player, and the RSS the connections added.
3. While those stay connected, --games pairs of guests log in (at --game-login-rate a second, by default
   --login-rate), set up a game each (an invitation and its answer inside polls), connect by push, and
   play: the table's sides take turns a second apart, so each side
   moves every 2 s, each move a frame of msgFromClient. The dots lie two points apart (no enclosure, no
   refusal). After --warm-up seconds, a window of --seconds: moves a second, the server's CPU per move,
   and for each move the time from sending its frame to the opponent's reading the frame with its `sa`
   line (p50, p99).

The load generator runs in --workers processes (aiohttp's WebSocket client, uvloop where installed);
its CPU is printed beside the server's. Targets (issue 48, at full size): an idle push player under a
fifth of a 2-s poller's CPU, 20,000 push players in one process under 1.5 GB (run with --players 20000
--pollers 10000: 20,000 pollers saturate the server before they switch),
2,000 games on push with move-to-opponent p99 under 20 ms. Windows shorter than the default 60 s leave
out some of an idle push connection's pings (every 22.5-37.5 s) and quiet polls (every 45-75 s).

    .venv/bin/python benchmarks/push.py                                  # full size
    .venv/bin/python benchmarks/push.py --players 1000 --games 200 --seconds 10 --warm-up 5
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream, scale)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from scale import sized_server  # noqa: E402
from stream import (  # noqa: E402
    HOST,
    HttpConnection,
    add_server_arguments,
    argument_parser,
    connect,
    generator_loop,
    machine_cpu_seconds,
    ms,
    parse_head,
    run_generator,
    server_revision,
    stop_as_on_ctrl_c,
    worker_processes,
)

from server.engine.moves import point_to_sgf  # noqa: E402

POLL_EVERY = 2.0  # seconds between a polling player's polls
TURN = 1.0  # seconds between a table's moves: each side moves every 2 s
GAME_TYPE = "3932s0..a.F.n...."  # 39x32, standard rules, the inviter blue and first, free, no clock
COLUMNS, ROWS = 20, 8  # a side's dots: every other column, every fourth row (blue's rows 0 mod 4, red's 2)
SA_LINE = re.compile(r"sa;([BW])\[([a-zA-Z]{2})")
TARGET_IDLE_RATIO = 0.2  # an idle push player's CPU over a poller's
TARGET_RSS_MB = 1536.0  # with --players 20000
TARGET_MOVE_P99_MS = 20.0
EXAMPLES_KEPT = 5


@dataclass
class Plan:
    port: int
    players: list[int]  # numbers of the idle players this worker drives
    tables: list[int]  # numbers of the games this worker plays (both sides)
    times: dict[str, float]  # monotonic: logins start, window edges, games start
    login_rate: float
    game_login_rate: float
    pollers: int  # players numbered below this poll first; the others log in and push at once
    timeout: float


@dataclass
class Stats:
    polls: int = 0
    poll_seconds: list[float] = field(default_factory=list)
    pushed_connected: int = 0
    frames: int = 0
    moves_sent: int = 0
    moves_in_window: int = 0
    move_seconds: list[float] = field(default_factory=list)  # sent in the window
    games_set_up: int = 0
    errors: int = 0
    examples: list[str] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)  # process CPU at each mark

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(what[:200])


async def _sleep_until(when: float) -> None:
    delay = when - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


class Guest:
    """One session: HTTP for its login and polls, then a push connection."""

    def __init__(self, name: str, plan: Plan, stats: Stats) -> None:
        self.secret, self.nick = name, f"*{name}"
        self.plan, self.stats = plan, stats
        self.http: HttpConnection | None = None
        self.seen = 0
        self.commands = 0
        self.socket: aiohttp.ClientWebSocketResponse | None = None

    async def get(self, target: str) -> bytes:
        if self.http is None or self.http.closed:
            self.http = await connect(self.plan.port, self.plan.timeout)
        status, body = await self.http.get(target)
        if status != 200:
            raise ValueError(f"HTTP {status} {body[:80]!r}")
        return body

    async def login(self) -> None:
        body = await self.get(f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis=%2A{self.secret}&lang=en")
        if body:
            raise ValueError(f"login {self.nick}: {body[:80]!r}")

    async def poll(self, commands: str = "x") -> bytes:
        body = await self.get(
            f"/a.kropki?co=getMsg&playerId={self.secret}&msgNo={self.seen}&msgFromClient={commands}"
        )
        head = parse_head(body)
        if head is None:
            raise ValueError(f"poll {self.nick}: {body[:80]!r}")
        self.seen = head[0]
        return body

    def command(self, kind: str, table: int, text: str) -> str:
        self.commands += 1
        return f"{kind}{self.commands}.{table}.{text}"

    async def push(self, http: aiohttp.ClientSession) -> None:
        if self.http is not None:
            self.http.close()
            self.http = None
        self.socket = await http.ws_connect(
            f"http://{HOST}:{self.plan.port}/push?co=getMsg&idGracza={self.secret}&msgNo={self.seen}",
            autoclose=True,
            heartbeat=None,
            max_msg_size=0,
        )


async def idle_player(number: int, plan: Plan, stats: Stats, http: aiohttp.ClientSession) -> None:
    """Log in, poll every 2 s through the polling window, then connect by push and read what comes."""
    times = plan.times
    guest = Guest(f"i{number}", plan, stats)
    if number >= plan.pollers:
        await pushing_player(guest, times["push.connect"] + (number - plan.pollers) / plan.login_rate, http)
        return
    await _sleep_until(times["logins"] + number / plan.login_rate)
    try:
        await guest.login()
        await guest.poll()
        slot = times["logins"] + number / plan.login_rate
        while True:
            slot += POLL_EVERY
            if slot >= times["polling.1"]:
                break
            await _sleep_until(slot)
            sent = time.perf_counter()
            await guest.poll()
            if slot >= times["polling.0"]:
                stats.polls += 1
                stats.poll_seconds.append(time.perf_counter() - sent)
        await _sleep_until(times["push.connect"] + (number % 1000) / 1000 * plan_spread(plan))
        await read_pushed(guest, http)
    except (OSError, TimeoutError, ValueError, aiohttp.ClientError) as failure:
        stats.error(f"idle {guest.nick}: {failure!r}")
    finally:
        if guest.http is not None:
            guest.http.close()


async def pushing_player(guest: Guest, when: float, http: aiohttp.ClientSession) -> None:
    """Log in at `when` and push from the first reply on, as the built-in client does: never polling."""
    await _sleep_until(when)
    try:
        await guest.login()
        await guest.poll()
        await read_pushed(guest, http)
    except (OSError, TimeoutError, ValueError, aiohttp.ClientError) as failure:
        guest.stats.error(f"pushing {guest.nick}: {failure!r}")
    finally:
        if guest.http is not None:
            guest.http.close()


async def read_pushed(guest: Guest, http: aiohttp.ClientSession) -> None:
    """Connect by push and count the frames, each a reply, until the connection ends."""
    stats = guest.stats
    await guest.push(http)
    stats.pushed_connected += 1
    assert guest.socket is not None
    async for message in guest.socket:
        if message.type is aiohttp.WSMsgType.TEXT:
            stats.frames += 1
            if not message.data.startswith(("ok/", "sd/")):
                stats.error(f"idle {guest.nick}: {message.data[:80]}")


def plan_spread(plan: Plan) -> float:
    """Seconds over which the idle players open their push connections."""
    return plan.times["push.settled"] - plan.times["push.connect"] - 1.0


@dataclass
class Board:
    """A table as its two clients see it: whose turn, the moves sent and not yet seen by the other."""

    uid: int = 0
    moves: int = 0  # moves made so far (the next one's number)
    sent: dict[str, float] = field(default_factory=dict)  # point -> perf_counter when its frame went
    in_window: set[str] = field(default_factory=set)
    seen: asyncio.Event = field(default_factory=asyncio.Event)  # the last move reached the opponent


def dot(move: int) -> str:
    """The table's `move`th dot: blue (even moves) on rows 0 mod 4, red on rows 2 mod 4, columns two
    apart: no two dots of one colour touch, so nothing is ever enclosed."""
    index, side = divmod(move, 2)
    column, row = index % COLUMNS, index // COLUMNS % ROWS
    return point_to_sgf((2 * column, 4 * row + 2 * side))


async def read_frames(guest: Guest, board: Board, colour: str, stats: Stats) -> None:
    assert guest.socket is not None
    async for message in guest.socket:
        if message.type is not aiohttp.WSMsgType.TEXT:
            continue
        stats.frames += 1
        text = message.data
        if not text.startswith("ok/"):
            stats.error(f"game {guest.nick}: {text[:80]}")
            continue
        if "..e." in text:
            stats.error(f"game {guest.nick}: refused {text[:160]}")
        for found in SA_LINE.finditer(text):
            if found[1] == colour:
                continue
            sent = board.sent.pop(found[2], None)
            if sent is None:
                continue
            if found[2] in board.in_window:
                board.in_window.discard(found[2])
                stats.move_seconds.append(time.perf_counter() - sent)
            board.seen.set()


async def game(number: int, plan: Plan, stats: Stats, http: aiohttp.ClientSession) -> None:
    """Set up one game by invitation, then both sides push and move in turn until the window's end."""
    times = plan.times
    blue, red = Guest(f"b{number}", plan, stats), Guest(f"r{number}", plan, stats)
    board = Board()
    await _sleep_until(times["games.setup"] + 2 * number / plan.game_login_rate)
    try:
        for guest in (blue, red):
            await guest.login()
            await guest.poll()
        await blue.poll(blue.command("v", 0, f"s.{red.nick}.{GAME_TYPE}"))
        for _ in range(50):
            if b"vg" in await red.poll():
                break
            await asyncio.sleep(0.1)
        accepted = await red.poll(red.command("v", 0, "a"))
        tables = [int(part[1:]) for part in accepted.split(b"/") if re.fullmatch(rb"q\d+", part)]
        board.uid = max(tables)
        if board.uid == 0:
            raise ValueError(f"no table for {red.nick}: {accepted[:120]!r}")
        await blue.poll()
        for guest in (blue, red):
            await guest.push(http)
        stats.games_set_up += 1
    except (OSError, TimeoutError, ValueError, aiohttp.ClientError) as failure:
        stats.error(f"set-up {number}: {failure!r}")
        return
    readers = [
        asyncio.create_task(read_frames(blue, board, "B", stats)),
        asyncio.create_task(read_frames(red, board, "W", stats)),
    ]
    board.seen.set()
    slot = times["games.play"] + (number % 1000) / 1000 * TURN * 2
    try:
        while slot < times["games.1"]:
            await _sleep_until(slot)
            if not board.seen.is_set():  # the opponent has not seen the last move yet: wait for it
                await asyncio.wait_for(board.seen.wait(), plan.timeout)
            mover = blue if board.moves % 2 == 0 else red
            point = dot(board.moves)
            board.seen.clear()
            board.sent[point] = time.perf_counter()
            if slot >= times["games.0"]:
                board.in_window.add(point)
                stats.moves_in_window += 1
            assert mover.socket is not None
            await mover.socket.send_str(mover.command("s", board.uid, point))
            stats.moves_sent += 1
            board.moves += 1
            slot = max(slot + TURN, time.monotonic())
    except (OSError, TimeoutError, ValueError, aiohttp.ClientError) as failure:
        stats.error(f"game {board.uid}: {failure!r}")
    finally:
        await _sleep_until(times["games.1"] + 1.0)
        for guest in (blue, red):
            if guest.socket is not None:
                await guest.socket.close()
        for reader in readers:
            reader.cancel()


async def drive(plan: Plan) -> Stats:
    stats = Stats()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        idle = [asyncio.create_task(idle_player(n, plan, stats, http)) for n in plan.players]

        async def marks() -> None:
            for name in sorted(plan.times, key=plan.times.__getitem__):
                await _sleep_until(plan.times[name])
                stats.cpu[name] = time.process_time()

        meter = asyncio.create_task(marks())
        await asyncio.gather(*(game(n, plan, stats, http) for n in plan.tables))
        await meter
        for task in idle:
            task.cancel()
        await asyncio.gather(*idle, return_exceptions=True)
    return stats


def worker(plan: Plan, pipe: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pipe.send(("result", run_generator(drive(plan))))
    except BaseException:
        pipe.send(("failed", traceback.format_exc()))


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--players", type=int, default=10_000, help="idle players: polling, then on push")
    add(
        "--pollers",
        type=int,
        help="of the players, how many poll first (--players); the others log in once the pollers switch "
        "to push, at --login-rate, and push at once, as the built-in client does",
    )
    add("--games", type=int, default=2_000, help="games on push")
    add("--seconds", type=float, default=60.0, help="each window")
    # A server that has just grown to 2,000 games makes a full collection or two as its oldest generation
    # doubles (server/gcschedule.py): 0.23-0.45 s each, once; with 10 s of play before the window, one of
    # them fell inside it (p99 466 ms, against 8.4 ms with 60 s). The window measures the steady state.
    add("--warm-up", type=float, default=60.0, help="seconds of play before the games' window")
    add("--settle", type=float, default=10.0, help="seconds for the push connections to open")
    add("--login-rate", type=float, default=200.0, help="logins a second")
    add("--game-login-rate", type=float, help="the games' players' logins a second (--login-rate)")
    add("--workers", type=int, default=4, help="load generator processes")
    add_server_arguments(parser)
    parser.add_argument("--root", type=Path, default=HERE.parent, help=argparse.SUPPRESS)
    args = parser.parse_args()
    stop_as_on_ctrl_c()
    with tempfile.TemporaryDirectory(prefix="kropki-push-") as folder:
        server = sized_server(args, Path(folder), args.players + 2 * args.games, args.games)
        try:
            server.start()
            return run(args, server)
        finally:
            server.stop()


def run(args: argparse.Namespace, server: object) -> int:
    print(
        f"push benchmark: {args.players} idle players (polling every {POLL_EVERY:g} s, then on push), "
        f"{args.games} games on push (each side moving every {2 * TURN:g} s); windows of {args.seconds:g} s; "
        f"{args.workers} load generator process(es) on {generator_loop()}; server {server_revision()}"
    )
    began = time.monotonic() + 3.0
    pollers = args.players if args.pollers is None else min(args.pollers, args.players)
    logged_in = began + pollers / args.login_rate + 2 * POLL_EVERY
    times = {"logins": began, "polling.0": logged_in, "polling.1": logged_in + args.seconds}
    times["push.connect"] = times["polling.1"] + POLL_EVERY
    joining = (args.players - pollers) / args.login_rate  # the players who push at once log in meanwhile
    times["push.settled"] = times["push.connect"] + joining + args.settle
    times["idle.0"] = times["push.settled"]
    times["idle.1"] = times["idle.0"] + args.seconds
    times["games.setup"] = times["idle.1"]
    game_login_rate = args.game_login_rate or args.login_rate
    times["games.play"] = (
        times["games.setup"] + 2 * args.games / game_login_rate + 5.0 + max(5.0, args.games / 100)
    )
    times["games.0"] = times["games.play"] + args.warm_up
    times["games.1"] = times["games.0"] + args.seconds
    workers = max(1, args.workers)
    plans = [
        Plan(
            server.port,  # type: ignore[attr-defined]
            list(range(n, args.players, workers)),
            list(range(n, args.games, workers)),
            times,
            args.login_rate,
            game_login_rate,
            pollers,
            args.timeout,
        )
        for n in range(workers)
    ]
    samples: dict[str, tuple[float, float, float]] = {}  # mark -> server CPU, machine CPU, RSS MB
    results: dict[int, Stats] = {}
    with worker_processes(worker, plans) as pipes:
        deadline = times["games.1"] + 60.0
        while len(results) < len(pipes):
            now = time.monotonic()
            for name, when in times.items():
                if name not in samples and now >= when:
                    samples[name] = (server.cpu_seconds(), machine_cpu_seconds(), server.rss_mb())  # type: ignore[attr-defined]
            if now > deadline:
                raise RuntimeError("the load generator did not finish in time")
            due = min([deadline] + [t for n, t in times.items() if n not in samples])
            for pipe in wait([p for i, p in enumerate(pipes) if i not in results], max(0.0, due - now)):
                assert isinstance(pipe, Connection)
                kind, value = pipe.recv()
                if kind == "failed":
                    raise RuntimeError(f"load generator failed:\n{value}")
                results[pipes.index(pipe)] = value
    return report(args, list(results.values()), samples, server)


def _between(samples: dict[str, tuple[float, float, float]], start: str, end: str, which: int) -> float:
    if start not in samples or end not in samples:
        return math.nan
    return samples[end][which] - samples[start][which]


def report(
    args: argparse.Namespace,
    stats: list[Stats],
    samples: dict[str, tuple[float, float, float]],
    server: object,
) -> int:
    seconds = args.seconds
    errors = sum(s.errors for s in stats)
    polls = sum(s.polls for s in stats)
    poll_latency = sorted(x for s in stats for x in s.poll_seconds)
    connected = sum(s.pushed_connected for s in stats)
    moves = sorted(x for s in stats for x in s.move_seconds)
    moves_in_window = sum(s.moves_in_window for s in stats)
    games = sum(s.games_set_up for s in stats)

    def generator(start: str, end: str) -> float:
        return sum(s.cpu.get(end, math.nan) - s.cpu.get(start, math.nan) for s in stats)

    poll_cpu = _between(samples, "polling.0", "polling.1", 0)
    idle_cpu = _between(samples, "idle.0", "idle.1", 0)
    game_cpu = _between(samples, "games.0", "games.1", 0)
    pollers = args.players if args.pollers is None else min(args.pollers, args.players)
    per_poller = poll_cpu / seconds / max(1, pollers)
    per_pusher = idle_cpu / seconds / max(1, connected)
    ratio = per_pusher / per_poller if per_poller else math.nan
    rss_polling = samples.get("polling.1", (0, 0, math.nan))[2]
    rss_pushing = samples.get("idle.1", (0, 0, math.nan))[2]
    rss_games = samples.get("games.1", (0, 0, math.nan))[2]
    added = (rss_pushing - rss_polling) * 1024 / max(1, connected)
    rss_before = samples.get("logins", (0, 0, math.nan))[2]
    at_full = rss_before + (rss_pushing - rss_before) * 20_000 / max(1, connected)
    per_poll_us = poll_cpu / max(1, polls) * 1e6
    per_move_us = game_cpu / max(1, moves_in_window) * 1e6
    print(
        f"polling: {pollers} players, {polls} polls in {seconds:g} s ({polls / seconds:.0f}/s), "
        f"latency {ms(poll_latency, 50, 99)}"
    )
    print(
        f"  server CPU {poll_cpu / seconds:.1%} of a core: {per_poller * 1e6:.1f} us a second per player "
        f"({per_poll_us:.0f} us a poll); generator {generator('polling.0', 'polling.1') / seconds:.1%}"
    )
    print(f"  server RSS {rss_polling:.0f} MB ({rss_before:.0f} MB before the logins)")
    print(
        f"push, idle: {connected} connections; server CPU {idle_cpu / seconds:.1%} of a core: "
        f"{per_pusher * 1e6:.2f} us a second per player"
    )
    print(f"  {ratio:.3f} of a poller's CPU (target < {TARGET_IDLE_RATIO:g})")
    over = (
        "over its polling session" if pollers == args.players else "(the sessions that never polled included)"
    )
    print(f"  server RSS {rss_pushing:.0f} MB ({added:+.1f} KB a push connection {over})")
    print(f"  20,000 push players at this rate: about {at_full:.0f} MB (target < {TARGET_RSS_MB:.0f} MB)")
    print(
        f"games on push: {games} of {args.games} set up, {moves_in_window} moves in {seconds:g} s "
        f"({moves_in_window / seconds:.0f}/s) beside the idle push players"
    )
    print(f"  move to opponent {ms(moves, 50, 99)} ({len(moves)} measured)")
    print(f"  target p99 < {TARGET_MOVE_P99_MS:g} ms")
    print(
        f"  server CPU {game_cpu / seconds:.1%} of a core: {per_move_us:.0f} us a move (the idle push "
        f"players' share included); generator {generator('games.0', 'games.1') / seconds:.1%}"
    )
    print(f"  server RSS {rss_games:.0f} MB")
    machine = _between(samples, "games.0", "games.1", 1) / seconds
    print(f"machine CPU in the games' window: {machine:.0%} of a core (all processes)")
    print(f"errors: {errors}")
    for example in [e for s in stats for e in s.examples][:EXAMPLES_KEPT]:
        print(f"  {example}")
    p99 = moves[min(len(moves) - 1, int(len(moves) * 0.99))] * 1000 if moves else math.inf
    judged = {"no errors": errors == 0}  # each target only where the run has what it is about
    if args.players:
        judged["idle ratio"] = ratio < TARGET_IDLE_RATIO
    if args.players >= 20_000:
        judged["RSS at 20,000"] = at_full < TARGET_RSS_MB
    if args.games:
        judged["move p99"] = p99 < TARGET_MOVE_P99_MS
    passed = all(judged.values())
    print(
        "PASS" if passed else "FAIL",
        ", ".join(f"{name} {'met' if ok else 'not met'}" for name, ok in judged.items()),
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
