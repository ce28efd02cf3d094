"""The moves a game played: `Move`, one dot or ring as its record has it, and `MoveList`, a game's
moves kept compactly."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

from server.engine.board import Enclosure
from server.engine.moves import Point


class Move(NamedTuple):
    """One dot (or ring-only move) as it goes into the record; changed by replacing it
    (`Game.set_time_left`)."""

    player: int
    point: Point | None
    enclosures: tuple[Enclosure, ...] = ()
    automatic: bool = False  # placed by the STOP function
    comment: str | None = None
    time_left: float | None = None


_EnclosureRow = tuple[int, tuple[int, ...], int, int]
# player, x, y (None, None for a ring-only move), enclosures, automatic, comment, time_left
_MoveRow = tuple[int, int | None, int | None, tuple[_EnclosureRow, ...], bool, str | None, float | None]


class MoveList(Sequence[Move]):
    """A game's moves, kept as flat tuples of numbers and strings and made into `Move`s when read.

    A server keeps every move of every open game, and the garbage collector walks every object it
    tracks at each full collection: a class instance or a named tuple always, a plain tuple only
    until a collection finds nothing tracked in it. A serving process collects a new object young
    once or twice (server/gcschedule.py), and each collection untracks one level of nested tuples,
    so the row holds no point tuple, only its coordinates (issue 19.2: a full collection walked two
    objects per move played at every open table). A move with enclosures stays tracked: few do."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: list[_MoveRow] = []

    @staticmethod
    def _row(move: Move) -> _MoveRow:
        player, point, enclosures, automatic, comment, time_left = move
        x, y = point if point is not None else (None, None)
        rows = tuple(map(tuple, enclosures)) if enclosures else ()
        return (player, x, y, rows, automatic, comment, time_left)  # type: ignore[return-value]

    @staticmethod
    def _move(row: _MoveRow) -> Move:
        player, x, y, enclosures, automatic, comment, time_left = row
        point = None if x is None or y is None else (x, y)
        made = tuple(Enclosure._make(enclosure) for enclosure in enclosures) if enclosures else ()
        return Move(player, point, made, automatic, comment, time_left)

    def append(self, move: Move) -> None:
        self._rows.append(self._row(move))

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Move: ...

    @overload
    def __getitem__(self, index: slice) -> list[Move]: ...

    def __getitem__(self, index: int | slice) -> Move | list[Move]:
        if isinstance(index, slice):
            return [self._move(row) for row in self._rows[index]]
        return self._move(self._rows[index])

    def __setitem__(self, index: int, move: Move) -> None:
        self._rows[index] = self._row(move)

    def __iter__(self) -> Iterator[Move]:
        return map(self._move, self._rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MoveList):
            return self._rows == other._rows
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MoveList({list(self)!r})"
