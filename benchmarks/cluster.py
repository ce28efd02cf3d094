"""Cluster load: stream.py's polling guests and games.py's games through nginx, on 1, 2 and 3 members.

For each member count in --members, all on this machine: a fresh PostgreSQL database `bench_<n>` on the
server scripts/with-postgres starts (KROPKI_TEST_DB), a fresh redis-server on a free port keeping nothing
on disk, the members (`python -m server serve --redis-url ... --member bench-<i> --cluster-secret-file
FILE --unlimited 127.0.0.1 --trusted-proxy 127.0.0.1 --log-level WARNING` on free 127.0.0.1 ports, with
a secret made for the run, the first with --migrate, the others once it answers /readyz), and nginx
with the shipped site (deploy/nginx-kropki-cluster.conf in a temporary folder on a free port, as
tests/cluster/conftest.py runs it; worker_processes auto and 8,192 worker_connections, since 1,000
clients and their upstream connections overflow nginx's default 512).
The load starts once every member's /readyz lists all of them, and everything is stopped at the end,
also on errors and Ctrl-C.

Both loads are pointed at nginx, which hashes each player's id onto a member, so that with several
members most games are between players of two members (the cross-member path; counted from a log of the
logins nginx routed):

- polling: benchmarks/stream.py's scenario "guests": --guests guests log in, then each polls once a
  second, a few polls carrying a lobby chat line; --poll-seconds measured after --settle;
- then the polling guests log out (`usunGracza`, through nginx), and benchmarks/games.py's load runs:
  --games tables of two guests playing random legal moves, each side every --move-every seconds, with
  long polls; --game-seconds of play measured (move-to-opponent latency), then --drain.

stream.py's and games.py's own reports are printed for each load, with "server" meaning the members
together (RSS and CPU summed over the member processes). Beside them: the CPU of each part in the
window (each member, nginx, redis-server, PostgreSQL, the load generator, the rest of the machine) and
the players each member holds (kropki_players_online on its own /metrics, less what it listed at start:
its AI players). At the end, one table with every member count side by side. At the default sizes
nothing saturates: polls/s and moves/s are the offered rates (1,000 and about 190), and what the member
count changes is latency and CPU; raise --guests and --games to find where throughput stops following.
A move at another member's table is acknowledged (k) once that member stored it: the poll carrying it
waits for that (as for its own writes), so no move is sent twice.

Targets: none of its own. The PASS/FAIL lines inside the reused reports judge the one-server targets of
stream.py and games.py (games.py's RSS target times the members). On one machine every part shares the
same cores, so more members mean more processes competing for them rather than more capacity: the
figures show what routing through nginx and the cross-member path cost, not what members on machines of
their own would gain. Exit status 0 when every load ran without errors, 1 when some had errors, 2 when
the benchmark could not run.

    scripts/with-postgres .venv/bin/python benchmarks/cluster.py    # 1, 2 and 3 members: about 3 minutes
    scripts/with-postgres .venv/bin/python benchmarks/cluster.py --members 2 --guests 3000 --games 500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream, games)
    if _path not in sys.path:
        sys.path.insert(0, _path)

import games  # noqa: E402
import stream  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402
from stream import (  # noqa: E402
    CLK_TCK,
    HOST,
    STOP_GRACE,
    Server,
    add_server_arguments,
    argument_parser,
    connect,
    free_port,
    merged,
    percentile,
    server_revision,
    stop_as_on_ctrl_c,
    total,
)

from server.engine.gametype import GameTypeError, StartKind, parse_game_type  # noqa: E402

DEPLOY = HERE.parent / "deploy"
NGINX = "/usr/sbin/nginx"
REDIS_SERVER = "/usr/bin/redis-server"
NGINX_CONNECTIONS = 8192  # per worker: clients plus upstream connections (nginx's default is 512)
READY_TIMEOUT = 30.0  # seconds for a part of the cluster to answer after it started
LOGOUT_CONNECTIONS = 16


def _started(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """A helper process in a session of its own (Ctrl-C reaches only this script, which stops it in
    order) that the kernel stops if this script is killed outright."""
    with open(log, "ab") as output:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=stream._die_with_parent,
        )


def _ended(process: subprocess.Popen[bytes] | None, what: str) -> None:
    """SIGTERM, then SIGKILL after STOP_GRACE seconds; nothing when already gone."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        print(f"{what} did not stop within {STOP_GRACE:.0f} s of SIGTERM; killing it")
        process.kill()
        process.wait()


