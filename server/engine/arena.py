"""The arena tournament's rules as lichess runs its arenas: each game's points with streaks, who plays
whom among the players waiting now, and the live standings (docs/tournaments.md, "Arena").

Pure: the runner hands in each player's finished games; nothing here knows clocks, tables or storage.
Every rule follows lichess's own text or code, named where it is used:

- the help page, lichess.org/tournament/help (its texts: lila's translation/source/arena.xml; the
  numbers in them: modules/tournament/src/main/ui/TournamentShow.scala, `faq`);
- lila's modules/tournament/src/main: arena/ArenaSheet.scala (points), Pairing.scala (short games),
  arena/PairingSystem.scala, arena/AntmaPairing.scala and WaitingUsers.scala (pairing),
  ColorHistory.scala (colours), Player.scala and TournamentApi.scala (ranking, performance).

Left out: berserk (no such button here; lichess's extra point for a berserk win does not exist) and
lichess's option of arenas without streaks (every arena here has them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

Outcome = Literal["win", "draw", "loss"]

# Draws, in moves by both sides (lichess's "turns", plies; its help page says 10 and 30 moves of each
# side). Pairing.scala: `quickDraw = draw && turns < 20`; `longGame` is 60 plies in standard chess,
# the variant we take (**Choice**: Kropki is no chess variant; docs/tournaments.md).
QUICK_DRAW_MOVES = 20  # a draw in fewer moves gives nobody a point
LONG_GAME_MOVES = 60  # a draw this long gives its point even in a draw streak
PERFORMANCE_SWING = 500  # TournamentApi.performanceOf: the opponent's rating, +500 for a win, -500 a loss
SWING: dict[Outcome, int] = {"win": PERFORMANCE_SWING, "draw": 0, "loss": -PERFORMANCE_SWING}
MAX_STRIKE = 3  # AntmaPairing.maxStrike: two players who both had one colour 3 times in a row never meet


@dataclass(frozen=True)
class ArenaGame:
    """One finished game of one player, from that player's side."""

    opponent: str
    outcome: Outcome
    white: bool  # the player moved first (in dots: blue, pl1)
    moves: int  # moves made in the game by both sides (lichess's rules on short games read it)
    forfeit: bool = False  # decided without play (the opponent never showed up / left before moving)
    # A forfeit scores as the win or loss it is, as on lichess (Sheet has no case for it): nothing here
    # reads the flag; lichess's other consequence, withdrawing the player who did not move, is the runner's.


@dataclass(frozen=True)
class ArenaPlayer:
    key: str
    rating: float
    games: tuple[ArenaGame, ...]  # finished games, oldest first


@dataclass(frozen=True, order=True)
class ColourHistory:
    """lila's ColorHistory: the strike is the number of games in a row with the last game's colour,
    positive for white, negative for black; the balance is whites minus blacks. Ordered as lila compares
    them (ColorHistory.firstGetsWhite): the strike, then the balance."""

    strike: int = 0
    balance: int = 0

    def after(self, games: Iterable[ArenaGame]) -> ColourHistory:
        """The history after these games, played after those this one sums up."""
        strike, balance = self.strike, self.balance
        for game in games:
            if game.white:
                strike, balance = max(strike + 1, 1), balance + 1
            else:
                strike, balance = min(strike - 1, -1), balance - 1
        return ColourHistory(strike, balance)


@dataclass(frozen=True)
class WaitingPlayer:
    """A waiting player as the pairing reads them, as lila's pairing keeps them (its ColorHistory and the
    last opponent, not the games): a few fields however long the arena, which a wave hands its worker
    process (a 24-hour arena's 150 players' whole games pickled were 5.6 MB: benchmarks/arena.py)."""

    key: str
    rating: float
    last_opponent: str | None = None
    colours: ColourHistory = ColourHistory()
    score: int = 0  # ranks the waiting players among themselves when `pair` is given no ranks

    @classmethod
    def of(cls, player: ArenaPlayer) -> WaitingPlayer:
        games = player.games
        last = games[-1].opponent if games else None
        return cls(player.key, player.rating, last, ColourHistory().after(games), score(games))


