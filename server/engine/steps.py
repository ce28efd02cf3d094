"""An archived game move by move, as the game page replays it: what each move placed, the realms it
made and the dots whose capture it changed, all as the engine's rules decide (never recomputed in the
browser)."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.engine.board import BLACK, WHITE
from server.engine.game import COLOUR, Game
from server.engine.moves import point_to_sgf
from server.engine.replay import replay_record, rules_of, variant_of
from server.engine.sgf import read_record


@dataclass
class Step:
    """One move of the record: its colour, its dot (None for a STOP or a ring alone), the realms it made
    (owner, border points in order), the dots it captured and freed, and the captured counts after it."""

    colour: str
    dot: str | None
    realms: list[tuple[int, list[str]]]
    taken: list[str]
    freed: list[str]
    score: tuple[int, int]

    def as_json(self) -> dict:
        return {
            "colour": self.colour,
            "dot": self.dot,
            "realms": [{"owner": owner, "ring": ring} for owner, ring in self.realms],
            "taken": self.taken,
            "freed": self.freed,
            "score": list(self.score),
        }


@dataclass
class Steps:
    width: int
    height: int
    variant: str  # zagram's name: stan, terr, noT, noT1...
    setup: dict[str, list[str]]  # "B" and "W": the starting dots
    steps: list[Step] = field(default_factory=list)
    result: str = ""  # as the engine counts the finished position (the archive's own result may differ)


def steps_of(sgf: str) -> Steps:
    """Every move of an SGF record with what it changed. Raises SgfError or ReplayError as the replay does."""
    record = read_record(sgf)
    captured: set[int] = set()
    steps: list[Step] = []
    seen_moves = 0

    def after_move(game: Game) -> None:
        nonlocal seen_moves
        board = game.board
        made = game.moves[seen_moves:]
        seen_moves = len(game.moves)
        move = made[-1] if made else None
        realms = [
            (e.owner, [point_to_sgf(board.point(pos)) for pos in e.ring]) for m in made for e in m.enclosures
        ]
        taken: list[str] = []
        freed: list[str] = []
        if realms:
            color, live = board.color, board.live
            now = {pos for pos in board.board_indices() if color[pos] in (BLACK, WHITE) and not live[pos]}
            taken = sorted(point_to_sgf(board.point(pos)) for pos in now - captured)
            freed = sorted(point_to_sgf(board.point(pos)) for pos in captured - now)
            captured.clear()
            captured.update(now)
        colour = record.moves[len(steps)].colour
        dot = point_to_sgf(move.point) if move is not None and move.point is not None else None
        steps.append(Step(colour, dot, realms, taken, freed, (game.captured(BLACK), game.captured(WHITE))))

    replayed = replay_record(record, after_move)
    game = replayed.game
    return Steps(
        width=record.width,
        height=record.height,
        variant=variant_of(rules_of(record), game.setup),
        setup={
            COLOUR[colour]: [point_to_sgf(p) for p in points]
            for colour, points in ((BLACK, game.setup.black), (WHITE, game.setup.white))
        },
        steps=steps,
        result=str(game.score_result()),
    )
