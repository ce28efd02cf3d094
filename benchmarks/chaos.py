"""Chaos: a three-member cluster behind nginx while members, Redis and PostgreSQL die under play (issue 44).

The cluster is started as benchmarks/cluster.py starts it (its Redis, Member, Nginx and ClusterServer): a
fresh PostgreSQL database `chaos` on the server scripts/with-postgres starts (KROPKI_TEST_DB), a
redis-server keeping nothing on disk, three members `python -m server serve --member bench-1..3` (their
logs kept, at --log-level INFO by default) and nginx with the shipped site
deploy/nginx-kropki-cluster.conf. Every request of the players goes through nginx.

The players: --games pairs of guests, 2 x --games MultiPoints clients. Each is the line-by-line port of
MultiPoints' ServerZagram (tests/clients/multipoints.py): `query()` is its poll, `handle_text()` reads
the answer, and it resends every command above the reply's k on every poll as MultiPoints does. Each
polls getBMsg one second after its previous answer (MultiPoints' period); in each pair the first invites
the other through the protocol (`v` with a 20x20 untimed game of standard rules) and the other accepts.
Where they differ from MultiPoints:
- on `sd` (MultiPoints exits for good) a player counts it, logs in again with the same id and nick
  (`guestLogin` through nginx, again each second while refused) and goes on with a new client, as
  MultiPoints started again would, but with the same id; any other answer that is not `ok`
  (MultiPoints exits) is counted and the player polls on;
- logins carry lang=en (MultiPoints sends ru) so that refusals read in English, and no changeLang;
- each player connects from an address of its own, in a network of its own (127.0.N.1), as players
  do: the limits per address and network (guessed ids, logins) count each one alone;
- a player sends a move only when its board says it is on move and none of its moves is unacknowledged,
  1-3 s after it came on move: a random point the engine (server/engine/board.py) says is legal on
  that board; none in the last 10 s of the run;
- a player whose game has not been on its board for 20 s chooses its table (`b`), as a person would
  in the lobby; when a game ends, the pair plays a new one.

The bots: --bots pairs of examples/random_bot.py, each in a process of its own with a bot account made
for the run, playing 10x10 timed games against each other through the bot API and nginx, as
benchmarks/chaos_bots.py says: every action and its answer and every event of its feed logged, 0.5-2 s
of thought before each move, the first of a pair inviting the other whenever neither plays.

The schedule, seeded (--seed) and printed as it happens: about one event every 20-40 s (--gap) over
--minutes: a random member SIGKILLed and started again under its name and port 5-15 s later; once two
members SIGKILLed 1-4 s apart; once a member SIGKILLed while it takes over another's tables (A killed;
as soon as PostgreSQL shows one of A's tables owned by member B, B is killed); once Redis SIGKILLed and
started again, empty, on its port; once PostgreSQL restarted (`pg_ctl restart -m fast`, with
scripts/with-postgres's options). Runs too short for all of them keep one member killed, the Redis and
the PostgreSQL restart first. Each event ends when every member's /readyz lists all three again. Then
--quiet seconds with everything up, the players stop, and the check.

The check, at the end: every move sent (table, point, command number) against the tables' journals in
PostgreSQL (server/store: `journal`, replayed as a restart replays it). It prints moves sent,
acknowledged (a reply's k covered it), refused (by reason: a refusal line for the player arrived while
the move was unacknowledged, or the table's `unsaved` line took it back then), found,
LOST (acknowledged, not refused, not in the record), duplicated, phantom (in the record, never sent);
each player's board (its MultiPoints tab) against its table's record; `sd` answers (every one is to a
live session: the players never log out); tracebacks and WARNING/ERROR lines in the members' logs;
err.nickInUse answers to logins and the longest a player kept getting them; for each event the longest
any player got no `ok` answer and any table made no move, and how long until every table moved again
after each member's death (the tables it owned, and all tables) and after Redis returned; the longest
k wait (a command sent until k covered it), overall and for commands sent after Redis returned; a
reply whose k is above what its login has sent (a login inheriting another's command numbers), or
below an earlier one of its login (the client sends again what k had covered). For the bots: every
move answered 200 against its table's record (its journal, or the archived game its feed named once
the table closed), every move refused that is in it all the same (unless a request of the point got an
answer that says nothing: `unanswered`, `unconfirmed`), a point answered 200 twice, each bot's board
as its feed left it, the feeds opened and the answers by code, and any bot that stopped.

Targets (issue 44, point 2): 0 acknowledged moves lost, 0 duplicated or phantom, every board equal to
its table's record, 0 `sd`, 0 tracebacks, k never held past 30 s (a client sees k at its next poll:
judged past 31 s), every table moving again within 20 s of a member's death or of Redis's return (every
table, not only the dead member's own: a table also stops when a player's member dies; a table whose
member died while taking it over is judged from that member's death; the bots' tables too, by the table
each pair played then), no login inheriting k; and for the bots: no move answered 200 lost, no refused
move played, no point answered 200 twice, no phantom, every board equal to its record, no bot stopped.
Exit status 0 when every target is met, 1 when one is not, 2 when the benchmark could not run.

    scripts/with-postgres .venv/bin/python benchmarks/chaos.py      # about 5.5 minutes
    scripts/with-postgres .venv/bin/python benchmarks/chaos.py --seed 2 --keep /tmp/chaos-logs
    # the one-minute run of tests/test_benchmarks.py: about 100 s
    scripts/with-postgres .venv/bin/python benchmarks/chaos.py --minutes 1 --games 8 --gap 15,20 --quiet 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*, tests.*) and this folder
    if _path not in sys.path:
        sys.path.insert(0, _path)

import aiohttp  # noqa: E402
from chaos_bots import Bots, bot_report, with_archived  # noqa: E402
from chaos_players import REQUEST_TIMEOUT, Pair, Run, make_pairs, write_log  # noqa: E402
from chaos_report import Event, Mark, read_logs, read_record, report  # noqa: E402
from cluster import NGINX, REDIS_SERVER, ClusterServer, Member, drop_database, fresh_database  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402
from sqlalchemy.pool import NullPool  # noqa: E402
from stream import (  # noqa: E402
    HOST,
    add_server_arguments,
    argument_parser,
    server_revision,
    stop_as_on_ctrl_c,
)

SIZE = 3
DATABASE = "chaos"
WITH_POSTGRES = HERE.parent / "scripts" / "with-postgres"
SET_UP_WITHIN = 120.0  # seconds for every pair to sit at its table
WARM_UP = 10.0  # seconds of play before the first event
NO_MOVES_AT_END = 10.0  # seconds of the quiet end without new moves, for the last ones to arrive
WHOLE_WITHIN = 90.0  # seconds for the cluster to be whole again after an event
TAKE_OVER_WITHIN = 45.0  # seconds to wait for a dead member's tables to change owner
RESTART_TRIES = 3
SPECIALS = ("kill", "redis", "postgres", "two", "takeover")  # in the order short runs keep them


# --- PostgreSQL, as scripts/with-postgres runs it -----------------------------------------------------------


def pg_restart_command(url: str) -> list[str]:
    """`pg_ctl restart -m fast` of the server scripts/with-postgres started for `url`, with its options,
    its log and its user (`postgres` when run as root)."""
    folder = make_url(url).query.get("host")
    if not isinstance(folder, str) or not (Path(folder) / "data").is_dir():
        raise RuntimeError(f"KROPKI_TEST_DB's host= is not a folder of scripts/with-postgres: {folder!r}")
    options = re.search(r'-o "([^"]*)"', WITH_POSTGRES.read_text())
    if options is None:
        raise RuntimeError('scripts/with-postgres no longer starts PostgreSQL with -o "..."')
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name.split(".")[0]))
    if not bins:
        raise RuntimeError("no /usr/lib/postgresql/*/bin")
    command = [str(bins[-1] / "pg_ctl"), "-D", f"{folder}/data", "-l", f"{folder}/server.log", "-w"]
    command += ["-o", options.group(1).replace("$DIR", folder), "restart", "-m", "fast"]
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


# --- the schedule -------------------------------------------------------------------------------------------


def plan(rng: random.Random, seconds: float, gap: tuple[float, float]) -> list[tuple[float, str]]:
    """(seconds after the warm-up, kind) of each event: one every `gap` seconds over `seconds`."""
    count = max(3, round(seconds / (sum(gap) / 2)))
    kinds = [*SPECIALS[:count], *["kill"] * (count - len(SPECIALS))]
    rng.shuffle(kinds)
    moments, moment = [], rng.uniform(0, gap[0] / 2)
    for _ in kinds:
        moments.append(moment)
        moment += rng.uniform(*gap)
    return list(zip(moments, kinds, strict=True))


class Chaos:
    """Carries the schedule's events out against the cluster, saying each step with its time."""

    def __init__(
        self, cluster: ClusterServer, db_url: str, pg_command: list[str], rng: random.Random, run: Run
    ):
        self.cluster, self.pg_command, self.rng, self.run = cluster, pg_command, rng, run
        self.engine = create_async_engine(db_url, poolclass=NullPool)
        self.events: list[Event] = []
        self.trouble: list[str] = []  # what the schedule itself could not do

    def say(self, line: str) -> None:
        now = time.monotonic()
        print(f"[{self.run.recorder.at(now):>8} {time.strftime('%H:%M:%S')}] {line}", flush=True)

    def member(self, name: str) -> Member:
        return next(member for member in self.cluster.members if member.name == name)

    @property
    def names(self) -> list[str]:
        return [member.name for member in self.cluster.members]

    async def owners(self) -> dict[str, str] | None:
        """Open table -> the name of the member owning it, from PostgreSQL; None when it cannot say."""
        query = (
            "SELECT t.uid, m.name FROM tables t JOIN members m ON m.id = t.owner WHERE t.closed_at IS NULL"
        )
        try:
            async with asyncio.timeout(5):
                async with self.engine.connect() as connection:
                    return {str(uid): name for uid, name in await connection.execute(text(query))}
        except Exception as failure:  # noqa: BLE001 (PostgreSQL restarting, or anything: say and go on)
            self.say(f"PostgreSQL could not say who owns the tables: {failure!r}"[:200])
            return None

    async def kill(self, event: Event, name: str) -> Mark:
        owned = await self.owners()
        member = self.member(name)
        assert member.proc is not None
        member.proc.send_signal(signal.SIGKILL)
        await asyncio.to_thread(member.proc.wait)
        tables = None if owned is None else sorted(uid for uid, owner in owned.items() if owner == name)
        mark = Mark(time.monotonic(), "death", name, tables)
        event.marks.append(mark)
        owned_text = "? tables (PostgreSQL did not say)" if tables is None else f"{len(tables)} tables"
        self.say(f"SIGKILL {name} (pid {member.proc.pid}); it owned {owned_text}")
        return mark

    async def start_again(self, name: str, after: float) -> None:
        await asyncio.sleep(after)
        member = self.member(name)
        for attempt in range(1, RESTART_TRIES + 1):
            self.say(
                f"starting {name} again on port {member.port}" + (f" (try {attempt})" if attempt > 1 else "")
            )
            try:
                await asyncio.to_thread(member.start, timeout=WHOLE_WITHIN, again=True)
                self.say(f"{name} answers /healthz (pid {member.pid})")
                return
            except RuntimeError as failure:
                problem = f"{name} did not start again: {str(failure).splitlines()[0]}"
                self.say(problem)
                self.trouble.append(problem)
                await asyncio.sleep(5)

    async def whole(self, event: Event) -> None:
        """Until every member's /readyz says ready and lists all of them."""
        deadline = time.monotonic() + WHOLE_WITHIN
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if all([await self._ready(session, member.port) for member in self.cluster.members]):
                    event.ended = time.monotonic()
                    self.say(
                        f"the cluster is whole again, {event.ended - event.started:.1f} s after it began"
                    )
                    return
                await asyncio.sleep(0.5)
        problem = f"the cluster was not whole {WHOLE_WITHIN:.0f} s after '{event.label}'"
        self.say(problem)
        self.trouble.append(problem)
        event.ended = time.monotonic()

    async def _ready(self, session: aiohttp.ClientSession, port: int) -> bool:
        try:
            async with session.get(
                f"http://{HOST}:{port}/readyz", timeout=aiohttp.ClientTimeout(total=3)
            ) as reply:
                answer = await reply.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError):
            return False
        cluster = answer.get("cluster") if isinstance(answer, dict) else None
        listed = cluster.get("members", []) if isinstance(cluster, dict) else []
        return answer.get("status") == "ready" and set(self.names) <= set(listed)

    # --- the kinds of event ---

    async def kill_one(self, event: Event) -> None:
        name = self.rng.choice(self.names)
        await self.kill(event, name)
        await self.start_again(name, self.rng.uniform(5, 15))

    async def kill_two(self, event: Event) -> None:
        first, second = self.rng.sample(self.names, 2)
        again = [self.rng.uniform(5, 15), self.rng.uniform(5, 15)]
        await self.kill(event, first)
        killed = time.monotonic()
        await asyncio.sleep(self.rng.uniform(1, 4))
        await self.kill(event, second)
        await asyncio.gather(
            self.start_again(first, max(0.0, again[0] - (time.monotonic() - killed))),
            self.start_again(second, again[1]),
        )

    async def kill_taking_over(self, event: Event) -> None:
        owned = await self.owners() or {}
        holders = sorted({owner for owner in owned.values()}) or self.names
        first = self.rng.choice(holders)
        again = [self.rng.uniform(5, 15), self.rng.uniform(5, 15)]
        mark = await self.kill(event, first)
        self.say(f"watching the owner of {first}'s tables in PostgreSQL")
        taker = None
        deadline = time.monotonic() + TAKE_OVER_WITHIN
        while taker is None and time.monotonic() < deadline:
            now_owned = await self.owners() or {}
            taker = next((now_owned[t] for t in mark.tables or [] if now_owned.get(t, first) != first), None)
            await asyncio.sleep(0.1 if taker is None else 0)
        if taker is None:
            problem = f"no take-over of {first}'s tables {mark.tables} seen within {TAKE_OVER_WITHIN:.0f} s"
            self.say(problem)
            self.trouble.append(problem)
            await self.start_again(first, again[0])
            return
        self.say(
            f"{taker} is taking over {first}'s tables ({time.monotonic() - mark.at:.1f} s after its death)"
        )
        await self.kill(event, taker)
        await asyncio.gather(self.start_again(first, again[0]), self.start_again(taker, again[1]))

    async def redis(self, event: Event) -> None:
        redis = self.cluster.redis
        assert redis.process is not None
        redis.process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(redis.process.wait)
        self.say(f"SIGKILL redis-server (port {redis.port})")
        await asyncio.sleep(self.rng.uniform(1, 5))
        await asyncio.to_thread(redis.start, redis.port)
        event.marks.append(Mark(time.monotonic(), "redis back"))
        self.say(f"redis-server started again, empty, on port {redis.port}")

    async def postgres(self, event: Event) -> None:
        self.say("pg_ctl restart -m fast")
        began = time.monotonic()
        done = await asyncio.to_thread(
            subprocess.run, self.pg_command, capture_output=True, text=True, timeout=120
        )
        event.marks.append(Mark(time.monotonic(), "postgres back"))
        self.say(
            f"PostgreSQL restarted in {time.monotonic() - began:.1f} s (pg_ctl exit status {done.returncode})"
        )
        if done.returncode:
            self.trouble.append(f"pg_ctl restart failed: {(done.stderr or done.stdout).strip()[:300]}")

    async def carry_out(self, schedule: list[tuple[float, str]], began: float) -> None:
        actions: dict[str, tuple[str, Callable[[Event], Awaitable[None]]]] = {
            "kill": ("a member killed", self.kill_one),
            "two": ("two members killed a moment apart", self.kill_two),
            "takeover": ("a member killed while taking over", self.kill_taking_over),
            "redis": ("Redis killed and started empty", self.redis),
            "postgres": ("PostgreSQL restarted", self.postgres),
        }
        for moment, kind in schedule:
            await asyncio.sleep(max(0.0, began + moment - time.monotonic()))
            label, action = actions[kind]
            event = Event(label, time.monotonic())
            self.events.append(event)
            self.say(f"== {label} ==")
            await action(event)
            await self.whole(event)
        await self.engine.dispose()


