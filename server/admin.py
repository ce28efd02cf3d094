"""The admin's commands of ``kropki-server``, which work on the database rather than on a running
server: ``migrate`` upgrades its schema, ``user`` looks after accounts, ``tournament-key`` after
organisers' keys, ``mute``/``kick``/``ban``/``unmute``/``unban``, ``moderation log`` and ``report``
(server/adminreports.py) moderate (docs/moderation.md: a running server applies them within seconds).
server/cli.py reads the command line and hands them over."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from server import adminreports, logs
from server.config import ENV_DB
from server.hub.persistence import ROLES
from server.protocol.codec import ProtocolError, check_nick

if TYPE_CHECKING:
    from server.store.accounts import Profile

SANCTIONS = ("mute", "kick", "ban", "unmute", "unban")
COMMANDS = ("migrate", "user", "bot", "tournament-key", "moderation", "report", *SANCTIONS)
BY_CLI = "admin (CLI)"  # who the moderation log says acted
KEY_NAME_LENGTH = 80  # tournament_keys.name


def add_parsers(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    """The admin's commands, each added with `add_parser` (the main parser's sub-commands')."""
    migrate = add_parser(
        "migrate",
        help="create or upgrade the database schema",
        description="Create or upgrade the database schema (Alembic revisions in migrations/).",
    )
    database_flag(migrate)

    user = add_parser(
        "user", help="look after registered accounts", description="Look after registered accounts."
    )
    database_flag(user)
    actions = user.add_subparsers(dest="action", metavar="ACTION", required=True)
    after = [_database_flag_after_the_action()]
    show = actions.add_parser("show", help="print an account (never its id)", parents=after)
    show.add_argument("nick")
    role = actions.add_parser(
        "set-role", help="make an account a moderator or an admin, or neither", parents=after
    )
    role.add_argument("nick")
    role.add_argument("role", choices=ROLES)
    rename = actions.add_parser("rename", help="give an account a new nick", parents=after)
    rename.add_argument("nick")
    rename.add_argument("new_nick")
    delete = actions.add_parser(
        "delete", help="delete an account (its archived games stay, anonymised)", parents=after
    )
    delete.add_argument("nick")

    bot = add_parser(
        "bot",
        help="bot accounts and their tokens (docs/bots.md)",
        description="Bot accounts and their tokens (docs/bots.md). A token is shown once, when it is "
        "made; only its hash is kept.",
    )
    database_flag(bot)
    bot_actions = bot.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = bot_actions.add_parser("create", help="make a bot account and print its token", parents=after)
    create.add_argument("nick")
    token = bot_actions.add_parser(
        "token", help="print a new token for a bot (the one before stops working)", parents=after
    )
    token.add_argument("nick")

    for action in SANCTIONS:
        sanction = add_parser(
            action,
            help=f"{action} a player, an address or a network (docs/moderation.md)",
            description=f"{action.capitalize()} a nick (an account, or a guest's nick and its look-alikes), "
            "an address (IPv4, or an IPv6 address's /64) or a network (CIDR). A running server applies it "
            "within seconds.",
        )
        database_flag(sanction)
        sanction.add_argument("whom", metavar="NICK|ADDRESS")
        if action in ("mute", "ban"):
            sanction.add_argument(
                "--for",
                dest="lasting",
                metavar="DURATION",
                default="",
                help="30m, 2h, 7d, 2w; default: for good",
            )
        sanction.add_argument("--reason", default="", help="why, as the player and the log read it")
    moderation = add_parser(
        "moderation", help="the moderation log", description="Every sanction, lift and change of role."
    )
    database_flag(moderation)
    moderation_actions = moderation.add_subparsers(dest="action", metavar="ACTION", required=True)
    shown = moderation_actions.add_parser(
        "log", help="print the moderation log, the newest last", parents=after
    )
    shown.add_argument(
        "--last", type=positive, default=200, metavar="N", help="the last N lines (default 200)"
    )
    database_flag(adminreports.add_parser(add_parser, after))

    keys = add_parser(
        "tournament-key",
        help="organisers' keys for setUpTable",
        description="Organisers' keys for setUpTable. A key is shown once, when it is made; "
        "only its hash is kept.",
    )
    database_flag(keys)
    key_actions = keys.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = key_actions.add_parser("add", help="make a key and print it (once)", parents=after)
    add.add_argument("name", help="who or what the key is for (unique)")
    add.add_argument("--tournament", help="the only tournament (tourn=) the key may set up tables for")
    add.add_argument(
        "--registered-only", action="store_true", help="both players must be registered accounts"
    )
    key_actions.add_parser("list", help="list the keys (never the keys themselves)", parents=after)
    revoke = key_actions.add_parser("revoke", help="stop a key from working", parents=after)
    revoke.add_argument("name")


