"""The access log must never contain a player's id (in the zagram protocol it is the player's password),
wherever a request carries it, nor a chat line: it shows a query's command and language, and no other
value."""

from __future__ import annotations

import asyncio
import logging
import re
from urllib.parse import quote_plus, urlencode

import pytest
from aiohttp.test_utils import TestServer
from hypothesis import given
from hypothesis import strategies as st
from pytest_aiohttp import AiohttpServer

from server.app import create_app
from server.config import Settings
from server.web import accesslog, clients
from server.web.accesslog import (
    PARAMETERS,
    SHOWN,
    RedactingAccessLogger,
    UnparsableQuery,
    install_malformed_request_filter,
    redact_query,
)
from server.web.limits import TokenBuckets


@pytest.fixture
async def server(
    aiohttp_server: AiohttpServer, settings: Settings, caplog: pytest.LogCaptureFixture
) -> TestServer:
    """The real app behind a real socket, logging through the redacting access logger as `serve` does."""
    caplog.set_level(logging.DEBUG)
    install_malformed_request_filter()
    return await aiohttp_server(create_app(settings), access_log_class=RedactingAccessLogger)


async def raw_get(server: TestServer, target: bytes) -> bytes:
    """Send a request line byte for byte, as a broken or hostile client would; return the status line."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(b"GET " + target + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    await writer.drain()
    response = await reader.read()
    writer.close()
    await writer.wait_closed()
    return response.split(b"\r\n", 1)[0]


def access_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "aiohttp.access"]


async def test_player_ids_are_redacted_and_the_command_kept(
    server: TestServer, caplog: pytest.LogCaptureFixture
) -> None:
    status = await raw_get(server, b"/healthz?idGracza=SECRET123&playerId=SECRET456&co=getMsg&msgNo=3")

    assert status == b"HTTP/1.1 200 OK"
    (line,) = access_lines(caplog)
    assert re.fullmatch(
        r'request remote=127\.0\.0\.1 method=GET target="/healthz\?idGracza=\*\*\*&playerId=\*\*\*&co=getMsg'
        r'&msgNo=\*\*\*" status=200 bytes=\d+ ms=\d+\.\d',
        line,
    )
    assert "SECRET" not in caplog.text


async def test_a_registration_logs_neither_the_id_nor_the_email(
    server: TestServer, caplog: pytest.LogCaptureFixture
) -> None:
    status = await raw_get(
        server, b"/auth.py?co=rejestruj&opisGracza=Alice&idGracza=K4ZUPkUzXY&email=a%40b.org"
    )

    assert status == b"HTTP/1.1 200 OK"
    line = next(line for line in access_lines(caplog) if "/auth.py" in line)
    assert 'target="/auth.py?co=rejestruj&opisGracza=***&idGracza=***&email=***" status=200 ' in line


async def test_disguised_secret_names_are_redacted(
    server: TestServer, caplog: pytest.LogCaptureFixture
) -> None:
    await raw_get(server, b"/index.html?id=SECRET1&opis=Ala&lang=pl")
    await raw_get(server, b"/healthz?co=setUpTable&key=SECRET2&pl1=a")
    await raw_get(server, b"/healthz?idGr%61cza=SECRET3&IDGRACZA=SECRET4&co=x;playerId=SECRET5")
    await raw_get(server, b"/healthz?token=SECRET6")  # a bot's token, where docs/bots.md says not to put it

    lines = access_lines(caplog)
    assert len(lines) == 4
    assert 'target="/index.html?id=***&opis=***&lang=pl" status=200 ' in lines[0]  # the built-in client
    assert 'target="/healthz?co=setUpTable&key=***&pl1=***" status=200 ' in lines[1]
    assert 'target="/healthz?idGr%61cza=***&IDGRACZA=***&co=***;playerId=***" status=200 ' in lines[2]
    assert 'target="/healthz?token=***" status=200 ' in lines[3]
    assert "SECRET" not in caplog.text


async def test_undecodable_query_is_left_out_of_the_log(
    server: TestServer, caplog: pytest.LogCaptureFixture
) -> None:
    # %FF is not UTF-8: the name cannot be read with certainty, so none of the query is logged.
    status = await raw_get(server, b"/healthz?n%FF=1&idGracza=SECRET789")

    assert status == b"HTTP/1.1 200 OK"
    (line,) = access_lines(caplog)
    assert 'target="/healthz (unparsable query string not logged)" status=200 ' in line
    assert "SECRET" not in caplog.text


@pytest.mark.parametrize(
    "target",
    [b"/a.kropki?idGracza=SECRET42&co=\x01", b"/a.kropki?idGracza=SECRET42&opis=\xc5\x82"],
    ids=["control-byte", "raw-utf8"],
)
async def test_request_aiohttp_cannot_parse_is_logged_without_its_request_line(
    server: TestServer, caplog: pytest.LogCaptureFixture, target: bytes
) -> None:
    status = await raw_get(server, target)

    assert status.startswith(b"HTTP/1.0 400")
    errors = [record for record in caplog.records if record.name == "aiohttp.server"]
    assert [record.getMessage() for record in errors] == [
        "Error handling request from 127.0.0.1: InvalidURLError (400)"
    ]
    assert [record.levelname for record in errors] == ["WARNING"]
    assert "SECRET42" not in caplog.text


async def raw_request(server: TestServer, request: bytes) -> bytes:
    """Send a whole request byte for byte; return the status line."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(request)
    await writer.drain()
    response = await reader.read()
    writer.close()
    await writer.wait_closed()
    return response.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("target", [b"POST /healthz", b"GET /a.kropki?co=getMsg&idGracza=SECRET42&msgNo=0"])
