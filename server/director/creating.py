"""What a tournament the server runs may be (docs/tournaments.md, "Creating one") and how big it may grow
(docs/operations.md, "Abuse limits"), checked before anything is written."""

from __future__ import annotations

from collections.abc import Sequence

from server.engine.gametype import GameKind, StartKind, parse_game_type
from server.protocol.codec import ProtocolError
from server.store.hosted import Entry, Hosted, Settings

# A swiss's players (not withdrawn): FIDE's pairing of 200 took 2 s in the slowest of 7 rounds (in a
# worker process, off the event loop: benchmarks/swiss_load.py), of 500 15 s (benchmarks/swiss.py)
SWISS_PLAYERS = 200
# An arena's: a wave of them all free (its start) took 2 s of the same worker's CPU at 150, 5 s at 200
# (the 5-second wave interval, repeated while the arena runs), 79 s at 500, 579 s at 1,000
# (benchmarks/arena.py)
ARENA_PLAYERS = 150
# Tournaments one organiser (a key, a moderator) has registering or running: each is stored, looked at
# and paired by this one process, and their players' entries hold tables (server/director/entering.py)
TOURNAMENTS_PER_ORGANISER = 10


def check_new(settings: Settings, until_start: float, unfinished: Sequence[Hosted]) -> None:
    """A game between two players with a clock, a start not past (a minute's grace), and room among the
    organiser's `unfinished` tournaments."""
    try:
        game_type = parse_game_type(settings.game_type)
    except ValueError:
        raise ProtocolError("badGameType") from None
    if game_type.kind in (GameKind.AI, GameKind.ANALYSIS) or game_type.start.kind is StartKind.SGF:
        raise ProtocolError("badGameType", "A tournament game is a game between two players.")
    if not game_type.timed:
        raise ProtocolError("untimed", "A tournament the server runs needs games with a clock.")
    if until_start < -60:
        raise ProtocolError("badStart", "The start is in the past.")
    most = TOURNAMENTS_PER_ORGANISER
    if sum(hosted.settings.created_by == settings.created_by for hosted in unfinished) >= most:
        raise ProtocolError(
            "tooManyTournaments", f"Your {most} tournaments are not over yet: at most {most} at once."
        )


def check_room(settings: Settings, entries: Sequence[Entry]) -> None:
    """Room for one more player (not withdrawn): both pairings grow fast with the players."""
    most = SWISS_PLAYERS if settings.kind == "swiss" else ARENA_PLAYERS
    if sum(not entry.withdrawn for entry in entries) >= most:
        raise ProtocolError("tournamentFull", f"This tournament has {most} players already.")
