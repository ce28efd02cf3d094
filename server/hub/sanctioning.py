"""What a new sanction does to the sessions here (docs/moderation.md).

The store keeps the sanctions; every server takes the active ones from it every few seconds
(`Sanctions.take`), so a sanction made on another member of a cluster, or with the CLI, holds here too.
Each is applied once per server, by its key: a mute is told to the player, a kick or a ban ends the
sessions it names (their games go on as after a time-out), and the client's next poll is told why.
"""

from __future__ import annotations

import logging

from server.hub.context import Context
from server.hub.model import LOBBY, Player
from server.hub.roster import Roster
from server.hub.sanctions import BAN, KICK, MUTE, SLOW, Sanction, SanctionBook, muted, who_is
from server.hub.sessions import Sessions
from server.hub.tables import Tables
from server.logs import Fields

log = logging.getLogger(__name__)


class Sanctions:
    """Applies the sanctions the store has: each new one once, to the sessions here."""

    def __init__(self, ctx: Context, roster: Roster, tables: Tables, sessions: Sessions) -> None:
        self.ctx, self.roster, self.tables, self.sessions = ctx, roster, tables, sessions
        self.applied: set[str] = set()

    @property
    def book(self) -> SanctionBook:
        return self.ctx.sanctions

    def take(self, active: list[Sanction]) -> None:
        """The sanctions in force now, as the store has them; the new ones are applied."""
        self.book.active = active
        if not any(s.kind == SLOW for s in active):
            self.book.spoke.clear()
        new = [s for s in active if s.key not in self.applied]
        self.applied = {s.key for s in active}
        for sanction in new:
            self._apply(sanction)

    def _apply(self, sanction: Sanction) -> None:
        if sanction.kind not in (MUTE, KICK, BAN):
            return
        for player in list(self.roster.players.values()):
            if player.visiting_from or not sanction.names(player.nick, player.host, who_is(player)):
                continue
            if sanction.kind == MUTE:
                refusal = muted(sanction)
                self.tables.tell(player, LOBBY, refusal.code, str(refusal), **refusal.values)
            else:
                log.info("%s %s", sanction.kind, Fields(nick=player.nick, by=sanction.by))
                self.roster.say_farewell(player, self._farewell(player, sanction), self.ctx.timers.now())
                self.sessions.remove(player, reason=sanction.kind)

    def _farewell(self, player: Player, sanction: Sanction) -> str:
        """Why the session ended, in the player's language: a kick, or a ban until when."""
        reason = sanction.reason or "-"
        if sanction.kind == KICK:
            return self.tables.told(
                player, "kicked", f"A moderator ended your session ({reason}).", reason=reason
            )
        if sanction.ends is None:
            english = f"You are banned from this server for good ({reason})."
            return self.tables.told(player, "bannedNowForGood", english, reason=reason)
        english = f"You are banned from this server until {sanction.until} ({reason})."
        return self.tables.told(player, "bannedNow", english, until=sanction.until, reason=reason)
