"""`/api/bot/...`: the bot API (docs/bots.md), lichess's Bot API as the model. Thin: read the request,
call the hub as the zagram endpoints do, answer JSON; the event feed is the bot's session's stream
(Hub.poll) translated by server/protocol/botfeed.py.

A bot is named by its token (`Authorization: Bearer TOKEN`), never by a URL or a query, so that no
access log or proxy log holds it. Each request looks the token up in the store, so a token an admin
rotated stops working at once. A bot's session in the hub has an id no zagram client can send
(`bot-...`: the zagram endpoints refuse a `-` in an id) derived from its nick under the server's key,
so the same session is found again by every request and after a restart, whatever token named it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from server.hub.hub import Hub
from server.hub.persistence import Account
from server.hub.stream import Poll
from server.logs import Fields
from server.protocol.botfeed import KEEP_ALIVE, Event, Feed, move_text
from server.protocol.codec import ProtocolError, encode_client_text, is_unicode_text, nick_key, parse_number
from server.store.bots import HasPlayed, InPlay, token_hash
from server.store.idhash import HashesBusy
from server.store.outage import unavailable
from server.web.botstreams import (
    SEND_TIMEOUT,
    STREAMS_KEY,
    BotStreams,
    Feeding,
    NotRead,
    feed_ended,
    limit_send_buffer,
    send,
    watch_tokens,
)
from server.web.clients import (
    LIMITS_KEY,
    WHOLE_STATES_PER_ID,
    origin,
    refuses_whole_state,
    store_reads_refused,
)
from server.web.common import HUB_KEY, LOGIN_GUARD_KEY, STORE_KEY, log_failure, nick_claimed, session_here
from server.web.headers import SECURITY_HEADERS
from server.web.limits import RecentKeys
from server.web.metrics import METRICS_KEY

log = logging.getLogger(__name__)

KEEP_ALIVE_SECONDS = 20.0  # at most this between two writes of the feed (proxies drop idle responses)
MAX_BODY_FIELD = 2_000  # characters of one field of a request's body (a chat line is at most 300)
FEED_AGAIN = round(1 / WHOLE_STATES_PER_ID[0])  # Retry-After of a feed opened too often: the next whole state
PROPOSALS = frozenset({"undo", "score", "terr", "drop", "draw", "new"})
ANSWERS = {"accept": "ok", "decline": "reject", "cancel": "cancel"}  # cancel: withdraw the bot's own
JSON_HEADERS = {"Cache-Control": "no-store", **SECURITY_HEADERS}
# why an account upgraded with its right id stays a person's (docs/bots.md)
PERSONS = {
    HasPlayed: ("hasPlayed", "Only an account with no game played can become a bot."),
    InPlay: ("inPlay", "Log out, and finish your games, before the account becomes a bot."),
}
# refusals that say nothing of the action itself, 503: storage failing (not done), or the table's server
# of a cluster gone before it said whether it did it
SERVER_SIDE = frozenset({"storage", "unconfirmed"})

routes = web.RouteTableDef()
NAMED_TOKENS_KEY = web.AppKey("named_tokens", RecentKeys)  # the hashes of tokens known to name a bot


class Refused(Exception):
    """An answer other than done: the HTTP status, a code (the zagram refusal's where there is one)
    and a sentence."""

    def __init__(self, status: int, code: str, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.retry_after = status, code, message, retry_after


@dataclass(frozen=True)
class Bot:
    token: str = field(repr=False)
    account: Account
    secret: str = field(repr=False)  # its session's id in the hub: a password like any player's id


def setup(app: web.Application) -> None:
    app[NAMED_TOKENS_KEY] = RecentKeys()
    streams = app[STREAMS_KEY] = BotStreams()
    metrics = app.get(METRICS_KEY)
    if metrics is not None:
        streams.count(metrics.registry)
    app.add_routes(routes)
    app.cleanup_ctx.append(watch_tokens)

    async def end_streams(app: web.Application) -> None:
        app[STREAMS_KEY].end_all()

    app.on_shutdown.append(end_streams)


def _json(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(body, status=status, headers=JSON_HEADERS)


def refusal(refused: Refused) -> web.Response:
    response = _json({"error": refused.code, "message": refused.message}, refused.status)
    if refused.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="kropki bots"'
    elif refused.status == 429 or refused.code == "tooFast":
        response.headers["Retry-After"] = str(refused.retry_after)
    return response


def refused_json(refused: ProtocolError) -> dict[str, str]:
    """A hub's refusal: its code, its sentence, and what a dotted code carries after its name (a ban's
    end and reason: `banned.forGood.spam` is `banned` with the detail `forGood.spam`)."""
    code, _, detail = refused.code.partition(".")
    body = {"error": code, "message": str(refused)}
    if detail:
        body["detail"] = detail
    return body


def _token(request: web.Request) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Refused(401, "badToken", "Send the bot's token as `Authorization: Bearer TOKEN`.")
    if not token.isascii():  # tokens are URL-safe base64 (server/store/bots.py); bytes beyond are no token
        raise Refused(401, "badToken", "This token names no bot (wrong, or replaced by a newer one).")
    return token.strip()


async def _bot(request: web.Request) -> Bot:
    """The bot the request's token names, within its rate limit (a player id's). A token not known to name
    a bot counts as a read of the store (1.7 ms of CPU a made-up one)."""
    token = _token(request)
    named, hashed = request.app[NAMED_TOKENS_KEY], token_hash(token)
    if hashed not in named and (status := store_reads_refused(request, 1)) is not None:
        busy = "Too many requests; slow down." if status == 429 else "The server is busy; try again soon."
        raise Refused(status, "tooFast", busy)
    account = await request.app[STORE_KEY].bots.account(token)
    if account is None:
        named.discard(hashed)
        raise Refused(401, "badToken", "This token names no bot (wrong, or replaced by a newer one).")
    named.add(hashed)
    hub = request.app[HUB_KEY]
    # from the nick it logs in with, which a rename keeps: its live session goes on, seated at its games
    secret = "bot-" + hub.persistence.id_hmac("bot:" + (account.login_key or nick_key(account.nick)))
    if not request.app[LIMITS_KEY].per_id.take(secret):
        raise Refused(429, "tooFast", "Too many requests; slow down.")
    return Bot(token, account, secret)


async def _still_named(request: web.Request, bot: Bot) -> None:
    """The bot's token looked up again just before its action, after a wait: replaced meanwhile, the
    action is refused as the token would be."""
    if await request.app[STORE_KEY].bots.account(bot.token) is None:
        raise Refused(401, "badToken", "This token names no bot (wrong, or replaced by a newer one).")


async def _logged_in(request: web.Request, bot: Bot) -> None:
    """The bot's session in the hub, logged in (sanctions checked, as for a player) if it is not."""
    hub = request.app[HUB_KEY]
    await session_here(request, bot.secret)
    if not hub.knows(bot.secret):
        account = await request.app[STORE_KEY].bots.account(bot.token, for_session=True)
        if account is None:  # replaced a moment ago
            raise Refused(401, "badToken", "This token names no bot (wrong, or replaced by a newer one).")
        async with nick_claimed(request, account.nick):
            hub.login(bot.secret, account, None, origin(request))


