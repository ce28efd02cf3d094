"""`/a.kropki`: zagram's game-server endpoint. Thin: read parameters, call the codec and the hub."""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.engine.gametype import GameKind, GameTypeError, StartKind, parse_game_type
from server.hub.hub import Hub
from server.hub.sessions import Carried
from server.hub.stream import MAX_WAIT, Poll
from server.protocol.codec import ProtocolError, parse_colour, parse_commands, parse_msg_no, parse_number
from server.protocol.seeks import AcceptSeek, CancelSeek, PostSeek, parse_range, reads_seeks, seek_number
from server.store.outage import unavailable
from server.web import hosted, moderation, tournament
from server.web.archive import GAMES_KEY
from server.web.clients import origin, refuses_whole_state, store_reads_refused
from server.web.common import HUB_KEY, Query, ask_to_give_up, log_failure, nick_claimed, text_response
from server.web.connections import GUARD_KEY
from server.web.ids import screened_id

log = logging.getLogger(__name__)

MAX_MSG_FROM_CLIENT = 6_000  # characters of msgFromClient in one poll
# The longest request line the server reads (aiohttp's max_line_size, set in create_app): room for
# msgFromClient's 6,000 characters of two UTF-8 bytes each (Polish, Cyrillic: six characters of the URL
# each, percent-encoded) and the rest of the query. aiohttp's default, 8,190 bytes, refused MultiPoints'
# poll with its queue's ten Cyrillic chat lines (18 kB) with a bare 400 before the handler, and the lines
# were lost. Not more: a line still arriving holds its bytes in the parser until the header timeout, so
# this times the connection cap is what such connections can hold (benchmarks/request_lines.py).
MAX_REQUEST_LINE = MAX_MSG_FROM_CLIENT * 6 + 4_096

routes = web.RouteTableDef()


def _param(query: Query, name: str) -> str:
    value = query.get(name)
    if value is None:
        raise ProtocolError(f"missing.{name}")
    return value


def _player_id(query: Query) -> str:
    """zagram names the id `idGracza` in most commands and `playerId` in a few; both work everywhere."""
    value = query.get("idGracza") or query.get("playerId")
    if not value:
        raise ProtocolError("missing.idGracza")
    return value


def _table(text: str) -> int:
    number = parse_number(text)
    if number is None:
        raise ProtocolError("badTable")
    return number


async def guest_login(request: web.Request) -> str:
    query = request.query
    secret, nick, client = _player_id(query), _param(query, "opis"), origin(request)
    lang, seeks, hub = query.get("lang", "en"), reads_seeks(query), request.app[HUB_KEY]

    async def take_over(holder: str) -> Carried | None:
        """The nick is online on member `holder`: the same person come back with a new id takes its
        session over there (docs/cluster.md, "One name space"), once nothing else refuses the login
        (checked again: the claim waited for Redis)."""
        hub.check_guest_login(secret, nick, lang, client)
        return await ask_to_give_up(request, holder, nick, client.group)

    # before the claim: a login anyone can have refused (a registered nick, a bad id) claims nothing that
    # would keep the nick's player out on other members
    hub.check_guest_login(secret, nick, lang, client)
    async with nick_claimed(request, nick, take_over if client.group else None) as carried:
        hub.guest_login(secret, nick, lang, client, reads_seeks=seeks, carried=carried)
    return ""


async def resume_session(hub: Hub, query: Query) -> str:
    """`resumeSession` (an extension): the built-in client following an auto-login link."""
    hub.resume(_player_id(query), _param(query, "opis"), reads_seeks=reads_seeks(query))
    return ""


async def remove_player(hub: Hub, query: Query) -> str:
    if not hub.logout(_player_id(query)):
        raise ProtocolError("notLoggedIn")
    return ""


async def change_lang(hub: Hub, query: Query) -> str:
    hub.change_lang(_player_id(query), _param(query, "na"))
    return ""


async def change_table(hub: Hub, query: Query) -> str:
    hub.change_table(_player_id(query), _table(_param(query, "newTable")))
    return ""


async def add_chat(hub: Hub, query: Query) -> str:
    hub.chat_from(_player_id(query), _param(query, "table"), _param(query, "newMsgs"))
    return ""


def _wait_seconds(query: Query) -> float:
    text = query.get("wait")
    if text is None:
        return 0.0
    try:
        seconds = float(text)
    except ValueError:
        raise ProtocolError("badWait") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ProtocolError("badWait")
    return min(seconds, MAX_WAIT)