@dataclass(frozen=True)
class ArenaStanding:
    rank: int  # equal for players equal in score and tie-break
    key: str
    score: int
    games: int
    wins: int
    on_fire: bool
    sheet: tuple[int, ...]  # each game's points, oldest first, as lichess's standings show them
    performance: int | None = None  # the tie-break; None before a game against a known opponent


@dataclass(frozen=True)
class Streak:
    """What the next game's points read of the games before it: the wins in a row and the last game that
    was not a loss (lila's Sheet.isOnFire and Sheet.isDrawStreak)."""

    wins_in_a_row: int = 0
    last_not_loss: Outcome | None = None


def scored(games: Sequence[ArenaGame], before: Streak = Streak()) -> tuple[tuple[int, ...], Streak]:
    """The points of `games` played after the games `before` sums up, and the streak after them: an
    arena's wave adds a player's new games to the points it kept (server/director/ledger.py)."""
    points: list[int] = []
    wins_in_a_row, last_not_loss = before.wins_in_a_row, before.last_not_loss
    for game in games:
        fire = wins_in_a_row >= 2  # on_fire of the games before
        if game.outcome == "win":
            points.append(4 if fire else 2)
        elif game.outcome == "loss" or game.moves < QUICK_DRAW_MOVES:
            points.append(0)
        elif fire:
            points.append(2)
        elif game.moves < LONG_GAME_MOVES and last_not_loss == "draw":  # Sheet.isDrawStreak
            points.append(0)
        else:
            points.append(1)
        wins_in_a_row = wins_in_a_row + 1 if game.outcome == "win" else 0
        if game.outcome != "loss":
            last_not_loss = game.outcome
    return tuple(points), Streak(wins_in_a_row, last_not_loss)


def game_points(games: Sequence[ArenaGame]) -> tuple[int, ...]:
    """The points each game gave, streaks included, in order (lila's Sheet.addResult, version 2: the
    rules since April 2020, without berserk; lichess.org/tournament/help):

    - a win 2, a draw 1, a loss 0;
    - after two wins in a row ("on fire") every game counts double, a win 4 and a draw 2, until one
      that is not a win;
    - a draw in fewer than QUICK_DRAW_MOVES moves gives 0, even on fire, and ends the fire;
    - a draw in a draw streak (the last game before it that was not a loss was a draw: "the draw
      streak can only be broken by a win"; lila's Sheet.isDrawStreak) gives 0 unless it lasted
      LONG_GAME_MOVES moves or more.

    One pass, carrying what the rules read of the games before (`Streak`).
    """
    return scored(games)[0]


def score(games: Sequence[ArenaGame]) -> int:
    return sum(game_points(games))


def on_fire(games: Sequence[ArenaGame]) -> bool:
    """The next win would count double: the last two games were wins (Sheet.isOnFire)."""
    return len(games) >= 2 and games[-1].outcome == games[-2].outcome == "win"


def performance(games: Sequence[ArenaGame], ratings: Mapping[str, float]) -> int | None:
    """lichess's tournament performance (TournamentApi.performanceOf): the mean over the games of the
    opponent's rating, +500 for a win, -500 for a loss, rounded half up. Opponents missing from
    `ratings` leave their games out; None when no game is left. lichess takes the opponent's rating at
    the time of each game; we take the one in `ratings` (the runner's current ones)."""
    total = PerformanceSum()
    for game in games:
        if game.opponent in ratings:
            total.add(ratings[game.opponent], game.outcome)
    return total.mean()


