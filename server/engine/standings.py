"""A tournament's standings from its games' results: points, games played, Buchholz and
Sonneborn-Berger (docs/tournaments.md, "Standings").

Pure: the web layer hands in what the store and the hub know about each table; nothing here reads
either. A win is 1 point, a draw 1/2, a loss 0. A `Void` game (nobody showed up, the players agreed to
cancel it, or the organiser cancelled it) is no game: it gives no points and counts in no column.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from server.engine.board import BLACK
from server.engine.game import Result

HALF = Fraction(1, 2)


@dataclass(frozen=True)
class Played:
    """A finished game between `blue` and `red`, with its result as written (`B+R`, `0`, `Void`...)."""

    blue: str
    red: str
    result: str


@dataclass(frozen=True)
class Standing:
    rank: int  # equal for players equal in points and both tie-breaks
    player: str
    points: Fraction
    games: int
    buchholz: Fraction  # the sum of the final points of every opponent met, once per game
    sonneborn_berger: Fraction  # each opponent's final points times what the player scored against them


@functools.lru_cache(maxsize=1024)
def blue_score(result: str) -> Fraction | None:
    """Blue's points from a result (1, 1/2 or 0; red has the rest), None for a void game. Results are
    few distinct texts: each parsed once (Fraction is immutable)."""
    parsed = Result.parse(result)
    if parsed.reason == "Void":
        return None
    if parsed.winner == 0:
        return HALF
    return Fraction(1) if parsed.winner == BLACK else Fraction(0)


@functools.lru_cache(maxsize=1024)
def _blue_halves(result: str) -> int | None:
    score = blue_score(result)
    return None if score is None else int(score * 2)


def standings(
    games: Iterable[Played], players: Iterable[str] = (), byes: Mapping[str, Fraction] | None = None
) -> list[Standing]:
    """Every player of `games` and of `players` (those with no finished game yet), best first: by
    points, then Buchholz, then Sonneborn-Berger; players equal in all three share a rank and are
    listed by name. `byes`: the points of a swiss tournament's byes, which count in the player's points
    (and so in their opponents' Buchholz) but are no game: no opponent, no tie-break of their own.
    The games are summed per player and opponent first (games, points scored), so the exact fractions
    are added per pair, not per game: 108,000 games took 2 s of CPU with a fraction added per game."""
    met: dict[tuple[str, str], list[int]] = {}  # (player, opponent) -> [games, half-points scored]
    byes = byes or {}
    everyone = set(players) | set(byes)
    for game in games:
        everyone.add(game.blue)
        everyone.add(game.red)
        blue = _blue_halves(game.result)
        if blue is not None:
            for player, opponent, halves in ((game.blue, game.red, blue), (game.red, game.blue, 2 - blue)):
                pair = met.get((player, opponent))
                if pair is None:
                    met[player, opponent] = [1, halves]
                else:
                    pair[0] += 1
                    pair[1] += halves
    points: dict[str, Fraction] = defaultdict(Fraction, byes)
    played: dict[str, int] = defaultdict(int)
    for (player, _), (count, halves) in met.items():
        points[player] += Fraction(halves, 2)
        played[player] += count
    buchholz: dict[str, Fraction] = defaultdict(Fraction)
    berger: dict[str, Fraction] = defaultdict(Fraction)
    for (player, opponent), (count, halves) in met.items():
        buchholz[player] += count * points[opponent]
        berger[player] += Fraction(halves, 2) * points[opponent]

    def merit(player: str) -> tuple[Fraction, Fraction, Fraction]:
        return points[player], buchholz[player], berger[player]

    ordered = sorted(everyone, key=lambda p: (tuple(-value for value in merit(p)), p.casefold(), p))
    table: list[Standing] = []
    for place, player in enumerate(ordered, start=1):
        rank = table[-1].rank if table and merit(table[-1].player) == merit(player) else place
        table.append(Standing(rank, player, points[player], played[player], buchholz[player], berger[player]))
    return table
