"""Invitations to a game (the `v` command and `zapraszam`): sent, answered, cancelled, blocked; and the
invitations that open a table at once: to oneself for an analysis (server/hub/analysis_tables.py), to an AI
player.

The only owner of the pending invitations, by inviter and by invitee. They are state repeated in every
reply (`vg`, `vs`, `vr` lines, see `lines`), not events. A team invitation (docs/teams.md) names every
other player of a team game; each must accept before its table opens, and any one may reject it.

In a cluster, a player may invite a player of another member (docs/cluster.md, "Invitations across
members"): the invitee's member checks and keeps the invitation, the inviter's keeps its side of it, and
each stands for the other side's person by a Player of that member (`visiting_from`). The invitee's
member opens the table of an accepted invitation; the inviter sits down at it as at any game of theirs
on another member (Mirrors.seat_back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from server.engine.gametype import (
    GameKind,
    GameType,
    GameTypeError,
    Rules,
    StartKind,
    WhoStarts,
    parse_game_type,
)
from server.hub.analysis_tables import open_analysis
from server.hub.bus import EventBus
from server.hub.computer import Computer
from server.hub.context import Context
from server.hub.limits import ANSWERED_FOR
from server.hub.lineup import TEAM_SIZES, interleaved
from server.hub.model import COMPUTER_NICKS, LOBBY, Invitation, Player, reserved
from server.hub.remote import RemoteLobby
from server.hub.roster import Roster
from server.hub.saved import SavedSessions
from server.hub.tables import Tables
from server.hub.visiting import person, visiting
from server.protocol import events
from server.protocol.codec import ProtocolError, decode_client_text, nick_key

# A player who turned away this many guests' invitations within the window takes none from guests they
# have not written to lately until it has passed: each of a troll's fresh guests kept them busy for
# everyone else (they answer one invitation at a time), and `v..b` or ignoring holds one nick only.
GUEST_REJECTIONS = 3
GUEST_REJECTIONS_WINDOW = 600.0
# An invitation not answered within this many seconds lapses, withdrawn as a cancellation is: an inviter
# whose tab polls on while they are away kept the invitee busy for everyone else (docs/protocol.md).
INVITATION_LIFETIME = 300.0


class Offering(Protocol):
    """Seeks offered as invitations to readers whose clients do not read seeks (server/hub/offers.py)."""

    def line(self, player: Player) -> str | None:
        """The `vg` line of the seek this reply offers the player, if any."""
        ...

    def answer(self, player: Player, how: str) -> bool:
        """`a`, `r` or `b` answering the seek the player's last reply offered; False: none was."""
        ...


