"""The aiohttp application factory: the one place where the server's parts are wired together."""

from __future__ import annotations

from aiohttp import web

from server.config import Settings
from server.hub.hub import Hub
from server.web import health, kropki

SETTINGS_KEY = web.AppKey("settings", Settings)


def create_app(settings: Settings, hub: Hub | None = None) -> web.Application:
    """Build the application for ``settings``; tests and the CLI both start from here.

    Tests pass a hub with a clock they drive.
    """
    app = web.Application()
    app[SETTINGS_KEY] = settings
    app[kropki.HUB_KEY] = hub or Hub()
    app.cleanup_ctx.append(kropki.hub_context)
    app.add_routes(health.routes)
    app.add_routes(kropki.routes)
    return app
