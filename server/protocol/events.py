"""Server events as wire lines (protocol.md 3.2; layouts this server chose are in docs/protocol.md)."""

from __future__ import annotations

from collections.abc import Iterable

from server.engine.game import Game, Result
from server.engine.gametype import GameType, format_new
from server.protocol.codec import encode_server_text
from server.protocol.seeks import POOL_LEFT, POOL_WAITER, SEEK_ADDED, SEEK_GONE

# Between the nicks of a team in one field of a line (`d`, `vg`, `vs`; docs/teams.md): in no nick.
TEAM_SEPARATOR = ","
NICK_SEPARATOR = "."  # between the nicks of a `p` line
# the `i` flag of a bot (docs/protocol.md, "`i` flags"): not `N` or `b`, which MultiPoints reads as busy
BOT_FLAG = "R"
# the `i` flags of a player's client, as it said (Player.client): the Java client (MultiPoints, `i0nJa`), and
# a client that reads seeks itself (`ka`/`kd`: the built-in one), to which none is offered as an invitation
JAVA_CLIENT = "J"
SEEKS_CLIENT = "K"
PRIVATE_SEPARATOR = "-"  # between the two nicks of a private conversation's name (in no nick)


def people(kind: str, nicks: Iterable[str]) -> str:
    """`pr` (whole list), `pa` (joined), `pd` (left): `p<kind><nick>.<nick>...`."""
    return f"p{kind}" + NICK_SEPARATOR.join(nicks)


def people_joined(kind: str, nicks: str) -> str:
    """`people` of nicks already joined by NICK_SEPARATOR (the lobby's, Tables.lobby_nicks)."""
    return f"p{kind}{nicks}"


def tables(kind: str, uids: Iterable[int]) -> str:
    """`gr` (whole list), `ga` (added), `gd` (removed) game tables in the lobby."""
    return f"g{kind}" + ".".join(str(uid) for uid in uids)


def tables_joined(kind: str, uids: str) -> str:
    """`tables` of numbers already joined by `.` (the lobby's, Tables.lobby_table_numbers)."""
    return f"g{kind}{uids}"


def game_type_text(game_type: GameType) -> str:
    """The new 9-field format (the only one MultiPoints reads), the tournament name escaped."""
    return encode_server_text(format_new(game_type))


def description(uid: int, game_type: GameType, blue: str, red: str) -> str:
    """`d<uid>.<gameType>.<blue>.<red>`; at a team table blue and red are the teams (`team`)."""
    return f"d{uid}.{game_type_text(game_type)}.{blue}.{red}"


def team(nicks: Iterable[str]) -> str:
    """A team as one field: its nicks in its own turn order (a two-player game: the nick)."""
    return TEAM_SEPARATOR.join(nicks)


def described_players(line: str) -> list[str]:
    """Every player a `d` line names, team one's then team two's: MultiPoints and roboCup read its
    last two fields as the two sides, so those are the teams (a tournament name may hold dots)."""
    return [nick for side in line.rsplit(".", 2)[1:] for nick in side.split(TEAM_SEPARATOR)]


def described_kind(line: str) -> str:
    """The game kind a `d` line's game type names (GameKind's letter: its fourth field, before any
    tournament name)."""
    fields = line.split(".", 5)
    return fields[4] if len(fields) > 5 else ""


def result_code(result: Result) -> str:
    """A result as one dot-free field: half points are written with a comma (`W+1,5`)."""
    return str(result).replace(".", ",")


def state(uid: int, game: Game, archive_number: int | None, side: int | None = None) -> str:
    """`x<uid>.<side on move>.<result>.<archive number>`; `-` while playing, number empty until archived.
    The side on move is the colour on move (1, 2), at a team table the side (1, 3, 5... team one;
    2, 4, 6... team two), as zagram sends it.

    A running game's result is `-` rather than empty, because roboCup splits with Java's String.split,
    which drops trailing empty fields, and then finds no result field at all.
    """
    result = result_code(game.result) if game.result is not None else "-"
    number = "" if archive_number is None else str(archive_number)
    return f"x{uid}.{game.to_move if side is None else side}.{result}.{number}"


