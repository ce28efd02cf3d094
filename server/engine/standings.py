"""A tournament's standings from its games' results: points, games played, Buchholz and
Sonneborn-Berger (docs/tournaments.md, "Standings").

Pure: the web layer hands in what the store and the hub know about each table; nothing here reads
either. A win is 1 point, a draw 1/2, a loss 0. A `Void` game (nobody showed up, the players agreed to
cancel it, or the organiser cancelled it) is no game: it gives no points and counts in no column.
"""

from __future__ import annotations

import functools
import math
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


class PairSums:
    """What the standings sum of the games: per (player, opponent) the games and the half-points the
    player scored, kept up to date a game at a time (`count`), so that an organiser's standings built
    again after one table changed cost in proportion to the pairs of players, not to the games
    (server/web/kept_tables.py; docs/performance.md)."""

    def __init__(self) -> None:
        self.met: dict[tuple[str, str], tuple[int, int]] = {}  # (player, opponent) -> games, half-points

    def count(self, game: Played, times: int = 1) -> None:
        """Add the game `times` times (-1: take it out); a void game is no game and changes nothing."""
        blue = _blue_halves(game.result)
        if blue is None:
            return
        for player, opponent, halves in ((game.blue, game.red, blue), (game.red, game.blue, 2 - blue)):
            games, scored = self.met.get((player, opponent), (0, 0))
            games, scored = games + times, scored + times * halves
            if games:
                self.met[player, opponent] = (games, scored)
            else:
                del self.met[player, opponent]

    def copy(self) -> PairSums:
        """A copy another thread may rank while this one goes on counting (the values are tuples)."""
        copied = PairSums()
        copied.met = dict(self.met)
        return copied


def standings(
    games: Iterable[Played], players: Iterable[str] = (), byes: Mapping[str, Fraction] | None = None
) -> list[Standing]:
    """Every player of `games` and of `players` (those with no finished game yet), best first: by
    points, then Buchholz, then Sonneborn-Berger; players equal in all three share a rank and are
    listed by name. `byes`: the points of a swiss tournament's byes, which count in the player's points
    (and so in their opponents' Buchholz) but are no game: no opponent, no tie-break of their own."""
    sums = PairSums()
    everyone = set(players)
    for game in games:
        everyone.add(game.blue)
        everyone.add(game.red)
        sums.count(game)
    return ranked(sums, everyone, byes)


def ranked(
    sums: PairSums, players: Iterable[str] = (), byes: Mapping[str, Fraction] | None = None
) -> list[Standing]:
    """The standings from the games summed per player and opponent (`standings` above), for everyone of
    `players`, of `byes` and of the games summed. The sums are added in whole units of the smallest
    fraction they can need (a half-point, or a bye's finer one), exact, and made fractions once a
    player: 108,000 games took 2 s of CPU with a fraction added per game."""
    byes = byes or {}
    unit = math.lcm(2, *(bye.denominator for bye in byes.values()))  # points are counted in 1/unit
    per_half = unit // 2
    everyone = set(players) | set(byes)
    points: dict[str, int] = defaultdict(int, {player: int(bye * unit) for player, bye in byes.items()})
    played: dict[str, int] = defaultdict(int)
    for (player, _), (count, halves) in sums.met.items():
        everyone.add(player)
        points[player] += halves * per_half
        played[player] += count
    buchholz: dict[str, int] = defaultdict(int)  # in 1/unit
    berger: dict[str, int] = defaultdict(int)  # in 1/(2 unit): half-points times points
    for (player, opponent), (count, halves) in sums.met.items():
        buchholz[player] += count * points[opponent]
        berger[player] += halves * points[opponent]

    def merit(player: str) -> tuple[int, int, int]:
        return points[player], buchholz[player], berger[player]

    ordered = sorted(everyone, key=lambda p: (tuple(-value for value in merit(p)), p.casefold(), p))
    table: list[Standing] = []
    for place, player in enumerate(ordered, start=1):
        score, tie_break, sonneborn = merit(player)
        rank = table[-1].rank if table and merit(table[-1].player) == merit(player) else place
        table.append(
            Standing(
                rank,
                player,
                Fraction(score, unit),
                played[player],
                Fraction(tie_break, unit),
                Fraction(sonneborn, 2 * unit),
            )
        )
    return table
