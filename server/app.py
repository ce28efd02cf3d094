"""The aiohttp application factory: the one place where the server's parts are wired together."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from server.config import Settings
from server.hub.hub import Hub
from server.store.store import Store
from server.web import archive, auth, health, kropki, tournament
from server.web.common import HUB_KEY
from server.web.limits import AddressLimiter

log = logging.getLogger(__name__)

SETTINGS_KEY = web.AppKey("settings", Settings)
STORE_KEY = web.AppKey("store", Store)


def create_app(settings: Settings, hub: Hub | None = None) -> web.Application:
    """Build the application for ``settings``; tests and the CLI both start from here.

    Tests pass a hub with a clock they drive.
    """
    app = web.Application()
    app[SETTINGS_KEY] = settings
    app[HUB_KEY] = hub or Hub()
    app[auth.LOGIN_LIMITER_KEY] = AddressLimiter(*auth.FAILED_LOGINS)
    app[auth.REGISTER_LIMITER_KEY] = AddressLimiter(*auth.REGISTRATIONS)
    app.cleanup_ctx.append(_store_and_hub)
    app.on_shutdown.append(_announce_shutdown)
    app.add_routes(health.routes)
    app.add_routes(kropki.routes)
    app.add_routes(auth.routes)
    app.add_routes(archive.routes)
    app.add_routes(tournament.routes)
    return app


async def _store_and_hub(app: web.Application) -> AsyncIterator[None]:
    """Open the store, bring the live tables back from the journal, run the hub; on the way out,
    write everything still queued before disconnecting."""
    hub = app[HUB_KEY]
    store = await Store.open(app[SETTINGS_KEY].db_url, upgrade=app[SETTINGS_KEY].migrate)
    app[STORE_KEY] = store
    app[auth.ACCOUNTS_KEY] = store.accounts
    app[archive.GAMES_KEY] = store.games
    app[tournament.TOURNAMENTS_KEY] = store.tournaments
    hub.persistence = store.writer
    journals, next_uid = await store.writer.load_journal()
    hub.restore(journals, next_uid)
    hub.start()
    yield
    hub.close()
    await store.close()
    log.info("store closed")


async def _announce_shutdown(app: web.Application) -> None:
    app[HUB_KEY].announce_shutdown()
