"""A hosted tournament as the results API and the pages show it: its settings and state, its players,
and its standings by its own kind's rules (swiss: points, Buchholz, Sonneborn-Berger with byes; arena:
lichess's points and streaks, counting only the games that ended before its end)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from server.director.entrants import Entrants
from server.director.history import Board, arena_histories, bye_points, played
from server.director.ledger import ArenaLedger
from server.engine import arena
from server.engine.standings import Standing
from server.engine.standings import standings as swiss_standings
from server.store.database import utc_text
from server.store.hosted import Entry, Hosted, PairedRound


def summary(hosted: Hosted, entries: Sequence[Entry]) -> dict[str, Any]:
    """What the list of tournaments says of one."""
    settings = hosted.settings
    ends = settings.starts_at + timedelta(minutes=settings.minutes) if settings.kind == "arena" else None
    return {
        "name": settings.name,
        "kind": settings.kind,
        "gameType": settings.game_type,
        "state": hosted.state,
        "startsAt": utc_text(settings.starts_at),
        "endsAt": utc_text(ends) if ends is not None else None,
        "rounds": settings.rounds if settings.kind == "swiss" else None,
        "round": hosted.round if settings.kind == "swiss" else None,
        "minutes": settings.minutes if settings.kind == "arena" else None,
        "minRating": settings.min_rating,
        "maxRating": settings.max_rating,
        "registeredOnly": settings.registered_only,
        "players": [entry.nick for entry in entries if not entry.withdrawn],
        "withdrawn": [entry.nick for entry in entries if entry.withdrawn],
        "page": f"/tournament/{quote(settings.name, safe='')}/standings",
    }


def standing_row(standing: Standing, playing: int) -> dict[str, Any]:
    """One row of a swiss-style ranking as standings.json and the standings page read it, for an
    organiser's tournament and one the server runs alike; `playing`: the player's games in progress."""
    return {
        "rank": standing.rank,
        "player": standing.player,
        "points": float(standing.points),
        "games": standing.games,
        "playing": playing,
        "buchholz": float(standing.buchholz),
        "sonnebornBerger": float(standing.sonneborn_berger),
    }


def swiss_table(
    entries: Sequence[Entry], boards: Sequence[Board], rounds: Sequence[PairedRound]
) -> list[dict[str, Any]]:
    byes = {paired.round: paired.bye for paired in rounds}
    playing = Counter(nick for b in boards if b.result is None for nick in (b.blue, b.red))
    table = swiss_standings(played(boards), [entry.nick for entry in entries], bye_points(byes))
    return [
        standing_row(standing, playing[standing.player])
        | {"byes": sum(1 for nick in byes.values() if nick == standing.player)}
        for standing in table
    ]


def arena_standings(entries: Sequence[Entry], boards: Sequence[Board], ends: float) -> list[dict[str, Any]]:
    """The arena's standings from its boards as stored, under the entrants' nicks now."""
    return arena_table(entries, Entrants(entries).boards(boards), ends)


def arena_table(entries: Sequence[Entry], boards: Sequence[Board], ends: float) -> list[dict[str, Any]]:
    """Only games that ended before the arena's end count (lichess's rule)."""
    counted = [b for b in boards if _counts(b, ends)]
    games = arena_histories(counted)
    players = [arena.ArenaPlayer(e.nick, e.rating, games.get(e.nick, ())) for e in entries]
    return _rows(arena.standings(players), boards)


def _counts(board: Board, ends: float) -> bool:
    return board.result is not None and board.ended is not None and board.ended <= ends


def _rows(standings: Sequence[arena.ArenaStanding], boards: Sequence[Board]) -> list[dict[str, Any]]:
    """The standings as the answers show them; `boards`: those being played among them."""
    playing = {nick for b in boards if b.result is None for nick in (b.blue, b.red)}
    return [
        {
            "rank": standing.rank,
            "player": standing.key,
            "points": standing.score,
            "games": standing.games,
            "wins": standing.wins,
            "onFire": standing.on_fire,
            "sheet": list(standing.sheet),
            "playing": int(standing.key in playing),
        }
        for standing in standings
    ]


class KeptArena:
    """An arena's games as its public standings count them, kept between builds of its answers
    (server/web/kept_tables.py): the settled games (result and moves stored) are counted into a ledger
    as they settle (server/director/ledger.py, as an arena's wave keeps them), so that a build counts
    those settled since the last one and the few not settled, not every game: at 108,000 games the
    whole count took 0.3 to 0.7 s of CPU a build (docs/performance.md). Counted again whole at the
    first build, when a settled game changed (an account's deletion renames its players), when a nick
    counted is now another entrant's, and when the arena's end is another. The builds of one arena's
    answers take turns (the ledger follows them in order)."""

    def __init__(self) -> None:
        self.ledger = ArenaLedger()
        self.news: list[Board] = []  # settled since the last build, not counted yet
        self.whole = True  # everything to count again
        self.ends: float | None = None

    def settled(self, board: Board) -> None:
        """A game newly settled."""
        self.news.append(board)

    def changed(self) -> None:
        """A settled game changed: its count cannot be taken back, everything is counted again."""
        self.whole, self.news = True, []

    def needs_whole(self, entries: Sequence[Entry], ends: float) -> bool:
        return self.whole or ends != self.ends or self.ledger.outdated(Entrants(entries))

    def table(
        self, entries: Sequence[Entry], settled: Sequence[Board] | None, live: Sequence[Board], ends: float
    ) -> list[dict[str, Any]]:
        """What arena_standings gives for every board: `settled`, every settled board when needs_whole
        says so, else None; `live`, the boards not settled (being played, over and not stored yet)."""
        entrants = Entrants(entries)
        if settled is not None:
            self.ledger, self.news, self.ends = ArenaLedger(), list(settled), ends
        news, self.news, self.whole = self.news, [], True  # until counted: a failure half-way counts anew
        self.ledger.add([board for board in news if _counts(board, ends)], entrants)
        live = entrants.boards(live)
        standings = self.ledger.standings(entries, [board for board in live if _counts(board, ends)])
        self.whole = False
        return _rows(standings, live)


@dataclass(frozen=True)
class ArenaBoards:
    """An arena's boards as a build of its public answers hands them to the director."""

    kept: KeptArena
    settled: Callable[[], list[Board]]  # every settled board, for a count made again whole
    live: list[Board]  # the others, as this build made them
