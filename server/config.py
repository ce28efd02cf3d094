"""Runtime settings, resolved from flags, then ``KROPKI_*`` environment variables, then safe defaults."""

from __future__ import annotations

import importlib.util
import ipaddress
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from server.store.idhash import DEFAULT_COST, MAX_COST, MIN_COST

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_DB_URL = "sqlite+aiosqlite:///./data/kropki.sqlite3"

ENV_HOST = "KROPKI_HOST"
ENV_PORT = "KROPKI_PORT"
ENV_DB = "KROPKI_DB"
ENV_STATIC = "KROPKI_STATIC"
ENV_TRUSTED_PROXIES = "KROPKI_TRUSTED_PROXIES"
ENV_UNLIMITED = "KROPKI_UNLIMITED"
ENV_METRICS_FROM = "KROPKI_METRICS_FROM"
ENV_AI_WORKERS = "KROPKI_AI_WORKERS"
DEFAULT_AI_WORKERS = 1
MAX_AI_WORKERS = 64
ENV_FAILED_LOGINS_PER_ADDRESS = "KROPKI_FAILED_LOGINS_PER_ADDRESS"
ENV_FAILED_LOGINS_PER_ACCOUNT = "KROPKI_FAILED_LOGINS_PER_ACCOUNT"
ENV_FAILED_LOGIN_MAX_WAIT = "KROPKI_FAILED_LOGIN_MAX_WAIT"
DEFAULT_FAILED_LOGINS_PER_ADDRESS = 10  # in 15 minutes
DEFAULT_FAILED_LOGINS_PER_ACCOUNT = 5  # before each further try waits, 1 s then doubling
DEFAULT_FAILED_LOGIN_MAX_WAIT = 900  # seconds: the longest wait between tries of one account
ENV_MAX_CONNECTIONS = "KROPKI_MAX_CONNECTIONS"
# At most this many client connections, and fewer when the open-file limit is lower (server/web/connections.py
# fits the cap below it); deploy/kropki-server.service's LimitNOFILE leaves room above it.
DEFAULT_MAX_CONNECTIONS = 10_000
ENV_PUBLIC_RATE = "KROPKI_PUBLIC_RATE"
DEFAULT_PUBLIC_RATE = 64  # megabytes a second for the public answers together (server/web/budget.py)
MAX_COUNT = 1_000_000
ENV_PLAYERS_PER_ADDRESS = "KROPKI_PLAYERS_PER_ADDRESS"
ENV_GAMES_PER_PLAYER = "KROPKI_GAMES_PER_PLAYER"
ENV_ANALYSIS_PER_PLAYER = "KROPKI_ANALYSIS_PER_PLAYER"
ENV_REGISTERED_SHARE = "KROPKI_REGISTERED_SHARE"
ENV_GUEST_TABLES_PER_ADDRESS = "KROPKI_GUEST_TABLES_PER_ADDRESS"
ENV_IPV4_PREFIXES = "KROPKI_IPV4_PREFIXES"
ENV_IPV6_PREFIXES = "KROPKI_IPV6_PREFIXES"
ENV_NETWORK_FACTOR = "KROPKI_NETWORK_FACTOR"
DEFAULT_PLAYERS_PER_ADDRESS = 10
DEFAULT_GUEST_TABLES_PER_ADDRESS = 10
DEFAULT_IPV4_PREFIXES = (32, 24)  # host, network (server/web/networks.py)
DEFAULT_IPV6_PREFIXES = (64, 48)
DEFAULT_NETWORK_FACTOR = 4
MAX_NETWORK_FACTOR = 1_000
DEFAULT_GAMES_PER_PLAYER = 5
DEFAULT_ANALYSIS_PER_PLAYER = 3
DEFAULT_REGISTERED_SHARE = 20
MAX_REGISTERED_SHARE = 90
MAX_WAIT = 24 * 3600
ENV_ID_HASH_COST = "KROPKI_ID_HASH_COST"
ENV_AWAY_AFTER = "KROPKI_AWAY_AFTER"
ENV_CLAIM_AFTER = "KROPKI_CLAIM_AFTER"
DEFAULT_AWAY_AFTER = 40  # seconds without a request before a player is away from their games
MIN_AWAY_AFTER = 31  # above the longest long poll (30 s), which keeps a client that is there silent
MAX_AWAY_AFTER = 600
DEFAULT_CLAIM_AFTER = 60  # seconds from the notice until the opponent may claim the game
MAX_CLAIM_AFTER = 3600
ENV_EVENT_LOOP = "KROPKI_EVENT_LOOP"
ENV_BANNED_WORDS = "KROPKI_BANNED_WORDS"
ENV_BOTS_RATED = "KROPKI_BOTS_RATED"
MAX_BANNED_WORD = 100  # characters in one entry of the banned words' file
ENV_REDIS_URL = "KROPKI_REDIS_URL"
ENV_MEMBER = "KROPKI_MEMBER"
ENV_CLUSTER_SECRET = "KROPKI_CLUSTER_SECRET"
ENV_CLUSTER_SECRET_FILE = "KROPKI_CLUSTER_SECRET_FILE"
# A secret the members sign their messages with (docs/cluster.md, "Who may speak"): long enough that
# nobody guesses it; `openssl rand -hex 32` makes 64 characters. Two during a rotation: the first signs.
MIN_SECRET_LENGTH = 32
MAX_SECRETS = 2
MAKE_A_SECRET = "make one with `openssl rand -hex 32`"
REDIS_SCHEMES = ("redis", "rediss", "unix")
TLS_FILES = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile")  # what a rediss:// URL may name (redis-py)
MEMBER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}")  # a host and port fit: kropki-2.example:8080
# auto: uvloop when it is installed (pip install '.[fast]'), else asyncio's own loop
EVENT_LOOPS = ("auto", "uvloop", "asyncio")


