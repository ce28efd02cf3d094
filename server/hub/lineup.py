"""Who plays at a game table, and in which order: two players, or two teams (docs/teams.md).

The engine plays two colours; a team game is a matter of the table. Its players are numbered by
*side*, as zagram numbers them in the `x` line: side 1 is team one's first player, side 2 team two's
first, side 3 team one's second, and so on, so that odd sides play blue and even sides red, and the
turn goes 1, 2, 3, 4, ... round the table. Each team takes its turns in its own order, from the
player after the one who made its last move, skipping those who left the game; a two-player game is
the case of teams of one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from server.engine.board import BLACK, WHITE
from server.engine.record import NAMES_SEPARATOR

TEAM_SIZES = range(1, 5)  # players a team may have: one (a two-player game) to four


def colour_of(side: int) -> int:
    """The colour a side plays: odd sides blue (team one), even sides red (team two)."""
    return BLACK if side % 2 else WHITE


class Lineup:
    """The nicks of a table's players in turn order, and who of them has left the game for good."""

    def __init__(self, seats: Sequence[str], gone: Iterable[str] = ()) -> None:
        self.seats = tuple(seats)
        self.gone = set(gone)  # nicks of team players who left the game (never in a two-player game)

    @property
    def teams(self) -> bool:
        return len(self.seats) > 2

    def side_of(self, nick: str) -> int:
        """The nick's side, 0 when it plays no side here (or has left the game)."""
        if nick in self.gone:
            return 0
        try:
            return self.seats.index(nick) + 1
        except ValueError:
            return 0

    def in_game(self) -> tuple[str, ...]:
        """The nicks still in the game, in turn order: the players of the table's next games too."""
        return tuple(nick for nick in self.seats if nick not in self.gone)

    def nick_of(self, side: int) -> str:
        return self.seats[side - 1]

    def sides(self, colour: int) -> range:
        """A team's sides in its own turn order."""
        return range(colour, len(self.seats) + 1, 2)

    def members(self, colour: int) -> tuple[str, ...]:
        return self.seats[colour - 1 :: 2]

    def present(self, colour: int) -> list[int]:
        """The team's sides whose players have not left the game."""
        return [side for side in self.sides(colour) if self.nick_of(side) not in self.gone]

    def next_side(self, colour: int, last: int) -> int:
        """The side of `colour` on move when `last` made the team's last move (0: none yet): the next
        present one after it in the team's order; 0 when nobody of the team is left."""
        sides = self.sides(colour)
        start = sides.index(last) + 1 if last in sides else 0
        for step in range(len(sides)):
            side = sides[(start + step) % len(sides)]
            if self.nick_of(side) not in self.gone:
                return side
        return 0

    def swapped(self) -> Lineup:
        """The line-up of the next game on the table: the teams change colours, each in its own order."""
        seats = [nick for pair in zip(self.members(WHITE), self.members(BLACK), strict=True) for nick in pair]
        return Lineup(seats, self.gone)

    def renamed(self, old: str, new: str) -> Lineup:
        """The same line-up with the player `old` named `new` (their account was renamed)."""
        return Lineup([new if nick == old else nick for nick in self.seats], self.gone)

    def names(self, colour: int) -> str:
        """A team as one name for people: its nicks in its turn order (a two-player game: the nick)."""
        return NAMES_SEPARATOR.join(self.members(colour))


def interleaved(team_one: Sequence[str], team_two: Sequence[str]) -> list[str]:
    """Two teams' nicks (each in its own order) as a line-up in turn order."""
    return [nick for pair in zip(team_one, team_two, strict=True) for nick in pair]
