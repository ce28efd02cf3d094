"""What the store keeps of each session, so that players carry on after a restart: the session's row,
the sessions' journal of k, and the heartbeat that folds the one into the other.

The only owner of the sessions' journal (SESSION_JOURNAL); every part that changes what a session
keeps (its tables, flags, language, blocked nicks, a guest's ignored players) hands the session here.
"""

from __future__ import annotations

from server.hub.context import Context
from server.hub.model import LOBBY, Player
from server.hub.persistence import SavedSession, SessionOrigin
from server.hub.roster import Roster

SESSION_JOURNAL = -2  # each session's k as it moves, until the heartbeat puts it in the session's row
SWEEP_EVERY = 5.0  # the hub's sweep and heartbeat
# A session whose player has not polled for this long at a sweep has its last poll written with the
# heartbeat (docs/protocol.md, "After a restart"); the others count as polling at the heartbeat.
QUIET_AFTER = SWEEP_EVERY
# The wall clock moved against the timers by more than this between two heartbeats: it was stepped (an
# NTP correction, a resumed virtual machine, an operator), and every quiet session's last poll is
# written again in the new wall time. Slewing moves it by milliseconds.
WALL_STEP = 1.0


class SavedSessions:
    def __init__(self, ctx: Context, roster: Roster) -> None:
        self.ctx = ctx
        self.roster = roster
        self.seq = 0  # the last entry of the sessions' journal (SESSION_JOURNAL)
        self.k_unsaved: set[Player] = set()  # k is in the sessions' journal, not yet in the session's row
        self.quiet: set[Player] = set()  # those whose noted_quiet is not None
        self.wall_offset: float | None = None  # the wall clock minus the timers' at the last heartbeat

    def note_k(self, player: Player) -> None:
        """k moved: one entry appended to the sessions' journal, which costs a poll with commands no
        more than its own moves and chat lines do; rewriting the session's row on every such poll
        put 40 ms on the 99th percentile of 2,000 guests' polls. The heartbeat moves it into the row."""
        if player.stored:
            k = player.acknowledged.kept(player.last_command)
            if k == player.k_noted:
                return
            player.k_noted = k
            self.seq += 1
            data = {"s": player.id_hmac, "k": k}
            self.ctx.persistence.journal(SESSION_JOURNAL, self.seq, "k", data)
            self.k_unsaved.add(player)

    def took_back_k(self, player: Player, k: int) -> None:
        """Commands after `k` are not done after all (actions another member did not confirm: see
        Acknowledged.given_up): the client sends them again, and they are done then."""
        player.last_command = min(player.last_command, k)
        self.note_k(player)

    def save(self, player: Player) -> None:
        """Hand the session to the store after a change of what it keeps; never for a mere poll."""
        self.k_unsaved.discard(player)
        if player.stored:
            self.ctx.persistence.session_saved(
                SavedSession(
                    id_hmac=player.id_hmac,
                    nick=player.nick,
                    lang=player.lang,
                    registered=not player.guest,
                    free=player.free,
                    client=player.client,
                    tables=tuple(uid for uid in player.tables if uid != LOBBY),
                    blocked=tuple(sorted(player.blocked)),
                    last_command=player.acknowledged.kept(player.last_command),
                    origin=SessionOrigin(
                        player.host, player.network, tuple(player.networks), player.unlimited
                    ),
                    ignored=tuple(player.ignored.values()) if player.guest else (),
                )
            )

    def note_quiet(self, player: Player, quiet: float | None) -> None:
        player.noted_quiet = quiet
        if quiet is None:
            self.quiet.discard(player)
        else:
            self.quiet.add(player)

    def heartbeat(self) -> None:
        """At every sweep and at a clean stop. With it the k each session's journal noted goes into its
        row (and that journal is emptied), and the last polls of the players who had stopped polling
        (only when that changed), so that after a crash each session gets what was left of its
        time-out; one write, however many players poll. It looks only at what can have changed: the
        sessions with k unsaved, those quiet now (the front of the roster's order) and those noted
        quiet before (issue 19: walking all 10,000 players took 16-21 ms of a loaded server's loop)."""
        now, moment = self.ctx.clock(), self.ctx.timers.now()
        # only k: every other change of what a row keeps was saved when it happened (`save`), and the
        # whole rows of thousands of players, every 5 s, held every move's write behind them (issue 19.2)
        k = {
            player.id_hmac: player.acknowledged.kept(player.last_command)
            for player in self.k_unsaved
            if player.stored
        }
        self.k_unsaved.clear()
        changed: dict[str, float | None] = {}
        if self.wall_stepped(now, moment):  # the last polls written before are in the old wall time
            for player in self.quiet:
                if player.stored and player.noted_quiet is not None:
                    changed[player.id_hmac] = now - (moment - player.noted_quiet)
        for player in {*self.quiet, *self.roster.quiet_for(moment, QUIET_AFTER)}:
            if not player.stored:  # its session is over
                self.quiet.discard(player)
                continue
            polling = bool(player.waiters) or moment - player.last_seen < QUIET_AFTER
            quiet = None if polling else player.last_seen
            if quiet != player.noted_quiet:
                self.note_quiet(player, quiet)
                changed[player.id_hmac] = None if quiet is None else now - (moment - quiet)  # wall time
        self.ctx.persistence.sessions_seen(now, changed, k)
        if self.seq:  # every k noted so far is in the rows now
            self.ctx.persistence.journal_dropped(SESSION_JOURNAL)

    def wall_stepped(self, now: float, moment: float) -> bool:
        """Whether the wall clock (`now`) was stepped against the timers (`moment`) since the last call.
        A quiet session's last poll is written once, when it goes quiet, and the heartbeat's own time at
        each beat; a restart counts the time between them, so without writing it again a step ahead of
        an hour ended the session at the next restart, and a step back gave it a whole minute again."""
        before, self.wall_offset = self.wall_offset, now - moment
        return before is not None and abs(self.wall_offset - before) > WALL_STEP
