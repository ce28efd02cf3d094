"""The archive's pages: `/game/<n>` replays a game, `/player/<nick>` shows a player. Each is a static page
of the built-in client (server/static) whose script reads the JSON at the same address plus `.json`; the
replay's captures are the engine's (server/engine/steps.py), never recomputed in the browser."""

from __future__ import annotations

import json
from collections import OrderedDict

from aiohttp import web

from server.engine.rating import shown
from server.engine.replay import ReplayError
from server.engine.sgf import SgfError
from server.engine.steps import steps_of
from server.protocol.codec import ProtocolError, check_nick
from server.store.database import utc_text
from server.web.archive import GAMES_KEY, archive_number, summary_json
from server.web.assets import PAGES_KEY
from server.web.clients import refuses_store_reads
from server.web.common import STORE_KEY

RECENT_GAMES = 20
PLAYER_READS = 3  # store reads (server/web/clients.py) a player's page counts: 5 ms of CPU
REPLAYS_KEPT_BYTES = 16 * 1024 * 1024
NO_PAGES = "The archive's pages belong to the built-in client, which --static replaced: see {json}.\n"

routes = web.RouteTableDef()


class Replays:
    """The replays' board and moves of archived games as JSON, the most recently asked first out of
    `limit` bytes. An archived game's moves never change, and the engine takes milliseconds to replay a
    long game: without them a flood of `/game/<n>.json` from one address (200 a second are allowed) kept
    a core busy. Its players' names can change (a deleted account's, docs/operations.md, "Accounts",
    from another process): they are read from the database every time."""

    def __init__(self, limit: int = REPLAYS_KEPT_BYTES) -> None:
        self.limit, self.size = limit, 0
        self._bodies: OrderedDict[int, bytes] = OrderedDict()

    def get(self, number: int) -> bytes | None:
        body = self._bodies.get(number)
        if body is not None:
            self._bodies.move_to_end(number)
        return body

    def keep(self, number: int, body: bytes) -> None:
        self._bodies[number] = body
        self.size += len(body)
        while self.size > self.limit and len(self._bodies) > 1:
            self.size -= len(self._bodies.popitem(last=False)[1])


REPLAYS_KEY = web.AppKey("replays", Replays)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def _page(request: web.Request, name: str, found: bool) -> web.StreamResponse:
    """The page itself, with 404 when there is nothing to show (its script then says so in words)."""
    pages = request.app.get(PAGES_KEY)
    if pages is None:
        return web.Response(status=404, text=NO_PAGES.format(json=request.path + ".json"))
    return await pages.page_response(request, name, 200 if found else 404)


@routes.get("/game/{number}")
async def game(request: web.Request) -> web.StreamResponse:
    text = request.match_info["number"]
    as_json = text.endswith(".json")
    number = archive_number(text.removesuffix(".json"))
    if number is None:
        if as_json:
            return _error(400, "A game's address is /game/<number>, its number in digits.")
        return await _page(request, "game.html", False)
    games = request.app[GAMES_KEY]
    replays = request.app[REPLAYS_KEY]
    steps = replays.get(number) if as_json else None
    if (refused := refuses_store_reads(request, 2 if as_json and steps is None else 1)) is not None:
        return refused
    if not as_json:
        return await _page(request, "game.html", await games.summary(number) is not None)
    if steps is not None:
        summary = await games.summary(number)
    else:
        found = await games.game(number)
        summary = found[0] if found is not None else None
        if found is not None:
            try:
                steps = _board(found[1])
            except (SgfError, ReplayError) as exc:
                return _error(422, f"Game {number}'s record cannot be replayed: {exc}")
            replays.keep(number, steps)
    if summary is None or steps is None:
        return _error(404, f"There is no game number {number}.")
    body = json.dumps(summary_json(summary)).encode()[:-1] + b", " + steps[1:]  # one object of both
    return web.Response(body=body, content_type="application/json")


def _board(sgf: str) -> bytes:
    """A record's board and moves as the replay shows them, in JSON: what Replays keeps."""
    replay = steps_of(sgf)
    board = {
        "width": replay.width,
        "height": replay.height,
        "variant": replay.variant,
        "setup": replay.setup,
        "moves": [step.as_json() for step in replay.steps],
    }
    return json.dumps(board).encode()


@routes.get("/player/{nick}")
async def player(request: web.Request) -> web.StreamResponse:
    text = request.match_info["nick"]
    as_json = text.endswith(".json")
    nick = text.removesuffix(".json")
    try:
        check_nick(nick, guest=nick.startswith("*"))
    except ProtocolError:
        if as_json:
            return _error(400, "A player's address is /player/<nick>, a guest's nick with its leading *.")
        return await _page(request, "player.html", False)
    if (refused := refuses_store_reads(request, PLAYER_READS)) is not None:
        return refused
    store = request.app[STORE_KEY]
    profile = None if nick.startswith("*") else await store.accounts.profile(nick)
    games = await store.games.recent(nick, RECENT_GAMES)
    found = profile is not None or bool(games) or await store.games.has_played(nick)
    if not as_json:
        return await _page(request, "player.html", found)
    if not found:
        return _error(404, f"There is no player {nick}: no account and no archived game has this nick.")
    answer: dict[str, object] = {"nick": nick, "registered": profile is not None}
    if profile is not None:
        history = await store.games.ratings(nick)
        answer |= {
            "nick": profile.nick,
            "rating": shown(profile.rating),
            "deviation": round(profile.rating.deviation),
            "wins": profile.wins,
            "draws": profile.draws,
            "losses": profile.losses,
            "bot": profile.bot,
            "registeredAt": utc_text(profile.registered_at),
            "ratings": [
                {"game": point.game_number, "at": utc_text(point.rated_at), "rating": round(point.rating)}
                for point in history
            ],
        }
    answer["games"] = [summary_json(game) for game in games]
    return web.json_response(answer, headers={"Cache-Control": "no-store"})
