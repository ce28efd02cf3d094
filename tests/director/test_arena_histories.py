"""An arena wave's reading of the tournament's games in one pass (history.arena_histories, last_ended,
arenawave.arena_field) against the per-player scans it replaced on 2026-12-02, over random games."""

from collections.abc import Sequence
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from server.director.arenawave import arena_field
from server.director.history import Board, arena_histories, last_ended
from server.engine import arena
from server.engine.board import BLACK
from server.engine.game import Result
from server.store.hosted import Entry

NICKS = ["*a", "*b", "*c", "*d", "*e"]
RESULTS = [None, "B+R", "W+R", "B+3", "W+0.5", "0", "B+T", "W+F", "B+F", "Void"]


def scanned_arena_games(nick: str, boards: Sequence[Board]) -> tuple[arena.ArenaGame, ...]:
    """history.arena_games until 2026-12-02: one player's games, every board scanned for each player."""
    games = []
    for board in sorted(boards, key=lambda b: b.table):
        result = Result.parse(board.result) if board.result is not None else None
        if (
            nick not in (board.blue, board.red)
            or result is None
            or result.reason == "Void"
            or board.cancelled
        ):
            continue
        blue = nick == board.blue
        if result.winner == 0:
            outcome: arena.Outcome = "draw"
        else:
            outcome = "win" if (result.winner == BLACK) == blue else "loss"
        opponent = board.red if blue else board.blue
        games.append(arena.ArenaGame(opponent, outcome, blue, board.moves, forfeit=result.reason == "F"))
    return tuple(games)


@st.composite
def arena_boards(draw: st.DrawFn) -> list[Board]:
    tables = draw(st.lists(st.integers(1, 10_000), unique=True, max_size=40))
    boards = []
    for table in tables:  # in no particular order: the oldest game is the lowest table
        blue, red = draw(st.sampled_from(NICKS)), draw(st.sampled_from(NICKS))
        result = draw(st.sampled_from(RESULTS))
        ended = draw(st.one_of(st.none(), st.floats(0, 1e9))) if result is not None else None
        moves = draw(st.sampled_from([0, 19, 20, 59, 60, 120]))
        boards.append(Board(table, 0, blue, red, result, draw(st.booleans()), moves, ended))
    return boards


@given(arena_boards())
def test_the_one_pass_histories_are_the_scanned_ones(boards: list[Board]) -> None:
    histories = arena_histories(boards)
    for nick in NICKS:
        assert histories.get(nick, ()) == scanned_arena_games(nick, boards)
    ended = last_ended(boards)
    for nick in NICKS:
        scanned = max((b.ended or 0.0 for b in boards if nick in (b.blue, b.red)), default=0.0)
        assert ended.get(nick, 0.0) == scanned


@given(arena_boards(), st.lists(st.sampled_from([1200.0, 1500.0, 1800.0]), min_size=5, max_size=5))
def test_a_waves_field_ranks_the_scanned_histories(boards: list[Board], ratings: list[float]) -> None:
    joined = datetime(2026, 12, 2, tzinfo=UTC)
    entries = [
        Entry(nick, nick, nick, rating, joined, False) for nick, rating in zip(NICKS, ratings, strict=True)
    ]
    field = arena_field(entries, boards)
    scanned = [arena.ArenaPlayer(e.nick, e.rating, scanned_arena_games(e.nick, boards)) for e in entries]
    assert list(field.everyone.values()) == scanned
    assert field.ranks == {row.key: row.rank for row in arena.standings(scanned)}
    assert field.busy == {nick for b in boards if b.result is None for nick in (b.blue, b.red)}
