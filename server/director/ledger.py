"""An arena's settled games as its waves count them, kept from one wave to the next: each player's games,
points and streak, so that a wave adds the games settled since the last one instead of counting every
game again (at 108,000 games that was a second of the event loop's CPU every 5 s: docs/performance.md).
A wave's field (everyone's ranks, who is busy, since when each is free) is these and the games not yet
settled, which change from wave to wave and are counted at each (docs/tournaments.md, "What a wave
reads"). Pure: the director's memory of the arena (arenawave.ArenaMemory) hands in boards.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from server.director.entrants import Entrants
from server.director.history import Board, arena_games
from server.engine import arena
from server.store.hosted import Entry

Played = tuple[int, arena.ArenaGame]  # a game in a player's history, and its table


@dataclass
class PlayerGames:
    """One player's games, oldest (lowest table) first, and what the standings read of them, kept up to
    date game by game."""

    tables: list[int] = field(default_factory=list)
    games: list[arena.ArenaGame] = field(default_factory=list)
    streak: arena.Streak = arena.Streak()  # after the last game
    score: int = 0
    sheet: list[int] = field(default_factory=list)  # each game's points, as the public standings show
    wins: int = 0
    # opponent -> outcome -> games: what the performance reads of the games
    tally: dict[str, dict[arena.Outcome, int]] = field(default_factory=dict)
    performance: arena.PerformanceSum = field(default_factory=arena.PerformanceSum)  # rated opponents'
    colours: arena.ColourHistory = arena.ColourHistory()  # after the last game

    def go_on_with(self, played: Sequence[Played]) -> bool:
        """These games (in table order, at least one) all come after those kept: what is kept of the
        games so far (points, streak, colours) goes on with them, without counting again."""
        return not self.tables or played[0][0] > self.tables[-1]

    def extend(self, played: Sequence[Played], ratings: dict[str, float]) -> None:
        """Add these games (in table order): their points follow on from the streak kept, unless one of
        them is older than a game counted (a game stored late), when the player's points are counted
        again. `ratings`: those the performance is summed by."""
        if self.go_on_with(played):
            self.tables.extend(table for table, _ in played)
            games = [game for _, game in played]
            self.games.extend(games)
            points, self.streak = arena.scored(games, self.streak)
            self.score += sum(points)
            self.sheet.extend(points)
            self.colours = self.colours.after(games)
        else:
            for table, game in played:
                at = bisect.bisect(self.tables, table)
                self.tables.insert(at, table)
                self.games.insert(at, game)
            points, self.streak = arena.scored(self.games)
            self.score = sum(points)
            self.sheet = list(points)
            self.colours = arena.ColourHistory().after(self.games)
        for _, game in played:
            self.wins += game.outcome == "win"
            outcomes = self.tally.setdefault(game.opponent, {})
            outcomes[game.outcome] = outcomes.get(game.outcome, 0) + 1
            if game.opponent in ratings:
                self.performance.add(ratings[game.opponent], game.outcome)

    def rerated(self, opponent: str, old: float | None, new: float | None) -> None:
        """The opponent's rating changed (None: not an entrant): their games counted at the new one."""
        for outcome, games in self.tally[opponent].items():
            if old is not None:
                self.performance.add(old, outcome, -games)
            if new is not None:
                self.performance.add(new, outcome, games)

    def merit(self, rating: float, later: Sequence[Played], ratings: dict[str, float]) -> tuple[int, float]:
        """Score and tie-break, with the games ended `later` than those kept (not settled yet)."""
        if not later:
            return arena.merit(self.score, self.performance.mean(), rating)
        performance = replace(self.performance)
        for _, game in later:
            if game.opponent in ratings:
                performance.add(ratings[game.opponent], game.outcome)
        if self.go_on_with(later):
            score = self.score + sum(arena.scored([game for _, game in later], self.streak)[0])
        else:
            score = sum(arena.game_points(self.with_games(later)))
        return arena.merit(score, performance.mean(), rating)

    def waiting(self, nick: str, rating: float, score: int, later: Sequence[Played]) -> arena.WaitingPlayer:
        """The player as the pairing reads them, with the games ended `later` than those kept (not
        settled yet; `score` counts them), in passes over the later games only unless one is older than a
        game kept."""
        if not later:
            last, colours = self.games[-1:], self.colours
        elif self.go_on_with(later):
            last, colours = [later[-1][1]], self.colours.after(game for _, game in later)
        else:
            games = self.with_games(later)
            last, colours = games[-1:], arena.ColourHistory().after(games)
        return arena.WaitingPlayer(nick, rating, last[0].opponent if last else None, colours, score)

    def standing(self, nick: str, later: Sequence[Played], ratings: dict[str, float]) -> arena.ArenaStanding:
        """The player's row of the standings (not ranked yet), with the games ended `later` than those
        kept: what arena.standings makes of all of them, in passes over the later games only unless
        one is older than a game kept."""
        performance = self.performance
        if later:
            performance = replace(self.performance)
            for _, game in later:
                if game.opponent in ratings:
                    performance.add(ratings[game.opponent], game.outcome)
        games = [game for _, game in later]
        if not later or self.go_on_with(later):
            sheet = (*self.sheet, *arena.scored(games, self.streak)[0])
            last_two = [*self.games[-2:], *games][-2:]
        else:
            merged = self.with_games(later)
            sheet, last_two = arena.game_points(merged), merged[-2:]
        return arena.ArenaStanding(
            rank=0,
            key=nick,
            score=sum(sheet),
            games=len(self.games) + len(games),
            wins=self.wins + sum(game.outcome == "win" for game in games),
            on_fire=arena.on_fire(last_two),
            sheet=sheet,
            performance=performance.mean(),
        )

    def with_games(self, later: Sequence[Played]) -> list[arena.ArenaGame]:
        if not later:
            return self.games
        return [game for _, game in sorted([*zip(self.tables, self.games, strict=True), *later])]


