"""Game records over HTTP: `/sgf/<number>` downloads an archived one, `/games` lists them (a page for
browsers, JSON for programs; `/games.json` always JSON), `/table/<uid>.sgf` gives a live table's game
as it stands."""

from __future__ import annotations

from aiohttp import web

from server.engine.gametype import GameTypeError, parse_game_type
from server.engine.rating import unrated_reason
from server.protocol.codec import ProtocolError, check_nick
from server.store.database import MAX_INTEGER, utc_text
from server.store.games import Games, GameSummary
from server.store.outage import unavailable
from server.web.assets import PAGES_KEY
from server.web.clients import refuses_store_reads
from server.web.common import DATABASE_UNREACHABLE, HUB_KEY, STORE_KEY, log_failure

GAMES_KEY = web.AppKey("games", Games)
DEFAULT_LIST = 50
MAX_LIST = 500
GAMES_A_READ = 50  # a list of games counts one store read (server/web/clients.py) for each 50 asked for
SGF_TYPE = "application/x-go-sgf"

routes = web.RouteTableDef()


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


@routes.get("/sgf/{number}")
async def download(request: web.Request) -> web.Response:
    text = request.match_info["number"].removesuffix(".sgf")
    number = archive_number(text)
    if number is None:
        return web.Response(status=404, text="No such game: archive numbers are whole numbers.\n")
    if (refused := refuses_store_reads(request, 1)) is not None:
        return refused
    sgf = await request.app[GAMES_KEY].sgf(number)
    if sgf is None:
        return web.Response(status=404, text=f"There is no game number {text}.\n")
    return web.Response(
        text=sgf,
        content_type=SGF_TYPE,
        headers={"Content-Disposition": f'attachment; filename="kropki-{text}.sgf"'},
    )


@routes.get("/table/{uid}")
async def table_record(request: web.Request) -> web.Response:
    """The record of a table's current game as it stands (how an analysis is saved), for anyone, its
    bots marked as the archive marks them: an account's flag, which the store keeps."""
    text = request.match_info["uid"].removesuffix(".sgf")
    uid = int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None
    hub = request.app[HUB_KEY]
    players = hub.table_players(uid) if uid is not None else None
    if players and (refused := refuses_store_reads(request, 1)) is not None:  # its bots are read
        return refused
    try:
        bots = await request.app[STORE_KEY].bots.among(players or ())
    except Exception as failure:  # never a 500
        if unavailable(failure) is not None:  # the store's writer logs that, once
            return web.Response(status=503, text=DATABASE_UNREACHABLE)
        log_failure(request, "table")
        return web.Response(status=503, text="The server failed: try again.\n")
    sgf = hub.table_record(uid, bots) if uid is not None else None
    if sgf is None:
        return web.Response(status=404, text=f"There is no game table {text}.\n")
    return web.Response(
        text=sgf,
        content_type=SGF_TYPE,
        headers={"Content-Disposition": f'attachment; filename="kropki-table-{uid}.sgf"'},
    )


@routes.get("/games")
async def games(request: web.Request) -> web.StreamResponse:
    """The list as a page for a browser (its script reads /games.json), as JSON for programs."""
    pages = request.app.get(PAGES_KEY)
    if pages is not None and prefers_html(request.headers.get("Accept", "")):
        return await pages.page_response(request, "games.html")
    return await games_json(request)


@routes.get("/games.json")
async def games_json(request: web.Request) -> web.Response:
    """Newest first: every game, or a player's (`nick=`); `limit=` a page, `before=` the number below
    which the page starts (the last number of the page before)."""
    nick = request.query.get("nick") or None
    if nick is not None:
        try:
            check_nick(nick, guest=nick.startswith("*"))
        except ProtocolError:
            return _error(400, "nick= must be a player's nick (a guest's with its leading *)")
    limit = _whole(request.query.get("limit", str(DEFAULT_LIST)), MAX_LIST)
    if limit is None:
        return _error(400, f"limit= must be a number from 1 to {MAX_LIST}")
    before_text = request.query.get("before")
    before = _whole(before_text, MAX_INTEGER) if before_text is not None else None
    if before_text is not None and before is None:
        return _error(400, "before= must be a game number (the list goes on with the older games)")
    if (refused := refuses_store_reads(request, max(1, limit / GAMES_A_READ))) is not None:
        return refused
    found = await request.app[GAMES_KEY].recent(nick, limit, before)
    return web.json_response([summary_json(game) for game in found], headers={"Cache-Control": "no-store"})


def summary_json(game: GameSummary) -> dict[str, object]:
    """A team game (docs/teams.md) also lists its `players` in turn order; its blue and red are the
    teams' nicks joined by ", ". A game with bots lists their nicks as `bots` (docs/bots.md)."""
    summary: dict[str, object] = {
        "number": game.number,
        "sgf": f"/sgf/{game.number}",
        "finished": utc_text(game.finished_at),
        "blue": game.blue,
        "red": game.red,
        "gameType": game.game_type,
        "result": game.result,
        "rated": game.rated,
        "tournament": game.tournament,
    }
    why = unrated(game)
    if why is not None:
        summary["unrated"] = why
    if game.players:
        summary["players"] = list(game.players)
    if game.bots:
        summary["bots"] = list(game.bots)
    return summary


def unrated(game: GameSummary) -> str | None:
    """Why a ranked game left ratings as they were (docs/ratings.md: issue 47, a player page said "No
    rated games yet" after two ranked games); None for a rated game, or one that was not ranked. The
    dots placed are not kept with the summary: a ranked game not rated for any other reason had fewer
    than 24."""
    try:
        kind = parse_game_type(game.game_type).kind.value
    except GameTypeError:
        return None
    if game.rated or kind != "R":
        return None
    reason = unrated_reason(
        kind=kind,
        teams=bool(game.players),
        finished=game.result is not None,
        cancelled=game.result == "Void",
        registered=game.registered,
        dots=None,
    )
    return reason or "short"


def archive_number(text: str) -> int | None:
    """A game's number as an address writes it: ASCII digits, at most 12 of them; else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 12 else None


def _whole(text: str, most: int) -> int | None:
    """A number from 1 to `most` written in digits, else None."""
    number = archive_number(text)
    return number if number is not None and 1 <= number <= most else None


def prefers_html(accept: str) -> bool:
    """Whether an Accept header ranks text/html above application/json (a browser's address bar does;
    programs send */* or nothing and get JSON)."""
    return _quality(accept, "text/html") > _quality(accept, "application/json")


def _quality(accept: str, wanted: str) -> float:
    """The q of the most specific Accept range that covers `wanted` (0 when none does)."""
    kind = wanted.split("/")[0]
    best, quality = -1, 0.0
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        rank = {wanted: 2, f"{kind}/*": 1, "*/*": 0}.get(media.lower(), -1)
        if rank > best:
            best, quality = rank, 1.0
            for param in params:
                name, _, value = param.partition("=")
                if name.strip() == "q":
                    try:
                        quality = float(value)
                    except ValueError:
                        quality = 0.0
    return quality
