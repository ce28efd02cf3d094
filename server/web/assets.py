"""The built-in web client's files: gzip-compressed, and under versioned names that browsers keep.

The page (`/`, `/index.html`) names its stylesheet and script as `assets/<version>/client.css` and
`assets/<version>/client.js`, `<version>` being a hash of the whole folder; the script's own imports
(`./protocol.js`) are relative to it, so they carry the version too, while its requests (`a.kropki`) are
relative to the page and do not. The client's other pages (the archive's `games.html`, `game.html`,
`player.html`, served by server/web/archive.py and pages.py at `/games`, `/game/<n>`, `/player/<nick>`;
`standings.html`, served by server/web/tournament.py at `/tournament/<name>/standings`) are rewritten
the same way, keeping the `../` of a page folders down. A versioned file is cached for a year
(`immutable`): a new release has a new version, and the page, which is never cached without asking
(`no-cache`, with an ETag), names it. Text files go out gzipped to clients that accept it, compressed
once a process, when the first app is built.

An operator's folder (`--static`) is served by aiohttp's static files, which send a file's `.gz` or
`.br` sibling when there is one (docs/operations.md, "nginx").
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hashlib
import mimetypes
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from server.web.budget import Overbooked, SendingBudget, waited
from server.web.headers import CLIENT_POLICY, CSP

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
COMPRESSED = (".html", ".js", ".css", ".svg", ".json", ".txt")
SMALLEST_COMPRESSED = 1024  # bytes: smaller files are sent as they are (gzip would barely help)
SLICE = 64 * 1024  # bytes: a bigger body is written a slice at a time, each once the last is taken
SLICE_TIMEOUT = 30.0  # seconds a client may take to take a slice in before its connection is closed


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes | None
    content_type: str
    etag: str


class Assets:
    def __init__(self, folder: Path) -> None:
        files = sorted(path for path in folder.rglob("*") if path.is_file() and path.suffix != ".pyc")
        contents = {path.relative_to(folder).as_posix(): path.read_bytes() for path in files}
        digest = hashlib.sha256()
        for name, body in contents.items():
            digest.update(name.encode() + b"\0" + body + b"\0")
        self.version = digest.hexdigest()[:12]
        self.files = {name: _asset(name, body) for name, body in contents.items()}
        self.pages = {
            name: _asset(name, _versioned_links(body.decode(), self.version).encode())
            for name, body in contents.items()
            if name.endswith(".html")
        }
        self.page = self.pages["index.html"]

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/", self._index)
        app.router.add_get("/index.html", self._index)
        app.router.add_get("/assets/{version}/{name:.+}", self._versioned)
        app.router.add_get("/{name:[^/]+}", self._plain)  # the names of before: pages cached elsewhere

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return await asset_response(request, self.page, REVALIDATE)

    async def _versioned(self, request: web.Request) -> web.StreamResponse:
        asset = self._found(request.match_info["name"])
        # a page of an earlier version asking: the file as it is now, which it must not keep for long
        cached = IMMUTABLE if request.match_info["version"] == self.version else REVALIDATE
        return await asset_response(request, asset, cached)

    async def _plain(self, request: web.Request) -> web.StreamResponse:
        return await asset_response(request, self._found(request.match_info["name"]), REVALIDATE)

    def _found(self, name: str) -> Asset:
        asset = self.files.get(name)
        if asset is None or name in self.pages:  # a page only at its own address, its links rewritten
            raise web.HTTPNotFound()
        return asset

    async def page_response(self, request: web.Request, name: str, status: int = 200) -> web.StreamResponse:
        """A page of the client other than the index; with another status (404) it still shows, and its
        script says why."""
        if status != 200:
            body, headers = self.pages[name].body, {CSP: CLIENT_POLICY}
            return web.Response(status=status, body=body, content_type="text/html", headers=headers)
        return await asset_response(request, self.pages[name], REVALIDATE)


# The built-in client's files, for its other pages; absent when --static replaces the client.
PAGES_KEY = web.AppKey("pages", Assets)


def _versioned_links(page: str, version: str) -> str:
    """A page's stylesheets and scripts (`client.js`, `../pages.css`, `../../standings.css`) under the
    versioned names."""
    return re.sub(r'(href|src)="((?:\.\./)*)([\w-]+\.(?:css|js))"', rf'\1="\2assets/{version}/\3"', page)


@functools.cache
def _asset(name: str, body: bytes) -> Asset:
    """Compressed once a process, whatever the number of apps built (the suite builds some thousand)."""
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if content_type.startswith("text/") or content_type == "application/javascript":
        content_type += "; charset=utf-8"
    compress = name.endswith(COMPRESSED) and len(body) >= SMALLEST_COMPRESSED
    gzipped = gzip.compress(body, compresslevel=9, mtime=0) if compress else None
    return Asset(body, gzipped, content_type, '"' + hashlib.sha256(body).hexdigest()[:16] + '"')


async def asset_response(
    request: web.Request,
    asset: Asset,
    cache_control: str,
    more: Mapping[str, str] | None = None,
    budget: SendingBudget | None = None,
) -> web.StreamResponse:
    """The asset, gzipped to a client that takes it, or 304 to one that has it (its ETag); `more`:
    headers of its own (a download's name); `budget`: the one its body's bytes are sent within (a public
    answer's, server/web/budget.py), refused with 503 when that is taken for too long."""
    headers = {"Cache-Control": cache_control, "ETag": asset.etag, "Content-Type": asset.content_type}
    headers.update(more or {})
    if asset.content_type.startswith("text/html"):
        headers[CSP] = CLIENT_POLICY
    if asset.gzipped is not None:
        headers["Vary"] = "Accept-Encoding"
    if asset.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    body = asset.body
    if asset.gzipped is not None and "gzip" in request.headers.get("Accept-Encoding", ""):
        body, headers["Content-Encoding"] = asset.gzipped, "gzip"
    if request.method == "HEAD":
        return web.Response(body=body, headers=headers)
    if budget is not None:
        try:
            await waited(budget.first(min(len(body), SLICE)))
        except Overbooked as refused:
            return web.json_response(
                {"error": "too many public answers are being sent; try again later"},
                status=503,
                headers={"Retry-After": str(refused.retry_after), "Cache-Control": "no-store"},
            )
    if len(body) <= SLICE:
        return web.Response(body=body, headers=headers)
    return await sliced(request, body, headers, budget)


async def sliced(
    request: web.Request, body: bytes, headers: dict[str, str], budget: SendingBudget | None = None
) -> web.StreamResponse:
    """A big body (a whole tournament's tables: megabytes) written a slice at a time: aiohttp hands a
    body to the transport whole, which keeps what the socket does not take, a copy for each request
    (asyncio's transport copies; aiohttp joins the headers to it before Python 3.12.9), so six clients
    that did not read a 6 MB answer held 16 MB. A slice is written once the transport has taken the
    last (`StreamResponse.write` waits for it), and a client that takes none for SLICE_TIMEOUT has its
    connection closed: it holds at most a slice or two, and not for long. With a `budget`, whose turn the
    first slice has had, each further slice waits for its own."""
    response = web.StreamResponse(headers=headers)
    response.content_length = len(body)
    view = memoryview(body)
    try:
        await response.prepare(request)
        for start in range(0, len(body), SLICE):
            if budget is not None and start:
                await waited(budget.more(min(len(body) - start, SLICE)))
            async with asyncio.timeout(SLICE_TIMEOUT):
                await response.write(view[start : start + SLICE])
        await response.write_eof()
    except TimeoutError:
        if request.transport is not None:
            request.transport.abort()
    except ConnectionError:
        pass  # the client went away: nothing more to send
    return response
