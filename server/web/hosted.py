"""Tournaments the server runs (swiss, arena): an organiser creates one, players join and leave, and
everyone reads the list and the standings (docs/tournaments.md, "Tournaments the server runs")."""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from datetime import UTC, datetime

from aiohttp import web

from server.director.director import Director
from server.director.times import wall
from server.protocol.codec import ProtocolError
from server.store.hosted import Settings
from server.web.assets import REVALIDATE, asset_response
from server.web.clients import store_reads_refused
from server.web.common import DIRECTOR_KEY, HUB_KEY
from server.web.shared import SHARED_ANSWERS_KEY, Built
from server.web.tournament import (
    LISTING,
    NOT_SAVED,
    answered_anew,
    checked_key,
    required,
    tournament_label,
)

KINDS = ("swiss", "arena")
MAX_ROUNDS = 20
ARENA_MINUTES = (5, 24 * 60)
MAX_SAY_HI = 600
MAX_AHEAD = 366 * 24 * 3600  # a start at most a year ahead
DEFAULT_SAY_HI = 60
_WHOLE = re.compile(r"[0-9]{1,6}")

routes = web.RouteTableDef()


def _director(request: web.Request) -> Director:
    director = request.app.get(DIRECTOR_KEY)
    if director is None:
        raise ProtocolError("notHere", "This server is a member of a cluster: it runs no tournaments itself.")
    return director


def _whole(request: web.Request, name: str, low: int, high: int, default: int | None = None) -> int | None:
    text = request.query.get(name, "")
    if not text:
        return default
    if not _WHOLE.fullmatch(text) or not low <= int(text) <= high:
        raise ProtocolError(f"bad.{name}", f"{name} must be a whole number from {low} to {high}.")
    return int(text)


def _start(text: str, now: float) -> datetime:
    """Seconds since the epoch, or ISO 8601 with its offset (`2026-12-01T18:00Z`)."""
    try:
        moment = (
            datetime.fromtimestamp(int(text), UTC)
            if text.isdigit() and len(text) <= 12
            else datetime.fromisoformat(text)
        )
    except ValueError:
        raise ProtocolError("badStart", "start: seconds since 1970 or ISO 8601 with its offset.") from None
    if moment.tzinfo is None:
        raise ProtocolError("badStart", "start needs its offset from UTC, e.g. 2026-12-01T18:00Z.")
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:  # an offset that takes it before the year 1 or past 9999
        raise ProtocolError("badStart", "The start is out of range.") from None
    if wall(moment) > now + MAX_AHEAD:
        raise ProtocolError("badStart", "The start is more than a year ahead.")
    return moment


async def create_tournament(request: web.Request) -> str:
    """`co=createTournament&key=K&tourn=NAME&kind=swiss|arena&gameType=G&rounds=R|minutes=M&start=S
    [&minRating=A][&maxRating=B][&sayHi=S][&registeredOnly=1]`, or with a moderator's `idGracza`
    instead of a key -> `ok`."""
    hub = request.app[HUB_KEY]
    director = _director(request)
    organiser = await _organiser(request)
    key_tournament, created_by = organiser.tournament, organiser.name
    registered_only = organiser.registered_only or request.query.get("registeredOnly", "") in ("1", "true")
    name = tournament_label(required(request, "tourn"))
    if name is None:
        raise ProtocolError("badTourn", f"A tournament the server runs needs a name other than {NOT_SAVED}.")
    if key_tournament is not None and name != key_tournament:
        raise ProtocolError("keyNotForTournament")
    kind = required(request, "kind")
    if kind not in KINDS:
        raise ProtocolError("badKind", "kind is swiss or arena.")
    rounds = _whole(request, "rounds", 1, MAX_ROUNDS) if kind == "swiss" else 0
    minutes = _whole(request, "minutes", *ARENA_MINUTES) if kind == "arena" else 0
    if rounds is None or minutes is None:
        raise ProtocolError("missing.rounds" if kind == "swiss" else "missing.minutes")
    low, high = _whole(request, "minRating", 0, 9999), _whole(request, "maxRating", 0, 9999)
    if low is not None and high is not None and low > high:
        raise ProtocolError("badRatings", "minRating is above maxRating.")
    settings = Settings(
        name=name,
        kind=kind,
        game_type=required(request, "gameType"),
        rounds=rounds,
        minutes=minutes,
        starts_at=_start(required(request, "start"), hub.clock()),
        min_rating=low,
        max_rating=high,
        registered_only=registered_only,
        say_hi=_whole(request, "sayHi", 0, MAX_SAY_HI, DEFAULT_SAY_HI) or 0,
        created_by=created_by,
    )
    await director.create(settings)
    answered_anew(request.app, name)
    return "ok"


