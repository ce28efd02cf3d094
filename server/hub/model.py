"""The hub's live records: a player's session, a table, an invitation, and the names of the AI players.

Plain data with the few rules that read only themselves; the parts of the hub (docs/architecture.md)
each own some of these records and change them.
"""

from __future__ import annotations

import asyncio
import enum
import functools
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from server.engine.gametype import GameType
from server.hub.acknowledged import Acknowledged
from server.hub.chat import ChatRoom
from server.hub.mailbox import EventLog
from server.hub.persistence import NO_ROLE, Account
from server.hub.rates import Bucket
from server.hub.room import JournalText, Room
from server.protocol import events
from server.protocol.codec import ProtocolError, look_key, nick_key, parse_number

LOBBY = 0
# the owner of a seat no session or account owns any more (a deleted account's): no Player.seat_key is it
NOBODY = "-"
ACCOUNT_MARK = "#"  # between a registered player's seat key's nick and account number (no nick has one)
# nickType of chat lines written by people (docs/protocol.md): class digit, after the colour
# letter B/W when the writer plays at that table.
GUEST_CLASS = "1"
REGISTERED_CLASS = "3"
MODERATOR_CLASS = "5"
# Game actions (moves, take-backs, propositions, pauses, STOP, gifts of time): a player 10 a second
# with bursts of 30, a table 20 a second with bursts of 60; a person at the board needs far fewer,
# and one player's flood of moves and take-backs used to write 1,600 journal rows a second.
PLAYER_ACTIONS = (10.0, 30.0)
TABLE_ACTIONS = (20.0, 60.0)

COMPUTER_NICKS = {1: "AI easy", 2: "AI medium", 3: "AI hard"}
RESERVED = {nick_key(nick): level for level, nick in COMPUTER_NICKS.items()}
RESERVED_LOOKS = {look_key(nick) for nick in COMPUTER_NICKS.values()}


@functools.lru_cache(maxsize=4096)
def reserved(nick: str) -> bool:
    """Names nobody can register or log in with, whether or not the AI plays on this server, nor
    anything that looks like them (`Al easy` with a small L). Kept for the nicks asked about last: every
    game action asks it of its player's nick (Limits.actions), and the look of a nick (two Unicode
    normalizations and a look-up a character) cost a move more than the engine's own part did."""
    return nick_key(nick) in RESERVED or look_key(nick) in RESERVED_LOOKS


def owns(owner: str, key: str) -> bool:
    """Whether the seat owner `owner` (a Player.seat_key) is the session or account `key`. A registered
    player's key without its account's number (a seat taken before keys had one, kept in a journal or a
    tournament's entry; a member of an older version) is the account's whose nick it names."""
    if owner == key:
        return True
    if not owner.startswith("@") or not key.startswith("@"):
        return False
    owner_nick, owner_mark, _ = owner.partition(ACCOUNT_MARK)
    key_nick, key_mark, _ = key.partition(ACCOUNT_MARK)
    return owner_nick == key_nick and not (owner_mark and key_mark)


def account_seat_key(nick: str, number: int) -> str:
    """A registered player's seat key (Player.seat_key): their nick's key, and their account's number
    (0: not known, a key of an older version)."""
    return "@" + nick_key(nick) + (f"{ACCOUNT_MARK}{number}" if number else "")


def account_number(owner: str) -> int:
    """The number of the account a seat owner (a Player.seat_key) names; 0: a guest's session, or not
    known."""
    number = owner.partition(ACCOUNT_MARK)[2] if owner.startswith("@") else ""
    return int(number) if number.isascii() and number.isdigit() else 0


