"""The ``kropki-server`` command: ``serve`` runs the server, ``replay`` checks game records; the admin's
commands on the database (``migrate``, ``user``, ``tournament-key``) are server/admin.py."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from collections.abc import Sequence

from server import __version__, admin, botplayer, logs
from server.config import (
    ConfigError,
    Settings,
    check_cluster,
    check_database_url,
    sqlite_data_dir,
    sqlite_file,
)
from server.serveflags import add_serve_flags, resolve_log_level, resolve_settings

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: `serve` (its flags in server/serveflags.py), `replay`, the bot player's and the
    admin's commands."""
    parser = argparse.ArgumentParser(
        prog="kropki-server",
        description="A Kropki (dots game) server speaking the zagram.org protocol.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the HTTP server", description="Run the HTTP server.")
    add_serve_flags(serve)

    replay = commands.add_parser(
        "replay",
        help="replay SGF game records through the engine and report their results",
        description="Replay SGF game records through the engine and report their results.",
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="SGF file")
    botplayer.add_parser(commands.add_parser)
    admin.add_parsers(commands.add_parser)
    return parser


def _serve(settings: Settings, log_level: str) -> int:
    """Configure logging and run the server until it is told to stop (SIGINT or SIGTERM)."""
    # Imported here so that --help, --version and replay do not pay for loading aiohttp.
    from server.app import REQUESTS_AT_STOP_SECONDS, create_app
    from server.store.database import SchemaError
    from server.store.outage import described, holds_storage_error, safe_trace
    from server.store.serverlock import ServerLockError
    from server.web import connections
    from server.web.accesslog import RedactingAccessLogger, install_malformed_request_filter

    refusals: tuple[type[Exception], ...] = (SchemaError, ServerLockError)
    if settings.redis_url is not None:
        from server.cluster.membership import MembershipError

        refusals += (MembershipError,)
    logs.configure(log_level)
    install_malformed_request_filter()
    tune_garbage_collector()
    try:
        # The app opens the store before binding the port: the server lock, then --migrate, then the
        # schema check, so a second server or an outdated schema stops it before it writes or listens.
        connections.run_app(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            max_connections=settings.max_connections,
            event_loop=settings.event_loop,
            access_log_class=RedactingAccessLogger,
            shutdown_timeout=REQUESTS_AT_STOP_SECONDS,
            # aiohttp calls this with its banner once the socket is bound; log one line instead of printing.
            print=lambda _banner: log.info(
                "listening on http://%s:%d %s", settings.host, settings.port, logs.Fields(version=__version__)
            ),
        )
    except refusals as refused:
        print(f"kropki-server: error: {refused}", file=sys.stderr)
        return 1
    except Exception as failure:
        why = _why_it_cannot_start(failure, settings)
        if why is None and holds_storage_error(failure):  # a bug: its trace, without the database's text
            print(safe_trace(failure), file=sys.stderr, end="")
            why = f"the database refused a statement: {described(failure)}"
        if why is None:
            raise
        print(f"kropki-server: error: {why}", file=sys.stderr)
        return 1
    return 0


def _why_it_cannot_start(failure: Exception, settings: Settings) -> str | None:
    """One line saying what to change, for what an operator gets wrong at a start (the port, the
    database); None for anything else, whose traceback is then the useful thing."""
    from sqlalchemy.engine import make_url

    from server.store.outage import unavailable

    if isinstance(failure, OSError) and failure.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
        taken = (
            "is in use (another server listens there)" if failure.errno == errno.EADDRINUSE else "is not here"
        )
        return (
            f"cannot listen on {settings.host}:{settings.port}: the address {taken}; "
            "choose another with --host/--port (KROPKI_HOST/KROPKI_PORT) or stop the other server"
        )
    reason = unavailable(failure)
    if reason is None:
        return None
    url = make_url(settings.db_url).render_as_string(hide_password=True)
    return f"cannot use the database at {url} ({reason}): check --db or KROPKI_DB, and that it runs"


def tune_garbage_collector() -> None:
    """Fewer, shorter collections for a long-running server: see server/gcschedule.py."""
    from server import gcschedule

    gcschedule.tune_for_serving()


def _replay(files: list[str]) -> int:
    """Delegate to the engine's replay tool, which owns SGF reading and result checking."""
    from server.engine.replay import main as replay_main

    return replay_main(files, out=sys.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kropki-server`` console script and of ``python -m server``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        try:
            settings = resolve_settings(args, os.environ)
            log_level = resolve_log_level(args, os.environ)
            check_database_url(settings.db_url)
            check_cluster(settings)
            data_dir = sqlite_data_dir(settings.db_url)
            if settings.static_dir is not None and not settings.static_dir.is_dir():
                raise ConfigError(f"static folder {str(settings.static_dir)!r} is not a directory")
        except ConfigError as exc:
            parser.exit(2, f"kropki-server: error: {exc}\n")
        if data_dir is not None:
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                parser.exit(1, f"kropki-server: error: cannot create the database directory: {exc}\n")
        return _serve(settings, log_level)
    if args.command == "replay":
        return _replay(args.files)
    if args.command == "bot-play":
        return botplayer.command(args, os.environ)
    if args.command in admin.COMMANDS:
        try:
            settings = resolve_settings(args, os.environ)
            check_database_url(settings.db_url)
            database = sqlite_file(settings.db_url)
        except ConfigError as exc:
            parser.exit(2, f"kropki-server: error: {exc}\n")
        return admin.run(args, settings.db_url, database, settings.id_hash_cost)
    parser.print_help()
    return 2