class ConfigError(ValueError):
    """A setting has a value the server cannot start with; the message says which and why."""


def parse_port(value: str) -> int:
    """Turn ``value`` into a TCP port or raise ``ConfigError`` saying what a port must be."""
    try:
        port = int(value)
    except ValueError:
        raise ConfigError(f"port must be an integer from 1 to 65535, got {value!r}") from None
    if not 1 <= port <= 65535:
        raise ConfigError(f"port must be an integer from 1 to 65535, got {value!r}")
    return port


@dataclass(frozen=True)
class Settings:
    """Everything the app factory needs to know about its environment; immutable once the server starts."""

    host: str
    port: int
    db_url: str
    migrate: bool = False  # bring the database schema up to date at start instead of refusing it
    static_dir: Path | None = None  # a folder served as static files (e.g. the zagram web client)
    trusted_proxies: tuple[str, ...] = ()  # peers whose X-Forwarded-For names the client
    unlimited: tuple[str, ...] = ()  # client addresses exempt from the per-request limits
    metrics_from: tuple[str, ...] = ()  # networks that may read /metrics besides loopback and the proxies
    max_players: int = 5_000
    max_tables: int = 2_500
    players_per_address: int = DEFAULT_PLAYERS_PER_ADDRESS
    guest_tables_per_address: int = DEFAULT_GUEST_TABLES_PER_ADDRESS
    ipv4_prefixes: tuple[int, int] = DEFAULT_IPV4_PREFIXES  # an address's host and network
    ipv6_prefixes: tuple[int, int] = DEFAULT_IPV6_PREFIXES
    network_factor: int = DEFAULT_NETWORK_FACTOR  # a network may hold this many times what a host may
    games_per_player: int = DEFAULT_GAMES_PER_PLAYER
    analysis_per_player: int = DEFAULT_ANALYSIS_PER_PLAYER
    registered_share: int = DEFAULT_REGISTERED_SHARE  # per cent of player and table slots
    # words and phrases a chat line may not hold, read from --banned-words at start (docs/moderation.md)
    banned_words: tuple[str, ...] = field(default=(), repr=False)
    bots_rated: bool = False  # a bot may play a rated game against a person (docs/bots.md)
    ai_workers: int = DEFAULT_AI_WORKERS  # processes searching the AI players' moves; 0 = no AI players
    # swiss rounds and arena waves paired in a worker process of their own (the tests pair on a thread)
    pairing_process: bool = True
    failed_logins_per_address: int = DEFAULT_FAILED_LOGINS_PER_ADDRESS
    failed_logins_per_account: int = DEFAULT_FAILED_LOGINS_PER_ACCOUNT
    failed_login_max_wait: int = DEFAULT_FAILED_LOGIN_MAX_WAIT
    id_hash_cost: int = DEFAULT_COST  # log2 of scrypt's N for new hashes of registered players' ids
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    public_rate: int = DEFAULT_PUBLIC_RATE
    # a player who left a game: away after so many seconds without a request, and claimable after so
    # many more (server/hub/absences.py)
    away_after: int = DEFAULT_AWAY_AFTER
    claim_after: int = DEFAULT_CLAIM_AFTER
    event_loop: str = "auto"
    redis_url: str | None = None  # a member of a cluster over this Redis (docs/cluster.md); None: alone
    member: str | None = None  # the member's name in the cluster; None: its host and port
    # what the members sign their messages with: the first signs, any is accepted (never in a repr)
    cluster_secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def member_name(self) -> str | None:
        """The name this server has in its cluster, or None when it runs alone."""
        if self.redis_url is None:
            return None
        return self.member or f"{socket.gethostname()}:{self.port}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Settings from ``KROPKI_HOST``/``KROPKI_PORT``/``KROPKI_DB``, with defaults for anything unset."""
        port = DEFAULT_PORT
        if environ.get(ENV_PORT):
            try:
                port = parse_port(environ[ENV_PORT])
            except ConfigError as exc:
                raise ConfigError(f"{ENV_PORT}: {exc}") from None
        return cls(
            host=environ.get(ENV_HOST) or DEFAULT_HOST,
            port=port,
            db_url=environ.get(ENV_DB) or DEFAULT_DB_URL,
            static_dir=Path(environ[ENV_STATIC]) if environ.get(ENV_STATIC) else None,
            trusted_proxies=_addresses(environ.get(ENV_TRUSTED_PROXIES, ""), ENV_TRUSTED_PROXIES),
            unlimited=_addresses(environ.get(ENV_UNLIMITED, ""), ENV_UNLIMITED),
            metrics_from=_networks(environ.get(ENV_METRICS_FROM, ""), ENV_METRICS_FROM),
            ai_workers=parse_ai_workers(environ[ENV_AI_WORKERS], ENV_AI_WORKERS)
            if environ.get(ENV_AI_WORKERS)
            else DEFAULT_AI_WORKERS,
            failed_logins_per_address=_whole(
                environ, ENV_FAILED_LOGINS_PER_ADDRESS, DEFAULT_FAILED_LOGINS_PER_ADDRESS, MAX_COUNT
            ),
            failed_logins_per_account=_whole(
                environ, ENV_FAILED_LOGINS_PER_ACCOUNT, DEFAULT_FAILED_LOGINS_PER_ACCOUNT, MAX_COUNT
            ),
            failed_login_max_wait=_whole(
                environ, ENV_FAILED_LOGIN_MAX_WAIT, DEFAULT_FAILED_LOGIN_MAX_WAIT, MAX_WAIT
            ),
            players_per_address=_whole(
                environ, ENV_PLAYERS_PER_ADDRESS, DEFAULT_PLAYERS_PER_ADDRESS, MAX_COUNT
            ),
            guest_tables_per_address=_whole(
                environ, ENV_GUEST_TABLES_PER_ADDRESS, DEFAULT_GUEST_TABLES_PER_ADDRESS, MAX_COUNT
            ),
            ipv4_prefixes=parse_prefixes(environ[ENV_IPV4_PREFIXES], 4, ENV_IPV4_PREFIXES)
            if environ.get(ENV_IPV4_PREFIXES)
            else DEFAULT_IPV4_PREFIXES,
            ipv6_prefixes=parse_prefixes(environ[ENV_IPV6_PREFIXES], 6, ENV_IPV6_PREFIXES)
            if environ.get(ENV_IPV6_PREFIXES)
            else DEFAULT_IPV6_PREFIXES,
            network_factor=_whole(environ, ENV_NETWORK_FACTOR, DEFAULT_NETWORK_FACTOR, MAX_NETWORK_FACTOR),
            games_per_player=_whole(environ, ENV_GAMES_PER_PLAYER, DEFAULT_GAMES_PER_PLAYER, MAX_COUNT),
            analysis_per_player=_whole(
                environ, ENV_ANALYSIS_PER_PLAYER, DEFAULT_ANALYSIS_PER_PLAYER, MAX_COUNT
            ),
            registered_share=parse_share(environ[ENV_REGISTERED_SHARE], ENV_REGISTERED_SHARE)
            if environ.get(ENV_REGISTERED_SHARE)
            else DEFAULT_REGISTERED_SHARE,
            id_hash_cost=parse_id_hash_cost(environ[ENV_ID_HASH_COST], ENV_ID_HASH_COST)
            if environ.get(ENV_ID_HASH_COST)
            else DEFAULT_COST,
            max_connections=_whole(environ, ENV_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS, MAX_COUNT),
            public_rate=_whole(environ, ENV_PUBLIC_RATE, DEFAULT_PUBLIC_RATE, MAX_COUNT),
            away_after=parse_away_after(environ[ENV_AWAY_AFTER], ENV_AWAY_AFTER)
            if environ.get(ENV_AWAY_AFTER)
            else DEFAULT_AWAY_AFTER,
            claim_after=_whole(environ, ENV_CLAIM_AFTER, DEFAULT_CLAIM_AFTER, MAX_CLAIM_AFTER),
            banned_words=read_banned_words(environ[ENV_BANNED_WORDS], ENV_BANNED_WORDS)
            if environ.get(ENV_BANNED_WORDS)
            else (),
            bots_rated=parse_switch(environ.get(ENV_BOTS_RATED, ""), ENV_BOTS_RATED),
            event_loop=parse_event_loop(environ[ENV_EVENT_LOOP], ENV_EVENT_LOOP)
            if environ.get(ENV_EVENT_LOOP)
            else "auto",
            redis_url=parse_redis_url(environ[ENV_REDIS_URL], ENV_REDIS_URL)
            if environ.get(ENV_REDIS_URL)
            else None,
            member=parse_member(environ[ENV_MEMBER], ENV_MEMBER) if environ.get(ENV_MEMBER) else None,
            cluster_secrets=_cluster_secrets(environ),
        )