async def test_a_body_that_cannot_be_decoded_is_a_warning_without_a_trace(
    server: TestServer, caplog: pytest.LogCaptureFixture, target: bytes, encoding: str
) -> None:
    """Before, aiohttp's reading of the body after the answer wrote `Unhandled exception` at ERROR with
    the whole trace, for any route and anyone who sent a body its Content-Encoding does not decode."""
    status = await raw_request(
        server,
        target + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Encoding: "
        + encoding.encode() + b"\r\nContent-Length: 5\r\n\r\nabcde",
    )  # fmt: skip

    assert status.split(b" ", 1)[1] in (b"200 OK", b"405 Method Not Allowed")
    errors = [record for record in caplog.records if record.name == "aiohttp.server"]
    assert [record.getMessage() for record in errors] == ["Unhandled exception: ContentEncodingError (400)"]
    assert [record.levelname for record in errors] == ["WARNING"]
    assert [record.exc_info for record in errors] == [None]
    assert "SECRET42" not in caplog.text


def test_a_piece_naming_no_parameter_is_written_whole_as_stars() -> None:
    """A mangled request's id may stand where a name would, or under a name cut short."""
    assert redact_query("myidGracza=1&keys=2&idGracza") == "***&***&***"
    assert redact_query("fz0x1&co=getMsg&msgayerId=fuzzreg0x0234") == "***&co=getMsg&***"


def test_only_the_servers_own_commands_and_languages_are_shown() -> None:
    assert redact_query("co=getMsg&lang=pl&msgNo=12&stol=7") == "co=getMsg&lang=pl&msgNo=***&stol=***"
    assert redact_query("co=fz0x1&lang=fz0x1&msgFromClient=c3.0.%2Fi.secret") == (
        "co=***&lang=***&msgFromClient=***"
    )


def test_invalid_utf8_in_a_name_is_unparsable() -> None:
    with pytest.raises(UnparsableQuery):
        redact_query("a=1&%C5=2")


names = st.one_of(
    st.sampled_from(["idGracza", "playerId", "key", "id", "co", "msgNo", "opis", "msgFromClient", "lang"]),
    st.text(max_size=10),
)
values = st.one_of(st.sampled_from(["getMsg", "loguj", "pl", "en"]), st.text(max_size=12))


