"""The one middleware every request passes: limits, security headers, the reply's time in /metrics,
the connection cap's view of the request (server/web/connections.py), and a 503 rather than a 500 for
a page that finds the database out of reach.

One middleware rather than three: each layer costs a coroutine and an await per request, and an
empty poll is cheap enough for that to show (issue 19: empty polls against aiohttp's hello-world).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.store.outage import unavailable
from server.web import clients, headers
from server.web.accesslog import SEEN_BY_THE_APP
from server.web.common import DATABASE_UNREACHABLE
from server.web.connections import GUARD_KEY, watch
from server.web.metrics import METRICS_KEY

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def front_door(request: web.Request, handler: Handler) -> web.StreamResponse:
    guard = request.app.get(GUARD_KEY)
    if guard is None:  # served without the connection cap (a test's own server)
        return await _answer(request, handler)
    return await watch(guard, request, lambda: _answer(request, handler))


async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    request[SEEN_BY_THE_APP] = True  # the access log may ask this request for its app
    try:
        headers.refuse_long_segment(request)
        refused_now = clients.refusal(request)
        response = await handler(request) if refused_now is None else refused_now
    except web.HTTPException as refused:
        refused.headers.update(headers.SECURITY_HEADERS)
        raise
    except Exception as failure:
        if unavailable(failure) is None:
            raise
        # a page that reads the database (the archive, a game's replay): 503, as the endpoints that catch
        # it themselves answer, never aiohttp's 500
        response = web.Response(status=503, text=DATABASE_UNREACHABLE, headers={"Retry-After": "5"})
    finally:
        request.app[METRICS_KEY].observe_reply(request, time.perf_counter() - started)
    headers.finish(request, response)
    return response