async def _poll(
    hub: Hub, query: Query, secret: str, with_subscriptions: bool, request: web.Request | None = None
) -> str:
    """A getMsg or getBMsg for the id `secret` (server/web/ids.py), answered by the hub in one call
    (Hub.poll). `request` brings what only HTTP clients have: the limit on whole states, counted per
    address and per id as the client sent it, and the connection cap, which may end a long poll early."""
    seen, subscriptions_seen = parse_msg_no(_param(query, "msgNo"))
    wait = _wait_seconds(query)
    commands_text = query.get("msgFromClient")
    if commands_text is not None and len(commands_text) > MAX_MSG_FROM_CLIENT:
        raise ProtocolError("tooLong")
    poll = Poll(secret, parse_commands(commands_text), seen, with_subscriptions, subscriptions_seen, wait)
    may_send_whole_state = None
    guard = None
    if request is not None:
        may_send_whole_state = functools.partial(_may_send_whole_state, request, sent_id(query))
        guard = request.app.get(GUARD_KEY) if wait else None
    # the cap may end a long poll early, answering with what there is
    with guard.long_poll(request) if guard is not None else contextlib.nullcontext() as early:
        return await hub.poll(poll, early, may_send_whole_state)


def _may_send_whole_state(request: web.Request, sent_id: str) -> bool:
    return not refuses_whole_state(request, sent_id)


async def get_msg(hub: Hub, query: Query) -> str:
    return await _poll(hub, query, sent_id(query), False)


async def get_b_msg(hub: Hub, query: Query) -> str:
    return await _poll(hub, query, sent_id(query), True)


def sent_id(query: Query) -> str:
    return query.get("idGracza") or query.get("playerId") or ""


def _game_table(query: Query) -> str:
    """The table of a game action: `table`, or `stol` as stopMove and dodajeCzas name it."""
    value = query.get("table") or query.get("stol")
    if value is None:
        raise ProtocolError("missing.table")
    return value


async def place_dot(hub: Hub, query: Query) -> str:
    hub.move(_player_id(query), _game_table(query), _param(query, "where"), parse_colour(query.get("colour")))
    return ""


async def draw_enclosure(hub: Hub, query: Query) -> str:
    hub.draw_enclosure(_player_id(query), _game_table(query), _param(query, "where"))
    return ""


async def propose(hub: Hub, query: Query) -> str:
    hub.propose(_player_id(query), _game_table(query), _param(query, "proposal"))
    return ""


async def stop_move(hub: Hub, query: Query) -> str:
    hub.stop(_player_id(query), _game_table(query))
    return ""


async def add_time(hub: Hub, query: Query) -> str:
    hub.give_time(_player_id(query), _game_table(query), _param(query, "ile"))
    return ""


async def pause_clock(hub: Hub, query: Query) -> str:
    """An extension: the stream's `t` command (`what` p or u) for a client that sends no commands in its
    polls, as the built-in one (zagram's endpoints have none for it)."""
    hub.pause(_player_id(query), _game_table(query), _param(query, "what"))
    return ""


async def invite(request: web.Request) -> str:
    """`zapraszam`; an analysis of an archived game (`SGFz<n>`) reads the record from the archive first,
    counted as the archive's pages count it (clients.STORE_READS: an SGF 1.4 ms of CPU)."""
    query = request.query
    secret, whom, game_type_text = _player_id(query), _param(query, "whom"), _param(query, "gameType")
    archived = None
    try:
        game_type = parse_game_type(game_type_text)
    except GameTypeError:
        game_type = None  # the hub gives the refusal
    analysis = game_type is not None and game_type.kind is GameKind.ANALYSIS
    if analysis and game_type.start.kind is StartKind.SGF:
        if store_reads_refused(request, 1) is not None:
            raise ProtocolError("tooFast", "Too many reads of the archive; try again in a second.")
        archived = await request.app[GAMES_KEY].sgf(game_type.start.number)
        if archived is None:
            raise ProtocolError("noSuchGame", f"There is no archived game {game_type.start.number}.")
    request.app[HUB_KEY].invite(secret, whom, game_type_text, archived)
    return ""


async def post_seek(hub: Hub, query: Query) -> str:
    """`seek` (an extension: docs/protocol.md, "Seeks and quick pairing"), as the `k` command."""
    rating_range = parse_range(query.get("minRating", ""), query.get("maxRating", ""))
    hub.seek(_player_id(query), PostSeek(_param(query, "gameType"), rating_range))
    return ""


async def accept_seek(hub: Hub, query: Query) -> str:
    hub.seek(_player_id(query), AcceptSeek(seek_number(_param(query, "seek"))))
    return ""


async def cancel_seek(hub: Hub, query: Query) -> str:
    hub.seek(_player_id(query), CancelSeek(seek_number(_param(query, "seek"))))
    return ""


async def join_pool(hub: Hub, query: Query) -> str:
    """`joinPool` (an extension), as the `j` command."""
    pool = _param(query, "pool")
    if not pool:
        raise ProtocolError("noSuchPool", "Name a pool.")
    hub.pool(_player_id(query), pool)
    return ""


