"""`/api/bot/seek...` and `/api/bot/pool/...`: seeks and quick-pairing pools in the bot API
(docs/bots.md), the stream's `k` and `j` commands (docs/protocol.md, "Seeks and quick pairing") as
endpoints, with their checks and refusal codes. The feed lists the open seeks (server/protocol/botfeed.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from server.hub.hub import Hub
from server.protocol.seeks import AcceptSeek, CancelSeek, PostSeek, parse_range, seek_number
from server.web.bots import Bot, act, body_field

routes = web.RouteTableDef()


async def _post(request: web.Request, hub: Hub, bot: Bot) -> dict[str, Any]:
    game_type = await body_field(request, "gameType")
    lowest = await body_field(request, "minRating", required=False)
    highest = await body_field(request, "maxRating", required=False)
    return {"id": hub.seek(bot.secret, PostSeek(game_type, parse_range(lowest, highest)))}


async def _accept(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.seek(bot.secret, AcceptSeek(seek_number(request.match_info["number"])))


async def _cancel(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.seek(bot.secret, CancelSeek(seek_number(request.match_info["number"])))


async def _join(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.pool(bot.secret, request.match_info["pool"])


async def _leave(request: web.Request, hub: Hub, bot: Bot) -> None:
    hub.pool(bot.secret, "")


@routes.post("/api/bot/seek")
async def post_seek(request: web.Request) -> web.Response:
    """A seek of `gameType`, for ratings `minRating` to `maxRating` (either may be left out):
    `{"ok": true, "id": N}`."""
    return await act(request, _post)


@routes.post("/api/bot/seek/{number}/accept")
async def accept_seek(request: web.Request) -> web.Response:
    return await act(request, _accept)


@routes.post("/api/bot/seek/{number}/cancel")
async def cancel_seek(request: web.Request) -> web.Response:
    return await act(request, _cancel)


@routes.post("/api/bot/pool/{pool}/join")
async def join_pool(request: web.Request) -> web.Response:
    return await act(request, _join)


@routes.post("/api/bot/pool/leave")
async def leave_pool(request: web.Request) -> web.Response:
    return await act(request, _leave)
