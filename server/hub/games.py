"""The games at the tables: players' game actions (moves, enclosures, propositions, STOP, gifts of time),
a game's end and its archiving, the clocks while storage fails, and closing the tables nobody needs.

The rules of play, the propositions and the clocks of one game are its `Room` (server/hub/room.py);
this part finds the room, checks that the seat is the player's, and deals with what a game's end
means for the lobby, the archive and the ratings.
"""

from __future__ import annotations

import logging
import time as _time
from collections.abc import Callable, Collection

from server.engine.gametype import GameKind
from server.engine.rating import RATED_MIN_DOTS, unrated_reason
from server.engine.record import with_bots
from server.engine.sgf import write_record
from server.hub.absences import CLAIMS, Absences
from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.lineup import colour_of
from server.hub.model import LOBBY, NOBODY, Player, Table, account_number
from server.hub.persistence import Account, FinishedGame
from server.hub.room import Room, asks_for_a_new_game, journal_entry
from server.hub.roster import Roster
from server.hub.tables import Tables
from server.hub.takeback import TakeBack
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import ProtocolError

log = logging.getLogger(__name__)

# When a game table disappears (zagram's FAQ): nobody at it for a minute; neither player at it for a
# minute and no activity for 15 minutes; or the game over and no activity for an hour. A game against
# the AI and an analysis table go sooner (issue 47: the AI kept them on everyone's lobby for an hour):
# at the next sweep once their player chose to leave, and a minute after their player went away from a
# finished game (docs/protocol.md, "Table lifetime").
EMPTY_TABLE_KEPT = 60.0
ABSENT_PLAYERS_KEPT = 60.0
IDLE_TABLE_KEPT = 15 * 60.0
FINISHED_TABLE_KEPT = 60 * 60.0
RESTORED_TABLE_KEPT = 10 * 60.0  # after a restart, players have this long to come back to their table
TOURNAMENT_TABLE_KEPT = 2 * 60 * 60.0  # zagram: an unfinished tournament game stays at least 2 hours


