"""An access log that never writes a player's secret.

In the zagram protocol a player's id is the player's password and travels in the query string, so the
stock aiohttp access log (which writes the request line verbatim) would leak it.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote_plus

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, Response, StreamResponse
from yarl import URL

from server.logs import Fields
from server.protocol.codec import LANGUAGES
from server.web import auth, kropki
from server.web.clients import POLICY_KEY, client_address

# What a line shows of a query (redact_query). A player's id is the player's password, and a mangled or
# mistyped request may carry it in any parameter (`msgayerId=ID`, cut by a broken proxy) or begin with it
# (`ID&co=...`); the other values are chat lines, private ones too (`msgFromClient`), nicks, addresses
# (`email`), organisers' keys and bots' tokens. So only the command and the language are shown, and only
# when they are one of the server's own; every other value is written `***`, and a piece of the query that
# names none of the protocol's parameters (docs/protocol.md) is written `***` whole.
PARAMETERS = frozenset(
    name.casefold()
    for name in (
        *("co", "idGracza", "playerId", "msgNo", "msgFromClient", "wait", "wiad", "lang", "opisGracza"),
        *("opis", "email", "id", "key", "token", "stol", "table", "newTable", "newMsgs", "where", "na"),
        *("ile", "whom", "proposal", "gameType", "sayHiTimes", "tourn", "tRound", "nick", "limit", "mode"),
        *(f"pl{n}" for n in range(1, 9)),
    )
)
SHOWN = {"co": frozenset(kropki.COMMANDS) | frozenset(auth.HANDLERS), "lang": frozenset(LANGUAGES)}
REDACTED = "***"
POLLS = frozenset({"getMsg", "getBMsg"})
SLOW_POLL = 1.0  # seconds; a slower poll without `wait=` is logged like any request
POLL_SUMMARY_EVERY = 60.0  # seconds between the lines that count the polls left out
# RequestSummaries: request lines written in a minute for one network and for the whole server, the
# networks summarized in a line each, the answers named in such a line, and networks followed at once
SUMMARY_EVERY = 60.0
LINES_PER_NETWORK = 60
LINES_PER_MINUTE = 300
SUMMARIES_PER_MINUTE = 100
ANSWERS_NAMED = 6
MAX_NETWORKS = 10_000
OTHER_NETWORKS = "(others)"


class UnparsableQuery(ValueError):
    """The query string cannot be decoded with certainty, so no part of it is safe to log."""


def redact_query(raw_query: str) -> str:
    """``raw_query`` as a log line may show it: the pieces kept in place, each value written ``***`` but
    a known command's or language's, and a piece naming no parameter of the protocol ``***`` whole.

    Names are compared after percent-decoding and case-folding (``idGr%61cza``, ``IDGRACZA``); ``;``
    separates pieces as ``&`` does, as some parsers take it (``co=x;idGracza=ID``).
    """
    pieces = re.split(r"([&;])", raw_query)
    for index in range(0, len(pieces), 2):
        if not pieces[index]:  # `&&`, or a `&` at an end
            continue
        name, sep, value = pieces[index].partition("=")
        try:
            decoded = unquote_plus(name, errors="strict").strip().casefold()
        except UnicodeDecodeError:
            raise UnparsableQuery(raw_query) from None
        if not sep or decoded not in PARAMETERS:
            pieces[index] = REDACTED
        elif value not in SHOWN.get(decoded, ()):
            pieces[index] = f"{name}={REDACTED}"
    return "".join(pieces)


class _PollCount:
    """Shared by every connection's access logger (aiohttp makes one per connection)."""

    def __init__(self) -> None:
        self.count = 0
        self.since = time.monotonic()


_POLLS = _PollCount()


@dataclass
class _NetworkLines:
    written: int = 0  # request lines written for the network in this minute
    left_out: int = 0  # and requests counted instead
    answers: Counter[str] = field(default_factory=Counter)  # what those were answered: a code or a status