def positive(text: str) -> int:
    """A whole number above 0 (argparse's type: a usage error otherwise)."""
    number = int(text)
    if number < 1:
        raise ValueError(text)
    return number


def key_refusal(name: str, tournament: str | None) -> str | None:
    """Why `tournament-key add` cannot make this key, or None: a name the column holds and `list`
    shows on one line, and a tournament some setUpTable's `tourn=` can name (else the key never works)."""
    from server.engine.gametype import MAX_TOURNAMENT_LENGTH
    from server.web.tournament import tournament_label

    if not name.strip() or len(name) > KEY_NAME_LENGTH or any(not c.isprintable() for c in name):
        return (
            f"a key's name is 1 to {KEY_NAME_LENGTH} characters, not only spaces, with no tab, line break "
            "or other control character"
        )
    if tournament is not None:
        try:
            usable = tournament != "" and tournament_label(tournament) is not None
        except ProtocolError:
            usable = False
        if not usable:
            return (
                f"no tournament can be named {tournament!r} (setUpTable's tourn=): at most "
                f"{MAX_TOURNAMENT_LENGTH} characters, "
                "no '/' or control character, not 'x', '.' or '..', not ending in '.sgf.zip'"
            )
    return None


def database_flag(parser: argparse.ArgumentParser, default: object = None) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        default=default,
        help=f"SQLAlchemy database URL (env {ENV_DB}, default sqlite+aiosqlite:///./data/kropki.sqlite3)",
    )


def _database_flag_after_the_action() -> argparse.ArgumentParser:
    """`--db` after an action (`user show NICK --db URL`) as well as before it; not given there, it
    leaves the one given before (or none) as it is."""
    parent = argparse.ArgumentParser(add_help=False)
    database_flag(parent, default=argparse.SUPPRESS)
    return parent


def run(args: argparse.Namespace, url: str, database: Path | None, id_hash_cost: int) -> int:
    """Run the admin's command `args.command` on the database at `url` (`database`: its SQLite file);
    `id_hash_cost` as the server's (a bot account's id is hashed). A database that cannot be used
    (out of reach, locked, read-only) is one line saying so, as `serve` says it, not a traceback; so is a
    statement it refuses, told by its code and constraint (the database's message quotes the values)."""
    from sqlalchemy.engine import make_url

    from server.store.outage import described, holds_storage_error, unavailable

    logs.configure("WARNING")
    try:
        return _run(args, url, database, id_hash_cost)
    except Exception as failure:
        reason = unavailable(failure)
        if reason is None and holds_storage_error(failure):
            refused = described(failure)
            print(f"kropki-server: error: the database refused the change: {refused}", file=sys.stderr)
            return 1
        if reason is None:
            raise
        shown = make_url(url).render_as_string(hide_password=True)
        print(
            f"kropki-server: error: cannot use the database at {shown} ({reason}): "
            "check --db or KROPKI_DB, and that it runs",
            file=sys.stderr,
        )
        return 1


