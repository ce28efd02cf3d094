"""Players who left a game they play (issue 47; docs/protocol.md, "An opponent who left"): their
opponent is told, and after a grace period may claim the win or call the game off; a player who comes
back in time plays on, and their opponent is told that too.

A seat's player is away when the session that owns the seat is not at the table (it ended: a logout,
a time-out, a closed tab; or it left the table) or has made no request for AWAY_AFTER seconds. The
hub's sweep looks every few seconds and says what changed; a claim looks again at the moment it is
made, so that nobody wins against a player who is back. A tournament game's player who never came
is the organiser's no-show (docs/tournaments.md), not someone who left. Only games of two people are
watched: an AI never leaves, an analysis has one player, and a team game already plays on without a
player who left (docs/teams.md). What is watched is kept in memory: after a restart the watch starts
again.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from server.engine.gametype import GameKind
from server.hub.context import Context
from server.hub.model import Player, Table, owns
from server.hub.room import Room
from server.hub.tables import Tables
from server.logs import Fields
from server.protocol.codec import ProtocolError

log = logging.getLogger(__name__)

# No request for this long and a player is away (--away-after). The longest a poll may be held is 30 s
# (`wait=`, docs/protocol.md), the built-in client's long poll 25 s, and MultiPoints polls about once a
# second: a client that is there asks again well within it. A session ends after 60 s without a request.
AWAY_AFTER = 40.0
# From the notice until the opponent may claim (--claim-after): time to restart a browser or MultiPoints
# and log in again (a guest from the same network under the same nick takes the seat back).
CLAIM_AFTER = 60.0
# lichess's rule: a game in which either player has made fewer moves is called off, never won
MOVES_TO_WIN = 2
CLAIMS = ("claim", "abort")  # the propositions (docs/protocol.md): win the game, call it off


@dataclass
class Absence:
    game: int  # Room.games_played when it began: a new game at the table is watched afresh
    since: float  # the notice (timers' time)
    open: bool = False  # the opponent was told that they may claim


class Absences:
    def __init__(
        self, ctx: Context, tables: Tables, away_after: float = AWAY_AFTER, claim_after: float = CLAIM_AFTER
    ) -> None:
        self.ctx, self.tables = ctx, tables
        self.away_after, self.claim_after = away_after, claim_after
        self.away: dict[tuple[int, int], Absence] = {}  # (table, side) -> since when its player is away

    def sweep(self) -> None:
        """Tell each running game's table who left it, who came back, and when a claim opens. Not while
        storage fails: the lines could not be kept, and nobody can claim then."""
        if self.ctx.persistence.storage_failure is not None:
            return
        now = self.ctx.timers.now()
        for (uid, side), absence in list(self.away.items()):
            table = self.tables.get(uid)
            room = self.watched(table) if table is not None else None
            if room is None or room.games_played != absence.game:
                del self.away[(uid, side)]
        away = self.away
        for table in self.tables.values():  # every running game, so the usual case is kept short
            room = self.watched(table)
            if room is not None:
                for side in (1, 2):
                    if (table.uid, side) in away or not self.present(table, side, now):
                        self._look(table, room, side, now)

    def watched(self, table: Table) -> Room | None:
        """The table's game if it is one that a player can leave and an opponent claim: two people,
        still playing."""
        room = table.room
        if room is None or room.game.result is not None or room.teams or room.analysis:
            return None
        return None if room.game_type.kind is GameKind.AI else room

    def present(self, table: Table, side: int, now: float) -> bool:
        """Whether the session that owns the side's seat is at the table and asking. A person of another
        member of a cluster counts while at the table: their member says when they leave it, or when
        their session ends (docs/cluster.md)."""
        nick = table.room.lineup.seats[side - 1] if table.room is not None else ""
        player = table.people.get(nick)
        if player is None:
            return False
        # a poll that waits for news (a push connection's waits up to 75 s) is a player asking all along
        if not (player.visiting_from or player.waiters or now - player.last_seen < self.away_after):
            return False
        # the seat is this session's (Table.seat_of): a guest's own, a registered nick's the account's,
        # not a later account's with the nick (a deleted account's seat waits for nobody)
        owner = table.owners.get(nick)
        return owner is not None and owns(owner, player.seat_key)

    def _look(self, table: Table, room: Room, side: int, now: float) -> None:
        key = (table.uid, side)
        absence = self.away.get(key)
        nick, opponent = room.nick_of(side), room.nick_of(3 - side)
        if self.present(table, side, now) or (room.tournament_game and side not in room.showed_up):
            if absence is not None:
                del self.away[key]
                self.tables.server_line(table.uid, f"back{side}", f"{nick} is back; the game goes on.")
                log.info("player back %s", Fields(uid=table.uid, nick=nick))
            return
        if absence is None:
            self.away[key] = Absence(room.games_played, now)
            log.info("player away %s", Fields(uid=table.uid, nick=nick))
            if room.tournament_game:
                self.tables.server_line(
                    table.uid,
                    f"awayClock{side}",
                    f"{nick} has left the game; in a tournament game the clock and the organiser decide.",
                )
            else:
                self.tables.server_line(
                    table.uid,
                    f"away{side}",
                    f"{nick} has left the game. If they are not back within {self.claim_after:.0f} s, "
                    f"{opponent} may claim the win or call the game off.",
                )
        elif not absence.open and not room.tournament_game and now - absence.since >= self.claim_after:
            absence.open = True
            may = (
                "claim the win or call the game off"
                if self.may_be_won(room)
                else "call the game off (too few moves to win it)"
            )
            text = f"{nick} has not come back: {opponent} may {may}."
            self.tables.server_line(table.uid, f"claimable{side}", text)

    def may_be_won(self, room: Room) -> bool:
        """Both players made MOVES_TO_WIN moves (STOP's dots are nobody's move)."""
        return all(room.move_sides.count(side) >= MOVES_TO_WIN for side in (1, 2))

    def claim(self, player: Player, table: Table, room: Room, what: str) -> None:
        """`player` claims the game of a player who left (`claim`) or calls it off (`abort`). Every
        refusal comes before anything changes; a claim against a player who is back is refused even
        before the sweep has said so."""
        side = room.seat_of(player.nick)
        if not side:
            raise ProtocolError("notPlayer", "Only the two players of this table may do that.")
        if room.game.result is not None:
            raise ProtocolError("gameOver", "The game is over.")
        if self.watched(table) is None:
            raise ProtocolError("badProposal", "Only a game between two people can be claimed.")
        if room.tournament_game:
            raise ProtocolError(
                "claimInTournament",
                "In a tournament game the clock and the organiser decide; nothing can be claimed.",
            )
        now = self.ctx.timers.now()
        opponent = 3 - side
        nick = room.nick_of(opponent)
        if self.present(table, opponent, now):
            raise ProtocolError("notAway", f"{nick} is here: there is nothing to claim.")
        absence = self.away.get((table.uid, opponent))
        wait = self.claim_after  # not noticed yet: the whole grace is before them
        if absence is not None and absence.game == room.games_played:
            wait -= now - absence.since
        else:
            absence = None
        if absence is None or wait > 0:
            raise ProtocolError(
                "claimTooSoon", f"{nick} may still come back: you may claim in {max(1, math.ceil(wait))} s."
            )
        if what == "claim" and not self.may_be_won(room):
            raise ProtocolError(
                "claimTooShort",
                f"Fewer than {MOVES_TO_WIN} moves each: the game can be called off, not won.",
            )
        self.away.pop((table.uid, opponent), None)
        room.claim(player.nick, what)
        log.info("game claimed %s", Fields(uid=table.uid, nick=player.nick, away=nick, what=what))