def parse_redis_url(value: str, name: str = "--redis-url") -> str:
    """A Redis URL as redis-py reads it (redis://HOST:PORT/DB, rediss://..., unix:///path), with the
    files its TLS options name (docs/cluster.md: ?ssl_ca_certs=PATH) there to read. Never echoed back:
    it may hold a password."""
    parts = urlsplit(value)
    if parts.scheme not in REDIS_SCHEMES or (parts.scheme != "unix" and not parts.hostname):
        raise ConfigError(f"{name} must be a URL like redis://HOST:6379/0 or rediss://HOST:6379/0")
    for option, path in parse_qsl(parts.query):
        if not option.startswith("ssl_"):
            continue
        if parts.scheme != "rediss":
            raise ConfigError(f"{name}: {option} is for TLS, which is rediss://HOST:PORT/DB")
        if option in TLS_FILES and not Path(path).is_file():
            raise ConfigError(f"{name}: {option}: there is no file {path!r}")
    return value


def parse_cluster_secrets(text: str, name: str) -> tuple[str, ...]:
    """One secret, or two during a rotation, separated by white space (a line each in a file)."""
    found = tuple(text.split())
    if not found:
        raise ConfigError(f"{name} holds no secret: {MAKE_A_SECRET}")
    if len(found) > MAX_SECRETS:
        raise ConfigError(
            f"{name} holds {len(found)} secrets: one, or two while the secret is changed (docs/cluster.md)"
        )
    for secret in found:
        if len(secret) < MIN_SECRET_LENGTH:
            raise ConfigError(
                f"{name}: a secret of {len(secret)} characters is too short, it needs at least "
                f"{MIN_SECRET_LENGTH}: {MAKE_A_SECRET}"
            )
    return found