def _run(args: argparse.Namespace, url: str, database: Path | None, id_hash_cost: int) -> int:
    if args.command == "migrate":
        if database is not None:
            try:
                database.parent.mkdir(parents=True, exist_ok=True)
            except OSError as failure:  # a file in its place, no permission, a read-only file system
                print(
                    f"kropki-server: error: cannot create the database directory {database.parent}: "
                    f"{failure.strerror}",
                    file=sys.stderr,
                )
                return 1
        return _migrate(url)
    if database is not None and not database.is_file():
        # an admin command run in another directory must not create an empty database there
        print(
            f"kropki-server: error: there is no database at {database}: create it with `kropki-server "
            "migrate`, or name the right one with --db or KROPKI_DB (a relative path, and the default "
            "./data/kropki.sqlite3, are taken from the directory the command runs in)",
            file=sys.stderr,
        )
        return 1
    if args.command == "tournament-key":
        return _tournament_key(args, url)
    if args.command == "bot":
        return _bot(args, url, id_hash_cost)
    if args.command == "report":
        return adminreports.run(args, url, BY_CLI)
    if args.command in SANCTIONS or args.command == "moderation":
        return _moderate(args, url)
    return _user(args, url)


def _migrate(url: str) -> int:
    from server.store.database import SchemaError, current_revision, migrate, open_engine

    async def run() -> str | None:
        engine = open_engine(url)
        try:
            await migrate(engine)
            return await current_revision(engine)
        finally:
            await engine.dispose()

    try:
        print(f"database schema at revision {asyncio.run(run())}")
    except SchemaError as refused:  # a database a newer version upgraded
        print(f"kropki-server: error: {refused}", file=sys.stderr)
        return 1
    return 0


def _user(args: argparse.Namespace, url: str) -> int:
    """The admin's account commands; they change the database, which the server reads at each login."""
    from server.hub.model import reserved
    from server.store.accounts import NickTaken, UnknownNick
    from server.store.store import Store

    async def run() -> str:
        store = await Store.open(url)
        accounts = store.accounts
        try:
            if args.action == "show":
                profile = await accounts.profile(args.nick)
                if profile is None:
                    raise UnknownNick(args.nick)
                return _describe_profile(profile)
            if args.action == "set-role":
                await accounts.set_role(args.nick, args.role, BY_CLI)
                return f"{args.nick}: role {args.role} (from the player's next login)"
            if args.action == "rename":
                check_nick(args.new_nick, guest=False)
                if reserved(args.new_nick):  # the AI players' names, as registration refuses them
                    raise NickTaken(args.new_nick)
                await accounts.rename(args.nick, args.new_nick)
                return f"{args.nick} is now {args.new_nick} (archived records keep the old nick)"
            anonymised = await accounts.delete(args.nick, by=BY_CLI)
            return f"{args.nick} deleted; {anonymised} archived games now name the player anonymously"
        finally:
            await store.close()

    return _account_answer(run)


def _bot(args: argparse.Namespace, url: str, id_hash_cost: int) -> int:
    """A bot account made, or its token replaced: the token is printed once (the store keeps a hash)."""
    from server.hub.model import reserved
    from server.store.accounts import NickTaken
    from server.store.store import Store

    async def run() -> str:
        store = await Store.open(url, id_hash_cost=id_hash_cost)
        try:
            if args.action == "create":
                if reserved(args.nick):
                    raise NickTaken(args.nick)
                return await store.bots.create(args.nick)
            return await store.bots.issue_token(args.nick)
        finally:
            await store.close()

    return _account_answer(run)


def _account_answer(run: Callable[[], Awaitable[str]]) -> int:
    """Print what an account command did, or why it could not (exit status 1)."""
    from server.store.accounts import NickTaken, StillOnline, UnknownNick
    from server.store.bots import NotABot
    from server.store.database import SchemaError

    try:
        print(asyncio.run(run()))
        return 0
    except UnknownNick as missing:
        why = f"no account with the nick {missing}"
    except NickTaken as taken:
        why = f"the nick {taken} is taken"
    except StillOnline as player:
        why = (
            f"{player} is logged in; nothing was deleted: a moderator's kick ends the session "
            "(docs/moderation.md), or wait until they log out"
        )
    except NotABot as person:
        why = f"{person} is not a bot (a player makes their own account one: docs/bots.md)"
    except (SchemaError, ProtocolError) as refused:
        why = str(refused)
    print(f"kropki-server: error: {why}", file=sys.stderr)
    return 1