class Games:
    def __init__(
        self, ctx: Context, bus: EventBus, roster: Roster, tables: Tables, absences: Absences
    ) -> None:
        self.ctx, self.bus, self.roster, self.tables, self.absences = ctx, bus, roster, tables, absences
        self.take_back = TakeBack(ctx, bus, tables, self.archive)
        # told (table, tournament, result) once a tournament game's record is stored: the server's own
        # tournaments pair their next games from it (server/director)
        self.tournament_result: Callable[[int, str, str], None] | None = None

    # --- game actions --------------------------------------------------------------------------

    def played_room(self, player: Player, table_text: str) -> Room:
        """The room of a game action: a player with a seat's nick acts in it only if the seat is theirs,
        and not faster than a player and a table may."""
        room = self.tables.room(table_text)
        table = self.tables.by_uid[room.uid]
        self.ctx.limits.actions(player, table, self.ctx.timers.now())
        if room.seat_of(player.nick):
            self.tables.seating.claim(player, table)
            if not table.seat_of(player):
                raise ProtocolError(
                    "notYourSeat", f"The seat of {player.nick} at table {room.uid} is another session's."
                )
        return room

    def move(self, player: Player, table: str, where: str, colour: int | None = None) -> None:
        self.played_room(player, table).move(player.nick, where, colour)

    def draw_enclosure(self, player: Player, table: str, where: str) -> None:
        self.played_room(player, table).draw_enclosure(player.nick, where)

    def propose(self, player: Player, table: str, proposal: str) -> None:
        """zagram's propositions, and the claims against a player who left (server/hub/absences.py)."""
        room = self.played_room(player, table)
        if proposal == "undo":
            self.ctx.limits.take_back(player, len(room.game.moves), self.ctx.timers.now())
        games_played = room.games_played
        if asks_for_a_new_game(proposal):
            self.ctx.limits.may_begin(player)  # a new game at the table: each one is archived
        if proposal in CLAIMS:
            self.absences.claim(player, self.tables[room.uid], room, proposal)
        else:
            room.propose(player.nick, proposal)
        if room.games_played != games_played:  # agreed: its players begin it
            people = self.tables[room.uid].people
            self.ctx.limits.began(people[nick] for nick in room.lineup.in_game() if nick in people)

    def pause(self, player: Player, table: str, text: str) -> None:
        if text not in ("p", "u"):
            raise ProtocolError("badCommand", "t takes p (pause) or u (unpause).")
        self.played_room(player, table).pause(player.nick, text == "p")

    def stop(self, player: Player, table: str) -> None:
        self.played_room(player, table).stop(player.nick)

    def give_time(self, player: Player, table: str, seconds: str) -> None:
        self.played_room(player, table).give_time(player.nick, seconds)

    # --- a game's end --------------------------------------------------------------------------

    def game_over(self, room: Room) -> None:
        """The lobby hears a game's result once: with its archive number when the record is written,
        at once when there is nothing to archive. Two `x` lines with a result would be two results to
        an organiser's reader (roboCup reports every one it reads). The table's own `x` says it too, as
        `archive`'s answer does: a bot's feed reads the table, and told no end of a game resigned before
        its first dot."""
        if room.analysis or not self.archive(room):
            self.bus.publish(room.uid, room.state())
            self.bus.publish(LOBBY, room.state())

    def archive(self, room: Room) -> bool:
        """Hand a finished game with at least one move to the store; once it is written, its number
        goes into `x` and the players' new ratings into their `i` lines. False: nothing to archive."""
        tournament = room.auto.tournament if room.tournament_game and room.auto is not None else None
        if not room.game.moves and tournament is None:  # tournament games are kept however short
            return False
        game, table = room.game, self.tables[room.uid]
        unrated = unrated_reason(
            kind=room.game_type.kind.value,
            teams=room.teams,  # team games are unrated (docs/teams.md)
            finished=game.result is not None,
            cancelled=game.result is not None and game.result.reason == "Void",
            registered=True,  # the store checks the accounts
            dots=game.dots_placed(),
        )
        date = _time.strftime("%Y-%m-%d", _time.gmtime(self.ctx.clock()))
        seq = table.note(None)  # the store writes the "archived" entry with the game
        finished = FinishedGame(
            uid=room.uid,
            record=room.record(date),
            blue=room.blue,
            red=room.red,
            game_type=events.game_type_text(room.game_type),
            result=game.result,
            rated=unrated is None,
            tournament=tournament,
            game_index=room.games_played,
            journal_seq=seq,
            ended_at=self.ctx.clock(),
            moves=len(game.moves),
            players=room.lineup.seats if room.teams else (),
            cancelled=room.cancelled,
            unowned=tuple(nick for nick, owner in table.owners.items() if owner == NOBODY),
            accounts={
                nick: number for nick, owner in table.owners.items() if (number := account_number(owner))
            },
        )
        games_played = room.games_played

        def done(number: int, accounts: list[Account]) -> None:
            here = self.tables.get(room.uid) is table
            index = table.entry_at(seq) if here else None
            if index is not None:
                table.journal[index] = journal_entry("archived", {"number": number, "game": games_played})
            if here and table.room is room:  # said even when the next game has begun meanwhile
                self.tables.server_line(room.uid, f"l{number}", f"Game saved as number {number}.")
                self.tables.server_line(room.uid, *rating_line(finished, unrated or "account", accounts))
                if room.games_played == games_played:  # `x` carries the number of the game on the table
                    room.archive_number = number
                    self.bus.publish(room.uid, room.state())
                    self.bus.publish(LOBBY, room.state())
            for account in accounts:
                self.account_changed(account)
            log.info("game archived %s", Fields(uid=room.uid, number=number, result=game.result))
            if tournament is not None and finished.result is not None and self.tournament_result is not None:
                self.tournament_result(room.uid, tournament, str(finished.result))

        self.ctx.persistence.archive(finished, done)
        table.written_mark = self.ctx.persistence.queued
        return True

    def account_changed(self, account: Account) -> None:
        """New rating and results after a game: the player's `i` line, if they are here."""
        player = self.roster.online(account.nick)
        if player is not None and not player.guest:
            before = player.info
            player.apply(account)
            if player.info != before:
                self.tables.info_changed(player)
                self.bus.publish(LOBBY, player.info)

    def table_players(self, uid: int) -> tuple[str, ...] | None:
        """The nicks of a game table's players in turn order (docs/teams.md), or None when there is no
        such table: which of them are bots is the store's to say (an account's flag), for the record."""
        table = self.tables.get(uid)
        return table.room.lineup.seats if table is not None and table.room is not None else None

    def table_record(self, uid: int, bots: Collection[str]) -> str | None:
        """The SGF record of a game table's current game, with its players named in `bots` marked as the
        archive marks them (docs/bots.md), or None when there is no such table."""
        table = self.tables.get(uid)
        if table is None or table.room is None:
            return None
        room = table.room
        record = room.record(_time.strftime("%Y-%m-%d", _time.gmtime(self.ctx.clock())))
        seats = enumerate(room.lineup.seats, 1)
        return write_record(
            with_bots(record, ((colour_of(side), nick) for side, nick in seats if nick in bots))
        )

    # --- the clocks when storage fails or the server stops -------------------------------------

    def storage_changed(self, failure: str | None) -> None:
        """Storage failed (`failure`: why) or is back. When it fails, the play it had not taken is taken
        back (server/hub/takeback.py); while it fails nobody can move, so the clocks of running games
        stand still, and go on from where they stood when it is back. Every running game's table hears
        it (its `f` line), and the AI players look at it again then (their moves waited too)."""
        if failure is not None:
            self.take_back.storage_failed()
        for table in list(self.tables.values()):
            if failure is None:
                self._left_meanwhile(table)
            room = table.room
            if room is None or room.game.result is not None:
                continue
            if room.clock is not None and failure is None:
                room.clock.release()
            elif room.clock is not None:
                room.clock.hold()
            self.bus.publish(table.uid, room.flags())

    def _left_meanwhile(self, table: Table) -> None:
        """Storage is back: the team players who left the table for good while it failed are out of the
        game now (Table.leave_game), unless they came back to their seat meanwhile."""
        for nick in sorted(table.leaving):
            here = table.people.get(nick)
            if table.room is not None and (here is None or not table.seat_of(here)):
                table.room.leave(nick)
        table.leaving.clear()

    def announce_shutdown(self) -> None:
        """A clean stop: every table is told, and the clocks are journalled as they are."""
        for table in self.tables.values():
            self.tables.server_line(
                table.uid, "restart", "The server is restarting; games go on when it is back."
            )
            if table.room is not None:
                table.room.note_clock()

    # --- closing the tables nobody needs -------------------------------------------------------

    def close_expired(self) -> None:
        now = self.ctx.timers.now()
        for table in [t for t in self.tables.values() if t.room is not None and self.expired(t, now)]:
            self.close(table)

    def expired(self, table: Table, moment: float) -> bool:
        if self.ctx.persistence.storage_failure is not None:  # closing would end a game it cannot store
            return False
        room = table.room
        assert room is not None
        idle = moment - room.last_activity
        away = table.players_away_since
        if away is not None and room.game_type.kind in (GameKind.AI, GameKind.ANALYSIS):
            over = room.game.result is not None and moment - away > ABSENT_PLAYERS_KEPT
            if table.left_by_choice or over:
                return True
        if moment < table.kept_until and room.game.result is None:
            return False
        if table.empty_since is not None and moment - table.empty_since > EMPTY_TABLE_KEPT:
            return True
        if away is not None and moment - away > ABSENT_PLAYERS_KEPT and idle > IDLE_TABLE_KEPT:
            return True
        return room.game.result is not None and idle > FINISHED_TABLE_KEPT

    def close(self, table: Table) -> None:
        room = table.room
        assert room is not None
        if room.game.result is None:
            room.abandon()
            self.archive(room)
        for player in list(table.people.values()):
            self.tables.leave(player, table.uid)
            self.tables.subscriptions_changed(player)
        self.tables.forget(table)