# --- the run ----------------------------------------------------------------------------------------------


async def wait_for_tables(pairs: list[Pair], chaos: Chaos) -> bool:
    deadline = time.monotonic() + SET_UP_WITHIN
    while time.monotonic() < deadline:
        seated = sum(pair.uid is not None for pair in pairs)
        if seated == len(pairs):
            chaos.say(f"all {len(pairs)} tables open: {', '.join(pair.uid or '' for pair in pairs)}")
            return True
        await asyncio.sleep(0.5)
    chaos.say(f"only {seated} of {len(pairs)} pairs sat at a table within {SET_UP_WITHIN:.0f} s")
    return False


async def play(
    args: argparse.Namespace, cluster: ClusterServer, db_url: str, pg_command: list[str], folder: Path
) -> int:
    rng = random.Random(args.seed)
    run = Run(args.seed)
    chaos = Chaos(cluster, db_url, pg_command, rng, run)
    schedule = plan(rng, args.minutes * 60, args.gap)
    print("the schedule (seconds after the warm-up): " + ", ".join(f"{m:.0f} {k}" for m, k in schedule))
    pairs = make_pairs(args.games, cluster.port, run)
    bots = Bots(args.bots, cluster.port, folder, args.seed, sys.executable)
    await bots.make_accounts(db_url)
    bots.start()
    tasks = []
    for player in [player for pair in pairs for player in pair.players]:
        tasks.append(asyncio.create_task(player.play()))
        await asyncio.sleep(0.02)
    try:
        if not await wait_for_tables(pairs, chaos):
            return 2
        await asyncio.sleep(WARM_UP)
        chaos.say(f"warm-up over; the schedule begins, {args.games} games playing")
        await chaos.carry_out(schedule, time.monotonic())
        chaos.say(f"the quiet end: {args.quiet:.0f} s with everything up")
        await asyncio.sleep(max(0.0, args.quiet - NO_MOVES_AT_END))
        run.no_new_moves = True
        bots.quiet()
        await asyncio.sleep(NO_MOVES_AT_END)
    finally:
        run.stopping = True
        stopped = time.monotonic()
        crashed = await bots.stop()
        _, late = await asyncio.wait(tasks, timeout=REQUEST_TIMEOUT + 5)
        for task in late:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    chaos.say("the players stopped; reading the tables' records")
    record = await read_record(db_url)
    if args.keep:
        write_log(Path(args.keep) / "commands.log", pairs)
    logs = read_logs({member.name: member.log_path for member in cluster.members})
    bot_logs = bots.read()
    played = await with_archived(db_url, record.moves, bot_logs)
    bot_targets = bot_report(bots.pairs, bot_logs, played, crashed)
    check = report(pairs, run.recorder, record, logs, chaos.events, stopped, bots.pairs, bot_targets)
    for problem in chaos.trouble:
        print(f"the schedule: {problem}")
    return 0 if all(check.passed.values()) else 1


