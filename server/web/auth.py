"""`/auth.py`: zagram's account endpoint (register, log in, public profile look-ups)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.hub.computer import reserved
from server.hub.hub import Hub
from server.logs import Fields
from server.protocol.codec import ProtocolError, check_id, check_lang, check_nick, clean_text
from server.store.accounts import Accounts, NickTaken
from server.web.clients import client_address
from server.web.common import HUB_KEY, Query, log_failure, text_response
from server.web.limits import AddressLimiter

log = logging.getLogger(__name__)

ACCOUNTS_KEY = web.AppKey("accounts", Accounts)
LOGIN_LIMITER_KEY = web.AppKey("login_limiter", AddressLimiter)
REGISTER_LIMITER_KEY = web.AppKey("register_limiter", AddressLimiter)

FAILED_LOGINS = (10, 15 * 60.0)  # failed logins an address may make in 15 minutes
REGISTRATIONS = (10, 60 * 60.0)  # accounts an address may create in an hour
MAX_EMAIL = 200
NO_EMAIL = "v"  # what zagram's clients send when the player gave no email

REGISTERED = "ok.zarejestrowalem."
NICK_TAKEN = "ok.tenOpisJestJuzZajety"
BAD_NICK_OR_ID = "ok.niedozwolonyOpis"
INTERNAL = "nieOk."
LOGGED_IN = "ok.zalogowanyNaSerwer."

routes = web.RouteTableDef()


def _address(request: web.Request) -> str:
    return client_address(request)


def _nick_and_id(query: Query) -> tuple[str, str]:
    nick = query.get("opisGracza", "")
    secret = query.get("idGracza") or query.get("playerId") or ""
    check_nick(nick, guest=False)
    check_id(secret, guest=False)
    return nick, secret


async def register(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`rejestruj`: a new account, logged in at once; the doc's answers."""
    query = request.query
    limiter = request.app[REGISTER_LIMITER_KEY]
    if limiter.exhausted(_address(request)):
        return INTERNAL + "tooManyRegistrations"
    email = clean_text(query.get("email", NO_EMAIL)).strip()
    try:
        nick, secret = _nick_and_id(query)
        lang = check_lang(query.get("lang", "en"))
    except ProtocolError:
        return BAD_NICK_OR_ID
    if len(email) > MAX_EMAIL:
        return BAD_NICK_OR_ID
    limiter.record(_address(request))
    if reserved(nick):  # the AI players' names, taken whether or not they play here
        return NICK_TAKEN
    try:
        account = await accounts.register(nick, secret, "" if email == NO_EMAIL else email, lang)
    except NickTaken:
        return NICK_TAKEN
    hub.login(secret, account, lang)
    log.info("registered %s", Fields(nick=nick))
    return REGISTERED


async def login(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`loguj`: `ok.zalogowanyNaSerwer.<avatar>` or `nieOk.<reason>`; failures are limited per address."""
    query = request.query
    limiter = request.app[LOGIN_LIMITER_KEY]
    address = _address(request)
    if limiter.exhausted(address):
        return INTERNAL + "tooManyFailedLogins"
    try:
        nick, secret = _nick_and_id(query)
        lang = check_lang(query["lang"]) if query.get("lang") else None
    except ProtocolError:
        limiter.record(address)
        return INTERNAL + "wrongNickOrId"
    account = await accounts.authenticate(nick, secret)
    if account is None:
        limiter.record(address)
        log.info("failed login %s", Fields(nick=nick))
        return INTERNAL + "wrongNickOrId"
    try:
        hub.login(secret, account, lang)
    except ProtocolError as refused:
        return INTERNAL + refused.code
    return LOGGED_IN + account.avatar


async def preferences(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`dajPref`: `ok..<avatar>`, the one field clients read (the third). The same answer, with no
    avatar, for a nick nobody registered: the server does not tell who has an account."""
    profile = await accounts.profile(request.query.get("opisGracza", ""))
    return f"ok..{profile.avatar if profile is not None else ''}"


async def description(request: web.Request, hub: Hub, accounts: Accounts) -> str:
    """`dajOpis`: the player's own description text, as they wrote it; empty for anyone else."""
    profile = await accounts.profile(request.query.get("opisGracza", ""))
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
    hub = request.app[HUB_KEY]
    before = hub.writes()
    try:
        body = await handler(request, hub, request.app[ACCOUNTS_KEY])
    except Exception:  # the doc's answer for an internal error, never a 500
        log_failure(request, co)
        body = INTERNAL
    await hub.settled(before)
    return text_response(body)