@dataclass(eq=False)
class Player:
    secret: str = field(repr=False)  # the id: a password, never shown or logged
    nick: str
    lang: str
    inbox: EventLog  # what only this player sees: entry snapshots, private lines, refusals
    guest: bool = True
    role: str = NO_ROLE  # a registered player's (ROLES); a guest has none
    avatar: str = ""
    free: bool = True
    client: str = ""
    record: tuple[int, int, int, int, str] | None = None  # rating, wins, draws, losses, prestige
    tables: list[int] = field(default_factory=lambda: [LOBBY])
    last_command: int = 0
    last_seen: float = 0.0  # the last request (timers' monotonic time); set by Roster.seen, which sorts by it
    rejected_by: list[str] = field(default_factory=list)  # `vr` lines until acknowledged
    blocked: set[str] = field(default_factory=set)  # nick_key of people whose invitations are refused
    # the players this one ignores (docs/protocol.md, "Ignoring"): nick_key -> the nick as shown; read on
    # every reply, which hides their chat lines only when it is not empty
    ignored: dict[str, str] = field(default_factory=dict)
    # a registered player's setting: private lines from guests are refused (Chats._admit)
    refuses_guest_privates: bool = False
    joined: dict[int, int] = field(default_factory=dict)  # table -> event number of sitting down there
    # table -> event number of a new game there: replies to an older msgNo leave the table out (see reply)
    new_game_at: dict[int, int] = field(default_factory=dict)
    # table -> event number of sitting down again there when the session was restored after a restart
    rejoined: dict[int, int] = field(default_factory=dict)
    # the long polls and push connections of the session waiting now: one player may poll from one
    # client and push from another, or push from two tabs, and the player's own lines wake them all
    waiters: set[asyncio.Future[None]] = field(default_factory=set)
    nudged: bool = False  # lines every reply repeats changed since the last reply, with no poll waiting
    said: deque[tuple[float, str]] = field(default_factory=deque)  # chat in the last minute (flood limit)
    invited: deque[tuple[float, str]] = field(default_factory=deque)  # invitations in the last minute
    turned_away: deque[float] = field(default_factory=deque)  # guests' invitations rejected lately
    linked: deque[float] = field(default_factory=deque)  # lines with a link lately (Limits.chat)
    registered_at: float = 0.0  # the account's Unix time of registration (0: a guest, or not read yet)
    login_key: str = ""  # a registered player's Account.login_key: the account, whatever its nick now
    account: int = 0  # a registered player's Account.number (0: not known, as for the AI players)
    former: tuple[str, ...] = ()  # a registered player's Account.former: the nick keys it had before
    # private lines to this player in the last minute from people they have not written to lately, with
    # the nick_key of each sender; and when this player last wrote to each nick_key (Limits.private)
    private_in: deque[tuple[float, str]] = field(default_factory=deque)
    wrote_to: dict[str, float] = field(default_factory=dict)
    ignore_changes: deque[tuple[float, str]] = field(default_factory=deque)  # in the last minute
    logged_in_at: int = 0  # the last event number before this session began
    fresh: bool = True  # no reply sent yet in this session
    id_hmac: str = field(default="", repr=False)  # finds the session in the store after a restart
    stored: bool = False  # the store keeps this session (not the AI players'), and it is not over
    # last_seen when last handed to the store as quiet_since (see SavedSession); set by
    # SavedSessions.note_quiet, which keeps the set of the quiet
    noted_quiet: float | None = None
    # what the k replies give waits for: its commands' writes stored, and their actions at other
    # members' tables confirmed (server/hub/acknowledged.py)
    acknowledged: Acknowledged = field(default_factory=Acknowledged, repr=False)
    command: int | None = None  # the number of the client command being done, while it is
    k_noted: int | None = None  # the k last noted in the sessions' journal (SavedSessions.note_k)
    host: str = field(default="", repr=False)  # the client's host at login (Origin; "": none known)
    network: str = field(default="", repr=False)  # and its network, counted with the host (Limits)
    # the networks its id may be used from (Roster.standing), the newest last; empty: from anywhere (a
    # session from before they were kept, or one logged in from no known address)
    networks: list[str] = field(default_factory=list, repr=False)
    unlimited: bool = False  # from an address exempt from the limits (--unlimited)
    actions: Bucket = field(default_factory=lambda: Bucket(*PLAYER_ACTIONS), repr=False)
    # a person served by another member of a cluster, at a table of this one: that member's name
    # (server/hub/visitors.py); such a Player is in no roster here, and its lines go to its member
    visiting_from: str = ""
    bot: bool = False  # a program playing through the bot API (docs/bots.md): `R` in its `i` flags
    info: str = field(init=False, repr=False)  # the `i` line

    @property
    def moderator(self) -> bool:
        """A moderator or an admin: deletes chat lines, sanctions players (docs/moderation.md)."""
        return self.role != NO_ROLE

    def flags(self) -> str:
        return ("F" if self.free else "N") + (events.BOT_FLAG if self.bot else "") + self.client

    def ignores(self, nick: str) -> bool:
        return bool(self.ignored) and nick_key(nick) in self.ignored

    def __post_init__(self) -> None:
        self.refresh_info()

    def refresh_info(self) -> None:
        """Rebuild the `i` line after a change: it is sent to every newcomer, so it is kept ready."""
        self.info = events.user_info(self.nick, self.avatar, self.flags(), self.lang, self.record)

    def apply(self, account: Account) -> None:
        """Rating, results, role and (at a login) the players ignored and whether guests' private lines
        are refused, as the account has them."""
        self.role = account.role
        self.avatar = account.avatar
        self.registered_at = account.registered_at
        self.bot = account.bot
        self.login_key = account.login_key or self.login_key
        self.account = account.number or self.account
        self.former = account.former or self.former
        prestige = events.prestige(account.role)
        self.record = (account.rating, account.wins, account.draws, account.losses, prestige)
        if account.ignored is not None:  # read with the account for a session, not after a game
            self.ignored = {nick_key(nick): nick for nick in account.ignored}
        if account.refuses_guest_privates is not None:
            self.refuses_guest_privates = account.refuses_guest_privates
        self.refresh_info()

    @property
    def seat_key(self) -> str:
        """Whom a seat at a game belongs to: a registered player's account (any of their sessions), a
        guest's session (a later guest with the same nick is somebody else, unless it comes from the
        session's network: Tables.seat_back). An account is named by its nick and its number, which is
        never given again: whoever takes a deleted account's nick, by registering or by an admin's
        rename, on any member of a cluster, owns none of its seats (docs/operations.md, "Accounts")."""
        if self.guest:
            return self.id_hmac
        return account_seat_key(self.nick, self.account)

    def nick_type(self, table: Table) -> str:
        kind = MODERATOR_CLASS if self.moderator else GUEST_CLASS if self.guest else REGISTERED_CLASS
        return table.colour_of(self) + kind