async def read_body(request: web.Request) -> Any:
    """The request's body, JSON or a form, read whole: aiohttp keeps it, so that a second read waits for
    nothing."""
    try:
        if request.content_type == "application/json":
            return await request.json()
        return await request.post()
    except (ValueError, LookupError, RecursionError):  # a charset Python does not know; JSON nested too deep
        raise Refused(
            400, "badRequest", "The body is not JSON nor a form, or its charset is unknown."
        ) from None
    except web.HTTPRequestEntityTooLarge:
        raise Refused(413, "tooLong", "The body is too long.") from None
    except web.RequestPayloadError:  # the client's mistake, not the server's failure: no err.internal
        raise Refused(400, "badRequest", "The body cannot be read as its Content-Encoding says.") from None


async def body_field(request: web.Request, name: str, *, required: bool = True) -> str:
    """A field of the request's body: JSON (an object) or a form; "" for an optional one missing."""
    body = await read_body(request)
    value = body.get(name) if isinstance(body, Mapping) else None
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise Refused(400, "badRequest", f"The body needs the field `{name}` (text).")
    if len(value) > MAX_BODY_FIELD:
        raise Refused(400, "badRequest", f"`{name}` is too long.")
    if not is_unicode_text(value):  # JSON's "\udc80": no reply, journal or log line could hold it
        raise Refused(400, "badRequest", f"`{name}` is not Unicode text: it holds half of a surrogate pair.")
    return value


