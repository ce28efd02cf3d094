"""A real `kropki-server serve` whose storage fails for real (its SQLite file on a small tmpfs that fills
up, or its PostgreSQL database turned read-only): moves are refused, /readyz says why, and SIGTERM stops
it within 30 s with one line naming what it could not write. The game comes back without the move that
was never acknowledged, and goes on."""

from __future__ import annotations

import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import NewDatabase
from tests.store.breakers import Breaker, PostgresReadOnly, fill, small_disk
from tests.test_restart import Guest, Server, start_game

STOP_WITHIN = 30.0  # seconds: the bound (systemd waits 90, deploy/kropki-server.service)


class FullDisk(Breaker):
    reason = "disk full"

    def __init__(self, disk: Path) -> None:
        self.disk = disk

    async def break_storage(self) -> None:
        self.filler = fill(self.disk)

    async def mend(self) -> None:
        self.filler.unlink()


@contextmanager
def failing_storage(tmp_path: Path, new_database: NewDatabase) -> Iterator[tuple[Server, Breaker]]:
    """A server on storage the test can break: a tmpfs for SQLite, the suite's PostgreSQL otherwise."""
    url = new_database(tmp_path, False)
    if url.startswith("postgresql"):
        yield Server(tmp_path, url), PostgresReadOnly(url)
        return
    with small_disk(tmp_path / "disk", "8m") as disk:
        yield Server(tmp_path, f"sqlite+aiosqlite:///{disk / 'kropki.sqlite3'}"), FullDisk(disk)


def readyz(server: Server) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(f"{server.base}/readyz", timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


async def test_sigterm_with_storage_failing_stops_in_time_and_says_what_was_not_written(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    with failing_storage(tmp_path, new_database) as (server, breaker):
        with server.running(migrate=True):
            ala, bob = Guest(server, "ala123", "*Ala"), Guest(server, "bob456", "*Bob")
            for guest in (ala, bob):
                guest.login()
                guest.poll()
            uid, blue, red = start_game(ala, bob)
            blue.move(uid, "aa")
            await breaker.break_storage()
            assert red.get(co="graczStawiaKropke", table=str(uid), where="hh") == "err.storage"
            assert blue.get(co="dodajWpis", table=str(uid), newMsgs="still there?") == "err.storage"
            status, body = readyz(server)
            assert status == 503 and body["reason"].startswith("storage failing since "), body
            assert server.process is not None
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            assert server.process.wait(timeout=STOP_WITHIN + 5) == 0
            took = time.monotonic() - started
            await breaker.mend()
        log = server.log()
        assert took < STOP_WITHIN, (took, log)
        assert log.count("storage failing") == 1, log
        [stopped] = [line for line in log.splitlines() if "stopped with writes storage did not take" in line]
        assert f"journal={uid}:" in stopped and "level=ERROR" in stopped, stopped
        for secret in ("ala123", "bob456"):
            assert secret not in log

        with server.running():  # the move answered err.storage was never stored: the game is as acknowledged
            assert f"table restored uid={uid} moves=1 result=None" in server.log(), server.log()
            red.poll()
            red.move(uid, "hh")
            blue.move(uid, "ca")
            assert server.stop(signal.SIGTERM) == 0
        assert "storage failing" not in server.log()
