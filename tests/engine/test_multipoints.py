"""The automatic capture rules against an engine written by someone else: MultiPoints' board
(https://github.com/vn971/multipoints, `gameEngine/SingleGameEngine.java`, the engine its zagram client
draws every game with). scripts/multipoints_reference.py played the games of tests/fixtures/multipoints
on it (random games, dense games, and the dots of the real zagram records); here every move is played
again on server/engine/board.py and, after each, both scores and every point (free, empty enclosure of
either side, free inside a realm, live or captured dot of either side) must be the same.

Where they differ, it is always one defect of MultiPoints, in the games named in MULTIPOINTS_DEFECT and
nowhere else: when a player puts a dot into their own empty enclosure (a pool) and so closes a smaller
one inside it, `Dot.eat` moves the points of the old pool into the new one without adding them to the
new one's list of inner points (`capturedPoints`, the branch `masterSurrounding == outerCtrlSurrounding`).
When the opponent later puts a dot into that smaller pool and closes nothing, MultiPoints turns the pool
into a realm by that list ("eat back"), so the points missing from it are left out: the intruding dot
stays alive and the score unchanged, or part of the pool stays a pool. This server, zagram's variants
page ("such pools are closed down automatically after the opponent has placed his dot in them") and
MultiPoints' own intent (the move is reported as `BAD`) all capture it; the comparison of that game
stops there, since the two boards no longer hold the same game.

Everything else MultiPoints decides the same way, including the choices docs/rules.md writes down: a
dot put into the opponent's pool is captured at once, unless it closes a ring of its own; a realm
swallows a pool walled only by the borders of older realms (random-20x20-31463, move 361, the game of
benchmarks/pool_walls.py); points inside realms are unplayable; a territory game's dot inside what the
automatic rules would have closed is refused by both (zagram.jsonl).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from server.engine.board import BLACK, WHITE, Board
from server.engine.moves import point_to_sgf, sgf_to_point

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multipoints"
RECORDS = Path(__file__).resolve().parents[1] / "fixtures" / "sgf"
GAMES = [
    json.loads(line)
    for name in ("random", "dense", "zagram")
    for line in (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
]

MULTIPOINTS_DEFECT = {
    "random-6x8-38",
    "random-6x9-128",
    "random-7x9-48",
    "random-12x7-197",
    "random-20x20-1000",
    "random-39x32-2001",
    "near-11x9-30375",
    "near-12x16-30211",
    "near-14x12-30046",
    "near-16x13-30179",
}

# A point's letter, as Harness.java writes MultiPoints' DotType: free, blue/red pool, free inside a
# realm, live blue/red dot, captured blue/red dot. Ours is looked up from one byte a point made of the
# board's colour, live, realm and pool bytes (two bits each, all four below 4).
LETTERS = bytearray(b"?" * 256)
for colour in range(4):
    for live in range(4):
        for realm in range(3):
            for pool in range(3):
                code = colour | live << 2 | realm << 4 | pool << 6
                if colour == 0:
                    LETTERS[code] = ord(",") if realm else ord(".12"[pool])
                elif colour in (BLACK, WHITE):
                    LETTERS[code] = ord("br"[colour - 1] if live else "BR"[colour - 1])


def letters(board: Board) -> str:
    """Every point of the board as one letter, row by row, as the fixtures write MultiPoints' board."""
    combined = (
        int.from_bytes(board.color, "big")
        | int.from_bytes(board.live, "big") << 2
        | int.from_bytes(board.realm, "big") << 4
        | int.from_bytes(board.pool, "big") << 6
    )
    flat = combined.to_bytes(board.size, "big").translate(LETTERS)
    rows = (flat[(y + 1) * board.stride + 1 :][: board.width] for y in range(board.height))
    return b"".join(rows).decode()


@dataclass
class Played:
    """Where a game stands on both boards."""

    width: int
    theirs: bytearray  # MultiPoints' letters
    own_pool_dots: list[tuple[int, str]]  # (point, colour) of every dot put into its player's own pool

    def at(self, index: int) -> str:
        return chr(self.theirs[index])