# --- CPU of processes, from /proc ------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (the state is [0], the parent [1])."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def process_cpu(pid: int, with_reaped_children: bool = False) -> float:
    """User plus system CPU seconds of one process; with the children it has waited for, if asked
    (PostgreSQL's backends come and go: their time is added to the postmaster's when they exit)."""
    fields = _stat(pid)
    if fields is None:
        return math.nan
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if with_reaped_children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / CLK_TCK


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def group_cpu(pid: int | None, with_reaped_children: bool = False) -> float:
    """A parent and its live children: nginx's master and workers, the postmaster and its backends."""
    if pid is None:
        return math.nan
    children = [process_cpu(child) for child in children_of(pid)]
    return process_cpu(pid, with_reaped_children) + sum(c for c in children if not math.isnan(c))


def postgres_pid(url: str) -> int | None:
    """The postmaster of a server reached over a unix socket (scripts/with-postgres): the first line of
    the socket's lock file. None for a server elsewhere: its CPU is then not measured."""
    host = make_url(url).query.get("host")
    if not isinstance(host, str) or not host.startswith("/"):
        return None
    for lock in Path(host).glob(".s.PGSQL.*.lock"):
        try:
            return int(lock.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
    return None


# --- the parts of the cluster ------------------------------------------------------------------------------


def _get_json(port: int, path: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=5) as answer:
            return json.loads(answer.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _listens(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


class Redis:
    """A redis-server of this run's own on a free port, keeping nothing on disk."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def start(self, port: int = 0) -> None:
        """On a free port, or on `port` (a restart, empty: it keeps nothing on disk)."""
        self.port = port or free_port()
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", HOST, "--save", "", "--appendonly", "no"]
        self.process = _started([*command, "--dir", str(self.folder)], self.folder / "redis-server.log")
        deadline = time.monotonic() + READY_TIMEOUT
        while not _redis_answers(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING")
            time.sleep(0.05)

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def stop(self) -> None:
        _ended(self.process, "redis-server")


def _cluster_secret(folder: Path) -> Path:
    """The secret this run's members share (docs/cluster.md), made once per run's folder."""
    path = folder / "cluster-secret"
    if not path.exists():
        path.write_text(secrets.token_hex(32) + "\n")
        path.chmod(0o600)
    return path


class Member(Server):
    """One member: stream.py's Server (its start, /proc readings and log summary), run as a member."""

    def __init__(
        self, name: str, db_url: str, redis_url: str, migrate: bool, args: argparse.Namespace, folder: Path
    ) -> None:
        # every simulated player comes from 127.0.0.1 through nginx, which members are run to trust
        # (docs/operations.md); the base server adds --unlimited for 127.0.0.1
        member = ("--redis-url", redis_url, "--member", name, "--trusted-proxy", HOST)
        member += ("--cluster-secret-file", str(_cluster_secret(folder)))
        super().__init__(args.python, args.log_level, folder, None, member)
        self.name, self.db_url, self.migrate = name, db_url, migrate
        self.log_path = folder / f"{name}.log"

    def database(self) -> list[str]:
        """The cluster's PostgreSQL database; only the first member brings its schema up to date."""
        return ["--db", self.db_url, *(["--migrate"] if self.migrate else [])]

    def wait_ready(self, members: list[str]) -> None:
        """Until /readyz says ready and lists every one of `members`: the lobby is one before load."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            answer = _get_json(self.port, "/readyz")
            cluster = answer.get("cluster") if answer else None
            listed = cluster.get("members", []) if isinstance(cluster, dict) else []
            if answer and answer.get("status") == "ready" and set(members) <= set(listed):
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(
                    f"member {self.name} exited with {self.proc.returncode}:\n{self.log_tail()}"
                )
            time.sleep(0.1)
        raise RuntimeError(f"member {self.name} was not ready with {members} within {READY_TIMEOUT:.0f} s")

    def metrics(self) -> dict[str, float]:
        """The unlabelled kropki_* samples of the member's own /metrics (nginx's site denies /metrics)."""
        with urllib.request.urlopen(f"http://{HOST}:{self.port}/metrics", timeout=10) as answer:
            page = answer.read().decode()
        samples = {}
        for line in page.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("kropki_") and "{" not in name:
                samples[name] = float(value)
        return samples


class Nginx:
    """nginx with the shipped cluster site, moved into a folder of its own and onto a free port (as
    tests/cluster/conftest.py does), plus a log of the logins it routed: player id -> member."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def _configure(self, member_ports: list[int]) -> None:
        folder = self.folder
        members = (DEPLOY / "nginx-kropki-members.conf").read_text()
        line = next(line for line in members.splitlines() if line.startswith("server "))
        servers = "".join(
            re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{port}", line) + "\n" for port in member_ports
        )
        (folder / "kropki-members.conf").write_text(servers)
        site = (DEPLOY / "nginx-kropki-cluster.conf").read_text()
        for shipped, here in (
            ("/etc/nginx/kropki-members.conf", str(folder / "kropki-members.conf")),
            ("    listen 80;\n    listen [::]:80;\n", f"    listen {HOST}:{self.port};\n"),
            # refused and failed upstreams into error.log, counted below (the shipped site keeps them out)
            ("/var/log/nginx/kropki.error.log crit;", f"{folder}/error.log error;"),
            ("/var/log/nginx", str(folder)),
            ("/srv/kropki/client", str(folder)),
            (
                "kropki_no_query;\n",
                f"kropki_no_query;\n    access_log {folder}/logins.log bench_logins if=$bench_login;\n",
            ),
        ):
            if shipped not in site:
                raise RuntimeError(f"deploy/nginx-kropki-cluster.conf no longer has {shipped!r}")
            site = site.replace(shipped, here)
        (folder / "kropki.conf").write_text(site)
        user = "user root;\n" if os.geteuid() == 0 else ""  # workers reading this run's folders
        (folder / "nginx.conf").write_text(
            f"{user}worker_processes auto;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
            f"events {{\n  worker_connections {NGINX_CONNECTIONS};\n}}\n"
            "http {\n"
            "  log_format bench_logins '$arg_co $kropki_route $upstream_addr';\n"
            "  map $arg_co $bench_login {\n    guestLogin 1;\n    default 0;\n  }\n"
            f"  include {folder}/kropki.conf;\n"
            "}\n"
        )

    def start(self, member_ports: list[int]) -> None:
        self.port = free_port()
        self._configure(member_ports)
        command = [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"), "-g", "daemon off;"]
        self.process = _started(command, self.folder / "nginx.out")
        deadline = time.monotonic() + READY_TIMEOUT
        while not _listens(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not listen on {self.port}:\n{self.errors()}")
            time.sleep(0.05)

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def errors(self, lines: int = 10) -> str:
        log = self.folder / "error.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""

    def error_lines(self) -> list[str]:
        """error.log at nginx's default level (error and above): refused or failed upstreams, limits."""
        log = self.folder / "error.log"
        return log.read_text(errors="replace").splitlines() if log.exists() else []

    def login_routes(self) -> dict[str, str]:
        """Player id -> the member address nginx sent the login to (the last one tried)."""
        routes = {}
        log = self.folder / "logins.log"
        for line in log.read_text().splitlines() if log.exists() else []:
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[0] == "guestLogin":
                routes[parts[1]] = parts[2].rsplit(",", 1)[-1].strip()
        return routes

    def stop(self) -> None:
        _ended(self.process, "nginx")


class ClusterServer:
    """What stream.py's and games.py's load runs and reports need of a Server (duck-typed), for a whole
    cluster: the port is nginx's, RSS and CPU are summed over the member processes. Every CPU reading also
    keeps each part's, so that a window's CPU can be told per member, nginx, Redis and PostgreSQL."""

    def __init__(
        self, size: int, args: argparse.Namespace, folder: Path, db_url: str, pg_pid: int | None
    ) -> None:
        self.size, self.args, self.folder, self.db_url, self.pg_pid = size, args, folder, db_url, pg_pid
        self.redis = Redis(folder)
        self.nginx = Nginx(folder)
        self.members: list[Member] = []
        self.baseline: dict[str, float] = {}  # players each member lists before any load: its AI players
        self.readings: list[tuple[float, dict[str, float]]] = []  # (monotonic, CPU seconds by part)
        self.stopping = False

    @property
    def port(self) -> int:
        return self.nginx.port

    def start(self) -> None:
        self.redis.start()
        names = [f"bench-{number}" for number in range(1, self.size + 1)]
        for number, name in enumerate(names):
            member = Member(name, self.db_url, self.redis.url, number == 0, self.args, self.folder)
            self.members.append(member)
            member.start(timeout=READY_TIMEOUT)  # its /healthz
            member.wait_ready(names[: number + 1])  # migrated (the first) before the next one starts
        for member in self.members:
            member.wait_ready(names)
        self.nginx.start([member.port for member in self.members])
        self.baseline = self.players()

    def players(self) -> dict[str, float]:
        return {m.name: m.metrics().get("kropki_players_online", math.nan) for m in self.members}

    def held(self) -> dict[str, float]:
        """Players each member holds now, beyond what it listed before any load (its AI players)."""
        return {name: count - self.baseline.get(name, 0) for name, count in self.players().items()}

    def rss_mb(self) -> float:
        return sum(member.rss_mb() for member in self.members)

    def cpu_parts(self) -> dict[str, float]:
        parts = {member.name: member.cpu_seconds() for member in self.members}
        parts["nginx"] = group_cpu(self.nginx.pid)
        parts["redis"] = group_cpu(self.redis.pid)
        parts["postgresql"] = group_cpu(self.pg_pid, with_reaped_children=True)
        return parts

    def cpu_seconds(self) -> float:
        parts = self.cpu_parts()
        self.readings.append((time.monotonic(), parts))
        return sum(parts[member.name] for member in self.members)

    def cpu_between(self, start: float, end: float) -> dict[str, float]:
        """Each part's CPU seconds from the first reading at or after start to the first at or after
        end (the load runs read CPU exactly at its window's edges)."""
        first = next((parts for at, parts in self.readings if at >= start), None)
        last = next((parts for at, parts in self.readings if at >= end), None)
        if first is None or last is None:
            return {}
        return {part: last[part] - first[part] for part in first}

    @property
    def exited_early(self) -> int | None:
        """The exit code of a member that ended without being asked to, else None."""
        for member in self.members:
            if member.proc is not None and member.proc.poll() is not None and not self.stopping:
                return member.proc.returncode
            if member.exited_early is not None:
                return member.exited_early
        return None

    def log_summary(self) -> str:
        return f"{len(self.members)} member(s)" + "".join(
            f"\n  {m.name}: {m.log_summary()}" for m in self.members
        )

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(f"{m.name}:\n{m.log_tail(lines)}" for m in self.members)

    def stop(self) -> None:
        """nginx first (no new requests), then every member at once, then Redis (the members say
        goodbye through it); safe to call twice and after a failed start."""
        self.stopping = True
        self.nginx.stop()
        running = []
        for member in self.members:
            if member.proc is None:
                continue
            if member.proc.poll() is None:
                member.proc.terminate()
                running.append(member)
            elif member.exited_early is None:
                member.exited_early = member.proc.returncode
        deadline = time.monotonic() + STOP_GRACE
        for member in running:
            assert member.proc is not None
            try:
                member.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"member {member.name} did not stop within {STOP_GRACE:.0f} s of SIGTERM; killing it")
                member.proc.kill()
                member.proc.wait()
        self.redis.stop()


# --- the database of each member count ---------------------------------------------------------------------


async def _in_postgres(url: str, *statements: str) -> None:
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")  # CREATE DATABASE: no transaction
    try:
        async with engine.connect() as connection:
            for statement in statements:
                await connection.execute(text(statement))
    finally:
        await engine.dispose()


def fresh_database(url: str, name: str) -> str:
    """A new, empty database on the server of `url`; the URL of it."""
    asyncio.run(
        _in_postgres(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    )
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str, name: str) -> None:
    asyncio.run(_in_postgres(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# --- between the two loads ----------------------------------------------------------------------------------


async def _log_out(port: int, secrets: list[str], timeout: float) -> list[str]:
    """`usunGracza` for each id through nginx, on a few keep-alive connections; what went wrong."""
    waiting = list(reversed(secrets))
    problems: list[str] = []

    async def one_connection() -> None:
        conn = None
        while waiting:
            secret = waiting.pop()
            try:
                if conn is None or conn.closed:
                    conn = await connect(port, timeout)
                status, body = await asyncio.wait_for(
                    conn.get(f"/a.kropki?co=usunGracza&playerId={secret}"), timeout
                )
            except (OSError, TimeoutError, ValueError) as failure:
                problems.append(f"{secret}: {failure!r}")
                if conn is not None:
                    conn.close()
                conn = None
                continue
            if status != 200 or body:
                problems.append(f"{secret}: HTTP {status} {body[:80]!r}")
        if conn is not None:
            conn.close()

    await asyncio.gather(*(one_connection() for _ in range(LOGOUT_CONNECTIONS)))
    return problems


def log_out_guests(cluster: ClusterServer, guests: int, timeout: float) -> None:
    """The polling guests leave, so that the games load meets members holding only its own players
    (stream.py and games.py each have a fresh server; left alone, the guests would time out during
    the games' window)."""
    began = time.monotonic()
    problems = asyncio.run(_log_out(cluster.port, [f"g{n}" for n in range(1, guests + 1)], timeout))
    print(
        f"\nthe {guests} polling guests logged out through nginx in {time.monotonic() - began:.1f} s, "
        f"{len(problems)} not" + "".join(f"\n    {problem}" for problem in problems[:5])
    )


# --- reports -----------------------------------------------------------------------------------------------


def print_holdings(held: dict[str, float], when: str) -> None:
    print(
        f"players each member holds {when} (kropki_players_online less its AI players): "
        + ", ".join(f"{name} {count:.0f}" for name, count in held.items())
    )


def print_cpu(
    cluster: ClusterServer, times: dict[str, float], seconds: float, machine: float, generator: float
) -> None:
    """Where the CPU went in a load's window, in % of one core."""
    parts = cluster.cpu_between(times.get("start", math.inf), times.get("end", math.inf))
    if not parts:
        print("CPU by part: no readings at the window's edges")
        return
    names = [member.name for member in cluster.members]
    members = sum(parts[name] for name in names)
    measured = members + sum(v for k, v in parts.items() if k not in names and not math.isnan(v)) + generator
    rest = max(0.0, machine - measured)

    def pct(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value / seconds:.0%}"

    print(
        "CPU in the window, of one core: "
        + ", ".join(f"{name} {pct(parts[name])}" for name in names)
        + f" (members {pct(members)}); nginx {pct(parts['nginx'])}, redis-server {pct(parts['redis'])}, "
        f"PostgreSQL {pct(parts['postgresql'])}, load generator {pct(generator)}, rest {pct(rest)}; "
        f"the whole machine {pct(machine)} of {os.cpu_count() or 1:.0%}"
    )


def print_nginx_errors(cluster: ClusterServer) -> None:
    lines = cluster.nginx.error_lines()
    print(f"nginx error.log: {len(lines)} lines" + "".join(f"\n    {line[:200]}" for line in lines[:5]))


def print_cross_member(cluster: ClusterServer, tables: int) -> None:
    """How many tables sit between players of two members, from the logins nginx routed."""
    routes = cluster.nginx.login_routes()
    by_port = {f"{HOST}:{member.port}": member.name for member in cluster.members}
    known = cross = 0
    for table in range(1, tables + 1):
        blue, red = routes.get(f"p{2 * table - 1}"), routes.get(f"p{2 * table}")
        if blue is not None and red is not None:
            known += 1
            cross += by_port.get(blue, blue) != by_port.get(red, red)
    expected = 1 - 1 / cluster.size
    print(
        f"tables between players of two members: {cross} of {known} "
        f"(about {expected:.0%} expected from hashing the ids onto {cluster.size} member(s))"
    )


@dataclass
class Row:
    """One member count's figures for the table at the end."""

    members: int
    polls_per_second: float = math.nan
    poll_p99_ms: float = math.nan
    poll_errors: int | None = None
    moves_per_second: float = math.nan
    move_p99_ms: float = math.nan
    game_errors: int | None = None
    rss_mb: float = math.nan  # peak of the members' summed RSS over both loads
    poll_cpu: float = math.nan  # members' CPU in the polling window, share of one core
    game_cpu: float = math.nan
    failure: str = ""

    def cells(self) -> list[str]:
        def number(value: float, digits: int = 1) -> str:
            return "-" if math.isnan(value) else f"{value:,.{digits}f}"

        def count(value: int | None) -> str:
            return "-" if value is None else str(value)

        def share(value: float) -> str:
            return "-" if math.isnan(value) else f"{value:.0%}"

        return [
            str(self.members),
            number(self.polls_per_second),
            number(self.poll_p99_ms),
            count(self.poll_errors),
            number(self.moves_per_second),
            number(self.move_p99_ms),
            count(self.game_errors),
            number(self.rss_mb, 0),
            share(self.poll_cpu),
            share(self.game_cpu),
        ]


HEADERS = [
    "members",
    "polls/s",
    "poll p99 ms",
    "poll errors",
    "moves/s",
    "move->opponent p99 ms",
    "game errors",
    "total RSS MB",
    "total CPU % polls",
    "total CPU % games",
]


def print_table(rows: list[Row], args: argparse.Namespace) -> None:
    print(
        f"\n== side by side: {args.guests} guests polling once a second ({args.poll_seconds:g} s), then "
        f"{args.games} games moving every {args.move_every:g} s a side ({args.game_seconds:g} s), through "
        f"nginx; {os.cpu_count()} cores on this machine =="
    )
    table = [HEADERS] + [row.cells() for row in rows]
    widths = [max(len(line[column]) for line in table) for column in range(len(HEADERS))]
    for line in table:
        print(" | ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))
    print(
        "RSS and CPU: the member processes summed (CPU in % of one core, in each load's window); "
        "nginx, redis-server, PostgreSQL and the load generator are in each load's 'CPU in the window' line"
    )
    for row in rows:
        if row.failure:
            print(f"{row.members} member(s): the run failed: {row.failure}")


# --- one member count ---------------------------------------------------------------------------------------


def poll_arguments(args: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(
        guests=args.guests,
        seconds=args.poll_seconds,
        settle=args.settle,
        chat_rate=args.chat_rate,
        login_concurrency=args.login_concurrency,
        workers=args.workers,
        timeout=args.timeout,
        seed=args.seed,
    )


def game_arguments(args: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(
        games=args.games,
        seconds=args.game_seconds,
        warm_up=0.0,  # none, as in the runs its figures in docs/performance.md are compared with
        game_type=args.game_type,
        move_every=args.move_every,
        wait=args.wait,
        drain=args.drain,
        setup_concurrency=args.setup_concurrency,
        workers=args.workers,
        timeout=args.timeout,
        seed=args.seed,
    )


def run_size(
    size: int, args: argparse.Namespace, base_url: str, pg_pid: int | None, folder: Path
) -> tuple[Row, bool]:
    """Start a cluster of `size` members, run both loads through nginx, stop it; (figures, targets met)."""
    row = Row(size)
    name = f"bench_{size}"
    print(f"\n==== {size} member(s) ====")
    db_url = fresh_database(base_url, name)
    cluster = ClusterServer(size, args, folder, db_url, pg_pid)
    try:
        cluster.start()
        print(
            f"database {name}; redis-server port {cluster.redis.port}; members "
            + ", ".join(f"{m.name} (pid {m.pid}, port {m.port})" for m in cluster.members)
            + f"; nginx port {cluster.port}"
        )
        print(f"players each member lists at start (its AI players): {cluster.baseline}")
        print('in the reports below, "server" is the members together: RSS and CPU summed over them')

        print(f"\n== polling: {args.guests} guests (benchmarks/stream.py, scenario guests) ==")
        poll_args = poll_arguments(args)
        plans = stream.make_plans(poll_args, "guests", cluster.port, args.guests)
        polling = stream.run_workers(plans, cluster, poll_args)
        held = cluster.held()  # now: the guests stay online until they log out below
        poll_ok = stream.report_guests(polling, cluster, poll_args)
        print_holdings(held, "after the window")
        print_cpu(
            cluster,
            polling.times,
            args.poll_seconds,
            polling.machine_cpu_window,
            total(polling, "cpu_window"),
        )
        row.polls_per_second = total(polling, "replies") / args.poll_seconds
        row.poll_p99_ms = percentile(merged(polling, "latencies"), 99) * 1000
        row.poll_errors = total(polling, "errors")
        row.poll_cpu = polling.server_cpu_window / args.poll_seconds
        log_out_guests(cluster, args.guests, args.timeout)

        print(f"\n== games: {args.games} tables (benchmarks/games.py) ==")
        game_args = game_arguments(args)
        play = games.run_workers(games.make_plans(game_args, cluster.port), cluster, game_args, None)
        held = cluster.held()
        games_ok = games.report(play, cluster, game_args, games.TARGET_RSS_MB * size)
        print_holdings(held, "after the drain")
        print_cross_member(cluster, args.games)
        print_cpu(
            cluster, play.times, args.game_seconds, play.machine_cpu_window, games.total(play, "cpu_window")
        )
        row.moves_per_second = games.total(play, "moves_sent") / (args.game_seconds - args.wait)
        row.move_p99_ms = percentile(games.merged(play, "move_latencies"), 99) * 1000
        row.game_errors = games.total(play, "errors")
        row.game_cpu = play.server_cpu_window / args.game_seconds
        row.rss_mb = max(max(polling.rss), play.rss["peak"])
        print_nginx_errors(cluster)
        return row, poll_ok and games_ok
    finally:
        cluster.stop()
        try:
            drop_database(base_url, name)
        except Exception as failure:  # the run's own error, if any, matters more
            print(f"could not drop database {name}: {failure!r}")


# --- the command line ---------------------------------------------------------------------------------------


def member_counts(value: str) -> list[int]:
    try:
        counts = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("a comma-separated list of member counts, e.g. 1,2,3") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("member counts are 1 or more")
    return counts


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--members", type=member_counts, default=[1, 2, 3], help="member counts to run, e.g. 1,2,3")
    add("--guests", type=int, default=1000, help="polling guests")
    add("--poll-seconds", type=float, default=20.0, help="measured window of the polling load")
    add("--settle", type=float, default=3.0, help="seconds between every guest's first reply and the window")
    add("--chat-rate", type=float, default=0.02, help="chance that a guest's poll carries a lobby chat line")
    add("--login-concurrency", type=int, default=8, help="guest logins in flight at once")
    add("--games", type=int, default=200, help="tables, two guests each")
    add("--game-seconds", type=float, default=20.0, help="measured window of play")
    add("--game-type", default="2020stanF0.0.0", help="invitation game type (standard rules, empty start)")
    add("--move-every", type=float, default=2.0, help="seconds between a player's moves")
    add("--wait", type=float, default=1.0, help="long poll limit sent as wait=")
    add("--drain", type=float, default=5.0, help="seconds after the window for the last moves to arrive")
    add("--setup-concurrency", type=int, default=8, help="table set-ups in flight at once")
    add("--workers", type=int, default=1, help="load generator processes")
    add_server_arguments(parser)
    args = parser.parse_args()
    positive = (args.guests, args.poll_seconds, args.login_concurrency, args.games, args.game_seconds)
    if min(*positive, args.move_every, args.setup_concurrency, args.workers) <= 0:
        parser.error("counts, seconds, --move-every, concurrencies and --workers must be positive")
    if not 0 <= args.chat_rate <= 1 or args.settle < 0 or args.drain < 0:
        parser.error("--chat-rate is a probability from 0 to 1, --settle and --drain >= 0")
    if not 0 < args.wait <= 30 or args.wait >= args.game_seconds or args.timeout <= args.wait:
        parser.error("--wait must be in (0, 30] and below --game-seconds, and --timeout above it")
    try:
        game_type = parse_game_type(args.game_type)
    except GameTypeError as bad:
        parser.error(f"--game-type: {bad}")
    if not game_type.automatic_enclosures or game_type.start.kind is not StartKind.EMPTY:
        parser.error("--game-type: the clients track standard rules from an empty board only")
    base_url = os.environ.get("KROPKI_TEST_DB", "")
    if not base_url.startswith("postgresql"):
        print(
            "cluster benchmark: the members share a PostgreSQL database; run it under scripts/with-postgres "
            "(it starts a throwaway PostgreSQL and sets KROPKI_TEST_DB):\n"
            "    scripts/with-postgres .venv/bin/python benchmarks/cluster.py"
        )
        return 2
    missing = [path for path in (NGINX, REDIS_SERVER) if not shutil.which(path)]
    if missing:
        print(
            f"cluster benchmark: {', '.join(missing)} missing (scripts/ensure-debian-package nginx "
            "nginx-light; scripts/ensure-debian-package redis-server redis-server)"
        )
        return 2

    stop_as_on_ctrl_c()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(
        f"cluster benchmark: {os.cpu_count()} cores, load average {load}; members {args.members}; "
        f"server interpreter {args.python}; load generator {sys.executable} in {args.workers} process(es)"
    )
    print(f"server code: commit {server_revision()}")
    pg_pid = postgres_pid(base_url)
    print(f"PostgreSQL: {make_url(base_url).render_as_string()} (postmaster pid {pg_pid or 'unknown'})")
    rows: list[Row] = []
    all_ok = True
    try:
        for size in args.members:
            with tempfile.TemporaryDirectory(prefix=f"kropki-cluster-{size}-") as folder:
                try:
                    row, ok = run_size(size, args, base_url, pg_pid, Path(folder))
                except (RuntimeError, OSError, subprocess.SubprocessError) as failure:
                    print(f"the run of {size} member(s) failed, everything was stopped: {failure}")
                    row, ok = (
                        Row(size, failure=str(failure).splitlines()[0] if str(failure) else "failed"),
                        False,
                    )
                rows.append(row)
                all_ok = all_ok and ok
    except KeyboardInterrupt:
        print("\ninterrupted; everything was stopped")
        return 130
    print_table(rows, args)
    print(f"targets of the reused reports (single server): {'all met' if all_ok else 'not all met'}")
    if any(row.failure for row in rows):
        return 2
    return 0 if all(row.poll_errors == 0 and row.game_errors == 0 for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
