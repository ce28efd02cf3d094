"""The long fuzz run outside the suite: random and mutated requests at the real server for minutes.

The requests and the judge are tests/test_fuzz.py's `Fuzzer` (the same code the suite runs for a few
seconds): a few guests and two registered players log in, invite each other, accept, move, propose,
chat, subscribe, and send random and mutated query strings, commands, gameTypes and moves to every
endpoint (`/a.kropki` with every `co`, `setUpTable` with a real organiser's key, `/auth.py`, `/sgf/<n>`,
`/games?nick=`, `/tournament/<name>`, odd paths). One request at a time, so message numbers must only grow.

A failure is: an HTTP status of 500 or more, no answer within --timeout, `err.internal` or `nieOk.`, an
answer `/a.kropki` does not give, a malformed reply (not one line, a message that is none of
docs/protocol.md's, unescaped HTML), `j` going back or not moving on when something new is sent, a
record from the archive that does not read or replay, anything logged at ERROR (but aiohttp's
shortened report of a request it could not parse, which docs/operations.md describes), and with
--subprocess a player's id in any line of the server's log (--log-level INFO: the access log's too).

Two ways to run the server:

- in-process (default): the app from `server.app.create_app` on a real 127.0.0.1 port (aiohttp's
  TestServer) with a throwaway migrated SQLite file (or --db), so the hub invariants are checked too
  (every --check-every requests and at the end: everyone at the tables they think they are at, nicks,
  invitations, every board's scores equal the dots in realms). The per-id request limit is lifted (it
  has tests of its own), and a table whose four crosses would never be placed is a failure, not a hang.
- --subprocess: `python -m server serve --migrate` (benchmarks/stream.py's `Server`), as in production;
  only what HTTP shows is checked, plus the server's log. The server keeps its limit of 20 requests a
  second per player id, so requests are paced to 18 a second per id (more --guests, more requests).

    .venv/bin/python benchmarks/fuzz.py --seconds 300 [--seed N] [--subprocess]

Prints the requests sent, answers by status and kind, and every failure with the request that caused it;
exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl

import aiohttp

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):  # the repository (server.*, tests.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from aiohttp.test_utils import TestServer  # noqa: E402
from stream import HOST, Server  # noqa: E402

from server.app import create_app  # noqa: E402
from server.config import Settings  # noqa: E402
from server.web.accesslog import install_malformed_request_filter  # noqa: E402
from server.web.common import HUB_KEY  # noqa: E402
from server.web.tournament import TOURNAMENTS_KEY  # noqa: E402
from tests.test_fuzz import (  # noqa: E402
    Fuzzer,
    Request,
    Send,
    check_archived,
    check_hub,
    check_idle,
    http_sender,
    lift_request_limits,
    no_endless_crosses,
)

PROGRESS_EVERY = 10.0  # seconds between progress lines
ARCHIVE_CHECKED = 3000  # at most this many archived records are read back and replayed at the end
STUCK = 5  # consecutive requests without an answer after which the server is taken to be stuck
PER_ID = 18  # --subprocess: requests a second per player id, under the server's limit of 20
# aiohttp's report of a request it could not parse, as MalformedRequestFilter shortens it: answered 400,
# kept in the log on purpose (docs/operations.md, "Logging")
MALFORMED = re.compile(r"Error handling request from \S+: \w+ \(4\d\d\)")


class Errors(logging.Handler):
    """Keeps every record at ERROR or above that the in-process server logs, malformed requests aside."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []
        self.malformed = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "aiohttp.server" and MALFORMED.fullmatch(record.getMessage()):
            self.malformed += 1
            return
        self.records.append(f"{record.levelname} {record.name}: {self.format(record)[:2000]}")


class Pace:
    """Holds requests back so that no player id sends more than PER_ID a second (a server process keeps
    its per-id limit; in-process the fuzzer lifts it)."""

    def __init__(self) -> None:
        self.sent: defaultdict[str, deque[float]] = defaultdict(deque)

    async def wait(self, request: Request) -> None:
        pairs = request.params if request.raw is None else parse_qsl(request.raw, keep_blank_values=True)
        ids = {value for name, value in pairs if name in ("idGracza", "playerId") and value}
        for secret in ids:
            times = self.sent[secret]
            while times and times[0] < time.monotonic() - 1.0:
                times.popleft()
            if len(times) >= PER_ID:
                await asyncio.sleep(times[0] + 1.0 - time.monotonic())
            times.append(time.monotonic())