@dataclass(eq=False)
class Table:
    uid: int
    chat: ChatRoom
    log: EventLog  # the table's events, which the bus delivers to everyone at it
    people: dict[str, Player] = field(default_factory=dict)  # everyone subscribed, by nick, in arrival order
    waiters: set[asyncio.Future[None]] = field(default_factory=set)  # long polls to wake on the next event
    room: Room | None = None  # the game; None for the lobby
    empty_since: float | None = None
    players_away_since: float | None = None
    kept_until: float = 0.0  # not closed for absence before this moment (timers' time)
    left_by_choice: bool = False  # its last player left it themselves (`q`, `zmienStol`, a logout)
    journal_seq: int = 0  # the last journal entry written for this table
    # A game table's journal as storage has it, or will once it takes what is queued: the entries up to
    # `journal_seq`, each its kind and its data in JSON (None: a number with no entry, such as one taken
    # back), from the open (or the last compaction) on. A take-back replays it (server/hub/takeback.py).
    journal: list[JournalText | None] = field(default_factory=list, repr=False)
    written_mark: int = 0  # Persistence.queued after the table's last write: stored once `written` is here
    # nick -> Player.seat_key of the session (or account) that first sat in that nick's seat
    owners: dict[str, str] = field(default_factory=dict)
    # nick -> (host, network) of the guest session that owns that nick's seat: what a guest's address
    # and network hold (Limits.room_for_a_table), and who may take the seat back (Tables.seat_back). An
    # --unlimited guest's host is "": its network is kept for its coming back alone, counted for none.
    guest_places: dict[str, tuple[str, str]] = field(default_factory=dict)
    opened: dict[str, Any] = field(default_factory=dict)  # the journal's "open" entry
    actions: Bucket = field(default_factory=lambda: Bucket(*TABLE_ACTIONS), repr=False)
    since_compaction: int = 0  # journal entries written since the table's journal was last compacted
    # team players who left the table for good while storage failed: out of the game once it is back
    leaving: set[str] = field(default_factory=set)

    def note(self, entry: JournalText | None) -> int:
        """The next journal number, for `entry` (None: a number kept for a write of the store's own)."""
        self.journal_seq += 1
        if self.room is not None:  # the lobby's chat is not replayed: not kept
            self.journal.append(entry)
        return self.journal_seq

    def entry_at(self, seq: int) -> int | None:
        """The index of journal entry `seq` in `journal`, if it is there."""
        index = seq - (self.journal_seq - len(self.journal) + 1)
        return index if 0 <= index < len(self.journal) else None

    def seat_of(self, player: Player) -> int:
        """The player's seat at the game, if it is theirs and not another session's with their nick."""
        seat = self.room.seat_of(player.nick) if self.room is not None else 0
        owner = self.owners.get(player.nick)
        return seat if seat and owner is not None and owns(owner, player.seat_key) else 0

    def leave_game(self, nick: str, writable: bool) -> None:
        """A team player left the table for good: out of the game (docs/teams.md). Leaving is play, which
        waits while storage fails (`writable` False): then once it is back (Games.storage_changed)."""
        if self.room is not None and writable:
            self.room.leave(nick)
        elif self.room is not None:
            self.leaving.add(nick)

    def seat_entry(self, nick: str) -> dict[str, Any]:
        """The journal's record of who owns the nick's seat (`owners`, `guest_places`)."""
        entry: dict[str, Any] = {"nick": nick, "owner": self.owners[nick]}
        place = self.guest_places.get(nick)
        if place is not None:
            entry["host"], entry["network"] = place
        return entry

    def colour_of(self, player: Player) -> str:
        """`B` for blue's players (odd sides: team one), `W` for red's, "" for anyone else."""
        seat = self.seat_of(player)
        return "" if not seat else "B" if seat % 2 else "W"