async def cancel_tournament(request: web.Request) -> str:
    """`co=cancelTournament&key=K&tourn=NAME` (or a moderator's `idGracza`) -> `ok`."""
    director = _director(request)
    name = required(request, "tourn")
    await director.cancel(name, (await _organiser(request)).tournament)
    answered_anew(request.app, name)
    return "ok"


@dataclass(frozen=True)
class Organiser:
    tournament: str | None  # the one tournament the key is for; None: any
    name: str  # "key <its name>", or the moderator's nick
    registered_only: bool  # the key's: its tournaments are for registered players only


async def _organiser(request: web.Request) -> Organiser:
    """Who asks: a logged-in moderator (their `idGracza`), or the holder of an organiser's key."""
    secret = request.query.get("idGracza") or request.query.get("playerId")
    moderator = request.app[HUB_KEY].requester(secret) if secret else None
    if moderator is not None and moderator.moderator:
        return Organiser(None, moderator.nick, False)
    key = await checked_key(request)
    return Organiser(key.tournament, f"key {key.name}", key.registered_only)


async def join_tournament(request: web.Request) -> str:
    """`co=joinTournament&idGracza=ID&tourn=NAME` -> `ok`."""
    name = required(request, "tourn")
    director, secret = _director(request), _secret(request)
    _count_reads(request)
    await director.join(secret, name)
    answered_anew(request.app, name)
    return "ok"


async def leave_tournament(request: web.Request) -> str:
    """`co=leaveTournament&idGracza=ID&tourn=NAME` -> `ok`."""
    name = required(request, "tourn")
    director, secret = _director(request), _secret(request)
    _count_reads(request)
    await director.leave(secret, name)
    answered_anew(request.app, name)
    return "ok"


def _count_reads(request: web.Request) -> None:
    """A join or a leave reads the tournament and its entries from the store, whether or not it does
    anything: before, a logged-in guest repeating one kept the store busy as fast as its id's requests
    went (6.6-7.1 ms of CPU each at 150 entries, 1.6 for a name that has no tournament). Each counts one
    read (clients.STORE_READS), `tooFast` past the share: a bound rather than its cost, so that the
    guests of one address can still make their entries of the hour at once
    (server/hub/limits.py, ENTRIES_PER_ADDRESS)."""
    if store_reads_refused(request, 1) is not None:
        raise ProtocolError("tooFast", "Too many tournaments joined or left; try again in a second.")


def _secret(request: web.Request) -> str:
    secret = request.query.get("idGracza") or request.query.get("playerId")
    if not secret:
        raise ProtocolError("missing.idGracza")
    return secret


@routes.get("/tournaments.json")
async def listing(request: web.Request) -> web.StreamResponse:
    """The tournaments the server runs: the unfinished ones by start, then the latest finished; built
    at most once a CHECK_SECONDS and shared (server/web/shared.py)."""
    director = request.app.get(DIRECTOR_KEY)

    async def listed() -> Built:
        return Built({"tournaments": await director.listing() if director is not None else []})

    answers = request.app[SHARED_ANSWERS_KEY]
    answer = await answers.get(LISTING, _checked_anew, listed)
    assert answer is not None  # a build that always answers
    return await asset_response(request, answer, REVALIDATE, budget=answers.budget)


async def _checked_anew() -> Hashable:
    """A version never seen before: every check builds the list again (it has no count of changes)."""
    return object()