async def fuzz(
    fuzzer: Fuzzer,
    send: Send,
    seconds: float,
    *,
    check: Callable[[], None] | None = None,
    check_every: int = 50,
    pace: Pace | None = None,
) -> list[str]:
    """Send requests until the time is up; returns the failures of the hub checks."""
    hub_failures = []
    started = last_progress = time.monotonic()
    silent = 0
    while (now := time.monotonic()) - started < seconds:
        request = fuzzer.next()
        if pace is not None:
            await pace.wait(request)
        status, body = await send(request)
        fuzzer.observe(request, status, body)
        silent = silent + 1 if status == 0 else 0
        if silent >= STUCK:
            hub_failures.append(f"the server stopped answering after {fuzzer.sent} requests")
            break
        if check is not None and fuzzer.sent % check_every == 0:
            try:
                check()
            except AssertionError as broken:
                hub_failures.append(f"after request {fuzzer.sent} ({request.target()[:300]}): {broken}")
                if len(hub_failures) >= 10:
                    break
        if now - last_progress >= PROGRESS_EVERY:
            last_progress = now
            rate = fuzzer.sent / (now - started)
            print(
                f"  {now - started:5.0f} s  {fuzzer.sent} requests ({rate:.0f}/s), failures "
                f"{fuzzer.failures}, tables {len(fuzzer.seen_tables)}, archived {len(fuzzer.archived)}",
                flush=True,
            )
    return hub_failures


async def read_archive(fuzzer: Fuzzer, session: aiohttp.ClientSession, base: str) -> tuple[int, list[str]]:
    """Every archived game (the newest ARCHIVE_CHECKED) downloads, reads and replays."""
    failures = []
    numbers = sorted(fuzzer.archived)[-ARCHIVE_CHECKED:]
    for number in numbers:
        async with session.get(f"{base}/sgf/{number}") as response:
            text = await response.text()
            if response.status != 200:
                failures.append(f"/sgf/{number}: HTTP {response.status} {text[:200]!r}")
                continue
        try:
            check_archived(text)
        except Exception as broken:  # noqa: BLE001 - every way a record can fail is reported
            failures.append(f"/sgf/{number}: {type(broken).__name__}: {broken}\n{text[:1000]}")
    return len(numbers), failures


async def in_process(args: argparse.Namespace, seed: int, folder: Path) -> int:
    db = args.db or f"sqlite+aiosqlite:///{folder}/fuzz.sqlite3"
    errors = Errors()
    logging.getLogger().addHandler(errors)
    install_malformed_request_filter()  # as `kropki-server serve` does
    settings = Settings(host=HOST, port=0, db_url=db, migrate=True, unlimited=(HOST,), ai_workers=0)
    app = create_app(settings)
    server = TestServer(app, host=HOST)
    await server.start_server()
    lift_request_limits(app)
    hub = app[HUB_KEY]
    key = await app[TOURNAMENTS_KEY].add_key("fuzz", None, False)
    fuzzer = Fuzzer(seed, guests=args.guests, key=key)
    base = str(server.make_url("/")).rstrip("/")
    try:
        async with aiohttp.ClientSession() as session:
            with no_endless_crosses(fuzzer.hangs):
                send = http_sender(session, base, args.timeout)
                failures = await fuzz(
                    fuzzer, send, args.seconds, check=lambda: check_hub(hub), check_every=args.check_every
                )
            try:
                check_hub(hub)
                check_idle(hub)
            except AssertionError as broken:
                failures.append(f"at the end: {broken}")
            await hub.persistence.flush()
            replayed, archive_failures = await read_archive(fuzzer, session, base)
    finally:
        await server.close()
        logging.getLogger().removeHandler(errors)
    print(
        f"players online at the end: {len(hub.players)}, live tables: {len(hub.tables) - 1}, "
        f"moves played: {hub.moves_played}, malformed requests logged by aiohttp: {errors.malformed}"
    )
    return report(fuzzer, failures, archive_failures, replayed, errors.records)