@given(st.lists(st.tuples(names, values), max_size=6))
def test_every_value_but_a_known_command_or_language_is_replaced(pairs: list[tuple[str, str]]) -> None:
    redacted = redact_query(urlencode(pairs)).split("&") if pairs else []

    expected = []
    for name, value in pairs:
        key = name.strip().casefold()
        if key not in PARAMETERS:
            expected.append("***")
        elif quote_plus(value) in SHOWN.get(key, ()):
            expected.append(f"{quote_plus(name)}={quote_plus(value)}")
        else:
            expected.append(f"{quote_plus(name)}=***")
    assert redacted == expected


async def test_routine_polls_are_counted_not_logged(
    server: TestServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    accesslog._POLLS.count, accesslog._POLLS.since = 0, accesslog.time.monotonic()
    # every poll here asks for the whole state (msgNo=0), which an id may do only so often
    server.app[clients.LIMITS_KEY].whole_states_per_id = TokenBuckets(1.0, 100.0)
    await raw_get(server, b"/a.kropki?co=guestLogin&idGracza=p1&opis=*Ala")
    for _ in range(3):
        await raw_get(server, b"/a.kropki?co=getMsg&playerId=p1&msgNo=0")
    await raw_get(server, b"/a.kropki?co=getBMsg&playerId=p1&msgNo=0&wait=0")
    await raw_get(server, b"/a.kropki?co=getMsg&playerId=p1")  # refused: missing msgNo, counted apart
    lines = access_lines(caplog)
    assert len(lines) == 1 and "guestLogin" in lines[0]
    # a minute later the next poll writes the count
    real = accesslog.time.monotonic
    monkeypatch.setattr(accesslog.time, "monotonic", lambda: real() + accesslog.POLL_SUMMARY_EVERY)
    await raw_get(server, b"/a.kropki?co=getMsg&playerId=p1&msgNo=0")
    assert access_lines(caplog)[-1] == "polls answered count=5 seconds=60"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def test_refused_requests_are_counted_per_network_and_summed_up_once_a_minute(
    server: TestServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, every refused request wrote a line: 32.6 MB in 30 s from one client (issue 43.3)."""
    clock = Clock()
    summaries = server.app[accesslog.SUMMARIES_KEY]
    summaries.clock, summaries.since = clock, clock.now
    for _ in range(300):
        await raw_get(server, b"/a.kropki?co=noSuchCommand&key=SECRET1")  # err.unknownCo
    await raw_get(server, b"/healthz")
    for _ in range(20):
        await raw_get(server, b"/metrics?x=1")  # 403 or 200: /metrics answers loopback
    assert [line.split()[0] for line in access_lines(caplog)] == ["request"] * 21  # the healthz and metrics

    clock.now += accesslog.SUMMARY_EVERY
    await raw_get(server, b"/healthz")
    summary = access_lines(caplog)[-2]
    assert (
        summary == "requests not written network=127.0.0.0/24 seconds=60 count=300 answers=err.unknownCo:300"
    )
    assert "SECRET" not in caplog.text


def test_the_log_gets_a_bounded_number_of_lines_a_minute_however_many_networks_flood() -> None:
    clock = Clock()
    summaries = accesslog.RequestSummaries(clock)
    logger = logging.getLogger("test.summaries")
    written: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: written.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    lines = 0
    for _minute in range(2):
        for n in range(5_000):  # 5,000 networks, each asking 20 times: half refused, half ordinary
            network = f"10.{n // 256}.{n % 256}.0/24"
            for k in range(20):
                if k % 2:
                    summaries.count(network, "err.tooFast")
                elif summaries.may_write(network):
                    lines += 1
                else:
                    summaries.count(network, "200")
        clock.now += accesslog.SUMMARY_EVERY
        summaries.write_due(logger)
    assert lines == 2 * accesslog.LINES_PER_MINUTE
    assert len(written) == 2 * (accesslog.SUMMARIES_PER_MINUTE + 1)
    rest = written[accesslog.SUMMARIES_PER_MINUTE]
    assert rest.startswith("requests not written networks=4900 seconds=60 count=")
    total = sum(
        int(line.split("count=")[1].split()[0]) for line in written[: accesslog.SUMMARIES_PER_MINUTE + 1]
    )
    assert total == 5_000 * 20 - accesslog.LINES_PER_MINUTE  # every request not written is counted once
