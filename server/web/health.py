"""Liveness probe for load balancers, systemd watchers and the Docker HEALTHCHECK."""

from __future__ import annotations

from aiohttp import web

from server import __version__

routes = web.RouteTableDef()


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    """Answer as long as the event loop serves requests; never cached, so a probe sees the live process."""
    return web.json_response(
        {"status": "ok", "version": __version__},
        headers={"Cache-Control": "no-store"},
    )