def _tournament_key(args: argparse.Namespace, url: str) -> int:
    from server.store.database import SchemaError
    from server.store.store import Store
    from server.store.tournaments import KeyNameTaken

    async def run() -> tuple[int, str]:
        store = await Store.open(url)
        keys = store.tournaments
        try:
            if args.action == "add":
                refusal = key_refusal(args.name, args.tournament)
                if refusal is not None:
                    return 1, refusal
                key = await keys.add_key(args.name, args.tournament, args.registered_only)
                return 0, key
            if args.action == "revoke":
                if await keys.revoke(args.name):
                    return 0, f"{args.name}: revoked"
                return 1, f"no working key named {args.name}"
            lines = []
            for info in await keys.keys():
                limits = [f"tournament {info.tournament!r}"] if info.tournament else []
                limits += ["registered players only"] if info.registered_only else []
                state = f"revoked {info.revoked_at:%Y-%m-%d}" if info.revoked_at else "active"
                scope = ", ".join(limits) or "any tournament"
                lines.append(f"{info.name}\t{state}\tmade {info.created_at:%Y-%m-%d}\t{scope}")
            return 0, "\n".join(lines) or "no keys"
        except KeyNameTaken:
            return 1, f"a key named {args.name} exists already"
        finally:
            await store.close()

    try:
        status, text = asyncio.run(run())
    except SchemaError as refused:
        status, text = 1, str(refused)
    if status:
        print(f"kropki-server: error: {text}", file=sys.stderr)
    else:
        print(text)
    return status


def _moderate(args: argparse.Namespace, url: str) -> int:
    """A sanction or a lift with its line of the moderation log, or the log itself."""
    from server.store.database import SchemaError
    from server.store.moderation import Target
    from server.store.store import Store
    from server.web.moderation import parse_duration
    from server.web.networks import Grouping, banned_network

    async def run() -> str:
        reason = adminreports.sanction_reason(getattr(args, "reason", ""))
        store = await Store.open(url)
        moderation = store.moderation
        try:
            if args.command == "moderation":
                return (
                    "\n".join(
                        f"{line.at:%Y-%m-%d %H:%M:%S}\t{line.actor}\t{line.action}\t{line.target}\t"
                        f"{line.detail}\t{line.reason}"
                        for line in await moderation.log(args.last)
                    )
                    or "nothing moderated yet"
                )
            network = banned_network(args.whom, Grouping())
            if network is not None:
                target = Target(args.whom, network=network)
            else:
                check_nick(args.whom.lstrip("*"), guest=False)
                target = await moderation.target(args.whom, guests_network=args.command == "ban")
            if args.command.startswith("un"):
                lifted = await moderation.lift((args.command[2:],), target, by=BY_CLI, reason=reason)
                return f"{target.shown}: {lifted} {args.command[2:]}(s) lifted"
            lasting = parse_duration(getattr(args, "lasting", ""))
            made = await moderation.sanction(args.command, target, by=BY_CLI, reason=reason, lasting=lasting)
            until = "now" if args.command == "kick" else made.until or "for good"
            return f"{target.shown}: {args.command} {until}"
        finally:
            await store.close()

    try:
        print(asyncio.run(run()))
        return 0
    except (SchemaError, ProtocolError) as refused:
        print(f"kropki-server: error: {refused}", file=sys.stderr)
        return 1


def _describe_profile(profile: Profile) -> str:
    rating = profile.rating
    return "\n".join(
        [
            f"nick:        {profile.nick}",
            f"registered:  {profile.registered_at:%Y-%m-%d %H:%M} UTC",
            f"email:       {profile.email or '-'}",
            f"language:    {profile.lang}",
            f"rating:      {rating.rating:.0f} (deviation {rating.deviation:.0f}, "
            f"volatility {rating.volatility:.4f})",
            f"games:       {profile.wins} won, {profile.draws} drawn, {profile.losses} lost",
            f"role:        {profile.role}",
            f"bot:         {'yes' if profile.bot else 'no'}",
        ]
    )