UNRATED_LINES = {  # why a game was not rated, as its table's server line says it (docs/ratings.md)
    "computer": "Not rated: a game against the computer.",
    "free": "Not rated: a free game.",
    "team": "Not rated: a team game.",
    "unfinished": "Not rated: the game did not finish.",
    "cancelled": "Not rated: the game was cancelled.",
    "account": "Not rated: both players need an account.",
    "short": f"Not rated: fewer than {RATED_MIN_DOTS} dots were placed.",
}


def rating_line(game: FinishedGame, unrated: str, accounts: list[Account]) -> tuple[str, str]:
    """What a finished game did to its players' ratings, as a server line (code, text): issue 47, nobody
    saw it. The ratings before are the ones the store wrote into the record (FinishedGame.record), the
    ones after are `accounts`, blue's then red's (ArchiveDone). The players are named as they played:
    an account renamed during the game keeps its old nick until its player's next login."""
    before = (game.record.black_rating, game.record.white_rating)
    if not game.rated or len(accounts) != 2 or None in before:
        return f"unrated{unrated.capitalize()}", UNRATED_LINES[unrated]
    changes = [
        f"{nick} {int(was or 0)} → {account.rating} ({account.rating - int(was or 0):+d})"
        for nick, was, account in zip((game.blue, game.red), before, accounts, strict=True)
    ]
    return "rated", f"Ratings: {', '.join(changes)}."
