"""`/auth.py`: zagram's account endpoint (register, log in, public profile look-ups)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.hub.hub import Hub
from server.hub.model import reserved
from server.logs import Fields
from server.protocol.codec import ProtocolError, check_id, check_lang, check_nick, clean_text, nick_key
from server.protocol.seeks import reads_seeks
from server.store.accounts import Accounts, NickTaken, Profile
from server.store.idhash import HashesBusy
from server.store.outage import unavailable
from server.web.clients import origin, store_reads_refused
from server.web.common import (
    HUB_KEY,
    LOGIN_GUARD_KEY,
    Query,
    log_failure,
    nick_claimed,
    session_here,
    text_response,
)
from server.web.limits import NetworkLimiter

log = logging.getLogger(__name__)

ACCOUNTS_KEY = web.AppKey("accounts", Accounts)
REGISTER_LIMITER_KEY = web.AppKey("register_limiter", NetworkLimiter)
# an account is kept for good, 12.7 KB with the 100 players it may ignore: a day of registrations is bounded
REGISTER_DAY_LIMITER_KEY = web.AppKey("register_day_limiter", NetworkLimiter)

FAILED_LOGINS_WINDOW = 15 * 60.0  # seconds in which an address may fail `--failed-logins-per-address` times
REGISTRATIONS = (10, 60 * 60.0)  # accounts an address may create in an hour
REGISTRATIONS_A_DAY = (25, 24 * 3600.0)  # and in a day (times the network factor for a network)
MAX_EMAIL = 200
NO_EMAIL = "v"  # what zagram's clients send when the player gave no email

REGISTERED = "ok.zarejestrowalem."
NICK_TAKEN = "ok.tenOpisJestJuzZajety"
BAD_NICK_OR_ID = "ok.niedozwolonyOpis"
INTERNAL = "nieOk."
LOGGED_IN = "ok.zalogowanyNaSerwer."
WRONG_NICK_OR_ID = "nieOk.wrongNickOrId"
TOO_MANY_FAILED_LOGINS = "nieOk.tooManyFailedLogins"
TOO_FAST = "nieOk.tooFast"  # as the rate limits answer /auth.py (clients.refusal): the id hashes are busy
CROSS_SITE = "nieOk.crossSite"
COUNTED = frozenset({"rejestruj", "loguj"})  # the requests that count against an address or an account
# the look-ups of a profile: one read of the store each (1.5-1.8 ms of CPU) when the nick could have an
# account, counted as the archive's are (clients.STORE_READS)
LOOK_UPS = frozenset({"dajPref", "dajOpis"})

routes = web.RouteTableDef()


def _cross_site(request: web.Request) -> bool:
    """Sent by a browser for another site's page (an `<img>`, a form, a script): browsers say so in
    `Sec-Fetch-Site`, which no page can set or drop; zagram's other clients never send it."""
    return request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site"


def _account_key(nick: str) -> str | None:
    """The key an account's failed logins are counted under, whether or not anyone registered the
    nick; None for a nick no account can have."""
    try:
        return nick_key(check_nick(nick, guest=False))
    except ProtocolError:
        return None


def _nick_and_id(query: Query) -> tuple[str, str]:
    nick = query.get("opisGracza", "")
    secret = query.get("idGracza") or query.get("playerId") or ""
    check_nick(nick, guest=False)
    check_id(secret, guest=False)
    return nick, secret