def read_text_file(path: str, name: str, not_text: str) -> str:
    """A file a setting names, as UTF-8 text; `not_text` finishes the message when it is not."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{name}: {path!r} is not {not_text}") from None


def read_cluster_secret_file(path: str, name: str = "--cluster-secret-file") -> tuple[str, ...]:
    text = read_text_file(path, name, f"text: {MAKE_A_SECRET}")
    return parse_cluster_secrets(text, f"{name} {path}")


def _cluster_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    secret, path = environ.get(ENV_CLUSTER_SECRET), environ.get(ENV_CLUSTER_SECRET_FILE)
    if secret and path:
        raise ConfigError(f"{ENV_CLUSTER_SECRET} and {ENV_CLUSTER_SECRET_FILE} are both set: set one")
    if path:
        return read_cluster_secret_file(path, ENV_CLUSTER_SECRET_FILE)
    return parse_cluster_secrets(secret, ENV_CLUSTER_SECRET) if secret else ()


def read_banned_words(path: str, name: str = "--banned-words") -> tuple[str, ...]:
    """The banned words' file: UTF-8, a word or a phrase a line (a trailing `*`: any word that begins
    so); blank lines and lines starting with `#` are left out. Each entry needs a letter or a digit."""
    entries = []
    for number, line in enumerate(read_text_file(path, name, "UTF-8 text").splitlines(), 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if len(entry) > MAX_BANNED_WORD or not any(char.isalnum() for char in entry):
            raise ConfigError(
                f"{name}: line {number} of {path!r} is not a word or a phrase of at most "
                f"{MAX_BANNED_WORD} characters"
            )
        entries.append(entry)
    return tuple(entries)


def parse_member(value: str, name: str = "--member") -> str:
    if not MEMBER_NAME.fullmatch(value):
        raise ConfigError(
            f"{name} must be 1-100 letters, digits and . _ : - starting with a letter or digit, got {value!r}"
        )
    return value


def check_cluster(settings: Settings) -> None:
    """A cluster's members share one PostgreSQL database and a secret (docs/cluster.md)."""
    if settings.redis_url is None:
        return
    try:
        backend = make_url(settings.db_url).get_backend_name()
    except ArgumentError:
        raise ConfigError(f"not a database URL: {settings.db_url!r}") from None
    if backend != "postgresql":
        raise ConfigError(
            "--redis-url: the members of a cluster share one PostgreSQL database "
            "(--db postgresql+asyncpg://USER@HOST/NAME); SQLite serves one server alone"
        )
    if not settings.cluster_secrets:
        raise ConfigError(
            "--redis-url: the members of a cluster sign what they tell each other with a secret they "
            f"share: give it with --cluster-secret-file PATH ({ENV_CLUSTER_SECRET_FILE}) or "
            f"{ENV_CLUSTER_SECRET}, at least {MIN_SECRET_LENGTH} characters: {MAKE_A_SECRET} "
            "(docs/cluster.md)"
        )


