"""Headers every response gets, and compression where it pays."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

NAME_MAX = 255  # bytes in a file name: a longer path segment names nothing here
COMPRESS_ABOVE = 1_024  # bytes; smaller bodies (most polls) are not worth the CPU
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
    # URLs carry players' ids (index.html?id=..., a.kropki?idGracza=...): never hand them to another site
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def security_and_compression(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        # the percent-encoded path is at least as long as any segment's bytes: most paths need no split
        long_path = len(request.rel_url.raw_path) > NAME_MAX
        if long_path and any(len(segment.encode()) > NAME_MAX for segment in request.path.split("/")):
            # no route has such a segment, and the static folder's look-up would fail on it (500)
            raise web.HTTPNotFound(text="No such page.\n")
        response = await handler(request)
    except web.HTTPException as refused:
        refused.headers.update(SECURITY_HEADERS)
        raise
    response.headers.update(SECURITY_HEADERS)
    if (
        isinstance(response, web.Response)
        and isinstance(response.body, bytes)
        and len(response.body) > COMPRESS_ABOVE
        and "gzip" in request.headers.get("Accept-Encoding", "")
    ):
        response.enable_compression()
    return response
