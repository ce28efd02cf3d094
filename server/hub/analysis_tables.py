"""Analysis tables opened by an invitation to oneself (docs/ai.md), at once and with no answer to wait
for: checked against the limits before an archived game's record is replayed onto the new table."""

from __future__ import annotations

from server.engine.gametype import GameType, StartKind
from server.engine.replay import ReplayError, analysis_start
from server.hub.context import Context
from server.hub.model import Player
from server.hub.tables import Tables
from server.protocol.codec import ProtocolError, nick_key


def open_analysis(
    ctx: Context, tables: Tables, player: Player, invitee: Player, game_type: GameType, archived: str | None
) -> None:
    """An invitation to oneself with an analysis game type opens the table at once; `archived`: the SGF
    record an analysis of an archived game (`SGFz<n>`) starts from."""
    if invitee is not player:
        raise ProtocolError("badGameType", "An analysis table is opened by inviting yourself.")
    if nick_key(game_type.rights.analyser_nick) != nick_key(player.nick):
        raise ProtocolError(
            "badGameType", f"The analyser in the game type must be you: c___SUsuen{player.nick}."
        )
    # the limits before an archived record's replays (60 ms for 2,400 moves on 52x52): refused, nothing
    tables.room_for_a_table(player)
    ctx.limits.games_of(tables, player, analysis=True)
    ctx.limits.may_invite(player, ctx.timers.now())
    setup, moves = None, []
    if game_type.start.kind is StartKind.SGF:
        if archived is None:
            raise ProtocolError("badGameType", "An analysis of an archived game is opened with co=zapraszam.")
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
    ctx.limits.invitation(player, player.nick, ctx.timers.now())
    room = tables.open_table(game_type, player.nick, player.nick, setup=setup).room
    assert room is not None
    ctx.limits.analysed.add((player,))  # its `tables` row stays for good
    for colour, where in moves:
        room.move(player.nick, where, colour)