class Invitations:
    def __init__(
        self,
        ctx: Context,
        bus: EventBus,
        roster: Roster,
        tables: Tables,
        saved: SavedSessions,
        remote: RemoteLobby,
    ) -> None:
        self.ctx, self.bus, self.roster, self.tables, self.saved = ctx, bus, roster, tables, saved
        self.remote = remote
        self.computer: Computer | None = None  # the AI players, once enabled
        self.invitations: dict[Player, Invitation] = {}  # by inviter
        self.incoming: dict[Player, Invitation] = {}  # by invitee, a player of this member
        # by the inviter's nick_key: a game start withdraws its players' invitations (withdraw_sent_by)
        # without a walk of every pending one; kept by _keep and drop, the only ones to change them
        self.sent_by: dict[str, list[Invitation]] = {}
        self.send: Callable[[str, dict[str, Any]], None] | None = None  # a member of a cluster
        self._strangers: dict[tuple[str, str], Player] = {}  # (member, nick) -> who stands for them
        self.offers: Offering | None = None  # set by Hub.__init__

    def command(self, player: Player, text: str) -> None:
        """`s.NICK.GAMETYPE` invite (`s.NICK,NICK,NICK.GAMETYPE` a team game: docs/teams.md), `a` accept,
        `r` reject, `b` reject and block, `c` cancel own, `o` acknowledge a rejection."""
        if text.startswith("s."):
            _, whom, game_type_text = (text.split(".", 2) + [""])[:3]
            self.invite(player, decode_client_text(whom), game_type_text)
        elif text in ("a", "r", "b") and self.offers is not None and self.offers.answer(player, text):
            return  # the `vg` the player last read was a seek (server/hub/offers.py)
        elif text == "a":
            self._accept(player)
        elif text in ("r", "b"):
            invitation = self._incoming(player)
            self.drop(invitation, "rejected")
            invitation.inviter.rejected_by.append(player.nick)
            self.turned_away(player, invitation.inviter)
            if text == "b":
                self.block(player, invitation.inviter.nick)
        elif text == "c":
            invitation = self.invitations.get(player)
            if invitation is None:
                raise ProtocolError("noInvitation", "You have no invitation to cancel.")
            self.drop(invitation, "cancelled")
        elif text == "o":
            if not player.rejected_by:
                raise ProtocolError("noInvitation", "No rejected invitation to acknowledge.")
            player.rejected_by.clear()
            self.bus.nudge(player)
        else:
            raise ProtocolError("badCommand", "v takes s.NICK.GAMETYPE, a, r, b, c or o.")

    def block(self, player: Player, nick: str) -> None:
        """`v..b`: the player refuses `nick`'s invitations (and seeks) from now on."""
        player.blocked.add(nick_key(nick))
        self.saved.save(player)

    def invite(self, player: Player, whom: str, game_type_text: str, archived: str | None = None) -> None:
        """`archived`: the SGF record an analysis of an archived game (`SGFz<n>`) starts from. `whom`
        with commas names the other players of a team game (`_invite_team`)."""
        if events.TEAM_SEPARATOR in whom:
            self._invite_team(player, whom.split(events.TEAM_SEPARATOR), game_type_text)
            return
        invitee = self.roster.online(whom) or self._elsewhere(whom)
        if invitee is None:
            raise ProtocolError("notOnline", f"{whom} is not online.")
        try:
            game_type = parse_game_type(game_type_text)
        except GameTypeError as refused:
            raise ProtocolError("badGameType", f"Game type refused: {refused}.") from None
        if game_type.kind is GameKind.ANALYSIS:
            open_analysis(self.ctx, self.tables, player, invitee, game_type, archived)
            return
        if invitee is player:
            raise ProtocolError("badNick", "You cannot invite yourself.")
        if game_type.start.kind is StartKind.SGF:
            raise ProtocolError("badGameType", "Archived positions are for analysis tables (type a).")
        if game_type.tournament:
            raise ProtocolError("badGameType", "Tournament games are set up by organisers.")
        if invitee.visiting_from:  # its member checks the rest, keeps it, and says if it refuses
            self.ctx.limits.rated_between(game_type.ranked, player, invitee)  # its `i` line marks a bot
            self.ctx.limits.games_of(self.tables, player)
            self.ctx.limits.invitation(player, invitee.nick, self.ctx.timers.now())
            self._keep(Invitation(player, invitee, game_type))
            assert self.send is not None
            self.send(invitee.visiting_from, {"invite": [person(player), invitee.nick, game_type_text]})
            return
        self._check_invitee(player, invitee, game_type.ranked)
        computer = self.computer is not None and self.computer.level_of(invitee.nick) is not None
        if computer or game_type.kind is GameKind.AI:
            self._check_computer_game(player, invitee, game_type, computer)
        self.ctx.limits.games_of(self.tables, player)
        self.ctx.limits.invitation(player, invitee.nick, self.ctx.timers.now())
        if computer:  # the computer always accepts: the table opens at once
            self._open(player, invitee, game_type)
            return
        self._keep(Invitation(player, invitee, game_type))

    def _invite_team(self, player: Player, nicks: list[str], game_type_text: str) -> None:
        """A team game: `nicks` are the other players in turn order after the inviter, an opponent, a
        team-mate, an opponent, ...; all of them on this member (docs/teams.md, docs/cluster.md)."""
        if (len(nicks) + 1) % 2 or (len(nicks) + 1) // 2 not in TEAM_SIZES[1:]:
            raise ProtocolError(
                "badTeams",
                f"A team game is two teams of 2 to {TEAM_SIZES.stop - 1}: "
                "name the others in turn order, an opponent first.",
            )
        keys = [nick_key(nick) for nick in (player.nick, *nicks)]
        if len(set(keys)) != len(keys):
            raise ProtocolError("badTeams", "A player is named twice.")
        try:
            game_type = parse_game_type(game_type_text)
        except GameTypeError as refused:
            raise ProtocolError("badGameType", f"Game type refused: {refused}.") from None
        if game_type.kind in (GameKind.AI, GameKind.ANALYSIS) or game_type.start.kind is StartKind.SGF:
            raise ProtocolError("badGameType", "A team game is a game between players (no A or a type).")
        if game_type.tournament:
            raise ProtocolError("badGameType", "Tournament games are set up by organisers.")
        invitees = []
        for nick in nicks:
            if reserved(nick):
                raise ProtocolError("badTeams", "The computer plays no team games.")
            invitee = self.roster.online(nick)
            if invitee is None and self.send is not None and self.remote.member_of(nick) is not None:
                raise ProtocolError(
                    "otherMember",
                    f"{nick} is on another member of the cluster: team games are played on one.",
                )
            if invitee is None:
                raise ProtocolError("notOnline", f"{nick} is not online.")
            self._check_invitee(player, invitee, rated=False)  # team games are unrated, whatever the type
            invitees.append(invitee)
        self.ctx.limits.games_of(self.tables, player)
        self.ctx.limits.invitation(player, invitees[0].nick, self.ctx.timers.now())
        self._keep(Invitation(player, invitees[0], game_type, lineup=(player, *invitees)))

    def _check_invitee(self, player: Player, invitee: Player, rated: bool) -> None:
        """What the invitee's own member checks of an invitation to them (`rated`: to a game that may be)."""
        if nick_key(player.nick) in invitee.blocked or invitee.ignores(player.nick):
            raise ProtocolError("blocked", f"{invitee.nick} does not accept your invitations.")
        if not invitee.free:
            raise ProtocolError("busy", f"{invitee.nick} is busy.")
        if player.guest and self.turning_guests_away(invitee, player):
            raise ProtocolError(
                "blocked",
                f"{invitee.nick} is not taking invitations from guests just now; "
                "write to them first, or log in with an account.",
            )
        self.ctx.limits.rated_between(rated, player, invitee)
        pending = self.incoming.get(invitee)
        if pending is not None and pending.inviter is not player:
            raise ProtocolError("busy", f"{invitee.nick} is answering another invitation.")

    def turned_away(self, player: Player, inviter: Player) -> None:
        """`player` rejected `inviter`'s invitation (or declined their seek offered as one)."""
        if inviter.guest:
            player.turned_away.append(self.ctx.timers.now())

    def turning_guests_away(self, invitee: Player, guest: Player) -> bool:
        """`invitee` turned away GUEST_REJECTIONS guests' invitations within the window, and has not
        written to `guest` lately (a friend they asked to invite them still may)."""
        now = self.ctx.timers.now()
        turned = invitee.turned_away
        while turned and turned[0] <= now - GUEST_REJECTIONS_WINDOW:
            turned.popleft()
        if len(turned) < GUEST_REJECTIONS:
            return False
        wrote = invitee.wrote_to.get(nick_key(guest.nick))
        return wrote is None or now - wrote >= ANSWERED_FOR

    def _keep(self, invitation: Invitation) -> None:
        inviter = invitation.inviter
        if inviter in self.invitations:  # a new invitation replaces the inviter's last (its member knows)
            self.drop(self.invitations[inviter], "cancelled", tell=not inviter.visiting_from)
        for someone in (inviter, invitation.invitee):
            if someone.visiting_from:
                self._strangers[(someone.visiting_from, someone.nick)] = someone
        invitation.sent_at = self.ctx.timers.now()
        self.invitations[inviter] = invitation
        self.sent_by.setdefault(nick_key(inviter.nick), []).append(invitation)
        for invitee in invitation.invitees:
            if not invitee.visiting_from:  # another member's player: theirs keeps what they answer
                self.incoming[invitee] = invitation
        self.bus.nudge(invitation.inviter, *invitation.invitees)

    # --- invitations between players of two members of a cluster -------------------------------

    def _elsewhere(self, nick: str) -> Player | None:
        """Who stands here for `nick` if another member of a cluster has them online."""
        found = self.remote.member_of(nick) if self.send is not None else None
        if found is None:
            return None
        member, nick = found
        someone = {"nick": nick, "guest": nick.startswith("*"), "bot": self.remote.bot(member, nick)}
        return self._stranger(member, someone)

    def _stranger(self, member: str, someone: dict[str, Any]) -> Player:
        """The one who stands here for a player of `member` in invitations (kept while in one)."""
        return self._strangers.get((member, someone["nick"])) or visiting(member, someone)

    def invited_from(self, member: str, inviter: dict[str, Any], whom: str, game_type_text: str) -> None:
        """A player of `member` invites a player here: checked as here; a refusal goes back."""
        stranger = self._stranger(member, inviter)
        invitee = self.roster.online(whom)
        try:
            if invitee is None:
                raise ProtocolError("notOnline", f"{whom} is not online.")
            game_type = parse_game_type(game_type_text)
            self._check_invitee(stranger, invitee, game_type.ranked)
        except (ProtocolError, GameTypeError) as refused:
            if self.send is not None:
                self.send(member, {"invitation_ended": [stranger.nick, whom, "refused", str(refused)]})
            return
        self._keep(Invitation(stranger, invitee, game_type))

    def ended_elsewhere(self, member: str, inviter: str, invitee: str, how: str, why: str = "") -> None:
        """The other member ended an invitation between a player here and one of its players."""
        for invitation in list(self.invitations.values()):
            if (invitation.inviter.nick, invitation.invitee.nick) != (inviter, invitee):
                continue
            if member not in (invitation.inviter.visiting_from, invitation.invitee.visiting_from):
                continue
            self.drop(invitation, how, tell=False)
            local = invitation.inviter
            if how == "rejected" and not local.visiting_from:
                local.rejected_by.append(invitee)
            elif how == "refused" and not local.visiting_from:
                self.tables.tell(local, LOBBY, "", why)  # the other member's English sentence

    def _forget_stranger(self, stranger: Player) -> None:
        """Once no invitation here names them: several players here may invite one of another member
        at once (its member refuses all but one)."""
        if stranger in self.invitations or any(stranger in i.invitees for i in self.invitations.values()):
            return
        if self._strangers.get((stranger.visiting_from, stranger.nick)) is stranger:
            del self._strangers[(stranger.visiting_from, stranger.nick)]

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
            seat = room.seat_of(player.nick) if room is not None and not room.teams else 0
            if seat and room.game.result is None and self.computer.level_of(room.nick_of(3 - seat)):
                raise ProtocolError("busy", f"First finish your game with the computer at table {table.uid}.")
        self.tables.room_for_a_table(player)

    def pending_from(self, player: Player, nick: str) -> None:
        """Refused unless the invitation `player` would answer now is `nick`'s: an answer read from an
        invitation gone meanwhile is not given to the next one (docs/bots.md, `from`)."""
        invitation = self.incoming.get(player)
        if invitation is None or nick_key(invitation.inviter.nick) != nick_key(nick):
            raise ProtocolError("noInvitation", f"The invitation of {nick} is no longer pending.")

    def _incoming(self, player: Player) -> Invitation:
        invitation = self.incoming.get(player)
        if invitation is None:
            raise ProtocolError("noInvitation", "You have no invitation to answer.")
        return invitation

    def drop(self, invitation: Invitation, how: str = "cancelled", *, tell: bool = True) -> None:
        """`how`: cancelled, rejected or accepted, as the other member of a cluster is told (`tell`)."""
        if self.invitations.get(invitation.inviter) is invitation:
            del self.invitations[invitation.inviter]
        key = nick_key(invitation.inviter.nick)
        sent = self.sent_by.get(key, [])
        if invitation in sent:
            sent.remove(invitation)
            if not sent:
                del self.sent_by[key]
        for invitee in invitation.invitees:
            if self.incoming.get(invitee) is invitation:
                del self.incoming[invitee]
        self.bus.nudge(invitation.inviter, *invitation.invitees)
        for someone in (invitation.inviter, invitation.invitee):
            if someone.visiting_from:
                if tell and self.send is not None:
                    ended = [invitation.inviter.nick, invitation.invitee.nick, how]
                    self.send(someone.visiting_from, {"invitation_ended": ended})
                self._forget_stranger(someone)

    def ignored(self, player: Player, key: str) -> None:
        """`player` ignores the nick_key `key` from now on: a pending invitation from them is rejected,
        as `v..b` would reject it (the inviter gets `vr`)."""
        invitation = self.incoming.get(player)
        if invitation is not None and nick_key(invitation.inviter.nick) == key:
            self.drop(invitation, "rejected")
            if not invitation.inviter.visiting_from:
                invitation.inviter.rejected_by.append(player.nick)

    def drop_all_of(self, player: Player) -> None:
        """The player left: what they sent and what they were sent goes."""
        for invitation in [i for i in self.invitations.values() if player in (i.inviter, *i.invitees)]:
            self.drop(invitation)

    def lapse_old(self) -> None:
        """The sweep: invitations sent INVITATION_LIFETIME ago or more go, as cancelled ones do."""
        lapsed = self.ctx.timers.now() - INVITATION_LIFETIME
        for invitation in [i for i in self.invitations.values() if i.sent_at <= lapsed]:
            self.drop(invitation)

    def member_gone(self, member: str) -> None:
        """A member left the cluster: the invitations with its players go."""
        for invitation in list(self.invitations.values()):
            if member in (invitation.inviter.visiting_from, invitation.invitee.visiting_from):
                self.drop(invitation, tell=False)

    def _accept(self, player: Player) -> None:
        invitation = self._incoming(player)
        if invitation.lineup:
            self._accept_team(player, invitation)
            return
        self.check_game(invitation.inviter, player)
        self.drop(invitation, "accepted")
        self._open(invitation.inviter, player, invitation.game_type)

    def check_game(self, inviter: Player, invitee: Player) -> None:
        """Room for their table, which `invitee` opens (accepting), and for one more unfinished game of
        each."""
        self.tables.room_for_a_table(inviter, invitee, asking=invitee)
        self.ctx.limits.games_of(self.tables, inviter)
        self.ctx.limits.games_of(self.tables, invitee)

    def start_game(self, inviter: Player, invitee: Player, game_type: GameType) -> None:
        """A game that starts as an accepted invitation's does, without one: a seek accepted, two players
        paired by a pool (server/hub/seeks.py, pools.py). `inviter`: the one whom the game type's `a`
        makes blue."""
        self.check_game(inviter, invitee)
        self._open(inviter, invitee, game_type)

    def _open(self, inviter: Player, invitee: Player, game_type: GameType) -> None:
        """The table of an accepted invitation, blue being whoever the game type says starts."""
        if game_type.who_starts is WhoStarts.INVITER:
            blue, red = inviter, invitee
        elif game_type.who_starts is WhoStarts.INVITED:
            blue, red = invitee, inviter
        else:
            blue, red = self._server_decides(inviter, invitee, game_type)
        self.tables.open_table(game_type, blue.nick, red.nick)  # its game_started withdraws theirs
        self.ctx.limits.began((inviter, invitee))

    def withdraw_sent_by(self, nicks: Sequence[str]) -> None:
        """Players who begin a game, any way (Tables.game_started), withdraw the invitations they sent, as
        a cancellation does: accepted later, one opened a second table under them."""
        for key in dict.fromkeys(nick_key(nick) for nick in nicks):  # in their order, as told
            for invitation in list(self.sent_by.get(key, ())):
                self.drop(invitation)

    def _accept_team(self, player: Player, invitation: Invitation) -> None:
        """One more of a team invitation's players accepts; the last one opens the table, the inviter's
        team blue as the game type says of the inviter (`s`: at random, team games are unrated)."""
        waiting = [p for p in invitation.invitees if p is not player and p not in invitation.accepted]
        if waiting:
            invitation.accepted.add(player)
            self.bus.nudge(*invitation.lineup)
            return
        everyone = invitation.lineup
        self.tables.room_for_a_table(*everyone, asking=player)
        for someone in everyone:
            self.ctx.limits.games_of(self.tables, someone)
        self.drop(invitation, "accepted")
        seats = [someone.nick for someone in everyone]
        who = invitation.game_type.who_starts
        if who is WhoStarts.INVITED or (who is WhoStarts.SERVER and self.ctx.rng.random() >= 0.5):
            seats = interleaved(seats[1::2], seats[0::2])
        self.tables.open_table(invitation.game_type, seats[0], seats[1], more=seats[2:])
        self.ctx.limits.began(everyone)

    def _server_decides(self, first: Player, second: Player, game_type: GameType) -> tuple[Player, Player]:
        """Ranked: the lower rating starts; free games, equal ratings and guests: at random."""
        if game_type.kind is GameKind.RANKED and first.record and second.record:
            if first.record[0] != second.record[0]:
                return (first, second) if first.record[0] < second.record[0] else (second, first)
        return (first, second) if self.ctx.rng.random() < 0.5 else (second, first)

    def lines(self, player: Player) -> list[str]:
        """What every reply repeats of the player's invitations."""
        lines = []
        incoming = self.incoming.get(player)
        if incoming is not None:
            game_type = events.game_type_text(incoming.game_type)
            lines.append(f"vg{incoming.inviter.nick}.{game_type}{_teams(incoming)}")
        outgoing = self.invitations.get(player)
        if outgoing is not None:
            game_type = events.game_type_text(outgoing.game_type)
            lines.append(f"vs{outgoing.invitee.nick}.{game_type}{_teams(outgoing)}")
        if self.offers is not None:  # asked at every reply: it keeps which seek the reply showed
            offer = self.offers.line(player)
            if offer is not None:
                lines.append(offer)
        lines += [f"vr{nick}" for nick in player.rejected_by]
        return lines


def _teams(invitation: Invitation) -> str:
    """After a team invitation's game type: `.<the inviter's team>.<the other team>.<who accepted>`,
    each nicks in turn order joined by `,` (docs/teams.md); nothing for an invitation of two."""
    if not invitation.lineup:
        return ""
    accepted = [p.nick for p in invitation.lineup if p in invitation.accepted]
    team_one = [p.nick for p in invitation.lineup[0::2]]
    team_two = [p.nick for p in invitation.lineup[1::2]]
    return f".{events.team(team_one)}.{events.team(team_two)}.{events.team(accepted)}"