@dataclass
class ArenaField:
    """Everyone's places and scores, who is at one of the tournament's games, since when each is free
    (the wall time their last game ended, 0: none yet), and each one's games."""

    ranks: dict[str, int]
    scores: dict[str, int]
    busy: set[str]
    free_since: dict[str, float]
    ratings: dict[str, float]
    kept: dict[str, PlayerGames]  # the settled games
    later: dict[str, list[Played]]  # the games ended and not settled yet

    def waiting(self, nick: str) -> arena.WaitingPlayer:
        """The player as the pairing reads them."""
        kept, later = self.kept.get(nick, PlayerGames()), self.later.get(nick, [])
        return kept.waiting(nick, self.ratings[nick], self.scores[nick], later)


class ArenaLedger:
    """The settled games of an arena counted per player, under the entrants' nicks when they were
    counted: counted again whole when one of those nicks is now another entrant's (`outdated`)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # a nick a game was set up under -> the entrant's it counts for
        self.players: dict[str, PlayerGames] = {}
        self.last_ended: dict[str, float] = {}  # each player's latest end of a game (0: none known)
        self.ratings: dict[str, float] = {}  # the ratings the players' performances are of

    def outdated(self, entrants: Entrants) -> bool:
        """A nick counted is now another entrant's (an admin renamed an account, a new entry has an old
        nick)."""
        return any(entrants.name(nick) != name for nick, name in self.names.items())

    def named(self, board: Board) -> Board:
        """The board under the nicks its players are counted under."""
        blue, red = self.names[board.blue], self.names[board.red]
        return board if (blue, red) == (board.blue, board.red) else replace(board, blue=blue, red=red)

    def add(self, boards: Iterable[Board], entrants: Entrants) -> None:
        """Count these settled games (as stored, under the nicks they were set up under)."""
        played: dict[str, list[Played]] = {}
        for board in sorted(boards, key=lambda b: b.table):
            for nick in (board.blue, board.red):
                if nick not in self.names:
                    self.names[nick] = entrants.name(nick)
            board = self.named(board)
            for nick, game in arena_games(board):
                played.setdefault(nick, []).append((board.table, game))
            for nick in (board.blue, board.red):
                self.last_ended[nick] = max(self.last_ended.get(nick, 0.0), board.ended or 0.0)
        for nick, games in played.items():
            self.players.setdefault(nick, PlayerGames()).extend(games, self.ratings)

    def field(self, entries: Sequence[Entry], live: Iterable[Board]) -> ArenaField:
        """The wave's field from the games counted and the boards of those not settled (`live`, under
        the entrants' nicks now), in passes over the entries and the live boards only."""
        ratings = {entry.nick: entry.rating for entry in entries}
        self._rerate(ratings)
        later: dict[str, list[Played]] = {}
        busy: set[str] = set()
        last_ended = {nick: self.last_ended.get(nick, 0.0) for nick in ratings}
        for board in sorted(live, key=lambda b: b.table):
            if board.result is None:
                busy.update((board.blue, board.red))
            for nick, game in arena_games(board):
                later.setdefault(nick, []).append((board.table, game))
            for nick in (board.blue, board.red):
                if nick in last_ended:
                    last_ended[nick] = max(last_ended[nick], board.ended or 0.0)
        merits = {}
        for nick, rating in ratings.items():
            kept, played_later = self.players.get(nick), later.get(nick, [])
            if kept is None and not played_later:
                merits[nick] = arena.merit(0, None, rating)
            else:
                merits[nick] = (kept or PlayerGames()).merit(rating, played_later, ratings)
        scores = {nick: score for nick, (score, _) in merits.items()}
        return ArenaField(arena.places(merits), scores, busy, last_ended, ratings, self.players, later)

    def standings(self, entries: Sequence[Entry], live: Iterable[Board]) -> list[arena.ArenaStanding]:
        """Every entrant's row, ranked, from the games counted and the boards of those not counted
        (`live`, under the entrants' nicks now; those over are counted on top): arena.standings of all
        the games, in passes over the players and the live boards only."""
        ratings = {entry.nick: entry.rating for entry in entries}
        self._rerate(ratings)
        later: dict[str, list[Played]] = {}
        for board in sorted(live, key=lambda b: b.table):
            for nick, game in arena_games(board):
                later.setdefault(nick, []).append((board.table, game))
        empty = PlayerGames()
        rows = [
            self.players.get(entry.nick, empty).standing(entry.nick, later.get(entry.nick, []), ratings)
            for entry in entries
        ]
        return arena.ranked(rows, ratings)

    def _rerate(self, ratings: dict[str, float]) -> None:
        """The games against players whose rating changed (or who became entrants, or are no longer)
        summed again in their opponents' performances."""
        for nick in ratings.keys() | self.ratings.keys():
            old, new = self.ratings.get(nick), ratings.get(nick)
            played = self.players.get(nick)
            if played is not None and old != new:
                for opponent in played.tally:  # who played them: each game is in both players' tallies
                    self.players[opponent].rerated(nick, old, new)
        self.ratings = ratings
