"""Liveness (`/healthz`) and readiness (`/readyz`) probes for load balancers, systemd and Docker."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from aiohttp import web

from server import __version__
from server.logs import Fields
from server.store.database import SchemaError, check_schema, utc_text
from server.store.serverlock import AdvisoryLock
from server.web.clients import reads_metrics
from server.web.common import MEMBERSHIP_KEY, STORE_KEY

log = logging.getLogger(__name__)

READY_TIMEOUT = 5.0
# A stranger is answered the last readiness worked out if it is younger than this: each check asks the
# database (2.1 ms of CPU here), and /readyz is open to the internet, where before 200 requests a second
# from one address kept 40% of a core on it, and many addresses more (docs/operations.md, "Abuse limits")
PUBLIC_AGE = 1.0
routes = web.RouteTableDef()

Readiness = tuple[int, dict[str, object]]


class SharedReadiness:
    """The last readiness worked out, and the check under way: strangers share them, so that the
    database is asked at most once a PUBLIC_AGE for all of them; whoever may read /metrics (the
    operator's probes) is checked afresh, which the strangers then share."""

    def __init__(self) -> None:
        self.last: Readiness | None = None
        self.checked_at = 0.0
        self.checking: asyncio.Task[Readiness] | None = None

    async def fresh(self, app: web.Application) -> Readiness:
        self.last, self.checked_at = await _readiness(app), asyncio.get_running_loop().time()
        return self.last

    async def shared(self, app: web.Application) -> Readiness:
        if self.last is not None and asyncio.get_running_loop().time() - self.checked_at < PUBLIC_AGE:
            return self.last
        if self.checking is None:
            self.checking = asyncio.create_task(self.fresh(app))
            self.checking.add_done_callback(self._checked)
        return await asyncio.shield(self.checking)  # a stranger who hangs up ends no one else's wait

    def _checked(self, task: asyncio.Task[Readiness]) -> None:
        self.checking = None
        if not task.cancelled():
            task.exception()  # retrieved: its strangers may all have hung up, and each waiter gets it


READINESS_KEY = web.AppKey("readiness", SharedReadiness)


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    """Answer as long as the event loop serves requests; never cached, so a probe sees the live process."""
    return web.json_response(
        {"status": "ok", "version": __version__},
        headers={"Cache-Control": "no-store"},
    )


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    """The readiness (`_readiness`), with its reasons and the cluster's state for whom may read
    /metrics (loopback, the proxy itself, --metrics-from) and its status alone for anyone else: the
    shipped nginx sites forward /readyz from the internet, and the reasons name the database lock's
    holder (host, port, pid), the cluster's members and why Redis does not answer."""
    readiness = request.app[READINESS_KEY]
    if reads_metrics(request):
        status, answer = await readiness.fresh(request.app)
    else:
        status, answer = await readiness.shared(request.app)
        answer = {key: answer[key] for key in ("status", "version") if key in answer}
    return web.json_response(answer, status=status, headers={"Cache-Control": "no-store"})


async def _readiness(app: web.Application) -> Readiness:
    """Ready to serve players: storage takes writes (known without asking the database again while
    it does not), the database answers and its schema is the code's, and no other process holds the
    PostgreSQL lock this one lost; degraded while that lock is being taken back. A member of a
    cluster also says how it stands with Redis and the other members."""
    writer = app[STORE_KEY].writer
    if writer.storage_failure is not None and writer.failing_since is not None:
        since = utc_text(datetime.fromtimestamp(writer.failing_since, UTC))
        return _unready(f"storage failing since {since}: {writer.storage_failure}")
    try:
        async with asyncio.timeout(READY_TIMEOUT):
            await check_schema(app[STORE_KEY].engine)
    except SchemaError as old:
        return _unready(old.reason)  # not str(old): that names the database
    except Exception as failure:  # unreachable, locked, timed out: the probe says so instead of failing
        log.warning("readiness check failed %s", Fields(error=type(failure).__name__))
        return _unready(f"database unreachable ({type(failure).__name__})")
    lock = app[STORE_KEY].server_lock
    if isinstance(lock, AdvisoryLock) and lock.taken_by is not None:
        # Two servers on one database, or two processes as one member: this one is not to be trusted
        # with players until the operator stops one (docs/operations.md, "One server per database").
        return _unready(f"database lock held by another process: {lock.taken_by}")
    answer: dict[str, object] = {"status": "ready", "version": __version__}
    lacking: list[str] = []
    if isinstance(lock, AdvisoryLock) and lock.lost_since is not None:
        # Lost with its connection and being taken back: the server still serves its players.
        since = utc_text(datetime.fromtimestamp(lock.lost_since, UTC))
        lacking.append(f"database lock lost since {since} ({lock.lost_because}): {lock.risk()}")
    membership = app.get(MEMBERSHIP_KEY)
    if membership is not None:
        # A member cut off from Redis still serves its own players: it stays in its balancer's pool
        # (200), and says what it lacks (docs/cluster.md).
        answer["cluster"] = membership.status()
        if not membership.connected:
            lacking.append("redis unreachable: serving this member's players only")
    if lacking:
        answer["status"] = "degraded"
        answer["reason"] = "; ".join(lacking)
    return 200, answer


def _unready(reason: str) -> Readiness:
    return 503, {"status": "unready", "reason": reason}
