"""What `serve` accepts: its flags, and how they become Settings (a flag beats its environment variable,
which beats the default, server/config.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from server import admin
from server.config import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_PUBLIC_RATE,
    ENV_AI_WORKERS,
    ENV_ANALYSIS_PER_PLAYER,
    ENV_AWAY_AFTER,
    ENV_BANNED_WORDS,
    ENV_BOTS_RATED,
    ENV_CLAIM_AFTER,
    ENV_CLUSTER_SECRET,
    ENV_CLUSTER_SECRET_FILE,
    ENV_EVENT_LOOP,
    ENV_FAILED_LOGIN_MAX_WAIT,
    ENV_FAILED_LOGINS_PER_ACCOUNT,
    ENV_FAILED_LOGINS_PER_ADDRESS,
    ENV_GAMES_PER_PLAYER,
    ENV_GUEST_TABLES_PER_ADDRESS,
    ENV_HOST,
    ENV_ID_HASH_COST,
    ENV_IPV4_PREFIXES,
    ENV_IPV6_PREFIXES,
    ENV_MAX_CONNECTIONS,
    ENV_MEMBER,
    ENV_METRICS_FROM,
    ENV_NETWORK_FACTOR,
    ENV_PLAYERS_PER_ADDRESS,
    ENV_PORT,
    ENV_PUBLIC_RATE,
    ENV_REDIS_URL,
    ENV_REGISTERED_SHARE,
    ENV_STATIC,
    ENV_TRUSTED_PROXIES,
    ENV_UNLIMITED,
    MAX_CLAIM_AFTER,
    MAX_COUNT,
    MAX_NETWORK_FACTOR,
    MAX_WAIT,
    ConfigError,
    Settings,
    absolute_db_url,
    parse_address,
    parse_ai_workers,
    parse_away_after,
    parse_event_loop,
    parse_id_hash_cost,
    parse_member,
    parse_network,
    parse_port,
    parse_prefixes,
    parse_redis_url,
    parse_share,
    parse_whole,
    read_banned_words,
    read_cluster_secret_file,
)

T = TypeVar("T")
ENV_LOG_LEVEL = "KROPKI_LOG_LEVEL"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _checked(parse: Callable[[str], T]) -> Callable[[str], T]:
    """argparse type for a flag read by `parse`: a bad value becomes a usage error (exit 2), not a
    traceback."""

    def parse_flag(value: str) -> T:
        try:
            return parse(value)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse_flag


def _count_flag(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 1000000, got {value!r}")
    return int(value)


def _whole_flag(flag: str, highest: int) -> Callable[[str], int]:
    return _checked(lambda value: parse_whole(value, flag, highest))


def _log_level(value: str) -> str:
    """Accept level names in any case, as operators type them."""
    level = value.upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"log level must be one of {', '.join(LOG_LEVELS)}, got {value!r}")
    return level


def add_serve_flags(serve: argparse.ArgumentParser) -> None:
    """`serve`'s flags; each defaults to None, so that an unset flag falls back to the environment."""
    serve.add_argument("--host", help=f"address to bind (env {ENV_HOST}, default 127.0.0.1)")
    serve.add_argument("--port", type=_checked(parse_port), help=f"TCP port (env {ENV_PORT}, default 8080)")
    admin.database_flag(serve)
    serve.add_argument(
        "--migrate", action="store_true", help="bring the database schema up to date before serving"
    )
    serve.add_argument(
        "--static",
        metavar="DIR",
        type=Path,
        help=f"serve this folder's files under / (e.g. the zagram web client; env {ENV_STATIC})",
    )
    serve.add_argument(
        "--trusted-proxy",
        metavar="ADDR",
        action="append",
        type=_checked(parse_address),
        help="a reverse proxy whose X-Forwarded-For header names the client (repeatable; "
        f"env {ENV_TRUSTED_PROXIES}, comma-separated; default none)",
    )
    serve.add_argument(
        "--metrics-from",
        metavar="CIDR",
        action="append",
        type=_checked(parse_network),
        help="a network (or an address) that may read /metrics besides loopback and the trusted proxies "
        f"(repeatable; env {ENV_METRICS_FROM}, comma-separated; 0.0.0.0/0 and ::/0 open it to all)",
    )
    serve.add_argument(
        "--unlimited",
        metavar="ADDR",
        action="append",
        type=_checked(parse_address),
        help="a client address exempt from the per-address limits, e.g. for load tests "
        f"(repeatable; env {ENV_UNLIMITED})",
    )
    serve.add_argument(
        "--max-players", type=_count_flag, metavar="N", help="players online at most (default 5000)"
    )
    serve.add_argument(
        "--max-tables", type=_count_flag, metavar="N", help="game tables at most (default 2500)"
    )
    serve.add_argument(
        "--max-connections",
        type=_whole_flag("--max-connections", MAX_COUNT),
        metavar="N",
        help="client connections open at once, at most; fewer when the open-file limit is lower "
        f"(env {ENV_MAX_CONNECTIONS}, default {DEFAULT_MAX_CONNECTIONS})",
    )
    serve.add_argument(
        "--public-rate",
        type=_whole_flag("--public-rate", MAX_COUNT),
        metavar="MB",
        help="megabytes a second the public answers (tournaments' tables, standings, records) may take "
        f"together; beyond, they wait their turn (env {ENV_PUBLIC_RATE}, default {DEFAULT_PUBLIC_RATE})",
    )
    serve.add_argument(
        "--event-loop",
        type=_checked(parse_event_loop),
        metavar="LOOP",
        help=f"auto, uvloop or asyncio: auto is uvloop where it is installed (pip install '.[fast]') "
        f"(env {ENV_EVENT_LOOP}, default auto)",
    )
    serve.add_argument(
        "--players-per-address",
        type=_whole_flag("--players-per-address", MAX_COUNT),
        metavar="N",
        help=f"players logged in from one address at most (env {ENV_PLAYERS_PER_ADDRESS}, default 10)",
    )
    serve.add_argument(
        "--guest-tables-per-address",
        type=_whole_flag("--guest-tables-per-address", MAX_COUNT),
        metavar="N",
        help="game tables with a seat of a guest from one address, at most "
        f"(env {ENV_GUEST_TABLES_PER_ADDRESS}, default 10)",
    )
    serve.add_argument(
        "--ipv4-prefixes",
        type=_checked(lambda value: parse_prefixes(value, 4, "--ipv4-prefixes")),
        metavar="HOST,NETWORK",
        help="what the per-address limits count as one address and, looser, as one network "
        f"(env {ENV_IPV4_PREFIXES}, default 32,24)",
    )
    serve.add_argument(
        "--ipv6-prefixes",
        type=_checked(lambda value: parse_prefixes(value, 6, "--ipv6-prefixes")),
        metavar="HOST,NETWORK",
        help=f"the same for IPv6 addresses (env {ENV_IPV6_PREFIXES}, default 64,48)",
    )
    serve.add_argument(
        "--network-factor",
        type=_whole_flag("--network-factor", MAX_NETWORK_FACTOR),
        metavar="N",
        help="a network may hold N times what one address may under every per-address limit "
        f"(env {ENV_NETWORK_FACTOR}, default 4)",
    )
    serve.add_argument(
        "--games-per-player",
        type=_whole_flag("--games-per-player", MAX_COUNT),
        metavar="N",
        help=f"unfinished games one player plays at once (env {ENV_GAMES_PER_PLAYER}, default 5)",
    )
    serve.add_argument(
        "--analysis-per-player",
        type=_whole_flag("--analysis-per-player", MAX_COUNT),
        metavar="N",
        help=f"analysis tables one player has open (env {ENV_ANALYSIS_PER_PLAYER}, default 3)",
    )
    serve.add_argument(
        "--registered-share",
        type=_checked(lambda value: parse_share(value, "--registered-share")),
        metavar="PERCENT",
        help="share of the player and table slots kept for registered players "
        f"(env {ENV_REGISTERED_SHARE}, default 20)",
    )
    serve.add_argument(
        "--banned-words",
        metavar="PATH",
        help="a UTF-8 file of words and phrases, one a line, that no chat line may hold; read at start "
        f'(env {ENV_BANNED_WORDS}; docs/moderation.md, "Spam")',
    )
    serve.add_argument(
        "--bots-rated",
        action="store_true",
        default=None,
        help=f"let bots play rated games against people (env {ENV_BOTS_RATED}=1; docs/bots.md)",
    )
    serve.add_argument(
        "--ai-workers",
        type=_checked(parse_ai_workers),
        metavar="N",
        help=f"processes for the AI players' moves; 0 = no AI players (env {ENV_AI_WORKERS}, default 1)",
    )
    serve.add_argument(
        "--failed-logins-per-address",
        type=_whole_flag("--failed-logins-per-address", MAX_COUNT),
        metavar="N",
        help="failed logins an address may make in 15 minutes "
        f"(env {ENV_FAILED_LOGINS_PER_ADDRESS}, default 10)",
    )
    serve.add_argument(
        "--failed-logins-per-account",
        type=_whole_flag("--failed-logins-per-account", MAX_COUNT),
        metavar="N",
        help="failed logins to one account before each further try must wait "
        f"(env {ENV_FAILED_LOGINS_PER_ACCOUNT}, default 5)",
    )
    serve.add_argument(
        "--failed-login-max-wait",
        type=_whole_flag("--failed-login-max-wait", MAX_WAIT),
        metavar="SECONDS",
        help=f"the longest wait between tries of one account (env {ENV_FAILED_LOGIN_MAX_WAIT}, default 900)",
    )
    serve.add_argument(
        "--id-hash-cost",
        type=_checked(parse_id_hash_cost),
        metavar="LOG2_N",
        help="what the hash of a registered player's id costs: scrypt's N is 2 to this power; each step "
        "doubles a login's time and memory, and an id hashed at another cost is hashed again at its "
        f'next login (env {ENV_ID_HASH_COST}, default 14, from 10 to 17; docs/operations.md, "The cost '
        "of an id's hash\")",
    )
    serve.add_argument(
        "--away-after",
        type=_checked(parse_away_after),
        metavar="SECONDS",
        help="seconds without a request before a player is away from their games and their opponent is "
        f'told (env {ENV_AWAY_AFTER}, default 40, at least 31; docs/protocol.md, "An opponent who left")',
    )
    serve.add_argument(
        "--claim-after",
        type=_whole_flag("--claim-after", MAX_CLAIM_AFTER),
        metavar="SECONDS",
        help=f"seconds from that notice until the opponent may claim the win or call the game off "
        f"(env {ENV_CLAIM_AFTER}, default 60)",
    )
    serve.add_argument(
        "--redis-url",
        type=_checked(parse_redis_url),
        metavar="URL",
        help=f"run as a member of a cluster over this Redis, e.g. redis://HOST:6379/0, sharing a PostgreSQL "
        f"--db with the other members (docs/cluster.md; env {ENV_REDIS_URL})",
    )
    serve.add_argument(
        "--member",
        type=_checked(parse_member),
        metavar="NAME",
        help=f"this member's name in the cluster (env {ENV_MEMBER}, default HOST:PORT)",
    )
    # No --cluster-secret: a secret on a command line is shown by `ps` to every user of the machine.
    serve.add_argument(
        "--cluster-secret-file",
        metavar="PATH",
        help="a file holding the secret every member of the cluster signs its messages with, at least 32 "
        "characters (`openssl rand -hex 32`); a second line is also accepted, while the secret is changed "
        f"(env {ENV_CLUSTER_SECRET_FILE}, or the secret itself in {ENV_CLUSTER_SECRET}; docs/cluster.md)",
    )
    serve.add_argument(
        "--log-level",
        type=_log_level,
        metavar="LEVEL",
        help=f"{', '.join(LOG_LEVELS)} (env {ENV_LOG_LEVEL}, default INFO)",
    )


