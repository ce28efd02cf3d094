"""The ``kropki-server`` command: ``serve`` runs the server, ``replay`` checks game records."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Mapping, Sequence

from server import __version__
from server.config import ENV_DB, ENV_HOST, ENV_PORT, ConfigError, Settings, parse_port, sqlite_data_dir

ENV_LOG_LEVEL = "KROPKI_LOG_LEVEL"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"

log = logging.getLogger(__name__)


def _port_flag(value: str) -> int:
    """argparse type for ``--port``: a bad value becomes a usage error (exit 2), not a traceback."""
    try:
        return parse_port(value)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _log_level(value: str) -> str:
    """Accept level names in any case, as operators type them."""
    level = value.upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"log level must be one of {', '.join(LOG_LEVELS)}, got {value!r}")
    return level


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; flags default to ``None`` so that unset flags fall back to the environment."""
    parser = argparse.ArgumentParser(
        prog="kropki-server",
        description="A Kropki (dots game) server speaking the zagram.org protocol.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the HTTP server", description="Run the HTTP server.")
    serve.add_argument("--host", help=f"address to bind (env {ENV_HOST}, default 127.0.0.1)")
    serve.add_argument("--port", type=_port_flag, help=f"TCP port (env {ENV_PORT}, default 8080)")
    serve.add_argument(
        "--db",
        metavar="URL",
        help=f"SQLAlchemy database URL (env {ENV_DB}, default sqlite+aiosqlite:///./data/kropki.sqlite3)",
    )
    serve.add_argument(
        "--log-level",
        type=_log_level,
        metavar="LEVEL",
        help=f"{', '.join(LOG_LEVELS)} (env {ENV_LOG_LEVEL}, default INFO)",
    )

    replay = commands.add_parser(
        "replay",
        help="replay SGF game records through the engine and report their results",
        description="Replay SGF game records through the engine and report their results.",
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="SGF file")
    return parser


def resolve_settings(args: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
    """Settings for ``serve``: a flag beats its environment variable, which beats the built-in default."""
    base = Settings.from_env(environ)
    return Settings(
        host=args.host if args.host is not None else base.host,
        port=args.port if args.port is not None else base.port,
        db_url=args.db if args.db is not None else base.db_url,
    )


def resolve_log_level(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    """The log level for ``serve``, resolved in the same order as the other settings."""
    if args.log_level is not None:
        return args.log_level
    value = environ.get(ENV_LOG_LEVEL)
    if not value:
        return "INFO"
    try:
        return _log_level(value)
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"{ENV_LOG_LEVEL}: {exc}") from None


def _serve(settings: Settings, log_level: str) -> None:
    """Configure logging and run the server until it is told to stop (SIGINT or SIGTERM)."""
    # Imported here so that --help, --version and replay do not pay for loading aiohttp.
    from aiohttp import web

    from server.app import create_app
    from server.web.accesslog import RedactingAccessLogger, install_malformed_request_filter

    logging.basicConfig(level=log_level, format=LOG_FORMAT)
    install_malformed_request_filter()
    tune_garbage_collector()
    web.run_app(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        access_log_class=RedactingAccessLogger,
        # aiohttp calls this with its banner once the socket is bound; log one line instead of printing.
        print=lambda _banner: log.info(
            "kropki-server %s listening on http://%s:%d", __version__, settings.host, settings.port
        ),
    )


def tune_garbage_collector() -> None:
    """Fewer, cheaper collections for a long-running server.

    What is loaded at start-up (modules, the app) is frozen out of every later collection, and
    the youngest generation waits for 10,000 new objects instead of 700: a request makes and drops
    hundreds, and every collection of the older generations pauses every player's reply.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


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
            data_dir = sqlite_data_dir(settings.db_url)
        except ConfigError as exc:
            parser.exit(2, f"kropki-server: error: {exc}\n")
        if data_dir is not None:
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                parser.exit(1, f"kropki-server: error: cannot create the database directory: {exc}\n")
        _serve(settings, log_level)
        return 0
    if args.command == "replay":
        return _replay(args.files)
    parser.print_help()
    return 2
