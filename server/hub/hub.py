"""The hub: the only owner of live state (players, tables, chat), run on the event loop.

Every change becomes a numbered event in the log of the table where it happened (everyone at the
table reads it there) or in one player's own log; a reply merges the logs of the player's tables
with its own. The web layer only parses parameters and calls in here.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import random
import secrets
import time as _time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from server.engine.gametype import (
    GameKind,
    GameType,
    GameTypeError,
    Rules,
    StartKind,
    WhoStarts,
    parse_game_type,
)
from server.engine.moves import parse_points, point_to_sgf
from server.engine.replay import ReplayError, analysis_start
from server.engine.sgf import write_record
from server.engine.start import Setup
from server.hub.chat import (
    LOBBY_CHAT_KEPT,
    PRIVATE_KEPT_SECONDS,
    TABLE_CHAT_KEPT,
    ChatEntry,
    ChatRoom,
    PrivateChats,
)
from server.hub.clock import LoopTimers, Timers
from server.hub.computer import COMPUTER_NICKS, Computer, reserved
from server.hub.mailbox import PLAYER_HISTORY, TABLE_HISTORY, Counter, EventLog
from server.hub.persistence import (
    Account,
    FinishedGame,
    LiveSessions,
    MemoryPersistence,
    Persistence,
    SavedSession,
    StorageFailing,
)
from server.hub.rates import Bucket
from server.hub.room import AutoTable, Room
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import (
    MAX_CHAT,
    BadCommand,
    ClientMessage,
    Command,
    Flags,
    ProtocolError,
    chat_line,
    check_id,
    check_lang,
    check_nick,
    clean_text,
    decode_client_text,
    frame,
    look_key,
    nick_key,
    parse_number,
)

log = logging.getLogger(__name__)

LOBBY = 0
PRIVATE_JOURNAL = -1  # the journal of private chat, beside the tables' journals
SESSION_JOURNAL = -2  # each session's k as it moves, until the heartbeat puts it in the session's row
POLL_TIMEOUT = 60.0  # seconds without a poll before a player is logged out
SWEEP_EVERY = 5.0
# A session whose player has not polled for this long at a sweep has its last poll written with the
# heartbeat (docs/protocol.md, "After a restart"); the others count as polling at the heartbeat.
QUIET_AFTER = SWEEP_EVERY
FIRST_J = 1  # the `j` of a reply before any event: never 0, which a reader sends back as "all from the start"
RENUMBER_AT = 2**30  # event numbers start again at a restart above this: MultiPoints reads j as a Java int
MAX_WAIT = 30.0  # cap of the opt-in long poll (`wait=`)
SETTLE_TIMEOUT = 10.0  # longest a reply waits for its writes; then it must not say they are done
# When a game table disappears (zagram's FAQ): nobody at it for a minute; neither player at it for a
# minute and no activity for 15 minutes; or the game over and no activity for an hour.
EMPTY_TABLE_KEPT = 60.0
ABSENT_PLAYERS_KEPT = 60.0
IDLE_TABLE_KEPT = 15 * 60.0
FINISHED_TABLE_KEPT = 60 * 60.0
RESTORED_TABLE_KEPT = 10 * 60.0  # after a restart, players have this long to come back to their table
RESTART_GRACE = 60.0  # seconds before the clock of the player on move runs again after a restart
TOURNAMENT_TABLE_KEPT = 2 * 60 * 60.0  # zagram: an unfinished tournament game stays at least 2 hours
MAX_SAY_HI = 7200
# A table whose journal grew by this many entries is compacted at the next sweep (see _compact).
COMPACT_AFTER = 1_000

# nickType of chat lines written by people (docs/protocol.md): class digit, after the colour
# letter B/W when the writer plays at that table.
GUEST_CLASS = "1"
REGISTERED_CLASS = "3"
MODERATOR_CLASS = "5"
ERROR_TYPE = "e"  # a server line for one player only: why their command was refused
STORAGE_REFUSED = (  # docs/operations.md, "When storage fails"
    "The server cannot save anything just now, so this was not done. "
    "Play goes on when it can; the clocks stand still meanwhile."
)
# Abuse limits (docs/operations.md): per player, over the last minute; and the server's own size.
CHAT_LINES_PER_MINUTE = 20
SAME_LINE_PER_MINUTE = 3
INVITATIONS_PER_MINUTE = 10
# Game actions (moves, take-backs, propositions, pauses, STOP, gifts of time): a player 10 a second
# with bursts of 30, a table 20 a second with bursts of 60; a person at the board needs far fewer,
# and one player's flood of moves and take-backs used to write 1,600 journal rows a second.
PLAYER_ACTIONS = (10.0, 30.0)
TABLE_ACTIONS = (20.0, 60.0)
MAX_PLAYERS = 5_000
MAX_TABLES = 2_500
PLAYERS_PER_ADDRESS = 10  # sessions from one address (a club or a school behind one NAT needs a few)
GAMES_PER_PLAYER = 5  # unfinished games a player plays at once (analysis tables not counted)
ANALYSIS_PER_PLAYER = 3  # analysis tables a player has open
REGISTERED_SHARE = 20  # per cent of the player and table slots that only registered players may fill
RATED_MIN_DOTS = 24  # zagram: fewer dots placed (starting crosses not counted) leave ratings as they are


@dataclass(eq=False)
class Player:
    secret: str = field(repr=False)  # the id: a password, never shown or logged
    nick: str
    lang: str
    inbox: EventLog  # what only this player sees: entry snapshots, private lines, refusals
    guest: bool = True
    moderator: bool = False
    avatar: str = ""
    free: bool = True
    client: str = ""
    record: tuple[int, int, int, int, str] | None = None  # rating, wins, draws, losses, prestige
    tables: list[int] = field(default_factory=lambda: [LOBBY])
    last_command: int = 0
    last_seen: float = 0.0  # the last request (timers' monotonic time)
    rejected_by: list[str] = field(default_factory=list)  # `vr` lines until acknowledged
    blocked: set[str] = field(default_factory=set)  # nick_key of people whose invitations are refused
    joined: dict[int, int] = field(default_factory=dict)  # table -> event number of sitting down there
    # table -> event number of a new game there: replies to an older msgNo leave the table out (see reply)
    new_game_at: dict[int, int] = field(default_factory=dict)
    # table -> event number of sitting down again there when the session was restored after a restart
    rejoined: dict[int, int] = field(default_factory=dict)
    waiter: asyncio.Future[None] | None = None  # while a long poll waits
    said: deque[tuple[float, str]] = field(default_factory=deque)  # chat in the last minute (flood limit)
    invited: deque[tuple[float, str]] = field(default_factory=deque)  # invitations in the last minute
    logged_in_at: int = 0  # the last event number before this session began
    fresh: bool = True  # no reply sent yet in this session
    id_hmac: str = field(default="", repr=False)  # finds the session in the store after a restart
    stored: bool = False  # the store keeps this session (not the AI players'), and it is not over
    noted_quiet: float | None = (
        None  # last_seen when last handed to the store as quiet_since (see SavedSession)
    )
    k_unsaved: bool = False  # k is in the sessions' journal, not yet in the session's row
    # (k replies give, write mark): replies give that k until the writes queued up to the mark are stored;
    # a mark of None is taken at the next reply, when the poll that moved k has queued all its writes
    k_hold: tuple[int, int | None] | None = None
    address: str = field(default="", repr=False)  # the client's address at login ("" after a restart)
    unlimited: bool = False  # from an address exempt from the limits (--unlimited)
    actions: Bucket = field(default_factory=lambda: Bucket(*PLAYER_ACTIONS), repr=False)
    info: str = field(init=False, repr=False)  # the `i` line

    def flags(self) -> str:
        return ("F" if self.free else "N") + self.client

    def __post_init__(self) -> None:
        self.refresh_info()

    def refresh_info(self) -> None:
        """Rebuild the `i` line after a change: it is sent to every newcomer, so it is kept ready."""
        self.info = events.user_info(self.nick, self.avatar, self.flags(), self.lang, self.record)

    @property
    def seat_key(self) -> str:
        """Whom a seat at a game belongs to: a registered player's account (any of their sessions), a
        guest's session (a later guest with the same nick is somebody else)."""
        return self.id_hmac if self.guest else "@" + nick_key(self.nick)

    def nick_type(self, table: Table) -> str:
        kind = MODERATOR_CLASS if self.moderator else GUEST_CLASS if self.guest else REGISTERED_CLASS
        return table.colour_of(self) + kind


@dataclass(eq=False)
class Table:
    uid: int
    chat: ChatRoom
    log: EventLog
    people: dict[str, Player] = field(default_factory=dict)  # everyone subscribed, by nick, in arrival order
    waiters: set[asyncio.Future[None]] = field(default_factory=set)  # long polls to wake on the next event
    room: Room | None = None  # the game; None for the lobby
    empty_since: float | None = None
    players_away_since: float | None = None
    kept_until: float = 0.0  # not closed for absence before this moment (timers' time)
    journal_seq: int = 0  # the last journal entry written for this table
    # nick -> Player.seat_key of the session (or account) that first sat in that nick's seat
    owners: dict[str, str] = field(default_factory=dict)
    opened: dict[str, Any] = field(default_factory=dict)  # the journal's "open" entry
    actions: Bucket = field(default_factory=lambda: Bucket(*TABLE_ACTIONS), repr=False)
    since_compaction: int = 0  # journal entries written since the table's journal was last compacted

    def seat_of(self, player: Player) -> int:
        """The player's seat at the game, if it is theirs and not another session's with their nick."""
        seat = self.room.seat_of(player.nick) if self.room is not None else 0
        return seat if seat and self.owners.get(player.nick) == player.seat_key else 0

    def colour_of(self, player: Player) -> str:
        seat = self.seat_of(player)
        return "B" if seat == 1 else "W" if seat == 2 else ""