class RequestSummaries:
    """What one network's requests may write to the log in a minute (docs/operations.md, "Logging").

    A refused or limited request is never written on its own line: an attacker would choose how much the
    server writes (32.6 MB in 30 s from one client). Other requests are written while their network has
    written fewer than LINES_PER_NETWORK lines this minute and the server fewer than LINES_PER_MINUTE;
    beyond that they are counted too. Once a minute, each network with requests counted gets one line
    with how many and what they were answered, at most SUMMARIES_PER_MINUTE such lines (the networks
    that sent the most first) and one more for all the others: whatever floods it, from however many
    addresses, the access log gets at most about 400 lines a minute."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.since = clock()
        self.written = 0
        self.networks: dict[str, _NetworkLines] = {}

    def may_write(self, network: str) -> bool:
        lines = self._of(network)
        if self.written >= LINES_PER_MINUTE or lines.written >= LINES_PER_NETWORK:
            return False
        lines.written += 1
        self.written += 1
        return True

    def count(self, network: str, answer: str) -> None:
        lines = self._of(network)
        lines.left_out += 1
        lines.answers[answer] += 1

    def _of(self, network: str) -> _NetworkLines:
        lines = self.networks.get(network)
        if lines is None:
            if len(self.networks) >= MAX_NETWORKS:  # a flood from very many networks: one entry for the rest
                network = OTHER_NETWORKS
            lines = self.networks.setdefault(network, _NetworkLines())
        return lines

    def write_due(self, logger: logging.Logger) -> None:
        """The minute's summaries, once it is over (at the first request after it: the stream's polls
        come every second). The networks that sent the most are named, the rest added up in one line."""
        now = self.clock()
        if now - self.since < SUMMARY_EVERY:
            return
        seconds = round(now - self.since)
        counted = sorted(
            ((network, lines) for network, lines in self.networks.items() if lines.left_out),
            key=lambda item: item[1].left_out,
            reverse=True,
        )
        self.since, self.written, self.networks = now, 0, {}
        named = [item for item in counted if item[0] != OTHER_NETWORKS][:SUMMARIES_PER_MINUTE]
        for network, lines in named:
            logger.info("requests not written %s", _summary(lines, seconds, network=network))
        written = {network for network, _ in named}
        rest = [lines for network, lines in counted if network not in written]
        if rest:
            total = _NetworkLines(left_out=sum(lines.left_out for lines in rest))
            for lines in rest:
                total.answers.update(lines.answers)
            many = "+" if any(network == OTHER_NETWORKS for network, _ in counted) else ""
            logger.info("requests not written %s", _summary(total, seconds, networks=f"{len(rest)}{many}"))


def _summary(lines: _NetworkLines, seconds: int, **where: str) -> Fields:
    answers = " ".join(f"{answer}:{n}" for answer, n in lines.answers.most_common(ANSWERS_NAMED))
    return Fields(**where, seconds=seconds, count=lines.left_out, answers=answers)


SUMMARIES_KEY = web.AppKey("request_summaries", RequestSummaries)
SEEN_BY_THE_APP = web.RequestKey("seen_by_the_app", bool)  # set on every request the front door passes
_UNROUTED = RequestSummaries()  # for requests answered before any app saw them


def refusal(status: int, body: bytes | None) -> str | None:
    """What a refused or limited request was answered (a status, or a zagram error code); None for any
    other answer."""
    if status >= 400:
        return str(status)
    if body is not None and body.startswith((b"err.", b"nieOk.")):
        return body[:40].split(b"/", 1)[0].decode("ascii", "replace")
    return None


class RedactingAccessLogger(AbstractAccessLogger):
    """One line per request: remote, method, path and redacted query, status, size, duration in ms.

    Routine polls (`getMsg`/`getBMsg` answered with a stream, quickly or as a long poll) are not
    written one by one: every client sends one a second, which would bury everything else and cost
    a third of the server's poll throughput. They are counted instead, in a line every minute; refused
    requests, and requests beyond a network's share of lines, are counted per network (RequestSummaries).
    """

    def log(self, request: BaseRequest, response: StreamResponse, duration: float) -> None:
        """Count the request or write its line; a query that cannot be redacted safely is left out,
        never logged raw."""
        body = response.body if isinstance(response, Response) else None
        if not isinstance(body, bytes):
            body = None
        status, url = response.status, request.rel_url
        summaries, address, network = _seen_by(request)
        summaries.write_due(self.logger)
        if url.raw_path == "/a.kropki" and status == 200 and self.routine_poll(request.query, body, duration):
            return
        answer = refusal(status, body)
        if answer is not None or not summaries.may_write(network):
            summaries.count(network, answer or str(status))
            return
        self.line(address, request.method, url, status, response.body_length, duration)

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
            return False  # a refused poll is counted with its network's
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


def _seen_by(request: BaseRequest) -> tuple[RequestSummaries, str | None, str]:
    """Where to count the request, the client's address (behind the trusted proxies, as the limits see
    it) and its network; for a request aiohttp answered before the app saw it (a 400), the peer's."""
    if SEEN_BY_THE_APP not in request:
        return _UNROUTED, request.remote, request.remote or "-"
    address = client_address(request)
    app = request.app
    return app[SUMMARIES_KEY], address, app[POLICY_KEY].grouping.where(address)[1]


class MalformedRequestFilter(logging.Filter):
    """Keep the request line out of aiohttp's report of a request it could not parse.

    aiohttp logs such a request at ERROR with the parser's exception, whose text quotes the raw request
    line, query string and all, so a client that sends one bad byte next to its ``idGracza`` would have its
    id written to the log. The record keeps what an operator needs: who, and which kind of error. It is
    the client's mistake, answered 400, so it is a warning: an ERROR would page whoever alerts on errors
    every time a scanner sends junk. So is a body aiohttp cannot decode (a Content-Encoding that does
    not match it): aiohttp reads what the handler left of it after the answer, and reports the parse
    error it meets there, wrapped in a RequestPayloadError, as an "Unhandled exception".
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, web.RequestPayloadError):
            exc = exc.__cause__  # the parse error, with its status
        code = getattr(exc, "code", None)  # aiohttp's parse errors carry their status, a 4xx
        if isinstance(code, int) and 400 <= code < 500:
            record.msg = f"{record.msg}: {type(exc).__name__} ({code})"
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


_MALFORMED_REQUEST_FILTER = MalformedRequestFilter()


def install_malformed_request_filter() -> None:
    """Attach the filter to aiohttp's server logger; safe to call more than once."""
    logging.getLogger("aiohttp.server").addFilter(_MALFORMED_REQUEST_FILTER)