async def in_subprocess(args: argparse.Namespace, seed: int, folder: Path) -> int:
    db = f"sqlite+aiosqlite:///{folder}/bench.sqlite3"  # where stream.Server keeps its database
    python = sys.executable
    subprocess.run([python, "-m", "server", "migrate", "--db", db], cwd=REPO, check=True)
    made = subprocess.run(
        [python, "-m", "server", "tournament-key", "--db", db, "add", "fuzz"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    fuzzer = Fuzzer(seed, guests=args.guests, key=made.stdout.strip())
    server = Server(python, args.log_level, folder, None)
    server.start()
    print(f"server pid {server.pid} on port {server.port}")
    base = f"http://{HOST}:{server.port}"
    try:
        async with aiohttp.ClientSession() as session:
            send = http_sender(session, base, args.timeout)
            failures = await fuzz(fuzzer, send, args.seconds, pace=Pace())
            replayed, archive_failures = await read_archive(fuzzer, session, base)
    finally:
        server.stop()
    log = server.log_path.read_text(errors="replace").splitlines()
    bad = [line for line in log if re.search(r" level=(ERROR|CRITICAL) ", line) or "request failed" in line]
    logged = [line for line in bad if not MALFORMED.search(line)]
    print(f"server log: {len(log)} lines, {len(bad) - len(logged)} malformed requests reported by aiohttp")
    if server.exited_early is not None:
        failures.append(f"the server exited on its own with {server.exited_early}")
    # a player's id is a password: in no line of the log, whatever the request (--log-level INFO for the
    # access log's lines too)
    failures += [f"an id in the log: {line[:300]}" for line in log if any(s in line for s in fuzzer.ids_used)]
    return report(fuzzer, failures, archive_failures, replayed, logged)


def report(
    fuzzer: Fuzzer,
    failures: list[str],
    archive_failures: list[str],
    replayed: int,
    logged: list[str],
) -> int:
    print(fuzzer.summary())
    print(f"archived records read back and replayed: {replayed}")
    for problem in fuzzer.problems:
        print(f"FAILURE {problem}")
    if fuzzer.failures > len(fuzzer.problems):
        print(f"... and {fuzzer.failures - len(fuzzer.problems)} more failures")
    for line in fuzzer.hangs[:20]:
        print(f"FAILURE hang: {line}")
    for line in failures:
        print(f"FAILURE hub: {line}")
    for line in archive_failures[:20]:
        print(f"FAILURE archive: {line}")
    for line in logged[:20]:
        print(f"FAILURE logged: {line}")
    bad = fuzzer.failures + len(fuzzer.hangs) + len(failures) + len(archive_failures) + len(logged)
    print("result:", "FAILED" if bad else "OK", f"({bad} failures)")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to fuzz (default 300)")
    parser.add_argument("--seed", type=int, help="the random seed (default: a new one, printed)")
    parser.add_argument("--subprocess", action="store_true", help="fuzz `python -m server serve` instead")
    parser.add_argument(
        "--guests", type=int, help="guests besides the two registered players (default 5, --subprocess 15)"
    )
    parser.add_argument("--check-every", type=int, default=50, help="hub invariants every N requests")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds a request may take")
    parser.add_argument("--db", help="in-process only: a database URL instead of a throwaway SQLite file")
    parser.add_argument("--log-level", default="WARNING", help="--subprocess: the server's log level")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    if args.guests is None:
        args.guests = 15 if args.subprocess else 5
    mode = "a server process" if args.subprocess else "the app in this process"
    print(f"fuzzing {mode} for {args.seconds:.0f} s, seed {seed}", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kropki-fuzz-") as folder:
        run = in_subprocess if args.subprocess else in_process
        status = asyncio.run(run(args, seed, Path(folder)))
    print(f"took {time.monotonic() - started:.0f} s; rerun with --seed {seed}")
    return status


if __name__ == "__main__":
    sys.exit(main())