@dataclass
class PerformanceSum:
    """The values a performance is the mean of, summed exactly: a sum of floats rounds, and differently
    in another order, where an arena's wave keeps each player's sum from one wave to the next, adding
    games as they settle and taking an opponent's out when their rating changes (server/director/
    ledger.py), and must give what a whole count gives."""

    numerator: int = 0
    scale: int = 1  # the sum is numerator / scale: a float is such a fraction, its scale a power of two
    games: int = 0

    def add(self, rating: float, outcome: Outcome, games: int = 1) -> None:
        """Count `games` games of this outcome against an opponent of this rating (fewer than none: take
        them out)."""
        top, bottom = (rating + SWING[outcome]).as_integer_ratio()
        if bottom > self.scale:
            self.numerator *= bottom // self.scale
            self.scale = bottom
        self.numerator += top * (self.scale // bottom) * games
        self.games += games

    def mean(self) -> int | None:
        """Rounded half up; None without a game."""
        if not self.games:
            return None
        return (2 * self.numerator + self.scale * self.games) // (2 * self.scale * self.games)


def standings(players: Sequence[ArenaPlayer]) -> list[ArenaStanding]:
    """Best first, by score, then performance (lichess: "when two or more players have the same number
    of points, the tournament performance is the tie break"), or the rating for a player without one
    (Player.magicScore: score * 10000 + (performance | rating)). Players equal in both share the rank
    (1, 2, 2, 4) and are listed by key, without case first."""
    ratings = {player.key: player.rating for player in players}
    rows: list[ArenaStanding] = []
    for player in players:
        points = game_points(player.games)
        rows.append(
            ArenaStanding(
                rank=0,
                key=player.key,
                score=sum(points),
                games=len(player.games),
                wins=sum(game.outcome == "win" for game in player.games),
                on_fire=on_fire(player.games),
                sheet=points,
                performance=performance(player.games, ratings),
            )
        )

    return ranked(rows, ratings)


def ranked(rows: Sequence[ArenaStanding], ratings: Mapping[str, float]) -> list[ArenaStanding]:
    """The rows (ranks not given yet) in the standings' order with their ranks (`standings` above); an
    arena's public answers make the rows from the games they kept (server/director/ledger.py)."""
    ranks = places({row.key: merit(row.score, row.performance, ratings[row.key]) for row in rows})
    order = {key: index for index, key in enumerate(ranks)}
    return sorted((replace(row, rank=ranks[row.key]) for row in rows), key=lambda row: order[row.key])


def merit(score: int, performance: int | None, rating: float) -> tuple[int, float]:
    """What the standings order by: the score, then the performance or, for a player without one, the
    rating (Player.magicScore)."""
    return score, rating if performance is None else performance


def places(merits: Mapping[str, tuple[int, float]]) -> dict[str, int]:
    """Each player's rank by merit, in the standings' order (the best first, equal merits by key without
    case first) and sharing the rank when equal (1, 2, 2, 4): an arena's wave ranks everyone by the
    scores it kept, without the sheets `standings` makes."""
    ranks: dict[str, int] = {}
    previous: tuple[int, float] | None = None
    rank = 0
    for place, key in enumerate(
        sorted(merits, key=lambda k: (-merits[k][0], -merits[k][1], k.casefold(), k)), 1
    ):
        if merits[key] != previous:
            rank, previous = place, merits[key]
        ranks[key] = rank
    return ranks


def pair(
    waiting: Sequence[WaitingPlayer],
    *,
    ranks: Mapping[str, int] | None = None,
    active_players: int | None = None,
) -> list[tuple[str, str]]:
    """Pairs among the players waiting now, as (white, black), the best-ranked pair first.

    `waiting` is in the order the players became free, the longest-waiting first. With an odd number
    the last one (who waited least) keeps waiting, as lichess does (WaitingUsers.evenNumber), unless
    the others make no pair at all; then everyone is paired as far as possible (PairingSystem.evenOrAll).

    lichess's AntmaPairing: the most pairs possible, and among those the ones with the least total
    |rank difference| * factor + |rating difference|, where the factor is 2000 between the leaders down
    to 300 at the bottom (PairingSystem.rankFactorFor). Never paired: two players one of whom last
    played the other, and two players who both had the same colour MAX_STRIKE times in a row; such
    players wait, even the last two. `ranks` is every waiting player's place in the whole tournament
    (e.g. from `standings` of everyone), as lichess uses; without it the waiting players are ranked
    among themselves by score, then rating. With `active_players` == 2 (only two players left in the
    tournament) they play each other again and again (AntmaPairing's duelScore).

    The matching is Edmonds' blossom algorithm (networkx; lichess's WMMatching is the same algorithm),
    O(n^3): 0.6 s of CPU for 100 waiting players, 5 s for 200, 79 s for 500 (benchmarks/arena.py), so
    the director calls this in its worker process and takes at most 150 players an arena.
    """
    keys = [player.key for player in waiting]
    if len(set(keys)) != len(keys):
        raise ValueError("a player is listed twice among the waiting")
    if ranks is None:
        ordered = sorted(waiting, key=lambda player: (-player.score, -player.rating))
        ranks = {player.key: place for place, player in enumerate(ordered, start=1)}
    duel = active_players == 2
    if len(waiting) % 2:
        pairs = _best_pairs(waiting[:-1], ranks, duel)
        if pairs:
            return pairs
    return _best_pairs(waiting, ranks, duel)


def _best_pairs(
    players: Sequence[WaitingPlayer], ranks: Mapping[str, int], duel: bool
) -> list[tuple[str, str]]:
    if len(players) < 2:
        return []
    import networkx as nx  # here: its import is a fifth of a second of a server's start, for arenas only

    max_rank = max(ranks[player.key] for player in players)
    graph = nx.Graph()
    for index, first in enumerate(players):
        for second in players[index + 1 :]:
            weight = 1 if duel else _pair_weight(first, second, ranks, max_rank)
            if weight is not None:
                graph.add_edge(first.key, second.key, weight=weight)
    by_key = {player.key: player for player in players}
    order = {player.key: index for index, player in enumerate(players)}
    pairs = [_with_colours(by_key[a], by_key[b], order) for a, b in nx.min_weight_matching(graph)]

    def board(pair: tuple[str, str]) -> tuple[int, int]:
        return min(ranks[key] for key in pair), min(order[key] for key in pair)

    return sorted(pairs, key=board)


def _pair_weight(a: WaitingPlayer, b: WaitingPlayer, ranks: Mapping[str, int], max_rank: int) -> int | None:
    """AntmaPairing.pairScore: None for a pair never made, else the lower the better."""
    if a.last_opponent == b.key or b.last_opponent == a.key:  # justPlayedTogether
        return None
    strike_a, strike_b = a.colours.strike, b.colours.strike
    if (strike_a <= -MAX_STRIKE and strike_b <= -MAX_STRIKE) or (
        strike_a >= MAX_STRIKE and strike_b >= MAX_STRIKE
    ):  # ColorHistory.couldPlay
        return None
    rank_a, rank_b = ranks[a.key], ranks[b.key]
    factor = 300 + 1700 * (max_rank - min(rank_a, rank_b)) // max_rank
    return abs(rank_a - rank_b) * factor + round(abs(a.rating - b.rating))


def _with_colours(a: WaitingPlayer, b: WaitingPlayer, order: Mapping[str, int]) -> tuple[str, str]:
    """ColorHistory.firstGetsWhite: white to the one with the smaller (strike, balance): more blacks in
    a row, or fewer whites in a row, then fewer whites in all. lichess tosses a coin on a tie; we give
    white to the lower-rated player, as set-up ranked games give blue (docs/tournaments.md), then to
    the one who waited longer (**Choice**)."""
    if a.colours != b.colours:
        a_white = a.colours < b.colours
    elif a.rating != b.rating:
        a_white = a.rating < b.rating
    else:
        a_white = order[a.key] < order[b.key]
    return (a.key, b.key) if a_white else (b.key, a.key)
