"""Points and the zagram move syntax (`XY`, `XY.ring`, `XY!target`, mixtures).

The same text travels in SGF move values and in the protocol's `where=` parameter, so both
sides use this one parser.
"""

from __future__ import annotations

from typing import NamedTuple

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_VALUE = {letter: value for value, letter in enumerate(ALPHABET)}
MAX_SIZE = len(ALPHABET)
MAX_MOVE_TEXT = 4000

Point = tuple[int, int]


class MoveSyntaxError(ValueError):
    """A move text that cannot be read; the message says which part is wrong."""


def point_to_sgf(point: Point) -> str:
    x, y = point
    return ALPHABET[x] + ALPHABET[y]


def sgf_to_point(text: str, width: int = MAX_SIZE, height: int = MAX_SIZE) -> Point:
    if len(text) != 2 or text[0] not in _VALUE or text[1] not in _VALUE:
        raise MoveSyntaxError(f"'{text}' is not a point (two letters a-z, A-Z)")
    x, y = _VALUE[text[0]], _VALUE[text[1]]
    if x >= width or y >= height:
        raise MoveSyntaxError(f"point '{text}' is outside the {width}x{height} board")
    return x, y


def parse_points(text: str, width: int = MAX_SIZE, height: int = MAX_SIZE) -> list[Point]:
    if len(text) % 2:
        raise MoveSyntaxError(f"'{text}' has an odd number of letters")
    return [sgf_to_point(text[i : i + 2], width, height) for i in range(0, len(text), 2)]


class MoveSpec(NamedTuple):
    """What a player asks for: a dot, manual rings (closed, first == last) and `!` targets.

    A named tuple rather than a frozen dataclass: it is built for every move and is cheaper.
    """

    dot: Point | None
    rings: tuple[tuple[Point, ...], ...] = ()
    targets: tuple[Point, ...] = ()

    def __str__(self) -> str:
        text = point_to_sgf(self.dot) if self.dot is not None else ""
        text += "".join("." + "".join(point_to_sgf(p) for p in ring) for ring in self.rings)
        text += "".join("!" + point_to_sgf(t) for t in self.targets)
        return text


def parse_move(text: str, width: int = MAX_SIZE, height: int = MAX_SIZE) -> MoveSpec:
    """Read `sm`, `sm.rlqmrnsmrl`, `sm!rm`, `sm.rlqmrnsmrl!bb`, `.ring` (ring without a dot)."""
    if len(text) > MAX_MOVE_TEXT:
        raise MoveSyntaxError("move text too long")
    if not text:
        raise MoveSyntaxError("empty move")
    head_end = len(text)
    for i, ch in enumerate(text):
        if ch in ".!":
            head_end = i
            break
    head = text[:head_end]
    dot = sgf_to_point(head, width, height) if head else None
    rings: list[tuple[Point, ...]] = []
    targets: list[Point] = []
    i = head_end
    while i < len(text):
        kind = text[i]
        j = i + 1
        while j < len(text) and text[j] not in ".!":
            j += 1
        body = text[i + 1 : j]
        if kind == ".":
            ring = tuple(parse_points(body, width, height))
            if len(ring) < 2 or ring[0] != ring[-1]:
                raise MoveSyntaxError(f"ring '{body}' is not closed (its first point must also be its last)")
            rings.append(ring)
        else:
            targets.append(sgf_to_point(body, width, height))
        i = j
    if dot is None and not rings and not targets:
        raise MoveSyntaxError("move has neither a dot nor an enclosure")
    return MoveSpec(dot, tuple(rings), tuple(targets))
