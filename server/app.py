"""The aiohttp application factory: the one place where the server's parts are wired together."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from server import gcschedule
from server.config import Settings
from server.director.director import Director
from server.hub.computer import WorkerPool
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.numbers import TABLE_BLOCK
from server.logs import Fields
from server.store.serverlock import AdvisoryLock, Holder
from server.store.store import Store
from server.web import (
    accesslog,
    archive,
    auth,
    bots,
    botseeks,
    clients,
    frontdoor,
    health,
    hosted,
    kropki,
    metrics,
    moderation,
    pages,
    push,
    tournament,
)
from server.web.assets import PAGES_KEY, Assets
from server.web.budget import MEGABYTE, SendingBudget
from server.web.common import (
    DIRECTOR_KEY,
    HUB_KEY,
    LOGIN_GUARD_KEY,
    MEMBERSHIP_KEY,
    MOVER_KEY,
    NICKS_KEY,
    STORE_KEY,
)
from server.web.headers import folder_page_policy
from server.web.kept_tables import KeptTournaments
from server.web.limits import LoginGuard, NetworkLimiter, RecentKeys
from server.web.networks import Grouping
from server.web.shared import SHARED_ANSWERS_KEY, SharedAnswers

log = logging.getLogger(__name__)

BUILT_IN_CLIENT = Path(__file__).parent / "static"  # replaced by `serve --static DIR`
SETTINGS_KEY = web.AppKey("settings", Settings)
# At a stop, requests in flight get this long (a reply waits SETTLE_TIMEOUT for its writes at most);
# then the final writes get theirs (store.py): the whole stop stays under 30 s, storage failing or not.
REQUESTS_AT_STOP_SECONDS = 10.0
__all__ = ["SETTINGS_KEY", "STORE_KEY", "create_app"]


def create_app(settings: Settings, hub: Hub | None = None) -> web.Application:
    """Build the application for ``settings``; tests and the CLI both start from here.

    Tests pass a hub with a clock they drive.
    """
    app = web.Application(
        middlewares=[frontdoor.front_door], handler_args={"max_line_size": kropki.MAX_REQUEST_LINE}
    )
    app[SETTINGS_KEY] = settings
    app[HUB_KEY] = hub or Hub(
        caps=Caps(
            players=settings.max_players,
            tables=settings.max_tables,
            players_per_address=settings.players_per_address,
            guest_tables_per_address=settings.guest_tables_per_address,
            network_factor=settings.network_factor,
            games_per_player=settings.games_per_player,
            analysis_per_player=settings.analysis_per_player,
            registered_share=settings.registered_share,
            banned_words=settings.banned_words,
            bots_rated=settings.bots_rated,
        ),
        away_after=settings.away_after,
        claim_after=settings.claim_after,
    )
    app[clients.POLICY_KEY] = clients.ClientPolicy(
        frozenset(settings.trusted_proxies),
        frozenset(settings.unlimited),
        Grouping(settings.ipv4_prefixes, settings.ipv6_prefixes, settings.network_factor),
        tuple(ipaddress.ip_network(network) for network in settings.metrics_from),
    )
    app[clients.LIMITS_KEY] = clients.request_limits(settings.network_factor)
    app[accesslog.SUMMARIES_KEY] = accesslog.RequestSummaries()
    app[SHARED_ANSWERS_KEY] = SharedAnswers(budget=SendingBudget(settings.public_rate * MEGABYTE))
    app[health.READINESS_KEY] = health.SharedReadiness()
    app[tournament.KEPT_TABLES_KEY] = KeptTournaments()
    app[tournament.KNOWN_KEYS_KEY] = RecentKeys()
    app[tournament.RECORDS_ZIPPING_KEY] = asyncio.Lock()
    app[metrics.METRICS_KEY] = metrics.Metrics(
        app[HUB_KEY], {"/a.kropki": kropki.COMMANDS, "/auth.py": frozenset(auth.HANDLERS)}
    )
    app[metrics.METRICS_KEY].watch_public_budget(app[SHARED_ANSWERS_KEY].budget)
    app[LOGIN_GUARD_KEY] = LoginGuard(
        settings.failed_logins_per_address,
        auth.FAILED_LOGINS_WINDOW,
        settings.failed_logins_per_account,
        settings.failed_login_max_wait,
        settings.network_factor,
    )
    app[auth.REGISTER_LIMITER_KEY] = NetworkLimiter(*auth.REGISTRATIONS, settings.network_factor)
    app[auth.REGISTER_DAY_LIMITER_KEY] = NetworkLimiter(*auth.REGISTRATIONS_A_DAY, settings.network_factor)
    app.cleanup_ctx.append(_store_and_hub)
    app.cleanup_ctx.append(moderation.keep_sanctions)
    if settings.redis_url is not None:
        app.cleanup_ctx.append(_membership)
    app.on_startup.append(_known_to_be_right)  # after the store is opened (the cleanup contexts)
    app.on_shutdown.append(_announce_shutdown)
    for module in (health, kropki, auth, archive, pages, tournament, hosted, metrics, botseeks):
        app.add_routes(module.routes)
    push.add_pushes(app)  # after the hub's announcement of a stop, which its connections send
    bots.setup(app)
    if settings.static_dir is None:
        assets = Assets(BUILT_IN_CLIENT)
        assets.add_routes(app)
        app[PAGES_KEY] = assets
    else:
        _serve_folder(app, settings.static_dir)
    return app


def _serve_folder(app: web.Application, folder: Path) -> None:
    """The operator's web client (the zagram web client) under `/`, after every server route, so that
    `index.html?id=...&opis=...` auto-login links and the client's `rootUrl` reach one process; the
    built-in client is served by server/web/assets.py."""

    async def index(request: web.Request) -> web.StreamResponse:
        page = folder / "index.html"
        if not page.is_file():
            raise web.HTTPNotFound(text="No index.html in the static folder.\n")
        return web.FileResponse(page)

    app.router.add_get("/", index)
    app.router.add_static("/", folder, follow_symlinks=False)
    app.on_response_prepare.append(folder_page_policy)


async def _known_to_be_right(app: web.Application) -> None:
    """The organisers' keys not revoked and the bots' tokens are known to be right from the start, so that
    a flood of made-up ones after a restart does not hold their holders back (server/web/limits.py,
    RecentKeys)."""
    store = app[STORE_KEY]
    for hashed in await store.tournaments.key_hashes():
        app[tournament.KNOWN_KEYS_KEY].add(hashed)
    for hashed in await store.bots.token_hashes():
        app[bots.NAMED_TOKENS_KEY].add(hashed)


async def _store_and_hub(app: web.Application) -> AsyncIterator[None]:
    """Open the store, bring the live tables and sessions back, run the hub; on the way out, write
    everything still queued before disconnecting."""
    hub, settings = app[HUB_KEY], app[SETTINGS_KEY]
    # The server lock comes first: a second server on this database is refused before it writes.
    member = settings.member_name
    store = await Store.open(
        settings.db_url,
        upgrade=settings.migrate,
        serving=Holder.this_process(settings.port),
        member=member,
        id_hash_cost=settings.id_hash_cost,
    )
    app[STORE_KEY] = store
    app[auth.ACCOUNTS_KEY] = store.accounts
    app[archive.GAMES_KEY] = store.games
    app[pages.REPLAYS_KEY] = pages.Replays()
    app[tournament.TOURNAMENTS_KEY] = store.tournaments
    store.writer.on_commit = lambda _jobs, seconds: app[metrics.METRICS_KEY].writes.observe(seconds)
    if isinstance(store.server_lock, AdvisoryLock):
        app[metrics.METRICS_KEY].watch_database_lock(store.server_lock)
    hub.persistence = store.writer
    store.writer.on_storage_change = hub.storage_changed
    journals, next_uid = await store.writer.load_journal()
    hub.restore(journals, next_uid, await store.writer.load_sessions())
    if member is not None:
        hub.reserve_table_numbers(store.reserve_table_numbers, await store.reserve_table_numbers(TABLE_BLOCK))
    workers = app[SETTINGS_KEY].ai_workers
    pool = WorkerPool(workers) if workers else None
    if pool is not None:
        hub.enable_computer(pool, workers)
    hub.start()
    director = None
    # one process for swiss rounds and arena waves, started at the first pairing (a ProcessPoolExecutor
    # starts its workers then)
    pairing = WorkerPool(1, "tournament pairing") if member is None and settings.pairing_process else None
    if member is None:  # a cluster's members would each run every tournament (docs/tournaments.md)
        director = app[DIRECTOR_KEY] = Director(hub, store.hosted, store.tournaments, pairing=pairing)
        await director.start()
    # Timed collections, young and full, when serve tuned the collector (gcschedule).
    collector = asyncio.create_task(gcschedule.timed_collections()) if gcschedule.serving_schedule() else None
    yield
    if collector is not None:
        collector.cancel()
    if director is not None:
        await director.stop()
    hub.close()
    hub.note_sessions()  # the last heartbeat: sessions' time-outs go on from the stop after the restart
    for workers in (pool, pairing):
        if workers is not None:
            workers.shutdown(wait=False, cancel_futures=True)
    await store.close()
    log.info("store closed")


async def _membership(app: web.Application) -> AsyncIterator[None]:
    """A member of a cluster announces itself in Redis once its store is open (docs/cluster.md)."""
    settings = app[SETTINGS_KEY]
    name = settings.member_name
    assert settings.redis_url is not None and name is not None
    from server.cluster.hourly import HourlyLink  # redis-py: the `cluster` extra, needed only here
    from server.cluster.lobby import LobbyLink
    from server.cluster.membership import Membership
    from server.cluster.nicks import NickClaims
    from server.cluster.sessions import SessionMover
    from server.cluster.takeover import TakeOver
    from server.store.moving import SessionTaker

    hub = app[HUB_KEY]
    info: dict[str, object] = {"host": socket.gethostname(), "port": settings.port, "pid": os.getpid()}
    membership = app[MEMBERSHIP_KEY] = Membership(settings.redis_url, name, info)
    lobby = LobbyLink(settings.redis_url, name, hub, settings.cluster_secrets)
    hourly = HourlyLink(settings.redis_url, name, hub.ctx.limits.hourly, settings.cluster_secrets)
    app[metrics.METRICS_KEY].watch_cluster(lobby.dropped, hourly.dropped)
    nicks = app[NICKS_KEY] = NickClaims(settings.redis_url, name, hub.unique_nick_keys, hub.unique_holder)
    store = app[STORE_KEY].writer

    def alive() -> tuple[str, ...] | None:
        """The live members; None while no member can be told dead (Membership.judged_members)."""
        return membership.judged_members

    taker = SessionTaker(store.sessions, store.member)
    mover = app[MOVER_KEY] = SessionMover(
        name, hub, hub.persistence.id_hmac, store.session_of, taker.take, alive, nicks
    )
    lobby.sessions = mover
    mover.send = lobby.send_to
    take_over = TakeOver(store.take_orphans, hub.take_tables, alive)

    def members_changed(members: tuple[str, ...]) -> None:
        judged = membership.judged_members  # None: a member missing may only not be announced yet
        if judged is not None:
            lobby.members_changed(judged)
            hourly.members_changed(judged)
        take_over.members_changed(members)

    membership.on_members = members_changed

    def reconnected(connected: bool) -> None:
        lobby.reconnected(connected)
        nicks.reconnected(connected)
        hourly.reconnected(connected)

    membership.on_change = reconnected
    await membership.start()
    await nicks.start()
    hub.watch_nicks(nicks.nick_changed)
    await hourly.start()  # the last hour's counts, before the member serves
    await lobby.start()
    take_over.start()
    log.info("cluster member %s", Fields(member=name, number=app[STORE_KEY].writer.member))
    yield
    await take_over.stop()
    await lobby.stop()
    await hourly.stop()
    hub.watch_nicks(None)
    await nicks.stop()
    await membership.stop()


async def _announce_shutdown(app: web.Application) -> None:
    app[HUB_KEY].announce_shutdown()