def parse_prefixes(value: str, version: int, name: str) -> tuple[int, int]:
    """`HOST,NETWORK` prefix lengths, e.g. 64,48 for IPv6: an address's host and network
    (server/web/networks.py), the network no longer than the host."""
    longest = 32 if version == 4 else 128
    parts = value.split(",")
    if len(parts) == 2 and all(part.strip().isascii() and part.strip().isdigit() for part in parts):
        host, network = (int(part) for part in parts)
        if 8 <= network <= host <= longest:
            return host, network
    raise ConfigError(
        f"{name} must be HOST,NETWORK prefix lengths with 8 <= NETWORK <= HOST <= {longest} "
        f"(default {'32,24' if version == 4 else '64,48'}), got {value!r}"
    )


def parse_whole(value: str, name: str, highest: int, lowest: int = 1) -> int:
    """A whole number from `lowest` to `highest`, or a ConfigError naming the setting."""
    if not value.isascii() or not value.isdigit() or not lowest <= int(value) <= highest:
        raise ConfigError(f"{name} must be a whole number from {lowest} to {highest}, got {value!r}")
    return int(value)


def parse_away_after(value: str, name: str = "--away-after") -> int:
    """Seconds from MIN_AWAY_AFTER to MAX_AWAY_AFTER: fewer would take a waiting long poll for a player
    who left."""
    return parse_whole(value, name, MAX_AWAY_AFTER, MIN_AWAY_AFTER)


def parse_event_loop(value: str, name: str = "--event-loop") -> str:
    """One of EVENT_LOOPS; uvloop only where it is installed, so that a server asked for it never
    runs without it unnoticed."""
    if value not in EVENT_LOOPS:
        raise ConfigError(f"{name} must be one of {', '.join(EVENT_LOOPS)}, got {value!r}")
    if value == "uvloop" and importlib.util.find_spec("uvloop") is None:
        raise ConfigError(f"{name} uvloop: uvloop is not installed (pip install '.[fast]')")
    return value


