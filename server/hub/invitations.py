"""Invitations to a game (the `v` command and `zapraszam`): sent, answered, cancelled, blocked; and the
invitations that open a table at once: to oneself for an analysis, to an AI player.

The only owner of the pending invitations, by inviter and by invitee. They are state repeated in every
reply (`vg`, `vs`, `vr` lines, see `lines`), not events.
"""

from __future__ import annotations

from server.engine.gametype import (
    GameKind,
    GameType,
    GameTypeError,
    Rules,
    StartKind,
    WhoStarts,
    parse_game_type,
)
from server.engine.replay import ReplayError, analysis_start
from server.hub.bus import EventBus
from server.hub.computer import Computer
from server.hub.context import Context
from server.hub.model import COMPUTER_NICKS, Invitation, Player
from server.hub.roster import Roster
from server.hub.saved import SavedSessions
from server.hub.tables import Tables
from server.protocol import events
from server.protocol.codec import ProtocolError, decode_client_text, nick_key


class Invitations:
    def __init__(
        self, ctx: Context, bus: EventBus, roster: Roster, tables: Tables, saved: SavedSessions
    ) -> None:
        self.ctx, self.bus, self.roster, self.tables, self.saved = ctx, bus, roster, tables, saved
        self.computer: Computer | None = None  # the AI players, once enabled
        self.invitations: dict[Player, Invitation] = {}  # by inviter
        self.incoming: dict[Player, Invitation] = {}  # by invitee

    def command(self, player: Player, text: str) -> None:
        """`s.NICK.GAMETYPE` invite, `a` accept, `r` reject, `b` reject and block, `c` cancel own,
        `o` acknowledge a rejection."""
        if text.startswith("s."):
            _, whom, game_type_text = (text.split(".", 2) + [""])[:3]
            self.invite(player, decode_client_text(whom), game_type_text)
        elif text == "a":
            self._accept(player)
        elif text in ("r", "b"):
            invitation = self._incoming(player)
            self.drop(invitation)
            invitation.inviter.rejected_by.append(player.nick)
            if text == "b":
                player.blocked.add(nick_key(invitation.inviter.nick))
                self.saved.save(player)
        elif text == "c":
            invitation = self.invitations.get(player)
            if invitation is None:
                raise ProtocolError("noInvitation", "You have no invitation to cancel.")
            self.drop(invitation)
        elif text == "o":
            if not player.rejected_by:
                raise ProtocolError("noInvitation", "No rejected invitation to acknowledge.")
            player.rejected_by.clear()
            self.bus.nudge(player)
        else:
            raise ProtocolError("badCommand", "v takes s.NICK.GAMETYPE, a, r, b, c or o.")

    def invite(self, player: Player, whom: str, game_type_text: str, archived: str | None = None) -> None:
        """`archived`: the SGF record an analysis of an archived game (`SGFz<n>`) starts from."""
        invitee = self.roster.online(whom)
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
        self.ctx.limits.games_of(self.tables.values(), player)
        self.ctx.limits.invitation(player, invitee.nick, self.ctx.timers.now())
        if computer:  # the computer always accepts: the table opens at once
            self._open(player, invitee, game_type)
            return
        if player in self.invitations:
            self.drop(self.invitations[player])
        invitation = Invitation(player, invitee, game_type)
        self.invitations[player] = invitation
        self.incoming[invitee] = invitation
        self.bus.nudge(player, invitee)

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
        self.tables.room_for_a_table(player)
        self.ctx.limits.games_of(self.tables.values(), player, analysis=True)
        self.ctx.limits.invitation(player, player.nick, self.ctx.timers.now())
        room = self.tables.open_table(game_type, player.nick, player.nick, setup=setup).room
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
        self.tables.room_for_a_table(player)

    def _incoming(self, player: Player) -> Invitation:
        invitation = self.incoming.get(player)
        if invitation is None:
            raise ProtocolError("noInvitation", "You have no invitation to answer.")
        return invitation

    def drop(self, invitation: Invitation) -> None:
        self.invitations.pop(invitation.inviter, None)
        self.incoming.pop(invitation.invitee, None)
        self.bus.nudge(invitation.inviter, invitation.invitee)

    def drop_all_of(self, player: Player) -> None:
        """The player left: what they sent and what they were sent goes."""
        for invitation in [i for i in self.invitations.values() if player in (i.inviter, i.invitee)]:
            self.drop(invitation)

    def _accept(self, player: Player) -> None:
        invitation = self._incoming(player)
        self.tables.room_for_a_table(invitation.inviter, player)
        self.ctx.limits.games_of(self.tables.values(), invitation.inviter)
        self.ctx.limits.games_of(self.tables.values(), player)
        self.drop(invitation)
        self._open(invitation.inviter, player, invitation.game_type)

    def _open(self, inviter: Player, invitee: Player, game_type: GameType) -> None:
        """The table of an accepted invitation, blue being whoever the game type says starts."""
        if game_type.who_starts is WhoStarts.INVITER:
            blue, red = inviter, invitee
        elif game_type.who_starts is WhoStarts.INVITED:
            blue, red = invitee, inviter
        else:
            blue, red = self._server_decides(inviter, invitee, game_type)
        self.tables.open_table(game_type, blue.nick, red.nick)

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
            lines.append(f"vg{incoming.inviter.nick}.{events.game_type_text(incoming.game_type)}")
        outgoing = self.invitations.get(player)
        if outgoing is not None:
            lines.append(f"vs{outgoing.invitee.nick}.{events.game_type_text(outgoing.game_type)}")
        lines += [f"vr{nick}" for nick in player.rejected_by]
        return lines
