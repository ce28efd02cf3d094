"""Headers every response gets, and compression where it pays."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web
from multidict import CIMultiDict

NAME_MAX = 255  # bytes in a file name: a longer path segment names nothing here
COMPRESS_ABOVE = 1_024  # bytes; smaller bodies (most polls) are not worth the CPU
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
    # URLs carry players' ids (index.html?id=..., a.kropki?idGracza=...): never hand them to another site
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
SECURITY_MARK = next(iter(SECURITY_HEADERS))
# The built-in client's pages (server/web/assets.py): their own scripts, styles and requests only,
# nothing inline, no plugins, no <base>, never in a frame; `data:` for the empty icon
# (`<link rel="icon" href="data:,">`).
CLIENT_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# The pages of an operator's folder (--static): the zagram web client has inline scripts and handlers,
# and another client may load anything from anywhere, so only what no page needs to do
# (docs/operations.md, "Response headers").
FOLDER_POLICY = "base-uri 'self'; frame-ancestors 'self'"
CSP = "Content-Security-Policy"
# The zagram endpoints' plain-text answers. Built once: most answers are short texts, and an empty poll
# is cheap enough for building headers anew each time to show (issue 19.3); the security headers are
# here so that the front door need not add them again.
TEXT_HEADERS = CIMultiDict(
    {"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", **SECURITY_HEADERS}
)


def refuse_long_segment(request: web.Request) -> None:
    """No route has a path segment longer than a file name, and the static folder's look-up would fail
    on one (500): 404 before routing. The percent-encoded path is at least as long as any segment's
    bytes, so most paths need no split."""
    if len(request.rel_url.raw_path) > NAME_MAX and any(
        len(segment.encode()) > NAME_MAX for segment in request.path.split("/")
    ):
        raise web.HTTPNotFound(text="No such page.\n")


def finish(request: web.Request, response: web.StreamResponse) -> None:
    """The security headers on every answer, and compression where it pays."""
    if SECURITY_MARK not in response.headers:  # text_response's come with them
        response.headers.update(SECURITY_HEADERS)
    if (
        isinstance(response, web.Response)
        and isinstance(response.body, bytes)
        and worth_compressing(response.body, request.headers)
        and "Content-Encoding" not in response.headers  # the web client's files come compressed
    ):
        response.enable_compression()


async def folder_page_policy(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare with --static: FOLDER_POLICY on its HTML pages. A signal, since aiohttp's
    static files know their type only as they are sent; the built-in client does without."""
    if response.content_type == "text/html" and CSP not in response.headers:
        response.headers[CSP] = FOLDER_POLICY


def worth_compressing(body: bytes, request_headers: Mapping[str, str]) -> bool:
    """A body big enough to pay for compressing, to a client that takes gzip."""
    return len(body) > COMPRESS_ABOVE and "gzip" in request_headers.get("Accept-Encoding", "")