async def leave_pool(hub: Hub, query: Query) -> str:
    hub.pool(_player_id(query), "")
    return ""


def _answer(letter: str) -> Callable[[Hub, Query], Awaitable[str]]:
    async def answer(hub: Hub, query: Query) -> str:
        hub.answer_invitation(_player_id(query), letter)
        return ""

    return answer


HANDLERS: dict[str, Callable[[Hub, Query], Awaitable[str]]] = {
    "resumeSession": resume_session,
    "usunGracza": remove_player,
    "changeLang": change_lang,
    "getMsg": get_msg,
    "getBMsg": get_b_msg,
    "zmienStol": change_table,
    "dodajWpis": add_chat,
    "graczStawiaKropke": place_dot,
    "okrazam": draw_enclosure,
    "propose": propose,
    "stopMove": stop_move,
    "dodajeCzas": add_time,
    "pauseClock": pause_clock,
    "zaproszenieTak": _answer("a"),
    "zaproszenieNie": _answer("r"),
    "zaproszenieBlokuj": _answer("b"),
    "zaproszenieAnuluj": _answer("c"),
    "zaproszenieOdrzuconeOk": _answer("o"),
    "seek": post_seek,
    "acceptSeek": accept_seek,
    "cancelSeek": cancel_seek,
    "joinPool": join_pool,
    "leavePool": leave_pool,
}


# co -> with subscriptions; poll() calls _poll itself (with the request, for the limit on whole
# states and the connection cap), and their HANDLERS serve the tests that drive the hub without HTTP
POLLS = {"getMsg": False, "getBMsg": True}
REQUEST_HANDLERS: dict[str, Callable[[web.Request], Awaitable[str]]] = {
    "guestLogin": guest_login,
    "setUpTable": tournament.set_up_table,
    "cancelTable": tournament.cancel_table,
    "createTournament": hosted.create_tournament,
    "cancelTournament": hosted.cancel_tournament,
    "joinTournament": hosted.join_tournament,
    "leaveTournament": hosted.leave_tournament,
    "moderate": moderation.moderate,
    "report": moderation.report,
    "zapraszam": invite,
}
COMMANDS = frozenset(HANDLERS) | frozenset(REQUEST_HANDLERS)  # what /metrics may name
# Requests whose writes keep only the player's session: answered even when storage did not take them
# (a session lost in a crash means logging in again, never a lost move); the others answer err.storage.
SESSION_ONLY = frozenset(
    {
        "guestLogin",
        "resumeSession",
        "usunGracza",
        "changeLang",
        "zmienStol",
        "zaproszenieNie",
        "zaproszenieBlokuj",
        "zaproszenieAnuluj",
        "zaproszenieOdrzuconeOk",
    }
)


async def poll(request: web.Request, co: str) -> str:
    """The answer to a getMsg or getBMsg (`co`)."""
    query = request.query
    try:
        secret = await screened_id(request, sent_id(query))
        return await _poll(request.app[HUB_KEY], query, secret or "", POLLS[co], request)
    except ProtocolError as refused:
        return f"err.{refused.code}"
    except Exception as failure:  # a bug must answer like any refusal, not a 500 that stops a client's loop
        return failed(request, co, failure)


def failed(request: web.Request, co: str, failure: Exception) -> str:
    """A bug is logged; a database that cannot be reached is not (the store's writer logs that once)."""
    if unavailable(failure) is None:
        log_failure(request, co)
        return "err.internal"
    return "err.storage"


@routes.get("/a.kropki")
async def kropki(request: web.Request) -> web.Response:
    query = request.query
    co = query.get("co", "")
    if co in POLLS:  # most requests
        return text_response(await poll(request, co))
    handler = HANDLERS.get(co)
    with_request = REQUEST_HANDLERS.get(co)  # requests that need more than the hub: the store, the address
    if handler is None and with_request is None:
        return text_response("err.unknownCo")
    hub = request.app[HUB_KEY]
    before = hub.writes()
    try:
        sent = sent_id(query)
        secret = await screened_id(request, sent, login=co == "guestLogin")
        if secret != sent:  # a stranger's id: every handler answers it as an unknown one
            request = request.clone(rel_url=request.rel_url.update_query(idGracza=secret, playerId=secret))
            query = request.query
        acting = with_request(request) if with_request is not None else handler(hub, query)
        body = await hub.answered(secret or "", acting)  # at another member's table: as it did it
    except ProtocolError as refused:
        body = f"err.{refused.code}"
    except Exception as failure:  # a bug must answer like any refusal, not a 500 that stops a client's loop
        body = failed(request, co, failure)
    stored = await hub.settled(before)  # its writes stored (a poll waits for its own in _poll)
    if not stored and co not in SESSION_ONLY and not body.startswith("err."):
        body = "err.storage"  # done in the live game, but a crash could still lose it: not "done"
    return text_response(body)
