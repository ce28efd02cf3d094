"""Tournaments' tables: an organiser's table (setUpTable) between two players, or two teams
(docs/teams.md), who need not be online.

Such a table waits for its players' first sessions (server/hub/seating.py, `Seating.claim`), gives each a
sayHi time before their clock runs (server/hub/room.py), and stays open at least
TOURNAMENT_TABLE_KEPT; its game is archived however short, under the tournament's name.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from server.engine.gametype import GameKind, GameType, StartKind, WhoStarts
from server.hub.context import Context
from server.hub.games import TOURNAMENT_TABLE_KEPT
from server.hub.lineup import TEAM_SIZES
from server.hub.model import LOBBY, reserved
from server.hub.remote import RemoteLobby
from server.hub.room import AutoTable
from server.hub.tables import Tables
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import ProtocolError, check_nick, nick_key

log = logging.getLogger(__name__)

MAX_SAY_HI = 7200


class Tournaments:
    def __init__(self, ctx: Context, tables: Tables, remote_lobby: RemoteLobby) -> None:
        self.ctx, self.tables, self.remote_lobby = ctx, tables, remote_lobby

    def set_up_table(
        self,
        game_type: GameType,
        first: str,
        second: str,
        say_hi: Sequence[int],
        tournament: str | None,
        round: str | None,
        ratings: dict[str, float],
        *,
        more: Sequence[str] = (),
    ) -> int:
        """Blue is `first`, except in `R` games (the server decides), where it is the lower-rated
        player (`ratings`, registered players only), `first` on a tie or without ratings. `more`: the
        players of sides 3, 4, ... of a team game (pl3, pl4, ...: side n is pl<n>, so pl1, pl3, ... are
        team one, blue), with a sayHi each; team games are unrated, and team one is blue."""
        self.ctx.writable()
        players = (first, second, *more)
        for number, nick in enumerate(players, 1):
            check_nick(nick, guest=nick.startswith("*"))
            if nick_key(nick) in (nick_key(other) for other in players[: number - 1]):
                raise ProtocolError("samePlayer", f"pl{number} is named twice.")
        if len(players) % 2 or len(players) // 2 not in TEAM_SIZES:
            most = TEAM_SIZES.stop - 1
            raise ProtocolError("badTeams", f"Two teams of equal size, of {most} players at most.")
        if more and any(reserved(nick) for nick in players):
            raise ProtocolError("badTeams", "The computer plays no team games.")
        if len(say_hi) != len(players) or not all(0 <= seconds <= MAX_SAY_HI for seconds in say_hi):
            fields = ".".join("K" * len(players)) if more else "K.L"
            raise ProtocolError("badSayHiTimes", f"sayHiTimes must be {fields}, each in 0..{MAX_SAY_HI}.")
        if game_type.kind in (GameKind.AI, GameKind.ANALYSIS) or game_type.start.kind is StartKind.SGF:
            raise ProtocolError("badGameType", "A tournament table is a game between two players.")
        self.tables.room_for_a_table(guest=any(nick.startswith("*") for nick in players))
        blue, red = first, second
        if game_type.kind is GameKind.RANKED and game_type.who_starts is WhoStarts.SERVER and not more:
            if first in ratings and second in ratings and ratings[second] < ratings[first]:
                blue, red = second, first
        if tournament is not None:
            game_type = dataclasses.replace(game_type, tournament=tournament)
        auto = AutoTable(tournament, round, dict(zip(players, say_hi, strict=True)))
        table = self.tables.open_table(game_type, blue, red, auto, more=more)
        if tournament is not None:
            table.kept_until = self.ctx.timers.now() + TOURNAMENT_TABLE_KEPT
            room = table.room
            assert room is not None
            self.ctx.persistence.tournament_table(
                table.uid, tournament, round, room.blue, room.red, events.game_type_text(game_type)
            )
        return table.uid

    def withdraw_set_up(self, uid: int) -> bool:
        """A setUpTable whose writes storage did not take: the table closes as if never set up, its writes
        withdrawn (never made), so that the refusal `storage` is true (nothing was done) and the
        organiser's retry sets the game up once; those who sat at it are told why. False, and nothing
        changed, if its writes cannot be withdrawn (some are stored, or being written now)."""
        table = self.tables.get(uid)
        if table is None or table.room is None or not self.ctx.persistence.withdraw_table(uid):
            return False
        table.room.abandon()
        for player in list(table.people.values()):
            self.tables.leave(player, uid)
            self.tables.subscriptions_changed(player)
            self.tables.tell(player, LOBBY, "setUpNotStored")
        self.tables.discard(uid)
        self.tables.bus.publish(LOBBY, events.tables("d", [uid]))
        log.warning("table set up withdrawn: storage did not take it %s", Fields(uid=uid))
        return True

    def tournament_of(self, uid: int) -> str | None:
        """The tournament of the game set up at table `uid` here (by an organiser or the director)."""
        table = self.tables.get(uid)
        auto = table.room.auto if table is not None and table.room is not None else None
        return auto.tournament if auto is not None else None

    def cancel_table(self, uid: int, key_tournament: str | None) -> None:
        """An organiser's cancelTable: the table's tournament game ends `Void`, unrated and left out of
        the standings (Room.cancel says when it may). A key may cancel what it could have set up: any
        organiser's table if it is not limited to a tournament, else only that tournament's."""
        self.ctx.writable()
        table = self.tables.get(uid)  # the lobby (0) has no room: no such table
        if table is None or table.room is None:
            if self.remote_lobby.owner_of_table(uid) is not None:
                raise ProtocolError(
                    "otherMember",
                    f"Table {uid} is run by another member of the cluster: "
                    "only the member that runs it can cancel it.",
                )
            raise ProtocolError("noSuchTable", f"There is no open table {uid}.")
        room = table.room
        if room.auto is None:
            raise ProtocolError("notSetUp", f"Table {uid} was not set up by an organiser.")
        if key_tournament is not None and room.auto.tournament != key_tournament:
            raise ProtocolError("keyNotForTournament", f"Table {uid} is not of the key's tournament.")
        room.cancel()  # the table's results show it once its game is archived (FinishedGame.cancelled)