@dataclass(frozen=True)
class Standing(enum.Enum):
    """How an id stands for a request from a network (Roster.standing, docs/protocol.md "Guessed ids")."""

    HERE = "here"  # a session that may be used from this network
    ADOPTABLE = "adoptable"  # a guest's session logged in from another network: its id is its password
    STRANGER = "stranger"  # no session, or a registered player's logged in from other networks only
    ENDED_HERE = "ended here"  # a session that ended lately and was used from this network


@dataclass(frozen=True)
class Origin:
    """Where a login comes from, as the web layer sees it: the client's host and network, grouped as
    server/web/networks.py groups addresses ("" when unknown: tests, the AI players)."""

    host: str = ""  # an IPv4 address, an IPv6 /64
    unlimited: bool = False  # an address exempt from the limits (--unlimited)
    network: str = ""  # an IPv4 /24, an IPv6 /48; "" counts the host as its own network

    @property
    def group(self) -> str:
        return self.network or self.host


@dataclass(eq=False)
class Invitation:
    inviter: Player
    invitee: Player  # a team invitation's: the first opponent (side 2), whom the inviter's `vs` names
    game_type: GameType
    # a team invitation (docs/teams.md): every player in turn order, the inviter first and the inviter's
    # team on the odd sides; empty for an invitation of two
    lineup: tuple[Player, ...] = ()
    accepted: set[Player] = field(default_factory=set)  # the invitees who have accepted so far
    sent_at: float = 0.0  # when it was kept (the hub's monotonic clock); it lapses INVITATION_LIFETIME later

    @property
    def invitees(self) -> tuple[Player, ...]:
        return self.lineup[1:] if self.lineup else (self.invitee,)


def parse_table(text: str) -> int:
    number = parse_number(text)
    if number is None:
        raise ProtocolError("badTable", f"'{text[:20]}' is not a table number.")
    return number


def table_number(text: str) -> int:
    number = parse_number(text)
    return LOBBY if number is None else number