def _table(request: web.Request) -> str:
    if parse_number(request.match_info["table"]) is None:
        raise Refused(400, "badTable", "A table is a number.")
    return request.match_info["table"]


# an action of a bot; what it returns, if anything, goes into the answer beside `"ok": true`
Action = Callable[[web.Request, Hub, Bot], Awaitable[dict[str, Any] | None]]


async def act(request: web.Request, action: Action) -> web.Response:
    """One action of a bot through the hub, answered once what it changed is stored (as /a.kropki
    answers): 200 `{"ok": true}`, or a refusal with the hub's code and sentence. Nothing waits between
    the last look at the token and the hub's change: a token replaced before it does nothing."""
    hub = request.app[HUB_KEY]
    before = hub.writes()
    try:
        bot = await _bot(request)
        # what may wait after the token's look-up: the session's login, or its coming from another
        # member of a cluster (seconds), and a body, as slowly as the bot sends it
        waits = not hub.knows(bot.secret) or request.body_exists
        await _logged_in(request, bot)
        if request.body_exists:
            await read_body(request)  # kept by aiohttp: the action's read of it waits for nothing
        if waits:
            await _still_named(request, bot)
        answer = await hub.answered(bot.secret, action(request, hub, bot))  # another member's table too
    except Refused as refused:
        return refusal(refused)
    except ProtocolError as refused:
        return _json(refused_json(refused), 503 if refused.code in SERVER_SIDE else 400)
    except Exception as failure:  # never a 500: a bot's loop must read an answer
        return _failed(request, failure)
    if not await hub.settled(before):
        return _json({"error": "storage", "message": "Not stored; it did not count."}, 503)
    return _json({"ok": True, **(answer or {})})


def _failed(request: web.Request, failure: Exception) -> web.Response:
    if unavailable(failure) is None:
        log_failure(request, "bot")
        return _json({"error": "internal", "message": "The server failed; try again."}, 503)
    return _json({"error": "storage", "message": "The database cannot be reached."}, 503)


# --- the account -------------------------------------------------------------------------------


@routes.get("/api/bot/account")
async def account(request: web.Request) -> web.Response:
    try:
        bot = await _bot(request)
    except Refused as refused:
        return refusal(refused)
    except Exception as failure:
        return _failed(request, failure)
    found = bot.account
    results = {"rating": found.rating, "wins": found.wins, "draws": found.draws, "losses": found.losses}
    return _json({"nick": found.nick, "bot": True, **results})


@routes.post("/api/bot/upgrade")
async def upgrade(request: web.Request) -> web.Response:
    """A registered player makes their account, with no game played yet, a bot: the token, once."""
    guard = request.app[LOGIN_GUARD_KEY]
    client = origin(request)
    try:
        nick, secret = await body_field(request, "nick"), await body_field(request, "id")
        key = nick_key(nick)
        if not guard.admit(key, client):  # failed attempts count as failed logins do
            raise Refused(429, "tooManyFailedLogins", "Too many failed attempts; wait a while.")
        token = await request.app[STORE_KEY].bots.upgrade(nick, secret, request.app[HUB_KEY].in_play)
        if token is None:
            raise Refused(403, "wrongNickOrId", "Wrong nick or id.")
        guard.succeeded(key, client)
    except Refused as refused:
        return refusal(refused)
    except HashesBusy:
        guard.give_back(key, client)  # not checked: no failed attempt
        return refusal(Refused(429, "tooFast", "Too many requests; slow down."))
    except (HasPlayed, InPlay) as person:  # the right id: no failed attempt
        guard.succeeded(key, client)
        return refusal(Refused(409, *PERSONS[type(person)]))
    except Exception as failure:
        return _failed(request, failure)
    log.info("account became a bot %s", Fields(nick=nick))
    return _json({"nick": nick, "token": token})