def test_the_fixtures_are_all_there() -> None:
    names = [game["game"] for game in GAMES]
    assert len(names) == len(set(names)) > 400
    assert sum(len(game["moves"]) for game in GAMES) > 45_000
    assert {path.stem for path in RECORDS.glob("*.sgf")} <= set(names)
    assert MULTIPOINTS_DEFECT <= set(names)


@pytest.mark.parametrize("game", GAMES, ids=[game["game"] for game in GAMES])
def test_every_move_leaves_the_board_as_multipoints_leaves_it(game: dict) -> None:
    width, height = game["size"]
    board = Board(width, height)
    played = Played(width, bytearray(b"." * (width * height)), [])
    differed = False
    for number, move in enumerate(game["moves"], 1):
        head, *after = move.split(" ")
        colour, point = head[0], head[1:]
        pos = board.index(sgf_to_point(point, width, height))
        where = f"move {number} {colour}[{point}]"
        if after == ["illegal"]:
            assert not board.playable(pos), f"{where}: MultiPoints refuses it"
            break
        assert board.playable(pos), f"{where}: MultiPoints plays it"
        blue, red, changes = int(after[0]), int(after[1]), after[2] if len(after) > 2 else ""
        index = (pos // board.stride - 1) * width + pos % board.stride - 1
        before = bytes(played.theirs)
        if before[index] == ord("12"[colour == "W"]):
            played.own_pool_dots.append((index, colour))
        board.play(pos, BLACK if colour == "B" else WHITE)
        for at in range(0, len(changes), 3):
            x, y = sgf_to_point(changes[at : at + 2], width, height)
            played.theirs[y * width + x] = ord(changes[at + 2])
        ours, theirs = letters(board), played.theirs.decode()
        if (board.score[BLACK], board.score[WHITE]) == (blue, red) and ours == theirs:
            continue
        differed = True
        assert multipoints_defect(played, before.decode(), index, colour, ours, (blue, red), board), (
            f"{where}: {describe(width, theirs, ours)}; scores {blue}:{red} there, {board.score[1:]} here"
        )
        break
    assert differed == (game["game"] in MULTIPOINTS_DEFECT)


def multipoints_defect(
    played: Played, before: str, index: int, colour: str, ours: str, scores: tuple[int, int], board: Board
) -> bool:
    """Whether this difference is MultiPoints' defect of the module docstring: a dot put into the
    opponent's pool, which MultiPoints captures less of than this server, next to a dot the pool's
    owner had put into their own pool, and nothing else differs."""
    owner = "W" if colour == "B" else "B"
    pool, alive, dead = ("2", "b", "B") if colour == "B" else ("1", "r", "R")
    if before[index] != pool:
        return False
    theirs = played.theirs.decode()
    differ = [at for at in range(len(ours)) if ours[at] != theirs[at]]
    for at in differ:
        if at == index:
            if (theirs[at], ours[at]) != (alive, dead):
                return False
        elif (before[at], theirs[at], ours[at]) != (pool, pool, ","):
            return False
    owner_score = board.score[WHITE if owner == "W" else BLACK]
    mover_score = board.score[BLACK if owner == "W" else WHITE]
    left_alive = 1 if theirs[index] == alive else 0
    their_owner, their_mover = (scores[1], scores[0]) if owner == "W" else scores
    if (their_owner + left_alive, their_mover) != (owner_score, mover_score):
        return False
    return any(
        dot_colour == owner and next_to(played.width, dot, at)
        for dot, dot_colour in played.own_pool_dots
        for at in [index, *differ]
    )


def next_to(width: int, one: int, other: int) -> bool:
    return max(abs(one % width - other % width), abs(one // width - other // width)) == 1


def describe(width: int, theirs: str, ours: str) -> str:
    differ = [at for at in range(len(ours)) if ours[at] != theirs[at]]
    return ", ".join(
        f"{point_to_sgf((at % width, at // width))} {theirs[at]!r} there, {ours[at]!r} here" for at in differ
    )
