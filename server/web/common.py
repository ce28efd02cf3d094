"""What every HTTP handler module shares: the hub's app key, plain-text answers, failure logging."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from aiohttp import web

from server.director.director import Director
from server.hub.hub import Hub
from server.hub.sessions import Carried
from server.logs import Fields
from server.store.outage import safe_trace, unavailable
from server.store.store import Store
from server.web.headers import TEXT_HEADERS
from server.web.limits import LoginGuard
from server.web.metrics import METRICS_KEY

if TYPE_CHECKING:
    from server.cluster.membership import Membership
    from server.cluster.nicks import NickClaims
    from server.cluster.sessions import SessionMover

log = logging.getLogger(__name__)

HUB_KEY = web.AppKey("hub", Hub)
STORE_KEY = web.AppKey("store", Store)
LOGIN_GUARD_KEY = web.AppKey("login_guard", LoginGuard)  # failed logins and guessed ids (docs/protocol.md)
# Set on a server that runs its own tournaments (not on a member of a cluster: docs/tournaments.md)
DIRECTOR_KEY = web.AppKey("director", Director)
# Set only on a member of a cluster (server/app.py); redis-py is imported only then.
MEMBERSHIP_KEY: web.AppKey[Membership] = web.AppKey("membership")
NICKS_KEY: web.AppKey[NickClaims] = web.AppKey("nicks")
MOVER_KEY: web.AppKey[SessionMover] = web.AppKey("mover")
# A page that reads the database while it cannot be reached answers 503 with this (the store's writer logs
# the outage, once)
DATABASE_UNREACHABLE = "The database cannot be reached now: try again.\n"
Query = Mapping[str, str]  # a request's query


@asynccontextmanager
async def nick_claimed(
    request: web.Request, nick: str, take_over: Callable[[str], Awaitable[Carried | None]] | None = None
) -> AsyncIterator[Carried | None]:
    """Around a login: on a member of a cluster, the nick must not be online on another member
    (server/cluster/nicks.py), unless `take_over(member)` ends the session that holds it there (a guest
    back with a new id: server/cluster/sessions.py); what that gave is yielded."""
    claims = request.app.get(NICKS_KEY)
    if claims is None:
        yield None
        return
    async with claims.claiming(nick, take_over) as carried:
        yield carried


async def ask_to_give_up(request: web.Request, holder: str, nick: str, network: str) -> Carried | None:
    """Member `holder` ends its guest session of `nick` if it was used from `network` (SessionMover)."""
    return await request.app[MOVER_KEY].ask_to_give_up(holder, nick, network)


async def session_here(request: web.Request, secret: str | None) -> None:
    """On a member of a cluster, a request with an id whose session another member serves brings the
    session here first (server/cluster/sessions.py); elsewhere nothing."""
    mover = request.app.get(MOVER_KEY)
    if mover is not None and secret:
        await mover.bring(secret)


@asynccontextmanager
async def read_every(seconds: float, read: Callable[[], Awaitable[None]], what: str) -> AsyncIterator[None]:
    """`read` every `seconds` while the app runs (around a cleanup context's yield): while storage cannot
    be reached, what was read last holds, with one warning until it is back; any other failure is logged
    whole. `what`: the reading, as the log says it ("read the sanctions")."""

    async def keep_reading() -> None:
        failing = False
        while True:
            await asyncio.sleep(seconds)
            try:
                await read()
                failing = False
            except Exception as failure:
                reason = unavailable(failure)
                if reason is None:
                    log.exception("cannot %s", what)
                elif not failing:
                    log.warning("cannot %s until storage is back %s", what, Fields(reason=reason))
                failing = True

    task = asyncio.create_task(keep_reading())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def text_response(body: str) -> web.Response:
    return web.Response(body=encoded(body), headers=TEXT_HEADERS)


@functools.lru_cache(maxsize=8)
def encoded(body: str) -> bytes:
    """The hub hands the same text to many readers at once (the lobby's whole state, 100-166 KB): they
    share one encoded body instead of one copy each in flight (5,000 at once took 750 MB)."""
    return body.encode()


def log_failure(request: web.Request, co: str) -> None:
    """Log a request's unexpected failure with its trace, the player's id, any key and a bot's token
    blanked out, and a storage error's message left out (safe_trace)."""
    failure = sys.exception()
    trace = safe_trace(failure) if failure is not None else ""
    token = request.headers.get("Authorization", "").partition(" ")[2].strip()
    for secret in (*(request.query.get(name) for name in ("idGracza", "playerId", "key")), token):
        if secret:
            trace = trace.replace(secret, "***")
    log.error("request failed %s", Fields(path=request.path, co=co[:20], trace=trace))
    metrics = request.app.get(METRICS_KEY)
    if metrics is not None:
        metrics.failures.inc()
