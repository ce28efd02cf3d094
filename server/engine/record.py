"""A game as an SGF record (rules.md section 4), the way the archive and `sr` lines carry it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from server.engine.board import BLACK, WHITE
from server.engine.game import COLOUR, Game
from server.engine.moves import Point, point_to_sgf
from server.engine.sgf import GameRecord, SgfMove

# Between a team's nicks in records (SGF PB/PW) and pages: a comma is in no nick, so the names split
# back unambiguously, and ", " is how a list of names reads in every language the server speaks.
NAMES_SEPARATOR = ", "


def rules_flags(game: Game) -> dict[str, str]:
    """zagram's RU flags; MustSurr, MinArea, Stop and InstantWin vary between variants, Pass in analyses."""
    automatic = "1" if game.rules.automatic else "0"
    return {
        "Punish": "0",
        "Holes": "1",
        "AddTurn": "0",
        "MustSurr": automatic,
        "MinArea": automatic,
        "Pass": "1" if game.rules.free_placing else "0",  # an analysis: a dot may follow one of its colour
        "Stop": "1" if game.rules.stop_allowed else "0",
        "LastSafe": "0",
        "ScoreTerr": "0",
        "InstantWin": str(game.rules.instant_win),
    }


def _ring_text(board_point: Callable[[int], Point], ring: tuple[int, ...]) -> str:
    return "".join(point_to_sgf(board_point(pos)) for pos in (*ring, ring[0]))


def _territory(rings: list[list[Point]]) -> list[str]:
    return ["".join(point_to_sgf(p) for p in ring) for ring in rings]


def game_to_record(game: Game, **meta: str | None) -> GameRecord:
    """The record of a game; `meta` fills the text fields (black_name, date, event, round, ...)."""
    board_point = game.board.point
    moves = []
    for move in game.moves:
        value = point_to_sgf(move.point) if move.point is not None else ""
        value += "".join("." + _ring_text(board_point, e.ring) for e in move.enclosures)
        moves.append(SgfMove(COLOUR[move.player], value, move.time_left, move.comment))
    record = GameRecord(
        width=game.width,
        height=game.height,
        rules=rules_flags(game),
        black_setup=[point_to_sgf(p) for p in game.setup.black],
        white_setup=[point_to_sgf(p) for p in game.setup.white],
        handicap=len(game.setup.black) if game.setup.first == WHITE else None,
        application="kropki-server",
        comment=game.opening_comment,
        result=str(game.result) if game.result is not None else None,
        moves=moves,
        **meta,
    )
    if game.final_rings is not None:
        record.black_territory = _territory(game.final_rings[0])
        record.white_territory = _territory(game.final_rings[1])
    return record


def with_bots(record: GameRecord, bots: Iterable[tuple[int, str]]) -> GameRecord:
    """The record saying in its root comment which players are programs (docs/bots.md): a line
    `B is a bot: NICK` or `W is a bot: NICK` for each (colour, nick), NICK as PB/PW name the player,
    after what the comment said already (a STOP before the first move). A reader finds a team's every
    bot this way, and replay reads only the STOP lines back. The record given stays as it was: an
    archive's write tried again after a storage failure marks the game once."""
    lines = [_bot_line(colour, nick) for colour, nick in bots]
    if not lines:
        return record
    return replace(record, comment="\n".join([record.comment, *lines] if record.comment else lines))


def renamed(record: GameRecord, colour: int, nick: str, name: str) -> GameRecord:
    """The record calling `name` the player `nick` of `colour` wherever it names them: in PB or PW,
    alone or among a team's nicks, and on their `with_bots` line. A deleted account's games name the
    player anonymously (docs/operations.md, "Accounts")."""
    team = record.black_name if colour == BLACK else record.white_name
    if team is not None:
        members = team.split(NAMES_SEPARATOR)
        team = NAMES_SEPARATOR.join(name if member == nick else member for member in members)
    comment = record.comment
    if comment is not None:
        lines = comment.split("\n")
        bot = _bot_line(colour, nick)
        comment = "\n".join(_bot_line(colour, name) if line == bot else line for line in lines)
    if colour == BLACK:
        return replace(record, black_name=team, comment=comment)
    return replace(record, white_name=team, comment=comment)


def _bot_line(colour: int, nick: str) -> str:
    return f"{COLOUR[colour]} is a bot: {nick}"
