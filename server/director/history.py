"""A hosted tournament's games as the pairing engines read them: its tables' results turned into each
player's swiss rounds or arena games. Pure, so that the rules of what a result counts as are in one
place and tested without a server."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from server.engine import arena, swiss
from server.engine.board import BLACK
from server.engine.game import Result
from server.engine.standings import Played

BYE_POINTS = 1.0  # a pairing-allocated bye scores a win, as FIDE's rules have it unless announced otherwise


@dataclass(frozen=True)
class Board:
    """One game of the tournament: its table, the players (blue moves first) and how it ended."""

    table: int
    round: int  # swiss: its round; arena: 0
    blue: str
    red: str
    result: str | None  # None while it is played
    cancelled: bool = False  # the organiser cancelled it (cancelTable)
    moves: int = 0
    ended: float | None = None  # wall time of its end, once it has a result


def _parsed(board: Board) -> Result | None:
    return _result(board.result) if board.result is not None else None


@functools.lru_cache(maxsize=1024)
def _result(text: str) -> Result:
    """Results are few distinct texts ("B+R", "W+3"...) read again at every wave of an arena: each parsed
    once (Result is frozen)."""
    return Result.parse(text)


def swiss_round(nick: str, board: Board | None, bye: bool) -> swiss.Round:
    """The round as the pairing counts it (FIDE C.04.1): a forfeit scores but is not a game played, so
    the two may meet again and no colour is counted; a void or cancelled game is nothing for either."""
    if bye:
        return swiss.Round(None, None, BYE_POINTS, False, bye=True)
    result = _parsed(board) if board is not None else None
    if board is None or result is None or result.reason == "Void" or board.cancelled:
        return swiss.Round(None, None, 0.0, False)
    blue = nick == board.blue
    opponent = board.red if blue else board.blue
    if result.winner == 0:
        points = 0.5
    else:
        points = 1.0 if (result.winner == BLACK) == blue else 0.0
    if result.reason == "F":
        return swiss.Round(opponent, None, points, False)
    return swiss.Round(opponent, "white" if blue else "black", points, True)


def swiss_rounds(
    nick: str, rounds: int, boards: Sequence[Board], byes: Mapping[int, str | None]
) -> tuple[swiss.Round, ...]:
    """The player's rounds 1..`rounds`, from the boards of those rounds and each round's bye."""
    mine = {board.round: board for board in boards if nick in (board.blue, board.red)}
    return tuple(
        swiss_round(nick, mine.get(number), byes.get(number) == nick) for number in range(1, rounds + 1)
    )


def arena_histories(boards: Sequence[Board]) -> dict[str, tuple[arena.ArenaGame, ...]]:
    """Each player's finished games, oldest (lowest table) first, in one pass over the boards; a void or
    cancelled game is no game. A player without a game is not listed."""
    games: dict[str, list[arena.ArenaGame]] = {}
    for board in sorted(boards, key=lambda b: b.table):
        for nick, game in arena_games(board):
            games.setdefault(nick, []).append(game)
    return {nick: tuple(played) for nick, played in games.items()}


def arena_games(board: Board) -> tuple[tuple[str, arena.ArenaGame], ...]:
    """The game a board is in each of its players' arena history: none while it is played or if it is
    void or cancelled, one for a player on both sides."""
    result = _parsed(board)
    if result is None or result.reason == "Void" or board.cancelled:
        return ()
    forfeit, blue_won = result.reason == "F", result.winner == BLACK
    outcome: arena.Outcome = "draw" if result.winner == 0 else "win" if blue_won else "loss"
    blue = (board.blue, arena.ArenaGame(board.red, outcome, True, board.moves, forfeit))
    if board.red == board.blue:
        return (blue,)  # one player on both sides: one game
    outcome = "draw" if result.winner == 0 else "loss" if blue_won else "win"
    return blue, (board.red, arena.ArenaGame(board.blue, outcome, False, board.moves, forfeit))


def no_shows(boards: Sequence[Board]) -> set[str]:
    """Who did not show up for their game: the loser of a forfeit, both players of a game that ended
    `Void` because nobody came (not one the organiser cancelled)."""
    missing: set[str] = set()
    for board in boards:
        result = _parsed(board)
        if result is None or board.cancelled:
            continue
        if result.reason == "F":
            missing.add(board.red if result.winner == BLACK else board.blue)
        elif result.reason == "Void":
            missing.update((board.blue, board.red))
    return missing


def no_shows_still_in(joined: Mapping[str, float], boards: Sequence[Board]) -> set[str]:
    """The no-shows of these finished games but those who joined again after their game ended (`joined`:
    nick -> wall time of their entry): they were withdrawn for it already (the director's note of it
    lasts only until a restart)."""
    return {
        nick
        for board in boards
        for nick in no_shows([board])
        if board.ended is None or joined.get(nick, 0.0) <= board.ended
    }


def played(boards: Sequence[Board]) -> list[Played]:
    """The finished games for the swiss standings (engine/standings.py)."""
    return [Played(b.blue, b.red, b.result) for b in boards if b.result is not None and not b.cancelled]


def bye_points(byes: Mapping[int, str | None]) -> dict[str, Fraction]:
    points: dict[str, Fraction] = {}
    for nick in byes.values():
        if nick is not None:
            points[nick] = points.get(nick, Fraction(0)) + Fraction(BYE_POINTS)
    return points
