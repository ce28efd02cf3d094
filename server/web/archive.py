"""Game records over HTTP: `/sgf/<number>` downloads an archived one, `/games?nick=` lists a player's,
`/table/<uid>.sgf` gives a live table's game as it stands."""

from __future__ import annotations

from aiohttp import web

from server.protocol.codec import ProtocolError, check_nick
from server.store.games import Games
from server.web.common import HUB_KEY, utc_text

GAMES_KEY = web.AppKey("games", Games)
DEFAULT_LIST = 50
MAX_LIST = 500
SGF_TYPE = "application/x-go-sgf"

routes = web.RouteTableDef()


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


@routes.get("/sgf/{number}")
async def download(request: web.Request) -> web.Response:
    text = request.match_info["number"].removesuffix(".sgf")
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        return web.Response(status=404, text="No such game: archive numbers are whole numbers.\n")
    sgf = await request.app[GAMES_KEY].sgf(int(text))
    if sgf is None:
        return web.Response(status=404, text=f"There is no game number {text}.\n")
    return web.Response(
        text=sgf,
        content_type=SGF_TYPE,
        headers={"Content-Disposition": f'attachment; filename="kropki-{text}.sgf"'},
    )


@routes.get("/table/{uid}")
async def table_record(request: web.Request) -> web.Response:
    """The record of a table's current game as it stands (how an analysis is saved), for anyone."""
    text = request.match_info["uid"].removesuffix(".sgf")
    uid = int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None
    sgf = request.app[HUB_KEY].table_record(uid) if uid is not None else None
    if sgf is None:
        return web.Response(status=404, text=f"There is no game table {text}.\n")
    return web.Response(
        text=sgf,
        content_type=SGF_TYPE,
        headers={"Content-Disposition": f'attachment; filename="kropki-table-{uid}.sgf"'},
    )


@routes.get("/games")
async def player_games(request: web.Request) -> web.Response:
    nick = request.query.get("nick", "")
    try:
        check_nick(nick, guest=nick.startswith("*"))
    except ProtocolError:
        return _error(400, "nick= must be a player's nick (a guest's with its leading *)")
    limit_text = request.query.get("limit", str(DEFAULT_LIST))
    if not limit_text.isascii() or not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIST:
        return _error(400, f"limit= must be a number from 1 to {MAX_LIST}")
    games = await request.app[GAMES_KEY].recent(nick, int(limit_text))
    return web.json_response(
        [
            {
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
            for game in games
        ],
        headers={"Cache-Control": "no-store"},
    )