# --- the event feed ----------------------------------------------------------------------------


@routes.get("/api/bot/stream")
async def stream(request: web.Request) -> web.StreamResponse:
    """The bot's events, one JSON object a line, as they happen; an empty line at least every
    KEEP_ALIVE_SECONDS. It ends when the client goes or stops reading (botstreams.send), a newer feed
    of the bot opens, the token is replaced, the session cannot be logged in again (a ban), or the
    server stops."""
    try:
        bot = await _bot(request)
        if refuses_whole_state(request, bot.secret):  # every feed begins with one (docs/bots.md)
            raise Refused(429, "tooFast", "The feed was opened too often; try again soon.", FEED_AGAIN)
        await _logged_in(request, bot)
    except Refused as refused:
        return refusal(refused)
    except ProtocolError as refused:
        return _json(refused_json(refused), 403)
    except Exception as failure:
        return _failed(request, failure)
    response = web.StreamResponse(
        headers={"Content-Type": "application/x-ndjson", "Cache-Control": "no-store", **SECURITY_HEADERS}
    )
    limit_send_buffer(request)
    await response.prepare(request)
    streams = request.app[STREAMS_KEY]
    feeding = streams.start(bot.secret, bot.token)
    log.info("bot stream opened %s", Fields(nick=bot.account.nick))
    try:
        await _feed(request, response, bot, feeding)
    except ConnectionError:
        pass  # the bot went away
    except NotRead:  # nothing more can reach it: closed at once, and the bot may open the feed again
        log.warning("bot stream closed: not read %s", Fields(nick=bot.account.nick, seconds=SEND_TIMEOUT))
        streams.closed_not_read()
        if request.transport is not None:
            request.transport.abort()
    finally:
        streams.finish(bot.secret, feeding)
        log.info("bot stream closed %s", Fields(nick=bot.account.nick))
    return response


async def _feed(request: web.Request, response: web.StreamResponse, bot: Bot, feeding: Feeding) -> None:
    hub = request.app[HUB_KEY]
    feed = Feed(bot.account.nick)
    fresh = False  # the session was logged in again for the poll being read
    while True:
        if feeding.ended is not None:  # a newer feed (which starts from the present), or a stop: why
            await _write(request, response, [feed_ended(feeding.ended)])
            return
        poll = Poll(bot.secret, [], feed.seen, False, True, KEEP_ALIVE_SECONDS)
        try:
            reply = await hub.poll(poll, feeding.next_wait())
        except ProtocolError as refused:
            await _write(request, response, [_error_event(refused)])
            return
        if feeding.ended is not None:
            continue
        events, logged_in = feed.read(reply, lambda number: hub.seek_open_to(bot.secret, number))
        if not logged_in and hub.moved_away(bot.secret):
            # its requests reach another member of a cluster now, which took the session: logged in
            # again here, it would be taken back, and taken again at the bot's next action
            await _write(request, response, [feed_ended("moved")])
            return
        if not logged_in:  # timed out, kicked, or the server forgot it: in again, or the reason why
            if fresh:  # a session logged in for this very poll is gone already: not a loop of logins
                gone = {"type": "error", "code": "notLoggedIn", "message": "The session ended; reconnect."}
                await _write(request, response, [gone])
                return
            try:
                await _logged_in(request, bot)
            except ProtocolError as refused:
                await _write(request, response, [_error_event(refused)])
                return
            except Refused as refused:
                await _write(
                    request, response, [{"type": "error", "code": refused.code, "message": refused.message}]
                )
                return
            except Exception as failure:  # the database cannot say now: ended, and opened again by the bot
                if unavailable(failure) is None:
                    raise
                return
            feed, fresh = Feed(feed.nick), True  # the whole state again, from the new session
            continue
        fresh = False
        if any(event["type"] == "invitationDeclined" for event in events):
            _acknowledge_rejection(hub, bot)
        await _write(request, response, events)


