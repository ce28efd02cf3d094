"""Starting positions: empty, one cross, two crosses, four crosses, handicap dots."""

from __future__ import annotations

import random
from dataclasses import dataclass

from server.engine.board import BLACK, WHITE
from server.engine.moves import Point


@dataclass(frozen=True)
class Setup:
    black: tuple[Point, ...] = ()
    white: tuple[Point, ...] = ()
    first: int = BLACK


def _cross(x: int, y: int) -> tuple[tuple[Point, Point], tuple[Point, Point]]:
    """A 2x2 cross with blue on the main diagonal, as in every zagram record."""
    return ((x, y), (x + 1, y + 1)), ((x + 1, y), (x, y + 1))


def one_cross(width: int, height: int) -> Setup:
    x, y = width // 2 - 1, height // 2 - 1
    black, white = _cross(x, y)
    return Setup(black, white)


def two_crosses(width: int, height: int) -> Setup:
    """Two crosses side by side in a 4x2 block centred on the board, the right one mirrored.

    Rows read B W W B / W B B W, as in playdots.ru's "double cross in the centre" (39x32:
    AB[sp][tq][uq][vp] AW[sq][tp][up][vq]), KvanTTT's dots-game and KataGoDots; zagram's own
    layout is unknown (docs/rules.md). On odd widths the left cross is zagram's one cross.
    """
    x, y = (width + 1) // 2 - 2, height // 2 - 1
    left_black, left_white = _cross(x, y)
    right_white, right_black = _cross(x + 2, y)
    return Setup(left_black + right_black, left_white + right_white)


MIN_SIDE_FOR_FOUR_CROSSES = 10
MAX_MISSES = 200  # draws in a row that fit nowhere before starting the crosses again
MAX_RESTARTS = 20


def four_crosses(width: int, height: int, seed: int) -> Setup:
    """Four crosses at random, reproducible from `seed`.

    zagram places them at random (rules.md 1.3). Here each cross's top-left corner is drawn
    from the middle of the board, a quarter of the shorter side away from every edge, and
    crosses keep at least one empty line between them.
    """
    if min(width, height) < MIN_SIDE_FOR_FOUR_CROSSES:
        raise ValueError(f"four crosses need a board of at least {MIN_SIDE_FOR_FOUR_CROSSES}x10")
    margin = max(1, round(min(width, height) / 4))
    low_x, high_x, low_y, high_y = margin, width - margin - 2, margin, height - margin - 2
    rng = random.Random(seed)
    corners: list[Point] = []
    misses = restarts = 0
    while len(corners) < 4:
        candidate = (rng.randint(low_x, high_x), rng.randint(low_y, high_y))
        if all(max(abs(candidate[0] - x), abs(candidate[1] - y)) >= 3 for x, y in corners):
            corners.append(candidate)
            misses = 0
            continue
        misses += 1
        if misses < MAX_MISSES:
            continue
        # the first crosses left no room for the rest (small boards): draw again, and in the end
        # take the four corners of the area, which always fit on a board this size
        corners, misses, restarts = [], 0, restarts + 1
        if restarts == MAX_RESTARTS:
            corners = [(low_x, low_y), (high_x, low_y), (low_x, high_y), (high_x, high_y)]
    black: list[Point] = []
    white: list[Point] = []
    for x, y in corners:
        b, w = _cross(x, y)
        black.extend(b)
        white.extend(w)
    return Setup(tuple(black), tuple(white))


def handicap(width: int, height: int, stones: int) -> Setup:
    """`stones` blue dots on go-like star points; red moves first.

    Corners sit on the fourth line (the third on boards under 12), then the centre for odd
    counts, then the side midpoints, as in go.
    """
    if not 2 <= stones <= 9:
        raise ValueError("handicap must be 2..9")
    if min(width, height) < 5:
        raise ValueError("handicap needs a board of at least 5x5")
    off = 3 if min(width, height) >= 12 else 2 if min(width, height) >= 7 else 1
    left, right, top, bottom = off, width - 1 - off, off, height - 1 - off
    mid_x, mid_y = (width - 1) // 2, (height - 1) // 2
    corners = [(right, top), (left, bottom), (right, bottom), (left, top)]
    sides = [(left, mid_y), (right, mid_y), (mid_x, top), (mid_x, bottom)]
    centre = (mid_x, mid_y)
    layout = {
        2: corners[:2],
        3: corners[:3],
        4: corners,
        5: corners + [centre],
        6: corners + sides[:2],
        7: corners + sides[:2] + [centre],
        8: corners + sides,
        9: corners + sides + [centre],
    }[stones]
    return Setup(tuple(layout), (), WHITE)
