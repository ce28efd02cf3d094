"""One process at its limit (issue 19): 10,000 polling guests, 2,000 games, empty polls against aiohttp.

Each section starts the real server as a subprocess (benchmarks/stream.py's Server: `python -m server
serve` on a free 127.0.0.1 port, a throwaway SQLite file, `--unlimited 127.0.0.1`, caps raised to fit
the load) and drives it with stream.py's minimal keep-alive HTTP client from --workers processes, whose
CPU is printed beside the server's so a reader can tell who was the bottleneck. Each prints its figures
and PASS or FAIL against its targets; the server is always stopped at the end.

Section "guests": --guests guests log in at --login-rate a second (each at a moment drawn from its own
1/rate slot, as players do not log in on a grid), each polling every 2 s (getMsg with msgFromClient=x,
as MultiPoints does) from its login on, so every login happens while the players already in poll.
Two bands of --band logins are measured: the ones around the --first-mark'th login and the last ones
(around the --guests'th), each between --quiet seconds with no login, so that the server's CPU per
login is what the band costs above the polling around it (from /proc/<pid>/stat).
Per login: login + first poll (msgNo=0) until its reply. Then --guest-seconds of polling alone.
`--stream getBMsg` polls as the built-in client's stream does (getBMsg, msgNo=0.0 then <j>.1: its whole
state carries every player's `b` line), still every 2 s.
Targets: window p99 below 100 ms, no errors, server RSS below 1.5 GB; the last band's median login +
first poll, and its CPU per login, at most three times the first band's.

Section "games": benchmarks/games.py with --games tables, each side moving every 2 s, for 10 s of
warm-up (none with --quick), then --game-seconds; /metrics's kropki_gc_pause_seconds is read at the
window's start and after the drain.
Targets: p99 move -> opponent below 100 ms, no errors, RSS below 1 GB, no collection over 20 ms in the
window.

Section "empty": stream.py's "empty" scenario (--empty-clients guests polling back to back with
msgFromClient=x), then the same generator against a hello-world aiohttp app (a GET answered with a
short text, `web.run_app` as it comes: asyncio's loop) run by the same interpreter as a process of its
own, taking turns for --empty-rounds rounds in this run. Target: the server's best rate at least 0.8 of
the hello-world's best. The server runs on the loop `serve` picks (uvloop where installed), so the
hello-world is also run on uvloop and that ratio printed too: it tells what is left beyond the loop.

Section "instructions": benchmarks/instructions.py, the same comparison counted instead of timed: the
instructions an empty poll costs the server's process under valgrind's callgrind, against the
hello-worlds', which the host's speed does not move (a timed ratio does: docs/performance.md). Target:
the hello-world's count at least 0.8 of the poll's. Needs valgrind.

    .venv/bin/python benchmarks/scale.py                 # every section at full size (about 13 minutes)
    .venv/bin/python benchmarks/scale.py --only guests --guests 5000
    .venv/bin/python benchmarks/scale.py --quick         # a minute: the sizes tests/test_benchmarks.py runs
    .venv/bin/python benchmarks/scale.py --before ../old  # each section on that checkout, then on this one
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream, games)
    if _path not in sys.path:
        sys.path.insert(0, _path)

import games  # noqa: E402
import instructions  # noqa: E402
import stream  # noqa: E402
from stream import (  # noqa: E402
    REPO,
    HelloWorld,
    HelloWorldOnUvloop,
    HttpConnection,
    Server,
    add_server_arguments,
    argument_parser,
    connect,
    fill_sizes,
    generator_loop,
    machine_cpu_seconds,
    ms,
    parse_head,
    percentile,
    run_generator,
    server_revision,
    stop_as_on_ctrl_c,
    watchdog,
    worker_processes,
)

POLL_EVERY = 2.0  # seconds between a guest's polls
TARGET_GUEST_P99_MS = 100.0
TARGET_GUEST_RSS_MB = 1536.0
TARGET_LOGIN_GROWTH = 3.0  # the last band's cost over the first band's
TARGET_GAME_RSS_MB = 1024.0
TARGET_GC_PAUSE = 0.02  # seconds
TARGET_EMPTY_RATIO = 0.8
SATURATED = 0.95  # of a core: beyond it, what a band of logins cost cannot be measured
EXAMPLES_KEPT = 5

# Sizes: full (the targets) and --quick (seconds, for tests/test_benchmarks.py).
SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "guests": 10_000,
        "first_mark": 1_000,
        "band": 100,
        "login_rate": 50.0,
        "quiet": 4.0,
        "guest_seconds": 30.0,
        "games": 2_000,
        "game_seconds": 60.0,
        "empty_clients": 1_000,
        "empty_seconds": 10.0,
        "empty_rounds": 3,
    },
    "quick": {
        "guests": 60,
        "first_mark": 20,
        "band": 5,
        "login_rate": 50.0,
        "quiet": 1.0,
        "guest_seconds": 2.0,
        "games": 5,
        "game_seconds": 2.0,
        "empty_clients": 8,
        "empty_seconds": 1.0,
        "empty_rounds": 1,
    },
}


# --- section "guests" -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    """When each login happens, in seconds from the start: --login-rate a second, with a pause of
    --quiet before and after each band. The same in every process, so nobody needs telling."""

    guests: int
    rate: float
    quiet: float
    bands: tuple[tuple[int, int], ...]  # (first, last) guest numbers of each measured band, from 1

    @staticmethod
    def of(args: argparse.Namespace) -> Schedule:
        early = (max(1, args.first_mark - args.band + 1), min(args.guests, args.first_mark + args.band))
        late = (max(early[1] + 1, args.guests - 2 * args.band + 1), args.guests)
        bands = (early, late) if late[0] <= late[1] else (early,)
        return Schedule(args.guests, args.login_rate, args.quiet, bands)

    def login_at(self, number: int) -> float:
        """At a moment drawn (the same in every process) from the login's own 1/rate slot.

        On the slots' edges, login n came exactly when logins n-100, n-200... polled (2 s is 100 slots
        at 50 a second), so at 10,000 guests every login and every poll arrived with 99 others at the
        same instant, and the login's time was mostly the wait behind them (docs/performance.md, the
        twelfth session)."""
        return self._slot(number) + random.Random(number).random() / self.rate

    def _slot(self, number: int) -> float:
        pauses = sum(1 for first, last in self.bands if number >= first) + sum(
            1 for first, last in self.bands if number > last
        )
        return (number - 1) / self.rate + pauses * self.quiet

    def band_marks(self, band: int) -> tuple[float, float, float, float]:
        """Quiet before begins, band begins, band ends (quiet after begins), quiet after ends."""
        first, last = self.bands[band]
        began = self._slot(first)
        ended = self._slot(last) + 1 / self.rate
        return began - self.quiet, began, ended, ended + self.quiet

    def last_login(self) -> float:
        return self._slot(self.guests) + 1 / self.rate


@dataclass
class GuestPlan:
    port: int
    numbers: list[int]
    schedule: Schedule
    began: float  # monotonic time of the schedule's 0
    window: tuple[float, float]  # monotonic: the measured polling, after every login
    timeout: float
    deadline: float
    stream: str = "getMsg"  # or getBMsg, the built-in client's


@dataclass
class GuestStats:
    logins: list[tuple[int, float, float]] = field(default_factory=list)  # number, login s, first poll s
    late_logins: list[float] = field(default_factory=list)  # seconds behind the schedule when sent
    latencies: list[float] = field(default_factory=list)  # polls sent in the window
    other_polls: list[float] = field(default_factory=list)  # polls before the window, after the first
    reply_bytes: int = 0
    first_reply_bytes: list[tuple[int, int]] = field(default_factory=list)  # number, bytes
    missed_slots: int = 0
    errors: int = 0
    window_errors: int = 0
    examples: list[str] = field(default_factory=list)
    cpu_window: float = 0.0
    cpu_total: float = 0.0

    def error(self, in_window: bool, what: str) -> None:
        self.errors += 1
        self.window_errors += in_window
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(what)


class Guest:
    """A guest as MultiPoints is one: log in, poll with msgNo=0, then every 2 s with the last j (with
    `stream` getBMsg, the built-in client's msgNo: 0.0, then <j>.1)."""

    def __init__(self, number: int, plan: GuestPlan, stats: GuestStats) -> None:
        self.number, self.plan, self.stats = number, plan, stats
        self.secret, self.nick = f"s{number}", f"*s{number}"
        self.conn: HttpConnection | None = None  # read by stream.watchdog
        self.seen = 0

    async def _get(self, target: str) -> tuple[int, bytes]:
        if self.conn is None or self.conn.closed:
            self.conn = await connect(self.plan.port, self.plan.timeout)
        return await self.conn.get(target)

    async def poll(self, in_window: bool) -> tuple[float, int] | None:
        if self.plan.stream == "getBMsg":
            msg_no = f"{self.seen}.1" if self.seen else "0.0"
            target = f"/a.kropki?co=getBMsg&playerId={self.secret}&msgNo={msg_no}"
        else:
            target = f"/a.kropki?co=getMsg&playerId={self.secret}&msgNo={self.seen}&msgFromClient=x"
        sent = time.perf_counter()
        try:
            status, body = await self._get(target)
        except (OSError, TimeoutError, ValueError) as failure:
            self._drop()
            self.stats.error(in_window, f"poll {self.nick}: {failure!r}")
            return None
        head = parse_head(body) if status == 200 else None
        if head is None:
            self.stats.error(in_window, f"poll {self.nick}: HTTP {status} {body[:120]!r}")
            return None
        self.seen = head[0]
        return time.perf_counter() - sent, len(body)

    def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    async def run(self) -> None:
        plan, stats = self.plan, self.stats
        due = plan.began + plan.schedule.login_at(self.number)
        await _sleep_until(due)
        stats.late_logins.append(time.monotonic() - due)
        sent = time.perf_counter()
        target = f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis=%2As{self.number}&lang=en"
        try:
            status, body = await self._get(target)
        except (OSError, TimeoutError, ValueError) as failure:
            self._drop()
            stats.error(False, f"login {self.nick}: {failure!r}")
            return
        if status != 200 or body:
            stats.error(False, f"login {self.nick}: HTTP {status} {body[:120]!r}")
            return
        login = time.perf_counter() - sent
        first = await self.poll(False)
        if first is None:
            return
        stats.logins.append((self.number, login, first[0]))
        stats.first_reply_bytes.append((self.number, first[1]))
        start, end = plan.window
        slot = due
        while True:
            following = slot + POLL_EVERY
            slot = max(following, slot + POLL_EVERY * math.ceil((time.monotonic() - slot) / POLL_EVERY))
            if slot >= min(end, plan.deadline):
                break
            if slot >= start:
                stats.missed_slots += round((slot - following) / POLL_EVERY)
            await _sleep_until(slot)
            in_window = start <= slot
            answer = await self.poll(in_window)
            if answer is None:
                continue
            if in_window:
                stats.latencies.append(answer[0])
                stats.reply_bytes += answer[1]
            else:
                stats.other_polls.append(answer[0])
        self._drop()


async def _sleep_until(when: float) -> None:
    delay = when - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


async def drive_guests(plan: GuestPlan) -> GuestStats:
    started = time.process_time()
    stats = GuestStats()
    guests = [Guest(number, plan, stats) for number in plan.numbers]
    guard = asyncio.create_task(watchdog(guests, plan.timeout))  # type: ignore[arg-type]

    async def window_cpu() -> None:
        await _sleep_until(plan.window[0])
        at_start = time.process_time()
        await _sleep_until(plan.window[1])
        stats.cpu_window = time.process_time() - at_start

    meter = asyncio.create_task(window_cpu())
    await asyncio.gather(*(guest.run() for guest in guests))
    guard.cancel()
    # a guest stops at its last slot before the window's end: the meter runs to the window's end (one
    # cancelled when the guests were done printed 0% for the load generator)
    await meter
    stats.cpu_total = time.process_time() - started
    return stats


def guest_worker(plan: GuestPlan, pipe: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pipe.send(("result", run_generator(drive_guests(plan))))
    except BaseException:
        pipe.send(("failed", traceback.format_exc()))


def sized_server(args: argparse.Namespace, workdir: Path, players: int, tables: int = 0) -> Server:
    """The server with its caps above the load (the point is the load, not the caps). No slots are kept
    for registered players (--registered-share 0): the load is all guests, and with the default 20%
    kept the 8,801st guest of the 10,000 was refused (err.serverFull)."""
    extra = ("--max-players", str(players + 1_000), "--max-connections", str(players + 1_000))
    extra += ("--registered-share", "0")
    if tables:
        extra += ("--max-tables", str(tables + 500))
    return Server(args.python, args.log_level, workdir, None, extra=extra, root=args.root)


def guests_section(args: argparse.Namespace, workdir: Path) -> bool:
    schedule = Schedule.of(args)
    server = sized_server(args, workdir, args.guests)
    workers = max(1, min(args.workers, args.guests))
    print(
        f"{args.guests} guests logging in at {args.login_rate:g}/s, each polling ({args.stream}) every "
        f"{POLL_EVERY:g} s from its login; bands {schedule.bands} between {args.quiet:g} s without logins;"
        f" then {args.guest_seconds:g} s measured; {workers} load generator process(es) on {generator_loop()}"
    )
    try:
        server.start()
        print(f"server: pid {server.pid}, port {server.port}")
        began = time.monotonic() + 3.0  # the workers' interpreters start meanwhile
        window_start = began + schedule.last_login() + args.quiet + 2 * POLL_EVERY
        window = (window_start, window_start + args.guest_seconds)
        deadline = window[1] + args.timeout + 30.0
        plans = [
            GuestPlan(
                server.port,
                list(range(1 + n, args.guests + 1, workers)),
                schedule,
                began,
                window,
                args.timeout,
                deadline,
                args.stream,
            )
            for n in range(workers)
        ]
        marks = {
            f"band{b}.{i}": began + t
            for b in range(len(schedule.bands))
            for i, t in enumerate(schedule.band_marks(b))
        }
        marks |= {"window.0": window[0], "window.1": window[1]}
        speed = stream.HostSpeed()
        with worker_processes(guest_worker, plans) as pipes:
            results, cpu, rss = _collect(pipes, server, marks, deadline + 30.0, speed)
        rss.append(server.rss_mb())
    finally:
        server.stop()
    return report_guests(args, schedule, server, results, cpu, rss, speed.summary(*window))


def _collect(
    pipes: list[Connection],
    server: Server,
    marks: dict[str, float],
    deadline: float,
    speed: stream.HostSpeed,
) -> tuple[list[Any], dict[str, tuple[float, float]], list[float]]:
    """The workers' results; the server's and the machine's CPU at each mark; its RSS (and the host's
    speed) once a second."""
    results: dict[int, Any] = {}
    cpu: dict[str, tuple[float, float]] = {}
    rss = [server.rss_mb()]
    next_sample = time.monotonic() + 1.0
    while len(results) < len(pipes):
        now = time.monotonic()
        for name, when in marks.items():
            if name not in cpu and now >= when:
                cpu[name] = (server.cpu_seconds(), machine_cpu_seconds())
        if now >= next_sample:
            rss.append(server.rss_mb())
            speed.sample()
            next_sample += 1.0
        if now > deadline:
            raise RuntimeError("the load generator did not finish in time")
        due = min([next_sample, deadline] + [t for n, t in marks.items() if n not in cpu])
        for pipe in wait(
            [p for i, p in enumerate(pipes) if i not in results], max(0.0, due - time.monotonic())
        ):
            assert isinstance(pipe, Connection)
            number = pipes.index(pipe)
            try:
                kind, value = pipe.recv()
            except EOFError:
                raise RuntimeError(f"load generator {number} died") from None
            if kind == "failed":
                raise RuntimeError(f"load generator {number} failed:\n{value}")
            results[number] = value
    for name, when in marks.items():  # the workers end with the window: its end comes after them
        if name not in cpu:
            time.sleep(max(0.0, when - time.monotonic()))
            cpu[name] = (server.cpu_seconds(), machine_cpu_seconds())
    return [results[i] for i in range(len(pipes))], cpu, rss


def _cpu(cpu: dict[str, tuple[float, float]], start: str, end: str, which: int = 0) -> float:
    if start not in cpu or end not in cpu:
        return math.nan
    return cpu[end][which] - cpu[start][which]


def report_guests(
    args: argparse.Namespace,
    schedule: Schedule,
    server: Server,
    results: list[GuestStats],
    cpu: dict[str, tuple[float, float]],
    rss: list[float],
    host_speed: str,
) -> bool:
    logins = sorted(entry for s in results for entry in s.logins)
    late = sorted(x for s in results for x in s.late_logins)
    print(
        f"logins: {len(logins)} of {args.guests}; sent behind schedule s: p50 {percentile(late, 50):.2f} "
        f"max {late[-1] if late else math.nan:.2f}"
    )
    firsts = dict(entry for s in results for entry in s.first_reply_bytes)
    growth: list[float] = []
    cpu_growth: list[float] = []
    for band, (first, last) in enumerate(schedule.bands):
        costs = sorted(login + poll for number, login, poll in logins if first <= number <= last)
        alone = sorted(login for number, login, _ in logins if first <= number <= last)
        sizes = sorted(firsts[n] for n in range(first, last + 1) if n in firsts)
        quiet = (
            _cpu(cpu, f"band{band}.0", f"band{band}.1") + _cpu(cpu, f"band{band}.2", f"band{band}.3")
        ) / (2 * args.quiet)
        busy = _cpu(cpu, f"band{band}.1", f"band{band}.2")
        seconds = (last - first + 1) / args.login_rate
        per_login = (busy - quiet * seconds) / max(1, len(costs))
        print(
            f"band {band + 1}, logins {first}-{last}: {len(costs)} in; login + first poll ms "
            f"{ms(costs, 50, 90)} (login alone p50 {percentile(alone, 50) * 1000:.1f}); first reply bytes "
            f"p50 {percentile(sizes, 50):,.0f}"
        )
        print(
            f"  server CPU: {quiet:.0%} of a core without logins around it, {busy / seconds:.0%} during "
            f"it = {per_login * 1000:.1f} ms per login above the polling"
        )
        if max(quiet, busy / seconds) >= SATURATED:
            print("  the server was saturated: a login's CPU cannot be told from the polling's")
            per_login = math.inf
        growth.append(percentile(costs, 50))
        cpu_growth.append(per_login)
    latencies = sorted(x for s in results for x in s.latencies)
    others = sorted(x for s in results for x in s.other_polls)
    replies = len(latencies)
    print(f"polls during the logins (after each guest's first): {len(others)}, ms {ms(others, 50, 99)}")
    print(
        f"window: {args.guest_seconds:g} s, {replies} replies = {replies / args.guest_seconds:,.0f}/s "
        f"(expected {args.guests / POLL_EVERY:,.0f}/s), mean "
        f"{sum(s.reply_bytes for s in results) / max(1, replies):.0f} bytes; ms {ms(latencies, 50, 90, 99)}; "
        f"missed 2-second slots {sum(s.missed_slots for s in results)}"
    )
    errors = sum(s.errors for s in results)
    print(f"errors: {errors} ({sum(s.window_errors for s in results)} in the window)")
    for example in [e for s in results for e in s.examples][:EXAMPLES_KEPT]:
        print(f"    {example}")
    _print_cpu(server, cpu, "window.0", "window.1", args.guest_seconds, sum(s.cpu_window for s in results))
    print(host_speed)
    print(f"load generator CPU in all: {sum(s.cpu_total for s in results):.1f} s")
    print(f"server RSS MB: start {rss[0]:.1f} peak {max(rss):.1f} end {rss[-1]:.1f}")
    print(f"server log: {server.log_summary()}")
    p99 = percentile(latencies, 99) * 1000
    ok = replies > 0 and p99 < TARGET_GUEST_P99_MS and errors == 0 and max(rss) < TARGET_GUEST_RSS_MB
    print(
        f"{'PASS' if ok else 'FAIL'}: {args.guests} guests polling every {POLL_EVERY:g} s: p99 {p99:.1f} ms "
        f"(target < {TARGET_GUEST_P99_MS:g}), {errors} errors (target 0), peak RSS {max(rss):.0f} MB "
        f"(target < {TARGET_GUEST_RSS_MB:g})"
    )
    if len(growth) < 2:
        print("FAIL: login cost: only one band (--guests too close to --first-mark)")
        return False
    ratio = growth[1] / growth[0]
    if cpu_growth[0] > 0:
        cpu_ratio = cpu_growth[1] / cpu_growth[0]
        cpu_text = f"x{cpu_ratio:.2f}"
    else:  # a few logins cost less than the CPU clock's tick (10 ms): the latency alone is judged
        cpu_ratio, cpu_text = 0.0, "not measurable (under the CPU clock's tick)"
    grew_ok = ratio <= TARGET_LOGIN_GROWTH and cpu_ratio <= TARGET_LOGIN_GROWTH
    print(
        f"{'PASS' if grew_ok else 'FAIL'}: login of the {args.guests}th against the {args.first_mark}th: "
        f"login + first poll p50 x{ratio:.2f}, server CPU per login {cpu_text} "
        f"(target <= {TARGET_LOGIN_GROWTH:g} each)"
    )
    return ok and grew_ok


def _print_cpu(
    server: Server,
    cpu: dict[str, tuple[float, float]],
    start: str,
    end: str,
    seconds: float,
    generator: float,
) -> None:
    server_cpu, machine = _cpu(cpu, start, end), _cpu(cpu, start, end, 1)
    others = max(0.0, machine - server_cpu - generator)
    print(
        f"CPU in the window: server {server_cpu / seconds:.0%} of one core, load generator "
        f"{generator / seconds:.0%}, the rest of the machine {others / seconds:.0%}"
    )


# --- section "games" --------------------------------------------------------------------------------


def gc_pauses(server: Server) -> dict[str, float]:
    """kropki_gc_pause_* samples from the server's /metrics (name{labels} -> value)."""
    url = f"http://{stream.HOST}:{server.port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        page = answer.read().decode()
    samples = {}
    for line in page.splitlines():
        if line.startswith("kropki_gc_pause"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def over(samples: dict[str, float], limit: float) -> tuple[int, int]:
    """(collections, collections longer than limit) in a kropki_gc_pause_seconds reading."""
    count = sum(v for k, v in samples.items() if k.startswith("kropki_gc_pause_seconds_count"))
    within = sum(
        v
        for k, v in samples.items()
        if k.startswith("kropki_gc_pause_seconds_bucket") and f'le="{limit}"' in k
    )
    return int(count), int(count - within)


def games_section(args: argparse.Namespace, workdir: Path) -> bool:
    game_args = argparse.Namespace(
        games=args.games,
        seconds=args.game_seconds,
        warm_up=games.WARM_UP if args.game_seconds > games.WARM_UP else 0.0,  # none when --quick
        game_type="2020stanF0.0.0",
        move_every=POLL_EVERY,
        wait=1.0,
        drain=5.0 if args.game_seconds > 10 else 1.0,
        setup_concurrency=8,
        workers=args.workers,
        timeout=args.timeout,
        seed=args.seed,
    )
    print(f"{args.games} games of 20x20, each side moving every {POLL_EVERY:g} s (benchmarks/games.py)")
    server = sized_server(args, workdir, 2 * args.games, args.games)
    readings: list[dict[str, float]] = []
    try:
        server.start()
        print(f"server: pid {server.pid}, port {server.port}")
        run = games.run_workers(
            games.make_plans(game_args, server.port),
            server,
            game_args,
            None,
            lambda: readings.append(gc_pauses(server)),
        )
        readings.append(gc_pauses(server))
    finally:
        server.stop()
    ok = games.report(run, server, game_args, TARGET_GAME_RSS_MB)
    if len(readings) < 2:
        print("FAIL: no garbage-collection readings")
        return False
    before, after = readings
    count_before, over_before = over(before, TARGET_GC_PAUSE)
    count_after, over_after = over(after, TARGET_GC_PAUSE)
    by_generation = []
    for generation in "012":
        key = f'kropki_gc_pause_seconds_count{{generation="{generation}"}}'
        total = f'kropki_gc_pause_seconds_sum{{generation="{generation}"}}'
        n = after.get(key, 0) - before.get(key, 0)
        spent = after.get(total, 0) - before.get(total, 0)
        by_generation.append(f"gen {generation}: {n:.0f}, mean {spent / max(1, n) * 1000:.1f} ms")
    longest = after.get("kropki_gc_pause_max_seconds", math.nan) * 1000
    print(
        f"garbage collections in the window and drain: {count_after - count_before} "
        f"({'; '.join(by_generation)}); {over_after - over_before} over {TARGET_GC_PAUSE * 1000:g} ms; "
        f"longest since start {longest:.1f} ms ({over_before} over {TARGET_GC_PAUSE * 1000:g} ms before "
        "the window)"
    )
    gc_ok = over_after - over_before == 0
    print(
        f"{'PASS' if gc_ok else 'FAIL'}: {over_after - over_before} garbage-collection pauses over "
        f"{TARGET_GC_PAUSE * 1000:g} ms in the window (target 0)"
    )
    return ok and gc_ok


# --- section "empty" --------------------------------------------------------------------------------


def empty_run(server: Server, scenario: str, args: argparse.Namespace) -> tuple[float, bool]:
    """One stream.py run of back-to-back polls; prints its figures; (polls a second, no errors)."""
    stream_args = argparse.Namespace(
        workers=args.workers,
        login_concurrency=8,
        seconds=args.empty_seconds,
        chat_rate=0.0,
        timeout=args.timeout,
        settle=1.0,
        seed=args.seed,
    )
    try:
        server.start()
        plans = stream.make_plans(stream_args, scenario, server.port, args.empty_clients)
        run = stream.run_workers(plans, server, stream_args)
    finally:
        server.stop()
    latencies = stream.merged(run, "latencies")
    rate = len(latencies) / args.empty_seconds
    errors = stream.total(run, "errors")
    generator = stream.total(run, "cpu_window")
    seconds = args.empty_seconds
    others = max(0.0, run.machine_cpu_window - run.server_cpu_window - generator)
    print(
        f"  {rate:,.0f}/s, ms {ms(latencies, 50, 99)}, {errors} errors; CPU: server "
        f"{run.server_cpu_window / seconds:.0%} of one core, load generator {generator / seconds:.0%}, "
        f"rest of the machine {others / seconds:.0%}; RSS {max(run.rss):.0f} MB"
    )
    for example in [e for s in run.stats for e in s.examples][:EXAMPLES_KEPT]:
        print(f"    {example}")
    return rate, errors == 0


def empty_section(args: argparse.Namespace, workdir: Path) -> bool:
    cap = args.empty_clients * stream.EMPTY_POLLS_PER_CLIENT
    print(
        f"{args.empty_clients} clients polling back to back, each at most "
        f"{stream.EMPTY_POLLS_PER_CLIENT:g}/s (at most {cap:,.0f}/s offered), {args.empty_seconds:g} s each, "
        f"{args.workers} load generator process(es) on {generator_loop()}"
    )
    runs: list[tuple[str, type[Server], str]] = [
        ("the server, getMsg with msgFromClient=x", Server, "empty"),
        ("aiohttp hello-world (GET / -> 'Hello, world'), same interpreter", HelloWorld, "hello"),
    ]
    if stream.UVLOOP_INSTALLED:
        runs.append(("the same hello-world on uvloop", HelloWorldOnUvloop, "hello"))
    rates: list[list[float]] = [[] for _ in runs]
    no_errors = True
    for turn in range(args.empty_rounds):  # taking turns, so that a disturbance hits all alike
        for (title, kind, scenario), kept in zip(runs, rates, strict=True):
            print(f"round {turn + 1}: {title}:")
            server = kind(args.python, args.log_level, workdir, None, root=args.root)
            rate, clean = empty_run(server, scenario, args)
            kept.append(rate)
            no_errors = no_errors and clean
    best = [max(kept) for kept in rates]  # each at its least disturbed
    server_rate, hello_rate = best[0], best[1]
    ratio = server_rate / hello_rate if hello_rate else math.nan
    ok = no_errors and ratio >= TARGET_EMPTY_RATIO
    print(
        f"{'PASS' if ok else 'FAIL'}: empty polls {server_rate:,.0f}/s against hello-world "
        f"{hello_rate:,.0f}/s = {ratio:.2f}, the best round of each (target >= {TARGET_EMPTY_RATIO:g}), "
        f"errors: {'none' if no_errors else 'some'}"
    )
    if stream.UVLOOP_INSTALLED:
        print(f"  against the hello-world on uvloop {best[2]:,.0f}/s: {server_rate / best[2]:.2f}")
    return ok


# --- the command line -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pass:
    """The code a run of the sections measures: this checkout, or the one given --before."""

    label: str
    root: Path
    python: str


SECTIONS: dict[str, Callable[[argparse.Namespace, Path], bool]] = {
    "guests": guests_section,
    "games": games_section,
    "empty": empty_section,
    "instructions": instructions.section,
}


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--only", action="append", choices=list(SECTIONS), help="run this section (repeatable; default all)")
    add("--quick", action="store_true", help="tiny sizes, a few seconds a section (sizes given still win)")
    add("--workers", type=int, default=1, help="load generator processes")
    full = SIZES["full"]
    add("--guests", type=int, help=f"guests in section guests ({full['guests']})")
    add("--first-mark", type=int, help=f"the early band is around this login ({full['first_mark']})")
    add("--band", type=int, help=f"half the logins of a band ({full['band']})")
    add("--login-rate", type=float, help=f"logins a second ({full['login_rate']:g})")
    add("--quiet", type=float, help=f"seconds without logins around a band ({full['quiet']:g})")
    add("--guest-seconds", type=float, help=f"measured polling after the logins ({full['guest_seconds']:g})")
    streams = ("getMsg", "getBMsg")  # MultiPoints' or the built-in client's
    add("--stream", choices=streams, default="getMsg", help="what the guests poll")
    add("--games", type=int, help=f"tables in section games ({full['games']})")
    add("--game-seconds", type=float, help=f"measured play ({full['game_seconds']:g})")
    add("--empty-clients", type=int, help=f"back-to-back pollers in section empty ({full['empty_clients']})")
    add("--empty-seconds", type=float, help=f"measured polling of each server ({full['empty_seconds']:g})")
    add("--empty-rounds", type=int, help=f"turns of each server ({full['empty_rounds']})")
    instructions.add_size_arguments(parser)
    add(
        "--before",
        type=Path,
        help="a checkout of the code before a change, with its own .venv: each section runs on it, then "
        "on this code (the exit status is this code's)",
    )
    add_server_arguments(parser)
    args = parser.parse_args()
    size = "quick" if args.quick else "full"
    fill_sizes(args, SIZES[size], instructions.SIZES[size])
    if min(args.guests, args.first_mark, args.band, args.login_rate, args.quiet, args.workers) <= 0:
        parser.error("sizes, rates and --workers must be positive")
    if (
        min(
            args.guest_seconds,
            args.games,
            args.game_seconds,
            args.empty_clients,
            args.empty_seconds,
            args.empty_rounds,
            args.counted_clients,
            args.counted_requests,
        )
        <= 0
    ):
        parser.error("sizes and seconds must be positive")
    if args.game_seconds <= 1.0:
        parser.error("--game-seconds must be above the 1-second long poll")

    passes = [Pass("this code", REPO, args.python)]
    if args.before is not None:
        before = args.before.resolve()
        python = before / ".venv" / "bin" / "python"
        if not (before / "server").is_dir() or not python.exists():
            parser.error(f"--before {before}: a checkout with server/ and its own .venv (make install there)")
        passes.insert(0, Pass("before", before, str(python)))

    stop_as_on_ctrl_c()
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"scale benchmark: {os.cpu_count()} CPUs, load average {' '.join(load)}")
    for run in passes:
        print(f"{run.label}: commit {server_revision(run.root)}, server interpreter {run.python}")
        print(stream.interpreters(run.python))
    results: dict[str, list[tuple[str, bool]]] = {run.label: [] for run in passes}
    try:
        for name in args.only or list(SECTIONS):
            for run in passes:  # section by section, so that both meet the machine in the same state
                print(f"\n== section {name}{'' if len(passes) == 1 else f': {run.label}'} ==")
                run_args = argparse.Namespace(**{**vars(args), "python": run.python, "root": run.root})
                with tempfile.TemporaryDirectory(prefix=f"kropki-scale-{name}-") as workdir:
                    results[run.label].append((name, SECTIONS[name](run_args, Path(workdir))))
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except (RuntimeError, OSError, subprocess.SubprocessError) as failure:
        print(f"benchmark failed, the server was stopped: {failure}")
        return 2
    if len(passes) > 1:
        print("\n== targets ==")
        for label, outcomes in results.items():
            print(f"{label}: " + ", ".join(f"{name} {'PASS' if ok else 'FAIL'}" for name, ok in outcomes))
    return 0 if all(ok for _, ok in results["this code"]) else 1  # the code before is only compared


if __name__ == "__main__":
    raise SystemExit(main())
