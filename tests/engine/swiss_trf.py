"""Reads the tournaments of tests/fixtures/swiss (TRF, FIDE's tournament report file, as bbpPairings
writes it) into what server.engine.swiss.pair_round takes before each round, and what bbpPairings
paired in that round.

Only what those files use: player lines (`001`: pairing number in columns 5-8, then 10 columns per
round from column 92: opponent, colour `w`/`b`, result), the total of rounds (`142`), the initial
colour (`152 W`/`152 B`) and the points of a pairing-allocated bye (`162 ... P x.x`). Results: `1`
`=` `0` a game played, `+` `-` a forfeit won or lost, `U` the pairing-allocated bye, `F` `H` `Z` a
round not paired (absent) with 1, 1/2 or 0 points.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from server.engine.swiss import Colour, Entrant, Round

ROUNDS_FROM = 91  # 0-based column of a player line's first round
POINTS = {"1": 1.0, "=": 0.5, "0": 0.0, "+": 1.0, "-": 0.0, "F": 1.0, "H": 0.5, "Z": 0.0}


@dataclass(frozen=True)
class Entry:
    """One player's round as the file has it."""

    opponent: int  # 0: none
    colour: str  # "w", "b", or "-" without an opponent
    result: str

    @property
    def paired(self) -> bool:
        """A game (played or forfeited) or the pairing-allocated bye: the player took part in the pairing."""
        return self.opponent != 0 or self.result == "U"


@dataclass(frozen=True)
class Tournament:
    players: dict[int, tuple[Entry, ...]]  # by pairing number
    total_rounds: int
    initial_colour: Colour
    bye_points: float

    @property
    def rounds(self) -> int:
        return len(next(iter(self.players.values())))

    def round_(self, entry: Entry) -> Round:
        if entry.opponent == 0:
            if entry.result == "U":
                return Round(None, None, self.bye_points, False, bye=True)
            return Round(None, None, POINTS[entry.result], False)
        if entry.result in "+-":
            return Round(str(entry.opponent), None, POINTS[entry.result], False)
        colour: Colour = "white" if entry.colour == "w" else "black"
        return Round(str(entry.opponent), colour, POINTS[entry.result], True)

    def before(self, index: int) -> tuple[list[Entrant], list[Entrant]]:
        """Round `index + 1`'s entrants (those it paired) and the others, with rounds 1..index."""
        entrants: list[Entrant] = []
        others: list[Entrant] = []
        for number, entries in sorted(self.players.items()):
            entrant = Entrant(
                key=str(number),
                rating=0,
                rounds=tuple(self.round_(entry) for entry in entries[:index]),
                number=number,
            )
            (entrants if entries[index].paired else others).append(entrant)
        return entrants, others

    def pairing(self, index: int) -> tuple[set[tuple[str, str]], str | None]:
        """Round `index + 1` as the file records it: the (white, black) pairs and the bye."""
        pairs = set()
        bye = None
        for number, entries in self.players.items():
            entry = entries[index]
            if entry.result == "U":
                bye = str(number)
            elif entry.opponent and entry.colour == "w":
                pairs.add((str(number), str(entry.opponent)))
        return pairs, bye


def read(path: Path) -> Tournament:
    players: dict[int, tuple[Entry, ...]] = {}
    total_rounds = 0
    initial: Colour | None = None
    bye_points = 1.0
    for line in path.read_text(encoding="utf-8").splitlines():
        code = line[:3]
        if code == "001":
            entries = []
            for start in range(ROUNDS_FROM, len(line), 10):
                opponent = line[start : start + 4].strip()
                entries.append(
                    Entry(
                        opponent=0 if opponent in ("", "0000") else int(opponent),
                        colour=line[start + 5],
                        result=line[start + 7],
                    )
                )
            players[int(line[4:8])] = tuple(entries)
        elif code == "142":
            total_rounds = int(line[3:])
        elif code == "152":
            initial = "white" if line[4:].strip() == "W" else "black"
        elif code == "162":
            words = line[3:].split()
            for key, value in zip(words[::2], words[1::2], strict=False):
                if key == "P":
                    bye_points = float(value)
    if not players or not total_rounds or initial is None:
        raise ValueError(f"{path}: no players, or no 142 (rounds) or 152 (initial colour) line")
    return Tournament(players, total_rounds, initial, bye_points)
