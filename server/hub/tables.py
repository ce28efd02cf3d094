"""The live tables, the lobby among them: the only owner of the tables by number, who sits at each, the
seats' owners and each table's journal.

A table's events go out through the bus; its game (server/hub/room.py) is played by server/hub/games.py.
`Tables` reads as a mapping of table number to `Table`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView
from typing import Any, Protocol

from server.engine.gametype import GameType
from server.engine.moves import point_to_sgf
from server.engine.start import Setup
from server.hub.bus import LocalBus
from server.hub.chat import LOBBY_CHAT_KEPT, TABLE_CHAT_KEPT, ChatEntry, ChatRoom
from server.hub.context import Context
from server.hub.guestseats import GuestSeats
from server.hub.joined import JoinedTexts
from server.hub.model import LOBBY, Player, Table, parse_table, reserved
from server.hub.numbers import TableNumbers
from server.hub.room import AutoTable, JournalText, Room, journal_entry
from server.hub.roster import Roster
from server.hub.saved import SavedSessions
from server.hub.seating import Seating
from server.hub.sentences import for_player
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import LINE_SEPARATOR, ProtocolError, chat_line, clean_text

log = logging.getLogger(__name__)


ERROR_TYPE = "e"  # a server line for one player only: why their command was refused


class Elsewhere(Protocol):
    """The tables of the other members of a cluster, as the tables here need them (Mirrors)."""

    def has(self, uid: int) -> bool: ...
    def join(self, player: Player, uid: int, *, chosen: bool) -> None: ...
    def ended(self, player: Player, *, for_good: bool) -> None: ...
    def leave(self, player: Player, uid: int, *, for_good: bool = False) -> None: ...
    def seat_back(self, player: Player) -> None: ...
    def follow_rename(self, player: Player) -> None: ...
    def moved(self, uid: int, owner: str | None) -> list[Player]: ...


class Visiting(Protocol):
    """The people of other members at the tables here, as the tables need them (Visitors)."""

    def left(self, visitor: Player, uid: int) -> None: ...
    def new_game(self, uid: int) -> None: ...


class Tables(Mapping[int, Table]):
    def __init__(self, ctx: Context, bus: LocalBus, roster: Roster, saved: SavedSessions) -> None:
        self.ctx, self.bus, self.roster, self.saved = ctx, bus, roster, saved
        self.by_uid: dict[int, Table] = {}
        self.lobby = self._add(LOBBY, ChatRoom(LOBBY_CHAT_KEPT))
        # the nick and the `i` line of everyone in the lobby, in the lobby's order, kept joined: a whole
        # lobby state takes these texts instead of visiting thousands of sessions, which cost 4 ms at
        # 10,000, or joining thousands of strings, 0.5 ms (issue 19; server/hub/joined.py)
        self.lobby_nicks: JoinedTexts[str] = JoinedTexts(events.NICK_SEPARATOR)
        self.lobby_infos: JoinedTexts[str] = JoinedTexts(LINE_SEPARATOR)
        # and their `b` lines (getBMsg's): built anew for everyone at every login, they cost 11.6 ms a
        # login at 10,000 (every player is in the lobby: the roster's and the lobby's people are one)
        self.lobby_subscriptions: JoinedTexts[str] = JoinedTexts(LINE_SEPARATOR)
        # and the game tables: their numbers (`gr`), and their `d` and `x` lines, built again for the tables
        # with events since the last whole state (`lines_stale`, Lobby's to bring up to date): walking
        # every table at every login's first reply cost 2.8 ms with 2,500 tables (issue 19.1)
        self.lobby_table_numbers: JoinedTexts[int] = JoinedTexts(".")
        self.lobby_table_lines: JoinedTexts[int] = JoinedTexts(LINE_SEPARATOR)
        self.lines_stale: set[int] = set()
        bus.watch(self.lines_stale.add)
        # the game tables each nick has a seat at, in the order they opened: a login seats the player
        # back at their games without walking every table (0.6 ms a login with 2,500 tables, and a
        # restart's restore of every session took as many walks), and a game start counts the player's
        # games by it (Limits.games_of: 3 ms a check with 2,000 tables, walking them)
        self.seats: dict[str, dict[int, None]] = {}
        # the tables the guests of each address and network hold a seat at, kept by the seats' owners
        self.guest_seats = GuestSeats()
        self.seating = Seating(self, roster)  # who owns each seat
        self.numbers = TableNumbers()
        self.moves_played = 0  # for /metrics
        # Set by Hub.__init__, as these parts are made after this one: what happens when a game ends
        # (server/hub/games.py) and when players begin one, any way (server/hub/pools.py); on a member
        # of a cluster, the tables of other members its people sit at (server/hub/mirrors.py) and the
        # people of other members at its tables (visitors.py)
        self.game_over: Callable[[Room], None] = lambda room: None
        self.game_started: Callable[[GameType, Sequence[str]], None] = lambda game_type, nicks: None
        self.elsewhere: Elsewhere | None = None
        self.visiting: Visiting | None = None

    # --- the mapping (delegated, not Mapping's slower mixins: replies read it all the time) ----

    def __getitem__(self, uid: int) -> Table:
        return self.by_uid[uid]

    def __iter__(self) -> Iterator[int]:
        return iter(self.by_uid)

    def __len__(self) -> int:
        return len(self.by_uid)

    def __contains__(self, uid: object) -> bool:
        return uid in self.by_uid

    def get(self, uid: int, default: Table | None = None) -> Table | None:  # type: ignore[override]
        return self.by_uid.get(uid, default)

    def values(self) -> ValuesView[Table]:
        return self.by_uid.values()

    def tournament_game(self, uid: int) -> Room | None:
        """The room of table `uid` while its first game is on it: a tournament table's game, whose
        state, moves and result are the live ones until the archive has them."""
        table = self.by_uid.get(uid)
        room = table.room if table is not None else None
        return room if room is not None and room.games_played == 0 else None

    def items(self) -> ItemsView[int, Table]:
        return self.by_uid.items()

    def keys(self) -> KeysView[int]:
        return self.by_uid.keys()

    # --- opening and closing -------------------------------------------------------------------

    def _add(self, uid: int, chat: ChatRoom) -> Table:
        channel = self.bus.open(uid)
        table = self.by_uid[uid] = Table(uid, chat, channel.log, waiters=channel.waiters)
        return table

    def room_for_a_table(self, *players: Player, guest: bool = False, asking: Player | None = None) -> None:
        """Room for one more game table between `players` (Limits.room_for_a_table), and a number for it."""
        if not self.numbers.available():
            raise ProtocolError("tooManyTables", "No more game tables can be opened now; please try later.")
        self.ctx.limits.room_for_a_table(len(self) - 1, self, *players, guest=guest, asking=asking)

    def open_table(
        self,
        game_type: GameType,
        blue: str,
        red: str,
        auto: AutoTable | None = None,
        setup: Setup | None = None,
        *,
        more: Sequence[str] = (),
    ) -> Table:
        """A new game table, announced in the lobby (`ga`, `d`, `x`); its players sit at it. `more`:
        the players of sides 3, 4, ... of a team game (docs/teams.md)."""
        uid = self.numbers.take()
        seed = self.ctx.rng.randrange(2**32)
        table = self.new_table(uid, game_type, blue, red, seed, auto, setup, more=more)
        self.ctx.persistence.table_opened(uid)
        opened: dict[str, Any] = {
            "type": events.game_type_text(game_type),
            "blue": blue,
            "red": red,
            "seed": seed,
        }
        if more:
            opened["more"] = list(more)
        if auto is not None:
            opened["auto"] = {"tournament": auto.tournament, "round": auto.round, "sayHi": auto.say_hi}
        if setup is not None:
            opened["setup"] = {
                "b": [point_to_sgf(p) for p in setup.black],
                "w": [point_to_sgf(p) for p in setup.white],
                "first": setup.first,
            }
        table.opened = opened
        self.journal(uid, "open", opened)
        self.note_presence(table)
        room = table.room
        assert room is not None
        self.announce(room)
        for nick in (blue, red, *more):
            player = self.roster.online(nick)
            if player is not None and uid not in player.tables:
                self.enter(player, uid)
        log.info("table opened %s", Fields(uid=uid, blue=room.blue, red=room.red, type=game_type))
        self.game_started(game_type, (blue, red, *more))
        return table

    def announce(self, room: Room) -> None:
        """A table new to the lobby (`ga`, `d`, `x`): opened, or taken over from a member that died."""
        self.bus.publish(LOBBY, events.tables("a", [room.uid]))
        self.bus.publish(LOBBY, room.description())
        self.bus.publish(LOBBY, room.state())

    def new_table(
        self,
        uid: int,
        game_type: GameType,
        blue: str,
        red: str,
        seed: int,
        auto: AutoTable | None = None,
        setup: Setup | None = None,
        *,
        more: Sequence[str] = (),
    ) -> Table:
        room = self.new_room(uid, game_type, blue, red, seed, auto, setup, more)
        table = self._add(uid, ChatRoom(TABLE_CHAT_KEPT))  # only once its game could be set up
        table.room = room
        for nick in room.lineup.seats:
            self.seats.setdefault(nick, {})[uid] = None
        self.lobby_table_numbers[uid] = str(uid)
        self.lobby_table_lines[uid] = ""
        self.lines_stale.add(uid)
        return table

    def new_room(
        self,
        uid: int,
        game_type: GameType,
        blue: str,
        red: str,
        seed: int,
        auto: AutoTable | None = None,
        setup: Setup | None = None,
        more: Sequence[str] = (),
    ) -> Room:
        """A game for table `uid`, saying and noting what happens through the table's bus and journal."""
        publish = self.bus.publish
        return Room(
            uid,
            game_type,
            blue,
            red,
            self.ctx.timers,
            seed=seed,
            say_table=lambda line: publish(uid, line),
            say_lobby=lambda line: publish(LOBBY, line),
            tell=lambda code, text: self.server_line(uid, code, text),
            finished=lambda room: self.game_over(room),  # set by Hub.__init__ after this
            new_game=self._new_game,
            note=lambda kind, data, entry: self.journal(uid, kind, data, entry),
            auto=auto,
            setup=setup,
            more=more,
        )

    def _gone(self, table: Table) -> None:
        """What is kept about a game table that closed, or could not be opened again."""
        del self.lobby_table_numbers[table.uid]
        del self.lobby_table_lines[table.uid]
        self.lines_stale.discard(table.uid)
        if table.room is not None:
            for nick in table.room.lineup.seats:
                self.unseat(nick, table.uid)
        self.seating.forget(table)

    def seated_at(self, nick: str) -> list[Table]:
        """The game tables `nick` has a seat at (`seats`), in the order they opened."""
        return [self.by_uid[uid] for uid in self.seats.get(nick, ())]

    def unseat(self, nick: str, uid: int) -> None:
        """The nick has no seat at table `uid` any more (Tables.seats)."""
        uids = self.seats.get(nick, {})
        uids.pop(uid, None)
        if not uids:
            self.seats.pop(nick, None)

    def forget(self, table: Table) -> None:
        """The table is gone: nobody sits at it any more (see Games.close)."""
        del self.by_uid[table.uid]
        self._gone(table)
        self.bus.close(table.uid)
        self.ctx.persistence.table_closed(table.uid)
        self.bus.publish(LOBBY, events.tables("d", [table.uid]))
        log.info("table closed %s", Fields(uid=table.uid))

    def discard(self, uid: int) -> None:
        """A table with nothing stored to close: not opened again after a restart, or its set-up withdrawn."""
        if uid != LOBBY:
            table = self.by_uid.pop(uid, None)
            if table is not None:
                self._gone(table)
            self.bus.close(uid)

    def _new_game(self, room: Room) -> None:  # agreed at the table (`new`) by the players still in its game
        self.show_again(room.uid)
        self.game_started(room.game_type, room.lineup.in_game())

    def show_again(self, uid: int) -> None:
        """Everyone at the table leaves it for one reply and comes back to it: a new game, or play taken back
        (server/hub/takeback.py). MultiPoints builds a table's board only when the table appears in a reply
        (its `q` line) and never clears it; a reply without the table closes its tab. So the one way to show
        a fresh board is a reply without the table, then its whole state (a visitor's: Mirrors.take_state)."""
        number = self.bus.mark()
        for player in [someone for someone in self.by_uid[uid].people.values() if not someone.visiting_from]:
            player.new_game_at[uid] = number
        if self.visiting is not None:
            self.visiting.new_game(uid)

    def room(self, table_text: str) -> Room:
        uid = parse_table(table_text)
        table = self.by_uid.get(uid)
        if table is None or table.room is None:
            raise ProtocolError("noSuchTable", f"There is no game table {uid}.")
        return table.room

    # --- journal and server lines --------------------------------------------------------------

    def journal(self, uid: int, kind: str, data: dict[str, Any], entry: JournalText | None = None) -> None:
        """`entry`: the same entry as the room keeps it, kept once for both (Table.journal)."""
        if kind == "move":  # every accepted move is journalled exactly once: count it here
            self.moves_played += 1
        table = self.by_uid[uid]
        seq = table.note((entry or journal_entry(kind, data)) if table.room is not None else None)
        table.since_compaction += 1
        self.ctx.persistence.journal(uid, seq, kind, data)
        table.written_mark = self.ctx.persistence.queued

    def journal_chat(self, uid: int, entry: ChatEntry) -> None:
        self.journal(uid, "chat", entry.journal_data())

    def server_line(self, uid: int, code: str, text: str) -> None:
        """A server chat line at a table, kept in its chat: empty nick, the event's code as nickType."""
        entry = self.by_uid[uid].chat.add(int(self.ctx.clock()), "", code, text)
        entry.event = self.bus.publish(uid, events.chat_added(entry.line()))
        self.journal_chat(uid, entry)

    def tell(self, player: Player, uid: int, code: str, english: str = "", **values: str) -> None:
        """A server line for one player only, e.g. why their command was refused: the sentence for
        `code` in the player's language, else `english` (server/hub/sentences.py); in the lobby while a new
        game keeps the table out of their replies (`show_again`): its whole state has no such line."""
        target = uid if uid in player.tables and uid not in player.new_game_at else LOBBY
        self.bus.send(player, target, self.told(player, code, english, **values))

    def told(self, player: Player, code: str, english: str = "", **values: str) -> str:
        """The `ca` line `tell` sends (also the last line of a session a moderator ends)."""
        text = for_player(player.lang, code, english, **values)
        now = int(self.ctx.clock())
        n = self.lobby.chat.number(now)  # a chat line's id, not an event number
        # the sentence may quote what the client sent: it must stay one line of the reply
        return events.chat_added(chat_line(now, n, "", ERROR_TYPE, clean_text(text)))

    # --- who sits where ------------------------------------------------------------------------

    def enter(self, player: Player, uid: int, *announce: str) -> None:
        """Sit at a table: the others get `pa` (and `announce`), the newcomer the table's state."""
        table = self.by_uid[uid]
        present = table.people.get(player.nick)
        if present is not None and present.visiting_from and not player.visiting_from:
            self.leave(present, uid)  # the same person's copy from a member that lost their session
        for line in (events.people("a", [player.nick]), *announce):
            self.bus.publish(uid, line)
        table.people[player.nick] = player
        if uid == LOBBY:
            self.lobby_nicks[player.nick] = player.nick
            self.lobby_infos[player.nick] = player.info
        self.seating.claim(player, table)
        self.note_presence(table)
        if uid != LOBBY:
            player.tables.append(uid)
        if table.room is not None and table.seat_of(player):
            table.room.arrived(player.nick)
        # the newcomer's next reply carries the table's whole state as it is then (see Stream.news)
        player.joined[uid] = self.bus.mark()
        self.subscriptions_changed(player)
        if uid != LOBBY:
            self.saved.save(player)

    def subscriptions_changed(self, player: Player) -> None:
        """The lobby's `b` line of the player; a person of another member has theirs from there. Called
        after every change of a player's tables (the lobby's whole state takes the line kept here)."""
        if player.visiting_from:
            return
        line = events.subscriptions(player.nick, player.tables)
        if self.lobby.people.get(player.nick) is player:
            self.lobby_subscriptions[player.nick] = line
        self.bus.publish(LOBBY, line, b_only=True)

    def info_changed(self, player: Player) -> None:
        """The player's `i` line was built again (Player.refresh_info): the lobby's state shows it."""
        if self.lobby.people.get(player.nick) is player:
            self.lobby_infos[player.nick] = player.info

    def leave(self, player: Player, uid: int, *, for_good: bool = False, chose: bool = False) -> None:
        """`for_good`: the player chose to go (`q`, `zmienStol`, a logout) or stopped polling, and a
        team game's player leaves the game with the table (docs/teams.md); not when a table closes,
        nor when a session moves to another member of a cluster. `chose`: the player chose to go (a
        game against the AI, or an analysis, closes then: Games.expired)."""
        table = self.by_uid.get(uid)
        if table is None:
            if self.elsewhere is not None:
                self.elsewhere.leave(player, uid, for_good=for_good)
            return
        present = table.people.get(player.nick) is player  # not when its place went to a newer copy
        writable = self.ctx.persistence.storage_failure is None  # a team player leaving a game is play
        if present and for_good and table.room is not None and table.seat_of(player):
            table.leave_game(player.nick, writable)
        if present:
            del table.people[player.nick]
        if present and uid == LOBBY:
            del self.lobby_nicks[player.nick]
            del self.lobby_infos[player.nick]
            del self.lobby_subscriptions[player.nick]
        player.joined.pop(uid, None)
        if uid in player.tables and uid != LOBBY:
            player.tables.remove(uid)
            self.saved.save(player)
        if present:
            self.bus.publish(uid, events.people("d", [player.nick]))
            if table.room is not None and table.seat_of(player):
                table.left_by_choice = chose
            self.note_presence(table)
        if player.visiting_from and self.visiting is not None:
            self.visiting.left(player, uid)

    def subscribe(self, player: Player, uid: int) -> None:
        if uid in player.tables:
            return
        if uid not in self.by_uid:
            if self.elsewhere is None or not self.elsewhere.has(uid):
                raise ProtocolError("noSuchTable", f"There is no table {uid}.")
            # it sits there once that table's member has answered, which sends the table's whole state:
            # as many as a player's game actions, so that sitting down again and again floods nothing
            self.ctx.limits.player_actions(player, self.ctx.timers.now())
            self.elsewhere.join(player, uid, chosen=True)
            return
        self.enter(player, uid)

    def unsubscribe(self, player: Player, uid: int) -> None:
        if uid == LOBBY:
            raise ProtocolError("badTable", "The main room cannot be left.")
        if uid not in player.tables:
            raise ProtocolError("notAtTable", f"You are not at table {uid}.")
        self.leave(player, uid, for_good=True, chose=True)
        self.subscriptions_changed(player)

    def change_table(self, player: Player, uid: int) -> None:
        """The old `zmienStol`: leave every game table, then sit at `uid` (0 = only the lobby)."""
        if uid != LOBBY and uid not in self.by_uid and not (self.elsewhere and self.elsewhere.has(uid)):
            raise ProtocolError("noSuchTable", f"There is no table {uid}.")
        for old in [t for t in player.tables if t not in (LOBBY, uid)]:
            self.unsubscribe(player, old)
        if uid != LOBBY:
            self.subscribe(player, uid)

    def note_presence(self, table: Table) -> None:
        """Remember since when a game table is empty, or its two players away, for its lifetime.

        An AI player never leaves its table: it counts as watching, not as a player who is there, or a
        game against the computer that its person left would stay open for ever."""
        if table.room is None:
            return
        moment = self.ctx.timers.now()
        table.empty_since = None if table.people else table.empty_since or moment
        seated = any(table.seat_of(player) and not reserved(nick) for nick, player in table.people.items())
        table.players_away_since = None if seated else table.players_away_since or moment
        table.left_by_choice = table.left_by_choice and not seated

    def playing(self, player: Player) -> bool:
        """Whether the player sits in a game still being played (an analysis is no game)."""
        for uid in player.tables:
            table = self.by_uid.get(uid)
            room = table.room if table is not None else None
            if room is not None and not room.analysis and room.game.result is None and table.seat_of(player):
                return True
        return False

    def seat_back(self, player: Player) -> None:
        """Back at the games they play (after a restart, or after their session timed out); a guest also
        at those whose seat a guest session of its nick held from its network; a renamed account also at
        those it plays under an earlier nick (server/hub/seating.py), here and on other members."""
        if self.elsewhere is not None:
            self.elsewhere.seat_back(player)
            self.elsewhere.follow_rename(player)
        self.seating.follow_rename(player)
        for uid in list(self.seats.get(player.nick, ())):
            if self.seating.reclaim(self.by_uid[uid], player) and uid not in player.tables:
                self.enter(player, uid)