async def register(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`rejestruj`: a new account, logged in at once; the doc's answers."""
    query = request.query
    limiters = (request.app[REGISTER_LIMITER_KEY], request.app[REGISTER_DAY_LIMITER_KEY])
    client = origin(request)
    if any(limiter.exhausted(client) for limiter in limiters):
        return INTERNAL + "tooManyRegistrations"
    email = clean_text(query.get("email", NO_EMAIL)).strip()
    try:
        nick, secret = _nick_and_id(query)
        lang = check_lang(query.get("lang", "en"))
    except ProtocolError:
        return BAD_NICK_OR_ID
    if len(email) > MAX_EMAIL:
        return BAD_NICK_OR_ID
    for limiter in limiters:
        limiter.record(client)
    if reserved(nick):  # the AI players' names, taken whether or not they play here
        return NICK_TAKEN
    try:
        account = await accounts.register(nick, secret, "" if email == NO_EMAIL else email, lang)
    except NickTaken:
        return NICK_TAKEN
    except HashesBusy:
        return TOO_FAST
    request.app[LOGIN_GUARD_KEY].remember(nick_key(nick), client)
    log.info("registered %s", Fields(nick=nick))
    hub.account_registered(nick)  # a seat kept for its nick was a deleted account's
    try:
        async with nick_claimed(request, nick):
            hub.login(secret, account, lang, client, reads_seeks=reads_seeks(query))
    except ProtocolError as refused:  # registered, but no room to log in now: a later `loguj` will do
        return INTERNAL + refused.code
    return REGISTERED


async def login(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`loguj`: `ok.zalogowanyNaSerwer.<avatar>` or `nieOk.<reason>`; failures are limited per address
    and per account, except from an address that has logged in to the account (docs/protocol.md)."""
    query = request.query
    guard = request.app[LOGIN_GUARD_KEY]
    client = origin(request)
    key = _account_key(query.get("opisGracza", ""))
    if not guard.admit(key, client):  # refused before the id is looked at: right and wrong alike
        return TOO_MANY_FAILED_LOGINS
    try:
        nick, secret = _nick_and_id(query)
        lang = check_lang(query["lang"]) if query.get("lang") else None
    except ProtocolError:
        return WRONG_NICK_OR_ID
    try:  # the owner's own address goes ahead of strangers' guesses waiting for the id hashes' threads
        account = await accounts.authenticate(nick, secret, first=guard.knows(key, client))
    except HashesBusy:
        guard.give_back(nick_key(nick), client)  # not checked: no failed login
        return TOO_FAST
    except Exception:
        guard.give_back(nick_key(nick), client)  # the server's error, not a failed login
        raise
    if account is None:
        log.info("failed login %s", Fields(nick=nick))
        return WRONG_NICK_OR_ID
    guard.succeeded(nick_key(nick), client)
    try:
        async with nick_claimed(request, nick):
            hub.login(secret, account, lang, client, reads_seeks=reads_seeks(query))
    except ProtocolError as refused:
        return INTERNAL + refused.code
    return LOGGED_IN + account.avatar


async def _profile(request: web.Request, accounts: Accounts) -> Profile | None:
    """The profile of the nick asked for; None without a look in the store for a nick no account can
    have (a guest's, an invalid one)."""
    nick = request.query.get("opisGracza", "")
    return await accounts.profile(nick) if _account_key(nick) is not None else None


async def preferences(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`dajPref`: `ok..<avatar>`, the one field clients read (the third). The same answer, with no
    avatar, for a nick nobody registered: the server does not tell who has an account."""
    profile = await _profile(request, accounts)
    return f"ok..{profile.avatar if profile is not None else ''}"


async def description(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`dajOpis`: the player's own description text, as they wrote it; empty for anyone else."""
    profile = await _profile(request, accounts)
    return profile.about if profile is not None else ""


HANDLERS: dict[str, Callable[[web.Request, Hub, Accounts], Awaitable[str]]] = {
    "rejestruj": register,
    "loguj": login,
    "dajPref": preferences,
    "dajOpis": description,
}


@routes.get("/auth.py")
async def auth(request: web.Request) -> web.Response:
    co = request.query.get("co", "")
    handler = HANDLERS.get(co)
    if handler is None:
        return text_response(INTERNAL + "unknownCo")
    if co in COUNTED and _cross_site(request):  # another site's page: it must not use up anyone's tries
        return text_response(CROSS_SITE)
    if co in LOOK_UPS and _account_key(request.query.get("opisGracza", "")) is not None:
        if store_reads_refused(request, 1) is not None:
            return text_response(TOO_FAST)
    hub = request.app[HUB_KEY]
    before = hub.writes()
    try:
        await session_here(request, request.query.get("idGracza") or request.query.get("playerId"))
        body = await handler(request, hub, request.app[ACCOUNTS_KEY])
    except Exception as failure:  # the doc's answer for an internal error, never a 500
        if unavailable(failure) is None:
            log_failure(request, co)
            body = INTERNAL
        else:  # the database cannot be reached: the store's writer logs that once, not every request
            body = INTERNAL + "storage"
    await hub.settled(before)
    return text_response(body)