def gap_range(value: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("two numbers of seconds, e.g. 20,40") from None
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError("0 < the first <= the second")
    return low, high


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--games", type=int, default=40, help="games, two MultiPoints guests each")
    add("--bots", type=int, default=4, help="pairs of bots (examples/random_bot.py) playing each other")
    add("--minutes", type=float, default=5.0, help="minutes of the schedule (events then run to their end)")
    add("--gap", type=gap_range, default=(20.0, 40.0), help="seconds between events, e.g. 20,40")
    add("--quiet", type=float, default=40.0, help="seconds with everything up at the end, before the check")
    add("--keep", help="keep the members' logs and every command sent in this folder")
    add_server_arguments(parser)
    parser.set_defaults(log_level="INFO")
    args = parser.parse_args()
    if args.games < 1 or args.bots < 0 or args.minutes <= 0 or args.quiet < NO_MOVES_AT_END + 5:
        parser.error(f"--games >= 1, --bots >= 0, --minutes > 0, --quiet >= {NO_MOVES_AT_END + 5:.0f}")
    base_url = os.environ.get("KROPKI_TEST_DB", "")
    if not base_url.startswith("postgresql"):
        print("chaos benchmark: run it under scripts/with-postgres (it restarts that PostgreSQL):")
        print("    scripts/with-postgres .venv/bin/python benchmarks/chaos.py")
        return 2
    missing = [path for path in (NGINX, REDIS_SERVER) if not shutil.which(path)]
    if missing:
        print(f"chaos benchmark: {', '.join(missing)} missing (scripts/ensure-debian-package ...)")
        return 2
    try:
        pg_command = pg_restart_command(base_url)
    except RuntimeError as failure:
        print(f"chaos benchmark: {failure}")
        return 2
    stop_as_on_ctrl_c()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(
        f"chaos benchmark: {os.cpu_count()} cores, load average {load}; seed {args.seed}; "
        f"server code {server_revision()}"
    )
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kropki-chaos-"))
    folder.mkdir(parents=True, exist_ok=True)
    cluster = None
    try:
        db_url = fresh_database(base_url, DATABASE)
        cluster = ClusterServer(SIZE, args, folder, db_url, None)
        cluster.start()
        print(
            f"database {DATABASE}; redis-server port {cluster.redis.port}; members "
            + ", ".join(f"{m.name} (pid {m.pid}, port {m.port})" for m in cluster.members)
            + f"; nginx port {cluster.port}; logs in {folder}"
        )
        return asyncio.run(play(args, cluster, db_url, pg_command, folder))
    except (RuntimeError, OSError, subprocess.SubprocessError) as failure:
        print(f"chaos benchmark could not run, everything was stopped: {failure}")
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; everything was stopped")
        return 130
    finally:
        if cluster is not None:
            cluster.stop()
        try:
            drop_database(base_url, DATABASE)
        except Exception as failure:  # noqa: BLE001 (the run's own result matters more)
            print(f"could not drop database {DATABASE}: {failure!r}")
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