def user_info(
    nick: str, avatar: str, flags: str, lang: str, record: tuple[int, int, int, int, str] | None
) -> str:
    """`i<nick>.<avatar>.<flags>.<lang>[.<rating>.<wins>.<draws>.<losses>.<prestige>]`."""
    line = f"i{nick}.{avatar}.{flags}.{lang}"
    if record is not None:
        rating, wins, draws, losses, prestige = record
        line += f".{rating}.{wins}.{draws}.{losses}.{prestige}"
    return line


def marks_a_bot(info: str) -> bool:
    """Whether an `i` line's flags (its third field) have the bot mark."""
    fields = info[1:].split(".")
    return len(fields) > 2 and BOT_FLAG in fields[2]


# The `i` line's last field by a registered account's role (docs/protocol.md, "Prestige and moderating
# powers"): P the prestige level (1, left out: any other player), x the level up to which its holder
# mutes, kicks and bans, c the level up to which it deletes chat lines.
PRESTIGE = {"moderator": "P2x1c3", "admin": "P3x2c3"}


def prestige(role: str) -> str:
    return PRESTIGE.get(role, "")


def subscriptions(nick: str, uids: Iterable[int]) -> str:
    """`b<nick>.<uid>.<uid>...` (getBMsg only)."""
    return f"b{nick}." + ".".join(str(uid) for uid in uids)


def section(uid: int) -> str:
    return f"q{uid}"


def chat_added(line: str) -> str:
    return "ca" + line


def chat_replaced(line: str) -> str:
    return "cr" + line


def chat_deleted(chat_id: str) -> str:
    return "cd" + chat_id


def chat_writer(line: str) -> str:
    """Who wrote a `ca` or `cr` line: its nick; for a private line (`<nick1>-<nick2>` and nickType `1`
    or `2`) the nick of that side; "" for a server line, a private notice (`-`, `nochat`, `del`) and any
    line that is not chat."""
    if not line.startswith(("ca", "cr")):
        return ""
    fields = line.split(".", 3)
    if len(fields) < 3:
        return ""
    nick, nick_type = fields[1], fields[2]
    if PRIVATE_SEPARATOR not in nick:
        return nick
    if nick_type not in ("1", "2"):
        return ""
    return nick.split(PRIVATE_SEPARATOR)[int(nick_type) - 1]


def ignored(nicks: Iterable[str]) -> str:
    """`n<nick>.<nick>...`: the whole list of players the reader ignores (docs/protocol.md, "Ignoring");
    a bare `n` when it is empty. Only sent to a player who asked for it."""
    return "n" + NICK_SEPARATOR.join(nicks)


def guest_privates(refused: bool) -> str:
    """`aguestprivates.off` (private lines from guests are refused) or `aguestprivates.on`: the reader's
    own setting (docs/protocol.md, "Private lines from guests"). Only sent to a player who asked for it."""
    return "aguestprivates." + ("off" if refused else "on")


_LOBBY_KEYED = {"d": "description", "x": "state", "i": "info", "b": "subscriptions"}


def lobby_subject(line: str) -> tuple[str, str]:
    """What a lobby event line is about, as (kind, key), for a member keeping another member's part of
    the lobby: ("people"|"tables", "a"|"d"|"r"); ("description"|"state", uid); ("info"|"subscriptions",
    nick); ("chat", time_n) for a person's chat line, ("server", time_n) for a server's (empty nick),
    ("unchat", time_n) for a deletion; ("seek"|"unseek", number) for a seek posted or gone (`ka`, `kd`:
    server/protocol/seeks.py); ("waiter"|"unwaiter", nick) for a player who waits in a pool or no more
    (`ja`, `jd`, between members only); ("", "") for anything else."""
    head = line[:1]
    if head in ("p", "g") and line[1:2] in ("a", "d", "r"):
        return ("people" if head == "p" else "tables"), line[1]
    if head in _LOBBY_KEYED:
        return _LOBBY_KEYED[head], line[1:].split(".", 1)[0]
    if line.startswith(("ca", "cr")):
        time_n, nick = (line[2:].split(".", 2) + ["", ""])[:2]
        return ("chat" if nick else "server"), time_n
    if line.startswith("cd"):
        return "unchat", line[2:]
    if line.startswith((SEEK_ADDED, SEEK_GONE)):
        return ("seek" if line.startswith(SEEK_ADDED) else "unseek"), line[2:].split(".", 1)[0]
    if line.startswith((POOL_WAITER, POOL_LEFT)):
        return ("waiter" if line.startswith(POOL_WAITER) else "unwaiter"), line[2:].split(".", 1)[0]
    return "", ""