def _error_event(refused: ProtocolError) -> Event:
    body = refused_json(refused)
    return {"type": "error", "code": body.pop("error"), **body}


def _acknowledge_rejection(hub: Hub, bot: Bot) -> None:
    """A rejected invitation stays in every reply until acknowledged: the feed told the bot once."""
    try:
        hub.answer_invitation(bot.secret, "o")
    except ProtocolError:
        pass  # acknowledged meanwhile


async def _write(request: web.Request, response: web.StreamResponse, events: list[Event]) -> None:
    body = b"".join(json.dumps(event, ensure_ascii=False).encode() + b"\n" for event in events)
    await send(request, response, body or KEEP_ALIVE)


# --- invitations -------------------------------------------------------------------------------


async def _invite(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.invite(bot.secret, request.match_info["nick"], await body_field(request, "gameType"))


def _answer(letter: str) -> Action:
    async def answer(request: web.Request, hub: Hub, bot: Bot) -> None:
        """`from`, optional: the inviter whose invitation this answers, and no later one's."""
        inviter = "" if letter == "c" else await body_field(request, "from", required=False)
        hub.answer_invitation(bot.secret, letter, inviter)

    return answer


INVITATION_ANSWERS = {"accept": _answer("a"), "decline": _answer("r"), "cancel": _answer("c")}


@routes.post("/api/bot/invite/{nick}")
async def invite(request: web.Request) -> web.Response:
    return await act(request, _invite)


@routes.post("/api/bot/invitation/{answer}")
async def invitation(request: web.Request) -> web.Response:
    action = INVITATION_ANSWERS.get(request.match_info["answer"])
    if action is None:
        return refusal(Refused(404, "badRequest", "An invitation is answered accept, decline or cancel."))
    return await act(request, action)


# --- playing -----------------------------------------------------------------------------------


async def _move(request: web.Request, hub: Hub, bot: Bot) -> None:
    x, y = parse_number(request.match_info["x"]), parse_number(request.match_info["y"])
    if x is None or y is None:
        raise Refused(400, "illegalMove", "A move is /move/X/Y, each a number from 0.")
    hub.move(bot.secret, _table(request), move_text(x, y))


async def _propose(request: web.Request, hub: Hub, bot: Bot) -> None:
    what = request.match_info["what"]
    if what not in PROPOSALS:
        raise Refused(400, "badProposal", f"A proposal is one of {', '.join(sorted(PROPOSALS))}.")
    hub.propose(bot.secret, _table(request), what)


async def _answer_proposal(request: web.Request, hub: Hub, bot: Bot) -> None:
    what, answer = request.match_info["what"], request.match_info["answer"]
    if what not in PROPOSALS or answer not in ANSWERS:
        raise Refused(400, "badProposal", "Answer a proposal with /answer/WHAT/accept, /decline or /cancel.")
    if what == "new" and answer != "cancel":  # a new game is agreed by asking for it too, never declined
        if answer == "decline":
            raise Refused(400, "badProposal", "A new game is not declined: leave it unanswered.")
        hub.propose(bot.secret, _table(request), "new")
        return
    hub.propose(bot.secret, _table(request), f"{ANSWERS[answer]}1{what}")  # the digit is not read


async def _resign(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.propose(bot.secret, _table(request), "resign")


async def _stop(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.stop(bot.secret, _table(request))


async def _chat(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.chat_from(bot.secret, _table(request), encode_client_text(await body_field(request, "text")))


GAME_ACTIONS: dict[str, Action] = {
    "move/{x}/{y}": _move,
    "propose/{what}": _propose,
    "answer/{what}/{answer}": _answer_proposal,
    "resign": _resign,
    "stop": _stop,
    "chat": _chat,
}


def _game_route(action: Action) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return await act(request, action)

    return handler


for _path, _action in GAME_ACTIONS.items():
    routes.post(f"/api/bot/game/{{table}}/{_path}")(_game_route(_action))
