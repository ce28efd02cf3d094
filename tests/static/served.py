"""The server the browser tests talk to: the app `serve` builds, from the settings `serve` reads off its
command line, served as `serve` serves it (behind the connection guard, with its access log), on a loop
in a thread of the test's own process.

Not a `serve` process of its own: starting one cost about 1.5 s of CPU a test (importing the server and
its libraries again), some 120 s of the browser tests' 300 on 2026-12-01. `serve` itself is tested as
a process in tests/test_cli.py and tests/test_restart.py, and the browser tests of a restart
(test_client.py) and of a full disk (test_take_back.py) still start one. Unlike a killed process, this
server stops cleanly after every test, while its pages' connections are closing.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from server.app import create_app
from server.cli import build_parser
from server.serveflags import resolve_settings
from server.store.idhash import MIN_COST
from server.web.accesslog import RedactingAccessLogger
from tests.conftest import ServedAsInProduction

START_SECONDS = 60  # the app opens its store and the schema check runs before it listens
STOP_SECONDS = 60


class ServerInThread:
    """`serve --db <db_url> <flags>` (with the suite's hash cost and no KROPKI_ settings from the
    environment, as tests/test_restart.py's Server), listening on a port the kernel chose."""

    def __init__(self, db_url: str, *, ai_workers: int = 0, flags: Sequence[str] = ()) -> None:
        arguments = ["serve", "--db", db_url, "--ai-workers", str(ai_workers)]
        arguments += ["--id-hash-cost", str(MIN_COST), *flags]
        environ = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
        self.settings = resolve_settings(build_parser().parse_args(arguments), environ)
        self.db_url = db_url
        self.base = ""  # http://127.0.0.1:<port>, once running

    @contextmanager
    def running(self) -> Iterator[ServerInThread]:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="served-app", daemon=True)
        thread.start()
        try:
            served = asyncio.run_coroutine_threadsafe(self._start(), loop).result(START_SECONDS)
            try:
                yield self
            finally:
                asyncio.run_coroutine_threadsafe(self._stop(served), loop).result(STOP_SECONDS)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()

    async def _start(self) -> ServedAsInProduction:
        served = ServedAsInProduction(create_app(self.settings), self.settings.max_connections)
        await served.start_server(access_log_class=RedactingAccessLogger)
        self.base = str(served.make_url("")).rstrip("/")
        return served

    @staticmethod
    async def _stop(served: ServedAsInProduction) -> None:
        """The app's clean-up (the store closed, its queue written), then whatever the hub left waiting."""
        await served.close()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
