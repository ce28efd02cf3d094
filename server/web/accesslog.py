"""An access log that never writes a player's secret.

In the zagram protocol a player's id is the player's password and travels in the query string, so the
stock aiohttp access log (which writes the request line verbatim) would leak it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from urllib.parse import unquote_plus

from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web import BaseRequest, Response, StreamResponse
from yarl import URL

from server.logs import Fields

# ``idGracza``/``playerId`` name the player on every endpoint, ``key`` is a tournament organiser's key and
# ``id`` carries the player id to the web client's auto-login page (``index.html?id=ID&opis=NICK``);
# ``email`` (registration) is personal data an access log has no need of.
SECRET_PARAMETERS = frozenset({"idgracza", "playerid", "key", "id", "email"})
REDACTED = "***"
POLLS = frozenset({"getMsg", "getBMsg"})
SLOW_POLL = 1.0  # seconds; a slower poll without `wait=` is logged like any request
POLL_SUMMARY_EVERY = 60.0  # seconds between the lines that count the polls left out


class UnparsableQuery(ValueError):
    """The query string cannot be decoded with certainty, so no part of it is safe to log."""


def redact_query(raw_query: str) -> str:
    """``raw_query`` with the value of every secret parameter replaced by ``***``, the rest kept verbatim.

    Names are compared after percent-decoding and case-folding, so ``idGr%61cza`` or ``IDGRACZA`` is
    redacted as well: a false positive costs a log detail, a false negative leaks a password.
    """
    # Split on ';' as well as '&': some parsers treat both as separators, and a secret must not hide
    # inside another parameter's value (``co=x;idGracza=SECRET``).
    pieces = re.split(r"([&;])", raw_query)
    for index in range(0, len(pieces), 2):
        name, sep, _value = pieces[index].partition("=")
        try:
            decoded = unquote_plus(name, errors="strict")
        except UnicodeDecodeError:
            raise UnparsableQuery(raw_query) from None
        if sep and decoded.strip().casefold() in SECRET_PARAMETERS:
            pieces[index] = f"{name}={REDACTED}"
    return "".join(pieces)


class _PollCount:
    """Shared by every connection's access logger (aiohttp makes one per connection)."""

    def __init__(self) -> None:
        self.count = 0
        self.since = time.monotonic()


_POLLS = _PollCount()


class RedactingAccessLogger(AbstractAccessLogger):
    """One line per request: remote, method, path and redacted query, status, size, duration in ms.

    Routine polls (`getMsg`/`getBMsg` answered with a stream, quickly or as a long poll) are not
    written one by one: every client sends one a second, which would bury everything else and cost
    a third of the server's poll throughput. They are counted instead, in a line every minute.
    """

    def log(self, request: BaseRequest, response: StreamResponse, duration: float) -> None:
        """Write the access line; a query that cannot be redacted safely is left out, never logged raw."""
        body = response.body if isinstance(response, Response) else None
        if (
            request.rel_url.raw_path == "/a.kropki"
            and response.status == 200
            and self.routine_poll(request.query, body if isinstance(body, bytes) else None, duration)
        ):
            return
        self.line(
            request.remote, request.method, request.rel_url, response.status, response.body_length, duration
        )

    def line(
        self, remote: str | None, method: str, url: URL, status: int, length: int, duration: float
    ) -> None:
        target = url.raw_path
        raw_query = url.raw_query_string
        if raw_query:
            try:
                target = f"{target}?{redact_query(raw_query)}"
            except UnparsableQuery:
                target = f"{target} (unparsable query string not logged)"
        self.logger.info(
            "request %s",
            Fields(
                remote=remote or "-",
                method=method,
                target=target,
                status=status,
                bytes=length,
                ms=f"{duration * 1000:.1f}",
            ),
        )

    def routine_poll(self, query: Mapping[str, str], body: bytes | None, duration: float) -> bool:
        """Whether a 200 answer of /a.kropki is a routine poll, counted instead of written (and count it)."""
        if body is not None and body.startswith(b"err."):
            return False  # a refused poll is worth a line
        if query.get("co") not in POLLS or (duration >= SLOW_POLL and "wait" not in query):
            return False
        _POLLS.count += 1
        now = time.monotonic()
        if now - _POLLS.since >= POLL_SUMMARY_EVERY:
            self.logger.info(
                "polls answered %s", Fields(count=_POLLS.count, seconds=round(now - _POLLS.since))
            )
            _POLLS.count, _POLLS.since = 0, now
        return True

    @property
    def enabled(self) -> bool:
        """Skip building the line when nobody would read it."""
        return self.logger.isEnabledFor(logging.INFO)


class MalformedRequestFilter(logging.Filter):
    """Keep the request line out of aiohttp's report of a request it could not parse.

    aiohttp logs such a request at ERROR with the parser's exception, whose text quotes the raw request
    line, query string and all, so a client that sends one bad byte next to its ``idGracza`` would have its
    id written to the log. The record keeps what an operator needs: who, and which kind of error. It is
    the client's mistake, answered 400, so it is a warning: an ERROR would page whoever alerts on errors
    every time a scanner sends junk.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            record.msg = f"{record.msg}: {type(exc).__name__} ({exc.code})"
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


_MALFORMED_REQUEST_FILTER = MalformedRequestFilter()


def install_malformed_request_filter() -> None:
    """Attach the filter to aiohttp's server logger; safe to call more than once."""
    logging.getLogger("aiohttp.server").addFilter(_MALFORMED_REQUEST_FILTER)