def parse_switch(value: str, name: str) -> bool:
    """`1`/`yes`/`true`/`on` or `0`/`no`/`false`/`off`/empty (off), or a ConfigError naming the setting."""
    text = value.strip().lower()
    if text in ("1", "yes", "true", "on"):
        return True
    if text in ("", "0", "no", "false", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0 (yes or no), got {value!r}")


def parse_share(value: str, name: str) -> int:
    """A percentage from 0 to MAX_REGISTERED_SHARE, or a ConfigError naming the setting."""
    return parse_whole(value, name, MAX_REGISTERED_SHARE, 0)


def _whole(environ: Mapping[str, str], name: str, default: int, highest: int) -> int:
    return parse_whole(environ[name], name, highest) if environ.get(name) else default


def parse_id_hash_cost(value: str, name: str = "--id-hash-cost") -> int:
    """log2 of scrypt's N (server/store/idhash.py): each step doubles a login's time and memory."""
    return parse_whole(value, name, MAX_COST, MIN_COST)


def parse_ai_workers(value: str, name: str = "--ai-workers") -> int:
    try:
        workers = int(value)
    except ValueError:
        workers = -1
    if not 0 <= workers <= MAX_AI_WORKERS:
        raise ConfigError(f"{name} must be a whole number from 0 to {MAX_AI_WORKERS}, got {value!r}")
    return workers


def parse_address(value: str) -> str:
    """An IP address as the server will compare it with a peer's (canonical form)."""
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        raise ConfigError(f"not an IP address: {value!r}") from None


def _addresses(text: str, name: str) -> tuple[str, ...]:
    try:
        return tuple(parse_address(part) for part in text.split(",") if part.strip())
    except ConfigError as exc:
        raise ConfigError(f"{name}: {exc}") from None


def parse_network(value: str) -> str:
    """A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`), or one address (`10.0.0.5`)."""
    try:
        return str(ipaddress.ip_network(value.strip(), strict=False))
    except ValueError:
        raise ConfigError(f"not a network (CIDR, e.g. 10.0.0.0/8) or an IP address: {value!r}") from None


def _networks(text: str, name: str) -> tuple[str, ...]:
    try:
        return tuple(parse_network(part) for part in text.split(",") if part.strip())
    except ConfigError as exc:
        raise ConfigError(f"{name}: {exc}") from None


# libpq's names, which asyncpg does not take as URL options (a TypeError at the first connection)
LIBPQ_TLS_OPTIONS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "sslcrl", "sslpassword")


def check_database_url(db_url: str) -> None:
    """TLS to PostgreSQL as asyncpg takes it: `?ssl=verify-full`, the authority in PGSSLROOTCERT
    (docs/cluster.md, "PostgreSQL"); libpq's option names are refused with a line saying so."""
    try:
        url = make_url(db_url)
    except ArgumentError:
        raise ConfigError(f"not a database URL: {db_url!r}") from None
    libpq = [option for option in url.query if option in LIBPQ_TLS_OPTIONS]
    if libpq and url.get_driver_name() == "asyncpg":
        raise ConfigError(
            f"--db: asyncpg does not take {', '.join(libpq)}: write ?ssl=verify-full (or require), and "
            "give the certificate authority's file in the environment, PGSSLROOTCERT=PATH (docs/cluster.md)"
        )


def sqlite_file(db_url: str) -> Path | None:
    """The file of a SQLite database URL; None for another database, an in-memory one or a `file:` URI."""
    try:
        url = make_url(db_url)
    except ArgumentError:
        raise ConfigError(f"not a database URL: {db_url!r}") from None
    database = url.database or ""
    if url.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def absolute_db_url(db_url: str) -> str:
    """The URL with a relative SQLite path made absolute against the working directory, once, when a
    command starts: what it logs and names in errors is then the one file it uses."""
    path = sqlite_file(db_url)
    if path is None or path.is_absolute():
        return db_url
    return make_url(db_url).set(database=str(path.absolute())).render_as_string(hide_password=False)


def sqlite_data_dir(db_url: str) -> Path | None:
    """The directory a SQLite database file lives in, so that it can be created before the first connection.

    SQLite creates the file but not its directory. ``None`` means there is nothing to create: another
    database, an in-memory SQLite database, or a ``file:`` URI that SQLite resolves itself.
    """
    path = sqlite_file(db_url)
    return None if path is None else path.parent