def resolve_settings(args: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
    """Settings for ``serve``: a flag beats its environment variable, which beats the built-in default."""
    base = Settings.from_env(environ)
    return Settings(
        host=getattr(args, "host", None) or base.host,
        port=getattr(args, "port", None) or base.port,
        db_url=absolute_db_url(args.db if args.db is not None else base.db_url),
        migrate=getattr(args, "migrate", False),
        static_dir=getattr(args, "static", None) or base.static_dir,
        trusted_proxies=tuple(getattr(args, "trusted_proxy", None) or base.trusted_proxies),
        unlimited=tuple(getattr(args, "unlimited", None) or base.unlimited),
        metrics_from=tuple(getattr(args, "metrics_from", None) or base.metrics_from),
        max_players=getattr(args, "max_players", None) or base.max_players,
        max_tables=getattr(args, "max_tables", None) or base.max_tables,
        players_per_address=getattr(args, "players_per_address", None) or base.players_per_address,
        guest_tables_per_address=getattr(args, "guest_tables_per_address", None)
        or base.guest_tables_per_address,
        ipv4_prefixes=getattr(args, "ipv4_prefixes", None) or base.ipv4_prefixes,
        ipv6_prefixes=getattr(args, "ipv6_prefixes", None) or base.ipv6_prefixes,
        network_factor=getattr(args, "network_factor", None) or base.network_factor,
        games_per_player=getattr(args, "games_per_player", None) or base.games_per_player,
        analysis_per_player=getattr(args, "analysis_per_player", None) or base.analysis_per_player,
        registered_share=base.registered_share
        if getattr(args, "registered_share", None) is None
        else args.registered_share,
        ai_workers=base.ai_workers if getattr(args, "ai_workers", None) is None else args.ai_workers,
        failed_logins_per_address=getattr(args, "failed_logins_per_address", None)
        or base.failed_logins_per_address,
        failed_logins_per_account=getattr(args, "failed_logins_per_account", None)
        or base.failed_logins_per_account,
        failed_login_max_wait=getattr(args, "failed_login_max_wait", None) or base.failed_login_max_wait,
        id_hash_cost=getattr(args, "id_hash_cost", None) or base.id_hash_cost,
        max_connections=getattr(args, "max_connections", None) or base.max_connections,
        public_rate=getattr(args, "public_rate", None) or base.public_rate,
        away_after=getattr(args, "away_after", None) or base.away_after,
        claim_after=getattr(args, "claim_after", None) or base.claim_after,
        banned_words=read_banned_words(args.banned_words)
        if getattr(args, "banned_words", None)
        else base.banned_words,
        bots_rated=getattr(args, "bots_rated", None) or base.bots_rated,
        event_loop=getattr(args, "event_loop", None) or base.event_loop,
        redis_url=getattr(args, "redis_url", None) or base.redis_url,
        member=getattr(args, "member", None) or base.member,
        cluster_secrets=read_cluster_secret_file(args.cluster_secret_file)
        if getattr(args, "cluster_secret_file", None)
        else base.cluster_secrets,
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
