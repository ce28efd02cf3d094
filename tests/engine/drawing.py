"""Positions drawn as text, so edge-case tests read like the diagrams in rules.md.

Each letter is a dot: upper case blue (B, player 1), lower case red (W, player 2). Dots are put in
alphabetical order of their letters (case ignored), row by row within one letter; `.` is empty.
"""

from __future__ import annotations

from server.engine.board import BLACK, WHITE, Board, Enclosure


def moves_of(picture: str) -> tuple[int, int, list[tuple[int, int, int]]]:
    rows = [row.strip() for row in picture.strip().splitlines()]
    found = []
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            if ch != ".":
                found.append((ch.lower(), y, x, BLACK if ch.isupper() else WHITE))
    found.sort()
    return len(rows[0]), len(rows), [(x, y, player) for _, y, x, player in found]


def draw(picture: str, *, automatic: bool = True) -> tuple[Board, list[Enclosure]]:
    """Play the drawn dots; return the board and every enclosure made on the way."""
    width, height, moves = moves_of(picture)
    board = Board(width, height)
    made: list[Enclosure] = []
    for x, y, player in moves:
        index = board.index((x, y))
        if automatic:
            made.extend(board.play(index, player))
        else:
            board.place(index, player)
    return board, made
