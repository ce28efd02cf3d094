"""An arena's public standings counted from the games kept between builds of its answers (views.KeptArena,
fed by server/web/kept_tables.py): over random sequences of games settled (in and out of table order,
before and after the arena's end), games played or over and not stored yet, settled games changed (an
account's deletion renames their players), entrants renamed, joining, withdrawn, re-rated, and the end
moved, every build's standings are those of the whole count (views.arena_standings of every board)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from server.director.history import Board
from server.director.views import KeptArena, arena_standings
from server.protocol.codec import nick_key
from server.store.hosted import Entry

NICKS = ["Ala", "Bob", "cyd", "Cyd", "*Dan"]  # Cyd and cyd: one nick key
RESULTS = ["B+R", "W+R", "B+3", "W+0.5", "0", "B+T", "W+F", "B+F", "Void"]
MOVES = [0, 19, 20, 59, 60, 120]
RATINGS = [1200.0, 1500.0, 1500.5, 1800.0]
ENDS = 100.0
BEGUN = datetime(2026, 12, 2, tzinfo=UTC)

Step = tuple[str, int, int, int]


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    kinds = st.sampled_from(
        [
            "settle",
            "settle",
            "settle",
            "live",
            "live",
            "store",
            "store",
            "change",
            "rename",
            "enter",
            "rate",
            "end",
        ]
    )
    number = st.integers(0, 50)
    return draw(st.lists(st.tuples(kinds, number, number, number), min_size=1, max_size=40))


def build(
    kept: KeptArena, entries: list[Entry], boards: dict[int, Board], settled: set[int], ends: float
) -> None:
    """One build, as Director.described makes it, checked against the whole count."""
    whole = kept.needs_whole(entries, ends)
    every_settled = [boards[uid] for uid in sorted(settled)] if whole else None
    live = [board for uid, board in boards.items() if uid not in settled]
    ordered = [boards[uid] for uid in sorted(boards)]
    assert kept.table(entries, every_settled, live, ends) == arena_standings(entries, ordered, ends)


@settings(max_examples=300, deadline=None)
@given(steps())
def test_every_build_is_the_whole_count(sequence: list[Step]) -> None:
    kept, ends = KeptArena(), ENDS
    entries = [
        Entry(nick, nick_key(nick), "", RATINGS[n % 4], BEGUN, False) for n, nick in enumerate(NICKS[:3])
    ]
    boards: dict[int, Board] = {}
    settled: set[int] = set()
    for kind, a, b, c in sequence:
        players = NICKS + [entry.nick for entry in entries]
        blue, red = players[a % len(players)], players[b % len(players)]
        result, moves, ended = RESULTS[c % len(RESULTS)], MOVES[a % len(MOVES)], float(40 + 5 * (c % 20))
        if kind == "settle":  # a game stored: a new table, or one set up before others were
            uid = 1000 - 10 * len(boards) if c % 3 == 0 else 1000 + 10 * len(boards)
            boards[uid] = Board(uid, 0, blue, red, result, c % 7 == 0, moves, ended if c % 11 else None)
            settled.add(uid)
            kept.settled(boards[uid])
        elif kind == "live":  # being played, or over and not stored yet
            uid = 1001 + 10 * len(boards)
            boards[uid] = Board(
                uid, 0, blue, red, result if c % 2 else None, False, moves, ended if c % 2 else None
            )
        elif kind == "store" and (live := sorted(set(boards) - settled)):
            uid = live[a % len(live)]  # stored as it ended (or at once, for one still played: gone)
            board = boards[uid]
            boards[uid] = replace(board, result=board.result or "Void", ended=board.ended or ended)
            settled.add(uid)
            kept.settled(boards[uid])
        elif kind == "change" and settled:
            uid = sorted(settled)[a % len(settled)]  # an account deleted: the game's player renamed
            boards[uid] = replace(boards[uid], blue=f"deleted-{a}")
            kept.changed()
        elif kind == "rename":
            entry = entries[a % len(entries)]
            new = f"New{b}"
            if all(nick_key(new) != nick_key(other.nick) for other in entries):
                entries[a % len(entries)] = replace(
                    entry, nick=new, nick_key=nick_key(new), former=(*entry.former, entry.nick)
                )
        elif kind == "enter" and all(nick_key(blue) != nick_key(e.nick) for e in entries):
            entries.append(Entry(blue, nick_key(blue), "", RATINGS[b % 4], BEGUN, c % 2 == 0))
        elif kind == "rate":
            entries[a % len(entries)] = replace(entries[a % len(entries)], rating=RATINGS[b % 4])
        elif kind == "end":
            ends = ENDS if c % 2 else 70.0
        build(kept, entries, boards, settled, ends)