@dataclass(frozen=True)
class Origin:
    """Where a login comes from, as the web layer sees it."""

    address: str = ""  # "" when unknown (tests, the AI players)
    unlimited: bool = False  # an address exempt from the limits (--unlimited)


@dataclass(frozen=True)
class Caps:
    """What the server, one address and one player may fill (docs/operations.md, "Abuse limits")."""

    players: int = MAX_PLAYERS
    tables: int = MAX_TABLES
    players_per_address: int = PLAYERS_PER_ADDRESS
    games_per_player: int = GAMES_PER_PLAYER
    analysis_per_player: int = ANALYSIS_PER_PLAYER
    registered_share: int = REGISTERED_SHARE  # per cent

    def for_guests(self, slots: int) -> int:
        """How many of `slots` guests may fill: the rest waits for registered players."""
        return slots - slots * self.registered_share // 100


@dataclass(eq=False)
class Invitation:
    inviter: Player
    invitee: Player
    game_type: GameType


class Hub:
    def __init__(
        self,
        *,
        clock: Callable[[], float] = _time.time,
        poll_timeout: float = POLL_TIMEOUT,
        history: int | None = None,
        timers: Timers | None = None,
        persistence: Persistence | None = None,
        rng: random.Random | None = None,
        caps: Caps | None = None,
    ) -> None:
        self.clock = clock  # wall time, for chat timestamps, records and what outlives a restart
        # monotonic time and deadlines: game clocks, time-outs and limits, which a step of the wall
        # clock must not change
        self.timers = timers or LoopTimers()
        self.persistence: Persistence = persistence or MemoryPersistence()
        self.rng = rng or random.Random()
        self.caps = caps or Caps()
        self.per_address: dict[str, int] = {}  # players logged in from each address (not the unlimited)
        self.invitations: dict[Player, Invitation] = {}  # by inviter
        self.incoming: dict[Player, Invitation] = {}  # by invitee
        self.poll_timeout = poll_timeout
        self.counter = Counter(FIRST_J, reserve=lambda mark: self.persistence.events_reserved(mark))
        self.table_history = history or TABLE_HISTORY
        self.player_history = history or PLAYER_HISTORY
        self.players: dict[str, Player] = {}  # by secret id
        self.unclaimed: dict[str, Player] = {}  # sessions restored after a restart, by id HMAC, until polled
        self.by_nick: dict[str, Player] = {}  # by nick_key(nick)
        self.by_look: dict[str, Player] = {}  # by look_key(nick): no two players online look alike
        self.lobby = Table(LOBBY, ChatRoom(LOBBY_CHAT_KEPT), EventLog(self.table_history))
        self.tables: dict[int, Table] = {LOBBY: self.lobby}
        self.private = PrivateChats()
        self._private_seq = 0
        self._session_seq = 0  # the last entry of the sessions' journal (SESSION_JOURNAL)
        self.moves_played = 0  # for /metrics
        self.lobby_states_built = 0
        # with_subscriptions -> (the last event number then, lines): the lobby's whole state when built
        self._lobby_states: dict[bool, tuple[int, list[str]]] = {}
        self._public_state: tuple[tuple[int, bool, int], str] | None = None  # an anonymous reader's reply
        self.polls_answered = 0
        self._next_uid = 1
        self._sweeper: asyncio.TimerHandle | None = None
        self.computer: Computer | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Begin logging out players who stopped polling (one timer for the whole hub)."""
        loop = asyncio.get_running_loop()
        self._sweeper = loop.call_later(SWEEP_EVERY, self._sweep_and_rearm)

    def enable_computer(self, executor: Executor, workers: int) -> None:
        """The AI players join the lobby (after `restore`, so that they sit back at their games)."""
        self.computer = Computer(self, executor, workers)
        for nick in COMPUTER_NICKS.values():
            secret = f"computer-{secrets.token_hex(16)}"  # no client can send it: ids have no '-'
            self._login(secret, nick, "en", None)
            player = self.players[secret]
            player.last_seen = math.inf  # never timed out
            player.refresh_info()

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    def writes(self) -> int:
        """How many writes were handed to storage so far; see `settled`."""
        return self.persistence.queued

    async def settled(self, since: int) -> bool:
        """If a request changed anything (`writes()` moved on from `since`), wait until it is written,
        so a reply never confirms what a crash could still lose. Requests that changed nothing do not
        wait for other people's writes. False: storage failed, or did not take the writes within
        SETTLE_TIMEOUT; the reply must not say they are done."""
        if self.persistence.queued == since:
            return True
        try:
            async with asyncio.timeout(SETTLE_TIMEOUT):
                await self.persistence.flush()
        except (TimeoutError, StorageFailing):
            return False
        return True

    def _writable(self) -> None:
        """Refuse, before anything changes, a command whose effect storage would have to keep while
        it takes no writes: moves, chat, propositions, clocks, invitations, new tables. Logins and polls
        go on."""
        if self.persistence.storage_failure is not None:
            raise ProtocolError("storage", STORAGE_REFUSED)

    def storage_changed(self, failure: str | None) -> None:
        """Storage failed (`failure`: why) or is back: while it fails nobody can move, so the clocks of
        running games stand still, and go on from where they stood when it is back."""
        for table in list(self.tables.values()):
            room = table.room
            if room is None or room.clock is None or room.game.result is not None:
                continue
            if failure is None:
                room.clock.release()
            else:
                room.clock.hold()
            self._post(table.uid, room.flags())

    def announce_shutdown(self) -> None:
        """A clean stop: every table is told, the clocks are journalled as they are, long polls end."""
        for table in self.tables.values():
            self._server_line(table.uid, "restart", "The server is restarting; games go on when it is back.")
            if table.room is not None:
                table.room.note_clock()
            for waiter in table.waiters:
                _wake(waiter)

    def restore(
        self,
        journals: dict[int, list[tuple[int, str, dict[str, Any]]]],
        next_uid: int,
        sessions: LiveSessions | None = None,
    ) -> None:
        """Rebuild the live tables, the lobby's chat and private chat from the journal after a restart,
        then the sessions, whose players sit back at their tables.

        Clocks stand still while the server is down; the player on move gets RESTART_GRACE seconds
        before theirs runs again, and players have RESTORED_TABLE_KEPT to come back.
        """
        if sessions is not None:
            self._continue_numbering(sessions.event_mark)
        self._next_uid = max(self._next_uid, next_uid)
        k_noted = journals.pop(SESSION_JOURNAL, [])
        self._session_seq = max((seq for seq, _, _ in k_noted), default=0)
        private = journals.pop(PRIVATE_JOURNAL, [])
        for seq, kind, data in private:
            self._private_seq = seq
            with self._setting_aside(PRIVATE_JOURNAL, seq, kind):
                if kind == "private":
                    self.private.add(data["t"], data["from"], data["to"], data["text"], n=data["n"])
                elif kind == "hide":
                    self.private.hide(data["nick"], data["other"])
                else:
                    raise ValueError(f"unknown private chat entry {kind!r}")
        self.private.forget_older_than(int(self.clock()) - PRIVATE_KEPT_SECONDS)
        for uid, entries in sorted(journals.items()):
            try:
                self._restore_table(uid, entries)
            except Exception as failure:  # a table that cannot be opened again: its entries are set aside
                log.exception("table could not be restored %s", Fields(uid=uid))
                if uid != LOBBY:
                    self.tables.pop(uid, None)
                for seq, _, _ in entries:
                    self.persistence.journal_set_aside(
                        uid, seq, f"its table could not be opened: {failure!r}"
                    )
        if sessions is not None:
            self._restore_sessions(sessions, {data["s"]: data["k"] for _, _, data in k_noted})

    def _restore_table(self, uid: int, entries: list[tuple[int, str, dict[str, Any]]]) -> None:
        last_seq = entries[-1][0]
        if uid == LOBBY:
            table, room = self.lobby, None
        else:
            _, kind, data = entries[0]
            if kind != "open":
                raise ValueError(f"journal of table {uid} starts with {kind!r}")
            opened = data
            game_type = parse_game_type(data["type"])
            auto, setup = data.get("auto"), data.get("setup")
            table = self._new_table(
                uid,
                game_type,
                data["blue"],
                data["red"],
                data["seed"],
                AutoTable(auto["tournament"], auto["round"], auto["sayHi"]) if auto is not None else None,
                Setup(
                    tuple(parse_points("".join(setup["b"]))),
                    tuple(parse_points("".join(setup["w"]))),
                    setup["first"],
                )
                if setup is not None
                else None,
            )
            table.opened = opened
            room = table.room
            assert room is not None
            room.quiet = True
            entries = entries[1:]
        for seq, kind, data in entries:
            with self._setting_aside(uid, seq, kind):
                if kind == "seat":
                    table.owners[data["nick"]] = data["owner"]
                elif kind == "chat":
                    table.chat.restore(
                        ChatEntry(
                            data["t"],
                            data["n"],
                            data["nick"],
                            data["type"],
                            data["text"],
                            event=data.get("e", 0),
                        )
                    )
                elif kind == "chatdel":
                    for chat_id in data["ids"]:
                        table.chat.delete(chat_id)
                elif room is not None:
                    room.replay(kind, data)
                else:
                    raise ValueError(f"unknown lobby entry {kind!r}")
        table.journal_seq = last_seq
        table.since_compaction = len(entries)
        if room is None:
            return
        room.quiet = False
        kept = TOURNAMENT_TABLE_KEPT if room.tournament_game and room.auto.tournament else RESTORED_TABLE_KEPT
        table.kept_until = self.timers.now() + kept
        self._note_presence(table)
        if room.clock is not None and room.game.result is None:
            room.clock.set_state(room.clock.state(), grace=RESTART_GRACE)
        if room.game.result is not None and room.archive_number is None:
            self._archive(room)  # it ended just before the server stopped, and was not yet written
        log.info("table restored %s", Fields(uid=uid, moves=len(room.game.moves), result=room.game.result))

    @contextlib.contextmanager
    def _setting_aside(self, uid: int, seq: int, kind: str) -> Iterator[None]:
        """Replay one journal entry; one that fails is set aside (kept for inspection) and the rest of
        its table still comes back."""
        try:
            yield
        except Exception as failure:
            log.warning(
                "journal entry could not be replayed %s",
                Fields(uid=uid, seq=seq, kind=kind, error=repr(failure)),
            )
            self.persistence.journal_set_aside(uid, seq, f"could not be replayed: {failure!r}")

    def _sweep_and_rearm(self) -> None:
        try:
            self.sweep()
        except Exception:  # a bug here must not stop the sweeping for good
            log.exception("sweep failed")
        self._sweeper = asyncio.get_running_loop().call_later(SWEEP_EVERY, self._sweep_and_rearm)

    def sweep(self) -> None:
        now = self.timers.now()
        for player in [p for p in self.players.values() if now - p.last_seen > self.poll_timeout]:
            log.info("timed out %s", Fields(nick=player.nick))
            self._remove(player, reason="timeout")
        self.note_sessions()
        self.private.forget_older_than(int(self.clock()) - PRIVATE_KEPT_SECONDS)
        for table in [t for t in self.tables.values() if t.room is not None and self._expired(t, now)]:
            self._close_table(table)
        for table in self.tables.values():
            if table.room is not None and table.since_compaction >= COMPACT_AFTER:
                self._compact(table)

    def _expired(self, table: Table, moment: float) -> bool:
        if self.persistence.storage_failure is not None:  # closing would end a game it cannot store
            return False
        room = table.room
        assert room is not None
        idle = moment - room.last_activity
        if moment < table.kept_until and room.game.result is None:
            return False
        if table.empty_since is not None and moment - table.empty_since > EMPTY_TABLE_KEPT:
            return True
        away = table.players_away_since
        if away is not None and moment - away > ABSENT_PLAYERS_KEPT and idle > IDLE_TABLE_KEPT:
            return True
        return room.game.result is not None and idle > FINISHED_TABLE_KEPT

    def _close_table(self, table: Table) -> None:
        room = table.room
        assert room is not None
        if room.game.result is None:
            room.abandon()
            self._archive(room)
        for player in list(table.people.values()):
            self._leave(player, table.uid)
            self._post(LOBBY, events.subscriptions(player.nick, player.tables), b_only=True)
        del self.tables[table.uid]
        self.persistence.table_closed(table.uid)
        self._post(LOBBY, events.tables("d", [table.uid]))
        log.info("table closed %s", Fields(uid=table.uid))

    # --- fan-out -------------------------------------------------------------------------------

    def _post(self, uid: int, line: str, *, b_only: bool = False) -> int:
        """An event for everyone at a table (for the lobby: anonymous readers too); its number."""
        table = self.tables[uid]
        number = self.counter.next()
        table.log.post(number, uid, line, b_only=b_only)
        for waiter in table.waiters:
            _wake(waiter)
        if uid != LOBBY and self.computer is not None:
            self.computer.soon(uid)
        return number

    def _personal(self, player: Player, uid: int, line: str) -> None:
        """An event for one player only, in the section of table `uid`."""
        player.inbox.post(self.counter.next(), uid, line)
        if player.waiter is not None:
            _wake(player.waiter)

    def _tell(self, player: Player, uid: int, text: str) -> None:
        """A server line for one player only, e.g. why a command was refused."""
        now = int(self.clock())
        n = self.tables[LOBBY].chat.counter.next(now)
        target = uid if uid in player.tables else LOBBY
        # the sentence may quote what the client sent: it must stay one line of the reply
        line = chat_line(now, n, "", ERROR_TYPE, clean_text(text))
        self._personal(player, target, events.chat_added(line))

    def _snapshot(self, uid: int, *, with_subscriptions: bool = False, seen: int = 0) -> list[str]:
        """Everything someone entering a table needs: people, tables, descriptions, info, chat.

        `seen`: a reader who was at the table up to that event number (a gap, a restart) is not
        sent again the chat lines it has had: MultiPoints shows a history line like a new one."""
        if uid == LOBBY and not seen:
            return self._shared_lobby(with_subscriptions)
        return self._build_snapshot(uid, with_subscriptions=with_subscriptions, seen=seen)

    def _shared_lobby(self, with_subscriptions: bool) -> list[str]:
        """The lobby's whole state, built once and shared by every reply that needs it until the next
        event. Building it costs a line per player and per table (100-166 KB with 5,000 players);
        5,000 of them at once used to take 1.6 GB and stall everyone for seconds. (A state kept
        longer and brought up to date with the lobby's events would differ from a whole state: new
        people as `pa` after `pr`, chat history as new `ca` lines.)"""
        built = self._lobby_states.get(with_subscriptions)
        if built is None or built[0] != self.counter.last:
            built = (self.counter.last, self._build_snapshot(LOBBY, with_subscriptions=with_subscriptions))
            self._lobby_states[with_subscriptions] = built
            self.lobby_states_built += 1
        return list(built[1])  # callers add to their copy

    def _build_snapshot(self, uid: int, *, with_subscriptions: bool, seen: int = 0) -> list[str]:
        table = self.tables[uid]
        lines = [events.people("r", table.people)]
        if uid == LOBBY:
            rooms = [t.room for t in self.tables.values() if t.room is not None]
            lines.append(events.tables("r", (room.uid for room in rooms)))
            for room in rooms:
                lines += [room.description(), room.state()]
            lines += [person.info for person in table.people.values()]
            if with_subscriptions:
                lines += self._subscription_lines()
        elif table.room is not None:
            lines += table.room.snapshot()
        chat = table.chat.lines(after=seen)
        lines += [events.chat_replaced(line) for line in chat]
        return lines

    def _subscription_lines(self) -> list[str]:
        return [events.subscriptions(p.nick, p.tables) for p in self.players.values()]

    def _enter(self, player: Player, uid: int, *announce: str) -> None:
        """Sit at a table: the others get `pa` (and `announce`), the newcomer the table's state."""
        table = self.tables[uid]
        for line in (events.people("a", [player.nick]), *announce):
            self._post(uid, line)
        table.people[player.nick] = player
        self._claim_seat(player, table)
        self._note_presence(table)
        if uid != LOBBY:
            player.tables.append(uid)
        if table.room is not None and table.seat_of(player):
            table.room.arrived(player.nick)
        # the newcomer's next reply carries the table's whole state as it is then (see _news)
        player.joined[uid] = self.counter.next()
        self._post(LOBBY, events.subscriptions(player.nick, player.tables), b_only=True)
        if uid != LOBBY:
            self._save_session(player)

    def _leave(self, player: Player, uid: int) -> None:
        table = self.tables[uid]
        del table.people[player.nick]
        player.joined.pop(uid, None)
        if uid in player.tables and uid != LOBBY:
            player.tables.remove(uid)
            self._save_session(player)
        self._post(uid, events.people("d", [player.nick]))
        self._note_presence(table)

    def _note_presence(self, table: Table) -> None:
        """Remember since when a game table is empty, or its two players away, for its lifetime.

        An AI player never leaves its table: it counts as watching, not as a player who is there, or a
        game against the computer that its person left would stay open for ever."""
        if table.room is None:
            return
        moment = self.timers.now()
        table.empty_since = None if table.people else table.empty_since or moment
        seated = any(table.seat_of(player) and not reserved(nick) for nick, player in table.people.items())
        table.players_away_since = None if seated else table.players_away_since or moment

    # --- sessions ------------------------------------------------------------------------------

    def guest_login(self, secret: str, nick: str, lang: str, origin: Origin | None = None) -> None:
        """Log a guest in; a second login with the same id and nick only refreshes the session."""
        check_id(secret, guest=True)
        check_nick(nick, guest=True)
        self._login(secret, nick, check_lang(lang), None, origin)

    def login(
        self, secret: str, account: Account, lang: str | None = None, origin: Origin | None = None
    ) -> None:
        """Log in a registered player whose id the store has checked."""
        self._login(secret, account.nick, check_lang(lang) if lang else account.lang, account, origin)

    def _login(
        self, secret: str, nick: str, lang: str, account: Account | None, origin: Origin | None = None
    ) -> None:
        known = self._find(secret)
        holder = self.by_nick.get(nick_key(nick)) or self.by_look.get(look_key(nick))
        if known is not None:
            if known.nick != nick:
                raise ProtocolError("idInUse", "This id is logged in with another nick.")
            known.last_command = 0  # a reloaded client numbers its commands from 1 again
            known.k_hold = None
            known.logged_in_at = self.counter.last  # what only they saw before is not news to it
            known.last_seen = self.timers.now()
            if account is not None:  # what an admin changed since shows from this login on
                self._account_changed(account)
            self._save_session(known)
            return
        if holder is not None:
            raise ProtocolError("nickInUse", "This nick is in use.")
        origin = origin or Origin()
        self._check_room_for_a_player(account is None and not reserved(nick), origin)
        player = Player(
            secret=secret,
            nick=nick,
            lang=lang,
            inbox=EventLog(self.player_history),
            guest=account is None and not reserved(nick),  # the AI players own their seats by nick
            last_seen=self.timers.now(),
            logged_in_at=self.counter.last,
            id_hmac=self.persistence.id_hmac(secret),
            address=origin.address,
            unlimited=origin.unlimited,
        )
        if account is not None:
            _apply(account, player)
        self.players[secret] = player
        self.by_nick[nick_key(nick)] = player
        self.by_look[look_key(nick)] = player
        if player.address and not player.unlimited:
            self.per_address[player.address] = self.per_address.get(player.address, 0) + 1
        self._enter(player, LOBBY, player.info)
        # back at the games they play (after a restart, or after their session timed out)
        self._seat_back(player)
        if not reserved(nick):
            player.stored = True
            self._save_session(player)
        log.info("%s login %s", "guest" if account is None else "registered", Fields(nick=nick))

    def _check_room_for_a_player(self, guest: bool, origin: Origin) -> None:
        if len(self.players) >= self.caps.players:
            raise ProtocolError("serverFull", "The server is full; please come back later.")
        if guest and sum(p.guest for p in self.players.values()) >= self.caps.for_guests(self.caps.players):
            raise ProtocolError(
                "serverFull",
                "The server is full for guests; please come back later, or log in with an account.",
            )
        if origin.unlimited or not origin.address:
            return
        if self.per_address.get(origin.address, 0) >= self.caps.players_per_address:
            raise ProtocolError(
                "tooManyPlayers",
                f"{self.caps.players_per_address} players are logged in from your address already.",
            )

    def _seat_back(self, player: Player) -> None:
        for table in list(self.tables.values()):
            room = table.room
            if room is not None and room.seat_of(player.nick) and room.game.result is None:
                if (
                    table.uid not in player.tables
                    and table.owners.get(player.nick, player.seat_key) == player.seat_key
                ):
                    self._enter(player, table.uid)

    def _claim_seat(self, player: Player, table: Table) -> None:
        """The first session to sit in a seat of its nick owns it (a registered player: their account).
        A table set up for a tournament waits for its players' first sessions; an invitation's table is
        claimed by the two players as they sit down."""
        room = table.room
        if room is None or not room.seat_of(player.nick) or player.nick in table.owners:
            return
        table.owners[player.nick] = player.seat_key
        self._journal(table.uid, "seat", {"nick": player.nick, "owner": player.seat_key})

    def _played_room(self, player: Player, table_text: str) -> Room:
        """The room of a game action: a player with a seat's nick acts in it only if the seat is theirs,
        and not faster than a player and a table may."""
        room = self._room(table_text)
        table = self.tables[room.uid]
        if not player.unlimited and not reserved(player.nick):
            now = self.timers.now()
            if not player.actions.take(now):
                raise ProtocolError(
                    "tooFast", f"At most {PLAYER_ACTIONS[0]:.0f} game actions a second; please wait a little."
                )
            if not table.actions.take(now):
                raise ProtocolError(
                    "tooFast", f"Table {room.uid} takes at most {TABLE_ACTIONS[0]:.0f} game actions a second."
                )
        if room.seat_of(player.nick):
            self._claim_seat(player, table)
            if not table.seat_of(player):
                raise ProtocolError(
                    "notYourSeat", f"The seat of {player.nick} at table {room.uid} is another session's."
                )
        return room

    def resume(self, secret: str, nick: str) -> None:
        """zagram's auto-login link hands a live session to a browser: it takes over that session (as
        a second login with the same id would) but never makes one, so a link with someone else's id
        cannot log a stranger in under an identity the link's author knows."""
        player = self._find(secret)
        if player is None:
            raise ProtocolError("notLoggedIn", "This link's session is not live: log in instead.")
        if nick_key(player.nick) != nick_key(nick):
            raise ProtocolError("idInUse", "This id is logged in with another nick.")
        self._login(secret, player.nick, player.lang, None)

    def logout(self, secret: str) -> bool:
        player = self._find(secret)
        if player is None:
            return False
        self._remove(player, reason="logout")
        return True

    def _remove(self, player: Player, *, reason: str) -> None:
        if player.stored:
            player.stored = False
            self.persistence.session_ended(player.id_hmac)
        self.unclaimed.pop(player.id_hmac, None)
        for invitation in [i for i in self.invitations.values() if player in (i.inviter, i.invitee)]:
            self._drop_invitation(invitation)
        for uid in list(reversed(player.tables)):
            self._leave(player, uid)
        del self.players[player.secret]
        del self.by_nick[nick_key(player.nick)]
        del self.by_look[look_key(player.nick)]
        if player.address and not player.unlimited:
            left = self.per_address.pop(player.address) - 1
            if left:
                self.per_address[player.address] = left
        if player.guest:
            self._hide_guest_chats(player.nick)
        log.info("left %s", Fields(nick=player.nick, reason=reason))

    def _hide_guest_chats(self, nick: str) -> None:
        """A guest's session is over: its private conversations are closed on its side, so that the
        next guest to take the nick reads none of them (the others keep their side)."""
        for other in self.private.others_of(nick):
            if self.private.hide(nick, other):
                self._journal_private("hide", {"nick": nick, "other": other})

    def change_lang(self, secret: str, lang: str) -> None:
        player = self._player(secret)
        player.lang = check_lang(lang)
        player.refresh_info()
        self._post(LOBBY, player.info)
        self._save_session(player)

    def _player(self, secret: str) -> Player:
        player = self._find(secret)
        if player is None:
            raise ProtocolError("notLoggedIn", "Not logged in.")
        player.last_seen = self.timers.now()
        return player

    def _find(self, secret: str) -> Player | None:
        """The player with this id. A session restored after a restart is known only by its id's HMAC
        until a request names the id: the first one claims it."""
        player = self.players.get(secret)
        if player is None and self.unclaimed and secret:
            player = self.unclaimed.pop(self.persistence.id_hmac(secret), None)
            if player is not None:
                del self.players[player.secret]
                player.secret = secret
                self.players[secret] = player
                log.info("session resumed %s", Fields(nick=player.nick))
        return player

    # --- sessions across restarts --------------------------------------------------------------

    def _note_k(self, player: Player) -> None:
        """k moved: one entry appended to the sessions' journal, which costs a poll with commands no
        more than its own moves and chat lines do; rewriting the session's row on every such poll
        put 40 ms on the 99th percentile of 2,000 guests' polls. The heartbeat moves it into the row."""
        if player.stored:
            self._session_seq += 1
            data = {"s": player.id_hmac, "k": player.last_command}
            self.persistence.journal(SESSION_JOURNAL, self._session_seq, "k", data)
            player.k_unsaved = True

    def _save_session(self, player: Player) -> None:
        """Hand the session to the store after a change of what it keeps; never for a mere poll."""
        player.k_unsaved = False
        if player.stored:
            self.persistence.session_saved(
                SavedSession(
                    id_hmac=player.id_hmac,
                    nick=player.nick,
                    lang=player.lang,
                    registered=not player.guest,
                    free=player.free,
                    client=player.client,
                    tables=tuple(uid for uid in player.tables if uid != LOBBY),
                    blocked=tuple(sorted(player.blocked)),
                    last_command=player.last_command,
                )
            )

    def note_sessions(self) -> None:
        """The heartbeat, at every sweep and at a clean stop. With it the k each session's journal noted
        goes into its row (and that journal is emptied), and the last polls of the players who had
        stopped polling (only when that changed), so that after a crash each session gets what was
        left of its time-out; one write, however many players poll."""
        now, moment = self.clock(), self.timers.now()
        changed: dict[str, float | None] = {}
        for player in self.players.values():
            if player.k_unsaved:
                self._save_session(player)
            if not player.stored:
                continue
            polling = player.waiter is not None or moment - player.last_seen < QUIET_AFTER
            quiet = None if polling else player.last_seen
            if quiet != player.noted_quiet:
                player.noted_quiet = quiet
                changed[player.id_hmac] = None if quiet is None else now - (moment - quiet)  # wall time
        if self._session_seq:  # every k noted so far is in the rows now
            self.persistence.journal_dropped(SESSION_JOURNAL)
        self.persistence.sessions_seen(now, changed)

    def _continue_numbering(self, mark: int) -> None:
        """Event numbers go on above every number the earlier runs handed out: a msgNo from before the
        restart is then older than anything kept, and gets the whole state (never `sd`, never a gap)."""
        if mark >= RENUMBER_AT:
            log.info("event numbers start again %s", Fields(after=mark))
            mark = 0  # every old msgNo is then beyond j, which also gets the whole state
        self.counter.continue_after(max(mark, FIRST_J, self.counter.last))
        self.lobby.log.dropped = self.counter.last  # for the anonymous stream as well

    def _restore_sessions(self, live: LiveSessions, k_noted: dict[str, int]) -> None:
        """Bring the sessions of the earlier run back, each with what was left of its time-out: its last
        poll counts from the last heartbeat before the stop, and the downtime not at all; and with the
        k the sessions' journal noted after the row was last written (`k_noted`, by id HMAC)."""
        now, moment = self.clock(), self.timers.now()
        alive_at = live.alive_at if live.alive_at is not None else now
        quiet: dict[str, float | None] = {}
        for saved in live.sessions:
            idle = 0.0 if saved.quiet_since is None else max(0.0, alive_at - saved.quiet_since)
            account = live.accounts.get(nick_key(saved.nick)) if saved.registered else None
            gone = saved.registered and account is None  # the account was deleted or renamed meanwhile
            taken = nick_key(saved.nick) in self.by_nick or look_key(saved.nick) in self.by_look
            if idle > self.poll_timeout or gone or taken:
                self.persistence.session_ended(saved.id_hmac)
                if not saved.registered:
                    self._hide_guest_chats(saved.nick)
                continue
            player = self._restore_session(saved, account, moment - idle)
            if k_noted.get(saved.id_hmac, 0) > player.last_command:
                player.last_command = k_noted[saved.id_hmac]
                player.k_unsaved = True  # into the row at the next heartbeat
            quiet[saved.id_hmac] = None if player.noted_quiet is None else now - idle
        # the rows' quiet_since now count from this heartbeat: a second crash soon after still adds up
        self.persistence.sessions_seen(now, quiet)
        if live.sessions:
            ended = len(live.sessions) - len(quiet)
            log.info("sessions restored %s", Fields(restored=len(quiet), ended=ended))

    def _restore_session(self, saved: SavedSession, account: Account | None, last_seen: float) -> Player:
        player = Player(
            secret=f"restored-{secrets.token_hex(16)}",  # no client can send it: ids have no '-'
            nick=saved.nick,
            lang=saved.lang,
            inbox=EventLog(self.player_history),
            free=saved.free,
            client=saved.client,
            last_command=saved.last_command,
            last_seen=last_seen,
            blocked=set(saved.blocked),
            logged_in_at=self.counter.last,
            id_hmac=saved.id_hmac,
        )
        if account is not None:  # a registered player: rating and moderator flag as the account has them now
            player.guest = False
            _apply(account, player)
        self.players[player.secret] = player
        self.by_nick[nick_key(player.nick)] = player
        self.by_look[look_key(player.nick)] = player
        self.unclaimed[saved.id_hmac] = player
        self._enter(player, LOBBY, player.info)
        for uid in saved.tables:
            if uid in self.tables and uid not in player.tables:
                self._enter(player, uid)
        self._seat_back(player)
        player.rejoined = dict(player.joined)
        player.noted_quiet = last_seen if self.timers.now() - last_seen >= QUIET_AFTER else None
        player.stored = True
        if tuple(uid for uid in player.tables if uid != LOBBY) != saved.tables:  # a table closed meanwhile
            self._save_session(player)
        return player

    # --- the stream ----------------------------------------------------------------------------

    def receive(self, secret: str, messages: list[ClientMessage]) -> None:
        """Apply the commands of one poll; commands numbered at or below k are ignored.

        The new k goes to the store before anything the commands change, so that no crash can keep
        their effects and lose the k that says they are done (the client would send them again)."""
        player = self._find(secret)
        if player is None:
            return
        player.last_seen = self.timers.now()
        processed = player.last_command
        numbers = [m.number for m in messages if not isinstance(m, Flags) and m.number is not None]
        if numbers and max(numbers) > processed:
            player.k_hold = (self._k_shown(player), None)
            player.last_command = max(numbers)
            self._note_k(player)
        for message in messages:
            if isinstance(message, Flags):
                self._flags(player, message.text)
                continue
            if message.number is not None and message.number <= processed:
                continue
            if message.number is not None:
                processed = message.number
            if isinstance(message, BadCommand):
                self._tell(player, LOBBY, f"Command refused: {message.reason}.")
                continue
            try:
                self._command(player, message)
            except ProtocolError as refused:
                self._tell(player, _table_number(message.table), str(refused))

    def _command(self, player: Player, command: Command) -> None:
        kind, table, text = command.kind, command.table, command.text
        if _needs_storage(kind, table, text):
            self._writable()
        if kind == "c":
            self.chat(player, table, text)
        elif kind == "b":
            self.subscribe(player, _parse_table(table))
        elif kind == "q":
            self.unsubscribe(player, _parse_table(table))
        elif kind == "v":
            self._invitation_command(player, text)
        elif kind == "s":
            self._played_room(player, table).move(player.nick, text)
        elif kind == "u":
            self._played_room(player, table).propose(player.nick, text)
        elif kind == "t":
            if text not in ("p", "u"):
                raise ProtocolError("badCommand", "t takes p (pause) or u (unpause).")
            self._played_room(player, table).pause(player.nick, text == "p")
        else:
            raise ProtocolError("unsupported", f"Command '{kind}' is not available on this server.")

    def reply(
        self, secret: str, seen: int, *, with_subscriptions: bool, subscriptions_seen: bool = True
    ) -> str:
        """The poll's answer: `ok/m<i>.<j>.<k>/q<table>/.../end` (or `sd/...` for anonymous readers)."""
        self.polls_answered += 1
        player = self._find(secret)
        if player is None:
            return self._public_reply(seen, with_subscriptions)
        if player.fresh:
            # A msgNo the client kept from an earlier session (or from a run before the numbering
            # started again, past 2**30) says nothing about this one: the first reply starts at the login.
            player.fresh = False
            seen = min(seen, player.logged_in_at)
        last = self.counter.last
        left_out = self._left_for_a_new_game(player, seen)
        tables = [uid for uid in player.tables if uid not in left_out]
        if self._covers(player, seen, tables):
            sections = self._news(player, seen, tables, with_subscriptions)
            whole_lobby = seen < player.joined[LOBBY]
        else:
            # numbers go on across restarts (until 2**30, then start again: a larger seen is not ours)
            had = seen if seen <= self.counter.last else 0
            sections = {
                uid: self._snapshot(uid, with_subscriptions=with_subscriptions, seen=had) for uid in tables
            }
            whole_lobby = True
        if with_subscriptions and not subscriptions_seen and not whole_lobby:  # a whole lobby has them
            sections[LOBBY] += self._subscription_lines()
        lines: list[str] = []
        for uid, section in sections.items():
            lines.append(events.section(uid))
            lines += section
        lines += self._invitation_lines(player)
        for uid in left_out:  # numbered above this reply's j: the next poll gets the table's whole state
            player.joined[uid] = self.counter.next()
        return frame(True, seen, last, self._k_shown(player), lines)

    def _k_shown(self, player: Player) -> int:
        """k as replies give it: commands count as processed once their poll's writes are stored. A k
        past writes a crash can still lose would tell the client never to send those commands again."""
        if player.k_hold is None:
            return player.last_command
        held, mark = player.k_hold
        if mark is None:
            mark = self.persistence.queued
            player.k_hold = (held, mark)
        if self.persistence.written < mark:
            return held
        player.k_hold = None
        return player.last_command

    def _new_game(self, room: Room) -> None:
        """A new game on the table: everyone there leaves it for one reply and comes back to it.

        MultiPoints builds a table's board only when the table appears in a reply (its `q` line) and
        never clears it; a reply without the table closes the table's tab. So the one way to show it a
        fresh board is a reply without the table, then its whole state (docs/protocol.md, "new").
        """
        number = self.counter.next()
        for player in self.tables[room.uid].people.values():
            player.new_game_at[room.uid] = number

    def _left_for_a_new_game(self, player: Player, seen: int) -> list[int]:
        """The tables whose new game started after `seen`: this reply leaves them out."""
        left_out = []
        for uid, number in list(player.new_game_at.items()):
            if uid not in player.tables:
                del player.new_game_at[uid]
            elif seen < number:
                left_out.append(uid)
            else:
                del player.new_game_at[uid]
        return left_out

    def _covers(self, player: Player, seen: int, tables: list[int]) -> bool:
        """True when every event after `seen` for this player is still kept."""
        if seen > self.counter.last or not player.inbox.covers(max(seen, player.logged_in_at)):
            return False
        return all(self.tables[uid].log.covers(seen) for uid in tables if seen >= player.joined[uid])

    def _news(
        self, player: Player, seen: int, tables: list[int], with_subscriptions: bool
    ) -> dict[int, list[str]]:
        """The player's events after `seen`, by table, in number order.

        A table the player sat down at after `seen` comes as its whole state now, which already
        holds everything its log says since then. The player's own log starts at the login: a
        client that starts again from msgNo 0 after logging in again gets the state, not old
        private lines as new ones.
        """
        numbered: dict[int, list[tuple[int, str]]] = {}
        for uid in tables:
            if seen < player.joined[uid]:
                # back at a table it sat at before a restart: its client has the chat up to `seen`
                had = seen if player.rejoined.get(uid) == player.joined[uid] else 0
                snapshot = self._snapshot(
                    uid, with_subscriptions=with_subscriptions and uid == LOBBY, seen=had
                )
                numbered[uid] = [(player.joined[uid], line) for line in snapshot]
                continue
            numbered[uid] = [
                (number, line)
                for number, _, line, b_only in self.tables[uid].log.since(seen)
                if with_subscriptions or not b_only
            ]
        mixed = set()
        for number, uid, line, _ in player.inbox.since(max(seen, player.logged_in_at)):
            if uid in numbered:
                numbered[uid].append((number, line))
                mixed.add(uid)
        for uid in mixed:
            numbered[uid].sort()
        return {uid: [line for _, line in section] for uid, section in numbered.items()}

    def _has_news(self, player: Player, seen: int) -> bool:
        if player.inbox.last > seen:
            return True
        return any(player.joined[uid] > seen or self.tables[uid].log.last > seen for uid in player.tables)

    async def wait_for_news(self, secret: str, seen: int, timeout: float) -> None:
        """The opt-in long poll: return when the reader has an event after `seen`, or after `timeout`.

        At once when the reader must start again: an id that is not logged in (the answer is `sd`, log in
        again) or a `seen` beyond the newest event (the numbering began anew: a restart).
        """
        player = self.players.get(secret)
        if (player is None and secret) or seen > self.counter.last:
            return
        if player is None:
            uids = [LOBBY]
            if self.lobby.log.last > seen:
                return
        else:
            uids = list(player.tables)
            if self._has_news(player, seen):
                return
        # a bare future and one timer: no task and no cancellation per poll, which a server full of
        # long polls would otherwise pay a thousand times a second
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        for uid in uids:
            self.tables[uid].waiters.add(waiter)
        if player is not None:
            player.waiter = waiter
        timer = loop.call_later(timeout, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            for uid in uids:
                table = self.tables.get(uid)
                if table is not None:
                    table.waiters.discard(waiter)
            if player is not None and player.waiter is waiter:
                player.waiter = None

    def asks_whole_state(self, secret: str, seen: int) -> bool:
        """Whether a poll with this msgNo gets the lobby's whole state: the costly reply that the web
        layer lets an id or an address ask for only so often."""
        log_ = self.lobby.log
        player = self.players.get(secret) if secret else None
        if player is None:
            return not (seen and seen <= self.counter.last and log_.covers(seen))
        if player.fresh:
            seen = min(seen, player.logged_in_at)
        return seen < player.joined[LOBBY] or seen > self.counter.last or not log_.covers(seen)

    def _public_reply(self, seen: int, with_subscriptions: bool) -> str:
        log_ = self.lobby.log
        if seen and seen <= self.counter.last and log_.covers(seen):  # msgNo 0: start from the current state
            lines = [line for _, _, line, b_only in log_.since(seen) if with_subscriptions or not b_only]
            return frame(False, seen, self.counter.last, 0, [events.section(LOBBY), *lines])
        # the whole lobby: the same text for every reader asking with the same msgNo until the next
        # event, so the web layer can send one encoded body to all of them
        key = (seen, with_subscriptions, self.counter.last)
        if self._public_state is None or self._public_state[0] != key:
            lines = self._snapshot(LOBBY, with_subscriptions=with_subscriptions)
            self._public_state = (
                key,
                frame(False, seen, self.counter.last, 0, [events.section(LOBBY), *lines]),
            )
        return self._public_state[1]

    # --- tables --------------------------------------------------------------------------------

    def set_up_table(
        self,
        game_type: GameType,
        first: str,
        second: str,
        say_hi: tuple[int, int],
        tournament: str | None,
        round: str | None,
        ratings: dict[str, float],
    ) -> int:
        """An organiser's table (setUpTable) between two players who need not be online.

        Blue is `first`, except in `R` games (the server decides), where it is the lower-rated
        player (`ratings`, registered players only), `first` on a tie or without ratings.
        """
        self._writable()
        check_nick(first, guest=first.startswith("*"))
        check_nick(second, guest=second.startswith("*"))
        if nick_key(first) == nick_key(second):
            raise ProtocolError("samePlayer", "pl1 and pl2 are the same player.")
        if not all(0 <= seconds <= MAX_SAY_HI for seconds in say_hi):
            raise ProtocolError("badSayHiTimes", f"sayHiTimes must be K.L with K and L in 0..{MAX_SAY_HI}.")
        if game_type.kind in (GameKind.AI, GameKind.ANALYSIS) or game_type.start.kind is StartKind.SGF:
            raise ProtocolError("badGameType", "A tournament table is a game between two players.")
        self._check_room_for_a_table()
        blue, red = first, second
        if game_type.kind is GameKind.RANKED and game_type.who_starts is WhoStarts.SERVER:
            if first in ratings and second in ratings and ratings[second] < ratings[first]:
                blue, red = second, first
        if tournament is not None:
            game_type = dataclasses.replace(game_type, tournament=tournament)
        auto = AutoTable(tournament, round, {first: say_hi[0], second: say_hi[1]})
        table = self.open_table(game_type, blue, red, auto)
        if tournament is not None:
            table.kept_until = self.timers.now() + TOURNAMENT_TABLE_KEPT
            self.persistence.tournament_table(
                table.uid, tournament, round, blue, red, events.game_type_text(game_type)
            )
        return table.uid

    def open_table(
        self,
        game_type: GameType,
        blue: str,
        red: str,
        auto: AutoTable | None = None,
        setup: Setup | None = None,
    ) -> Table:
        """A new game table, announced in the lobby (`ga`, `d`, `x`); its players sit at it."""
        uid = self._next_uid
        self._next_uid += 1
        seed = self.rng.randrange(2**32)
        table = self._new_table(uid, game_type, blue, red, seed, auto, setup)
        self.persistence.table_opened(uid)
        opened: dict[str, Any] = {
            "type": events.game_type_text(game_type),
            "blue": blue,
            "red": red,
            "seed": seed,
        }
        if auto is not None:
            opened["auto"] = {"tournament": auto.tournament, "round": auto.round, "sayHi": auto.say_hi}
        if setup is not None:
            opened["setup"] = {
                "b": [point_to_sgf(p) for p in setup.black],
                "w": [point_to_sgf(p) for p in setup.white],
                "first": setup.first,
            }
        table.opened = opened
        self._journal(uid, "open", opened)
        self._note_presence(table)
        self._post(LOBBY, events.tables("a", [uid]))
        self._post(LOBBY, table.room.description())
        self._post(LOBBY, table.room.state())
        for nick in (blue, red):
            player = self.by_nick.get(nick_key(nick))
            if player is not None and uid not in player.tables:
                self._enter(player, uid)
        log.info("table opened %s", Fields(uid=uid, blue=blue, red=red, type=game_type))
        return table

    def _new_table(
        self,
        uid: int,
        game_type: GameType,
        blue: str,
        red: str,
        seed: int,
        auto: AutoTable | None = None,
        setup: Setup | None = None,
    ) -> Table:
        table = Table(uid, ChatRoom(TABLE_CHAT_KEPT), EventLog(self.table_history))
        table.room = Room(
            uid,
            game_type,
            blue,
            red,
            self.timers,
            seed=seed,
            say_table=lambda line: self._post(uid, line),
            say_lobby=lambda line: self._post(LOBBY, line),
            tell=lambda code, text: self._server_line(uid, code, text),
            finished=self._game_over,
            new_game=self._new_game,
            note=lambda kind, data: self._journal(uid, kind, data),
            auto=auto,
            setup=setup,
        )
        self.tables[uid] = table
        return table

    def _journal(self, uid: int, kind: str, data: dict[str, Any]) -> None:
        if kind == "move":  # every accepted move is journalled exactly once: count it here
            self.moves_played += 1
        table = self.tables[uid]
        table.journal_seq += 1
        table.since_compaction += 1
        self.persistence.journal(uid, table.journal_seq, kind, data)

    def _compact(self, table: Table) -> None:
        """Write the table's journal again as the few entries that rebuild it as it is now, in place of
        all it has: a restart then replays a short journal however long the table has lived."""
        room = table.room
        assert room is not None
        if room.game.result is not None and room.archive_number is None:
            return  # the game's record is on its way to the archive: the journal must say when it is there
        entries: list[tuple[str, dict[str, Any]]] = [("open", table.opened)]
        entries += [("seat", {"nick": nick, "owner": owner}) for nick, owner in table.owners.items()]
        if room.games_played:
            entries.append(("games", {"n": room.games_played}))
        entries += room.compacted()
        if room.archive_number is not None:
            entries.append(("archived", {"number": room.archive_number, "game": room.games_played}))
        entries += [("chat", _chat_data(entry)) for entry in table.chat.entries]
        gone = [entry.chat_id for entry in table.chat.entries if entry.deleted]
        if gone:
            entries.append(("chatdel", {"ids": gone}))
        first = table.journal_seq + 1
        rows = [(first + i, kind, data) for i, (kind, data) in enumerate(entries)]
        self.persistence.journal_compacted(table.uid, table.journal_seq, rows)
        log.info("journal compacted %s", Fields(uid=table.uid, entries=table.since_compaction, now=len(rows)))
        table.journal_seq += len(rows)
        table.since_compaction = 0

    def _room(self, table_text: str) -> Room:
        uid = _parse_table(table_text)
        table = self.tables.get(uid)
        if table is None or table.room is None:
            raise ProtocolError("noSuchTable", f"There is no game table {uid}.")
        return table.room

    def _server_line(self, uid: int, code: str, text: str) -> None:
        """A server chat line at a table, kept in its chat: empty nick, the event's code as nickType."""
        entry = self.tables[uid].chat.add(int(self.clock()), "", code, text)
        entry.event = self._post(uid, events.chat_added(entry.line()))
        self._journal_chat(uid, entry)

    def _journal_private(self, kind: str, data: dict[str, Any]) -> None:
        self._private_seq += 1
        self.persistence.journal(PRIVATE_JOURNAL, self._private_seq, kind, data)

    def _journal_chat(self, uid: int, entry: ChatEntry) -> None:
        self._journal(uid, "chat", _chat_data(entry))

    def _game_over(self, room: Room) -> None:
        """The lobby hears a game's result once: with its archive number when the record is written,
        at once when there is nothing to archive. Two `x` lines with a result would be two results to
        an organiser's reader (roboCup reports every one it reads)."""
        if room.analysis or not self._archive(room):
            self._post(LOBBY, room.state())

    def _archive(self, room: Room) -> bool:
        """Hand a finished game with at least one move to the store; once it is written, its number
        goes into `x` and the players' new ratings into their `i` lines. False: nothing to archive."""
        tournament = room.auto.tournament if room.tournament_game and room.auto is not None else None
        if not room.game.moves and tournament is None:  # tournament games are kept however short
            return False
        game, table = room.game, self.tables[room.uid]
        date = _time.strftime("%Y-%m-%d", _time.gmtime(self.clock()))
        table.journal_seq += 1
        finished = FinishedGame(
            uid=room.uid,
            record=room.record(date),
            blue=room.blue,
            red=room.red,
            game_type=events.game_type_text(room.game_type),
            result=game.result,
            rated=(
                room.game_type.kind is GameKind.RANKED
                and game.dots_placed() >= RATED_MIN_DOTS
                and game.result is not None
                and game.result.reason != "Void"
            ),
            tournament=tournament,
            game_index=room.games_played,
            journal_seq=table.journal_seq,
        )
        games_played = room.games_played

        def done(number: int, accounts: list[Account]) -> None:
            if self.tables.get(room.uid) is table and room.games_played == games_played:
                room.archive_number = number
                self._server_line(room.uid, f"l{number}", f"Game saved as number {number}.")
                self._post(room.uid, room.state())
                self._post(LOBBY, room.state())
            for account in accounts:
                self._account_changed(account)
            log.info("game archived %s", Fields(uid=room.uid, number=number, result=game.result))

        self.persistence.archive(finished, done)
        return True

    def table_record(self, uid: int) -> str | None:
        """The SGF record of a game table's current game, or None when there is no such table."""
        table = self.tables.get(uid)
        if table is None or table.room is None:
            return None
        return write_record(table.room.record(_time.strftime("%Y-%m-%d", _time.gmtime(self.clock()))))

    def _account_changed(self, account: Account) -> None:
        """New rating and results after a game: the player's `i` line, if they are here."""
        player = self.by_nick.get(nick_key(account.nick))
        if player is not None and not player.guest:
            before = player.info
            _apply(account, player)
            if player.info != before:
                self._post(LOBBY, player.info)

    # --- game actions from the old-style endpoints ---------------------------------------------

    def move(self, secret: str, table: str, where: str, colour: int | None = None) -> None:
        self._writable()
        player = self._player(secret)
        self._played_room(player, table).move(player.nick, where, colour)

    def draw_enclosure(self, secret: str, table: str, where: str) -> None:
        self._writable()
        player = self._player(secret)
        self._played_room(player, table).draw_enclosure(player.nick, where)

    def propose(self, secret: str, table: str, proposal: str) -> None:
        self._writable()
        player = self._player(secret)
        self._played_room(player, table).propose(player.nick, proposal)

    def stop(self, secret: str, table: str) -> None:
        self._writable()
        player = self._player(secret)
        self._played_room(player, table).stop(player.nick)

    def give_time(self, secret: str, table: str, seconds: str) -> None:
        self._writable()
        player = self._player(secret)
        self._played_room(player, table).give_time(player.nick, seconds)

    # --- invitations ---------------------------------------------------------------------------

    def invite(self, secret: str, whom: str, game_type_text: str, archived: str | None = None) -> None:
        """`archived`: the SGF record an analysis of an archived game (`SGFz<n>`) starts from."""
        self._writable()
        self._invite(self._player(secret), whom, game_type_text, archived)

    def answer_invitation(self, secret: str, answer: str) -> None:
        """`a` accept, `r` reject, `b` reject and block, `c` cancel own, `o` acknowledge a rejection."""
        if _needs_storage("v", "", answer):
            self._writable()
        self._invitation_command(self._player(secret), answer)

    def _invitation_command(self, player: Player, text: str) -> None:
        if text.startswith("s."):
            _, whom, game_type_text = (text.split(".", 2) + [""])[:3]
            self._invite(player, decode_client_text(whom), game_type_text)
        elif text == "a":
            self._accept(player)
        elif text in ("r", "b"):
            invitation = self._incoming(player)
            self._drop_invitation(invitation)
            invitation.inviter.rejected_by.append(player.nick)
            if text == "b":
                player.blocked.add(nick_key(invitation.inviter.nick))
                self._save_session(player)
        elif text == "c":
            invitation = self.invitations.get(player)
            if invitation is None:
                raise ProtocolError("noInvitation", "You have no invitation to cancel.")
            self._drop_invitation(invitation)
        elif text == "o":
            if not player.rejected_by:
                raise ProtocolError("noInvitation", "No rejected invitation to acknowledge.")
            player.rejected_by.clear()
            _end_long_polls(player)
        else:
            raise ProtocolError("badCommand", "v takes s.NICK.GAMETYPE, a, r, b, c or o.")

    def _invite(self, player: Player, whom: str, game_type_text: str, archived: str | None = None) -> None:
        invitee = self.by_nick.get(nick_key(whom))
        if invitee is None:
            raise ProtocolError("notOnline", f"{whom} is not online.")
        try:
            game_type = parse_game_type(game_type_text)
        except GameTypeError as refused:
            raise ProtocolError("badGameType", f"Game type refused: {refused}.") from None
        if game_type.kind is GameKind.ANALYSIS:
            self._open_analysis(player, invitee, game_type, archived)
            return
        if invitee is player:
            raise ProtocolError("badNick", "You cannot invite yourself.")
        if game_type.start.kind is StartKind.SGF:
            raise ProtocolError("badGameType", "Archived positions are for analysis tables (type a).")
        if game_type.tournament:
            raise ProtocolError("badGameType", "Tournament games are set up by organisers.")
        if nick_key(player.nick) in invitee.blocked:
            raise ProtocolError("blocked", f"{invitee.nick} does not accept your invitations.")
        if not invitee.free:
            raise ProtocolError("busy", f"{invitee.nick} is busy.")
        pending = self.incoming.get(invitee)
        if pending is not None and pending.inviter is not player:
            raise ProtocolError("busy", f"{invitee.nick} is answering another invitation.")
        computer = self.computer is not None and self.computer.level_of(invitee.nick) is not None
        if computer or game_type.kind is GameKind.AI:
            self._check_computer_game(player, invitee, game_type, computer)
        self._check_games_of(player)
        _within_a_minute(
            player.invited, self.timers.now(), INVITATIONS_PER_MINUTE, "tooManyInvitations", "invitations"
        )
        player.invited.append((self.timers.now(), invitee.nick))
        if computer:
            self._play_the_computer(player, invitee, game_type)
            return
        if player in self.invitations:
            self._drop_invitation(self.invitations[player])
        invitation = Invitation(player, invitee, game_type)
        self.invitations[player] = invitation
        self.incoming[invitee] = invitation
        _end_long_polls(player, invitee)

    def _open_analysis(
        self, player: Player, invitee: Player, game_type: GameType, archived: str | None
    ) -> None:
        """An invitation to oneself with an analysis game type opens the table at once."""
        if invitee is not player:
            raise ProtocolError("badGameType", "An analysis table is opened by inviting yourself.")
        if nick_key(game_type.rights.analyser_nick) != nick_key(player.nick):
            raise ProtocolError(
                "badGameType", f"The analyser in the game type must be you: c___SUsuen{player.nick}."
            )
        setup, moves = None, []
        if game_type.start.kind is StartKind.SGF:
            if archived is None:
                raise ProtocolError(
                    "badGameType", "An analysis of an archived game is opened with co=zapraszam."
                )
            try:
                setup, moves = analysis_start(
                    archived, game_type.width, game_type.height, game_type.automatic_enclosures
                )
            except ReplayError as refused:
                raise ProtocolError("badGameType", f"Game {game_type.start.number}: {refused}.") from None
            if not all(game_type.rights.analyser_places(colour) for colour, _ in moves):
                raise ProtocolError(
                    "badGameType", "The archived game has dots of a colour the analyser may not place."
                )
        self._check_room_for_a_table(player)
        self._check_games_of(player, analysis=True)
        _within_a_minute(
            player.invited, self.timers.now(), INVITATIONS_PER_MINUTE, "tooManyInvitations", "invitations"
        )
        player.invited.append((self.timers.now(), player.nick))
        room = self.open_table(game_type, player.nick, player.nick, setup=setup).room
        assert room is not None
        for colour, where in moves:
            room.move(player.nick, where, colour)

    def _check_computer_game(self, player: Player, ai: Player, game_type: GameType, computer: bool) -> None:
        if not computer:
            names = ", ".join(COMPUTER_NICKS.values())
            raise ProtocolError("badGameType", f"Games of type A are against the computer: invite {names}.")
        if game_type.kind is not GameKind.AI:
            raise ProtocolError("badGameType", f"{ai.nick} plays only games of type A (the computer).")
        if game_type.rules is not Rules.STANDARD:
            raise ProtocolError("badGameType", "The computer plays standard rules only.")
        assert self.computer is not None
        for table in self.tables.values():
            room = table.room
            seat = room.seat_of(player.nick) if room is not None else 0
            if seat and room.game.result is None and self.computer.level_of(room.nick_of(3 - seat)):
                raise ProtocolError("busy", f"First finish your game with the computer at table {table.uid}.")
        self._check_room_for_a_table(player)

    def _play_the_computer(self, player: Player, ai: Player, game_type: GameType) -> None:
        """An invitation to an AI player opens the table at once: the computer always accepts."""
        if game_type.who_starts is WhoStarts.INVITER:
            blue, red = player, ai
        elif game_type.who_starts is WhoStarts.INVITED:
            blue, red = ai, player
        else:
            blue, red = self._server_decides(player, ai, game_type)
        self.open_table(game_type, blue.nick, red.nick)

    def _incoming(self, player: Player) -> Invitation:
        invitation = self.incoming.get(player)
        if invitation is None:
            raise ProtocolError("noInvitation", "You have no invitation to answer.")
        return invitation

    def _drop_invitation(self, invitation: Invitation) -> None:
        self.invitations.pop(invitation.inviter, None)
        self.incoming.pop(invitation.invitee, None)
        _end_long_polls(invitation.inviter, invitation.invitee)

    def _accept(self, player: Player) -> None:
        invitation = self._incoming(player)
        self._check_room_for_a_table(invitation.inviter, player)
        self._check_games_of(invitation.inviter)
        self._check_games_of(player)
        self._drop_invitation(invitation)
        inviter, game_type = invitation.inviter, invitation.game_type
        if game_type.who_starts is WhoStarts.INVITER:
            blue, red = inviter, player
        elif game_type.who_starts is WhoStarts.INVITED:
            blue, red = player, inviter
        else:
            blue, red = self._server_decides(inviter, player, game_type)
        self.open_table(game_type, blue.nick, red.nick)

    def _server_decides(self, first: Player, second: Player, game_type: GameType) -> tuple[Player, Player]:
        """Ranked: the lower rating starts; free games, equal ratings and guests: at random."""
        if game_type.kind is GameKind.RANKED and first.record and second.record:
            if first.record[0] != second.record[0]:
                return (first, second) if first.record[0] < second.record[0] else (second, first)
        return (first, second) if self.rng.random() < 0.5 else (second, first)

    def _invitation_lines(self, player: Player) -> list[str]:
        lines = []
        incoming = self.incoming.get(player)
        if incoming is not None:
            lines.append(f"vg{incoming.inviter.nick}.{events.game_type_text(incoming.game_type)}")
        outgoing = self.invitations.get(player)
        if outgoing is not None:
            lines.append(f"vs{outgoing.invitee.nick}.{events.game_type_text(outgoing.game_type)}")
        lines += [f"vr{nick}" for nick in player.rejected_by]
        return lines

    def subscribe(self, player: Player, uid: int) -> None:
        if uid not in self.tables:
            raise ProtocolError("noSuchTable", f"There is no table {uid}.")
        if uid in player.tables:
            return
        self._enter(player, uid)

    def unsubscribe(self, player: Player, uid: int) -> None:
        if uid == LOBBY:
            raise ProtocolError("badTable", "The main room cannot be left.")
        if uid not in player.tables:
            raise ProtocolError("notAtTable", f"You are not at table {uid}.")
        self._leave(player, uid)
        self._post(LOBBY, events.subscriptions(player.nick, player.tables), b_only=True)

    def change_table(self, secret: str, uid: int) -> None:
        """The old `zmienStol`: leave every game table, then sit at `uid` (0 = only the lobby)."""
        player = self._player(secret)
        if uid != LOBBY and uid not in self.tables:
            raise ProtocolError("noSuchTable", f"There is no table {uid}.")
        for old in [t for t in player.tables if t not in (LOBBY, uid)]:
            self.unsubscribe(player, old)
        if uid != LOBBY:
            self.subscribe(player, uid)

    # --- chat ----------------------------------------------------------------------------------

    def chat_from(self, secret: str, table: str, text: str) -> None:
        """The old `dodajWpis`: the same as a `c` command."""
        if _needs_storage("c", table, text):
            self._writable()
        self.chat(self._player(secret), table, text)

    def chat(self, player: Player, table: str, raw: str) -> None:
        if table == "get":
            self._private_get(player, raw)
            return
        if table == "del":
            self._private_delete(player, raw)
            return
        if table == "delmsg":
            self._delete_message(player, raw)
            return
        text = _chat_text(raw)
        self._check_flood(player, text)
        if table.startswith("_"):
            self._private_send(player, table[1:], text)
            return
        uid = _parse_table(table)
        if uid not in player.tables:
            raise ProtocolError("notAtTable", f"You are not at table {uid}.")
        room = self.tables[uid]
        entry = room.chat.add(int(self.clock()), player.nick, player.nick_type(room), text)
        entry.event = self._post(uid, events.chat_added(entry.line()))
        self._journal_chat(uid, entry)

    def _check_flood(self, player: Player, text: str) -> None:
        """At most CHAT_LINES_PER_MINUTE lines a minute, the same line at most SAME_LINE_PER_MINUTE times."""
        now = self.timers.now()
        _within_a_minute(player.said, now, CHAT_LINES_PER_MINUTE, "chatFlood", "chat lines")
        if sum(1 for _, said in player.said if said == text) >= SAME_LINE_PER_MINUTE:
            raise ProtocolError("repeatedLine", "The same line again: it was not sent.")
        player.said.append((now, text))

    def _check_room_for_a_table(self, *players: Player) -> None:
        """Room for one more game table; between guests (or a guest's analysis) not in the tables kept
        for registered players."""
        opened = len(self.tables) - 1
        if opened >= self.caps.tables or (
            any(player.guest for player in players) and opened >= self.caps.for_guests(self.caps.tables)
        ):
            raise ProtocolError("tooManyTables", "No more game tables can be opened now; please try later.")

    def _check_games_of(self, player: Player, *, analysis: bool = False) -> None:
        """A player plays at most games_per_player unfinished games, and has at most analysis_per_player
        analysis tables, at once."""
        if player.unlimited or reserved(player.nick):
            return
        most = self.caps.analysis_per_player if analysis else self.caps.games_per_player
        held = 0
        for table in self.tables.values():
            room = table.room
            if room is None or (room.game_type.kind is GameKind.ANALYSIS) is not analysis:
                continue
            if (analysis or room.game.result is None) and table.seat_of(player):
                held += 1
        if held >= most:
            what = "analysis tables open" if analysis else "unfinished games"
            raise ProtocolError("tooManyGames", f"{player.nick} has {held} {what} already (at most {most}).")

    def _private_send(self, player: Player, nick: str, text: str) -> None:
        other = self.by_nick.get(nick_key(decode_client_text(nick)))
        if other is None:
            raise ProtocolError("notOnline", f"{decode_client_text(nick)} is not online.")
        if other is player:
            raise ProtocolError("badNick", "A private message needs another person.")
        entry = self.private.add(int(self.clock()), player.nick, other.nick, text)
        self._journal_private(
            "private", {"t": entry.time, "n": entry.n, "from": player.nick, "to": other.nick, "text": text}
        )
        line = events.chat_added(entry.line())
        self._personal(player, LOBBY, line)
        self._personal(other, LOBBY, line)

    def _private_get(self, player: Player, what: str) -> None:
        now = int(self.clock())
        if what.startswith("_"):
            nick = _other_nick(what[1:])
            talk = self.private.get(player.nick, nick)
            entries = talk.visible_to(player.nick) if talk is not None else []
            if not entries:
                first, second = sorted((player.nick, nick))
                n = self.private.counter.next(now)
                self._personal(player, LOBBY, events.chat_added(f"{now}_{n}.{first}-{second}.nochat."))
            for entry in entries:
                self._personal(player, LOBBY, events.chat_added(entry.line()))
            return
        minutes = parse_number(what)
        if minutes is None:
            raise ProtocolError("badCommand", "get needs minutes (a number, 0 = all) or _nick.")
        since = 0 if minutes == 0 else now - 60 * minutes
        for talk, last in self.private.partners(player.nick, since):
            self._personal(player, LOBBY, events.chat_added(f"{last.chat_id}.{talk.name}.-."))

    def _private_delete(self, player: Player, what: str) -> None:
        if not what.startswith("_") or len(what) < 2:
            raise ProtocolError("badCommand", "del needs _nick.")
        nick = _other_nick(what[1:])
        if not self.private.hide(player.nick, nick):
            raise ProtocolError("noSuchLine", f"There is no conversation with {nick}.")
        self._journal_private("hide", {"nick": player.nick, "other": nick})
        now = int(self.clock())
        first, second = sorted((player.nick, nick))
        n = self.private.counter.next(now)
        self._personal(player, LOBBY, events.chat_added(f"{now}_{n}.{first}-{second}.del."))

    def _delete_message(self, player: Player, what: str) -> None:
        """Moderators only: `delmsg.<table>.<time_n>` or `delmsg.<table>._<nick>`."""
        if not player.moderator:
            raise ProtocolError("notModerator", "Only moderators may delete chat lines.")
        table_text, _, target = what.partition(".")
        uid = _parse_table(table_text)
        if uid not in self.tables:
            raise ProtocolError("noSuchTable", f"There is no table {uid}.")
        room = self.tables[uid].chat
        gone = (
            room.delete_by(decode_client_text(target[1:])) if target.startswith("_") else room.delete(target)
        )
        if not gone:
            raise ProtocolError("noSuchLine", "No such chat line.")
        self._journal(uid, "chatdel", {"ids": [entry.chat_id for entry in gone]})
        for entry in gone:
            self._post(uid, events.chat_deleted(entry.chat_id))

    # --- own flags -----------------------------------------------------------------------------

    def _flags(self, player: Player, text: str) -> None:
        """`i0nJa` / `i0nJb`: `a` available, `b` busy, `J` the Java client (0 and n: unknown, kept out)."""
        free, client = player.free, player.client
        if "a" in text:
            free = True
        if "b" in text:
            free = False
        if "J" in text:
            client = "J"
        if (free, client) != (player.free, player.client):
            player.free, player.client = free, client
            player.refresh_info()
            self._post(LOBBY, player.info)
            self._save_session(player)


def _chat_data(entry: ChatEntry) -> dict[str, Any]:
    return {
        "t": entry.time,
        "n": entry.n,
        "nick": entry.nick,
        "type": entry.nick_type,
        "text": entry.text,
        "e": entry.event,
    }


def _apply(account: Account, player: Player) -> None:
    player.moderator = account.moderator
    player.avatar = account.avatar
    player.record = (account.rating, account.wins, account.draws, account.losses, "")
    player.refresh_info()


def _needs_storage(kind: str, table: str, text: str) -> bool:
    """Whether a command changes what storage keeps (moves, chat, propositions, clocks, invitations,
    tables): refused while storage fails. Subscriptions, own flags and `c get` only touch the session."""
    if kind == "c":
        return table != "get"
    if kind == "v":
        return text == "a" or text.startswith("s.")
    return kind in ("s", "u", "t")


def _within_a_minute(recent: deque[tuple[float, str]], now: float, limit: int, code: str, what: str) -> None:
    """Forget what is older than a minute; refuse if `limit` things happened within it."""
    while recent and recent[0][0] <= now - 60:
        recent.popleft()
    if len(recent) >= limit:
        raise ProtocolError(code, f"At most {limit} {what} a minute; please wait a little.")


def _other_nick(text: str) -> str:
    """The nick a private-chat command names; it is written back into lines, so it must be a nick."""
    nick = decode_client_text(text)
    check_nick(nick, guest=nick.startswith("*"))
    return nick


def _end_long_polls(*players: Player) -> None:
    """Invitation lines (vg, vs, vr) are state repeated in every reply, not events: a long poll waiting
    for an event would show a change only when it timed out."""
    for player in players:
        if player.waiter is not None:
            _wake(player.waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _parse_table(text: str) -> int:
    number = parse_number(text)
    if number is None:
        raise ProtocolError("badTable", f"'{text[:20]}' is not a table number.")
    return number


def _table_number(text: str) -> int:
    number = parse_number(text)
    return LOBBY if number is None else number


def _chat_text(raw: str) -> str:
    text = clean_text(decode_client_text(raw))
    if not text.strip():
        raise ProtocolError("emptyMessage", "An empty message was not sent.")
    if len(text) > MAX_CHAT:
        raise ProtocolError(
            "tooLong", f"Message too long ({len(text)} characters, at most {MAX_CHAT}); it was not sent."
        )
    return text
